package llm_test

import (
	"context"
	"encoding/json"
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
// each minute: a call each minute). Once the endpoint answers, the
// outage is kept as ended (for parley status), holding nothing.
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
	kept, err := llm.ReadEndpoints(path, c.Now())
	if err != nil || len(kept) != 1 || !kept[0].Ended.Equal(c.Now()) {
		t.Errorf("ReadEndpoints after the endpoint answered = %+v, %v; want the outage, ended now", kept, err)
	}
	if err := handle(keptRun(t, ws, c), t, "Four."); err != nil {
		t.Errorf("a run after the outage ended: Handle = %v, want the endpoint called", err)
	}
	c.add(llm.KeptFor)
	if kept, err := llm.ReadEndpoints(path, c.Now()); err != nil || len(kept) != 0 {
		t.Errorf("ReadEndpoints a day after the outage ended = %+v, %v; want nothing", kept, err)
	}
}

// TestOutageKeptUntilAnswered: a kept outage is carried on by a run
// started after its wait ended, until the endpoint answers: it was
// forgotten five minutes after the wait ended unless the endpoint was
// called, so runs started by cron every quarter hour began it anew each
// time, never reaching openai.outage_limit, and parley status could not
// show it. A run started longer than the limit after the wait ended
// begins an outage anew (nothing says it was down meanwhile).
func TestOutageKeptUntilAnswered(t *testing.T) {
	limited := step{Status: 429, Header: map[string]string{"Retry-After": "300"}}
	s := newStandin(t, limited, limited, limited, limited)
	ws := table(t, s.URL(), "      outage_limit: 30m\n")
	path := filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile)
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	held(t, handle(keptRun(t, ws, c), t, "One."))
	// A quarter of an hour later: ten minutes after the wait ended.
	c.add(15 * time.Minute)
	if kept, err := llm.ReadEndpoints(path, c.Now()); err != nil || len(kept) != 1 || !kept[0].Since.Equal(time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)) {
		t.Fatalf("ReadEndpoints 10 minutes after the wait ended = %+v, %v; want the outage since 21:00", kept, err)
	}
	oe := held(t, handle(keptRun(t, ws, c), t, "Two."))
	if !strings.Contains(oe.Error(), "unavailable since 21:00:00 UTC (2 failed calls)") {
		t.Errorf("Error() = %q, want the outage carried on: since 21:00, 2 failed calls", oe.Error())
	}
	// Another quarter: the next wait would end past 30 minutes since
	// 21:00: given up.
	c.add(15 * time.Minute)
	err := handle(keptRun(t, ws, c), t, "Three.")
	if oe := (*llm.OutageError)(nil); err == nil || errors.As(err, &oe) {
		t.Fatalf("Handle = %v, want the message failed: the outage has lasted past outage_limit since 21:00", err)
	}
	// An hour after that, nothing of it held: a new outage.
	c.add(time.Hour)
	oe = held(t, handle(keptRun(t, ws, c), t, "Four."))
	if !strings.Contains(oe.Error(), "unavailable since 22:30:00 UTC (1 failed call)") {
		t.Errorf("Error() = %q, want a new outage, since 22:30", oe.Error())
	}
}

