package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	id1 = "20261121-101500.000001Z-alice-000001"
	id2 = "20261121-101500.000002Z-alice-000002"
	id3 = "20261121-101500.000003Z-carol-000003"
)

// newDir returns an initialised mailbox for agent bob in a fresh directory,
// and a Syncer for its filesystem.
func newDir(t *testing.T) (Dir, *Syncer) {
	t.Helper()
	root := t.TempDir()
	d := Dir(filepath.Join(root, "mailboxes", "bob"))
	if err := d.Init(); err != nil {
		t.Fatalf("Init() = %v", err)
	}
	s, err := NewSyncer(root)
	if err != nil {
		t.Fatalf("NewSyncer(%q) = %v", root, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Syncer.Close() = %v", err)
		}
	})
	return d, s
}

// names lists the names in a state directory, sorted.
func names(t *testing.T, d Dir, state string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(string(d), state))
	if err != nil {
		t.Fatalf("ReadDir(%s) = %v", state, err)
	}
	out := []string{}
	for _, de := range des {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

// tree maps each state to the names in it, leaving out empty states.
func tree(t *testing.T, d Dir) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, st := range States {
		if n := names(t, d, st); len(n) > 0 {
			out[st] = n
		}
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile = %v", err)
	}
	return string(b)
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInit(t *testing.T) {
	d, _ := newDir(t)
	for _, st := range States {
		info, err := os.Stat(filepath.Join(string(d), st))
		if err != nil || !info.IsDir() {
			t.Errorf("after Init, %s: %v, want a directory", st, err)
		}
	}
	writeTestFile(t, d.Path(Inbox, FileName(id1)), "x")
	if err := d.Init(); err != nil {
		t.Fatalf("second Init() = %v", err)
	}
	if got := names(t, d, Inbox); len(got) != 1 {
		t.Errorf("second Init() left inbox with %q, want the message kept", got)
	}
	if got := d.Agent(); got != "bob" {
		t.Errorf("Agent() = %q, want bob", got)
	}
}

func TestSend(t *testing.T) {
	d, _ := newDir(t)
	m := mustParse(t, "---\nto: carol\n---\nHello.\n")
	m.Set("id", id1)
	m.Set("from", "bob")
	path, err := d.Send(m)
	if err != nil {
		t.Fatalf("Send() = %v", err)
	}
	if want := d.Path(Outbox, id1+".md"); path != want {
		t.Errorf("Send() = %q, want %q", path, want)
	}
	if got, want := readFile(t, path), string(m.Bytes()); got != want {
		t.Errorf("Send() wrote %q, want %q", got, want)
	}
	if diff := cmp.Diff(map[string][]string{Outbox: {id1 + ".md"}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox after Send() mismatch (-want +got):\n%s", diff)
	}

	// A second message with the same id does not replace the first.
	m.Body = []byte("Other.\n")
	if _, err := d.Send(m); err == nil {
		t.Errorf("Send() of an id already in the outbox = nil, want an error")
	}
	if got := readFile(t, path); !strings.HasSuffix(got, "Hello.\n") {
		t.Errorf("after a second Send(), outbox file = %q, want the first message", got)
	}
	if got := names(t, d, Tmp); len(got) != 0 {
		t.Errorf("after a failed Send(), tmp/ holds %q, want nothing", got)
	}
}

// TestSendMakesMissingDirs checks that Send makes again a tmp/ or an
// outbox/ someone removed (rm -r, git clean), as a new agent's mailbox is
// made, rather than failing on the rename.
func TestSendMakesMissingDirs(t *testing.T) {
	for _, state := range []string{Outbox, Tmp} {
		t.Run(state, func(t *testing.T) {
			d, _ := newDir(t)
			if err := d.Init(); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(d.Path(state, "")); err != nil {
				t.Fatal(err)
			}
			m := mustParse(t, "---\nto: carol\n---\nHello.\n")
			m.Set("id", id1)
			path, err := d.Send(m)
			if err != nil {
				t.Fatalf("Send() with %s/ removed = %v, want no error", state, err)
			}
			if want := d.Path(Outbox, id1+".md"); path != want {
				t.Errorf("Send() = %q, want %q", path, want)
			}
			if got := names(t, d, Tmp); len(got) != 0 {
				t.Errorf("after Send(), tmp/ holds %q, want nothing", got)
			}
		})
	}
}

func TestSendRefusesBadID(t *testing.T) {
	for _, id := range []string{"", "hello", "../../etc/passwd", "20261121-101500.123456Z-Alice-3fa9c2"} {
		d, _ := newDir(t)
		m := New([]byte("Hello.\n"))
		if id != "" {
			m.Set("id", id)
		}
		if path, err := d.Send(m); err == nil {
			t.Errorf("Send() with id %q = %q, nil, want an error", id, path)
		}
		if got := tree(t, d); len(got) != 0 {
			t.Errorf("Send() with id %q left %v, want nothing written", id, got)
		}
	}
}

func TestDeliver(t *testing.T) {
	d, s := newDir(t)
	ok, err := d.Deliver(id1, []byte("first"), s)
	if err != nil || !ok {
		t.Fatalf("Deliver(%s) = %v, %v, want true, nil", id1, ok, err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync() = %v", err)
	}
	if got := readFile(t, d.Path(Inbox, id1+".md")); got != "first" {
		t.Errorf("inbox/%s.md = %q, want %q", id1, got, "first")
	}
	if diff := cmp.Diff(map[string][]string{Inbox: {id1 + ".md"}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox after Deliver() mismatch (-want +got):\n%s", diff)
	}
}

func TestDeliverTwice(t *testing.T) {
	// Each case moves the first copy to a state, then delivers again.
	tests := []struct {
		state string
		move  func(Dir) error
	}{
		{Inbox, func(Dir) error { return nil }},
		{Cur, func(d Dir) error { return d.Claim(id1) }},
		{Done, func(d Dir) error {
			if err := d.Claim(id1); err != nil {
				return err
			}
			return d.Finish(id1)
		}},
		{Dead, func(d Dir) error {
			if err := d.Claim(id1); err != nil {
				return err
			}
			return d.GiveUp(id1, "timed out")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			d, s := newDir(t)
			if ok, err := d.Deliver(id1, []byte("first"), s); err != nil || !ok {
				t.Fatalf("Deliver(%s) = %v, %v, want true, nil", id1, ok, err)
			}
			if err := tt.move(d); err != nil {
				t.Fatalf("moving the message to %s: %v", tt.state, err)
			}
			ok, err := d.Deliver(id1, []byte("second"), s)
			if err != nil || ok {
				t.Errorf("second Deliver(%s) = %v, %v, want false, nil", id1, ok, err)
			}
			if err := s.Sync(); err != nil {
				t.Fatalf("Sync() = %v", err)
			}
			copies := 0
			for _, st := range []string{Inbox, Cur, Done, Dead} {
				for _, n := range names(t, d, st) {
					if n == id1+".md" {
						copies++
					}
				}
			}
			if copies != 1 {
				t.Errorf("after two deliveries, %d copies of %s, want 1: %v", copies, id1, tree(t, d))
			}
			if got := readFile(t, d.Path(tt.state, id1+".md")); got != "first" {
				t.Errorf("%s/%s.md = %q, want the first delivery", tt.state, id1, got)
			}
			if got := names(t, d, Tmp); len(got) != 0 {
				t.Errorf("tmp/ holds %q after Deliver, want nothing", got)
			}
		})
	}
}

func TestDeliverOrder(t *testing.T) {
	d, s := newDir(t)
	for _, id := range []string{id3, id1, id2} {
		if ok, err := d.Deliver(id, []byte(id), s); err != nil || !ok {
			t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync() = %v", err)
	}
	list, err := d.List(Inbox)
	if err != nil {
		t.Fatalf("List(inbox) = %v", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.ID)
	}
	if diff := cmp.Diff([]string{id1, id2, id3}, got); diff != "" {
		t.Errorf("List(inbox) ids mismatch (-want +got):\n%s", diff)
	}
}

func TestClaimFinishGiveUp(t *testing.T) {
	d, s := newDir(t)
	for _, id := range []string{id1, id2} {
		if ok, err := d.Deliver(id, []byte("msg "+id), s); err != nil || !ok {
			t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
		}
	}
	steps := []struct {
		name string
		do   func() error
		want map[string][]string
	}{
		{"claim 1", func() error { return d.Claim(id1) }, map[string][]string{
			Inbox: {id2 + ".md"}, Cur: {id1 + ".md"},
		}},
		{"finish 1", func() error { return d.Finish(id1) }, map[string][]string{
			Inbox: {id2 + ".md"}, Done: {id1 + ".md"},
		}},
		{"claim 2", func() error { return d.Claim(id2) }, map[string][]string{
			Cur: {id2 + ".md"}, Done: {id1 + ".md"},
		}},
		{"give up 2", func() error { return d.GiveUp(id2, "handler failed 3 times\nlast error: exit 1") }, map[string][]string{
			Done: {id1 + ".md"}, Dead: {id2 + ".md", id2 + ".md.reason"},
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, tree(t, d)); diff != "" {
			t.Fatalf("mailbox after %s mismatch (-want +got):\n%s", st.name, diff)
		}
	}
	if got := readFile(t, d.Path(Done, id1+".md")); got != "msg "+id1 {
		t.Errorf("done/%s.md = %q, want the delivered content", id1, got)
	}
	if got := readFile(t, d.Path(Dead, id2+".md")); got != "msg "+id2 {
		t.Errorf("dead/%s.md = %q, want the delivered content", id2, got)
	}
	// The reason as given, then when it was given up.
	got := readFile(t, d.Path(Dead, id2+".md.reason"))
	if !regexp.MustCompile(`^handler failed 3 times\nlast error: exit 1\n\ngiven up:  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\n$`).MatchString(got) {
		t.Errorf("dead/%s.md.reason = %q, want the reason and a given up: line", id2, got)
	}
}

func TestMoveNotFound(t *testing.T) {
	d, s := newDir(t)
	if ok, err := d.Deliver(id1, []byte("x"), s); err != nil || !ok {
		t.Fatalf("Deliver(%s) = %v, %v", id1, ok, err)
	}
	tests := []struct {
		name string
		do   func() error
	}{
		{"claim missing", func() error { return d.Claim(id2) }},
		{"finish unclaimed", func() error { return d.Finish(id1) }},
		{"give up unclaimed", func() error { return d.GiveUp(id1, "why") }},
	}
	for _, tt := range tests {
		err := tt.do()
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s = %v, want an error matching ErrNotFound", tt.name, err)
		}
	}
	if diff := cmp.Diff(map[string][]string{Inbox: {id1 + ".md"}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox after failed moves mismatch (-want +got):\n%s", diff)
	}
}

// TestClaimIntoMissingDir checks that a claim whose cur/ was removed says
// the directory is missing, not that the message is: the message stays in
// the inbox, and the caller can make cur/ again and claim it.
func TestClaimIntoMissingDir(t *testing.T) {
	d, s := newDir(t)
	if ok, err := d.Deliver(id1, []byte("x"), s); err != nil || !ok {
		t.Fatalf("Deliver(%s) = %v, %v", id1, ok, err)
	}
	if err := os.Remove(d.Path(Cur, "")); err != nil {
		t.Fatal(err)
	}
	err := d.Claim(id1)
	if errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Claim with cur/ removed = %v, want a missing directory, not a missing message", err)
	}
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	if err := d.Claim(id1); err != nil {
		t.Fatalf("Claim after Init = %v", err)
	}
}

func TestRejectSymlink(t *testing.T) {
	d, s := newDir(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeTestFile(t, outside, "do not touch\n")
	link := d.Path(Outbox, "evil.md")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 11, 21, 10, 15, 0, 123456789, time.UTC)
	path, err := d.Reject("evil.md", mtime, "a symbolic link is not a message", FileID{}, s)
	if err != nil {
		t.Fatalf("Reject(evil.md) = %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync() = %v", err)
	}
	const name = "20261121-101500.123456Z-evil.md"
	if want := d.Path(Rejected, name); path != want {
		t.Errorf("Reject(evil.md) = %q, want %q", path, want)
	}
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("rejected file: %v, %v, want the symbolic link itself", info, err)
	}
	if target, err := os.Readlink(path); err != nil || target != outside {
		t.Errorf("Readlink(rejected) = %q, %v, want %q", target, err, outside)
	}
	if got := readFile(t, outside); got != "do not touch\n" {
		t.Errorf("the link's target now holds %q, want it untouched", got)
	}
	if got := readFile(t, path+ReasonSuffix); got != "a symbolic link is not a message\n" {
		t.Errorf("reason file = %q, want the reason and a newline", got)
	}
	if diff := cmp.Diff(map[string][]string{Rejected: {name, name + ReasonSuffix}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox after Reject mismatch (-want +got):\n%s", diff)
	}
}

func TestRejectFIFO(t *testing.T) {
	d, s := newDir(t)
	if err := syscall.Mkfifo(d.Path(Outbox, "pipe.md"), 0o644); err != nil {
		t.Skipf("Mkfifo: %v", err)
	}
	// Reject must not open the pipe: opening it would block with no writer.
	mtime := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	path, err := d.Reject("pipe.md", mtime, "not a regular file", FileID{}, s)
	if err != nil {
		t.Fatalf("Reject(pipe.md) = %v", err)
	}
	info, err := os.Lstat(path)
	if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("rejected file: %v, %v, want the named pipe", info, err)
	}
	if got := readFile(t, path+ReasonSuffix); got != "not a regular file\n" {
		t.Errorf("reason file = %q, want %q", got, "not a regular file\n")
	}
	if got := names(t, d, Outbox); len(got) != 0 {
		t.Errorf("outbox after Reject = %q, want empty", got)
	}
}

func TestRejectSameNameTwice(t *testing.T) {
	d, s := newDir(t)
	mtime := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	var paths []string
	for i, content := range []string{"first\n", "second\n"} {
		writeTestFile(t, d.Path(Outbox, "note.md"), content)
		path, err := d.Reject("note.md", mtime, []string{"reason one", "reason two"}[i], FileID{}, s)
		if err != nil {
			t.Fatalf("Reject(note.md) #%d = %v", i+1, err)
		}
		paths = append(paths, path)
	}
	if paths[0] == paths[1] {
		t.Fatalf("two Rejects of note.md both returned %q, want two files", paths[0])
	}
	for i, want := range []string{"first\n", "second\n"} {
		if got := readFile(t, paths[i]); got != want {
			t.Errorf("rejected file #%d = %q, want %q", i+1, got, want)
		}
		if got, want := readFile(t, paths[i]+ReasonSuffix), []string{"reason one\n", "reason two\n"}[i]; got != want {
			t.Errorf("reason #%d = %q, want %q", i+1, got, want)
		}
	}
	list, err := d.List(Rejected)
	if err != nil || len(list) != 2 {
		t.Fatalf("List(rejected) = %v, %v, want two entries", list, err)
	}
}

func TestMarkSent(t *testing.T) {
	d, s := newDir(t)
	writeTestFile(t, d.Path(Outbox, "hello.md"), "---\nto: carol\n---\nhi\n")
	if d.IsSent(id1) {
		t.Errorf("IsSent(%s) before MarkSent = true, want false", id1)
	}
	if err := d.MarkSent("hello.md", id1, FileID{}, s); err != nil {
		t.Fatalf("MarkSent() = %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync() = %v", err)
	}
	if diff := cmp.Diff(map[string][]string{Sent: {id1 + ".md"}}, tree(t, d)); diff != "" {
		t.Errorf("mailbox after MarkSent mismatch (-want +got):\n%s", diff)
	}
	if got := readFile(t, d.Path(Sent, id1+".md")); got != "---\nto: carol\n---\nhi\n" {
		t.Errorf("sent file = %q, want the outbox file as written", got)
	}
	if !d.IsSent(id1) {
		t.Errorf("IsSent(%s) after MarkSent = false, want true", id1)
	}
	if err := d.MarkSent("hello.md", id2, FileID{}, s); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MarkSent() of a file no longer in the outbox = %v, want an error matching fs.ErrNotExist", err)
	}
}

func TestCleanTmp(t *testing.T) {
	d, s := newDir(t)
	for _, n := range []string{id1 + ".md.delivery", id2 + ".md.delivery", id3 + ".md", "note.reason", "draft.md"} {
		writeTestFile(t, d.Path(Tmp, n), "x")
	}
	if err := os.Mkdir(d.Path(Tmp, "dir.delivery"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.CleanTmp(); err != nil {
		t.Fatalf("CleanTmp() = %v", err)
	}
	want := []string{id3 + ".md", "dir.delivery", "draft.md", "note.reason"}
	if diff := cmp.Diff(want, names(t, d, Tmp)); diff != "" {
		t.Errorf("tmp/ after CleanTmp mismatch (-want +got):\n%s", diff)
	}
	// A stale staged delivery does not stop the next delivery of that id.
	writeTestFile(t, d.Path(Tmp, id1+".md.delivery"), "stale")
	if ok, err := d.Deliver(id1, []byte("fresh"), s); err != nil || !ok {
		t.Fatalf("Deliver over a stale staged copy = %v, %v, want true, nil", ok, err)
	}
	if got := readFile(t, d.Path(Inbox, id1+".md")); got != "fresh" {
		t.Errorf("inbox copy = %q, want %q", got, "fresh")
	}
	// A tmp/ removed (git clean -fdX, a mailbox removed while a runner
	// starts) holds nothing to clean: no error.
	if err := os.RemoveAll(d.Path(Tmp, "")); err != nil {
		t.Fatal(err)
	}
	if err := d.CleanTmp(); err != nil {
		t.Errorf("CleanTmp() of a removed tmp/ = %v, want nil", err)
	}
}

func TestListAndCount(t *testing.T) {
	d, s := newDir(t)
	for _, id := range []string{id2, id1} {
		if ok, err := d.Deliver(id, []byte("msg"), s); err != nil || !ok {
			t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
		}
		if err := d.Claim(id); err != nil {
			t.Fatal(err)
		}
		if err := d.GiveUp(id, "gave up on "+id+"\nsecond line"); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, d.Path(Dead, "notes.txt"), "not a message")
	list, err := d.List(Dead)
	if err != nil {
		t.Fatalf("List(dead) = %v", err)
	}
	type entry struct{ Name, Path, ID, Reason string }
	var got []entry
	for _, e := range list {
		got = append(got, entry{e.Name, e.Path, e.ID, e.Reason})
		if e.Modified.IsZero() {
			t.Errorf("List(dead): %s has no modification time", e.Name)
		}
	}
	want := []entry{
		{id1 + ".md", d.Path(Dead, id1+".md"), id1, "gave up on " + id1},
		{id2 + ".md", d.Path(Dead, id2+".md"), id2, "gave up on " + id2},
		{"notes.txt", d.Path(Dead, "notes.txt"), "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List(dead) mismatch (-want +got):\n%s", diff)
	}
	if list[2].Size != int64(len("not a message")) {
		t.Errorf("List(dead): notes.txt size = %d, want %d", list[2].Size, len("not a message"))
	}

	n, err := d.Count(Dead)
	if err != nil || n != 3 {
		t.Errorf("Count(dead) = %d, %v, want 3, nil", n, err)
	}
	writeTestFile(t, d.Path(Inbox, ".hidden"), "x")
	if n, err := d.Count(Inbox); err != nil || n != 0 {
		t.Errorf("Count(inbox) with only a dot file = %d, %v, want 0, nil", n, err)
	}
	if _, err := d.List("nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List(nowhere) = %v, want an error matching fs.ErrNotExist", err)
	}
}

// TestNamesAndIDs: Names lists every entry of a state; IDs only the
// messages, in the order they were sent, whatever order they came in.
func TestNamesAndIDs(t *testing.T) {
	d, s := newDir(t)
	for _, id := range []string{id3, id1, id2} {
		if ok, err := d.Deliver(id, []byte("msg"), s); err != nil || !ok {
			t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
		}
	}
	for _, n := range []string{"draft.md", ".hidden", id1 + ".md.reason", id2 + ".md~", "20261121-101500.000009Z-Bob-000009.md"} {
		writeTestFile(t, d.Path(Inbox, n), "x")
	}
	if err := os.Mkdir(d.Path(Inbox, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := d.Names(Inbox)
	if err != nil {
		t.Fatalf("Names(inbox) = %v", err)
	}
	want := []string{".hidden", id1 + ".md", id1 + ".md.reason", id2 + ".md", id2 + ".md~", id3 + ".md", "20261121-101500.000009Z-Bob-000009.md", "draft.md", "sub"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Names(inbox) mismatch (-want +got):\n%s", diff)
	}
	ids, err := d.IDs(Inbox)
	if err != nil {
		t.Fatalf("IDs(inbox) = %v", err)
	}
	if diff := cmp.Diff([]string{id1, id2, id3}, ids); diff != "" {
		t.Errorf("IDs(inbox) mismatch (-want +got):\n%s", diff)
	}
	if ids, err := d.IDs(Done); err != nil || len(ids) != 0 {
		t.Errorf("IDs(done) = %q, %v, want none", ids, err)
	}
	if _, err := d.IDs("nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("IDs(nowhere) = %v, want an error matching fs.ErrNotExist", err)
	}
}

func TestIsScratch(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{id1 + ".md", false},
		{"hello.md", false},
		{"notes.txt", false},
		{"4913a", false},
		{".hello.md.swp", true},
		{"hello.md.swp", true},
		{"hello.md~", true},
		{"#hello.md#", true},
		{".#hello.md", true},
		{"4913", true},
		{"5036", true},
		{"1", false},
		{"20261121", false},
		{"04913", false},
		{"hello.md.tmp", true},
		{"", true},
	}
	for _, tt := range tests {
		if got := IsScratch(tt.name); got != tt.want {
			t.Errorf("IsScratch(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestIsEditorScratch checks the editors' names apart from the dot files a
// campaign keeps in git (.gitkeep, .gitignore).
func TestIsEditorScratch(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"overview.md", false},
		{".gitkeep", false},
		{".gitignore", false},
		{".env", false},
		{"draft.tmp", false},
		{".story-state.md.swp", true},
		{".story-state.md.swn", true},
		{"overview.md~", true},
		{"#tor-ashgrove.md#", true},
		{"#", false}, // one # is no "#autosave#" (nor in the .gitignore)
		{".#tor-ashgrove.md", true},
		{"4913", true},
	}
	for _, tt := range tests {
		if got := IsEditorScratch(tt.name); got != tt.want {
			t.Errorf("IsEditorScratch(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDeliverIgnoresPlantedLink checks that a symbolic link planted where
// a delivery is staged never makes the router write through it.
func TestDeliverIgnoresPlantedLink(t *testing.T) {
	d, s := newDir(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, d.Path(Tmp, FileName(id1)+deliverySuffix)); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.Deliver(id1, []byte("message\n"), s); err != nil || !ok {
		t.Fatalf("Deliver = %v, %v; want delivered", ok, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	info, err := os.Lstat(d.Path(Inbox, FileName(id1)))
	if err != nil || !info.Mode().IsRegular() {
		t.Errorf("inbox copy is %v, %v; want a regular file", info, err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.md", "---\nto: bob\n---\nhi\n")
	if b, err := ReadFile(good, 100); err != nil || string(b) != "---\nto: bob\n---\nhi\n" {
		t.Errorf("ReadFile(good) = %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(good, 10); !errors.As(err, &tl) || tl.Size != 19 || tl.Max != 10 {
		t.Errorf("ReadFile over the limit = %v, want a TooLargeError for 19 bytes", err)
	}
	if b, err := ReadFile(write("empty.md", ""), 10); err != nil || len(b) != 0 {
		t.Errorf("ReadFile(empty) = %q, %v", b, err)
	}
	// A pipe is refused without blocking, even when it stands where a
	// regular file was a moment ago (opened, not lstat'ed, here).
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(pipe, 100); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("ReadFile(fifo) = %v, want a NotRegularError for a pipe", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(link, 100); !errors.As(err, &nr) || nr.Mode&fs.ModeSymlink == 0 {
		t.Errorf("ReadFile(symlink) = %v, want a NotRegularError for a link", err)
	}
	if _, err := ReadFile(dir, 100); !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Errorf("ReadFile(dir) = %v, want a NotRegularError for a directory", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestReasonFileNotFollowed(t *testing.T) {
	d, _ := newDir(t)
	if err := os.WriteFile(d.Path(Dead, FileName(id1)), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(d.Path(Dead, FileName(id1)+ReasonSuffix), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := d.List(Dead)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	if !strings.HasPrefix(entries[0].Reason, "(unreadable reason file") {
		t.Errorf("Reason = %q, want it marked unreadable", entries[0].Reason)
	}
}

func TestNewest(t *testing.T) {
	d := Dir(t.TempDir())
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, i := range rand.Perm(40) {
		name := fmt.Sprintf("%03d.md", i)
		if err := os.WriteFile(d.Path(Rejected, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := os.WriteFile(d.Path(Rejected, name+ReasonSuffix), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 40 {
		all = append(all, fmt.Sprintf("%03d.md", i))
	}
	// A reason file with nothing beside it is no message either: left
	// behind by a file moved back by hand.
	if err := os.WriteFile(d.Path(Rejected, "zz.md"+ReasonSuffix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 5, 40, 41, 100} {
		got, total, err := d.Newest(Rejected, n)
		if err != nil {
			t.Fatal(err)
		}
		want := all
		if n > 0 && n < len(all) {
			want = all[len(all)-n:]
		}
		if total != len(all) || !slices.Equal(got, want) {
			t.Errorf("Newest(%d) = %v, %d; want %v, %d", n, got, total, want, len(all))
		}
	}
}

// TestCount: messages are counted; reason files, scratch files, and the
// directory's own entries are not.
func TestCount(t *testing.T) {
	d := Dir(t.TempDir())
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	names := []string{id1 + ".md", id1 + ".md.reason", "hello.md", "notes.txt", "x.reason", ".hidden.md", "#auto#", "draft.md~", "a.swp", "4913", "y.tmp", "#x.md"}
	for i := range 3000 { // more than one getdents buffer
		names = append(names, fmt.Sprintf("%s-%04d.md", id2, i))
	}
	for _, n := range names {
		if err := os.WriteFile(d.Path(Inbox, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Count(Inbox)
	if want := 4 + 3000; err != nil || got != want { // id1.md, hello.md, notes.txt, #x.md
		t.Errorf("Count = %d, %v; want %d", got, err, want)
	}
	if _, err := d.Count("nosuch"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Count of a missing directory: %v, want fs.ErrNotExist", err)
	}
}

func TestLeftovers(t *testing.T) {
	d, _ := newDir(t)
	now := time.Now()
	old := now.Add(-StaleAfter - time.Minute)
	for _, f := range []struct {
		name string
		at   time.Time
	}{
		{id1 + ".md.send", old},       // a killed parley send
		{id2 + ".md", old},            // a killed send of an earlier parley, or a Maildir writer
		{"x.md.reason", old},          // a reason staged for rejected/
		{id3 + ".md.send", now},       // a send under way
		{"draft-" + id3 + ".md", old}, // a person's draft
		{"notes.md", old},
	} {
		writeTestFile(t, d.Path(Tmp, f.name), "staged")
		if err := os.Chtimes(d.Path(Tmp, f.name), f.at, f.at); err != nil {
			t.Fatal(err)
		}
	}
	left, err := d.Leftovers(now)
	if err != nil {
		t.Fatalf("Leftovers() = %v", err)
	}
	var got []string
	for _, e := range left {
		got = append(got, e.Name)
	}
	want := []string{id1 + ".md.send", id2 + ".md", "x.md.reason"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Leftovers() mismatch (-want +got):\n%s", diff)
	}
	removed, err := d.RemoveLeftovers(now)
	if err != nil || len(removed) != 3 {
		t.Fatalf("RemoveLeftovers() = %d files, %v, want 3, nil", len(removed), err)
	}
	want = []string{id3 + ".md.send", "draft-" + id3 + ".md", "notes.md"}
	if diff := cmp.Diff(want, names(t, d, Tmp)); diff != "" {
		t.Errorf("tmp/ after RemoveLeftovers mismatch (-want +got):\n%s", diff)
	}
}

// TestClaimHandled: a copy of a message in done/ or dead/ found in inbox/
// is never claimed: it is filed where the message is.
func TestClaimHandled(t *testing.T) {
	for _, state := range []string{Done, Dead} {
		t.Run(state, func(t *testing.T) {
			d, _ := newDir(t)
			writeTestFile(t, d.Path(state, FileName(id1)), "handled")
			writeTestFile(t, d.Path(Inbox, FileName(id1)), "handled")
			err := d.Claim(id1)
			var h *HandledError
			if !errors.As(err, &h) || h.State != state || !errors.Is(err, ErrHandled) {
				t.Fatalf("Claim() of a message in %s/ = %v, want a *HandledError in %s", state, err, state)
			}
			if got := names(t, d, Inbox); len(got) != 0 {
				t.Errorf("inbox/ after Claim = %v, want it empty", got)
			}
			if got := names(t, d, Cur); len(got) != 0 {
				t.Errorf("cur/ after Claim = %v, want it empty", got)
			}
			if got := names(t, d, state); len(got) != 1 {
				t.Errorf("%s/ after Claim = %v, want the message once", state, got)
			}
		})
	}
}

// TestClaimUntilSync checks a handler's claim: not flushed where the
// Syncer syncs the whole filesystem (the stage's commit does it, before
// any answer is sent), flushed at once where it syncs file by file; and
// that a message a crash left in inbox/ and done/ both is found handled.
func TestClaimUntilSync(t *testing.T) {
	d, s := newDir(t)
	var synced []string
	dirSynced = func(dir string) { synced = append(synced, filepath.Base(dir)) }
	t.Cleanup(func() { dirSynced = nil })
	for _, id := range []string{id1, id2} {
		if ok, err := d.Deliver(id, []byte("msg "+id), s); err != nil || !ok {
			t.Fatalf("Deliver(%s) = %v, %v", id, ok, err)
		}
	}
	if !s.perFile {
		synced = nil
		if err := d.ClaimUntilSync(id1, s); err != nil {
			t.Fatal(err)
		}
		if len(synced) != 0 {
			t.Errorf("ClaimUntilSync with syncfs flushed %v, want nothing until the commit", synced)
		}
		if diff := cmp.Diff(map[string][]string{Inbox: {id2 + ".md"}, Cur: {id1 + ".md"}}, tree(t, d)); diff != "" {
			t.Fatalf("mailbox after the claim (-want +got):\n%s", diff)
		}
		var log syncLog
		log.watch(t, d, s)
		st := d.Stage(id1, s)
		if err := st.Open(); err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := log.take(); len(got) == 0 {
			t.Errorf("the stage's commit synced nothing: the claim before it is not durable")
		}
		if _, err := st.Publish(); err != nil {
			t.Fatal(err)
		}
	}
	perFile := &Syncer{root: s.root, perFile: true, dirs: make(map[string]struct{}), files: make(map[*os.File]struct{})}
	synced = nil
	if err := d.ClaimUntilSync(id2, perFile); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{Cur, Inbox}, synced); diff != "" {
		t.Errorf("ClaimUntilSync without syncfs flushed (-want +got):\n%s", diff)
	}
	// What a crash can leave on a filesystem without a journal, when the
	// claim's move out of inbox/ was never flushed: the message in both.
	if err := d.Finish(id2); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, d.Path(Inbox, FileName(id2)), "msg "+id2)
	var h *HandledError
	if err := d.ClaimUntilSync(id2, s); !errors.As(err, &h) || h.State != Done {
		t.Errorf("ClaimUntilSync of a message in inbox/ and done/ = %v, want it found handled in done/", err)
	}
}

// TestFinishFlushesDone: Finish makes the move durable by flushing done/
// alone; the copy a crash can leave in cur/ as well is found handled, not
// claimed again.
func TestFinishFlushesDone(t *testing.T) {
	d, s := newDir(t)
	var synced []string
	dirSynced = func(dir string) { synced = append(synced, filepath.Base(dir)) }
	t.Cleanup(func() { dirSynced = nil })
	if ok, err := d.Deliver(id1, []byte("msg "+id1), s); err != nil || !ok {
		t.Fatalf("Deliver = %v, %v", ok, err)
	}
	if err := d.Claim(id1); err != nil {
		t.Fatal(err)
	}
	synced = nil
	if err := d.Finish(id1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{Done}, synced); diff != "" {
		t.Errorf("Finish flushed (-want +got):\n%s", diff)
	}
	// The old name kept by a crash.
	writeTestFile(t, d.Path(Cur, FileName(id1)), "msg "+id1)
	var h *HandledError
	if err := d.FileHandled(id1, Cur); !errors.As(err, &h) || h.State != Done {
		t.Errorf("FileHandled of a message in cur/ and done/ = %v, want it found handled in done/", err)
	}
	if _, err := os.Lstat(d.Path(Cur, FileName(id1))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy in cur/ is still there: %v", err)
	}
}

// TestReasonOf checks which names are the reason of a file beside them.
func TestReasonOf(t *testing.T) {
	dir := map[string]bool{"m.md": true, "m.md.reason": true, "x.reason": true}
	there := func(n string) bool { return dir[n] }
	for _, tt := range []struct {
		name, base string
		ok         bool
	}{
		{"m.md.reason", "m.md", true},
		{"m.md", "", false},
		{"x.reason", "", false},       // no file "x" beside it
		{"gone.md.reason", "", false}, // its file has left
		{".reason", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if base, ok := ReasonOf(tt.name, there); base != tt.base || ok != tt.ok {
				t.Errorf("ReasonOf(%q) = %q, %v, want %q, %v", tt.name, base, ok, tt.base, tt.ok)
			}
		})
	}
}

// TestStrayReason checks that a reason the router wrote beside a file it
// refused in the outbox is told once the file is gone, and that no file
// a person named *.reason is taken for one.
func TestStrayReason(t *testing.T) {
	d, _ := newDir(t)
	parleys := func(base string) string {
		return base + ": a hard link (2 names for one file), refused and left where it is\n\nagent:    alice\nfile:     mailboxes/alice/outbox/" + base + "\n"
	}
	for _, tt := range []struct {
		what, name, text, beside, base string
		ok                             bool
	}{
		{"stray", "m.md.reason", parleys("m.md"), "", "m.md", true},
		{"its file there", "m.md.reason", parleys("m.md"), "m.md", "", false}, // ReasonOf's
		{"another file's", "m.md.reason", parleys("other.md"), "", "", false},
		{"a person's notes", "m.md.reason", "m.md: my notes, not a message yet\n", "", "", false},
		{"a message", "m.md.reason", "---\nto: bob\n---\nm.md: hi\nfile: outbox/m.md\n", "", "", false},
		{"no .reason", "note.md", parleys("note"), "", "", false},
		{"no base", ".reason", ": x\nfile: outbox/\n", "", "", false},
	} {
		t.Run(tt.what, func(t *testing.T) {
			dir := d.Path(Outbox, "")
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			if err := os.WriteFile(d.Path(Outbox, tt.name), []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.beside != "" {
				if err := os.WriteFile(d.Path(Outbox, tt.beside), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if base, ok := d.StrayReason(tt.name); base != tt.base || ok != tt.ok {
				t.Errorf("StrayReason(%q) of %q = %q, %v, want %q, %v", tt.name, tt.text, base, ok, tt.base, tt.ok)
			}
		})
	}
}

// TestGivenUpAt: the time a message was given up is the same each time it
// is asked (a notice's id is drawn from it), none for a message with no
// reason in dead/, and a new one once it is given up again after Revive.
func TestGivenUpAt(t *testing.T) {
	d, s := newDir(t)
	if _, ok := d.GivenUpAt(id1); ok {
		t.Errorf("GivenUpAt(%s) of a message never given up: ok", id1)
	}
	if ok, err := d.Deliver(id1, []byte("msg"), s); err != nil || !ok {
		t.Fatalf("Deliver(%s) = %v, %v", id1, ok, err)
	}
	giveUp := func() time.Time {
		t.Helper()
		if err := d.Claim(id1); err != nil {
			t.Fatal(err)
		}
		if err := d.GiveUp(id1, "why"); err != nil {
			t.Fatal(err)
		}
		at, ok := d.GivenUpAt(id1)
		if !ok || at.IsZero() {
			t.Fatalf("GivenUpAt(%s) = %v, %v; want the time of the give-up", id1, at, ok)
		}
		if again, _ := d.GivenUpAt(id1); !again.Equal(at) {
			t.Errorf("GivenUpAt(%s) = %v, then %v; want the same", id1, at, again)
		}
		// Written into the reason: the file's time (a checkout, a copy)
		// does not change it.
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(d.Path(Dead, FileName(id1)+ReasonSuffix), later, later); err != nil {
			t.Fatal(err)
		}
		if again, _ := d.GivenUpAt(id1); !again.Equal(at) {
			t.Errorf("GivenUpAt(%s) after the reason's file time changed = %v, want %v", id1, again, at)
		}
		return at
	}
	first := giveUp()
	if err := d.Revive(id1); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.GivenUpAt(id1); ok {
		t.Errorf("GivenUpAt(%s) of a message revived: ok", id1)
	}
	if second := giveUp(); second.Equal(first) {
		t.Errorf("GivenUpAt(%s) after a second give-up = %v, the time of the first", id1, second)
	}
}

// TestDropOrphanReasons: the reason of a rejected file moved out of
// rejected/ by hand goes; a reason whose file is there, a rejected file
// named *.reason (with its own reason), a message named *.reason and a
// name no refusal gave stay.
func TestDropOrphanReasons(t *testing.T) {
	d, _ := newDir(t)
	const stamp = "20261121-101500.000000Z-"
	files := map[string]string{
		stamp + "kept.md":                 "---\nto: zed\n---\nHi.\n",
		stamp + "kept.md" + ReasonSuffix:  "kept.md:2: to: unknown agent\n",
		stamp + "moved.md" + ReasonSuffix: "moved.md:2: to: unknown agent\n", // its file moved back
		stamp + "x.reason":                "not a message\n",                 // a rejected file named x.reason
		stamp + "x.reason" + ReasonSuffix: "x.reason:1: no header\n",
		stamp + "msg.md" + ReasonSuffix:   "---\nto: bob\n---\nA message.\n",
		"notes.md" + ReasonSuffix:         "mine\n",
	}
	for n, text := range files {
		writeTestFile(t, d.Path(Rejected, n), text)
	}
	removed, err := d.DropOrphanReasons()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{stamp + "moved.md" + ReasonSuffix}; !slices.Equal(removed, want) {
		t.Errorf("DropOrphanReasons() = %v, want %v", removed, want)
	}
	for n := range files {
		_, err := os.Lstat(d.Path(Rejected, n))
		if gone := errors.Is(err, fs.ErrNotExist); gone != slices.Contains(removed, n) {
			t.Errorf("%s: removed %v, want %v", n, gone, !gone)
		}
	}
}

// TestSentAs: a file without an id is found in sent/ as it was sent
// there: as it is (today's router), or with its id stamped into it (the
// router before), so that parley retry puts back a file refused as
// routed already under a name no message came from, whichever router
// sent the first.
func TestSentAs(t *testing.T) {
	d, _ := newDir(t)
	data := []byte("---\nto: b\n---\nI attack the goblin.\n")
	id := "20261129-100000.000000Z-a-" + ContentSuffix("reply.md", data)
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		sent []byte
	}{
		{"as it is", data},
		{"stamped", func() []byte { s := m.Clone(); StampWith(s, id); return s.Bytes() }()},
	} {
		if err := os.WriteFile(d.Path(Sent, FileName(id)), tt.sent, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := d.SentAs("reply.md", data); got != id {
			t.Errorf("%s: SentAs = %q, want %q", tt.name, got, id)
		}
		if got := d.SentAs("other.md", data); got != "" {
			t.Errorf("%s: SentAs of another name = %q, want none", tt.name, got)
		}
	}
}
