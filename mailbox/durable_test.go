package mailbox

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pending lists what a per-file Syncer will sync at its next Sync: the
// directories, relative to root, and the number of open files.
func pending(t *testing.T, s *Syncer, root string) ([]string, int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	dirs := []string{}
	for d := range s.dirs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	sort.Strings(dirs)
	return dirs, len(s.files)
}

// TestSyncerPerFile checks the Syncer's way where there is no syncfs
// (macOS), on any system: what was written, renamed or noted through it is
// synced at Sync, under the names it has then.
func TestSyncerPerFile(t *testing.T) {
	root := t.TempDir()
	s, err := NewSyncer(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.perFile = true
	for _, d := range []string{"tmp/stage", "tmp/gone", "sent"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stage, ready := filepath.Join(root, "tmp", "stage"), filepath.Join(root, "tmp", "ready")

	if err := s.WriteFile(filepath.Join(stage, "a.md"), []byte("answer\n")); err != nil {
		t.Fatalf("WriteFile = %v", err)
	}
	if err := s.WriteFile(filepath.Join(root, "tmp", "gone", "b.md"), []byte("dropped\n")); err != nil {
		t.Fatalf("WriteFile = %v", err)
	}
	if err := os.RemoveAll(filepath.Join(root, "tmp", "gone")); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(stage, ready); err != nil {
		t.Fatalf("Rename = %v", err)
	}
	journal, err := os.Create(filepath.Join(root, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	journal.WriteString("{}\n")
	s.Wrote(journal)

	dirs, files := pending(t, s, root)
	if diff := cmp.Diff([]string{"tmp", "tmp/gone", "tmp/ready"}, dirs); diff != "" {
		t.Errorf("directories to sync (-want +got):\n%s", diff)
	}
	if files != 1 {
		t.Errorf("files to sync = %d, want 1 (the journal)", files)
	}
	if err := s.Sync(); err != nil {
		t.Errorf("Sync() = %v, want nil (a directory removed since is skipped)", err)
	}
	if dirs, files := pending(t, s, root); len(dirs) != 0 || files != 0 {
		t.Errorf("after Sync, still to sync: %v and %d files", dirs, files)
	}
	if got := readFile(t, filepath.Join(ready, "a.md")); got != "answer\n" {
		t.Errorf("ready/a.md = %q, want %q", got, "answer\n")
	}
}

// TestSyncerSyncfs checks that with syncfs the Syncer keeps no list.
func TestSyncerSyncfs(t *testing.T) {
	if !haveSyncfs {
		t.Skip("no syncfs here")
	}
	root := t.TempDir()
	s, err := NewSyncer(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WriteFile(filepath.Join(root, "a.md"), []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(filepath.Join(root, "a.md"), filepath.Join(root, "b.md")); err != nil {
		t.Fatal(err)
	}
	s.Wrote(os.Stdout)
	if dirs, files := pending(t, s, root); len(dirs) != 0 || files != 0 {
		t.Errorf("with syncfs, listed to sync: %v and %d files; want nothing", dirs, files)
	}
	if err := s.Sync(); err != nil {
		t.Errorf("Sync() = %v", err)
	}
}
