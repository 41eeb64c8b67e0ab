package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// linkDir replaces an agent's mailbox state directory with a symbolic
// link to a directory outside the workspace, and returns that directory.
func linkDir(t *testing.T, ws *workspace.Workspace, agent, state string) string {
	t.Helper()
	elsewhere := t.TempDir()
	dir := ws.Mailbox(agent).Path(state, "")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	return elsewhere
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// TestSymlinkedOutbox checks that an outbox replaced by a symbolic link
// is not followed: the files of the folder it points to stay there, and
// the mailbox is reported, by the runner and by Status.
func TestSymlinkedOutbox(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	elsewhere := linkDir(t, ws, "bob", mailbox.Outbox)
	for _, name := range []string{"photos.md", "taxes.md"} {
		if err := os.WriteFile(filepath.Join(elsewhere, name), []byte("---\nto: alice\n---\nprivate\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := runnerInfo(t, ws).Mailboxes["bob"]; !strings.Contains(got, "mailboxes/bob/outbox is a symbolic link (to "+elsewhere+"), which parley does not follow") {
		t.Errorf("runner.json says of bob %q, want the symbolic link named", got)
	}
	// The run until idle fails, naming the mailbox it could not use.
	stats, err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bob: mailboxes/bob/outbox is a symbolic link") {
		t.Errorf("run = %v, want it to fail naming bob's linked outbox", err)
	}
	r.Close()
	if stats.Routed != 0 || stats.Rejected != 0 {
		t.Errorf("routed %d, rejected %d from a linked outbox, want nothing", stats.Routed, stats.Rejected)
	}
	if d := cmp.Diff([]string{"photos.md", "taxes.md"}, dirNames(t, elsewhere)); d != "" {
		t.Errorf("the folder the outbox points to changed (-want +got):\n%s", d)
	}
	for _, s := range mustStatus(t, ws) {
		if s.Name == "bob" && !strings.Contains(s.Unusable, "mailboxes/bob/outbox is a symbolic link") {
			t.Errorf("Status says of bob %q, want the symbolic link named", s.Unusable)
		}
	}
}

// TestSymlinkedInbox checks that nothing is delivered through an inbox,
// or a tmp/, replaced by a symbolic link while the runner runs: the
// delivery waits, the runner says why, and once a directory is back the
// message is delivered.
func TestSymlinkedInbox(t *testing.T) {
	t.Parallel()
	for _, state := range []string{mailbox.Inbox, mailbox.Tmp} {
		t.Run(state, func(t *testing.T) {
			ws := reconfigure(t, newWorkspace(t, "alice"), "agents: [alice, bob]\nrouter:\n  rescan_interval: 1h\n")
			watching(t, ws, Options{})
			elsewhere := linkDir(t, ws, "bob", state)
			send(t, ws, "alice", "bob", "hello")
			waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Mailboxes["bob"] != "" })
			if got := runnerInfo(t, ws).Mailboxes["bob"]; !strings.Contains(got, "mailboxes/bob/"+state+" is a symbolic link") {
				t.Errorf("runner.json says of bob %q", got)
			}
			if got := dirNames(t, elsewhere); len(got) != 0 {
				t.Errorf("written through the link: %v", got)
			}
			// Mended: a directory again. The rescan is an hour away; the
			// failed delivery asks for a repair when it is tried again.
			if err := os.Remove(ws.Mailbox("bob").Path(state, "")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(ws.Mailbox("bob").Path(state, ""), 0o755); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, func() bool {
				_, err := os.Stat(ws.Mailbox("bob").Path(mailbox.Inbox, ""))
				return err == nil && len(names(t, ws, "bob", mailbox.Inbox)) == 1
			})
			if got := dirNames(t, elsewhere); len(got) != 0 {
				t.Errorf("written through the link: %v", got)
			}
		})
	}
}

