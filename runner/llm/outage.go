package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sort"
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
// messages until then. Then one call probes it, the next real message
// of the first agent to try, while the others wait for that call to end
// (OutageError.Probe): they follow once it answered, and wait anew when
// it failed, so that a recovering endpoint (a rate-limited gateway) gets
// one request, not one per agent at the same moment. Past
// openai.outage_limit since the first failure, messages fail again as
// any other error would.
//
// The journal gets the outage's first failed call, and the call that
// ends it (answered, or failed past the limit), which says since when,
// how long and how many calls failed (Entry.FailedCalls counts those
// not journaled one by one for parley usage): not a line per try.

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
	// ended are the kept outages that ended (the endpoint answered),
	// kept for KeptFor for parley status, by endpointKey.
	ended map[string]KeptEndpoint
	// kept is the file the waits endpoints asked for (Retry-After) are
	// kept in, for the next run (see Keep); "" keeps none.
	kept string
}

// EndpointsFile is the file in a workspace's .parley/ that keeps the
// waits endpoints asked for, for the next run (Endpoints.Keep).
const EndpointsFile = "endpoints.json"

// KeptFor is how long EndpointsFile keeps an outage after its wait
// ended with no call since, or after it ended (the endpoint answered):
// parley status shows it meanwhile. A wait still in force is always
// kept.
const KeptFor = 24 * time.Hour

// inRunBefore ends what an endpoint said in a run before, taken up.
const inRunBefore = " (in a run before)"

// KeptEndpoint is an outage of an endpoint, as EndpointsFile keeps it:
// a wait the endpoint asked for (Retry-After), for the next run, or an
// outage that ended, for parley status.
type KeptEndpoint struct {
	URL        string        `json:"url"`
	Status     int           `json:"status"` // what it last answered; 0: no connection
	Said       string        `json:"said"`
	NotBefore  time.Time     `json:"not_before"`  // not called before
	RetryAfter time.Duration `json:"retry_after"` // what it last asked
	// Since and Failures carry the outage on: openai.outage_limit
	// counts from its first failure, whichever run saw it (if the run
	// is started within openai.outage_limit of the wait's end).
	Since    time.Time `json:"since"`
	Failures int       `json:"failures"`
	// Unjournaled counts the failed calls not journaled yet (see the
	// package comment), written on the line that ends the outage.
	Unjournaled int `json:"unjournaled,omitempty"`
	// Ended is when the endpoint answered again; zero while the outage
	// lasts.
	Ended time.Time `json:"ended,omitzero"`
}

// Keep keeps the waits endpoints ask for (Retry-After) in the file at
// path, and takes up those a run before kept there (at now): a run
// until idle started each minute by cron would otherwise call an
// endpoint that asked for five minutes each minute. Only what an
// endpoint asked is kept: a pause of parley's own after a refused
// connection is not (a person who started the endpoint, then parley,
// wants it called). The outage's start and failures are kept with it,
// for openai.outage_limit, until the endpoint answers, or KeptFor after
// the wait ended with no call since; an outage that ended is kept for
// KeptFor too, for parley status (ReadEndpoints). The first call sets
// the file; later calls do nothing.
func (e *Endpoints) Keep(path string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kept != "" {
		return
	}
	e.kept = path
	kept, err := readKept(path)
	if err != nil {
		return
	}
	for key, k := range kept {
		if _, ok := e.down[key]; ok || !k.kept(now) {
			continue
		}
		if !k.Ended.IsZero() {
			e.ended[key] = k
			continue
		}
		since, failures := k.Since, k.Failures
		if since.IsZero() || since.After(now) {
			since = now
		}
		e.down[key] = &outage{since: since, failures: max(failures, 1), next: k.NotBefore, retryAfter: k.RetryAfter, quiet: k.Unjournaled, filed: true,
			last: &EndpointError{URL: k.URL, Status: k.Status, Sent: true, Err: errors.New(k.Said + inRunBefore)}}
	}
}

// kept reports whether k is still kept at now: a wait in force always;
// one over, or an outage that ended, for KeptFor.
func (k KeptEndpoint) kept(now time.Time) bool {
	if !k.Ended.IsZero() {
		return now.Before(k.Ended.Add(KeptFor))
	}
	return now.Before(k.NotBefore.Add(KeptFor))
}

