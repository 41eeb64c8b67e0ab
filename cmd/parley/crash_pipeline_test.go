package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestCrashPipeline kills `parley run` with SIGKILL, again and again,
// while the orchestrator drives the scripted pipeline of
// testdata/pipeline.txtar (its agents and plan), then lets a last runner
// finish. The orchestrator keeps nothing in memory that its mailbox and
// the plan do not hold: the run ends as an uninterrupted one does —
// steps 1 and 2 ticked, step 3 escalated once after five attempts — with
// no step assigned, revised or approved twice and no verdict lost.
func TestCrashPipeline(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("kills runners while the orchestrator works")
	}
	ar, err := txtar.ParseFile(testdataPath("pipeline.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range ar.Files {
		path := filepath.Join(root, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	req := mailbox.New([]byte("Retry failed deliveries with backoff.\n"))
	req.Set("id", (&mailbox.IDs{}).New("you"))
	req.Set("from", "you")
	req.Set("to", "orch")
	if _, err := ws.Mailbox("you").Send(req); err != nil {
		t.Fatal(err)
	}
	handled := func() int { n, _ := ws.Mailbox("orch").Count(mailbox.Done); return n }
	escalated := func() int { n, _ := ws.Mailbox("you").Count(mailbox.Inbox); return n }

	kills := killRuns(t, root, 15, func(i int) (func() int, int) { return handled, 1 + i%4 }, func() bool { return escalated() > 0 })
	t.Logf("killed %d runners, the orchestrator had handled %d messages", kills, handled())
	out, err := exec.Command("parley", "-C", root, "run", "--until-idle", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("the last run: %v\n%s", err, out)
	}

	p, err := plans.Read(filepath.Join(root, "plans", "retry.md"))
	if err != nil {
		t.Fatal(err)
	}
	for n, done := range map[int]bool{1: true, 2: true, 3: false} {
		if s := p.Step(n); s == nil || s.Done != done {
			t.Errorf("step %d: %+v, want done %v", n, s, done)
		}
	}
	// What the workers, the reviewer and the person were sent, by type
	// and step: each once, as in a run never interrupted.
	count := map[string]int{}
	seen := map[string][]string{} // the files of each kind, shown when one is unexpected
	for _, agent := range []string{"worker-1", "worker-2", "reviewer", "auditor", "you"} {
		for _, state := range []string{mailbox.Inbox, mailbox.Done} {
			entries, err := ws.Mailbox(agent).List(state)
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
					t.Fatal(err)
				}
				typ, _ := m.Header().Get("type")
				step, _ := m.Header().Get("step")
				if esc, _ := m.Header().Get("escalation"); esc != "" {
					typ = "escalation"
				}
				count[typ+" "+step]++
				seen[typ+" "+step] = append(seen[typ+" "+step], e.Path+":\n"+string(data))
			}
		}
	}
	want := map[string]int{
		"task_assignment 1": 1, "task_assignment 2": 1, "task_assignment 3": 1,
		"revision_request 2": 2, "revision_request 3": 4,
		"approval ":        2,
		"review_request 1": 2, "review_request 2": 6, "review_request 3": 10,
		"escalation 3": 1,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d, want %d", k, count[k], n)
		}
	}
	for k, n := range count {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected: %d of %q:\n%s", n, k, strings.Join(seen[k], "\n"))
		}
	}
	if n, _ := ws.Mailbox("orch").Count(mailbox.Dead); n != 0 {
		t.Errorf("the orchestrator gave up %d messages", n)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Logf("the last run said: %s", s)
	}
}

// killRuns starts `parley run` in root, up to n times or until done, and
// kills each run with SIGKILL once the count watch picks for it has moved
// on by the step it gives (run i: watch(i)). It returns how many it
// killed. A run under which nothing moves for 30s fails the test.
func killRuns(t *testing.T, root string, n int, watch func(i int) (count func() int, step int), done func() bool) int {
	t.Helper()
	kills := 0
	for i := 0; i < n && !done(); i++ {
		cmd := exec.Command("parley", "-C", root, "run", "--quiet")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		count, step := watch(i)
		at := count() + step
		deadline := time.Now().Add(30 * time.Second)
		for count() < at && !done() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("kill %d: nothing moved in 30s; the runner said:\n%s", i+1, stderr.String())
			}
			time.Sleep(200 * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		kills++
	}
	return kills
}
