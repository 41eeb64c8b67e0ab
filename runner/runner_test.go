package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// newWorkspace creates a workspace with the given agents in a temporary
// directory.
func newWorkspace(t *testing.T, agents ...string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed(agents...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// drop writes a file into an agent's outbox the way a person would, in
// place, and dates it a minute back so the router takes it at once.
func drop(t *testing.T, ws *workspace.Workspace, agent, name, content string) string {
	t.Helper()
	path := ws.Mailbox(agent).Path(mailbox.Outbox, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	age(t, path)
	return path
}

// fileClock is the last time age gave a file; tests run in parallel.
var fileClock = struct {
	sync.Mutex
	t time.Time
}{t: time.Now().Add(-time.Minute)}

// age sets a file's modification time in the past, keeping the order in
// which files were aged.
func age(t *testing.T, path string) {
	t.Helper()
	fileClock.Lock()
	fileClock.t = fileClock.t.Add(time.Millisecond)
	at := fileClock.t
	fileClock.Unlock()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// routeAll runs the router until nothing is left to route.
func routeAll(t *testing.T, ws *workspace.Workspace) Stats {
	t.Helper()
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return stats
}

// names lists the files in a mailbox state, reason files left out.
func names(t *testing.T, ws *workspace.Workspace, agent, state string) []string {
	t.Helper()
	entries, err := ws.Mailbox(agent).List(state)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// stage sends a message the Maildir way, as `parley send` does but without
// the fsync, which a test does not need: written in tmp/, renamed into the
// outbox as <id>.md.
func stage(t testing.TB, box mailbox.Dir, m *mailbox.Message) {
	t.Helper()
	id, _ := m.Header().Get("id")
	tmp := box.Path(mailbox.Tmp, id+".md")
	if err := os.WriteFile(tmp, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, box.Path(mailbox.Outbox, id+".md")); err != nil {
		t.Fatal(err)
	}
}

// readMessage parses a file.
func readMessage(t *testing.T, path string) *mailbox.Message {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mailbox.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func journalEntries(t *testing.T, ws *workspace.Workspace) []workspace.Entry {
	t.Helper()
	var out []workspace.Entry
	if err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecipients(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   map[string]bool // agent -> has it in inbox
	}{
		{"direct", "to: bob", map[string]bool{"bob": true}},
		{"list", "to: [bob, carol]", map[string]bool{"bob": true, "carol": true}},
		{"comma separated", "to: bob, carol", map[string]bool{"bob": true, "carol": true}},
		{"cc", "to: bob\ncc: carol", map[string]bool{"bob": true, "carol": true}},
		{"cc only", "cc: dave", map[string]bool{"dave": true}},
		{"broadcast leaves out the sender", "to: \"*\"", map[string]bool{"bob": true, "carol": true, "dave": true}},
		{"broadcast and cc are one copy each", "to: \"*\"\ncc: bob", map[string]bool{"bob": true, "carol": true, "dave": true}},
		{"to self", "to: alice", map[string]bool{"alice": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWorkspace(t, "alice", "bob", "carol", "dave")
			drop(t, ws, "alice", "hello.md", "---\n"+tt.header+"\n---\nhi\n")
			stats := routeAll(t, ws)
			if stats.Routed != 1 || stats.Rejected != 0 {
				t.Fatalf("stats = %+v, want 1 routed; status: %+v", stats, mustStatus(t, ws))
			}
			got := map[string]bool{}
			for _, a := range ws.AgentNames() {
				if n := len(names(t, ws, a, mailbox.Inbox)); n > 0 {
					if n != 1 {
						t.Errorf("%s has %d copies, want 1", a, n)
					}
					got[a] = true
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("inboxes (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{names(t, ws, "alice", mailbox.Sent)[0]}, names(t, ws, "alice", mailbox.Sent)); d != "" || len(names(t, ws, "alice", mailbox.Outbox)) != 0 {
				t.Errorf("outbox not emptied into sent/")
			}
		})
	}
}

func mustStatus(t *testing.T, ws *workspace.Workspace) []workspace.AgentStatus {
	t.Helper()
	s, err := ws.Status(workspace.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDeliveredCopy(t *testing.T) {
	ws := newWorkspace(t, "gm", "aria")
	drop(t, ws, "gm", "note.md", "---\n# the GM's own comment\nto: aria   # the player\nmood: grim\n---\nThe door creaks.\n---\nnot a header\n")
	drop(t, ws, "gm", "tag.md", "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\n\n## Scene\nRain.\n")
	routeAll(t, ws)
	inbox := names(t, ws, "aria", mailbox.Inbox)
	if len(inbox) != 2 {
		t.Fatalf("aria's inbox = %v, want 2 messages", inbox)
	}
	first, err := os.ReadFile(ws.Mailbox("aria").Path(mailbox.Inbox, inbox[0]))
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(inbox[0], ".md")
	sent, _, _ := mailbox.ParseID(id)
	want := "---\nid: " + id + "\nfrom: gm\ncreated: " + sent.Format(mailbox.TimeFormat) + "\n" +
		"# the GM's own comment\nto: aria   # the player\nmood: grim\n---\nThe door creaks.\n---\nnot a header\n"
	if d := cmp.Diff(want, string(first)); d != "" {
		t.Errorf("delivered copy of a hand-written file (-want +got):\n%s", d)
	}
	m := readMessage(t, ws.Mailbox("aria").Path(mailbox.Inbox, inbox[1]))
	if typ, _ := m.Header().Get("type"); typ != "GM_TO_PLAYER" {
		t.Errorf("tag-first message delivered with type %q, want GM_TO_PLAYER", typ)
	}
	if got := string(m.Body); got != "## Scene\nRain.\n" {
		t.Errorf("tag-first body = %q", got)
	}
	// A file that came without an id is not rewritten: it moves to the
	// sender's sent/ as it was written, under the id its copies carry.
	for _, name := range inbox {
		sentFile, err := os.ReadFile(ws.Mailbox("gm").Path(mailbox.Sent, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(sentFile), "to: aria") || strings.Contains(string(sentFile), "id:") {
			t.Errorf("sent/%s = %q, want the file as gm wrote it", name, sentFile)
		}
	}
	var written []string
	for _, n := range names(t, ws, "gm", mailbox.Sent) {
		data, _ := os.ReadFile(ws.Mailbox("gm").Path(mailbox.Sent, n))
		written = append(written, string(data))
	}
	want2 := []string{"---\n# the GM's own comment\nto: aria   # the player\nmood: grim\n---\nThe door creaks.\n---\nnot a header\n", "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\n\n## Scene\nRain.\n"}
	if d := cmp.Diff(want2, written); d != "" {
		t.Errorf("gm's sent/ (-want +got):\n%s", d)
	}
}

func TestJournal(t *testing.T) {
	ws := newWorkspace(t, "gm", "aria", "bram")
	drop(t, ws, "gm", "a.md", "---\nto: \"*\"\ntype: NARRATIVE\nsignal: start\n---\nx\n")
	drop(t, ws, "gm", "b.md", "---\nto: zed\n---\nx\n")
	routeAll(t, ws)
	got := journalEntries(t, ws)
	if len(got) != 2 {
		t.Fatalf("journal has %d entries, want 2: %+v", len(got), got)
	}
	d := got[0]
	if d.Outcome != workspace.Delivered || d.From != "gm" || d.Type != "NARRATIVE" || d.Signal != "start" || d.File != "a.md" || !mailbox.IsID(d.ID) {
		t.Errorf("delivery entry = %+v", d)
	}
	if diff := cmp.Diff([]string{"aria", "bram"}, d.To); diff != "" {
		t.Errorf("delivery entry recipients (-want +got):\n%s", diff)
	}
	if _, err := time.Parse(mailbox.TimeFormat, d.Time); err != nil {
		t.Errorf("entry time %q: %v", d.Time, err)
	}
	r := got[1]
	if r.Outcome != workspace.Refused || r.File != "b.md" || !strings.Contains(r.Reason, `b.md:2: to: unknown agent "zed"`) {
		t.Errorf("rejection entry = %+v", r)
	}
}

// TestBadInput drops each kind of bad file, beside a good message, and
// checks that the bad one is rejected with its reason, the good one is
// delivered, and status shows the reason.
func TestBadInput(t *testing.T) {
	t.Parallel()
	garbage := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(garbage)
	tests := []struct {
		name    string
		file    string
		make    func(t *testing.T, path string) // creates the bad file at path
		config  string                          // router settings for parley.yaml
		reason  string                          // what the reason file must say
		checkFn func(t *testing.T, dir string)
	}{
		{name: "garbage bytes", file: "junk", make: content(string(garbage)), reason: "junk:1: not a text file"},
		{name: "binary file", file: "photo.png", make: content("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), reason: "photo.png:1: not a text file: invalid UTF-8 at offset 0"},
		{name: "empty file", file: "empty.md", make: content(""), reason: "empty.md: empty file"},
		{name: "only white space", file: "blank.md", make: content("\n  \n"), reason: "blank.md:1: empty file"},
		{name: "no header", file: "prose.md", make: content("Just some words.\n"), reason: "prose.md:1: no header"},
		{name: "frontmatter does not parse", file: "broken.md", make: content("---\nto: bob\ntype: [unclosed\n---\nbody\n"), reason: "broken.md:3: header: did not find expected ',' or ']'"},
		{name: "frontmatter never closed", file: "open.md", make: content("---\nto: bob\nhello\n"), reason: "open.md:1: header: frontmatter is never closed"},
		{name: "over the size limit", file: "big.md", make: content("---\nto: bob\n---\n" + strings.Repeat("x", 1<<20)), reason: "big.md: file is 1048592 bytes, over the 1 MiB limit"},
		{name: "over a configured size limit", file: "big.md", config: "router:\n  max_message_size: 200\n", make: content("---\nto: bob\n---\n" + strings.Repeat("x", 300)), reason: "big.md: file is 316 bytes, over the 200 bytes limit"},
		{name: "named pipe", file: "pipe.md", make: fifo, reason: "pipe.md: a named pipe (FIFO), which parley does not read"},
		{name: "directory", file: "folder.md", make: func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, reason: "folder.md: a directory"},
		{name: "unknown agent", file: "zed.md", make: content("---\nto: zed\n---\nhi\n"), reason: `zed.md:2: to: unknown agent "zed" (agents: alice, bob)`},
		{name: "path up", file: "up.md", make: content("---\nto: ../x\n---\nhi\n"), reason: `up.md:2: to: "../x" is not a valid name`},
		{name: "path down", file: "down.md", make: content("---\ncc: a/b\n---\nhi\n"), reason: `down.md:2: cc: "a/b" is not a valid name`},
		{name: "dot", file: "dot.md", make: content("---\nto: [bob, .]\n---\nhi\n"), reason: `dot.md:2: to: "." is not a valid name`},
		{name: "no recipient", file: "nobody.md", make: content("---\ntype: NOTE\n---\nhi\n"), reason: "nobody.md: to: missing"},
		{name: "forged sender", file: "forged.md", make: content("---\nfrom: bob\nto: bob\n---\nhi\n"), reason: `forged.md:2: from: "bob", but the file is in the outbox of "alice"`},
		{name: "id of another sender", file: "theft.md", make: content("---\nid: 20261121-101500.123456Z-bob-3fa9c2\nto: bob\n---\nhi\n"), reason: `theft.md:2: id: "20261121-101500.123456Z-bob-3fa9c2" names "bob" as its sender`},
		{name: "id not parley's", file: "myid.md", make: content("---\nid: msg-1\nto: bob\n---\nhi\n"), reason: `myid.md:2: id: "msg-1" is not a parley message id`},
		{name: "type is a list", file: "types.md", make: content("---\nto: bob\ntype: [A, B]\n---\nhi\n"), reason: "types.md:3: type: must be a single value"},
		{name: "alias bomb", file: "bomb.md", make: content("---\nto: bob\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n"), reason: "bomb.md:3: YAML anchors and aliases are not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWorkspace(t, "alice", "bob")
			if tt.config != "" {
				ws = reconfigure(t, ws, "agents: [alice, bob]\n"+tt.config)
			}
			path := ws.Mailbox("alice").Path(mailbox.Outbox, tt.file)
			tt.make(t, path)
			drop(t, ws, "alice", "good.md", "---\nto: bob\n---\nstill here\n")

			stats := routeAll(t, ws)
			if stats.Routed != 1 || stats.Rejected != 1 {
				t.Errorf("stats = %+v, want the good message routed and the bad one rejected", stats)
			}
			if got := names(t, ws, "alice", mailbox.Outbox); len(got) != 0 {
				t.Errorf("outbox still holds %v", got)
			}
			rejected, err := ws.Mailbox("alice").List(mailbox.Rejected)
			if err != nil {
				t.Fatal(err)
			}
			if len(rejected) != 1 {
				t.Fatalf("rejected/ = %+v, want one file", rejected)
			}
			if !strings.HasSuffix(rejected[0].Name, "-"+tt.file) {
				t.Errorf("rejected file is named %q, want it to end in -%s", rejected[0].Name, tt.file)
			}
			if !strings.HasPrefix(rejected[0].Reason, tt.reason) {
				t.Errorf("reason = %q, want it to start with %q", rejected[0].Reason, tt.reason)
			}
			status := mustStatus(t, ws)
			if len(status[0].RejectedFiles) != 1 || status[0].RejectedFiles[0].Reason != rejected[0].Reason {
				t.Errorf("status does not show the rejection: %+v", status[0])
			}
			if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 1 {
				t.Errorf("bob's inbox = %v, want the good message", got)
			}
		})
	}
}

// reconfigure replaces a workspace's parley.yaml.
func reconfigure(t *testing.T, ws *workspace.Workspace, config string) *workspace.Workspace {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws.Root, workspace.ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func content(s string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		age(t, path)
	}
}

// symlinkToFIFO makes path a symbolic link to a named pipe: following it
// and reading would block the router for ever.
func symlinkToFIFO(t *testing.T, path string) {
	t.Helper()
	target := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(target, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateID(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	id := "20261121-101500.123456Z-alice-3fa9c2"
	drop(t, ws, "alice", "one.md", "---\nid: "+id+"\nto: bob\n---\nfirst\n")
	drop(t, ws, "alice", "two.md", "---\nid: "+id+"\nto: bob\n---\nsecond\n")
	routeAll(t, ws)
	drop(t, ws, "alice", "three.md", "---\nid: "+id+"\nto: bob\n---\nthird\n")
	routeAll(t, ws)
	m := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, id+".md"))
	if string(m.Body) != "first\n" {
		t.Errorf("bob holds %q, want the first message", m.Body)
	}
	rejected, _ := ws.Mailbox("alice").List(mailbox.Rejected)
	if len(rejected) != 2 {
		t.Fatalf("rejected = %+v, want two duplicates", rejected)
	}
	for _, r := range rejected {
		if !strings.Contains(r.Reason, "id: duplicate: alice already sent a message with id "+id) {
			t.Errorf("reason = %q", r.Reason)
		}
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ws, Options{})
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second Open = %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("error %q does not say which pid holds the lock", err)
	}
	if got := ws.RunnerPID(); got != os.Getpid() {
		t.Errorf("RunnerPID() = %d, want %d", got, os.Getpid())
	}
	// What people and git do to .parley/ does not free the workspace:
	// `rm .parley/lock`, `git clean -fdX`, `rm -rf .parley`.
	for _, remove := range []string{ws.LockPath(), filepath.Join(ws.Root, workspace.StateDir)} {
		if err := os.RemoveAll(remove); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(ws, Options{}); !errors.As(err, &le) {
			t.Fatalf("Open after removing %s = %v, want a LockedError", filepath.Base(remove), err)
		}
		if got := ws.RunnerPID(); got == 0 {
			t.Errorf("after removing %s, RunnerPID() = 0: no runner seen", filepath.Base(remove))
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ws.RunnerPID(); got != 0 {
		t.Errorf("RunnerPID() after Close = %d, want 0", got)
	}
	r, err = Open(ws, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	r.Close()
}

// TestLockReleasedWhileShared: a process forked while the runner held the
// workspace (a program being started, or, in a process hosting several
// runners, any fork between its clone and its exec) shares the locked
// directory's open file; Close still frees the workspace at once, so that
// `parley status` run right after a run does not see a runner. (CI saw
// "runner running" after an in-process `parley run --until-idle`.)
func TestLockReleasedWhileShared(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command:", err)
	}
	ws := newWorkspace(t, "alice")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(sleep, "60")
	child.ExtraFiles = []*os.File{r.lock.dir} // the same open file, as a fork holds it
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ws.RunnerPID(); got != 0 {
		t.Errorf("RunnerPID() after Close, a child still holding the directory = %d, want 0", got)
	}
	r, err = Open(ws, Options{})
	if err != nil {
		t.Fatalf("Open after Close, a child still holding the directory: %v", err)
	}
	r.Close()
}

// TestRecovery sets up what a runner killed mid-batch leaves behind and
// checks that the next one finishes the job without a second copy.
func TestRecovery(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob", "carol", "dave")
	id := "20261121-101500.123456Z-alice-3fa9c2"
	name := id + ".md"
	text := "---\nid: " + id + "\nfrom: alice\nto: \"*\"\ncreated: 2026-11-21T10:15:00.123456Z\n---\nhello\n"
	drop(t, ws, "alice", name, text)
	// bob already handled it, carol is handling it, dave never got it.
	for agent, state := range map[string]string{"bob": mailbox.Done, "carol": mailbox.Cur} {
		if err := os.WriteFile(ws.Mailbox(agent).Path(state, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A delivery staged for dave, and a journal line cut short.
	staged := ws.Mailbox("dave").Path(mailbox.Tmp, name+".delivery")
	if err := os.WriteFile(staged, []byte(text[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.JournalPath(), []byte(`{"time":"2026-11-21T10:15:00.000000Z","id":"x","fr`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file another writer is staging must survive.
	theirs := ws.Mailbox("dave").Path(mailbox.Tmp, "draft.md")
	if err := os.WriteFile(theirs, []byte("draft"), 0o644); err != nil {
		t.Fatal(err)
	}

	stats := routeAll(t, ws)
	if stats.Routed != 1 || stats.Deliveries != 1 || stats.Recovered != 2 {
		t.Errorf("stats = %+v, want 1 routed, 1 delivery (dave), 2 recovered", stats)
	}
	for agent, state := range map[string]string{"bob": mailbox.Done, "carol": mailbox.Cur, "dave": mailbox.Inbox} {
		total := 0
		for _, s := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead} {
			total += len(names(t, ws, agent, s))
		}
		if total != 1 || len(names(t, ws, agent, state)) != 1 {
			t.Errorf("%s holds %d copies, want one in %s", agent, total, state)
		}
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Errorf("staged delivery left in tmp/: %v", err)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("another writer's tmp/ file was removed: %v", err)
	}
	var entries []workspace.Entry
	err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error { entries = append(entries, e); return nil })
	var je *workspace.JournalError
	if !errors.As(err, &je) || je.Line != 1 {
		t.Errorf("ReadJournal error = %v, want the cut line 1 reported", err)
	}
	if len(entries) != 1 || entries[0].ID != id {
		t.Fatalf("journal entries = %+v, want the recovered delivery", entries)
	}
	if d := cmp.Diff([]string{"bob", "carol"}, entries[0].Already); d != "" {
		t.Errorf("journal 'already' (-want +got):\n%s", d)
	}
}

// TestOrder checks that one sender's messages reach one recipient in the
// order they were sent: in the order the copies arrive in the inbox (as
// the inbox's file events show it), and as listed by name.
func TestOrder(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice", "bob", "carol", "dave")
	ids := &mailbox.IDs{}
	const n = 200
	for i := 0; i < n; i++ {
		for _, from := range []string{"alice", "carol"} {
			m := mailbox.New([]byte("x\n"))
			m.Set("id", ids.New(from))
			m.Set("to", "bob")
			m.Set("seq", fmt.Sprint(i))
			stage(t, ws.Mailbox(from), m)
		}
		// dave writes by hand: no id, names that sort in sending order.
		drop(t, ws, "dave", fmt.Sprintf("note-%04d.md", i), fmt.Sprintf("---\nto: bob\nseq: %d\n---\nx\n", i))
	}
	w, err := fsnotify.NewBufferedWatcher(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Join(string(ws.Mailbox("bob")), mailbox.Inbox)); err != nil {
		t.Fatal(err)
	}
	routeAll(t, ws)
	var arrived []string
	for len(arrived) < 3*n {
		select {
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				arrived = append(arrived, filepath.Base(ev.Name))
			}
		case err := <-w.Errors:
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatalf("saw %d arrivals, want %d", len(arrived), 3*n)
		}
	}
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if len(inbox) != 3*n {
		t.Fatalf("bob has %d messages, want %d", len(inbox), 3*n)
	}
	for _, order := range []struct {
		what  string
		names []string
	}{{"arrival", arrived}, {"ls", inbox}} {
		next := map[string]int{}
		for _, name := range order.names {
			m := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, name))
			from, _ := m.Header().Get("from")
			seq, _ := m.Payload().Get("seq")
			if seq != fmt.Sprint(next[from]) {
				t.Fatalf("in %s order, %s: seq %s from %s, want %d", order.what, name, seq, from, next[from])
			}
			next[from]++
		}
	}
}

// clockRunner opens a runner whose clock the test sets.
func clockRunner(t *testing.T, ws *workspace.Workspace, clock *time.Time) *Runner {
	t.Helper()
	r, err := Open(ws, Options{Now: func() time.Time { return *clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// look has the runner list the outboxes and route what is ready.
func look(t *testing.T, r *Runner) time.Time {
	t.Helper()
	r.scan()
	next, err := r.routePending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// writeAt writes a file in place and sets its modification time.
func writeAt(t *testing.T, path, content string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestSettle checks that a file written in place is taken only once it
// has stopped changing for the settle time, while a file named by its id
// is taken as soon as it appears.
func TestSettle(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob", "carol")
	now := time.Now()
	clock := now
	r := clockRunner(t, ws, &clock)
	inPlace := ws.Mailbox("alice").Path(mailbox.Outbox, "draft.md")
	writeAt(t, inPlace, "---\nto: bob\n---\nhalf", now)
	m := mailbox.New([]byte("whole\n"))
	m.Set("id", (&mailbox.IDs{}).New("carol"))
	m.Set("to", "bob")
	if _, err := ws.Mailbox("carol").Send(m); err != nil {
		t.Fatal(err)
	}
	next := look(t, r)
	if got := len(names(t, ws, "bob", mailbox.Inbox)); got != 1 {
		t.Fatalf("after the first look bob has %d messages, want only the one named by its id", got)
	}
	if want := now.Add(workspace.DefaultSettle); !next.Equal(want) {
		t.Errorf("next look at %v, want %v (settle time after the write)", next, want)
	}
	// The writer goes on writing: the settle time starts again.
	clock = now.Add(150 * time.Millisecond)
	writeAt(t, inPlace, "---\nto: bob\n---\nhalf and the rest\n", clock)
	look(t, r)
	clock = now.Add(300 * time.Millisecond)
	look(t, r)
	if got := len(names(t, ws, "bob", mailbox.Inbox)); got != 1 {
		t.Fatalf("file taken %v after its last write, before settling", clock.Sub(now.Add(150*time.Millisecond)))
	}
	clock = now.Add(400 * time.Millisecond)
	look(t, r)
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if len(inbox) != 2 {
		t.Fatalf("bob has %v, want the settled file too", inbox)
	}
	for _, name := range inbox {
		if strings.Contains(name, "-alice-") {
			if got := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, name)); string(got.Body) != "half and the rest\n" {
				t.Errorf("the settled file was delivered as %q", got.Body)
			}
		}
	}
}

// TestStillOpenForWriting checks that a file a program still holds open
// for writing is not taken, however long it has been quiet.
func TestStillOpenForWriting(t *testing.T) {
	if _, err := mailbox.BeingWritten(os.Args[0]); err != nil {
		t.Skipf("no way to tell open files here: %v", err)
	}
	ws := newWorkspace(t, "alice", "bob")
	now := time.Now()
	clock := now
	r := clockRunner(t, ws, &clock)
	path := ws.Mailbox("alice").Path(mailbox.Outbox, "stream.md")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString("---\nto: bob\n---\nThe first part, then a pause")
	look(t, r)
	clock = now.Add(time.Hour)
	look(t, r)
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Fatalf("a file still open for writing was delivered: %v", got)
	}
	w.WriteString(", then the end.\n")
	w.Close()
	clock = now.Add(2 * time.Hour)
	look(t, r) // it changed: settle again
	clock = clock.Add(time.Second)
	look(t, r)
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if len(inbox) != 1 {
		t.Fatalf("bob has %v after the writer closed the file, want it", inbox)
	}
	if got := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, inbox[0])); !strings.HasSuffix(string(got.Body), "then the end.\n") {
		t.Errorf("delivered %q, want the whole text", got.Body)
	}
}

// TestHoldBack checks that a sender's message waits behind an earlier one
// of the same sender that is still being written, and that both then
// arrive in the order they were sent.
func TestHoldBack(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	now := time.Now()
	clock := now
	r := clockRunner(t, ws, &clock)
	// Written in place a moment ago, and still settling.
	writeAt(t, ws.Mailbox("alice").Path(mailbox.Outbox, "first.md"), "---\nto: bob\n---\nfirst\n", now.Add(-50*time.Millisecond))
	m := mailbox.New([]byte("second\n"))
	m.Set("id", (&mailbox.IDs{Now: func() time.Time { return clock }}).New("alice"))
	m.Set("to", "bob")
	if _, err := ws.Mailbox("alice").Send(m); err != nil {
		t.Fatal(err)
	}
	look(t, r)
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Fatalf("bob has %v while alice's earlier message is still being written", got)
	}
	clock = now.Add(time.Second)
	look(t, r)
	var bodies []string
	for _, name := range names(t, ws, "bob", mailbox.Inbox) {
		bodies = append(bodies, string(readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, name)).Body))
	}
	if d := cmp.Diff([]string{"first\n", "second\n"}, bodies); d != "" {
		t.Errorf("bob's inbox, in ls order (-want +got):\n%s", d)
	}
}

// TestStampedIDs checks that files written by hand, in one clock tick, get
// ids in the order they are routed (modification time, then name), so that
// an inbox listing shows them in that order, and that the id is written
// into the file before it is delivered.
func TestStampedIDs(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	tick := time.Now().Add(-time.Minute)
	for i := 1; i <= 8; i++ {
		writeAt(t, ws.Mailbox("alice").Path(mailbox.Outbox, fmt.Sprintf("m%d.md", i)), fmt.Sprintf("---\nto: bob\n---\n%d\n", i), tick)
	}
	routeAll(t, ws)
	var got []string
	for _, name := range names(t, ws, "bob", mailbox.Inbox) {
		got = append(got, strings.TrimSpace(string(readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, name)).Body)))
	}
	if d := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7", "8"}, got); d != "" {
		t.Errorf("bob's inbox in ls order (-want +got):\n%s", d)
	}
	// A later hand-written file sorts after them even with an older
	// modification time.
	writeAt(t, ws.Mailbox("alice").Path(mailbox.Outbox, "late.md"), "---\nto: bob\n---\nlate\n", tick.Add(-time.Hour))
	routeAll(t, ws)
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if last := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, inbox[len(inbox)-1])); string(last.Body) != "late\n" {
		t.Errorf("last in bob's inbox is %q, want the late message", last.Body)
	}
}

// TestFailingDelivery checks that a delivery that keeps failing does not
// spin: --until-idle tries a few times, backing off, and then gives up
// with an error naming the file, while the other senders' messages go
// through.
func TestFailingDelivery(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice", "bob", "carol", "dave")
	m := mailbox.New([]byte("hi\n"))
	id := (&mailbox.IDs{}).New("alice")
	m.Set("id", id)
	m.Set("to", "bob")
	stage(t, ws.Mailbox("alice"), m)
	drop(t, ws, "carol", "fine.md", "---\nto: dave\n---\nfine\n")
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// bob's inbox breaks: a file where the directory should be.
	inbox := filepath.Join(string(ws.Mailbox("bob")), mailbox.Inbox)
	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stats, err := r.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "mailboxes/alice/outbox/"+id+".md") || !strings.Contains(err.Error(), "after 4 attempts") {
		t.Errorf("Run = %v, want an error naming the file after 4 attempts", err)
	}
	if stats.Routed != 1 {
		t.Errorf("stats = %+v, want carol's message routed", stats)
	}
	if got := names(t, ws, "alice", mailbox.Outbox); len(got) != 1 {
		t.Errorf("alice's outbox = %v, want the failing message kept", got)
	}
}

// TestFailingDeliveryHoldsLater: a run until idle gives up on a file
// that keeps failing after four tries, as when it is alone, when later
// files of its sender wait behind it: those are never tried (one
// sender's files go in order), and the run ends, naming the file and
// the ones waiting behind it. It used to wait for them for ever.
func TestFailingDeliveryHoldsLater(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice", "bob", "carol")
	ids := &mailbox.IDs{}
	var first string
	for i, to := range []string{"bob", "carol", "carol"} {
		m := mailbox.New([]byte("hi\n"))
		id := ids.New("alice")
		if i == 0 {
			first = id
		}
		m.Set("id", id)
		m.Set("to", to)
		stage(t, ws.Mailbox("alice"), m)
	}
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inbox := filepath.Join(string(ws.Mailbox("bob")), mailbox.Inbox)
	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A guard, not a wait: the run ends within a second when it gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = r.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run still ran after 20 s: a file that keeps failing, with later files of its sender behind it, is never given up")
	}
	if err == nil || !strings.Contains(err.Error(), "mailboxes/alice/outbox/"+first+".md") || !strings.Contains(err.Error(), "after 4 attempts") ||
		!strings.Contains(err.Error(), "2 later files of alice wait behind it") || strings.Contains(err.Error(), "%!") {
		t.Errorf("Run = %v, want an error naming the file after 4 attempts and the 2 files waiting behind it", err)
	}
	if got := names(t, ws, "alice", mailbox.Outbox); len(got) != 3 {
		t.Errorf("alice's outbox = %v, want the three files kept, in order", got)
	}
	if got := names(t, ws, "carol", mailbox.Inbox); len(got) != 0 {
		t.Errorf("carol's inbox = %v, want nothing: alice's later files wait behind her first", got)
	}
}

func TestIgnored(t *testing.T) {
	for _, name := range []string{".hello.md.swp", "hello.md~", "4913", "#hello.md#", ".#hello.md", "hello.md.swp", "x.tmp"} {
		if !mailbox.IsScratch(name) {
			t.Errorf("mailbox.IsScratch(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"hello.md", "hello", "2026-plan.md", "20261121-101500.123456Z-a-3fa9c2.md"} {
		if mailbox.IsScratch(name) {
			t.Errorf("mailbox.IsScratch(%q) = true, want false", name)
		}
	}
	ws := newWorkspace(t, "alice", "bob")
	drop(t, ws, "alice", ".draft.md.swp", "swap")
	drop(t, ws, "alice", "4913", "")
	stats := routeAll(t, ws)
	if stats.Routed+stats.Rejected+stats.Deliveries+stats.Recovered != 0 {
		t.Errorf("editor droppings were routed: %+v", stats)
	}
	if got := names(t, ws, "alice", mailbox.Outbox); len(got) != 2 {
		t.Errorf("outbox = %v, want the droppings left alone", got)
	}
}

// TestWatch runs the router in watch mode and sends to it while it runs.
func TestWatch(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() {
		stats, err := r.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- stats
	}()
	ids := &mailbox.IDs{}
	for i := 0; i < 20; i++ {
		m := mailbox.New([]byte("hi\n"))
		m.Set("id", ids.New("alice"))
		m.Set("to", "bob")
		if _, err := ws.Mailbox("alice").Send(m); err != nil {
			t.Fatal(err)
		}
	}
	// And one written by hand, in place.
	if err := os.WriteFile(ws.Mailbox("alice").Path(mailbox.Outbox, "by-hand.md"), []byte("---\nto: bob\n---\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "bob", mailbox.Inbox)) == 21 })
	cancel()
	if stats := <-done; stats.Routed != 21 {
		t.Errorf("stats = %+v, want 21 routed", stats)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, deadline time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("condition not met within %v", deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRescan checks that a file the watcher never reports (as on NFS) is
// routed by the periodic rescan.
func TestRescan(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	ws = reconfigure(t, ws, "agents: [alice, bob]\nrouter:\n  rescan_interval: 50ms\n")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.noEvents = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := r.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	m := mailbox.New([]byte("hi\n"))
	m.Set("id", (&mailbox.IDs{}).New("alice"))
	m.Set("to", "bob")
	if _, err := ws.Mailbox("alice").Send(m); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "bob", mailbox.Inbox)) == 1 })
	cancel()
	<-done
}

// TestTagFirstProtocolFields checks that a tag-first message's own fields
// named like reserved ones (the protocol's type, from) are the protocol's:
// the message is routed by its tag and its sender's outbox, and delivered
// as written under the envelope.
func TestTagFirstProtocolFields(t *testing.T) {
	ws := newWorkspace(t, "gm", "aria")
	text := "[PLAYER_TO_GM]\nto: gm\ntype: VETO\nfrom: tilda-brannock\n\nThis touches my backstory.\n"
	drop(t, ws, "aria", "veto.md", text)
	if stats := routeAll(t, ws); stats.Routed != 1 {
		t.Fatalf("stats = %+v, want the message routed", stats)
	}
	inbox := names(t, ws, "gm", mailbox.Inbox)
	data, err := os.ReadFile(ws.Mailbox("gm").Path(mailbox.Inbox, inbox[0]))
	if err != nil {
		t.Fatal(err)
	}
	_, content, ok := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
	if !ok || content != text {
		t.Errorf("delivered %q, want the envelope then the message as written", data)
	}
	m := readMessage(t, ws.Mailbox("gm").Path(mailbox.Inbox, inbox[0]))
	for key, want := range map[string]string{"from": "aria", "type": "PLAYER_TO_GM", "to": "gm"} {
		if got, _ := m.Header().Get(key); got != want {
			t.Errorf("envelope %s = %q, want %q", key, got, want)
		}
	}
	if got, _ := m.Payload().Get("type"); got != "VETO" {
		t.Errorf("protocol field type = %q, want VETO", got)
	}
}

func TestNaturalLess(t *testing.T) {
	sorted := []string{
		"20261121-101500.000001Z-alice-000001.md", "20261121-101500.000002Z-alice-000001.md",
		"a.md", "note-2.md", "note-10.md", "note-010b.md", "note-10c.md", "zeta",
	}
	for i := range sorted {
		for j := range sorted {
			if got := naturalLess(sorted[i], sorted[j]); got != (i < j) && sorted[i] != sorted[j] {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", sorted[i], sorted[j], got, i < j)
			}
		}
	}
}

// TestFailureHoldsLaterBatches checks that a message that cannot be
// delivered holds back its sender's later messages in the batches that
// follow it, not only in its own: they are routed after it, in order,
// once it can be.
func TestFailureHoldsLaterBatches(t *testing.T) {
	ws := newWorkspace(t, "ann", "bo", "cy")
	drop(t, ws, "ann", "1.md", "---\nto: cy\n---\nfirst\n")
	for _, n := range []string{"2", "3", "4"} {
		drop(t, ws, "ann", n+".md", "---\nto: bo\n---\nlater "+n+"\n")
	}
	drop(t, ws, "bo", "b.md", "---\nto: ann\n---\nunrelated\n")
	clock := time.Now()
	r, err := Open(ws, Options{BatchSize: 1, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.troubles["cy"] = "its inbox is being mended" // every delivery to cy fails
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "bo", mailbox.Inbox); len(got) != 0 {
		t.Errorf("bo's inbox = %v while ann's first message waits, want nothing from ann", got)
	}
	if got := names(t, ws, "ann", mailbox.Inbox); len(got) != 1 {
		t.Errorf("ann's inbox = %v, want bo's message (another sender does not wait)", got)
	}
	delete(r.troubles, "cy")
	clock = clock.Add(time.Minute) // past the retry pause, and settled
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, n := range names(t, ws, "bo", mailbox.Inbox) {
		m := readMessage(t, ws.Mailbox("bo").Path(mailbox.Inbox, n))
		bodies = append(bodies, strings.TrimSpace(string(m.Body)))
	}
	if d := cmp.Diff([]string{"later 2", "later 3", "later 4"}, bodies); d != "" {
		t.Errorf("bo's inbox once cy's mailbox is mended (-want +got):\n%s", d)
	}
	if got := names(t, ws, "cy", mailbox.Inbox); len(got) != 1 {
		t.Errorf("cy's inbox = %v, want ann's first message", got)
	}
}

// TestFailingNamedInRunnerInfo: while a file keeps failing, runner.json
// names it for parley status (sender, file, recipient, why, since when,
// and the sender's files waiting behind it), and stops naming it once it
// is delivered. Nothing said it: status showed every agent idle.
func TestFailingNamedInRunnerInfo(t *testing.T) {
	ws := newWorkspace(t, "ann", "bo", "cy")
	drop(t, ws, "ann", "1.md", "---\nto: cy\n---\nfirst\n")
	drop(t, ws, "ann", "2.md", "---\nto: bo\n---\nlater\n")
	clock := time.Now()
	r, err := Open(ws, Options{BatchSize: 1, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.troubles["cy"] = "its inbox is being mended"
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	info := workspace.ReadRunnerInfo(ws.Root)
	if info == nil {
		t.Fatal("no runner.json")
	}
	want := []workspace.FailingDelivery{{Agent: "ann", Path: "mailboxes/ann/outbox/1.md", To: "cy",
		Reason: "delivering to cy: its mailbox cannot be used: its inbox is being mended", Since: clock.UTC().Round(0), Attempts: 1, Next: clock.Add(100 * time.Millisecond).UTC().Round(0), Waiting: 1}}
	if d := cmp.Diff(want, info.Failing); d != "" {
		t.Errorf("runner.json's failing deliveries (-want +got):\n%s", d)
	}
	delete(r.troubles, "cy")
	clock = clock.Add(time.Minute)
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "cy", mailbox.Inbox); len(got) != 1 {
		t.Errorf("cy's inbox = %v, want ann's first message", got)
	}
	if info := workspace.ReadRunnerInfo(ws.Root); info == nil || len(info.Failing) != 0 {
		t.Errorf("runner.json once delivered = %+v, want no failing delivery", info)
	}
}

// TestRunnerInfoWrittenAgain: runner.json that could not be written (a
// full disk) is written again at the next look, though nothing changed:
// it kept naming a failing delivery long delivered, or none at all.
func TestRunnerInfoWrittenAgain(t *testing.T) {
	ws := newWorkspace(t, "ann", "bo", "cy")
	drop(t, ws, "ann", "1.md", "---\nto: cy\n---\nfirst\n")
	clock := time.Now()
	r, err := Open(ws, Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	blocker := workspace.RunnerInfoPath(ws.Root) + ".tmp"
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil { // the write fails
		t.Fatal(err)
	}
	r.troubles["cy"] = "its inbox is being mended"
	r.scan()
	next, err := r.routePending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Add(100 * time.Millisecond); !next.Equal(want) {
		t.Errorf("routePending = %v, want the retry at %v first", next, want)
	}
	if info := workspace.ReadRunnerInfo(ws.Root); info == nil || len(info.Failing) != 0 {
		t.Fatalf("runner.json = %+v, want it as Open wrote it (the write was blocked)", info)
	}
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := r.routePending(context.Background()); err != nil { // before the retry: nothing changes
		t.Fatal(err)
	}
	if info := workspace.ReadRunnerInfo(ws.Root); info == nil || len(info.Failing) != 1 {
		t.Errorf("runner.json = %+v, want the failing delivery, written at the next look", info)
	}
}

// TestHandWrittenAfterIDNamed checks that a file without an id gets an
// id after every id its sender used before: one named by its id and
// routed in the same run (before sent/ was read), and the newest in its
// sent/ from earlier runs.
func TestHandWrittenAfterIDNamed(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	box := ws.Mailbox("alice")
	past := time.Now().Add(-time.Hour)
	// History: a message in sent/ from an earlier run.
	old := mailbox.IDAt("alice", past.Add(10*time.Minute))
	if err := os.WriteFile(box.Path(mailbox.Sent, mailbox.FileName(old)), []byte("---\nid: "+old+"\nfrom: alice\nto: bob\n---\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Sent in this run: a file named by an id ahead of the clock (by
	// less than the most an id may be).
	ahead := mailbox.IDAt("alice", time.Now().Add(maxAheadForTests))
	m := mailbox.New([]byte("ahead\n"))
	m.Set("id", ahead)
	m.Set("to", "bob")
	stage(t, box, m)
	routeAll(t, ws)
	// Then one written by hand, dated before both.
	path := drop(t, ws, "alice", "note.md", "---\nto: bob\n---\nby hand\n")
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	routeAll(t, ws)
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if len(inbox) != 2 {
		t.Fatalf("bob's inbox = %v, want 2 messages", inbox)
	}
	if inbox[0] != mailbox.FileName(ahead) {
		t.Errorf("bob's inbox lists %v: the hand-written message sorts before %s, sent before it", inbox, ahead)
	}
}

// TestBacklogWindow checks a backlog bigger than the router looks at in
// one go: a sender's files named by their id are taken a window at a
// time in id order, and a file written by hand between two of them in
// time is routed between them, not ahead of the files left for the next
// window.
func TestBacklogWindow(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "ann", "bo")
	box := ws.Mailbox("ann")
	n := lookWindow + lookWindow/2
	start := time.Now().Add(-time.Hour).UTC()
	var ids []string
	for i := 0; i < n; i++ {
		id := mailbox.IDOf("ann", start.Add(time.Duration(i)*time.Millisecond), "x", []byte(strconv.Itoa(i)))
		ids = append(ids, id)
		data := fmt.Sprintf("---\nid: %s\nto: bo\n---\n%d\n", id, i)
		path := box.Path(mailbox.Outbox, mailbox.FileName(id))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		// Written when it was sent.
		at := start.Add(time.Duration(i) * time.Millisecond)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// Written by hand after the first files left out of the first window.
	mid := start.Add(time.Duration(lookWindow+2)*time.Millisecond + time.Millisecond/2)
	path := box.Path(mailbox.Outbox, "note.md")
	if err := os.WriteFile(path, []byte("---\nto: bo\n---\nby hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mid, mid); err != nil {
		t.Fatal(err)
	}
	stats := routeAll(t, ws)
	if stats.Routed != n+1 {
		t.Fatalf("routed %d, want %d", stats.Routed, n+1)
	}
	var order []string
	if err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		if e.File == "note.md" {
			order = append(order, "note")
		} else {
			order = append(order, e.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]string{}, ids[:lookWindow+3]...), "note"), ids[lookWindow+3:]...)
	if d := cmp.Diff(want, order); d != "" {
		t.Errorf("routing order (-want +got):\n%s", d)
	}
}

// TestBacklogWindowCopiedIn checks a backlog of files named by ids older
// than the files (copied in from elsewhere, all at once): every window is
// routed, none waits for ever behind the edge of its own window.
func TestBacklogWindowCopiedIn(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "ann", "bo")
	box := ws.Mailbox("ann")
	n := 2*lookWindow + 10
	start := time.Now().Add(-24 * time.Hour).UTC()
	for i := 0; i < n; i++ {
		id := mailbox.IDOf("ann", start.Add(time.Duration(i)*time.Second), "x", []byte(strconv.Itoa(i)))
		data := fmt.Sprintf("---\nid: %s\nto: bo\n---\n%d\n", id, i)
		if err := os.WriteFile(box.Path(mailbox.Outbox, mailbox.FileName(id)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drop(t, ws, "ann", "note.md", "---\nto: bo\n---\nby hand\n")
	if stats := routeAll(t, ws); stats.Routed != n+1 {
		t.Fatalf("routed %d, want %d", stats.Routed, n+1)
	}
}

// TestBacklogKeepsAWindow checks that a backlog bigger than a window
// costs the router a window: of a sender's files named by their id, it
// keeps the first lookWindow, and a file sent since, after them, waits
// unlisted until the window reaches it (issue 12's memory target: 100,000
// files pending, not 100,000 entries). Every file is routed, in order.
func TestBacklogKeepsAWindow(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "ann", "bo")
	box := ws.Mailbox("ann")
	n := 3 * lookWindow
	start := time.Now().Add(-time.Hour).UTC()
	var want []string
	write := func(i int) string {
		t.Helper()
		id := mailbox.IDOf("ann", start.Add(time.Duration(i)*time.Millisecond), "x", []byte(strconv.Itoa(i)))
		data := fmt.Sprintf("---\nid: %s\nto: bo\n---\n%d\n", id, i)
		path := box.Path(mailbox.Outbox, mailbox.FileName(id))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
		return path
	}
	for i := 0; i < n; i++ {
		write(i)
	}
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.scan()
	if got := len(r.pending); got != lookWindow {
		t.Errorf("after listing %d files the router holds %d, want %d (a window)", n, got, lookWindow)
	}
	later := write(n)
	r.outboxes = map[string]string{filepath.Dir(later): "ann"} // as while Run watches
	r.event(fsnotify.Event{Name: later, Op: fsnotify.Create})
	r.outboxes = nil
	if got := len(r.pending); got != lookWindow {
		t.Errorf("after an event for a file past the window the router holds %d, want %d", got, lookWindow)
	}
	stats, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Routed != n+1 {
		t.Fatalf("routed %d, want %d", stats.Routed, n+1)
	}
	var order []string
	if err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		order = append(order, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, order); d != "" {
		t.Errorf("routing order (-want +got):\n%s", d)
	}
}

// TestWatchBacklog checks that a watching runner routes a backlog of
// several windows without waiting for the periodic rescan: the outbox of a
// sender whose window is routed is listed again at once.
func TestWatchBacklog(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "ann", "bo")
	box := ws.Mailbox("ann")
	n := 2*lookWindow + 10
	start := time.Now().Add(-time.Hour).UTC()
	for i := 0; i < n; i++ {
		id := mailbox.IDOf("ann", start.Add(time.Duration(i)*time.Millisecond), "x", []byte(strconv.Itoa(i)))
		data := fmt.Sprintf("---\nid: %s\nto: bo\n---\n%d\n", id, i)
		if err := os.WriteFile(box.Path(mailbox.Outbox, mailbox.FileName(id)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	watching(t, ws, Options{})
	// Well before the rescan, every 30 seconds.
	waitFor(t, 20*time.Second, func() bool {
		c, err := ws.Mailbox("bo").Count(mailbox.Inbox)
		return err == nil && c == n
	})
}

func TestLeast(t *testing.T) {
	for _, size := range []int{3, 10, 100, 1000} {
		for _, n := range []int{1, 2, size / 2, size - 1} {
			if n < 1 || n >= size {
				continue
			}
			var names []string
			for i := 0; i < size; i++ {
				names = append(names, fmt.Sprintf("%06d", (i*7919)%size))
			}
			first, next := least(slices.Clone(names), n)
			slices.Sort(first)
			sorted := slices.Sorted(slices.Values(names))
			if d := cmp.Diff(sorted[:n], first); d != "" || next != sorted[n] {
				t.Errorf("least(%d of %d): next %q, want %q; first (-want +got):\n%s", n, size, next, sorted[n], d)
			}
		}
	}
}

// TestPendingIsSmall guards the size of what the router keeps per pending
// file: a backlog holds one for each file in its window, and for every
// file written by hand (issue 12's memory target).
func TestPendingIsSmall(t *testing.T) {
	if size := unsafe.Sizeof(pending{}); size > 48 {
		t.Errorf("a pending file takes %d bytes, want at most 48", size)
	}
}

// TestWorkspaceReplaced: a workspace moved aside while its runner runs,
// and another put in its place (`mv ws ws.old && cp -a ws.old ws`), is
// not locked by that runner, and a second runner may take it. The first
// stops rather than route the new one too: two runners routing the same
// files delivered one message twice.
func TestWorkspaceReplaced(t *testing.T) {
	for _, untilIdle := range []bool{false, true} {
		t.Run(fmt.Sprintf("untilIdle=%v", untilIdle), func(t *testing.T) {
			ws := reconfigure(t, newWorkspace(t, "alice", "bob"), "agents: [alice, bob]\nrouter:\n  rescan_interval: 50ms\n")
			r, err := Open(ws, Options{UntilIdle: untilIdle})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := os.Rename(ws.Root, ws.Root+".old"); err != nil {
				t.Fatal(err)
			}
			if _, err := workspace.Init(ws.Root, workspace.AgentsNamed("alice", "bob"), nil); err != nil {
				t.Fatal(err)
			}
			drop(t, ws, "alice", "hi.md", "---\nto: bob\n---\nhello\n")
			done := make(chan error, 1)
			go func() { _, err := r.Run(context.Background()); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrWorkspaceReplaced) {
					t.Fatalf("Run = %v, want ErrWorkspaceReplaced", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the runner still runs on a workspace it does not hold")
			}
			if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
				t.Errorf("bob's inbox in the new workspace = %v, want nothing routed by the runner that does not hold it", got)
			}
			// The workspace put in its place is a runner's to take.
			r2, err := Open(ws, Options{UntilIdle: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r2.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The first runner, closed while the second holds the new
			// workspace, writes nothing there: not that no runner runs,
			// not that the last one stopped cleanly.
			if err := r.Close(); err != nil {
				t.Errorf("Close of the runner whose workspace was replaced: %v", err)
			}
			if _, err := os.Stat(workspace.RunnerInfoPath(ws.Root)); err != nil {
				t.Errorf("the second runner's runner.json: %v", err)
			}
			if rec, err := ws.ReadDeliveryRecord(); err != nil || !rec.Running {
				t.Errorf("the record of delivered ids = %+v, %v; want the second runner's, running", rec, err)
			}
			r2.Close()
			if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 1 {
				t.Errorf("bob's inbox = %v, want the one message", got)
			}
		})
	}
}
