package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestEditorLock checks that a file with an editor's swap or lock file
// beside it is not taken, however long it has been quiet: a draft the
// person saved is not the message. Once the lock is gone the file is
// taken.
func TestEditorLock(t *testing.T) {
	for _, lock := range []string{".note.md.swp", ".note.md.swo", ".#note.md"} {
		t.Run(lock, func(t *testing.T) {
			ws := newWorkspace(t, "alice", "bob")
			now := time.Now()
			clock := now
			r := clockRunner(t, ws, &clock)
			outbox := ws.Mailbox("alice").Path(mailbox.Outbox, "")
			lockPath := filepath.Join(outbox, lock)
			if strings.HasPrefix(lock, ".#") {
				// emacs's lock: a symbolic link naming who holds it.
				if err := os.Symlink("someone@host.1234:1700000000", lockPath); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(lockPath, []byte("b0VIM 9.0"), 0o600); err != nil {
				t.Fatal(err)
			}
			writeAt(t, filepath.Join(outbox, "note.md"), "---\nto: bob\n---\nA draft\n", now.Add(-time.Minute))
			look(t, r)
			clock = now.Add(time.Hour)
			look(t, r)
			if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
				t.Fatalf("a file being edited (%s beside it) was delivered: %v", lock, got)
			}
			writeAt(t, filepath.Join(outbox, "note.md"), "---\nto: bob\n---\nA draft, and the rest.\n", clock)
			if err := os.Remove(lockPath); err != nil {
				t.Fatal(err)
			}
			clock = clock.Add(time.Second)
			look(t, r) // changed: settles again
			clock = clock.Add(time.Second)
			look(t, r)
			if got := bodies(t, ws, "bob", mailbox.Inbox); len(got) != 1 || got[0] != "A draft, and the rest." {
				t.Errorf("bob has %q once the editor let go, want the whole message", got)
			}
		})
	}
}

// TestEditorLockAfterListing checks that a swap file that appears after
// the outbox was last listed, told of by a file event, holds the file
// too: the runner knows without a system call when no editor can be at
// work in an outbox, and must not believe it any longer once one is.
func TestEditorLockAfterListing(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	now := time.Now()
	clock := now
	r := clockRunner(t, ws, &clock)
	outbox := filepath.Join(string(ws.Mailbox("alice")), mailbox.Outbox)
	r.outboxes = map[string]string{outbox: "alice"}
	writeAt(t, filepath.Join(outbox, "note.md"), "---\nto: bob\n---\nA draft\n", now)
	look(t, r) // listed: no name with a dot; not settled yet
	lockPath := filepath.Join(outbox, ".note.md.swp")
	if err := os.WriteFile(lockPath, []byte("b0VIM 9.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.event(fsnotify.Event{Name: lockPath, Op: fsnotify.Create})
	clock = now.Add(time.Hour)
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Fatalf("a file being edited (a swap file made after the listing) was delivered: %v", got)
	}
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	look(t, r)
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 1 {
		t.Errorf("bob's inbox = %v once the editor let go, want the message", got)
	}
}

// tmux drives a program in a detached terminal.
type tmux struct {
	t    *testing.T
	sock string
}

// startTmux runs argv in dir in a new detached tmux session; the test
// skips when tmux or the program is not installed.
func startTmux(t *testing.T, dir string, argv ...string) *tmux {
	t.Helper()
	for _, prog := range []string{"tmux", argv[0]} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", prog, err)
		}
	}
	tm := &tmux{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := append([]string{"new-session", "-d", "-s", "edit", "-x", "100", "-y", "30", "-c", dir, "--"}, argv...)
	tm.run(args...)
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *tmux) run(args ...string) {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", tm.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// keys sends keys (tmux key names: Enter, Escape, C-x) to the program.
func (tm *tmux) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "edit"}, keys...)...)
}

// text types text as it is.
func (tm *tmux) text(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "edit", "-l", "--", s)
}

// screen returns what the terminal shows.
func (tm *tmux) screen() string {
	out, _ := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-t", "edit").Output()
	return string(out)
}

// ended reports whether the program has ended.
func (tm *tmux) ended() bool {
	return exec.Command("tmux", "-S", tm.sock, "has-session", "-t", "edit").Run() != nil
}

// exists reports whether a file is there (a symbolic link counts).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func fileHas(path, s string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), s)
}

