package runner

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// alarm is a built-in handler that says "started" when the runner starts
// and "ring" once its deadline, set by the first message it handles,
// has come.
type alarm struct {
	ws      *workspace.Workspace
	mu      sync.Mutex
	due     time.Time
	ticks   int
	stopped int
}

func (a *alarm) Stop(ctx context.Context, agent string) error {
	a.stopped++
	return nil
}

func (a *alarm) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.due = time.Now().Add(100 * time.Millisecond)
	return nil, nil
}

func (a *alarm) say(agent, text string) error {
	m := mailbox.New([]byte(text + "\n"))
	m.Set("id", mailbox.IDAt(agent, time.Now()))
	m.Set("from", agent)
	m.Set("to", "boss")
	_, err := a.ws.Mailbox(agent).Send(m)
	return err
}

func (a *alarm) Start(ctx context.Context, agent string) error { return a.say(agent, "started") }

func (a *alarm) Due(agent string) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.due
}

func (a *alarm) Tick(ctx context.Context, agent string, now time.Time) error {
	a.mu.Lock()
	a.due = time.Time{}
	a.ticks++
	a.mu.Unlock()
	return a.say(agent, "ring")
}

// TestBuiltinStartAndTimer: a built-in agent's start is sent before the
// run routes, a run until idle waits for its deadline and routes what it
// sends then, and its Stop is called once the run is over.
func TestBuiltinStartAndTimer(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: clock, driver: builtin, handler: alarm}\n")
	a := &alarm{ws: ws}
	send(t, ws, "boss", "clock", "wake me")
	if _, err := runIdle(t, ws, Options{Handlers: Handlers{"alarm": a}}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"started", "ring"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	if a.ticks != 1 {
		t.Errorf("Tick called %d times, want once", a.ticks)
	}
	if a.stopped != 1 {
		t.Errorf("Stop called %d times, want once, at the end", a.stopped)
	}
}

