package workspace

import (
	"sort"
)

// Usage is what model calls used: the endpoint's token counts, and their
// cost at the prices of parley.yaml (0 for a model without a price). The
// openai driver counts a session's as it goes (against the budgets);
// Workspace.Usage sums the journal's model entries (ModelCalled).
type Usage struct {
	Calls  int `json:"calls"`
	Failed int `json:"failed,omitempty"` // calls that got no answer
	// Interrupted counts the calls cut short by the runner stopping
	// (Entry.Interrupted), among Failed: the endpoint may have counted
	// tokens for them that are not here.
	Interrupted int     `json:"interrupted,omitempty"`
	TokensIn    int64   `json:"tokens_in"`
	TokensOut   int64   `json:"tokens_out"`
	Cost        float64 `json:"cost,omitempty"`
}

// Tokens returns the tokens in and out together.
func (u Usage) Tokens() int64 { return u.TokensIn + u.TokensOut }

// Add returns u with v added.
func (u Usage) Add(v Usage) Usage {
	return Usage{Calls: u.Calls + v.Calls, Failed: u.Failed + v.Failed, Interrupted: u.Interrupted + v.Interrupted, TokensIn: u.TokensIn + v.TokensIn, TokensOut: u.TokensOut + v.TokensOut, Cost: u.Cost + v.Cost}
}

func (u *Usage) add(e *Entry, prices map[string]Price) {
	u.Calls += 1 + e.FailedCalls
	u.Failed += e.FailedCalls // an outage's, not journaled one by one
	if e.Reason != "" || e.Interrupted {
		u.Failed++
	}
	if e.Interrupted {
		u.Interrupted++
	}
	u.TokensIn += e.TokensIn
	u.TokensOut += e.TokensOut
	if p, ok := priceOf(prices, e.Model); ok {
		u.Cost += p.Cost(e.TokensIn, e.TokensOut)
	}
}

// AgentUsage is what one agent's model calls used.
type AgentUsage struct {
	Agent string `json:"agent"`
	Usage
	// Session is what it used in the latest session.
	Session Usage `json:"session"`
	// LastError is why its latest model call failed (an endpoint
	// unreachable, a status); empty when it succeeded.
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
	// Models is its usage per model it called, in the order it first
	// called each: parley.yaml may have named another model since.
	Models []ModelUsage `json:"models,omitempty"`
}

// ModelUsage is what an agent's calls of one model used.
type ModelUsage struct {
	Model string `json:"model"`
	Usage
}

// model returns the usage of the model named, added when new.
func (a *AgentUsage) model(name string) *Usage {
	for i := range a.Models {
		if a.Models[i].Model == name {
			return &a.Models[i].Usage
		}
	}
	a.Models = append(a.Models, ModelUsage{Model: name})
	return &a.Models[len(a.Models)-1].Usage
}

// SessionUsage is what one session (a run of the runner) used.
type SessionUsage struct {
	Session string `json:"session"`
	Usage
}

// UsageReport is what the models of a workspace used, per agent and per
// session, oldest session first; Latest is the latest session's id.
type UsageReport struct {
	Agents   []AgentUsage   `json:"agents"`
	Sessions []SessionUsage `json:"sessions"`
	Latest   string         `json:"latest_session,omitempty"`
	Total    Usage          `json:"total"`
}

// Agent returns an agent's usage, and whether it has any.
func (r *UsageReport) Agent(name string) (AgentUsage, bool) {
	for _, a := range r.Agents {
		if a.Agent == name {
			return a, true
		}
	}
	return AgentUsage{}, false
}

// Usage reads what the models used from the journal.
func (w *Workspace) Usage() (*UsageReport, error) {
	agents := map[string]*AgentUsage{}
	sessions := map[string]*SessionUsage{}
	bySession := map[[2]string]*Usage{} // agent, session
	var order []string
	r := &UsageReport{}
	f := JournalFilter{Outcomes: []string{ModelCalled}}
	err := f.Read(w.JournalPath(), func(e Entry, _ []byte) error {
		if e.Outcome != ModelCalled {
			return nil
		}
		a := agents[e.Agent]
		if a == nil {
			a = &AgentUsage{Agent: e.Agent}
			agents[e.Agent] = a
		}
		a.add(&e, w.Config.Prices)
		a.model(e.Model).add(&e, w.Config.Prices)
		a.LastError, a.LastErrorAt = e.Reason, ""
		if e.Reason != "" {
			a.LastErrorAt = e.Time
		}
		s := sessions[e.Session]
		if s == nil {
			s = &SessionUsage{Session: e.Session}
			sessions[e.Session] = s
			order = append(order, e.Session)
		}
		s.add(&e, w.Config.Prices)
		k := [2]string{e.Agent, e.Session}
		if bySession[k] == nil {
			bySession[k] = &Usage{}
		}
		bySession[k].add(&e, w.Config.Prices)
		r.Total.add(&e, w.Config.Prices)
		r.Latest = e.Session
		return nil
	})
	if err != nil {
		return r, err
	}
	for _, a := range agents {
		if u := bySession[[2]string{a.Agent, r.Latest}]; u != nil {
			a.Session = *u
		}
		r.Agents = append(r.Agents, *a)
	}
	sort.Slice(r.Agents, func(i, j int) bool { return r.Agents[i].Agent < r.Agents[j].Agent })
	for _, id := range order {
		r.Sessions = append(r.Sessions, *sessions[id])
	}
	return r, nil
}