// TestHardLinkInOutbox checks that a file with another hard link is
// refused where it is, with the reason beside it, never delivered nor
// moved to rejected/ (where fixing it would edit the file it is linked
// to), not refused twice, and routed once it is the only link.
func TestHardLinkInOutbox(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	secret := filepath.Join(t.TempDir(), "passwd")
	const content = "---\nto: bob\n---\nroot:x:0:0\n"
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	linked := ws.Mailbox("alice").Path(mailbox.Outbox, "passwd.md")
	if err := os.Link(secret, linked); err != nil {
		t.Fatal(err)
	}
	stats := routeAll(t, ws)
	if stats.RefusedInPlace != 1 || stats.Rejected != 0 || stats.Routed != 0 {
		t.Errorf("routed %d, rejected %d, refused in place %d, want the hard link refused in place", stats.Routed, stats.Rejected, stats.RefusedInPlace)
	}
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Errorf("a hard link was delivered: %v", got)
	}
	if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 0 {
		t.Errorf("a hard link was moved to rejected/: %v", got)
	}
	reason, ok := ws.Mailbox("alice").Reason(mailbox.Outbox, "passwd.md")
	if !ok || !strings.Contains(reason, "hard link") {
		t.Errorf("reason beside the file = %q, %v; want it to name the hard link", reason, ok)
	}
	var held []workspace.Problem
	for _, s := range mustStatus(t, ws) {
		held = append(held, s.Held...)
	}
	if len(held) != 1 || held[0].Path != "mailboxes/alice/outbox/passwd.md" || !strings.Contains(held[0].Reason, "hard link") {
		t.Errorf("Status lists as held %v", held)
	}
	if e := journalEntries(t, ws); len(e) != 1 || e[0].Outcome != workspace.Refused {
		t.Errorf("journal = %v, want one refusal", e)
	}

	// A second run leaves it, and says nothing more.
	if stats := routeAll(t, ws); stats.Rejected != 0 || stats.Routed != 0 {
		t.Errorf("second run: routed %d, rejected %d, want nothing", stats.Routed, stats.Rejected)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != content {
		t.Errorf("the linked file now reads %q, %v", data, err)
	}

	// The other link removed, it is a file like any other.
	if err := os.Remove(secret); err != nil {
		t.Fatal(err)
	}
	if stats := routeAll(t, ws); stats.Routed != 1 {
		t.Errorf("after the other link went: routed %d, want 1", stats.Routed)
	}
	if got := dirNames(t, ws.Mailbox("alice").Path(mailbox.Outbox, "")); len(got) != 0 {
		t.Errorf("outbox holds %v after routing, want nothing (the reason removed too)", got)
	}
}

