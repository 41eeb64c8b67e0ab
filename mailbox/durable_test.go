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
// (macOS), on any system: the directories a batch touched and the files
// noted with Wrote are synced at Sync; a directory removed since is
// skipped.
func TestSyncerPerFile(t *testing.T) {
	root := t.TempDir()
	s, err := NewSyncer(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.perFile = true
	box := Dir(filepath.Join(root, "mailboxes", "bob"))
	if err := box.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := box.Deliver("20261121-101500.000000Z-alice-0a0b0c", []byte("---\nto: bob\n---\nhi\n"), s); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(root, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	s.dirty(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	journal, err := os.Create(filepath.Join(root, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	journal.WriteString("{}\n")
	s.Wrote(journal)

	dirs, files := pending(t, s, root)
	if diff := cmp.Diff([]string{"gone", "mailboxes/bob/inbox"}, dirs); diff != "" {
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
}

// TestSyncSeen: what another process wrote into a directory (the
// router's copies, seen by the bridge) is made durable: with syncfs, the
// filesystem; where there is none, the directory named (the writer
// fsynced the files).
func TestSyncSeen(t *testing.T) {
	root := t.TempDir()
	inbox := filepath.Join(root, "inbox")
	if err := os.Mkdir(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, perFile := range []bool{false, true} {
		s, err := NewSyncer(root)
		if err != nil {
			t.Fatal(err)
		}
		s.perFile = perFile || !haveSyncfs
		var synced []string
		s.onSync = func(path string) { synced = append(synced, path) }
		if err := s.SyncSeen(inbox); err != nil {
			t.Errorf("SyncSeen (perFile %v) = %v", s.perFile, err)
		}
		want := []string{root}
		if s.perFile {
			want = []string{inbox}
		}
		if diff := cmp.Diff(want, synced); diff != "" {
			t.Errorf("SyncSeen (perFile %v) synced (-want +got):\n%s", s.perFile, diff)
		}
		s.Close()
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
	s.dirty(root)
	s.Wrote(os.Stdout)
	if dirs, files := pending(t, s, root); len(dirs) != 0 || files != 0 {
		t.Errorf("with syncfs, listed to sync: %v and %d files; want nothing", dirs, files)
	}
	if err := s.Sync(); err != nil {
		t.Errorf("Sync() = %v", err)
	}
}
