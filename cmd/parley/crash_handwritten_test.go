package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestCrashHandWritten kills the runner with SIGKILL again and again
// while it routes files written by hand — files without an id, which the
// router never rewrites: it draws each one's id from the file and moves
// the file to sent/ as it is. Drawn again after a kill, the id must be
// the same, so no recipient gets a copy twice; every file must end in
// sent/ byte for byte as it was written, and each recipient must get
// each sender's files in the order they were written.
func TestCrashHandWritten(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("routes thousands of files")
	}
	agents := []string{"ann", "bo", "cy"}
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed(agents...), nil)
	if err != nil {
		t.Fatal(err)
	}
	const perSender = 500
	var sent []sentMessage
	written := map[string]string{} // key -> the file's bytes
	// All written before the first runner starts, so that every kill
	// lands in the middle of a batch. Files written within one tick of
	// the clock are ordered by name, numbers compared as numbers.
	for i, from := range agents {
		box := ws.Mailbox(from)
		for n := 0; n < perSender; n++ {
			key := fmt.Sprintf("%s-%d", from, n)
			var text string
			var rcpt []string
			if n%4 == 0 {
				text = "---\n# by hand\nto: \"*\"\n---\n" + key + "\n"
				for _, a := range agents {
					if a != from {
						rcpt = append(rcpt, a)
					}
				}
			} else {
				to := agents[(i+1+n%2)%len(agents)]
				text = "---\nto: " + to + "\n---\n" + key + "\n"
				rcpt = []string{to}
			}
			tmp := box.Path(mailbox.Tmp, "note-"+key)
			if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, box.Path(mailbox.Outbox, fmt.Sprintf("note-%d.md", n))); err != nil {
				t.Fatal(err)
			}
			written[key] = text
			sent = append(sent, sentMessage{from: from, key: key, recipients: rcpt})
		}
	}
	arrivals := watchInboxes(t, ws)
	total := perSender * len(agents)
	deliveries := 0
	for _, m := range sent {
		deliveries += len(m.recipients)
	}
	kills := []struct {
		what string
		at   int
		dirs []string
	}{
		{"copies delivered", deliveries / 8, stateDirs(ws, mailbox.Inbox)},
		{"files in sent/", total / 4, stateDirs(ws, mailbox.Sent)},
		{"journal lines", total / 2, nil},
		{"copies delivered", deliveries * 2 / 3, stateDirs(ws, mailbox.Inbox)},
		{"files in sent/", total * 5 / 6, stateDirs(ws, mailbox.Sent)},
	}
	for _, k := range kills {
		cmd := exec.Command("parley", "-C", ws.Root, "run", "--quiet")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitCount(t, ws, k.dirs, k.at)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Errorf("runner killed at %d %s said:\n%s", k.at, k.what, s)
		}
		if k.dirs != nil && k.dirs[0] == stateDirs(ws, mailbox.Inbox)[0] {
			// Killed mid-batch, with copies of files still in the
			// outboxes delivered: put away and back (git stash; git
			// stash pop), the files keep their name and content but not
			// their time, and must still not be delivered twice.
			restamp(t, ws, agents)
		}
	}
	out, err := exec.Command("parley", "-C", ws.Root, "run", "--until-idle", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	checkDelivered(t, ws, sent)
	checkArrivalOrder(t, ws, arrivals())

	// sent/ holds each file as it was written, named by the id its copies
	// carry.
	bad := 0
	for _, from := range agents {
		box := ws.Mailbox(from)
		ids, err := box.IDs(mailbox.Sent)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			data, err := os.ReadFile(box.Path(mailbox.Sent, mailbox.FileName(id)))
			if err != nil {
				t.Fatal(err)
			}
			key := strings.TrimSuffix(string(data[bytes.LastIndex(data[:len(data)-1], []byte("\n"))+1:]), "\n")
			if written[key] != string(data) && bad < 10 {
				bad++
				t.Errorf("%s/sent/%s = %q, want the file as written: %q", from, id, data, written[key])
			}
		}
	}
}

// restamp writes every file in the agents' outboxes again, as it was, with
// one new modification time: what git stash and git stash pop do to them
// (in one tick, so that each sender's files keep their order).
func restamp(t *testing.T, ws *workspace.Workspace, agents []string) {
	t.Helper()
	at := time.Now()
	for _, a := range agents {
		box := ws.Mailbox(a)
		des, err := os.ReadDir(box.Path(mailbox.Outbox, ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			path := box.Path(mailbox.Outbox, de.Name())
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
}
