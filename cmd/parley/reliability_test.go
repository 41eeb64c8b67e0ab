package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// These tests run parley as a separate process: testscript.Main (in
// TestMain) puts a "parley" command on PATH that runs this package's main.

// sentMessage is what a test sent, to check against what arrived. Its key
// is the first line of its body.
type sentMessage struct {
	from, key  string
	recipients []string
}

// TestCrash sends a few thousand messages from several agents while a
// runner routes them, kills the runner with SIGKILL at several points,
// restarts it each time, and checks that every message reached every
// recipient exactly once and every outbox file ended in sent/.
func TestCrash(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("sends thousands of messages")
	}
	agents := []string{"ann", "bo", "cy", "di"}
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed(agents...), nil)
	if err != nil {
		t.Fatal(err)
	}
	const perSender = 800
	var (
		mu      sync.Mutex
		sent    []sentMessage
		wg      sync.WaitGroup
		backlog sync.WaitGroup // the first half, sent before any runner starts
	)
	for i, from := range agents {
		wg.Add(1)
		backlog.Add(1)
		go func() {
			defer wg.Done()
			ids := &mailbox.IDs{}
			box := ws.Mailbox(from)
			for n := 0; n < perSender; n++ {
				if n == perSender/2 {
					backlog.Done()
				}
				key := fmt.Sprintf("%s-%d", from, n)
				m := mailbox.New([]byte(key + "\n"))
				var rcpt []string
				switch n % 5 {
				case 0: // broadcast
					m.Set("to", "*")
					for _, a := range agents {
						if a != from {
							rcpt = append(rcpt, a)
						}
					}
				case 1: // direct with a copy
					to, cc := agents[(i+1)%len(agents)], agents[(i+2)%len(agents)]
					m.Set("to", to)
					m.Set("cc", cc)
					rcpt = []string{to, cc}
				default:
					to := agents[(i+1+n)%len(agents)]
					if to == from {
						to = agents[(i+1)%len(agents)]
					}
					m.Set("to", to)
					rcpt = []string{to}
				}
				if n%7 == 3 {
					// Written by hand: no id (the router derives one,
					// the same after a crash), staged in tmp/ and moved.
					tmp := box.Path(mailbox.Tmp, "note-"+key)
					if err := os.WriteFile(tmp, m.Bytes(), 0o644); err != nil {
						t.Error(err)
						return
					}
					if err := os.Rename(tmp, box.Path(mailbox.Outbox, "note-"+key+".md")); err != nil {
						t.Error(err)
						return
					}
					// A file without an id is ordered by its modification
					// time, which is as fine as the kernel's clock tick:
					// the next message comes a tick later.
					time.Sleep(10 * time.Millisecond)
				} else {
					// As `parley send` writes, without its fsync: a
					// killed process loses nothing from the page cache.
					id := ids.New(from)
					m.Set("id", id)
					tmp := box.Path(mailbox.Tmp, id+".md")
					if err := os.WriteFile(tmp, m.Bytes(), 0o644); err != nil {
						t.Error(err)
						return
					}
					if err := os.Rename(tmp, box.Path(mailbox.Outbox, id+".md")); err != nil {
						t.Error(err)
						return
					}
				}
				mu.Lock()
				sent = append(sent, sentMessage{from: from, key: key, recipients: rcpt})
				mu.Unlock()
			}
		}()
	}
	total := perSender * len(agents)
	// Watch every inbox, to see the order copies arrive in.
	arrivals := watchInboxes(t, ws)
	// One agent handles its messages as they come: inbox -> cur -> done.
	stopHandling := make(chan struct{})
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		box := ws.Mailbox("di")
		for {
			select {
			case <-stopHandling:
				return
			default:
			}
			entries, _ := box.List(mailbox.Inbox)
			if len(entries) == 0 {
				time.Sleep(time.Millisecond) // nothing to handle yet
			}
			for _, e := range entries {
				if box.Claim(e.ID) == nil {
					box.Finish(e.ID)
				}
			}
		}
	}()
	// With a backlog the runner is busy from the start, so each kill lands
	// in the middle of a batch: between deliveries, the sync, the moves to
	// sent/ and the journal.
	backlog.Wait()

	// Kill the runner at several points of the stream, each watched for
	// in a different place so that kills land in different phases of a
	// batch; the last runner routes what is left and exits.
	deliveries := perSender * len(agents) * 8 / 5 // 1 in 5 is a broadcast (3 copies), 1 in 5 has a copy (2)
	received := append(stateDirs(ws, mailbox.Inbox), append(stateDirs(ws, mailbox.Cur), stateDirs(ws, mailbox.Done)...)...)
	kills := []struct {
		what string
		at   int
		dirs []string
	}{
		{"copies delivered", deliveries / 10, received},
		{"files in sent/", total / 3, stateDirs(ws, mailbox.Sent)},
		{"journal lines", total / 2, nil},
		{"copies delivered", deliveries * 3 / 4, received},
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
	}
	wg.Wait()
	close(stopHandling)
	<-handled
	out, err := exec.Command("parley", "-C", ws.Root, "run", "--until-idle", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	checkDelivered(t, ws, sent)
	checkArrivalOrder(t, ws, arrivals())
}

