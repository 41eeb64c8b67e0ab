package orchestrator

import (
	"cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Fate is what became of a message that parley gave up (one the
// orchestrator sent, whose recipient's program failed it every retry),
// and so what a person's decision on its given_up escalation does. It is
// decided in one place, GivenUps.Fate: the orchestrator acts on it, and
// `parley pipeline` shows it.
type Fate int

const (
	// Stalled: the message is in its agent's dead/ and its step did not
	// go on without it: a retry decision sends it again, approve ticks
	// its step. A message given up in another workspace (its notice
	// came from there, workspace: naming it; that workspace's dead/
	// cannot be seen here) is Stalled until it is answered, sent again,
	// its step ticked, or that workspace tells us it was handed back.
	Stalled Fate = iota
	// HandedBack: `parley retry` put it back to its agent, which has
	// not answered it yet: a retry decision sends nothing (the step
	// would be done twice); approve ticks its step. A message given up
	// in another workspace is handed back once that workspace's
	// `parley retry` told us so (a message_retried notice).
	HandedBack
	// WentOn: its step went on without a decision: its agent answered it
	// (or about its step) since, its step is ticked in the plan, or it
	// was sent again since (a task or revision, or the same request, for
	// its step, to the same agent; of no step, a request of its type on
	// the same topic in its thread, as a retry decision sends a research
	// request again), or, a research request, its pipeline asked the
	// architect for the plan since without it. A decision sends nothing.
	WentOn
	// Unknown: the message is none the sender's mailbox shows it sent
	// to the agent said to have given it up.
	Unknown
)

// String returns the fate's name, as logs and tests print it.
func (f Fate) String() string {
	switch f {
	case Stalled:
		return "stalled"
	case HandedBack:
		return "handed back"
	case WentOn:
		return "went on"
	}
	return "unknown"
}

// GivenUps tells the fate of messages an agent sent that were given up,
// from that agent's mailbox (what it sent and handled), the plans and the
// dead/ of those who gave them up. It only reads.
//
// A sender that lives in another workspace (remote:) has no history
// here: what it sent is in that workspace. What it sent to an agent of
// this one is in that agent's mailbox, though, with what the agent
// answered: its fates are told from there (remoteHistory), so that a
// step its workspace sent again after a give-up here is settled here
// too, and `parley retry` of the first does not do the step twice.
type GivenUps struct {
	o      *Orchestrator
	h      *history            // the sender's; nil for a remote sender
	sender string              // a remote sender
	byRecv map[string]*history // a remote sender's, by the agent it sent to
}

// GivenUps reads agent's mailbox (the orchestrator's, usually), once, to
// tell the fate of the messages it sent that were given up.
func (o *Orchestrator) GivenUps(agent string) *GivenUps {
	if a, ok := o.ws().Agent(agent); ok && a.Remote != "" {
		return &GivenUps{o: o, sender: agent, byRecv: map[string]*history{}}
	}
	return &GivenUps{o: o, h: o.history(agent, mailbox.New(nil))}
}

// Fate tells what became of the message id that agent gave up; see Fate.
func (g *GivenUps) Fate(id, agent string) Fate {
	f, _ := g.How(id, agent)
	return f
}

// How tells the fate of the message id that agent gave up, as Fate does,
// and, for WentOn, which way its step went on: "answered", "ticked",
// "sent again" or "planned" (a research request whose pipeline asked for
// its plan since).
func (g *GivenUps) How(id, agent string) (Fate, string) {
	if g.h != nil {
		return g.o.fate(g.h, id, agent)
	}
	h, ok := g.byRecv[agent]
	if !ok {
		h = g.o.remoteHistory(g.sender, agent)
		g.byRecv[agent] = h
	}
	return g.o.fate(h, id, agent)
}

// fate decides the fate of the message id given up by agent, from h; how
// says, for WentOn, which way the step went on: answered, ticked or sent
// again.
func (o *Orchestrator) fate(h *history, id, agent string) (f Fate, how string) {
	if f, how := o.wentOn(h, id, agent); f != Stalled {
		return f, how
	}
	// Given up in another workspace, it is in that one's dead/, out of
	// sight: a `parley retry` run there shows here only once its agent
	// answers. (The bridge's own give-up, of a copy it cannot carry,
	// is in the dead/ here.)
	if h.givenUpIn(id, agent) == "" && !o.inDead(agent, id) {
		return HandedBack, ""
	}
	if h.givenUpIn(id, agent) != "" && h.retriedThere(id, agent) {
		// Given up in another workspace and handed back there: its
		// runner told us (`parley retry`, see the runner's TellRetried).
		return HandedBack, ""
	}
	return Stalled, ""
}

// wentOn decides whether the message id that h's agent sent to agent is
// one it sent (else Unknown), and whether its step went on since
// (WentOn, and how: answered, ticked or sent again); Stalled when not.
// It looks at no dead/: a message left unanswered (see the runner's
// Unanswered) is in its agent's done/.
func (o *Orchestrator) wentOn(h *history, id, agent string) (f Fate, how string) {
	rec := h.byID[id]
	if rec == nil || !rec.sent || !rec.to(agent) {
		// Not one it sent to agent: a notice that says agent gave it
		// up tells of another's message, and a decision on it would
		// send that agent a task that is not its own.
		return Unknown, ""
	}
	if h.answeredSince(rec, agent) {
		return WentOn, "answered"
	}
	pf, n := rec.get("plan_file"), atoi(rec.get("step"))
	if h.sentAgainSince(rec, agent) {
		// A step's work, or a request of no step (a research request)
		// sent again on a person's retry decision: the newest stands
		// for it.
		return WentOn, "sent again"
	}
	if h.plannedSince(rec) {
		// A research request whose pipeline asked the architect for its
		// plan since, without its answer (an older parley did, with
		// another pipeline's research): asked again and answered, it
		// would be joined to nothing, or ask for the plan twice.
		return WentOn, "planned"
	}
	// (A remote sender's plan is in its workspace: one of the same
	// name here is another.)
	if pf != "" && n != 0 && !h.remote && o.stepTicked(pf, n) {
		return WentOn, "ticked"
	}
	return Stalled, ""
}

// Fates tells how the step of each message given up went on without it
// since (WentOn), for messages of any sender, reading each sender's
// mailbox once (GivenUps): one Fates answers the questions of one
// moment (a page, a command). It only reads.
type Fates struct {
	ws       *workspace.Workspace
	bySender map[string]*GivenUps
	// o, when set, is the orchestrator whose index reads the senders'
	// mailboxes (its own Tick's questions); else one made for them.
	o *Orchestrator
}

// NewFates returns a Fates of ws, which has read nothing yet.
func NewFates(ws *workspace.Workspace) *Fates {
	return &Fates{ws: ws, bySender: map[string]*GivenUps{}}
}

// WentOn returns how the step of message id, sent by sender and given
// up by agent, went on without it since (WentOn): "answered", "ticked",
// "sent again" or "planned"; "" when it did not, or the sender is no
// agent.
func (f *Fates) WentOn(sender, id, agent string) string {
	if _, ok := f.ws.Agent(sender); !ok || id == "" {
		return ""
	}
	g, ok := f.bySender[sender]
	if !ok {
		o := f.o
		if o == nil {
			o = &Orchestrator{Workspace: f.ws}
		}
		g = o.GivenUps(sender)
		f.bySender[sender] = g
	}
	if fate, how := g.How(id, agent); fate == WentOn {
		return how
	}
	return ""
}

// Settled returns how the step of the escalation m went on without a
// decision since: for a given_up or unanswered one (about the message
// given_up: or unanswered: that agent: gave up or left unanswered), as
// WentOn says; for an iteration or blocked one about a step (plan_file:,
// step:), "ticked" when a person ticked the step in the plan since (the
// tick is their decision on it, see Orchestrator.Start). Answering it
// sends nothing. "" when it did not, or for another kind of escalation,
// a message that is none, or a sender of another workspace (its plan is
// there).
func (f *Fates) Settled(m *mailbox.Message) string {
	kind, _ := m.Header().Get("escalation")
	get := func(k string) string { v, _ := m.Header().Get(k); return v }
	switch kind {
	case EscalateGivenUp, EscalateUnanswered:
		return f.WentOn(get("from"), cmp.Or(get("given_up"), get("unanswered")), get("agent"))
	case EscalateLimit, EscalateBlocked:
		if a, ok := f.ws.Agent(get("from")); !ok || a.Remote != "" {
			return ""
		}
		if (&Orchestrator{Workspace: f.ws}).stepTicked(get("plan_file"), atoi(get("step"))) {
			return "ticked"
		}
	}
	return ""
}

// stepTicked reports whether step n of the plan file pf is ticked (done)
// in the plan as it is now; false when there is no such plan or step.
func (o *Orchestrator) stepTicked(pf string, n int) bool {
	if pf == "" || n == 0 {
		return false
	}
	p, problem := o.readPlan(pf)
	if problem != "" {
		return false
	}
	s := p.Step(n)
	return s != nil && s.Done
}
