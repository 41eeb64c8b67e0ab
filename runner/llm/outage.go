package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// An endpoint that cannot be used for now — no connection (refused,
// reset, no such host, a connection that timed out), 429, 502, 503,
// 504 — is the endpoint's trouble, not the message's: the agent holds
// its message (an *OutageError, which the runner waits out with the
// message claimed) and calls the endpoint again after a pause that
// doubles from FirstBackoff up to MaxBackoff, or later when the
// endpoint asked so (Retry-After). Every agent of the run that calls
// the same endpoint with the same key (Options.Endpoints) holds its
// messages until then, and the next real message probes it. Past
// openai.outage_limit since the first failure, messages fail again as
// any other error would.

// Pauses between calls to an endpoint that cannot be used.
const (
	FirstBackoff = 5 * time.Second
	MaxBackoff   = 5 * time.Minute
)

// Endpoints is what a run knows of its model endpoints: which cannot be
// used now, since when, and when each may be called again. The agents
// of a run that call one endpoint share it: one that learns the
// endpoint is down, or asked to be left alone, spares the others their
// calls. It is safe for concurrent use.
type Endpoints struct {
	// First is the pause after a first failure, doubled after each
	// next one up to Max; NewEndpoints sets FirstBackoff and MaxBackoff.
	First, Max time.Duration

	mu   sync.Mutex
	down map[string]*outage // by endpointKey
	// kept is the file the waits endpoints asked for (Retry-After) are
	// kept in, for the next run (see Keep); "" keeps none.
	kept string
}

// EndpointsFile is the file in a workspace's .parley/ that keeps the
// waits endpoints asked for, for the next run (Endpoints.Keep).
const EndpointsFile = "endpoints.json"

// inRunBefore ends what an endpoint said in a run before, taken up.
const inRunBefore = " (in a run before)"

// asked is a wait an endpoint asked for, as kept for the next run.
type asked struct {
	URL        string        `json:"url"`
	Status     int           `json:"status"`
	Said       string        `json:"said"`
	NotBefore  time.Time     `json:"not_before"`
	RetryAfter time.Duration `json:"retry_after"`
	// Since and Failures carry the outage on: openai.outage_limit
	// counts from its first failure, whichever run saw it.
	Since    time.Time `json:"since"`
	Failures int       `json:"failures"`
}

// Keep keeps the waits endpoints ask for (Retry-After) in the file at
// path, and takes up those a run before kept there that are not over
// (at now): a run until idle started each minute by cron would
// otherwise call an endpoint that asked for five minutes each minute.
// Only what an endpoint asked is kept: a pause of parley's own after a
// refused connection is not (a person who started the endpoint, then
// parley, wants it called). The outage's start and failures are kept
// with it, for openai.outage_limit, until the endpoint answers, or a
// longest pause (Max) after the wait ended. The first call sets the file; later calls
// do nothing.
func (e *Endpoints) Keep(path string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kept != "" {
		return
	}
	e.kept = path
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var kept map[string]asked
	if json.Unmarshal(data, &kept) != nil {
		return
	}
	for key, k := range kept {
		// A wait over for less than the longest pause still carries its
		// outage on (a run started by cron each minute continues it);
		// one long over is forgotten.
		if _, ok := e.down[key]; ok || !now.Before(k.NotBefore.Add(e.Max)) {
			continue
		}
		since, failures := k.Since, k.Failures
		if since.IsZero() || since.After(now) {
			since = now
		}
		e.down[key] = &outage{since: since, failures: max(failures, 1), next: k.NotBefore, retryAfter: k.RetryAfter,
			last: &EndpointError{URL: k.URL, Status: k.Status, Sent: true, Err: errors.New(k.Said + inRunBefore)}}
	}
}