// watchInboxes records, per agent, the names of the files that arrive in
// its inbox, in order. The returned function stops watching and returns
// them.
func watchInboxes(t *testing.T, ws *workspace.Workspace) func() map[string][]string {
	t.Helper()
	w, err := fsnotify.NewBufferedWatcher(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range stateDirs(ws, mailbox.Inbox) {
		if err := w.Add(dir); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Create) {
					agent := filepath.Base(filepath.Dir(filepath.Dir(ev.Name)))
					got[agent] = append(got[agent], filepath.Base(ev.Name))
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				t.Errorf("watching inboxes: %v", err)
			}
		}
	}()
	return func() map[string][]string {
		w.Close()
		<-done
		return got
	}
}

// checkArrivalOrder checks that each recipient got each sender's messages
// in the order they were sent (their keys are "<sender>-<n>").
func checkArrivalOrder(t *testing.T, ws *workspace.Workspace, arrivals map[string][]string) {
	t.Helper()
	for agent, names := range arrivals {
		last := map[string]int{}
		for _, name := range names {
			path, err := ws.FindMessage(strings.TrimSuffix(name, ".md"))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mailbox.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			key, _, _ := strings.Cut(string(m.Body), "\n")
			from, n, _ := strings.Cut(key, "-")
			seq, _ := strconv.Atoi(n)
			if prev, ok := last[from]; ok && seq <= prev {
				t.Errorf("%s got %s after %s-%d", agent, key, from, prev)
			}
			last[from] = seq
		}
	}
}

// stateDirs lists a state directory of every agent.
func stateDirs(ws *workspace.Workspace, state string) []string {
	var dirs []string
	for _, a := range ws.AgentNames() {
		dirs = append(dirs, filepath.Join(string(ws.Mailbox(a)), state))
	}
	return dirs
}

// waitCount waits until the directories hold at least n files between
// them, or, with no directories, until the journal has n lines.
func waitCount(t *testing.T, ws *workspace.Workspace, dirs []string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := 0
		if dirs == nil {
			b, _ := os.ReadFile(ws.JournalPath())
			got = bytes.Count(b, []byte("\n"))
		}
		for _, d := range dirs {
			des, _ := os.ReadDir(d)
			got += len(des)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("did not reach %d within a minute (at %d)", n, got)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkDelivered checks that every outbox is empty, every message sent is
// in its sender's sent/, and every recipient holds each of its messages
// exactly once (in inbox, cur, done or dead), and nothing else.
func checkDelivered(t *testing.T, ws *workspace.Workspace, sent []sentMessage) {
	t.Helper()
	want := map[string]map[string]bool{} // recipient -> keys
	sentBy := map[string]int{}
	for _, m := range sent {
		sentBy[m.from]++
		for _, r := range m.recipients {
			if want[r] == nil {
				want[r] = map[string]bool{}
			}
			want[r][m.key] = true
		}
	}
	errors := 0
	for _, a := range ws.AgentNames() {
		box := ws.Mailbox(a)
		for state, n := range map[string]int{mailbox.Outbox: 0, mailbox.Rejected: 0, mailbox.Sent: sentBy[a]} {
			if got, err := box.Count(state); err != nil || got != n {
				t.Errorf("%s/%s holds %d files (%v), want %d", a, state, got, err, n)
			}
		}
		got := map[string]int{}
		for _, state := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead} {
			entries, err := box.List(state)
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
				key, _, _ := strings.Cut(string(m.Body), "\n")
				got[key]++
			}
		}
		for key := range want[a] {
			if got[key] != 1 && errors < 20 {
				errors++
				t.Errorf("%s holds %d copies of %s, want 1", a, got[key], key)
			}
		}
		for key := range got {
			if !want[a][key] && errors < 20 {
				errors++
				t.Errorf("%s holds %s, which was not sent to it", a, key)
			}
		}
		tmp, _ := os.ReadDir(filepath.Join(string(box), mailbox.Tmp))
		if len(tmp) != 0 {
			t.Errorf("%s/tmp holds %d files, want none", a, len(tmp))
		}
	}
}

// TestConcurrentSends runs several `parley send` processes at once, from
// the same and from different agents, and checks nothing is lost.
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	agents := []string{"ann", "bo", "cy", "di"}
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed(agents...), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Eight processes at once, two per agent, each sending a few times
	// over; the long tests (longtest) send four times as many.
	const workers = 8
	each := 3
	if longtest.Enabled() {
		each = 12
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from := agents[w%len(agents)] // two processes per agent at a time
			for n := 0; n < each; n++ {
				out, err := exec.Command("parley", "-C", ws.Root, "send", "--from", from, "--to", "*", "--body", fmt.Sprintf("worker %d message %d", w, n)).CombinedOutput()
				if err != nil {
					t.Errorf("send: %v\n%s", err, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	out, err := exec.Command("parley", "-C", ws.Root, "run", "--until-idle").CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("routed %d messages (%d deliveries), rejected 0", workers*each, workers*each*3); !strings.Contains(string(out), want) {
		t.Errorf("run said %q, want %q", out, want)
	}
	for _, a := range agents {
		entries, err := ws.Mailbox(a).List(mailbox.Inbox)
		if err != nil {
			t.Fatal(err)
		}
		bodies := map[string]bool{}
		for _, e := range entries {
			data, err := os.ReadFile(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mailbox.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			bodies[string(m.Body)] = true
		}
		if want := workers * each * 3 / 4; len(entries) != want || len(bodies) != want {
			t.Errorf("%s holds %d messages (%d different), want %d", a, len(entries), len(bodies), want)
		}
	}
}