// TestIdleHook: a run until idle asks its Idle hook before it ends; what
// the hook sends is routed, and the run ends when the hook has nothing
// more to say.
func TestIdleHook(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - you\n")
	said := 0
	idle := func(ctx context.Context, settled bool) bool {
		if !settled {
			t.Error("Idle called unsettled, with no reply awaited")
		}
		if said == 2 {
			return false
		}
		said++
		m := mailbox.New([]byte("line " + string(rune('0'+said)) + "\n"))
		m.Set("id", mailbox.IDAt("you", time.Now()))
		m.Set("from", "you")
		m.Set("to", "boss")
		if _, err := ws.Mailbox("you").Send(m); err != nil {
			t.Error(err)
		}
		return true
	}
	if _, err := runIdle(t, ws, Options{Idle: idle}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"line 1", "line 2"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// bossAsksYou sends "Which way?" from boss to you, a question whose reply
// the tests' timeouts: await.
func bossAsksYou(t *testing.T, ws *workspace.Workspace) *mailbox.Message {
	t.Helper()
	ask := mailbox.New([]byte("Which way?\n"))
	ask.Set("id", mailbox.IDAt("boss", time.Now()))
	ask.Set("from", "boss")
	ask.Set("to", "you")
	if _, err := ws.Mailbox("boss").Send(ask); err != nil {
		t.Fatal(err)
	}
	return ask
}

// TestIdleHookWhileAwaiting: while a reply is awaited (timeouts:), a run
// until idle asks its Idle hook, unsettled, before it waits: a person's
// seat answers what waits for them then — the answer may be the reply
// awaited — instead of after the deadline (a piped parley play showed
// nothing for the 3 minutes of the D&D template's timeouts).
func TestIdleHookWhileAwaiting(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - you\ntimeouts:\n  - match: {to: [you]}\n    after: 1h\n")
	bossAsksYou(t, ws)
	var calls []bool
	idle := func(ctx context.Context, settled bool) bool {
		calls = append(calls, settled)
		if n, _ := ws.Mailbox("you").Count(mailbox.Inbox); n == 0 || len(bodies(t, ws, "boss", mailbox.Inbox)) > 0 {
			return false
		}
		m := mailbox.New([]byte("Left.\n"))
		m.Set("id", mailbox.IDAt("you", time.Now()))
		m.Set("from", "you")
		m.Set("to", "boss")
		if _, err := ws.Mailbox("you").Send(m); err != nil {
			t.Error(err)
		}
		return true
	}
	r, err := Open(ws, Options{UntilIdle: true, Idle: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run waited for the reply's deadline (1h): Idle was called %v", calls)
	}
	if len(calls) == 0 || calls[0] {
		t.Errorf("Idle calls (settled) = %v, want an unsettled call first, while the reply was awaited", calls)
	}
	if d := cmp.Diff([]string{"Left."}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// TestIdleHookUntilDeadline: a hook that waits for a person (a piped
// parley play reading stdin) is handed a ctx that ends at the awaited
// reply's deadline, so the run checks it: the silent agent is marked
// unresponsive when its timeout says, not never (the seat blocked the
// router, and a 3m timeout of the D&D template never fired). The run
// says, once, on its log, what it waits for and until when.
func TestIdleHookUntilDeadline(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - you\ntimeouts:\n  - match: {to: [you]}\n    after: 200ms\n")
	ask := bossAsksYou(t, ws)
	idle := func(ctx context.Context, settled bool) bool {
		if !settled {
			<-ctx.Done() // waits for the person, who never answers
		}
		return false
	}
	log := &lockedLog{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	r, err := Open(ws, Options{UntilIdle: true, Idle: idle, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run never ended: the hook held it past the reply's deadline")
	}
	r.Close()
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if runs["you"].State != workspace.StateUnresponsive {
		t.Errorf("you: state %q, want %q", runs["you"].State, workspace.StateUnresponsive)
	}
	if n := strings.Count(log.String(), "waiting until "); n != 1 {
		t.Errorf("the log says %d times what the run waits for, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "for you's answer to "+mustGet(t, ask, "id")+" from boss (timeouts: after 200ms)") {
		t.Errorf("the log does not say what the run waits for:\n%s", log.String())
	}
}

func mustGet(t *testing.T, m *mailbox.Message, key string) string {
	t.Helper()
	v, ok := m.Header().Get(key)
	if !ok {
		t.Fatalf("no %s", key)
	}
	return v
}

// unstartable is a built-in handler whose start fails, as the D&D team
// lead's does in a workspace with no campaign.
type unstartable struct{}

func (unstartable) Start(ctx context.Context, agent string) error {
	return errors.New("the workspace has no campaign")
}

func (unstartable) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	return nil, nil
}

// TestBuiltinStartFails: a built-in agent that cannot start is failed in
// the runner's book of agents, with the reason, not idle (a user's
// tryout: parley status said idle while the log said it did not start),
// and the note says only its start failed: it handles what it is sent.
func TestBuiltinStartFails(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: lead, driver: builtin, handler: lead}\n")
	if _, err := runIdle(t, ws, Options{Handlers: Handlers{"lead": unstartable{}}}); err != nil {
		t.Fatal(err)
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	got := runs["lead"]
	if want := "start failed: the workspace has no campaign (it still handles what it is sent; mend that and restart parley run)"; got.State != workspace.StateFailed || got.Note != want {
		t.Errorf("lead's run = %+v, want state %q, note %q", got, workspace.StateFailed, want)
	}
}

// waitingLog signals once the runner says what it waits for.
type waitingLog struct {
	lockedLog
	once    sync.Once
	waiting chan struct{}
}

func (l *waitingLog) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "waiting until ") {
		l.once.Do(func() { close(l.waiting) })
	}
	return l.lockedLog.Write(p)
}

// TestUntilIdleRoutesWhileWaiting: a run until idle that waits out an
// awaited reply's deadline (timeouts:) routes what is sent meanwhile,
// from another process, when it comes: a person's answer given with
// `parley reply` in another terminal sat in the outbox until the
// deadline passed (10 minutes here; the run would end only then).
func TestUntilIdleRoutesWhileWaiting(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - you\ntimeouts:\n  - match: {to: [you]}\n    after: 10m\n")
	ask := bossAsksYou(t, ws)
	log := &waitingLog{waiting: make(chan struct{})}
	r, err := Open(ws, Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx)
		done <- err
	}()
	select {
	case <-log.waiting:
	case err := <-done:
		t.Fatalf("the run ended before it waited for the answer (%v):\n%s", err, log.String())
	}
	answer := mailbox.New([]byte("Left.\n"))
	answer.Set("id", mailbox.IDAt("you", time.Now()))
	answer.Set("to", "boss")
	answer.Set("reply_to", mustGet(t, ask, "id"))
	stage(t, ws.Mailbox("you"), answer)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the answer sent while the run waited was not routed: the run waited for the deadline:\n%s", log.String())
	}
	if d := cmp.Diff([]string{"Left."}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// busyAlarm is a built-in handler whose deadline comes while it handles
// a message: Handle makes it due at once, and returns only once the
// router has looked at it twice (a turn of its loop: tickBuiltins, then
// nextTick).
type busyAlarm struct {
	mu       sync.Mutex
	due      time.Time
	handling bool
	looked   chan struct{} // each Due while handling
	ticks    int
	overlap  int // Ticks while handling
}

func (a *busyAlarm) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	a.mu.Lock()
	a.due, a.handling = time.Now(), true
	a.mu.Unlock()
	for range 2 {
		select {
		case <-a.looked:
		case <-time.After(30 * time.Second):
			return nil, errors.New("the router never looked at the deadline")
		}
	}
	a.mu.Lock()
	a.handling = false
	a.mu.Unlock()
	return nil, nil
}

func (a *busyAlarm) Due(agent string) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handling {
		select {
		case a.looked <- struct{}{}:
		default:
		}
	}
	return a.due
}

func (a *busyAlarm) Tick(ctx context.Context, agent string, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.due = time.Time{}
	a.ticks++
	if a.handling {
		a.overlap++
	}
	return nil
}

// TestTickWaitsForHandling: a built-in agent's deadline that comes while
// it handles a message is ticked once the handling is done, never during
// it. Before, the router ticked it at once: the orchestrator, going on
// from a step ticked by hand, could send the steps its handling was
// sending too.
func TestTickWaitsForHandling(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: clock, driver: builtin, handler: alarm}\n")
	a := &busyAlarm{looked: make(chan struct{}, 1)}
	send(t, ws, "boss", "clock", "wake me")
	r, err := Open(ws, Options{Handlers: Handlers{"alarm": a}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx)
		ran <- err
	}()
	waitFor(t, 30*time.Second, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.ticks > 0
	})
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "clock", mailbox.Done); len(got) != 1 {
		t.Errorf("clock's done/ = %v, want the message handled", got)
	}
	if a.ticks != 1 || a.overlap != 0 {
		t.Errorf("Tick called %d times, %d of them while handling; want once, after", a.ticks, a.overlap)
	}
}

// resumable is an alarm that says so when it is resumed rather than
// started.
type resumable struct{ alarm }

func (a *resumable) Resume(ctx context.Context, agent string) error { return a.say(agent, "resumed") }

// TestBuiltinResumeOnTakeOver: a runner that takes over from one that
// stopped (Options.TakeOver: a seat whose parley run stopped) resumes a
// built-in agent that can be, not starts it: a seat that took over after
// the session ended had the team lead start a new session.
func TestBuiltinResumeOnTakeOver(t *testing.T) {
	for _, takeOver := range []bool{false, true} {
		ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: clock, driver: builtin, handler: alarm}\n")
		a := &resumable{alarm{ws: ws}}
		if _, err := runIdle(t, ws, Options{Handlers: Handlers{"alarm": a}, TakeOver: takeOver}); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "started", true: "resumed"}[takeOver]
		if d := cmp.Diff([]string{want}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
			t.Errorf("TakeOver %v: boss's inbox (-want +got):\n%s", takeOver, d)
		}
	}
}
