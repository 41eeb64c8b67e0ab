package llm_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// clock is a test's clock, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// held returns err as an *llm.OutageError, or fails the test.
func held(t *testing.T, err error) *llm.OutageError {
	t.Helper()
	var oe *llm.OutageError
	if !errors.As(err, &oe) {
		t.Fatalf("Handle = %v, want the message held for its endpoint (an *llm.OutageError)", err)
	}
	return oe
}

// TestOutageRetryAfter: after a 429 with Retry-After: 300, the endpoint
// is not called again before then, for any message of any agent that
// calls it: they are held (the runner waits). Then the next message is
// sent, and answered. parley called the endpoint again at once for every
// next message, each given up.
func TestOutageRetryAfter(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "300"}}, step{Content: "one"}, step{Content: "two"})
	ws := table(t, s.URL(), "")
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	shared := llm.NewEndpoints()
	gm, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: shared})
	if err != nil {
		t.Fatal(err)
	}
	again, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: shared}) // another agent of the same endpoint
	if err != nil {
		t.Fatal(err)
	}
	oe := held(t, handle(gm, t, "One."))
	if want := c.Now().Add(300 * time.Second); !oe.HoldUntil().Equal(want) {
		t.Errorf("HoldUntil() = %v, want %v (Retry-After: 300)", oe.HoldUntil(), want)
	}
	for _, want := range []string{"answered 429", "unavailable since 21:00:00 UTC", "next try at 21:05:00 UTC (Retry-After 5m)", "given up at 22:00:00 UTC (openai.outage_limit 1h in parley.yaml)"} {
		if !strings.Contains(oe.Error(), want) {
			t.Errorf("Error() = %q, want it to say %q", oe.Error(), want)
		}
	}
	c.add(299 * time.Second)
	held(t, handle(gm, t, "Two."))
	held(t, handle(again, t, "Three."))
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests before the Retry-After ran out, want 1", n)
	}
	c.add(time.Second)
	for _, a := range []*llm.Agent{gm, again} {
		if err := handle(a, t, "Again."); err != nil {
			t.Fatalf("Handle after the Retry-After = %v, want an answer", err)
		}
	}
	if n := s.count(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	// The journal says once that the endpoint answers again.
	var notes []string
	for _, e := range journal(t, ws, workspace.ModelCalled) {
		notes = append(notes, e.Note)
	}
	want := []string{"", "answered; the endpoint answers again, unavailable since 21:00:00 UTC (5m, 1 failed call)", "answered"}
	if d := cmp.Diff(want, notes); d != "" {
		t.Errorf("journal's model notes (-want +got):\n%s", d)
	}
}

// TestOutageRetryAfterKept: a Retry-After is kept for the next run
// (.parley/endpoints.json): a run until idle, started again a minute
// after a 429 that asked for five, called the endpoint at once (cron
// each minute: a call each minute). Once the endpoint answers, nothing
// is kept.
func TestOutageRetryAfterKept(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "300"}}, step{Content: "one"})
	ws := table(t, s.URL(), "")
	path := filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile)
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	held(t, handle(keptRun(t, ws, c), t, "One."))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the wait the endpoint asked for is not kept: %v", err)
	}
	// The next run, a minute later.
	c.add(time.Minute)
	gm := keptRun(t, ws, c)
	oe := held(t, handle(gm, t, "Two."))
	if want := time.Date(2026, 11, 29, 21, 5, 0, 0, time.UTC); !oe.HoldUntil().Equal(want) {
		t.Errorf("the next run holds until %v, want %v (Retry-After 300 of the run before)", oe.HoldUntil(), want)
	}
	if !strings.Contains(oe.Error(), "answered 429") || !strings.Contains(oe.Error(), "(in a run before)") || !strings.Contains(oe.Error(), "unavailable since 21:00:00 UTC (1 failed call)") {
		t.Errorf("Error() = %q, want what the endpoint answered, in a run before, since its first failure", oe.Error())
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests, want 1: the next run waits for the Retry-After too", n)
	}
	c.add(4 * time.Minute)
	if err := handle(gm, t, "Three."); err != nil {
		t.Fatalf("Handle after the Retry-After = %v, want an answer", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after the endpoint answered: %v, want it removed", path, err)
	}
}

// TestOutagePastLimitNotKept: a Retry-After longer than
// openai.outage_limit fails the message at once, and is not kept for the
// next run, which held its messages for it (review: "next try at 23:00,
// given up at 21:11").
func TestOutagePastLimitNotKept(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "7200"}})
	ws := table(t, s.URL(), "      outage_limit: 10m\n")
	path := filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile)
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	err := handle(keptRun(t, ws, c), t, "One.")
	if oe := (*llm.OutageError)(nil); err == nil || errors.As(err, &oe) {
		t.Fatalf("Handle = %v, want the message failed (a wait past outage_limit), not held", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v, want nothing kept: the wait is past the limit", path, err)
	}
}

