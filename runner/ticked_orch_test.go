package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/plans/orchestrator"
)

// tickedPlan is a plan of two waves of one step each.
const tickedPlan = `---
date: 2026-11-26
task: Document the retry flag
tier: 1
status: approved
---

# Document the retry flag

## Summary
The retry flag is documented.

## Out of Scope
Changing the flag.

## Approach
A README line and a help line.

## Risks
None.

## Risk Tags
- docs

## Implementation Waves

### Wave 1 — The text
- [ ] **Step 1: README** — README.md: the flag.

### Wave 2 — The help (depends on Wave 1)
- [ ] **Step 2: Help** — cmd/parley/cmd_run.go: the flag's usage.

## Acceptance Criteria
- AC1: the flag is documented.
`

// TestTickedWhileRunning: a person ticks by hand, in their editor, a step
// the orchestrator escalated (its worker answered nothing), while
// `parley run` runs. Before, only a runner's start noticed the tick:
// the pipeline waited for the person, and the person for the pipeline,
// until a restart. Now the running runner notes it to the person and
// sends the next step; a runner started again sends nothing twice.
func TestTickedWhileRunning(t *testing.T) {
	ws := newWorkspace(t, "you")
	script(t, ws, "quiet.sh", "cat >/dev/null\n")
	ws = reconfigure(t, ws, `skills: [dev-pipeline]
agents:
  - {name: you, role: human}
  - {name: orch, role: orchestrator, driver: builtin, handler: orchestrator}
  - {name: architect, driver: command, run: [./quiet.sh]}
  - {name: worker, role: worker, driver: command, run: [./quiet.sh]}
`)
	plan := filepath.Join(ws.Root, plans.Dir, "flag.md")
	if err := os.MkdirAll(filepath.Dir(plan), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, []byte(tickedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	send(t, ws, "architect", "orch", "Two steps.", "type", orchestrator.PlanResult, "signal", "plan_complete",
		"plan_file", "plans/flag.md", "wave_count", "2", "step_count", "2", "risk_tags", "docs", "has_blockers", "false")
	opts := func() Options {
		return Options{Handlers: Handlers{"orchestrator": orchestrated{&orchestrator.Orchestrator{Workspace: ws}}}}
	}
	// in lists the messages in agent's mailbox state whose field key is
	// value.
	in := func(agent, state, key, value string) []*mailbox.Message {
		t.Helper()
		var out []*mailbox.Message
		for _, name := range names(t, ws, agent, state) {
			m := readMessage(t, ws.Mailbox(agent).Path(state, name))
			if v, _ := m.Header().Get(key); v == value {
				out = append(out, m)
			}
		}
		return out
	}
	tasks := func(step string) (n int) {
		t.Helper()
		for _, state := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done} {
			for _, m := range in("worker", state, "type", orchestrator.TaskAssignment) {
				if s, _ := m.Header().Get("step"); s == step {
					n++
				}
			}
		}
		return n
	}
	notes := func() (n int) {
		t.Helper()
		for _, m := range in("you", mailbox.Inbox, "type", orchestrator.PipelineNote) {
			if strings.Contains(string(m.Body), "Step 1 of plans/flag.md was ticked by hand since the escalation") {
				n++
			}
		}
		return n
	}

	r, err := Open(ws, opts())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx)
		ran <- err
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-ran; err != nil {
				t.Error(err)
			}
			r.Close()
		}
	}
	defer stop()
	waitFor(t, 30*time.Second, func() bool { return len(in("you", mailbox.Inbox, "escalation", orchestrator.EscalateUnanswered)) == 1 })
	if _, _, err := plans.Tick(plan, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() bool { return tasks("2") == 1 && notes() == 1 })
	stop()

	// Started again: the tick was gone on from, and is not again.
	if _, err := runIdle(t, ws, opts()); err != nil {
		t.Fatal(err)
	}
	if got := tasks("2"); got != 1 {
		t.Errorf("after a restart, worker was sent step 2 %d times, want 1", got)
	}
	if got := notes(); got != 1 {
		t.Errorf("after a restart, you were told of the tick %d times, want 1", got)
	}
}