// TestOutageKeptLongAfter: a kept wait that nobody called since is kept,
// for parley status, when another endpoint's wait is saved: the file was
// rewritten without it five minutes after its wait ended. A wait still
// in force is never dropped.
func TestOutageKeptLongAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), llm.EndpointsFile)
	at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	old := map[string]llm.KeptEndpoint{
		"http://a/v1 A_KEY": {URL: "http://a/v1", Status: 429, Said: "slow down", NotBefore: at.Add(5 * time.Minute), RetryAfter: 5 * time.Minute, Since: at, Failures: 1},
		"http://b/v1 B_KEY": {URL: "http://b/v1", Status: 429, Said: "later", NotBefore: at.Add(3 * time.Hour), RetryAfter: 3 * time.Hour, Since: at, Failures: 1},
	}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "60"}})
	ws := table(t, s.URL(), "")
	c := &clock{now: at.Add(time.Hour)}
	e := llm.NewEndpoints()
	e.Keep(path, c.Now())
	gm, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: e})
	if err != nil {
		t.Fatal(err)
	}
	held(t, handle(gm, t, "One.")) // saves gm's endpoint's wait
	kept, err := llm.ReadEndpoints(path, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, k := range kept {
		urls = append(urls, k.URL)
	}
	if d := cmp.Diff([]string{s.URL(), "http://a/v1", "http://b/v1"}, urls); d != "" {
		t.Errorf("kept endpoints (-want +got):\n%s", d)
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
	// The journal has the outage's first failed call and the one that
	// ended it past the limit, which counts the calls between (each
	// call made had a line: an overnight outage filled the journal);
	// parley usage counts every call made.
	calls := journal(t, ws, workspace.ModelCalled)
	if len(calls) != 2 {
		t.Fatalf("%d model calls journaled, want 2: the outage's first failure and its end", len(calls))
	}
	if got, want := calls[1].Note, "the endpoint still unavailable past openai.outage_limit (10m), since 03:12:00 UTC (5m15s, 7 failed calls): messages fail again"; got != want {
		t.Errorf("the last call's note = %q, want %q", got, want)
	}
	if calls[0].FailedCalls != 0 || calls[1].FailedCalls != len(want)-1 {
		t.Errorf("failed calls journaled = %d, %d; want 0, %d", calls[0].FailedCalls, calls[1].FailedCalls, len(want)-1)
	}
	u, err := ws.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.Total.Calls != len(want)+1 || u.Total.Failed != len(want)+1 {
		t.Errorf("usage counts %d calls, %d failed; want %d, all failed: each call made", u.Total.Calls, u.Total.Failed, len(want)+1)
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

// TestOutageOneProbe: when the wait for an endpoint ends, one agent's
// call probes it; the others' messages wait for that call to end
// (OutageError.Probe), and follow when it is answered, or wait anew when
// it failed. Every agent of the endpoint called it at the same moment, a
// herd against a recovering gateway.
func TestOutageOneProbe(t *testing.T) {
	for _, recovered := range []bool{true, false} {
		name := "answered"
		if !recovered {
			name = "failed"
		}
		t.Run(name, func(t *testing.T) {
			limited := step{Status: 429, Header: map[string]string{"Retry-After": "300"}}
			probe := step{Content: "one", Delay: delay(2 * time.Second)}
			if !recovered {
				probe = limited
				probe.Delay = delay(2 * time.Second)
			}
			s := newStandin(t, limited, probe, step{Content: "two"})
			ws := table(t, s.URL(), "")
			c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
			shared := llm.NewEndpoints()
			var agents []*llm.Agent
			for range 2 {
				a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: shared})
				if err != nil {
					t.Fatal(err)
				}
				agents = append(agents, a)
			}
			held(t, handle(agents[0], t, "One."))
			c.add(300 * time.Second)

			probed := make(chan error, 1)
			go func() {
				_, err := agents[0].Handle(context.Background(), incoming(t, "Probe."))
				probed <- err
			}()
			for deadline := time.Now().Add(10 * time.Second); s.count() < 2; {
				if time.Now().After(deadline) {
					t.Fatal("the probe's request never came")
				}
				time.Sleep(time.Millisecond)
			}
			oe := held(t, handle(agents[1], t, "Follow."))
			if oe.Probe == nil || !strings.Contains(oe.Error(), "another agent's call, since 21:05:00 UTC, tries it first") {
				t.Fatalf("Handle while another's call probes = %v, want it held for that call (Probe set)", oe)
			}
			select {
			case <-oe.Probe:
				t.Fatal("Probe closed while the probing call is in flight")
			default:
			}
			if n := s.count(); n != 2 {
				t.Errorf("%d requests while one probes, want 2", n)
			}
			err := <-probed
			select {
			case <-oe.Probe:
			default:
				t.Fatal("Probe not closed once the probing call ended")
			}
			if recovered {
				if err != nil {
					t.Fatalf("the probe = %v, want an answer", err)
				}
				if err := handle(agents[1], t, "Follow."); err != nil {
					t.Fatalf("Handle after the probe was answered = %v, want an answer", err)
				}
				if n := s.count(); n != 3 {
					t.Errorf("%d requests, want 3", n)
				}
				return
			}
			if again := held(t, err); again.Probe != nil || !again.HoldUntil().Equal(c.Now().Add(300*time.Second)) {
				t.Errorf("the failed probe holds until %v (probe %v), want 5 minutes more", again.HoldUntil(), again.Probe)
			}
			if again := held(t, handle(agents[1], t, "Follow.")); again.Probe != nil || !again.HoldUntil().Equal(c.Now().Add(300*time.Second)) {
				t.Errorf("after a failed probe, held until %v (probe %v), want the endpoint's new wait", again.HoldUntil(), again.Probe)
			}
			if n := s.count(); n != 2 {
				t.Errorf("%d requests, want 2: the follower waits anew", n)
			}
		})
	}
}

// TestOutageProbeCutShort: a probing call that ends some other way (the
// runner stopping) ends the probe too: the next call probes.
func TestOutageProbeCutShort(t *testing.T) {
	limited := step{Status: 429, Header: map[string]string{"Retry-After": "300"}}
	s := newStandin(t, limited, step{Content: "one", Delay: delay(time.Minute)}, step{Content: "two"})
	ws := table(t, s.URL(), "")
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	shared := llm.NewEndpoints()
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now, Endpoints: shared})
	if err != nil {
		t.Fatal(err)
	}
	held(t, handle(a, t, "One."))
	c.add(300 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	probed := make(chan error, 1)
	go func() {
		_, err := a.Handle(ctx, incoming(t, "Probe."))
		probed <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); s.count() < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the probe's request never came")
		}
		time.Sleep(time.Millisecond)
	}
	oe := held(t, handle(a, t, "Follow."))
	cancel()
	<-probed
	select {
	case <-oe.Probe:
	case <-time.After(10 * time.Second):
		t.Fatal("Probe not closed once the probing call was cut short")
	}
	if err := handle(a, t, "Follow."); err != nil {
		t.Fatalf("Handle after the probe was cut short = %v, want a call, answered", err)
	}
}

