package runner

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestRaisedBudgetResumes: an agent stopped by its budget, whose budget
// is raised in parley.yaml while the runner runs, resumes with the new
// driver: the message it was handling, then the next ones. The reload
// had it answer the message in cur/, then stay stopped with the next
// left in its inbox, while status and the run's summary still said its
// message waited in cur/ (tryout).
func TestRaisedBudgetResumes(t *testing.T) {
	config := func(tokens int) string {
		return "agents:\n  - boss\n  - {name: model, driver: openai, openai: {model: m}, budget: {tokens: " + strconv.Itoa(tokens) + "}}\n"
	}
	ws := reconfigure(t, newWorkspace(t, "boss"), config(10))
	// The handler answers when its agent's budget is over 100 tokens.
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			if a.Budget.Tokens <= 100 {
				return nil, spent{}
			}
			m := mailbox.New([]byte("answered " + string(d.Message.Body) + "\n"))
			m.Set("to", "boss")
			return []*mailbox.Message{m}, nil
		}), nil
	}}
	r, err := Open(ws, Options{Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats, 1)
	go func() {
		stats, err := r.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- stats
	}()
	defer r.Close()
	send(t, ws, "boss", "model", "one")
	send(t, ws, "boss", "model", "two")
	waitFor(t, 10*time.Second, func() bool {
		return r.isStopped("model") && len(names(t, ws, "model", mailbox.Cur)) == 1 && len(names(t, ws, "model", mailbox.Inbox)) == 1
	})

	saveConfig(t, ws, config(1000), true)
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "model", mailbox.Done)) == 2 })
	send(t, ws, "boss", "model", "three")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "boss", mailbox.Inbox)) == 3 })
	if d := cmp.Diff([]string{"answered one", "answered three", "answered two"}, slices.Sorted(slices.Values(bodies(t, ws, "boss", mailbox.Inbox)))); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	if r.isStopped("model") {
		t.Errorf("model still stopped after its budget was raised")
	}
	if run := r.state.run("model"); run.State == workspace.StateStopped || run.Note != "" {
		t.Errorf("agents.json: model %s, note %q; want it not stopped, and no note that it is", run.State, run.Note)
	}
	cancel()
	stats := <-done
	if len(stats.Stopped) != 0 {
		t.Errorf("the run's stats: stopped %+v, want none: model resumed", stats.Stopped)
	}
}