// readKept reads the kept file at path.
func readKept(path string) (map[string]KeptEndpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kept map[string]KeptEndpoint
	if err := json.Unmarshal(data, &kept); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kept, nil
}

// ReadEndpoints returns the outages the file at path (a workspace's
// .parley/endpoints.json) keeps at now, by URL then key: the waits
// endpoints asked for, and the outages that ended within KeptFor. A
// missing file keeps none.
func ReadEndpoints(path string, now time.Time) ([]KeptEndpoint, error) {
	kept, err := readKept(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(kept))
	for key, k := range kept {
		if k.kept(now) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	out := make([]KeptEndpoint, 0, len(keys))
	for _, key := range keys {
		out = append(out, kept[key])
	}
	return out, nil
}

// Text says what k says at now, for parley status: the endpoint, how
// it last failed, since when, and whether its wait is in force, over
// (not called since) or the outage ended.
func (k KeptEndpoint) Text(now time.Time) string {
	at := func(t time.Time) string {
		if y, m, d := t.UTC().Date(); y == now.UTC().Year() && m == now.UTC().Month() && d == now.UTC().Day() {
			return t.UTC().Format("15:04:05 UTC")
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	said := fmt.Sprintf("answered %d: %s", k.Status, k.Said)
	if k.Status == 0 {
		said = "unreachable: " + k.Said
	}
	calls := fmt.Sprintf("%d failed %s", k.Failures, plural(k.Failures, "call", "calls"))
	switch {
	case !k.Ended.IsZero():
		return fmt.Sprintf("%s: answers again since %s; unavailable from %s (%s, %s; last %s)", k.URL, at(k.Ended), at(k.Since), roughly(k.Ended.Sub(k.Since)), calls, said)
	case now.Before(k.NotBefore):
		return fmt.Sprintf("%s: unavailable since %s (%s; last %s); not called before %s (Retry-After %s)", k.URL, at(k.Since), calls, said, at(k.NotBefore), roughly(k.RetryAfter))
	}
	return fmt.Sprintf("%s: unavailable since %s (%s; last %s); its wait ended at %s, not called since", k.URL, at(k.Since), calls, said, at(k.NotBefore))
}

// save writes the waits endpoints asked for that are kept at now, and
// the outages that ended within KeptFor, to the kept file, or removes it
// when there are none. Called with mu held.
func (e *Endpoints) save(now time.Time) {
	if e.kept == "" {
		return
	}
	kept := map[string]KeptEndpoint{}
	for key, k := range e.ended {
		if k.kept(now) {
			kept[key] = k
		}
	}
	for key, o := range e.down {
		k := o.keptAs()
		o.filed = o.retryAfter > 0 && !o.givenUp && k.kept(now)
		if o.filed {
			kept[key] = k
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

// keptAs is the outage as the kept file keeps it.
func (o *outage) keptAs() KeptEndpoint {
	k := KeptEndpoint{NotBefore: o.next, RetryAfter: o.retryAfter, Since: o.since, Failures: o.failures, Unjournaled: o.quiet}
	if o.last != nil {
		k.URL, k.Status, k.Said = o.last.URL, o.last.Status, strings.TrimSuffix(fmt.Sprint(o.last.Err), inRunBefore)
	}
	return k
}

// NewEndpoints returns a record of endpoints all up.
func NewEndpoints() *Endpoints {
	return &Endpoints{First: FirstBackoff, Max: MaxBackoff, down: map[string]*outage{}, ended: map[string]KeptEndpoint{}}
}

// outage is what is known of an endpoint that cannot be used.
type outage struct {
	since      time.Time
	last       *EndpointError // the last failure
	failures   int            // failed calls since
	next       time.Time      // not called before
	retryAfter time.Duration  // what the endpoint last asked (Retry-After), 0 when nothing
	givenUp    bool           // past the limit: messages fail again
	// quiet counts the failed calls not journaled one by one: all but
	// the outage's first (see the package comment).
	quiet int
	// probe is open while a call probes the endpoint, its wait over:
	// closed when that call ends, which the other agents wait for;
	// probing is when that call began.
	probe   chan struct{}
	probing time.Time
	// filed is set while the kept file holds the outage (see save).
	filed bool
}

// endProbe ends the probe of the endpoint, if one is made: the agents
// that wait for it try again.
func (o *outage) endProbe() {
	if o.probe != nil {
		close(o.probe)
		o.probe = nil
	}
}

// endpointKey names the agent's endpoint in Endpoints: its base URL and
// the variable of its key (a rate limit may be the key's, not the
// endpoint's).
func (a *Agent) endpointKey() string { return a.Endpoint() + " " + a.model.KeyEnv }

// held returns the outage that holds a call to url at now, or nil when
// the endpoint may be called. A call made once an outage's wait is over
// probes the endpoint: probe is then set, and the caller passes it to
// probed when the call ends; the calls of the other agents are held
// meanwhile, until the probe ends (OutageError.Probe) or, at the
// latest, bound after now.
func (e *Endpoints) held(url string, now time.Time, limit, bound time.Duration) (held *OutageError, probe chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	if o == nil || o.givenUp || limit <= 0 || o.next.Sub(o.since) > limit {
		// (A wait past the limit, kept by a run before: not held,
		// as this run would not hold it either.)
		return nil, nil
	}
	if now.Before(o.next) {
		return o.error(limit), nil
	}
	if o.probe != nil {
		held = o.error(limit)
		held.Next, held.Probe, held.Probing = now.Add(bound), o.probe, o.probing
		return held, nil
	}
	o.probe, o.probing = make(chan struct{}), now
	return nil, o.probe
}

// longestCall bounds how long a call to the endpoint may take: each of
// the client's tries within openai.timeout, and the pauses between them
// (a Retry-After of up to 5 seconds). An agent that waits for another's
// call probing the endpoint tries again at the latest then.
func (a *Agent) longestCall() time.Duration {
	if a.model.Timeout <= 0 {
		return MaxBackoff
	}
	return time.Duration(a.model.MaxRetries+1) * (a.model.Timeout + 5*time.Second)
}

// probed notes that the call that probed url (probe, from held) ended,
// however it did: the agents waiting for it try again.
func (e *Endpoints) probed(url string, probe chan struct{}) {
	if probe == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if o := e.down[url]; o != nil && o.probe == probe {
		o.endProbe()
	}
}

// failed notes a failed call to url at now (err), and returns the
// outage that holds the message, or nil when it fails as any other
// error: the endpoint was usable a moment ago for another reason, or
// the outage has lasted past limit. first is set when the call began
// the outage; over, a copy of the outage, when the call ended the wait
// for it. A call held that did not begin the outage is counted among
// its quiet ones: not journaled.
func (e *Endpoints) failed(url string, now time.Time, err *EndpointError, retryAfter time.Duration, limit time.Duration) (held *OutageError, first bool, over *outage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	if o != nil && limit > 0 && now.Sub(o.next) > limit {
		// Not called for longer than the limit since its wait ended
		// (a run started long after one before): nothing says it was
		// down meanwhile. An outage begins anew (its calls not
		// journaled yet counted at the new one's end).
		o.endProbe()
		o = &outage{since: now, quiet: o.quiet, filed: o.filed}
		e.down[url] = o
		first = true
	}
	if o == nil {
		o = &outage{since: now}
		e.down[url] = o
		first = true
		if _, ok := e.ended[url]; ok {
			delete(e.ended, url)
			e.save(now)
		}
	}
	o.last, o.retryAfter = err, retryAfter
	o.failures++
	o.endProbe()
	wait := min(e.First<<min(o.failures-1, 16), e.Max)
	o.next = now.Add(max(wait, retryAfter))
	if !o.givenUp && (limit <= 0 || o.next.Sub(o.since) > limit) {
		o.givenUp = true
		if !first {
			ended := *o
			over = &ended
			o.quiet = 0 // told by this call's line; the next are journaled
		}
	}
	if !o.givenUp && !first {
		o.quiet++
	}
	if retryAfter > 0 || o.filed {
		// (A wait given up is not kept, nor a pause of parley's own:
		// the file then no longer holds the outage.)
		e.save(now)
	}
	if o.givenUp {
		return nil, first, over
	}
	return o.error(limit), first, nil
}

// answered notes that url answered: its outage, if any, is over, and
// returned.
func (e *Endpoints) answered(url string, now time.Time) *outage {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.down[url]
	delete(e.down, url)
	if o != nil {
		o.endProbe()
		if o.filed {
			// Kept: now as an outage that ended, for parley status.
			k := o.keptAs()
			k.Ended, k.Unjournaled = now, 0
			e.ended[url] = k
			e.save(now)
		}
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
	// Probe, when set, is closed once another agent's call, which
	// probes the endpoint since Probing (its wait over), ends: the
	// message is handled again then (the runner waits for it, Next
	// bounding the wait), and its call follows only when the probe's
	// was answered.
	Probe   <-chan struct{}
	Probing time.Time
}

func (e *OutageError) Error() string {
	s := fmt.Sprintf("waiting for its model endpoint: %v; unavailable since %s (%d failed %s)",
		e.Err, e.Since.UTC().Format("15:04:05 UTC"), e.Failures, plural(e.Failures, "call", "calls"))
	if e.Probe != nil {
		s += fmt.Sprintf("; another agent's call, since %s, tries it first: this one follows once it is answered",
			e.Probing.UTC().Format("15:04:05 UTC"))
	} else {
		s += "; next try at " + e.Next.UTC().Format("15:04:05 UTC")
		if e.RetryAfter > 0 {
			s += fmt.Sprintf(" (Retry-After %s)", roughly(e.RetryAfter))
		}
	}
	return s + fmt.Sprintf("; given up at %s UTC (openai.outage_limit %s in %s)",
		e.Since.Add(e.Limit).UTC().Format("15:04:05"), workspace.ShortDuration(e.Limit), workspace.ConfigFile)
}

func (e *OutageError) Unwrap() error { return e.Err }

// HoldUntil returns when the message may be handled again: the runner
// waits until then, the message claimed, and counts no attempt.
func (e *OutageError) HoldUntil() time.Time { return e.Next }

// Following returns the channel closed when the call this message waits
// for (Probe) ends, or nil when it waits for a time alone (HoldUntil).
func (e *OutageError) Following() <-chan struct{} { return e.Probe }

// unavailable notes a failed call (err; header is the Retry-After of
// the last answer, if any): an endpoint that cannot be used for now
// holds the message, as an *OutageError; otherwise err is returned,
// saying the Retry-After the endpoint asked for when that is longer
// than parley waits (the message is then not tried again). quiet is set
// for a call that is not journaled: a failed try of an outage, neither
// its first nor its last (see the package comment); the call that ends
// an outage past openai.outage_limit gets its note in entry.
func (a *Agent) unavailable(err error, header string, entry *workspace.Entry) (_ error, quiet bool) {
	ee, ok := err.(*EndpointError)
	if !ok {
		return err, false
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
		if over != nil {
			a.opts.Logger.Warn("model endpoint still unavailable past openai.outage_limit: messages fail again", "agent", a.agent.Name, "endpoint", url, "outage_limit", a.model.OutageLimit, "err", ee)
			entry.FailedCalls = over.quiet
			entry.Note = fmt.Sprintf("the endpoint still unavailable past openai.outage_limit (%s), since %s UTC (%s, %d failed %s): messages fail again",
				workspace.ShortDuration(a.model.OutageLimit), over.since.UTC().Format("15:04:05"), roughly(now.Sub(over.since)), over.failures, plural(over.failures, "call", "calls"))
		}
		if held != nil {
			return held, !first
		}
	}
	if asked > MaxRetryAfter {
		ee.RetryAfter, ee.RetryAt, ee.Waits = asked, now.Add(asked), a.model.OutageLimit
	}
	return ee, false
}

// answeredAgain notes that the endpoint answered: an outage of it is
// over, which the log says once, and the note returned says for the
// journal, with the outage's failed calls not journaled one by one
// (quiet); "" when there was none.
func (a *Agent) answeredAgain() (note string, quiet int) {
	o := a.opts.Endpoints.answered(a.endpointKey(), a.opts.Now())
	if o == nil {
		return "", 0
	}
	lasted := a.opts.Now().Sub(o.since)
	a.opts.Logger.Info("model endpoint answers again", "agent", a.agent.Name, "endpoint", a.Endpoint(),
		"unavailable_for", roughly(lasted), "failed_calls", o.failures)
	return fmt.Sprintf("the endpoint answers again, unavailable since %s UTC (%s, %d failed %s)",
		o.since.UTC().Format("15:04:05"), roughly(lasted), o.failures, plural(o.failures, "call", "calls")), o.quiet
}
