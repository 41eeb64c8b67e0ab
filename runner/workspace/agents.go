package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/internal/visible"
)

// What an agent's driver is doing, as `parley status` shows it.
const (
	StateIdle     = "idle"     // nothing to do
	StateWorking  = "working"  // handling a message
	StateRetrying = "retrying" // a message failed; it is tried again soon
	StateFailed   = "failed"   // gave up the last message (it is in dead/)
	StateStopped  = "stopped"  // shut down: messages wait in its inbox
	StateWaiting  = "waiting"  // a human agent with messages to read
	// StateUnresponsive marks an agent that did not answer in time, even
	// after a nudge (timeouts: in parley.yaml).
	StateUnresponsive = "unresponsive"
)

// AgentRun is what the runner last knew of an agent's driver.
type AgentRun struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"` // the message being handled
	// Attempt is the attempt at Message: the one being made (working),
	// or the one that failed (retrying); 1 for the first. 0 when not
	// known (another state, or a runner that did not write it).
	Attempt int `json:"attempt,omitempty"`
	// Failed is why the last failed attempt at Message failed (Attempt
	// while retrying, the one before while working): a runner that
	// starts again says it in the journal's line of the message when
	// it is handled ("attempt 1 failed: ...").
	Failed string    `json:"failed,omitempty"`
	Since  time.Time `json:"since"`
	// Stopped is set once the agent approved a shutdown request: its
	// driver does not run again in this run; messages wait in its inbox.
	Stopped bool `json:"stopped,omitempty"`
	// Note is the last thing to know: a shutdown refused, and why; an
	// agent that did not answer in time.
	Note string `json:"note,omitempty"`
	// Late is the message an agent did not answer in time (timeouts:)
	// while its program is still at work on it: it is working, and
	// late; unresponsive once the program is done without an answer.
	Late string `json:"late,omitempty"`
	// Awaited are the replies the runner awaits from the agent (timeouts:
	// in parley.yaml), the one due first first. A runner that starts
	// takes up the waits of the one before it.
	Awaited []Awaited `json:"awaited,omitempty"`
}

// Silent returns the message the agent did not answer in time in that
// run: the one it was marked unresponsive on, or late on while its
// program was at work on it; "" when none. A runner that starts takes it
// up: the agent stays unresponsive until it speaks.
func (r AgentRun) Silent() string {
	if r.State == StateUnresponsive {
		return r.Message
	}
	return r.Late
}

// Awaited is a reply a runner awaits by the workspace's timeouts: the
// agent that should answer, the message it should answer (its id and
// type), who sent it, when it is due (then the agent is nudged, or marked
// unresponsive), by which rule of timeouts:, and whether the agent was
// nudged already.
type Awaited struct {
	Agent   string        `json:"agent"`
	Message string        `json:"message"`
	Type    string        `json:"type,omitempty"`
	From    string        `json:"from"`
	Until   time.Time     `json:"until"`
	After   time.Duration `json:"after"`  // the rule's after:, written as in parley.yaml ("2m0s")
	Policy  string        `json:"policy"` // the rule, as the log names it (timeouts[0])
	// Rule is all the rule is (Timeout.Rule): the next runner takes the
	// wait up under the rule that is the same, wherever it is now.
	Rule string `json:"rule,omitempty"`
	// Nudged is set once the agent's nudge is due and was sent, or
	// refused (Unsent): either way it is not tried again.
	Nudged bool `json:"nudged,omitempty"`
	// Unsent is why the nudge was not sent: refused, as a message of the
	// one waiting, by the protocol; one line, each problem after a "; ".
	Unsent string `json:"unsent,omitempty"`
	// Nudge is the id of the nudge sent: a runner that takes up the
	// wait knows it for parley's when it routes it (it is never itself
	// waited on).
	Nudge string `json:"nudge,omitempty"`
}

// awaitedJSON is Awaited as agents.json has it: after: written as a
// person reads it ("2m0s"), not in nanoseconds.
type awaitedJSON struct {
	plainAwaited
	After string `json:"after"`
}

type plainAwaited Awaited

// MarshalJSON writes after: as a duration ("2m0s").
func (a Awaited) MarshalJSON() ([]byte, error) {
	return json.Marshal(awaitedJSON{plainAwaited(a), a.After.String()})
}

// UnmarshalJSON reads after: as a duration, or in nanoseconds as the
// runners before it wrote it.
func (a *Awaited) UnmarshalJSON(b []byte) error {
	var v struct {
		plainAwaited
		After json.RawMessage `json:"after"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = Awaited(v.plainAwaited)
	if len(v.After) == 0 || string(v.After) == "null" {
		return nil
	}
	var text string
	if json.Unmarshal(v.After, &text) == nil {
		d, err := time.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("after: %w", err)
		}
		a.After = d
		return nil
	}
	var ns int64
	if err := json.Unmarshal(v.After, &ns); err != nil {
		return fmt.Errorf("after: %s is neither a duration nor nanoseconds", v.After)
	}
	a.After = time.Duration(ns)
	return nil
}

// AgentsPath returns the path of the file where the runner keeps what each
// agent's driver is doing (.parley/agents.json).
func (w *Workspace) AgentsPath() string { return filepath.Join(w.Root, StateDir, "agents.json") }

// AgentRuns reads what the runner last wrote about each agent's driver.
func (w *Workspace) AgentRuns() (map[string]AgentRun, error) {
	data, err := os.ReadFile(w.AgentsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]AgentRun{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]AgentRun{}
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]AgentRun{}, nil
	}
	return out, nil
}

// Text says of a reply awaited from an agent who awaits it, and until
// when, as parley status and the web view show it: "gm awaits its answer
// to ID until 15:04:05 (in 1m20s; timeouts: after 2m)", "due now, after
// a nudge" once nudged and due; of a nudge refused, that it was not sent,
// and why, never "after a nudge".
func (a Awaited) Text(now time.Time) string {
	due := "due now"
	if d := a.Until.Sub(now).Round(time.Second); d > 0 {
		due = "in " + ShortDuration(d)
	}
	if a.Nudged && a.Unsent == "" {
		due += ", after a nudge"
	}
	text := fmt.Sprintf("%s awaits its answer to %s until %s (%s; timeouts: after %s)",
		visible.Line(a.From), visible.Line(a.Message), a.Until.Local().Format("15:04:05"), due, ShortDuration(a.After))
	if a.Unsent != "" {
		text += "; its nudge was not sent: " + visible.Line(a.Unsent)
	}
	return text
}

// ShortDuration writes d as parley.yaml does: 10m, 1h30m, 45s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
