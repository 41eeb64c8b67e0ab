package orchestrator

import (
	"cmp"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Escalation is an escalation the orchestrator sent a person that waits
// for their decision, or waited until its step went on without one. It
// is decided in one place, Escalations: `parley pipeline`, `parley
// status`, `parley run`'s summary and the web view all read it.
type Escalation struct {
	// ID is the escalation's message id.
	ID string
	// Agent is the person it waits for.
	Agent string
	// Kind is its escalation: field: plan, iteration, blocked, given_up
	// or unanswered.
	Kind string
	// State is the mailbox state it is in: inbox or cur (not answered
	// yet), or done (answered only with decisions the orchestrator does
	// not know: see Misspelt).
	State string
	// Message is the escalation itself, for what its caller shows of it.
	Message *mailbox.Message
	// Misspelt is the newest decision of the person's answers that the
	// orchestrator did not know (decision=aprove), when no answer had one
	// it knows: `parley reply` moved the escalation to done/, nothing
	// was done, and it still waits for a decision.
	Misspelt string
	// Settled says how the step of the escalation went on without a
	// decision since: for a given_up or unanswered one "answered",
	// "ticked" or "sent again"; for an iteration or blocked one about a
	// step, "ticked" (see Fates.Settled). Answering it sends nothing. ""
	// when it did not.
	Settled string
	// Pending is set on an escalation settled by a tick ("ticked") that
	// the orchestrator has not gone on from yet: a running `parley run`
	// does within seconds of the plan's change, else the next one when
	// it starts (Orchestrator.Start). Until then the steps that follow
	// are not sent.
	Pending bool
}

// Waiting reports whether x waits for a person's decision: it is not
// settled.
func (x Escalation) Waiting() bool { return x.Settled == "" }

// Escalations returns the escalations in the mailboxes of ws's persons
// (Agent.Person), in the order of parley.yaml's agents, each person's in
// cur/, then inbox/, then those answered with decisions the orchestrator
// does not know (in done/, see Escalation.Misspelt). An escalation
// answered with a decision it knows, or marked handled, is none; so is a
// copy come back into an inbox (git stash, git checkout) of one handled
// already (in done/ or dead/): `parley done` files it. A file that does
// not read or parse is left out (parley validate says why). Settled
// escalations are asked of fates (nil: a new one), which may be shared
// with other questions of the same moment.
func Escalations(ws *workspace.Workspace, fates *Fates) []Escalation {
	if fates == nil {
		fates = NewFates(ws)
	}
	limit := ws.Config.Router.MaxMessageSize
	out := escalations(ws, fates, func(box mailbox.Dir, state, wanted string) []found {
		return readAll(box, state, wanted, limit)
	})
	histories := map[string]*history{} // by orchestrator agent
	for i := range out {
		x := &out[i]
		if x.Settled != "ticked" {
			continue
		}
		sender := from(x.Message)
		h, ok := histories[sender]
		if !ok {
			h = (&Orchestrator{Workspace: ws}).history(sender, mailbox.New(nil))
			histories[sender] = h
		}
		_, x.Pending = (&Orchestrator{Workspace: ws}).tickPending(h, x.Message)
	}
	return out
}

// found is a message file of a mailbox state, read.
type found struct {
	name string // its file name
	m    *mailbox.Message
}

// has reports whether m's header has the field key, not empty.
func has(m *mailbox.Message, key string) bool {
	v, _ := m.Header().Get(key)
	return v != ""
}

// lookIn returns the messages of box's state whose header has the field
// wanted (not empty). A file that does not read or parse is left out.
type lookIn func(box mailbox.Dir, state, wanted string) []found

// readAll is the messages of box's state whose header has the field
// wanted, each file read.
func readAll(box mailbox.Dir, state, wanted string, limit int64) []found {
	entries, err := box.List(state)
	if err != nil {
		return nil // a mailbox not made yet: nothing in it
	}
	var out []found
	for _, en := range entries {
		if m, ok := readMessage(en.Path, limit); ok && has(m, wanted) {
			out = append(out, found{en.Name, m})
		}
	}
	return out
}

// escalations is Escalations without Pending, its persons' mailboxes
// read through look.
func escalations(ws *workspace.Workspace, fates *Fates, look lookIn) []Escalation {
	limit := ws.Config.Router.MaxMessageSize
	var out []Escalation
	for _, a := range ws.Config.Agents {
		if !a.Person() {
			continue
		}
		box := ws.Mailbox(a.Name)
		for _, state := range []string{mailbox.Cur, mailbox.Inbox} {
			for _, f := range look(box, state, "escalation") {
				id, _ := f.m.Header().Get("id")
				x, ok := escalationOf(a.Name, cmp.Or(id, strings.TrimSuffix(f.name, ".md")), state, f.m)
				if !ok || box.HandledIn(x.ID) != "" {
					continue
				}
				out = append(out, x)
			}
		}
		out = append(out, misanswered(box, a.Name, limit, look)...)
	}
	for i := range out {
		out[i].Settled = fates.Settled(out[i].Message)
	}
	return out
}

// escalations is Escalations as the orchestrator o sees them, at each
// Tick: of the persons' mailboxes it reads whole only the files whose
// header names an escalation (or, in sent/, answers a message), and a
// file's header once (o.persons), so that a look costs what changed in
// them since the last, not a read of every message waiting there (a
// person's inbox of thousands of notes unread). Pending is not told.
func (o *Orchestrator) escalations() []Escalation {
	limit := o.ws().Config.Router.MaxMessageSize
	x := o.index()
	read := func(path string) (*mailbox.Message, error) { return x.readMessage(path, limit) }
	fates := NewFates(o.ws())
	fates.o = o
	return escalations(o.ws(), fates, func(box mailbox.Dir, state, wanted string) []found {
		var out []found
		for _, name := range o.persons.with(box.Path(state, ""), wanted, read) {
			if m, err := read(box.Path(state, name)); err == nil {
				out = append(out, found{name, m})
			}
		}
		return out
	})
}

// escalationOf reads the escalation id in agent's state/, if m is one.
func escalationOf(agent, id, state string, m *mailbox.Message) (Escalation, bool) {
	kind, _ := m.Header().Get("escalation")
	if kind == "" {
		return Escalation{}, false
	}
	return Escalation{ID: id, Agent: agent, Kind: kind, State: state, Message: m}, true
}

// misanswered are the escalations a person answered (parley reply moved
// them to done/) with decisions the orchestrator does not know
// (decision=aprove) and with none it knows: nothing was done, and each
// still waits for a decision.
func misanswered(box mailbox.Dir, agent string, limit int64, look lookIn) []Escalation {
	answered := map[string]bool{}   // escalation id -> a known decision answered it
	misspelt := map[string]string{} // escalation id -> the newest decision not known
	var order []string
	var decided []string // what known decisions answered: an escalation, or a note of ours naming one
	for _, f := range look(box, mailbox.Sent, "reply_to") {
		h := f.m.Header()
		to, _ := h.Get("reply_to")
		if to == "" {
			continue
		}
		if t, _ := h.Get("type"); t != "" {
			continue // a protocol message, no answer to an escalation
		}
		d, ok := DecisionOf(f.m)
		if ok {
			answered[to] = true
			decided = append(decided, to)
			continue
		}
		if _, seen := misspelt[to]; !seen {
			order = append(order, to)
		}
		misspelt[to] = d
	}
	if len(order) > 0 {
		// A decision in reply to the note on a decision misspelt answers
		// the escalation the note names (WaitingEscalation), as the
		// orchestrator takes it.
		for _, to := range decided {
			if esc := waitingIn(box, to, limit); esc != "" {
				answered[esc] = true
			}
		}
	}
	var out []Escalation
	for _, id := range order {
		if answered[id] {
			continue
		}
		m, ok := readMessage(box.Path(mailbox.Done, mailbox.FileName(id)), limit)
		if !ok {
			continue // not handled by a reply (still in inbox/, listed there), or not the person's
		}
		if !NeedsDecision(m) {
			continue // any answer is passed on
		}
		if x, ok := escalationOf(agent, id, mailbox.Done, m); ok {
			x.Misspelt = misspelt[id]
			out = append(out, x)
		}
	}
	return out
}

// waitingIn is the escalation the message id in agent's box names as
// still waiting (a note of the orchestrator's, WaitingEscalation), as the
// person has it (handled, or not yet); "" when none.
func waitingIn(box mailbox.Dir, id string, limit int64) string {
	for _, state := range []string{mailbox.Done, mailbox.Cur, mailbox.Inbox} {
		if m, ok := readMessage(box.Path(state, mailbox.FileName(id)), limit); ok {
			w, _ := m.Header().Get(WaitingEscalation)
			return w
		}
	}
	return ""
}

// readMessage reads and parses the message file at path; false when it
// does not read or parse.
func readMessage(path string, limit int64) (*mailbox.Message, bool) {
	m, err := mailbox.ReadMessage(path, limit)
	if err != nil {
		return nil, false
	}
	return m, true
}