// save writes the waits endpoints asked for that are not over (at now)
// to the kept file, or removes it when there are none. Called with mu
// held.
func (e *Endpoints) save(now time.Time) {
	if e.kept == "" {
		return
	}
	kept := map[string]asked{}
	for key, o := range e.down {
		if o.retryAfter > 0 && !o.givenUp && now.Before(o.next.Add(e.Max)) && o.last != nil {
			kept[key] = asked{URL: o.last.URL, Status: o.last.Status, Said: strings.TrimSuffix(fmt.Sprint(o.last.Err), inRunBefore), NotBefore: o.next, RetryAfter: o.retryAfter, Since: o.since, Failures: o.failures}
		}
	}
	if len(kept) == 0 {
		_ = os.Remove(e.kept) // none left to keep (or none kept)
		return
	}
	data, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		return
	}
	_ = mailbox.WriteFileAtomic(e.kept, append(data, '\n')) // kept at best: the wait holds in this run either way
}

// NewEndpoints returns a record of endpoints all up.
func NewEndpoints() *Endpoints {
	return &Endpoints{First: FirstBackoff, Max: MaxBackoff, down: map[string]*outage{}}
}

// outage is what is known of an endpoint that cannot be used.
type outage struct {
	since      time.Time
	last       *EndpointError // the last failure
	failures   int            // failed calls since
	next       time.Time      // not called before
	retryAfter time.Duration  // what the endpoint last asked (Retry-After), 0 when nothing
	givenUp    bool           // past the limit: messages fail again
}

// endpointKey names the agent's endpoint in Endpoints: its base URL and
// the variable of its key (a rate limit may be the key's, not the
// endpoint's).
func (a *Agent) endpointKey() string { return a.Endpoint() + " " + a.model.KeyEnv }

// held returns the outage that holds a call to url at now, or nil when
// the endpoint may be called.
func (e *Endpoints) held(url string, now time.Time, limit time.Duration) *OutageError {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	if o == nil || o.givenUp || !now.Before(o.next) || limit <= 0 || o.next.Sub(o.since) > limit {
		// (A wait past the limit, kept by a run before: not held,
		// as this run would not hold it either.)
		return nil
	}
	return o.error(limit)
}

// failed notes a failed call to url at now (err), and returns the
// outage that holds the message, or nil when it fails as any other
// error: the endpoint was usable a moment ago for another reason, or
// the outage has lasted past limit. first is set when the call began
// the outage; over when the call ended the wait for it.
func (e *Endpoints) failed(url string, now time.Time, err *EndpointError, retryAfter time.Duration, limit time.Duration) (held *OutageError, first, over bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	if o == nil {
		o = &outage{since: now}
		e.down[url] = o
		first = true
	}
	o.last, o.retryAfter = err, retryAfter
	o.failures++
	wait := min(e.First<<min(o.failures-1, 16), e.Max)
	o.next = now.Add(max(wait, retryAfter))
	if !o.givenUp && (limit <= 0 || o.next.Sub(o.since) > limit) {
		o.givenUp = true
		over = !first
	}
	if retryAfter > 0 {
		e.save(now) // (a wait given up is not kept)
	}
	if o.givenUp {
		return nil, first, over
	}
	return o.error(limit), first, false
}

// answered notes that url answered: its outage, if any, is over, and
// returned.
func (e *Endpoints) answered(url string, now time.Time) *outage {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	delete(e.down, url)
	if o != nil && o.retryAfter > 0 {
		e.save(now)
	}
	return o
}

func (o *outage) error(limit time.Duration) *OutageError {
	return &OutageError{Err: o.last, Since: o.since, Next: o.next, Failures: o.failures, RetryAfter: o.retryAfter, Limit: limit}
}