// TestEditors checks, with real editors driven through tmux, that a
// message written straight in an outbox and saved once as a draft before
// the person goes on typing is delivered once, whole, when they are done.
func TestEditors(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("drives real editors")
	}
	editors := []struct {
		name string
		argv []string
		// draft saves a draft and goes on editing; finish saves and quits.
		draft, finish func(tm *tmux)
		lock          string
	}{
		{
			name: "vim",
			argv: []string{"vim", "-u", "NONE", "-i", "NONE", "-N", "note.md"},
			lock: ".note.md.swp",
			draft: func(tm *tmux) {
				tm.keys("i")
				tm.text("---\nto: bob\n---\nA draft")
				tm.keys("Escape")
				tm.text(":w\n")
				tm.keys("o")
				tm.text("More text.")
			},
			finish: func(tm *tmux) {
				tm.keys("Escape")
				tm.text(":wq\n")
			},
		},
		{
			name: "emacs",
			argv: []string{"emacs", "-nw", "-Q", "note.md"},
			lock: ".#note.md",
			draft: func(tm *tmux) {
				tm.text("---\nto: bob\n---\nA draft")
				tm.keys("C-x", "C-s")
				tm.text("\nMore text.")
			},
			finish: func(tm *tmux) {
				tm.keys("C-x", "C-s")
				tm.keys("C-x", "C-c")
			},
		},
	}
	for _, ed := range editors {
		t.Run(ed.name, func(t *testing.T) {
			ws := newWorkspace(t, "alice", "bob")
			outbox := ws.Mailbox("alice").Path(mailbox.Outbox, "")
			note := filepath.Join(outbox, "note.md")
			tm := startTmux(t, outbox, ed.argv...)
			clock := time.Now()
			r := clockRunner(t, ws, &clock)
			// Keys typed before the editor reads them may be lost.
			waitFor(t, 20*time.Second, func() bool { return strings.Contains(tm.screen(), "note.md") })
			ed.draft(tm)
			// The draft is saved, the editor is still at work.
			waitFor(t, 20*time.Second, func() bool {
				return fileHas(note, "A draft") && exists(filepath.Join(outbox, ed.lock)) && strings.Contains(tm.screen(), "More text.")
			})
			clock = time.Now().Add(time.Hour)
			look(t, r)
			clock = clock.Add(time.Hour)
			look(t, r)
			if got := bodies(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
				t.Fatalf("the draft was delivered while %s had it open: %q", ed.name, got)
			}
			ed.finish(tm)
			waitFor(t, 20*time.Second, func() bool {
				return tm.ended() && fileHas(note, "More text.") && !exists(filepath.Join(outbox, ed.lock))
			})
			clock = time.Now().Add(3 * time.Hour)
			look(t, r)
			clock = clock.Add(time.Hour)
			look(t, r)
			got := bodies(t, ws, "bob", mailbox.Inbox)
			if len(got) != 1 || got[0] != "A draft\nMore text." {
				t.Errorf("bob has %q after %s quit, want the whole message once", got, ed.name)
			}
		})
	}
}

// noLeases makes a runner unable to tell whether a file is open for
// writing, as on NFS, FUSE or 9p, or for a file of another user.
func noLeases(r *Runner) {
	r.probe = func(path string) (bool, error) {
		return false, fmt.Errorf("%s: read lease: operation not supported (%w)", path, errors.ErrUnsupported)
	}
}

// TestUnsureWriter checks what holds for a file written in place when the
// runner cannot tell whether its writer still has it open: it is never
// replaced to add an id, so that bytes its writer adds after it was
// delivered end in sent/ rather than in a file no name leads to; and a
// file that does not parse yet is waited for longer than the settle time.
func TestUnsureWriter(t *testing.T) {
	t.Run("never replaced", func(t *testing.T) {
		ws := newWorkspace(t, "alice", "bob")
		now := time.Now()
		clock := now
		r := clockRunner(t, ws, &clock)
		noLeases(r)
		path := ws.Mailbox("alice").Path(mailbox.Outbox, "stream.md")
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.WriteString("---\nto: bob\n---\nThe first part")
		look(t, r)
		clock = now.Add(time.Hour)
		look(t, r) // settled: taken, cut short (nothing can tell here)
		inbox := names(t, ws, "bob", mailbox.Inbox)
		if len(inbox) != 1 {
			t.Fatalf("bob has %v, want the settled file", inbox)
		}
		w.WriteString(", and the rest.\n")
		w.Close()
		sent := ws.Mailbox("alice").Path(mailbox.Sent, inbox[0])
		if data, err := os.ReadFile(sent); err != nil || !strings.HasSuffix(string(data), "The first part, and the rest.\n") {
			t.Errorf("sent/%s = %q, %v; want the writer's later bytes in it, not lost", inbox[0], data, err)
		}
	})
	t.Run("same id after a crash", func(t *testing.T) {
		ws := newWorkspace(t, "alice", "bob")
		clock := time.Now().Add(time.Hour)
		r := clockRunner(t, ws, &clock)
		noLeases(r)
		path := drop(t, ws, "alice", "note.md", "---\nto: bob\n---\nOnce.\n")
		look(t, r)
		inbox := names(t, ws, "bob", mailbox.Inbox)
		if len(inbox) != 1 {
			t.Fatalf("bob has %v, want the file", inbox)
		}
		// Killed before the move to sent/ was durable: the file is back
		// in the outbox, and a new runner routes it again.
		if err := os.Rename(ws.Mailbox("alice").Path(mailbox.Sent, inbox[0]), path); err != nil {
			t.Fatal(err)
		}
		r.Close()
		r2 := clockRunner(t, ws, &clock)
		noLeases(r2)
		look(t, r2)
		if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 1 {
			t.Errorf("bob has %v after a re-route, want the one copy", got)
		}
	})
	t.Run("waits for a parse", func(t *testing.T) {
		ws := newWorkspace(t, "alice", "bob")
		now := time.Now()
		clock := now
		r := clockRunner(t, ws, &clock)
		noLeases(r)
		path := ws.Mailbox("alice").Path(mailbox.Outbox, "slow.md")
		writeAt(t, path, "---\nto: bob\nsummary: [a list not closed", now)
		look(t, r)
		clock = now.Add(3 * workspace.DefaultSettle)
		look(t, r)
		if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 0 {
			t.Fatalf("a file cut short that may still be written was rejected: %v", got)
		}
		writeAt(t, path, "---\nto: bob\nsummary: [a list, closed]\n---\nDone.\n", clock)
		clock = clock.Add(time.Second)
		look(t, r)
		clock = clock.Add(time.Second)
		look(t, r)
		if got := bodies(t, ws, "bob", mailbox.Inbox); len(got) != 1 || got[0] != "Done." {
			t.Errorf("bob has %q, want the file once whole", got)
		}
		// One that never parses is refused in the end.
		writeAt(t, path, "---\nto: [bob\n", clock)
		look(t, r)
		clock = clock.Add(unsureSettles * workspace.DefaultSettle)
		look(t, r)
		if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 1 {
			t.Errorf("rejected/ holds %v, want the file that never parsed", got)
		}
	})
}
