package llm

import (
	"fmt"
	"strings"
	"sync"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Session counts what the openai agents of one run use, together and each:
// budgets are per session (a run of the runner). It is safe for
// concurrent use.
type Session struct {
	// ID names the session in the journal's model entries.
	ID string

	mu     sync.Mutex
	agents map[string]workspace.Usage
}

// NewSession returns a session with nothing used yet.
func NewSession(id string) *Session {
	return &Session{ID: id, agents: map[string]workspace.Usage{}}
}

func (s *Session) add(agent string, u workspace.Usage) {
	s.mu.Lock()
	s.agents[agent] = s.agents[agent].Add(u)
	s.mu.Unlock()
}

// Agent returns what an agent used in the session.
func (s *Session) Agent(name string) workspace.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[name]
}

// Total returns what every agent used in the session.
func (s *Session) Total() workspace.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t workspace.Usage
	for _, u := range s.agents {
		t = t.Add(u)
	}
	return t
}

// over says how a budget is used up by u, or "".
func over(b workspace.Budget, u workspace.Usage, whose string) string {
	switch {
	case b.Tokens > 0 && u.Tokens() >= b.Tokens:
		return fmt.Sprintf("%s budget of %d tokens is used up (%d used)", whose, b.Tokens, u.Tokens())
	case b.Cost > 0 && u.Cost >= b.Cost:
		return fmt.Sprintf("%s budget of %.2f is used up (%.4f used)", whose, b.Cost, u.Cost)
	}
	return ""
}

// withinBudget returns a *BudgetError once the agent's or the session's
// budget is used up, and tells the people once.
func (a *Agent) withinBudget() error {
	why := over(a.agent.Budget, a.opts.Session.Agent(a.agent.Name), a.agent.Name+"'s")
	if why == "" {
		why = over(a.opts.Workspace.Config.Budget, a.opts.Session.Total(), "the session's")
	}
	if why == "" {
		return nil
	}
	a.mu.Lock()
	first := !a.notified[BudgetNotice]
	a.notified[BudgetNotice] = true
	a.mu.Unlock()
	if first {
		a.tell(BudgetNotice, "", fmt.Sprintf("%s stopped: %s (budget in %s). The messages it is sent wait in its inbox until the next run of the runner, a new session.",
			a.agent.Name, why, workspace.ConfigFile))
	}
	return &BudgetError{Agent: a.agent.Name, Why: why}
}

// BudgetError is a budget used up: the agent calls its model no more in
// this session. It is ErrBudget (errors.Is), and asks the runner to stop
// the agent (StopAgent): its messages wait in its inbox for the next
// session, rather than being given up.
type BudgetError struct {
	Agent string
	Why   string // which budget, and what was used
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s: %v: %s; budget: in %s allows more in one session (a run)", e.Agent, ErrBudget, e.Why, workspace.ConfigFile)
}

// Is reports whether target is ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// StopAgent reports true: the agent stops for the rest of the run.
func (e *BudgetError) StopAgent() bool { return true }

// Kinds of the notices an openai agent sends the people of the workspace,
// in their notice: field.
const (
	BudgetNotice     = "budget_used_up"
	ToolRoundsNotice = "tool_rounds_used_up"
	KeyNotice        = "key_refused"
)

// keyRefused tells the people, once, that the endpoint refused the key
// (401, 403): the agent stops, as for a budget used up, its messages
// waiting for a run with the right key.
func (a *Agent) keyRefused(e *EndpointError) {
	a.mu.Lock()
	first := !a.notified[KeyNotice]
	a.notified[KeyNotice] = true
	a.mu.Unlock()
	if first {
		a.tell(KeyNotice, "", fmt.Sprintf("%s stopped: %v. The messages it is sent wait in its inbox until the next run of the runner.", a.agent.Name, e))
	}
}

// LogNotice is the key, in the log record of a notice an openai agent
// sends the people (see tell), of the notice's kind: a person's seat,
// which shows the notice itself, leaves the record out of what it shows.
const LogNotice = "notice"

// tell sends the people of the workspace (its human agents) a notice
// from the agent, through its outbox: the router checks and delivers it
// as any message. With nobody to tell, or when it cannot be written, it
// is logged.
func (a *Agent) tell(kind, about, text string) {
	ws := a.opts.Workspace
	people := ws.Undriven()
	a.opts.Logger.Warn(text, "agent", a.agent.Name, LogNotice, kind)
	if len(people) == 0 {
		return
	}
	m := mailbox.New([]byte(text + "\n"))
	m.SetNames("to", people)
	// Informal (no type:), with the kind in a field: a protocol knows no
	// type of parley's own, and would refuse one.
	m.SetValue("notice", kind)
	if about != "" {
		m.Set("reply_to", about)
	}
	if _, _, err := ws.Mailbox(a.agent.Name).Post(m); err != nil {
		a.opts.Logger.Error("telling the people", "agent", a.agent.Name, "err", err)
	}
}

// noUsage notes an answer with no usage figures ("usage": null, or none):
// when a budget applies to the agent, it cannot be kept, which the log
// and parley status (Note) say, once.
func (a *Agent) noUsage() {
	var budgets []string
	if b := a.agent.Budget; b.Tokens > 0 || b.Cost > 0 {
		budgets = append(budgets, a.agent.Name+"'s")
	}
	if b := a.opts.Workspace.Config.Budget; b.Tokens > 0 || b.Cost > 0 {
		budgets = append(budgets, "the session's")
	}
	if len(budgets) == 0 {
		return
	}
	a.mu.Lock()
	first := !a.notified[noUsageNote]
	a.notified[noUsageNote] = true
	if first {
		a.note = fmt.Sprintf("%s budget (budget: in %s) cannot be kept: model endpoint %s reports no usage figures in its answers, so its calls count no tokens",
			strings.Join(budgets, " and "), workspace.ConfigFile, a.Endpoint())
	}
	note := a.note
	a.mu.Unlock()
	if first {
		a.opts.Logger.Warn(note, "agent", a.agent.Name)
	}
}

// noUsageNote marks the note of an endpoint that reports no usage as
// made.
const noUsageNote = "no_usage"

// Note returns what parley status says of the agent until the run ends,
// or "": a budget it cannot keep, its endpoint reporting no usage.
func (a *Agent) Note() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.note
}