// TestOutageLimitAcrossRuns: openai.outage_limit counts from the
// outage's first failure, whichever run saw it: each run started the
// clock again, so runs started by cron never reached the limit (third
// tryout).
func TestOutageLimitAcrossRuns(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "300"}}, step{Status: 429, Header: map[string]string{"Retry-After": "300"}})
	ws := table(t, s.URL(), "      outage_limit: 10m\n")
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	held(t, handle(keptRun(t, ws, c), t, "One."))
	// A run once the wait is over: the endpoint asks for five minutes
	// more, past ten since the first failure.
	c.add(5*time.Minute + 30*time.Second)
	err := handle(keptRun(t, ws, c), t, "One.")
	if oe := (*llm.OutageError)(nil); err == nil || errors.As(err, &oe) {
		t.Fatalf("Handle = %v, want the message failed: the outage has lasted past outage_limit since 21:00", err)
	}
}

// keptRun is the game master of a run of its own, at the clock c: a
// fresh record of endpoints that keeps what they ask in ws's
// .parley/endpoints.json, and takes up what a run before kept there.
func keptRun(t *testing.T, ws *workspace.Workspace, c *clock) *llm.Agent {
	t.Helper()
	e := llm.NewEndpoints()
	e.Keep(filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile), c.Now())
	gm, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: e})
	if err != nil {
		t.Fatal(err)
	}
	return gm
}

func handle(a *llm.Agent, t *testing.T, body string) error {
	t.Helper()
	_, err := a.Handle(context.Background(), incoming(t, body))
	return err
}

// TestOutageUnreachable: an endpoint that refuses connections holds the
// message, tried again after a pause that doubles up to MaxBackoff; past
// openai.outage_limit the message fails as before (a temporary error,
// the runner's retries). The journal counts each call made.
func TestOutageUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close() // refused from now on
	ws := table(t, url, "      outage_limit: 10m\n")
	c := &clock{now: time.Date(2026, 11, 29, 3, 12, 0, 0, time.UTC)}
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	start := c.Now()
	var waits []time.Duration
	for range 20 {
		err := handle(a, t, "Hello?")
		var oe *llm.OutageError
		if !errors.As(err, &oe) {
			var ee *llm.EndpointError
			if !errors.As(err, &ee) || !ee.Temporary() || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("Handle past the limit = %v, want the endpoint unreachable, temporary", err)
			}
			break
		}
		if !strings.Contains(oe.Error(), "unreachable") || !strings.Contains(oe.Error(), "unavailable since 03:12:00 UTC") {
			t.Errorf("Error() = %q, want unreachable since 03:12:00", oe.Error())
		}
		waits = append(waits, oe.HoldUntil().Sub(c.Now()))
		c.add(oe.HoldUntil().Sub(c.Now()))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second}
	if len(waits) != len(want) {
		t.Fatalf("waits = %v, want %v, then given up (the next would end past 10m)", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("waits = %v, want %v", waits, want)
			break
		}
	}
	if d := c.Now().Sub(start); d > 10*time.Minute {
		t.Errorf("held for %v, past the limit", d)
	}
	if n := len(journal(t, ws, workspace.ModelCalled)); n != len(want)+1 {
		t.Errorf("%d model calls journaled, want %d: each call made", n, len(want)+1)
	}
}

// TestOutageNotTheEndpoints: a request the endpoint refuses (400), or a
// server error other than 502, 503, 504, fails the message as before:
// nothing is held.
func TestOutageNotTheEndpoints(t *testing.T) {
	for _, status := range []int{400, 404, 500} {
		s := newStandin(t, step{Status: status}, step{Content: "ok"})
		ws := table(t, s.URL(), "")
		err := handle(agent(t, ws), t, "Hi.")
		var oe *llm.OutageError
		var ee *llm.EndpointError
		if errors.As(err, &oe) || !errors.As(err, &ee) || ee.Status != status {
			t.Errorf("Handle with %d = %v, want an *llm.EndpointError, not held", status, err)
		}
	}
	for _, status := range []int{429, 502, 503, 504} {
		s := newStandin(t, step{Status: status}, step{Content: "ok"})
		ws := table(t, s.URL(), "")
		held(t, handle(agent(t, ws), t, "Hi."))
	}
}

// TestRequestsCounted: a call the client tried again (max_retries) is
// journaled with the HTTP requests it made: attempts: 3 for a 503 that
// came three times. The journal said one call where the endpoint got
// three.
func TestRequestsCounted(t *testing.T) {
	s := newStandin(t, step{Status: 503}, step{Status: 503}, step{Status: 503}, step{Content: "ok"})
	ws := table(t, s.URL(), "      max_retries: 2\n")
	held(t, handle(agent(t, ws), t, "Hi."))
	calls := journal(t, ws, workspace.ModelCalled)
	if len(calls) != 1 || calls[0].Attempts != 3 || s.count() != 3 {
		t.Errorf("journaled %+v after %d requests, want one call of 3 attempts", calls, s.count())
	}
}

// TestOutageNotWaitedInTheCall: a 429 asking for 30 seconds is not
// waited for by the client inside the call (where parley status could
// only say the agent is working): the call ends, and the message is held
// for 30 seconds.
func TestOutageNotWaitedInTheCall(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "30"}}, step{Content: "ok"})
	ws := table(t, s.URL(), "      max_retries: 2\n")
	c := &clock{now: time.Now()}
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	oe := held(t, handle(a, t, "Hi."))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Handle took %v, want at once", d)
	}
	if got, want := oe.HoldUntil().Sub(c.Now()), 30*time.Second; got != want {
		t.Errorf("held for %v, want %v", got, want)
	}
	if n := s.count(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
