package mailbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMovesCheckTheFileRead checks that MarkSent and Reject move
// only the file that was read: a symbolic link or another
// file swapped in after the read is left where it is (ErrReplaced).
func TestMovesCheckTheFileRead(t *testing.T) {
	moves := []struct {
		name string
		move func(d Dir, read FileID, s *Syncer) error
	}{
		{"MarkSent", func(d Dir, read FileID, s *Syncer) error { return d.MarkSent("note.md", id1, read, s) }},
		{"Reject", func(d Dir, read FileID, s *Syncer) error {
			_, err := d.Reject("note.md", time.Now(), "refused", read, s)
			return err
		}},
	}
	for _, mv := range moves {
		t.Run(mv.name, func(t *testing.T) {
			d, s := newDir(t)
			path := d.Path(Outbox, "note.md")
			writeTestFile(t, path, "---\nto: carol\n---\nhi\n")
			snap, err := ReadSnapshot(path, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			// Swapped after the read: a link to a file elsewhere.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/passwd", path); err != nil {
				t.Fatal(err)
			}
			if err := mv.move(d, snap.ID, s); !errors.Is(err, ErrReplaced) {
				t.Fatalf("%s after a swap = %v, want ErrReplaced", mv.name, err)
			}
			if info, err := os.Lstat(path); err != nil || info.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link swapped in was moved: %v, %v", info, err)
			}
			if diff := cmp.Diff(map[string][]string{Outbox: {"note.md"}}, tree(t, d)); diff != "" {
				t.Errorf("mailbox after %s mismatch (-want +got):\n%s", mv.name, diff)
			}
		})
	}
}

// TestSendMakesOneLink checks that Send never leaves the message with two
// links, which the router refuses in an outbox.
func TestSendMakesOneLink(t *testing.T) {
	d, _ := newDir(t)
	m := New([]byte("hi\n"))
	m.Set("id", id1)
	path, err := d.Send(m)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := Links(info); n != 1 {
		t.Errorf("Links(sent file) = %d, want 1", n)
	}
	if _, err := d.Send(m); !errors.Is(err, ErrExists) {
		t.Errorf("Send of the same id again = %v, want ErrExists", err)
	}
}

// TestCheckDirs checks that a mailbox directory replaced by a symbolic
// link or a file is named, and that a missing one matches
// fs.ErrNotExist.
func TestCheckDirs(t *testing.T) {
	d, _ := newDir(t)
	if err := d.CheckDirs(); err != nil {
		t.Fatalf("CheckDirs() of a new mailbox = %v", err)
	}
	os.RemoveAll(d.Path(Inbox, ""))
	if err := os.Symlink(t.TempDir(), filepath.Join(string(d), Inbox)); err != nil {
		t.Fatal(err)
	}
	var nd *NotDirError
	if err := d.CheckDirs(); !errors.As(err, &nd) || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("CheckDirs() with inbox/ a link = %v, want a *NotDirError naming the link", err)
	}
	if err := d.CheckDirs(Outbox); err != nil {
		t.Errorf("CheckDirs(outbox) = %v, want nil (inbox/ not asked)", err)
	}
	os.RemoveAll(d.Path(Cur, ""))
	if err := d.CheckDirs(Cur); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckDirs(cur) of a missing cur/ = %v, want fs.ErrNotExist", err)
	}
}

// TestMarkSentSwappedTwice: a link swapped in after the read is moved to
// sent/ by MarkSent's rename, found not to be the file read, and put back;
// when yet another file took the outbox name in between, the link goes
// back beside it under a free name, and sent/ holds nothing under the id
// (it held the link, a file elsewhere archived as the message).
func TestMarkSentSwappedTwice(t *testing.T) {
	d, s := newDir(t)
	path := d.Path(Outbox, "note.md")
	writeTestFile(t, path, "---\nto: carol\n---\nhi\n")
	snap, err := ReadSnapshot(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", path); err != nil {
		t.Fatal(err)
	}
	afterSentRename = func(p string) { writeTestFile(t, p, "---\nto: carol\n---\nthird\n") }
	defer func() { afterSentRename = nil }()
	if err := d.MarkSent("note.md", id1, snap.ID, s); !errors.Is(err, ErrReplaced) {
		t.Fatalf("MarkSent after two swaps = %v, want ErrReplaced", err)
	}
	if diff := cmp.Diff(map[string][]string{Outbox: {"note-2.md", "note.md"}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox mismatch (-want +got):\n%s", diff)
	}
	if info, err := os.Lstat(d.Path(Outbox, "note-2.md")); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("note-2.md is not the link swapped in: %v, %v", info, err)
	}
}
