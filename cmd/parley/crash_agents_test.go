package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// crashAgentScript is the program of every command agent: it notes that it
// handled the message (the log counts handlings: at least once each), takes
// a moment, so that kills land while it runs, and answers in plain text,
// which parley sends as a reply to the sender.
const crashAgentScript = `#!/bin/sh
cat >/dev/null
echo "$PARLEY_AGENT $PARLEY_MESSAGE_ID" >>"$PARLEY_WORKSPACE/handled.log"
sleep 0.02
echo "handled $PARLEY_MESSAGE_ID"
`

const crashAgentsConfig = `concurrency: 3
agents:
  - boss
  - name: alpha
    driver: command
    run: [./agent.sh]
  - name: beta
    driver: command
    run: [./agent.sh]
  - name: gamma
    driver: command
    run: [./agent.sh]
`

// TestCrashAgents kills `parley run` with SIGKILL, over and over, while
// command agents are handling messages, then lets a last runner finish
// with --until-idle. Every message must have been handled at least once,
// and every reply delivered exactly once: a message handled again after a
// kill must not be answered twice, and a reply made before a kill must not
// be lost.
func TestCrashAgents(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("kills runners while agents work")
	}
	root := t.TempDir()
	for name, data := range map[string]string{"parley.yaml": crashAgentsConfig, "agent.sh": crashAgentScript} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	agents := []string{"alpha", "beta", "gamma"}
	for _, a := range append([]string{"boss"}, agents...) {
		if err := ws.Mailbox(a).Init(); err != nil {
			t.Fatal(err)
		}
	}

	// The boss's backlog: perAgent messages to each agent, interleaved, as
	// `parley send` writes them (staged in tmp/, renamed into the outbox;
	// the fsync is left out, as a killed process loses nothing from the
	// page cache).
	const perAgent = 40
	boss := ws.Mailbox("boss")
	ids := &mailbox.IDs{}
	sentTo := map[string]string{} // seeded id -> agent
	for n := 0; n < perAgent; n++ {
		for _, a := range agents {
			id := ids.New("boss")
			m := mailbox.New([]byte(fmt.Sprintf("task %d for %s\n", n, a)))
			m.Set("id", id)
			m.Set("to", a)
			tmp := boss.Path(mailbox.Tmp, mailbox.FileName(id))
			if err := os.WriteFile(tmp, m.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, boss.Path(mailbox.Outbox, mailbox.FileName(id))); err != nil {
				t.Fatal(err)
			}
			sentTo[id] = a
		}
	}
	total := len(sentTo)
	logPath := filepath.Join(root, "handled.log")

	count := func(agent, state string) int {
		n, err := ws.Mailbox(agent).Count(state)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	sum := func(state string) int {
		n := 0
		for _, a := range agents {
			n += count(a, state)
		}
		return n
	}
	logLines := func() int {
		b, _ := os.ReadFile(logPath)
		return bytes.Count(b, []byte("\n"))
	}
	// stageDirs counts the agents' stages: tmp/<id>.out (a handling under
	// way) and tmp/<id>.out.ready (answers committed, their message not
	// yet finished).
	stageDirs := func() (out, ready int) {
		for _, a := range agents {
			des, _ := os.ReadDir(filepath.Join(string(ws.Mailbox(a)), mailbox.Tmp))
			for _, de := range des {
				switch {
				case strings.HasSuffix(de.Name(), ".out.ready"):
					ready++
				case strings.HasSuffix(de.Name(), ".out"):
					out++
				}
			}
		}
		return out, ready
	}
	finished := func() bool { return sum(mailbox.Done) == total }

	// Each runner is killed at a different kind of moment: as soon as it
	// has taken the workspace (during its recovery of what the previous
	// one left), once an agent program has started on more messages (it
	// runs, its answer not yet made), as soon as answers are committed (a
	// ready directory: while they are published and the message finished),
	// once more messages are finished, or once more replies have reached
	// the boss (while the router works).
	type trigger struct {
		what string
		arm  func(k int, pid int) func() bool
	}
	triggers := []trigger{
		{"started", func(k, pid int) func() bool {
			return func() bool {
				b, _ := os.ReadFile(filepath.Join(root, workspace.StateDir, "lock"))
				return strings.TrimSpace(string(b)) == strconv.Itoa(pid)
			}
		}},
		{"handlings logged", func(k, pid int) func() bool {
			at := logLines() + k
			return func() bool { return logLines() >= at }
		}},
		{"answers committed", func(k, pid int) func() bool {
			at := sum(mailbox.Done) + 3 // in case every ready directory goes unseen
			return func() bool {
				_, ready := stageDirs()
				return ready > 0 || sum(mailbox.Done) >= at
			}
		}},
		{"messages finished", func(k, pid int) func() bool {
			at := sum(mailbox.Done) + k
			return func() bool { return sum(mailbox.Done) >= at }
		}},
		{"replies delivered", func(k, pid int) func() bool {
			at := count("boss", mailbox.Inbox) + k
			return func() bool { return count("boss", mailbox.Inbox) >= at }
		}},
	}

	const kills = 20
	var killed, withCur, withOut, withReady int
	for i := 0; i < kills && !finished(); i++ {
		tr := triggers[i%len(triggers)]
		cmd := exec.Command("parley", "-C", root, "run", "--quiet")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cond := tr.arm(1+i%3, cmd.Process.Pid)
		deadline := time.Now().Add(30 * time.Second)
		for !cond() && !finished() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("kill %d: waited 30s for %s; the runner said:\n%s", i+1, tr.what, stderr.String())
			}
			time.Sleep(100 * time.Microsecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Wait returns once the runner is dead and the programs it left
		// running (each in its own process group: the kill spares them)
		// have closed the stderr they inherited.
		cmd.Wait()
		killed++
		out, ready := stageDirs()
		if sum(mailbox.Cur) > 0 {
			withCur++
		}
		if out > 0 {
			withOut++
		}
		if ready > 0 {
			withReady++
		}
		if s := stderr.String(); s != "" {
			t.Errorf("runner killed once %s said:\n%s", tr.what, s)
		}
	}
	t.Logf("%d kills: %d with a message claimed, %d with a handling under way, %d with answers committed and their message not finished", killed, withCur, withOut, withReady)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final := exec.CommandContext(ctx, "parley", "-C", root, "run", "--until-idle", "--quiet")
	var stderr bytes.Buffer
	final.Stderr = &stderr
	if out, err := final.Output(); err != nil {
		t.Fatalf("final run: %v\n%s%s", err, out, stderr.String())
	}
	if s := stderr.String(); s != "" {
		t.Errorf("final run said:\n%s", s)
	}

	// Every message was handled, and is done.
	for id, a := range sentTo {
		if _, err := os.Lstat(ws.Mailbox(a).Path(mailbox.Done, mailbox.FileName(id))); err != nil {
			t.Errorf("%s: not in %s/done: %v", id, a, err)
		}
	}
	for _, a := range agents {
		box := ws.Mailbox(a)
		for state, want := range map[string]int{
			mailbox.Inbox: 0, mailbox.Cur: 0, mailbox.Dead: 0, mailbox.Done: perAgent,
			mailbox.Outbox: 0, mailbox.Rejected: 0,
			mailbox.Sent: perAgent, // one reply per message: none sent twice
		} {
			if got := count(a, state); got != want {
				t.Errorf("%s/%s holds %d messages, want %d", a, state, got, want)
			}
		}
		if des, _ := os.ReadDir(filepath.Join(string(box), mailbox.Tmp)); len(des) != 0 {
			t.Errorf("%s/tmp holds %d entries, want none: %v", a, len(des), des)
		}
	}

	// At least once: the agents' log names each message.
	logData, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	handled := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(logData)), "\n") {
		agent, id, _ := strings.Cut(line, " ")
		if sentTo[id] != agent {
			t.Errorf("log line %q: no such message sent to %s", line, agent)
			continue
		}
		handled[id]++
	}
	again := 0
	for id := range sentTo {
		if handled[id] == 0 {
			t.Errorf("%s (to %s) was never handled", id, sentTo[id])
		}
		again += max(handled[id]-1, 0)
	}
	t.Logf("%d handlings of %d messages: %d handled again after a kill", again+total, total, again)

	// Exactly once: the boss holds one reply to each message, from the
	// agent it was sent to, and nothing else.
	replies := map[string]int{}
	entries, err := boss.List(mailbox.Inbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		answers, _ := m.Header().Get("reply_to")
		from, _ := m.Header().Get("from")
		if a, ok := sentTo[answers]; !ok || from != a {
			t.Errorf("boss got %s, from %s, replying to %q: not a reply to a message sent to %s", e.Name, from, answers, from)
			continue
		}
		if want := "handled " + answers + "\n"; string(m.Body) != want {
			t.Errorf("boss got %s with body %q, want %q", e.Name, m.Body, want)
		}
		replies[answers]++
	}
	for id, a := range sentTo {
		if replies[id] != 1 {
			t.Errorf("boss holds %d replies to %s (sent to %s), want 1", replies[id], id, a)
		}
	}
	for state, want := range map[string]int{mailbox.Inbox: total, mailbox.Outbox: 0, mailbox.Rejected: 0, mailbox.Sent: total} {
		if got := count("boss", state); got != want {
			t.Errorf("boss/%s holds %d messages, want %d", state, got, want)
		}
	}
	if des, _ := os.ReadDir(boss.Path(mailbox.Tmp, "")); len(des) != 0 {
		t.Errorf("boss/tmp holds %d entries, want none", len(des))
	}
}
