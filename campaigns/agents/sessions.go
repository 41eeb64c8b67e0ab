package agents

import (
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// PastEnd reports whether end, a [SESSION_END] delivered to one of the
// agents of a person's seat (seat), closed a session before the one under
// way, and so must not end the seat: a session was started after it (a
// [SESSION_COMMAND] command: start written later, routed to any mailbox
// of ws: the team lead marks each session so), or its sender wrote to
// the seat since what only a session under way writes (a later message
// from it in one of seat's mailboxes, delivered or handled, that waits
// for the person's answer — a question, a prompt to a character — or a
// later [SESSION_END], of a newer session). What a game master tells
// after its end (a closing [NARRATIVE], a shutdown's answer) does not
// make the end past: the session it closes is the one under way. Such an
// end is one a session run with no seat (parley run) left unread, or one
// git brought from another host. Only routed copies count, as for
// PastQuestion: a start or an end waiting in an outbox, which the router
// may yet refuse, makes nothing past. Only the messages written after end
// are read. It is the one place that decides: the seats ask it, or, at
// one look at many messages, an Ends.
func PastEnd(ws *workspace.Workspace, seat []string, end *mailbox.Message) bool {
	return NewEnds(ws).PastEnd(seat, end)
}

// ofNewSession reports whether a message of type typ, written to a seat
// after a [SESSION_END] by its sender, is one only a session under way
// sends: one that waits for the person's answer, or the end of a newer
// session.
func ofNewSession(typ string) bool {
	switch typ {
	case campaigns.AskPlayerType, campaigns.RelayToHumanType, campaigns.GMToPlayerType, SessionEndType:
		return true
	}
	return false
}

// PastQuestion reports whether q, a message that waits for the person at
// a seat (a question, a relay, a prompt to their character:
// campaigns.SeatAnswerer says which), was left by a session that has
// ended, and so asks nothing any more: a routed [SESSION_END] written
// after it by its sender (by a game master, an agent with the role gm,
// for a question whose sender ends no session: a player's relay, a
// prompt the team lead handed on). Such a question, left unanswered when
// the session ended (the person left the seat first, or the session ran
// with no seat), is filed and told as from the last session, unanswered:
// the person's next line is not its answer. Only routed copies count (in
// sent/, inbox/, cur/, done/, as the team lead counts ends): an end a
// game master's program wrote to its outbox and the router refuses ends
// nothing. It is the one place that decides: the seats ask it, or, for
// many questions at one look, an Ends.
func PastQuestion(ws *workspace.Workspace, q *mailbox.Message) bool {
	return NewEnds(ws).PastQuestion(q)
}

// routedStates are the states a routed copy of a message is in: the
// sender's sent/, a recipient's inbox/, cur/ or done/.
var routedStates = []string{mailbox.Sent, mailbox.Inbox, mailbox.Cur, mailbox.Done}

// Ends tells when sessions ended and started, of the routed copies of
// the messages of a workspace (its mailboxes' sent/, inbox/, cur/ and
// done/: never an outbox, whose files the router may yet refuse), read
// once for many messages: a seat makes one at each look at its inboxes
// (a page of the web seat, a show of parley play) and asks it of every
// question (PastQuestion) and every [SESSION_END] (PastEnd), so that the
// mailboxes are listed once and each message is read at most once,
// newest first, only as far back as the oldest message asked of. It
// answers as PastQuestion and PastEnd do, of the mailboxes as they were
// when first asked; it is what those read with.
type Ends struct {
	ws     *workspace.Workspace
	from   map[string][]routedCopy // sender (of the id) -> its routed copies, newest first
	seen   map[string]bool         // mailboxes listed
	listed bool                    // every agent's mailbox was listed
	read   map[string]*routedFacts // message id -> what it says; only of those read
}

// routedCopy is a routed copy of a message: its id, when it was written
// (of its id), and its file: its name in the mailbox of agent (box),
// where it was listed (state).
type routedCopy struct {
	id, name     string
	agent, state string
	box          mailbox.Dir
	at           time.Time
}

// routedFacts is what Ends reads of a message.
type routedFacts struct {
	typ, from string // its type, its from:
	start     bool   // a [SESSION_COMMAND] command: start
}

// facts returns what c says, read once per message: where c was
// listed, else in a state a copy moves on to (a seat files its inbox's
// copy in done/ meanwhile). nil when it cannot be read (gone meanwhile,
// or not a message).
func (e *Ends) facts(c routedCopy) *routedFacts {
	if f, ok := e.read[c.id]; ok {
		return f
	}
	for _, state := range routedStates {
		data, err := mailbox.ReadFile(c.box.Path(state, c.name), e.ws.Config.Router.MaxMessageSize)
		if err != nil {
			continue
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			return nil
		}
		typ := typeOf(m)
		f := &routedFacts{typ: typ, from: senderOf(m), start: typ == SessionCommandType && field(m, "command") == "start"}
		e.read[c.id] = f
		return f
	}
	return nil
}

// NewEnds returns an Ends of ws, which reads nothing until asked.
func NewEnds(ws *workspace.Workspace) *Ends {
	return &Ends{ws: ws, from: map[string][]routedCopy{}, seen: map[string]bool{}, read: map[string]*routedFacts{}}
}

// PastQuestion is PastQuestion(ws, q), read from e.
func (e *Ends) PastQuestion(q *mailbox.Message) bool {
	askedAt := idTime(q)
	from := senderOf(q)
	if askedAt.IsZero() {
		return false
	}
	e.listAll()
	if from != "" {
		e.list(from) // an agent no longer in parley.yaml: its own mailbox too
	}
	if e.endsAfter(from, askedAt) {
		return true
	}
	if e.ws.HasRole(from, "gm") {
		return false // ends its own session: only its end counts
	}
	for _, gm := range e.ws.AgentNames() {
		if gm != from && e.ws.HasRole(gm, "gm") && e.endsAfter(gm, askedAt) {
			return true
		}
	}
	return false
}

// PastEnd is PastEnd(ws, seat, end), read from e.
func (e *Ends) PastEnd(seat []string, end *mailbox.Message) bool {
	endAt := idTime(end)
	from := senderOf(end)
	if endAt.IsZero() {
		return false
	}
	e.listAll()
	for _, a := range seat {
		e.list(a) // a seat's agent no longer in parley.yaml
	}
	for sender, copies := range e.from {
		for _, c := range copies {
			if !c.at.After(endAt) {
				break
			}
			f := e.facts(c)
			if f == nil {
				continue // another copy, if any
			}
			if f.start {
				return true
			}
			received := c.state != mailbox.Sent
			if from != "" && received && slices.Contains(seat, c.agent) && (sender == from || f.from == from) && ofNewSession(f.typ) {
				return true
			}
		}
	}
	return false
}

// listAll lists every agent's mailbox, once.
func (e *Ends) listAll() {
	if e.listed {
		return
	}
	e.listed = true
	for _, agent := range e.ws.AgentNames() {
		e.list(agent)
	}
}

// list adds the routed copies in agent's mailbox, once.
func (e *Ends) list(agent string) {
	if e.seen[agent] || mailbox.CheckName(agent) != nil {
		return
	}
	e.seen[agent] = true
	box := e.ws.Mailbox(agent)
	touched := map[string]bool{}
	for _, state := range routedStates {
		names, err := box.NamesUnsorted(state)
		if err != nil {
			continue
		}
		for _, name := range names {
			id, ok := mailbox.IDFromName(name)
			if !ok {
				continue
			}
			at, sender, err := mailbox.ParseID(id)
			if err != nil {
				continue
			}
			e.from[sender] = append(e.from[sender], routedCopy{id: id, name: name, agent: agent, state: state, box: box, at: at})
			touched[sender] = true
		}
	}
	for sender := range touched {
		slices.SortStableFunc(e.from[sender], func(a, b routedCopy) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
	}
}

// endsAfter reports whether sender wrote a routed [SESSION_END] after
// t. It reads sender's messages written after t, newest first, until one
// is its end, each once (a copy moved on meanwhile: another copy).
func (e *Ends) endsAfter(sender string, t time.Time) bool {
	for _, c := range e.from[sender] {
		if !c.at.After(t) {
			return false
		}
		if f := e.facts(c); f != nil && f.typ == SessionEndType && f.from == sender {
			return true
		}
	}
	return false
}