// TestOutageJournaledOnce: an outage writes the journal a line when it
// begins (its first failed call) and one when it ends (the call
// answered, saying since when, how long and how many calls failed,
// FailedCalls counting those between), not one per try: an overnight
// outage filled the journal. parley usage still counts every call.
func TestOutageJournaledOnce(t *testing.T) {
	down := step{Status: 503}
	s := newStandin(t, down, down, down, down, step{Content: "back"})
	ws := table(t, s.URL(), "")
	c := &clock{now: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		oe := held(t, handle(a, t, "Hello?"))
		c.add(oe.HoldUntil().Sub(c.Now()))
	}
	if err := handle(a, t, "Hello?"); err != nil {
		t.Fatalf("Handle once the endpoint answers = %v", err)
	}
	type line struct {
		Failed      bool
		Note        string
		FailedCalls int
	}
	var got []line
	for _, e := range journal(t, ws, workspace.ModelCalled) {
		got = append(got, line{e.Reason != "", e.Note, e.FailedCalls})
	}
	want := []line{
		{Failed: true},
		{Note: "answered; the endpoint answers again, unavailable since 03:00:00 UTC (1m15s, 4 failed calls)", FailedCalls: 3},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("journal's model calls (-want +got):\n%s", d)
	}
	u, err := ws.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.Total.Calls != 5 || u.Total.Failed != 4 {
		t.Errorf("usage counts %d calls, %d failed; want 5, 4 failed", u.Total.Calls, u.Total.Failed)
	}
}

// TestOutageKeptNotStale: a kept outage whose next failure asked for no
// wait (a 503 without Retry-After: a pause of parley's own, not kept) is
// no longer kept, and once the endpoint answers the file says nothing
// of an outage going on: it said the wait had ended, not called since.
func TestOutageKeptNotStale(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "300"}}, step{Status: 503}, step{Content: "back"})
	ws := table(t, s.URL(), "")
	path := filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile)
	c := &clock{now: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}
	held(t, handle(keptRun(t, ws, c), t, "One."))
	c.add(5 * time.Minute)
	gm := keptRun(t, ws, c)
	oe := held(t, handle(gm, t, "Two."))
	c.add(oe.HoldUntil().Sub(c.Now()))
	if err := handle(gm, t, "Three."); err != nil {
		t.Fatalf("Handle once the endpoint answers = %v", err)
	}
	kept, err := llm.ReadEndpoints(path, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		if k.Ended.IsZero() {
			t.Errorf("kept after the endpoint answered: %s, want no outage going on", k.Text(c.Now()))
		}
	}
}
