package runner

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// TestMailboxRemoved checks that mailbox directories people and git
// remove while the runner runs are made again: a removed outbox is
// watched again at once (the rescan is an hour away), and deliveries
// into a mailbox whose tmp/ or inbox/ went away go through.
func TestMailboxRemoved(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "alice"), "agents:\n  - alice\n  - bob\n  - carol\n  - {name: echo, driver: command, run: [./echo.sh]}\nrouter:\n  rescan_interval: 1h\n")
	script(t, ws, "echo.sh", "echo \"echo: $(tail -n 1 \"$PARLEY_MESSAGE\")\"\n")
	watching(t, ws, Options{})

	// rm -rf mailboxes/carol: made again, and its outbox watched.
	if err := os.RemoveAll(string(ws.Mailbox("carol"))); err != nil {
		t.Fatal(err)
	}
	outbox := ws.Mailbox("carol").Path(mailbox.Outbox, "")
	waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(outbox); return err == nil })
	drop(t, ws, "carol", "back.md", "---\nto: bob\n---\nI am back.\n")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "bob", mailbox.Inbox)) == 1 })

	// git clean -fdX removes every tmp/; someone removes echo's inbox.
	for _, a := range []string{"alice", "bob", "carol", "echo"} {
		if err := os.RemoveAll(ws.Mailbox(a).Path(mailbox.Tmp, "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(ws.Mailbox("echo").Path(mailbox.Inbox, "")); err != nil {
		t.Fatal(err)
	}
	// parley send makes tmp/ again itself.
	for _, to := range []string{"echo", "bob"} {
		m := mailbox.New([]byte("ping\n"))
		m.Set("id", (&mailbox.IDs{}).New("alice"))
		m.Set("to", to)
		if _, err := ws.Mailbox("alice").Send(m); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, func() bool {
		return len(names(t, ws, "bob", mailbox.Inbox)) == 2 && len(names(t, ws, "alice", mailbox.Inbox)) == 1
	})
	if got := bodies(t, ws, "alice", mailbox.Inbox); got[0] != "echo: ping" {
		t.Errorf("echo answered %q", got)
	}
	if info := runnerInfo(t, ws); len(info.Mailboxes) != 0 {
		t.Errorf("runner.json reports mailbox problems: %v", info.Mailboxes)
	}
}

// TestCurRemoved checks that a worker whose cur/ was removed does not
// spin or stop the runner: the message waits in the inbox, cur/ is made
// again, and the message is handled.
func TestCurRemoved(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "alice"), "agents:\n  - alice\n  - {name: echo, driver: command, run: [./echo.sh]}\nrouter:\n  rescan_interval: 1h\n")
	script(t, ws, "echo.sh", "echo \"echo: $(tail -n 1 \"$PARLEY_MESSAGE\")\"\n")
	watching(t, ws, Options{})
	if err := os.RemoveAll(ws.Mailbox("echo").Path(mailbox.Cur, "")); err != nil {
		t.Fatal(err)
	}
	send(t, ws, "alice", "echo", "ping")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 1 })
	if got := bodies(t, ws, "alice", mailbox.Inbox); got[0] != "echo: ping" {
		t.Errorf("echo answered %q", got)
	}
}

// TestMailboxCannotBeMade checks that a mailbox the runner cannot make
// again is reported, with the reason, and that other agents are served.
func TestMailboxCannotBeMade(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "alice"), "agents: [alice, bob, carol]\nrouter:\n  rescan_interval: 1h\n")
	watching(t, ws, Options{})
	// A file where carol's mailbox was: no directory can be made there.
	if err := os.RemoveAll(string(ws.Mailbox("carol"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(string(ws.Mailbox("carol")), []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	send(t, ws, "alice", "carol", "are you there?")
	waitFor(t, 10*time.Second, func() bool { return runnerInfo(t, ws).Mailboxes["carol"] != "" })
	if got := runnerInfo(t, ws).Mailboxes["carol"]; !strings.Contains(got, "cannot make its mailbox") || !strings.Contains(got, "mailboxes/carol is a file, not a directory") {
		t.Errorf("carol's problem = %q", got)
	}
	send(t, ws, "bob", "alice", "I am fine")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 1 })
}

// TestUnwatchedOutbox checks that an outbox the kernel gives no watch for
// (inotify's watches used up) is listed every second instead, and that
// the runner says so.
func TestUnwatchedOutbox(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "alice"), "agents: [alice, bob]\nrouter:\n  rescan_interval: 1h\n")
	watchingWith(t, ws, Options{}, func(r *Runner) {
		r.watchHook = func(dir string) error {
			if dir == ws.Mailbox("bob").Path(mailbox.Outbox, "") {
				return syscall.ENOSPC
			}
			return nil
		}
	})
	waitFor(t, 10*time.Second, func() bool { return len(runnerInfo(t, ws).Unwatched) > 0 })
	if got := runnerInfo(t, ws).Unwatched; len(got) != 1 || got[0] != "bob" {
		t.Errorf("runner.json unwatched = %v, want [bob]", got)
	}
	drop(t, ws, "bob", "polled.md", "---\nto: alice\n---\nNo events for me.\n")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 1 })
}

// TestInboxFromElsewhere: a message put into an agent's inbox by another
// process while the runner watches (parley retry moving it back from
// dead/, the web view's retry, a person's mv) is handled within a
// second or so, not at the next rescan (an hour here; 30 seconds by
// default, which left a retried task waiting without a word).
func TestInboxFromElsewhere(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "alice"), "agents:\n  - alice\n  - {name: echo, driver: command, run: [./echo.sh]}\nrouter:\n  rescan_interval: 1h\n")
	script(t, ws, "echo.sh", "echo \"echo: $(tail -n 1 \"$PARLEY_MESSAGE\")\"\n")
	watching(t, ws, Options{})
	// Routed: the runner and echo's worker are at work.
	send(t, ws, "alice", "echo", "first")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 1 })
	// Put into echo's inbox by another process, as parley retry does.
	s, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := (&mailbox.IDs{}).New("alice")
	if _, err := ws.Mailbox("echo").Deliver(id, fmt.Appendf(nil, "---\nid: %s\nfrom: alice\nto: echo\n---\nsecond\n", id), s); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "alice", mailbox.Inbox)) == 2 })
	got := bodies(t, ws, "alice", mailbox.Inbox)
	slices.Sort(got)
	if d := cmp.Diff([]string{"echo: first", "echo: second"}, got); d != "" {
		t.Errorf("alice's inbox (-want +got):\n%s", d)
	}
}
