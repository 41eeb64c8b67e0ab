package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestInboxFollow: parley inbox --follow lists what is there, then prints
// each message as it arrives, marked new, until it is interrupted.
func TestInboxFollow(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("gm", "aria"), nil)
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(body string) {
		t.Helper()
		m := mailbox.New([]byte(body + "\n"))
		id := (&mailbox.IDs{Now: time.Now}).New("gm")
		m.Set("id", id)
		m.Set("from", "gm")
		m.Set("to", "aria")
		s, err := mailbox.NewSyncer(ws.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := ws.Mailbox("aria").Deliver(id, m.Bytes(), s); err != nil {
			t.Fatal(err)
		}
	}
	deliver("Rain on the roof.")
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		e := &env{stdin: strings.NewReader(""), stdout: w, stderr: io.Discard}
		done <- followInbox(ctx, e, ws, "aria", inboxOptions{State: mailbox.Inbox, Limit: inboxLimit, Follow: true})
		w.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the listing ended before %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no line with %q within 20s", want)
			}
		}
	}
	await("Rain on the roof.")
	deliver("A bell tolls.")
	await("A bell tolls.")
	cancel()
	go func() {
		for range lines {
		}
	}()
	if err := <-done; err != nil {
		t.Errorf("followInbox = %v, want nil once interrupted", err)
	}
}
