package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestOrderWhileListed checks what a worker relies on while the router
// delivers several senders' messages at once: an inbox listed at any
// moment never holds a sender's message without every one that sender
// sent before it. Four senders write to three recipients each, in batches
// small enough that each is delivered while the inboxes are read.
func TestOrderWhileListed(t *testing.T) {
	t.Parallel()
	senders := []string{"ann", "bo", "cy", "dee"}
	recipients := []string{"eve", "fay", "gus"}
	ws := newWorkspace(t, append(slices.Clone(senders), recipients...)...)
	const n = 150
	type place struct {
		from string
		i    int // its place in the sender's order
	}
	sent := map[string]place{} // by file name
	ids := &mailbox.IDs{}
	for i := range n {
		for _, from := range senders {
			m := mailbox.New([]byte("x\n"))
			id := ids.New(from)
			m.Set("id", id)
			m.Set("to", strings.Join(recipients, ", "))
			stage(t, ws.Mailbox(from), m)
			sent[mailbox.FileName(id)] = place{from, i}
		}
	}
	r, err := Open(ws, Options{UntilIdle: true, BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	routed := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx)
		routed <- err
	}()
	done := false
	defer func() {
		if !done { // a check failed: the runner is stopped before it is closed
			cancel()
			<-routed
		}
	}()
	// check lists an inbox, then looks for every message sent before the
	// last one listed of each sender: linked before it, it must be there.
	check := func(to string) {
		t.Helper()
		inbox := filepath.Join(string(ws.Mailbox(to)), mailbox.Inbox)
		entries, err := os.ReadDir(inbox)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]int{}
		for _, e := range entries {
			if s, ok := sent[e.Name()]; ok {
				last[s.from] = max(last[s.from], s.i+1)
			}
		}
		for name, s := range sent {
			if s.i >= last[s.from] {
				continue
			}
			if _, err := os.Lstat(filepath.Join(inbox, name)); errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s's inbox holds %s's message %d but not %d (%s)", to, s.from, last[s.from]-1, s.i, name)
			}
		}
	}
	for !done {
		select {
		case err := <-routed:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		for _, to := range recipients {
			check(to)
		}
	}
	for _, to := range recipients {
		next := map[string]int{}
		for _, name := range names(t, ws, to, mailbox.Inbox) {
			s := sent[name]
			if s.i != next[s.from] {
				t.Fatalf("ls %s's inbox: %s is %s's message %d, want %d", to, name, s.from, s.i, next[s.from])
			}
			next[s.from]++
		}
		for _, from := range senders {
			if next[from] != n {
				t.Errorf("%s's inbox holds %d of %s's messages, want %d", to, next[from], from, n)
			}
		}
	}
}

// TestFailureInABatchOfSenders checks that, among several senders'
// messages delivered at once, a message that fails holds back its own
// sender's later messages and no one else's, and that every copy is
// counted once.
func TestFailureInABatchOfSenders(t *testing.T) {
	ws := newWorkspace(t, "ann", "bo", "cy", "dee", "eve", "fay")
	drop(t, ws, "ann", "0.md", "---\nto: eve\n---\nann 0\n") // eve's mailbox is being mended
	for i := 1; i <= 3; i++ {
		for _, from := range []string{"ann", "bo", "cy", "dee"} {
			drop(t, ws, from, fmt.Sprintf("%d.md", i), fmt.Sprintf("---\nto: fay\n---\n%s %d\n", from, i))
		}
	}
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.troubles["eve"] = "its inbox is being mended"
	r.scan()
	if _, err := r.routePending(context.Background()); err != nil {
		t.Fatal(err)
	}
	bodies := func(agent string) []string {
		t.Helper()
		var out []string
		for _, n := range names(t, ws, agent, mailbox.Inbox) {
			m := readMessage(t, ws.Mailbox(agent).Path(mailbox.Inbox, n))
			out = append(out, strings.TrimSpace(string(m.Body)))
		}
		return out
	}
	var want []string
	for _, from := range []string{"bo", "cy", "dee"} {
		for i := 1; i <= 3; i++ {
			want = append(want, fmt.Sprintf("%s %d", from, i))
		}
	}
	got := bodies("fay")
	if d := cmp.Diff(want, slices.Sorted(slices.Values(got))); d != "" {
		t.Errorf("fay's inbox while ann's first message waits (-want +got):\n%s", d)
	}
	if r.stats.Deliveries != 9 || r.stats.Recovered != 0 {
		t.Errorf("stats: %d delivered, %d recovered; want 9, 0", r.stats.Deliveries, r.stats.Recovered)
	}
	if got := names(t, ws, "ann", mailbox.Outbox); len(got) != 4 {
		t.Errorf("ann's outbox = %v, want all four kept", got)
	}
}

// TestHeldFilesNotKept checks that files held back behind their sender's
// earlier file in the same batch are left as they were: still in the
// outbox, delivered nowhere, and not held open by the runner (a router
// that reads a batch's files ahead must close those it then holds
// back), then routed in order once the earlier file is complete.
func TestHeldFilesNotKept(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skipf("no way to list open files here: %v", err)
	}
	ws := newWorkspace(t, "ann", "bo", "cy")
	clock := time.Now()
	ids := &mailbox.IDs{Now: func() time.Time { return clock }}
	// Named by its id, but not naming itself yet: its writer may not be
	// done (see take).
	first := mailbox.FileName(ids.New("ann"))
	// Written before the files below (sending order is modification
	// time, whose tick may be coarser than the clock's), and not settled.
	writeAt(t, ws.Mailbox("ann").Path(mailbox.Outbox, first), "---\nto: cy\n---\nann 1\n", clock.Add(-workspace.DefaultSettle/2))
	for _, body := range []string{"ann 2", "ann 3"} {
		m := mailbox.New([]byte(body + "\n"))
		m.Set("id", ids.New("ann"))
		m.Set("to", "cy")
		stage(t, ws.Mailbox("ann"), m)
	}
	drop(t, ws, "bo", "b.md", "---\nto: cy\n---\nbo\n")
	r := clockRunner(t, ws, &clock)
	look(t, r)
	bodies := func() []string {
		t.Helper()
		var out []string
		for _, n := range names(t, ws, "cy", mailbox.Inbox) {
			out = append(out, strings.TrimSpace(string(readMessage(t, ws.Mailbox("cy").Path(mailbox.Inbox, n)).Body)))
		}
		return out
	}
	if d := cmp.Diff([]string{"bo"}, bodies()); d != "" {
		t.Errorf("cy's inbox while ann's first file may be written to (-want +got):\n%s", d)
	}
	if got := names(t, ws, "ann", mailbox.Outbox); len(got) != 3 {
		t.Errorf("ann's outbox = %v, want all three files", got)
	}
	outbox := filepath.Join(string(ws.Mailbox("ann")), mailbox.Outbox)
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, outbox) {
			t.Errorf("the runner holds %s open after the batch", target)
		}
	}
	clock = clock.Add(time.Minute) // settled: taken as it is
	look(t, r)
	var annS []string
	for _, b := range bodies() {
		if strings.HasPrefix(b, "ann") {
			annS = append(annS, b)
		}
	}
	if d := cmp.Diff([]string{"ann 1", "ann 2", "ann 3"}, annS); d != "" {
		t.Errorf("ann's messages in cy's inbox, in ls order, once her first file is complete (-want +got):\n%s", d)
	}
}
