package runner

import (
	"context"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

// orchestrated makes the dev pipeline's orchestrator a handler, as
// parley does.
type orchestrated struct{ *orchestrator.Orchestrator }

func (o orchestrated) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	return o.Orchestrator.Handle(ctx, d.Agent, d.Message)
}

// TestGivenUpEscalatedOnceAfterCrash: the orchestrator's task is given up
// by a runner stopped before it told the orchestrator (as `kill -9`
// there would). The next runner tells it, and the orchestrator asks the
// person once; runners after that ask nothing more. Before, the notice
// was never sent, and the pipeline waited for ever.
func TestGivenUpEscalatedOnceAfterCrash(t *testing.T) {
	ws := newWorkspace(t, "you")
	script(t, ws, "fail.sh", "cat >/dev/null; echo 'out of quota' >&2; exit 1\n")
	ws = reconfigure(t, ws, `agents:
  - {name: you, role: human}
  - {name: orch, role: orchestrator, driver: builtin, handler: orchestrator}
  - {name: worker, role: worker, driver: command, run: [./fail.sh], retries: 0}
`)
	run := func(crash bool) {
		t.Helper()
		opts := Options{UntilIdle: true, Handlers: Handlers{"orchestrator": orchestrated{&orchestrator.Orchestrator{Workspace: ws}}}}
		r, err := Open(ws, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if crash {
			r.workers["worker"].beforeTell = func() bool { return false }
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	escalations := func() (ids []string) {
		t.Helper()
		for _, name := range names(t, ws, "you", mailbox.Inbox) {
			m := readMessage(t, ws.Mailbox("you").Path(mailbox.Inbox, name))
			if esc, _ := m.Header().Get("escalation"); esc == orchestrator.EscalateGivenUp {
				given, _ := m.Header().Get("given_up")
				ids = append(ids, given)
			}
		}
		return ids
	}
	task := send(t, ws, "orch", "worker", "Do step 1.", "type", orchestrator.TaskAssignment)
	run(true)
	if got := names(t, ws, "worker", mailbox.Dead); len(got) != 1 {
		t.Fatalf("worker's dead/ = %v, want the task", got)
	}
	if got := escalations(); len(got) != 0 {
		t.Fatalf("escalations after the stopped runner: %v, want none", got)
	}
	for i := range 2 {
		run(false)
		if got := escalations(); len(got) != 1 || got[0] != task {
			t.Fatalf("runner %d after the stop: escalations of %v, want one, of %s", i+1, got, task)
		}
	}
	var notices int
	for _, state := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead} {
		for _, name := range names(t, ws, "orch", state) {
			m := readMessage(t, ws.Mailbox("orch").Path(state, name))
			if typ, _ := m.Header().Get("type"); typ == workspace.GivenUpNotice {
				notices++
			}
		}
	}
	if notices != 1 {
		t.Errorf("orch's mailbox holds %d notices of the task given up, want 1", notices)
	}
}