// TestSymlinkInOutbox: a symbolic link in an outbox is refused where it
// is, like a hard link: never followed (one to a named pipe would hang a
// reader), never delivered (one to a file its sender may not read would
// hand it out), never moved to rejected/ (where mending it would edit the
// file it points to). Replaced by a copy, it is routed.
func TestSymlinkInOutbox(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	secret := filepath.Join(t.TempDir(), "passwd")
	const content = "---\nto: bob\n---\nroot:x:0:0\n"
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	box := ws.Mailbox("alice")
	if err := os.Symlink(secret, box.Path(mailbox.Outbox, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	symlinkToFIFO(t, box.Path(mailbox.Outbox, "pipe.md"))
	stats := routeAll(t, ws)
	if stats.RefusedInPlace != 2 || stats.Rejected != 0 || stats.Routed != 0 {
		t.Errorf("routed %d, rejected %d, refused in place %d, want both links refused in place", stats.Routed, stats.Rejected, stats.RefusedInPlace)
	}
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Errorf("a symbolic link was delivered: %v", got)
	}
	if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 0 {
		t.Errorf("a symbolic link was moved to rejected/: %v", got)
	}
	for _, name := range []string{"passwd.md", "pipe.md"} {
		if fi, err := os.Lstat(box.Path(mailbox.Outbox, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the link in the outbox: %v", name, err)
		}
		reason, ok := box.Reason(mailbox.Outbox, name)
		if !ok || !strings.Contains(reason, name+": a symbolic link, which parley does not follow") {
			t.Errorf("reason beside %s = %q, %v; want it to name the symbolic link", name, reason, ok)
		}
		if note, _ := os.ReadFile(box.Path(mailbox.Outbox, name+mailbox.ReasonSuffix)); !strings.Contains(string(note), `cp --remove-destination "$(readlink `+name+`)" `+name) {
			t.Errorf("the reason beside %s does not say how to mend it:\n%s", name, note)
		}
	}
	var held []string
	for _, s := range mustStatus(t, ws) {
		for _, p := range s.Held {
			held = append(held, p.Path)
		}
	}
	if d := cmp.Diff([]string{"mailboxes/alice/outbox/passwd.md", "mailboxes/alice/outbox/pipe.md"}, held); d != "" {
		t.Errorf("Status lists as held (-want +got):\n%s", d)
	}
	if stats := routeAll(t, ws); stats.Rejected != 0 || stats.Routed != 0 {
		t.Errorf("second run: routed %d, rejected %d, want nothing", stats.Routed, stats.Rejected)
	}

	// Replaced by a copy of the file it points to, it is routed; the
	// other removed, its reason goes with it.
	if err := os.Remove(box.Path(mailbox.Outbox, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(box.Path(mailbox.Outbox, "passwd.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(box.Path(mailbox.Outbox, "pipe.md")); err != nil {
		t.Fatal(err)
	}
	if stats := routeAll(t, ws); stats.Routed != 1 {
		t.Errorf("after the link was replaced by a copy: routed %d, want 1", stats.Routed)
	}
	if got := dirNames(t, box.Path(mailbox.Outbox, "")); len(got) != 0 {
		t.Errorf("outbox holds %v after routing, want nothing (the reasons removed too)", got)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != content {
		t.Errorf("the file linked to now reads %q, %v", data, err)
	}
}

// TestReasonInOutboxIsNoMessage checks that the reason the router writes
// beside a file it refuses where it is (<name>.reason) is never taken for
// a message: a watching runner is told of it by a file event (a tryout
// found it refused as "no header", and moved with a reason of its own to
// rejected/), and when the refused file is removed, not mended, its
// reason goes with it rather than being left to be refused.
func TestReasonInOutboxIsNoMessage(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	src := filepath.Join(t.TempDir(), "src.md")
	if err := os.WriteFile(src, []byte("---\nto: bob\n---\nhi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outbox := ws.Mailbox("alice").Path(mailbox.Outbox, "")
	if err := os.Link(src, filepath.Join(outbox, "m.md")); err != nil {
		t.Fatal(err)
	}
	clock := time.Now().Add(time.Hour) // the link has settled
	r := clockRunner(t, ws, &clock)
	r.outboxes = map[string]string{filepath.Clean(outbox): "alice"} // as while Run watches
	look(t, r)
	reason := filepath.Join(outbox, "m.md"+mailbox.ReasonSuffix)
	if _, err := os.Stat(reason); err != nil {
		t.Fatalf("no reason beside the hard link: %v", err)
	}
	// The watcher tells of the reason the router wrote.
	r.event(fsnotify.Event{Name: reason, Op: fsnotify.Create})
	clock = clock.Add(time.Hour)
	look(t, r)
	if got, want := dirNames(t, outbox), []string{"m.md", "m.md.reason"}; !cmp.Equal(got, want) {
		t.Errorf("outbox = %v, want %v", got, want)
	}
	if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 0 {
		t.Errorf("rejected/ = %v, want nothing: the reason was taken for a message", got)
	}
	if r.stats.RefusedInPlace != 1 || r.stats.Rejected != 0 {
		t.Errorf("refused in place %d, rejected %d, want 1 (the hard link) and 0", r.stats.RefusedInPlace, r.stats.Rejected)
	}

	// The refused file removed: its reason goes too, when the watcher
	// tells, or at the next listing.
	if err := os.Remove(filepath.Join(outbox, "m.md")); err != nil {
		t.Fatal(err)
	}
	r.event(fsnotify.Event{Name: filepath.Join(outbox, "m.md"), Op: fsnotify.Remove})
	if got := dirNames(t, outbox); len(got) != 0 {
		t.Errorf("outbox = %v once the refused file was removed (a file event), want nothing", got)
	}
	if err := os.Link(src, filepath.Join(outbox, "n.md")); err != nil {
		t.Fatal(err)
	}
	look(t, r)
	if err := os.Remove(filepath.Join(outbox, "n.md")); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	look(t, r)
	if got := dirNames(t, outbox); len(got) != 0 {
		t.Errorf("outbox = %v once the refused file was removed (a listing), want nothing", got)
	}
	if got := names(t, ws, "alice", mailbox.Rejected); len(got) != 0 {
		t.Errorf("rejected/ = %v, want nothing: the reason was taken for a message", got)
	}
	if r.stats.RefusedInPlace != 2 || r.stats.Rejected != 0 {
		t.Errorf("refused in place %d, rejected %d, want 2 (the hard links) and 0", r.stats.RefusedInPlace, r.stats.Rejected)
	}
}

// TestShellWord: a file name in a command a person pastes is one word,
// never an option, whatever a program named it.
func TestShellWord(t *testing.T) {
	for name, want := range map[string]string{
		"other.md":       "other.md",
		"my note.md":     "'my note.md'",
		"it's.md":        `'it'\''s.md'`,
		"$(rm -rf ~).md": "'$(rm -rf ~).md'",
		"-rf.md":         "./-rf.md",
		"-x y.md":        "'./-x y.md'",
		"café.md":        "café.md",
	} {
		if got := shellWord(name); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", name, got, want)
		}
	}
}

// TestHardLinkMendedAsItsReasonSays: the command the reason beside a
// hard link gives, run in the outbox, makes it a file of its own, which
// is routed; the file it was linked to is left as it was. (`cp
// --remove-destination NAME NAME`, which it used to hint at, fails: the
// same file.)
func TestHardLinkMendedAsItsReasonSays(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"passwd.md", "it's a -note.md", "-x.md"} {
		t.Run(name, func(t *testing.T) { hardLinkMended(t, name) })
	}
}

func hardLinkMended(t *testing.T, name string) {
	ws := newWorkspace(t, "alice", "bob")
	secret := filepath.Join(t.TempDir(), "passwd")
	const content = "---\nto: bob\n---\nroot:x:0:0\n"
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	outbox := ws.Mailbox("alice").Path(mailbox.Outbox, "")
	if err := os.Link(secret, filepath.Join(outbox, name)); err != nil {
		t.Fatal(err)
	}
	routeAll(t, ws)
	note, err := os.ReadFile(filepath.Join(outbox, name+mailbox.ReasonSuffix))
	if err != nil {
		t.Fatal(err)
	}
	_, cmd, ok := strings.Cut(string(note), "in the outbox:\n\n    ")
	cmd, _, _ = strings.Cut(cmd, "\n")
	if !ok || cmd == "" {
		t.Fatalf("the reason gives no command to mend it:\n%s", note)
	}
	c := exec.Command("sh", "-c", cmd)
	c.Dir = outbox
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s, in the outbox: %v\n%s", cmd, err, out)
	}
	if stats := routeAll(t, ws); stats.Routed != 1 {
		t.Errorf("after %s: routed %d, want 1", cmd, stats.Routed)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != content {
		t.Errorf("the linked file now reads %q, %v", data, err)
	}
}

// TestSymlinkInProgramOutbox: a symbolic link a program leaves in its
// PARLEY_OUTBOX goes to rejected/ as a file naming its target, and the
// reason beside it says so, not that the file is what the program said
// "unchanged", and how to send what it points to.
func TestSymlinkInProgramOutbox(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "link.sh", "cat >/dev/null; ln -s /etc/hostname \"$PARLEY_OUTBOX/a.md\"\n")
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: linker, driver: command, run: [./link.sh], retries: 0}
`)
	send(t, ws, "boss", "linker", "go")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	box := ws.Mailbox("linker")
	names, err := os.ReadDir(box.Path(mailbox.Rejected, ""))
	if err != nil || len(names) != 2 {
		t.Fatalf("linker's rejected/ = %v, %v; want the link's file and its reason", names, err)
	}
	var note string
	for _, n := range names {
		if strings.HasSuffix(n.Name(), mailbox.ReasonSuffix) {
			b, _ := os.ReadFile(box.Path(mailbox.Rejected, n.Name()))
			note = string(b)
		}
	}
	if strings.Contains(note, "unchanged") || strings.Contains(note, "\n\n\n") || !strings.HasSuffix(note, "\n") {
		t.Errorf("the reason says the file is unchanged, or is ill-formed:\n%s", note)
	}
	if !strings.Contains(note, "It was a symbolic link to /etc/hostname") || !strings.Contains(note, "The agent's other answers were sent.") {
		t.Errorf("the reason does not say how to send what the link points to:\n%s", note)
	}
}