// Unavailable reports whether the endpoint could not be used for now,
// through no fault of the request's: no connection (refused, reset, no
// such host, a connection that timed out before the request was sent),
// or 429, 502, 503, 504. A request that was sent and not answered
// within openai.timeout is not: a model may hang on one request alone.
func (e *EndpointError) Unavailable() bool {
	if e.CutShort {
		return false
	}
	switch e.Status {
	case 0:
		return e.Timeout == 0 || !e.Sent
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// OutageError is a message held for its endpoint: the endpoint cannot
// be used for now (Err says how it last failed), and is not called
// again before Next. The message is not at fault: it waits, claimed,
// and is handled again then (HoldUntil).
type OutageError struct {
	Err        *EndpointError
	Since      time.Time     // the first failure
	Next       time.Time     // the next call, not before
	Failures   int           // failed calls since
	RetryAfter time.Duration // what the endpoint asked, 0 when nothing
	Limit      time.Duration // openai.outage_limit
}

func (e *OutageError) Error() string {
	s := fmt.Sprintf("waiting for its model endpoint: %v; unavailable since %s (%d failed %s); next try at %s",
		e.Err, e.Since.UTC().Format("15:04:05 UTC"), e.Failures, plural(e.Failures, "call", "calls"), e.Next.UTC().Format("15:04:05 UTC"))
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (Retry-After %s)", roughly(e.RetryAfter))
	}
	return s + fmt.Sprintf("; given up at %s UTC (openai.outage_limit %s in %s)",
		e.Since.Add(e.Limit).UTC().Format("15:04:05"), workspace.ShortDuration(e.Limit), workspace.ConfigFile)
}

func (e *OutageError) Unwrap() error { return e.Err }

// HoldUntil returns when the message may be handled again: the runner
// waits until then, the message claimed, and counts no attempt.
func (e *OutageError) HoldUntil() time.Time { return e.Next }

// unavailable notes a failed call (err; header is the Retry-After of
// the last answer, if any): an endpoint that cannot be used for now
// holds the message, as an *OutageError; otherwise err is returned,
// saying the Retry-After the endpoint asked for when that is longer
// than parley waits (the message is then not tried again).
func (a *Agent) unavailable(err error, header string) error {
	ee, ok := err.(*EndpointError)
	if !ok {
		return err
	}
	now := a.opts.Now()
	asked, ok := retryAfter(header, now)
	if !ok || asked < 0 {
		asked = 0
	}
	if ee.Unavailable() {
		url := a.Endpoint()
		held, first, over := a.opts.Endpoints.failed(a.endpointKey(), now, ee, asked, a.model.OutageLimit)
		if first && held != nil {
			a.opts.Logger.Warn("model endpoint unavailable: the messages of the agents that call it wait", "agent", a.agent.Name, "endpoint", url, "next_try", held.Next.UTC().Format(time.TimeOnly), "err", ee)
		}
		if over {
			a.opts.Logger.Warn("model endpoint still unavailable past openai.outage_limit: messages fail again", "agent", a.agent.Name, "endpoint", url, "outage_limit", a.model.OutageLimit, "err", ee)
		}
		if held != nil {
			return held
		}
	}
	if asked > MaxRetryAfter {
		ee.RetryAfter, ee.RetryAt, ee.Waits = asked, now.Add(asked), a.model.OutageLimit
	}
	return ee
}

// answeredAgain notes that the endpoint answered: an outage of it is
// over, which the log says once, and the note returned says for the
// journal; "" when there was none.
func (a *Agent) answeredAgain() string {
	o := a.opts.Endpoints.answered(a.endpointKey(), a.opts.Now())
	if o == nil {
		return ""
	}
	lasted := a.opts.Now().Sub(o.since)
	a.opts.Logger.Info("model endpoint answers again", "agent", a.agent.Name, "endpoint", a.Endpoint(),
		"unavailable_for", roughly(lasted), "failed_calls", o.failures)
	return fmt.Sprintf("the endpoint answers again, unavailable since %s UTC (%s, %d failed %s)",
		o.since.UTC().Format("15:04:05"), roughly(lasted), o.failures, plural(o.failures, "call", "calls"))
}
