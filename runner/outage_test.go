package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/internal/standin"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// openaiDrivers are the drivers of driver: openai as parley makes them,
// sharing endpoints.
func openaiDrivers(endpoints *llm.Endpoints) map[string]DriverFunc {
	return map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		ag, err := llm.New(llm.Options{Agent: a.Name, Workspace: ws, Endpoints: endpoints})
		if err != nil {
			return nil, err
		}
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			return ag.Handle(ctx, d.Message)
		}), nil
	}}
}

// TestOutageHeld: an endpoint that answers 503 and 429, then recovers:
// the agent's messages wait for it, and are answered once it does; none
// goes to dead/, and no attempt is counted for the wait. Each went to
// dead/ within seconds.
func TestOutageHeld(t *testing.T) {
	s := standin.New(standin.Step{Status: 503}, standin.Step{Status: 429}, standin.Step{Content: "one"}, standin.Step{Content: "two"}, standin.Step{Content: "three"})
	t.Cleanup(s.Close)
	ws := reconfigure(t, newWorkspace(t, "boss"), fmt.Sprintf("agents:\n  - boss\n  - {name: model, driver: openai, retries: 0, openai: {base_url: %s, model: m, max_retries: 0}}\n", s.URL()))
	endpoints := llm.NewEndpoints()
	endpoints.First = 10 * time.Millisecond // a short hold, which a run until idle waits out
	for _, b := range []string{"a", "b", "c"} {
		send(t, ws, "boss", "model", b)
	}
	if _, err := runIdle(t, ws, Options{Drivers: openaiDrivers(endpoints)}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c"}, bodies(t, ws, "model", mailbox.Done)); d != "" {
		t.Errorf("done/ (-want +got):\n%s", d)
	}
	if n := len(names(t, ws, "model", mailbox.Dead)); n != 0 {
		t.Errorf("%d files in dead/, want none", n)
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d requests, want 5: two failed, three answered", n)
	}
	if d := cmp.Diff([]string{"one", "two", "three"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// holding is a driver's error that holds its message until an hour
// from now.
type holding struct{ until time.Time }

func (h holding) Error() string        { return "waiting for its model endpoint: down" }
func (h holding) HoldUntil() time.Time { return h.until }

// TestOutageUntilIdle: a run until idle does not wait out a long hold:
// the agent stops for the run, its message in cur/ and the next in its
// inbox, and its state says why; nothing goes to dead/.
func TestOutageUntilIdle(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: model, driver: openai, openai: {model: m}}\n")
	calls := 0
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			calls++
			return nil, holding{time.Now().Add(time.Hour)}
		}), nil
	}}
	send(t, ws, "boss", "model", "one")
	send(t, ws, "boss", "model", "two")
	stats, err := runIdle(t, ws, Options{Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("the handler ran %d times, want once", calls)
	}
	if len(stats.Stopped) != 1 || !strings.HasPrefix(stats.Stopped[0].Path, "mailboxes/model/cur/") {
		t.Errorf("stats.Stopped = %+v, want model, its message in cur/", stats.Stopped)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Cur)); d != "" {
		t.Errorf("cur/ (-want +got):\n%s", d)
	}
	if n := len(names(t, ws, "model", mailbox.Dead)); n != 0 {
		t.Errorf("%d files in dead/, want none", n)
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if note := runs["model"].Note; !strings.Contains(note, "waiting for its model endpoint: down; the message waits in mailboxes/model/cur/") || !strings.Contains(note, "1 more in its inbox") {
		t.Errorf("note = %q, want why it waits, and what waits", note)
	}
}

// following is a driver's error that holds its message for another
// agent's call (runner/llm's probe of an endpoint): until its channel is
// closed, or an hour from now.
type following struct {
	holding
	probe chan struct{}
}

func (f following) Following() <-chan struct{} { return f.probe }

// TestOutageFollowing: a message held for another agent's call probing
// the endpoint is handed to the driver again once that call ends, not
// at its hour, and a run until idle waits for it rather than stopping
// the agent (one agent's probe stopped the others for the run).
func TestOutageFollowing(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: model, driver: openai, openai: {model: m}}\n")
	calls := 0
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			calls++
			if calls == 1 {
				f := following{holding{time.Now().Add(time.Hour)}, make(chan struct{})}
				time.AfterFunc(10*time.Millisecond, func() { close(f.probe) }) // the probe answered
				return nil, f
			}
			return nil, nil
		}), nil
	}}
	send(t, ws, "boss", "model", "one")
	stats, err := runIdle(t, ws, Options{Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("the handler ran %d times, want twice: held, then once the probe ended", calls)
	}
	if len(stats.Stopped) != 0 {
		t.Errorf("stats.Stopped = %+v, want none", stats.Stopped)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Done)); d != "" {
		t.Errorf("done/ (-want +got):\n%s", d)
	}
}

