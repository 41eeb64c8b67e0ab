package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestHandledIsHandled: a message put back into an inbox (git stash pop,
// git checkout) that the agent handled already is not run again; its copy
// is filed where the message is (issue 11, item 7).
func TestHandledIsHandled(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "count.sh", "cat >/dev/null\necho run >> runs.txt\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - name: bot\n    driver: command\n    run: [./count.sh]\n")
	id := send(t, ws, "boss", "bot", "once")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	box := ws.Mailbox("bot")
	for _, tt := range []struct{ into, state string }{
		{mailbox.Inbox, mailbox.Done}, {mailbox.Inbox, mailbox.Dead}, {mailbox.Cur, mailbox.Dead}, {mailbox.Cur, mailbox.Done},
	} {
		// The message is in tt.state; a copy is restored into tt.into.
		if _, err := os.Lstat(box.Path(tt.state, mailbox.FileName(id))); err != nil {
			other := map[string]string{mailbox.Done: mailbox.Dead, mailbox.Dead: mailbox.Done}[tt.state]
			if err := os.Rename(box.Path(other, mailbox.FileName(id)), box.Path(tt.state, mailbox.FileName(id))); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(box.Path(tt.state, mailbox.FileName(id)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(box.Path(tt.into, mailbox.FileName(id)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runIdle(t, ws, Options{}); err != nil {
			t.Fatal(err)
		}
		runs, _ := os.ReadFile(ws.Root + "/runs.txt")
		if n := strings.Count(string(runs), "run\n"); n != 1 {
			t.Errorf("a message restored into %s/, in %s/ already: the program ran %d times, want 1", tt.into, tt.state, n)
		}
		for _, st := range []string{mailbox.Inbox, mailbox.Cur} {
			if got := names(t, ws, "bot", st); len(got) != 0 {
				t.Errorf("bot's %s/ = %v, want it empty: the restored copy filed", st, got)
			}
		}
		if got := names(t, ws, "bot", tt.state); len(got) != 1 {
			t.Errorf("bot's %s/ = %v, want the one message", tt.state, got)
		}
	}
}

// TestRoutedOnce: a file without an id that was routed, put back into
// the outbox as it was (git checkout), is not delivered a second time
// under a new id (issue 11, item 7); nor is it dropped without a word: a
// person who wrote the same words under the same name on another turn
// finds it in rejected/, with the reason and how to send it again.
func TestRoutedOnce(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	const hello = "---\nto: bob\n---\nHello.\n"
	drop(t, ws, "boss", "hello.md", hello)
	if s := routeAll(t, ws); s.Routed != 1 {
		t.Fatalf("first run routed %d, want 1", s.Routed)
	}
	first := names(t, ws, "boss", mailbox.Sent)
	drop(t, ws, "boss", "hello.md", hello) // restored, or written again
	drop(t, ws, "boss", "other.md", "---\nto: bob\n---\nSomething else.\n")
	s := routeAll(t, ws)
	if s.Deliveries != 1 || s.Rejected != 1 {
		t.Errorf("second run: %d deliveries, %d rejected; want 1 (other.md) and 1 (hello.md)", s.Deliveries, s.Rejected)
	}
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 2 {
		t.Errorf("bob's inbox/ = %v, want 2 messages: hello.md once, other.md", got)
	}
	if got := names(t, ws, "boss", mailbox.Sent); len(got) != 2 {
		t.Errorf("boss's sent/ = %v, want 2 files", got)
	}
	if got := names(t, ws, "boss", mailbox.Outbox); len(got) != 0 {
		t.Errorf("boss's outbox/ = %v, want it empty", got)
	}
	rejected := names(t, ws, "boss", mailbox.Rejected)
	if len(rejected) != 1 || !strings.HasSuffix(rejected[0], "-hello.md") {
		t.Fatalf("boss's rejected/ = %v, want hello.md kept with its reason", rejected)
	}
	data, err := os.ReadFile(ws.Mailbox("boss").Path(mailbox.Rejected, rejected[0]))
	if err != nil || string(data) != hello {
		t.Errorf("the file kept in rejected/ = %q (%v), want it as written", data, err)
	}
	reason, _ := ws.Mailbox("boss").Reason(mailbox.Rejected, rejected[0])
	if !strings.Contains(reason, "routed already") || !strings.Contains(reason, strings.TrimSuffix(first[0], ".md")) || !strings.Contains(reason, "parley retry") {
		t.Errorf("the reason = %q, want it to name the message sent before and parley retry", reason)
	}
	// The same content under another name is another message.
	drop(t, ws, "boss", "hello-again.md", hello)
	if s := routeAll(t, ws); s.Deliveries != 1 {
		t.Errorf("same content, another name: %d deliveries, want 1", s.Deliveries)
	}
}

// TestOrderAfterCrash: a runner killed after writing ids into hand-written
// files, before moving them to sent/, leaves them in the outbox with their
// ids; the next runner gives the files after them, written in the same
// clock tick, ids that sort after theirs (issue 11, item 6).
func TestOrderAfterCrash(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	box := ws.Mailbox("boss")
	// What the killed runner stamped: seq 1 at the file's time, seq 2 a
	// microsecond after.
	for i, id := range []string{mailbox.IDAt("boss", at), mailbox.IDAt("boss", at.Add(time.Microsecond))} {
		writeAt(t, box.Path(mailbox.Outbox, fmt.Sprintf("seq-%d.md", i+1)), fmt.Sprintf("---\nid: %s\nto: bob\n---\nseq %d\n", id, i+1), at)
	}
	writeAt(t, box.Path(mailbox.Outbox, "seq-3.md"), "---\nto: bob\n---\nseq 3\n", at)
	routeAll(t, ws)
	want := []string{"seq 1", "seq 2", "seq 3"}
	if d := cmp.Diff(want, bodies(t, ws, "bob", mailbox.Inbox)); d != "" {
		t.Errorf("bob's inbox, in id order (-want +got):\n%s", d)
	}
}

// TestDeliveredOnceInJournal: a message whose move to sent/ cannot be
// made is never journaled as delivered once per attempt (issue 11, item
// 16). sent/ made a file is now found before anything is delivered: the
// mailbox cannot be used, nothing of it is routed, and a run until idle
// fails naming it rather than ending as if all was routed.
func TestDeliveredOnceInJournal(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	id := send(t, ws, "boss", "bob", "hello")
	sent := ws.Mailbox("boss").Path(mailbox.Sent, "")
	if err := os.Remove(sent); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Clean(sent), nil, 0o644); err != nil { // sent/ unusable
		t.Fatal(err)
	}
	_, err := runIdle(t, ws, Options{NoDrivers: true})
	if err == nil || !strings.Contains(err.Error(), "1 mailbox cannot be used") || !strings.Contains(err.Error(), "boss: ") {
		t.Errorf("run = %v, want it to fail naming boss's mailbox", err)
	}
	data, _ := os.ReadFile(ws.JournalPath())
	if n := strings.Count(string(data), `"id":"`+id+`","from":"boss","to"`); n > 1 {
		t.Errorf("journal has %d delivered lines for %s, want at most 1:\n%s", n, id, data)
	}
	if got := names(t, ws, "boss", mailbox.Outbox); len(got) != 1 {
		t.Errorf("boss's outbox = %v, want the message kept", got)
	}
}

// TestFutureModTime: a file dated in the future is given an id of now,
// and does not pin its sender's later ids in the future (issue 11, item
// 16).
func TestFutureModTime(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	future := time.Now().AddDate(1, 0, 0)
	writeAt(t, ws.Mailbox("boss").Path(mailbox.Outbox, "later.md"), "---\nto: bob\n---\nfrom the future\n", future)
	routeAll(t, ws)
	drop(t, ws, "boss", "next.md", "---\nto: bob\n---\nnext\n")
	routeAll(t, ws)
	horizon := time.Now().Add(time.Minute)
	for _, n := range names(t, ws, "bob", mailbox.Inbox) {
		id, _ := mailbox.IDFromName(n)
		if at, _, _ := mailbox.ParseID(id); at.After(horizon) {
			t.Errorf("id %s is in the future", id)
		}
	}
	if d := cmp.Diff([]string{"from the future", "next"}, bodies(t, ws, "bob", mailbox.Inbox)); d != "" {
		t.Errorf("bob's inbox (-want +got):\n%s", d)
	}
}

// TestCreatedEmpty: a message whose created: is left empty is delivered
// with the time it was sent (issue 11, item 16).
func TestCreatedEmpty(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	drop(t, ws, "boss", "hello.md", "---\nto: bob\ncreated:\n---\nHi.\n")
	routeAll(t, ws)
	got := names(t, ws, "bob", mailbox.Inbox)
	if len(got) != 1 {
		t.Fatalf("bob's inbox/ = %v, want the message", got)
	}
	m := readMessage(t, ws.Mailbox("bob").Path(mailbox.Inbox, got[0]))
	id, _ := mailbox.IDFromName(got[0])
	sent, _, _ := mailbox.ParseID(id)
	if c, _ := m.Header().Get("created"); c != sent.Format(mailbox.TimeFormat) {
		t.Errorf("created: %q, want the time in its id, %s", c, sent.Format(mailbox.TimeFormat))
	}
}

// TestSameContentOtherName: two files of the same content under names
// whose digits collide are two messages: only a file of the same name
// and content is taken for one routed already.
func TestSameContentOtherName(t *testing.T) {
	const content = "---\nto: bob\n---\nok\n"
	seen := map[string]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		name := fmt.Sprintf("ok-%d.md", i)
		suffix := mailbox.ContentSuffix(name, []byte(content))
		if other, ok := seen[suffix]; ok {
			a, b = other, name
		}
		seen[suffix] = name
	}
	ws := newWorkspace(t, "boss", "bob")
	drop(t, ws, "boss", a, content)
	routeAll(t, ws)
	drop(t, ws, "boss", b, content)
	routeAll(t, ws)
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 2 {
		t.Errorf("bob's inbox/ = %v, want 2 messages: %s and %s", got, a, b)
	}
}

// TestRoutedAlreadyReadsJournalOnce: files of one content under names
// whose digits collide with a message in sent/ are each looked up in the
// journal, to tell them from one put back; a flood of them read the
// whole journal for each (5% of the router's time in a 60,000-file
// flood, growing with the journal). The runner reads each journal line
// once, and still routes each file as its own message.
func TestRoutedAlreadyReadsJournalOnce(t *testing.T) {
	const content = "---\nto: bob\n---\nok\n"
	const pairs = 3
	var firsts, seconds []string
	seen := map[string]string{}
	for i := 0; len(firsts) < pairs; i++ {
		name := fmt.Sprintf("ok-%d.md", i)
		suffix := mailbox.ContentSuffix(name, []byte(content))
		if other, ok := seen[suffix]; ok && other != "" {
			firsts, seconds = append(firsts, other), append(seconds, name)
			seen[suffix] = "" // one pair a suffix
			continue
		}
		if _, ok := seen[suffix]; !ok {
			seen[suffix] = name
		}
	}
	ws := newWorkspace(t, "boss", "bob")
	for i := range 20 { // a journal with more in it than the files asked about
		drop(t, ws, "boss", fmt.Sprintf("filler-%d.md", i), fmt.Sprintf("---\nto: bob\n---\nfiller %d\n", i))
	}
	for _, n := range firsts {
		drop(t, ws, "boss", n, content)
	}
	clock := time.Now().Add(time.Hour)
	r := clockRunner(t, ws, &clock)
	look(t, r)
	for _, n := range seconds { // one a batch: the journal grows between them
		drop(t, ws, "boss", n, content)
		clock = clock.Add(time.Second)
		look(t, r)
	}
	if got, want := len(names(t, ws, "bob", mailbox.Inbox)), 20+2*pairs; got != want {
		t.Errorf("bob's inbox/ holds %d messages, want %d: each file is its own message", got, want)
	}
	// Put back (git checkout), the last, journaled after the runner began
	// to keep its index, is not delivered twice.
	drop(t, ws, "boss", seconds[pairs-1], content)
	clock = clock.Add(time.Second)
	look(t, r)
	if got, want := len(names(t, ws, "bob", mailbox.Inbox)), 20+2*pairs; got != want {
		t.Errorf("bob's inbox/ holds %d messages once %s was put back, want %d: it was routed already", got, seconds[pairs-1], want)
	}
	lines := 0
	if err := workspace.ReadJournal(ws.JournalPath(), func(workspace.Entry) error { lines++; return nil }); err != nil {
		t.Fatal(err)
	}
	if r.journaled.read > lines {
		t.Errorf("%d collisions read %d journal lines, want no more than the journal's %d: each line once", pairs, r.journaled.read, lines)
	}
}

// TestWaitingBehindIsCheap: files waiting behind one still being written
// are not looked at again, each time the router looks, until it is done:
// no lease asked of each (issue 11, item 16: 10,000 files waiting behind
// one took half a core).
func TestWaitingBehindIsCheap(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	first := drop(t, ws, "alice", "a-0000.md", "---\nto: bob\n---\nfirst\n")
	const behind = 300
	for i := 1; i <= behind; i++ {
		drop(t, ws, "alice", fmt.Sprintf("m-%d.md", i), "---\nto: bob\n---\nlater\n")
	}
	clock := time.Now()
	r := clockRunner(t, ws, &clock)
	held, asked := true, 0
	r.writing = func(path string) bool {
		asked++
		return held && path == first
	}
	look(t, r) // the first look asks of the file being written
	for i := 0; i < 5; i++ {
		asked = 0
		clock = clock.Add(time.Second)
		look(t, r)
		if asked > 1 {
			t.Fatalf("look %d asked %d files whether they are being written, want only the one holding the others back", i+2, asked)
		}
		if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
			t.Fatalf("bob's inbox/ = %d messages while the first is being written, want none", len(got))
		}
	}
	held = false
	clock = clock.Add(time.Second)
	look(t, r)
	if got := bodies(t, ws, "bob", mailbox.Inbox); len(got) != behind+1 || got[0] != "first" {
		t.Errorf("bob's inbox/ once the first is written: %d messages (first %q), want %d, first first", len(got), got[:min(1, len(got))], behind+1)
	}
}

// deliverUnjournaled runs a runner whose journal cannot be written: it
// delivers what waits, and stops before the files go to sent/, as one
// killed at that point would.
func deliverUnjournaled(t *testing.T, ws *workspace.Workspace) {
	t.Helper()
	clock := time.Now()
	r := clockRunner(t, ws, &clock)
	r.journal.write = func(f *os.File, b []byte) (int, error) { return 0, syscall.EIO }
	r.scan()
	if _, err := r.routePending(context.Background()); !errors.Is(err, syscall.EIO) {
		t.Fatalf("routing with the journal failing = %v, want EIO", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDrawnIDKept: a file written by hand whose copies were delivered by
// a runner that stopped before it moved the file to sent/ (here the
// journal failed; a kill -9 leaves the same), then put away and back
// (git stash; git stash pop: same name and content, a new time), gets
// the id drawn for it the first time: no recipient gets it twice.
func TestDrawnIDKept(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob", "cy")
	const hello = "---\nto: [bob, cy]\n---\nHello.\n"
	path := drop(t, ws, "boss", "hello.md", hello)
	deliverUnjournaled(t, ws)
	first := names(t, ws, "bob", mailbox.Inbox)
	if len(first) != 1 || len(names(t, ws, "cy", mailbox.Inbox)) != 1 {
		t.Fatalf("after the first runner: bob's inbox/ %v, cy's %v; want a copy each", first, names(t, ws, "cy", mailbox.Inbox))
	}

	// git stash; git stash pop.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	writeAt(t, path, hello, time.Now().Add(-time.Second))

	s := routeAll(t, ws)
	if s.Routed != 1 || s.Deliveries != 0 || s.Recovered != 2 {
		t.Errorf("second run: routed %d, %d deliveries, %d held already; want 1, 0 and 2", s.Routed, s.Deliveries, s.Recovered)
	}
	for _, to := range []string{"bob", "cy"} {
		if got := names(t, ws, to, mailbox.Inbox); !slices.Equal(got, first) {
			t.Errorf("%s's inbox/ = %v, want only %v", to, got, first)
		}
	}
	if got := names(t, ws, "boss", mailbox.Sent); !slices.Equal(got, first) {
		t.Errorf("boss's sent/ = %v, want %v", got, first)
	}

	// Once in sent/, its id is no longer kept in the record.
	drop(t, ws, "boss", "later.md", "---\nto: bob\n---\nLater.\n")
	routeAll(t, ws)
	record, err := os.ReadFile(filepath.Join(ws.Root, workspace.StateDir, drawnFile))
	if err != nil {
		t.Fatal(err)
	}
	if id := strings.TrimSuffix(first[0], ".md"); strings.Contains(string(record), id) {
		t.Errorf("the record of drawn ids still holds %s, routed two runs ago:\n%s", id, record)
	}
}

// TestDrawnNotWritten: when the id drawn for a file written by hand
// cannot be written down, nothing of its sender's is delivered in that
// batch (not its later files either, which would arrive first); it is
// routed once the record can be written.
func TestDrawnNotWritten(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	drop(t, ws, "boss", "first.md", "---\nto: bob\n---\nFirst.\n")
	later := send(t, ws, "boss", "bob", "Later.")
	clock := time.Now()
	r := clockRunner(t, ws, &clock)
	rec, err := r.drawnRecord()
	if err != nil {
		t.Fatal(err)
	}
	rec.log.write = func(f *os.File, b []byte) (int, error) { return 0, syscall.ENOSPC }
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
		t.Fatalf("bob's inbox/ = %v with the record failing, want nothing", got)
	}
	rec.log.write = (*os.File).Write
	clock = clock.Add(time.Minute)
	look(t, r)
	got := bodies(t, ws, "bob", mailbox.Inbox)
	if !slices.Equal(got, []string{"First.", "Later."}) {
		t.Errorf("bob's inbox/ = %q, want First. then Later., once each", got)
	}
	if !slices.Contains(names(t, ws, "bob", mailbox.Inbox), mailbox.FileName(later)) {
		t.Errorf("the later message is not under its own id")
	}
}

// TestDrawnIDForgotten: the id drawn for a file written by hand that was
// never routed — its delivery failed before any copy was written, then
// its sender deleted it — is not kept in the record of drawn ids for
// ever: no copy bears it, so a file of that name and content drawing
// another id delivers nothing twice. Both ways the record is written
// anew forget it: when it is first read, and when it has grown.
func TestDrawnIDForgotten(t *testing.T) {
	t.Run("first read", func(t *testing.T) {
		ws := newWorkspace(t, "boss", "bob")
		path := drop(t, ws, "boss", "hello.md", "---\nto: bob\n---\nHello.\n")
		clock := time.Now()
		r := clockRunner(t, ws, &clock)
		r.troubles["bob"] = "broken for the test"
		look(t, r)
		if got := names(t, ws, "bob", mailbox.Inbox); len(got) != 0 {
			t.Fatalf("bob's inbox/ = %v with his mailbox broken, want nothing", got)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		id := drawnIn(t, ws, "hello.md")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}

		// The next runner reads the record when it draws an id.
		drop(t, ws, "boss", "later.md", "---\nto: bob\n---\nLater.\n")
		routeAll(t, ws)
		if record := readRecord(t, ws); strings.Contains(record, id) {
			t.Errorf("the record of drawn ids still holds %s, whose file was deleted before it was routed:\n%s", id, record)
		}
	})
	t.Run("grown", func(t *testing.T) {
		ws := newWorkspace(t, "boss", "bob")
		clock := time.Now()
		r := clockRunner(t, ws, &clock)
		rec, err := r.drawnRecord()
		if err != nil {
			t.Fatal(err)
		}
		// One id of a file deleted unrouted, then, as the record is
		// written anew, one drawn for a file the batch has just read
		// and a person deleted since: its copies are about to be
		// delivered, so it is kept.
		gone := workspace.Entry{ID: (&mailbox.IDs{}).New("boss"), From: "boss", File: "gone.md", Outcome: drawnOutcome}
		if err := rec.write(r, []workspace.Entry{gone}); err != nil {
			t.Fatal(err)
		}
		rec.written = compactDrawnAfter
		now := workspace.Entry{ID: (&mailbox.IDs{}).New("boss"), From: "boss", File: "now.md", Outcome: drawnOutcome}
		if err := rec.write(r, []workspace.Entry{now}); err != nil {
			t.Fatal(err)
		}
		record := readRecord(t, ws)
		if strings.Contains(record, gone.ID) {
			t.Errorf("the record written anew still holds %s, whose file was deleted before it was routed:\n%s", gone.ID, record)
		}
		if !strings.Contains(record, now.ID) {
			t.Errorf("the record written anew lost %s, drawn for the batch being delivered:\n%s", now.ID, record)
		}
	})
}

// TestDrawnIDKeptWhileStashed: the id drawn for a file written by hand
// whose copies were delivered, then put away (git stash) after the runner
// stopped, is kept when the record is read while the file is away: put
// back, it gets that id again and no recipient gets it twice.
func TestDrawnIDKeptWhileStashed(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	const hello = "---\nto: bob\n---\nHello.\n"
	path := drop(t, ws, "boss", "hello.md", hello)
	deliverUnjournaled(t, ws)
	first := names(t, ws, "bob", mailbox.Inbox)
	if len(first) != 1 {
		t.Fatalf("after the first runner: bob's inbox/ %v, want a copy", first)
	}

	// git stash; a runner draws an id for another file, reading the
	// record; git stash pop.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	drop(t, ws, "boss", "other.md", "---\nto: bob\n---\nOther.\n")
	routeAll(t, ws)
	writeAt(t, path, hello, time.Now().Add(-time.Second))

	routeAll(t, ws)
	if got := bodies(t, ws, "bob", mailbox.Inbox); len(got) != 2 {
		t.Errorf("bob's inbox/ = %q, want Hello. and Other., once each", got)
	}
	if got := names(t, ws, "boss", mailbox.Sent); !slices.Contains(got, first[0]) {
		t.Errorf("boss's sent/ = %v, want %v among them", got, first[0])
	}
}

// drawnIn returns the id the record of drawn ids holds for a file.
func drawnIn(t *testing.T, ws *workspace.Workspace, file string) string {
	t.Helper()
	lines, err := readDrawn(filepath.Join(ws.Root, workspace.StateDir, drawnFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lines {
		if e.File == file {
			return e.ID
		}
	}
	t.Fatalf("the record of drawn ids holds nothing for %s", file)
	return ""
}

// readRecord returns the record of drawn ids.
func readRecord(t *testing.T, ws *workspace.Workspace) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, workspace.StateDir, drawnFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDrawnIDKeepsOrder: a file written by hand gets again the id a
// runner killed before it went to sent/ drew for it, which may be dated
// after the files written after it (that runner's clock had been moved
// past earlier ids). The files after it then get ids that sort after it,
// so their recipient lists them in the order they were written.
func TestDrawnIDKeepsOrder(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	const first, second = "---\nto: bob\nn: 1\n---\none\n", "---\nto: bob\nn: 2\n---\ntwo\n"
	drop(t, ws, "alice", "m1.md", first)
	drop(t, ws, "alice", "m2.md", second)
	drawnAt := time.Now().Add(-time.Second) // after both files' times
	id := mailbox.IDOf("alice", drawnAt, "m1.md", []byte(first))
	line := fmt.Sprintf(`{"time":%q,"id":%q,"from":"alice","file":"m1.md","outcome":%q}`+"\n", drawnAt.UTC().Format(time.RFC3339Nano), id, drawnOutcome)
	if err := os.WriteFile(filepath.Join(ws.Root, workspace.StateDir, drawnFile), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	routeAll(t, ws)
	inbox := names(t, ws, "bob", mailbox.Inbox)
	if len(inbox) != 2 || inbox[0] != mailbox.FileName(id) {
		t.Fatalf("bob's inbox/ = %v, want m1's copy under the id drawn before (%s), then m2's", inbox, id)
	}
	data, err := os.ReadFile(ws.Mailbox("bob").Path(mailbox.Inbox, inbox[1]))
	if err != nil || !strings.Contains(string(data), "n: 2") {
		t.Errorf("the second in bob's inbox/ is not m2: %q, %v", data, err)
	}
}
