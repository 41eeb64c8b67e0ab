package orchestrator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// TestIndexUnwatchedListsAgain: a runner's orchestrator with no word from
// the system (off Linux, or no inotify instance to be had) lists a state
// directory again at each look: a filesystem whose clock ticks in
// seconds (HFS+, FAT) or an NFS client's cached attributes leave the
// directory's times as they were when a file is added, and the history
// decided without it (a step assigned twice). Here the times are made to
// read as before.
func TestIndexUnwatchedListsAgain(t *testing.T) {
	dir := t.TempDir()
	write := func(id string) {
		t.Helper()
		data := "---\nid: " + id + "\nfrom: orch\nto: worker-1\n---\nStep.\n"
		if err := os.WriteFile(filepath.Join(dir, mailbox.FileName(id)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first, second := "20261129-190000.000000Z-orch-aaaaaa", "20261129-190001.000000Z-orch-bbbbbb"
	write(first)
	x := &index{kept: true, w: &watcher{fd: -1}} // no word from the system
	if l := x.list(dir, 1<<20); l == nil || len(x.dirs[dir].files) != 1 {
		t.Fatalf("first look: %v", x.dirs[dir])
	}
	write(second)
	// The directory's times read as at the first listing, as a coarse
	// clock leaves them, and the listing is not close to them.
	info, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := x.dirs[dir]
	d.mtime, d.ctime, d.racy = info.ModTime(), mailbox.ChangeTime(info), false
	x.list(dir, 1<<20)
	if x.dirs[dir].files[mailbox.FileName(second)] == nil {
		t.Errorf("the second look does not see %s, added since the first", second)
	}
}