// TestOutageStopped: a run that is not until idle waits out a long hold,
// the message claimed and the agent shown retrying with why; parley stop
// ends the wait, the message staying in cur/.
func TestOutageStopped(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: model, driver: openai, openai: {model: m}}\n")
	called := make(chan struct{}, 1)
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			select {
			case called <- struct{}{}:
			default:
			}
			return nil, holding{time.Now().Add(time.Hour)}
		}), nil
	}}
	send(t, ws, "boss", "model", "one")
	r, err := Open(ws, Options{Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { _, err := r.Run(ctx); ran <- err }()
	select {
	case <-called:
	case err := <-ran:
		t.Fatalf("Run ended before the handler ran: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the handler never ran")
	}
	w := r.workers["model"]
	deadline := time.Now().Add(10 * time.Second)
	for r.state.run("model").State != workspace.StateRetrying {
		if time.Now().After(deadline) {
			t.Fatalf("state = %+v, want retrying", r.state.run("model"))
		}
		time.Sleep(time.Millisecond)
	}
	if note := r.state.run("model").Note; !strings.HasPrefix(note, "waiting for its model endpoint: down; the message waits in mailboxes/model/cur/") {
		t.Errorf("note = %q, want why it waits", note)
	}
	r.stopAgent("model", "parley stop")
	for w.handling() {
		if time.Now().After(deadline) {
			t.Fatal("still holding the message after parley stop")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Cur)); d != "" {
		t.Errorf("cur/ (-want +got):\n%s", d)
	}
	if n := len(names(t, ws, "model", mailbox.Dead)); n != 0 {
		t.Errorf("%d files in dead/, want none", n)
	}
}

// TestOutageShutdownRequest: parley stop of an openai agent holding a
// message while its endpoint is down. The shutdown request waited behind
// the held message for as long as the outage lasted, and once the
// endpoint answered it went to the model (a paid call, answered as the
// model pleased): the agent was never stopped. It is handed over at
// once, approved without a call to the model, and the held message waits
// in cur/ for the next run.
func TestOutageShutdownRequest(t *testing.T) {
	ws, s := heldForOutage(t)
	stopHeld(t, ws)
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests to the endpoint, want 1: the shutdown request is answered without the model", n)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Cur)); d != "" {
		t.Errorf("cur/ (-want +got):\n%s", d)
	}
	var answers []string
	for _, n := range names(t, ws, "boss", mailbox.Inbox) {
		m := readMessage(t, ws.Mailbox("boss").Path(mailbox.Inbox, n))
		typ, _ := m.Header().Get("type")
		rid, _ := m.Header().Get("request_id")
		approve, _ := m.Header().Get("approve")
		answers = append(answers, typ+" "+rid+" "+approve)
	}
	if d := cmp.Diff([]string{workspace.ShutdownResponse + " r-1 true"}, answers); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// TestOutageShutdownBehindOwnSender: the shutdown request's sender sent
// the agent another message before it, queued behind the held one: that
// one was taken next and held too, the request waiting behind it for the
// outage (review). While a held message is set aside, the request alone
// is taken; the queued message waits for the next run.
func TestOutageShutdownBehindOwnSender(t *testing.T) {
	ws, s := heldForOutage(t)
	send(t, ws, "boss", "model", "two")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "model", mailbox.Inbox)) == 1 })
	stopHeld(t, ws)
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests to the endpoint, want 1", n)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Cur)); d != "" {
		t.Errorf("cur/ (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"two"}, bodies(t, ws, "model", mailbox.Inbox)); d != "" {
		t.Errorf("inbox (-want +got):\n%s", d)
	}
}

// heldForOutage is a watching runner whose openai agent, model, holds
// the message "one" from boss (a team lead): its endpoint, s, answers
// 503 and the next try is an hour away.
func heldForOutage(t *testing.T) (*workspace.Workspace, *standin.Server) {
	t.Helper()
	s := standin.New(standin.Step{Status: 503}, standin.Step{Status: 503}, standin.Step{Status: 503})
	t.Cleanup(s.Close)
	ws := reconfigure(t, newWorkspace(t, "boss"), fmt.Sprintf("agents:\n  - {name: boss, role: team-lead}\n  - {name: model, driver: openai, retries: 0, openai: {base_url: %s, model: m, max_retries: 0}}\n", s.URL()))
	endpoints := llm.NewEndpoints()
	endpoints.First = time.Hour
	send(t, ws, "boss", "model", "one")
	watching(t, ws, Options{Drivers: openaiDrivers(endpoints)})
	waitFor(t, 30*time.Second, func() bool {
		runs, err := ws.AgentRuns()
		return err == nil && runs["model"].State == workspace.StateRetrying
	})
	return ws, s
}

// stopHeld sends model a shutdown request from boss, as parley stop
// does, and waits until model is stopped.
func stopHeld(t *testing.T, ws *workspace.Workspace) {
	t.Helper()
	send(t, ws, "boss", "model", "Please stop.", "type", workspace.ShutdownRequest, "request_id", "r-1")
	waitFor(t, 10*time.Second, func() bool {
		runs, err := ws.AgentRuns()
		return err == nil && runs["model"].Stopped
	})
}
