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
// [SESSION_COMMAND] command: start written later, in any mailbox of ws:
// the team lead marks each session so), or its sender wrote to the seat
// since what only a session under way writes (a later message from it in
// one of seat's mailboxes, delivered or handled, that waits for the
// person's answer — a question, a prompt to a character — or a later
// [SESSION_END], of a newer session). What a game master tells after its
// end (a closing [NARRATIVE], a shutdown's answer) does not make the end
// past: the session it closes is the one under way. Such an end is one a
// session run with no seat (parley run) left unread, or one git brought
// from another host. Only the messages written after end are read. It is
// the one place that decides: the seats ask it.
func PastEnd(ws *workspace.Workspace, seat []string, end *mailbox.Message) bool {
	endAt := idTime(end)
	from := senderOf(end)
	if endAt.IsZero() {
		return false
	}
	names := ws.AgentNames()
	for _, a := range seat {
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	for _, agent := range names {
		box := ws.Mailbox(agent)
		mine := slices.Contains(seat, agent)
		for _, state := range []string{mailbox.Outbox, mailbox.Sent, mailbox.Inbox, mailbox.Cur, mailbox.Done} {
			files, err := box.Names(state)
			if err != nil {
				continue
			}
			received := state == mailbox.Inbox || state == mailbox.Cur || state == mailbox.Done
			for _, name := range files {
				id, ok := mailbox.IDFromName(name)
				if !ok {
					continue
				}
				at, sender, err := mailbox.ParseID(id)
				if err != nil || !at.After(endAt) {
					continue
				}
				data, err := mailbox.ReadFile(box.Path(state, name), ws.Config.Router.MaxMessageSize)
				if err != nil {
					continue // moved on meanwhile
				}
				m, err := mailbox.Parse(data)
				if err != nil {
					continue
				}
				typ := typeOf(m)
				if typ == SessionCommandType && field(m, "command") == "start" {
					return true
				}
				if mine && received && from != "" && (sender == from || senderOf(m) == from) && ofNewSession(typ) {
					return true
				}
			}
		}
	}
	return false
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

// Ends tells when the senders of a workspace ended sessions (their
// routed [SESSION_END]s), read from the mailboxes once for many
// questions: a seat makes one at each look at its inboxes (a page of the
// web seat, a show of parley play) and asks it of every question
// (PastQuestion), so that the mailboxes are listed once and each message
// is read at most once, newest first, only as far back as the oldest
// question asked and only of those who may end its session. It answers
// as PastQuestion does, of the mailboxes as they were when first asked.
type Ends struct {
	ws   *workspace.Workspace
	from map[string][]routedCopy // sender -> its routed copies, newest first; nil until asked
	seen map[string]bool         // mailboxes listed
	end  map[string]bool         // message id -> a [SESSION_END] by its sender; only of those read
}

// routedCopy is a routed copy of a message: its id, when it was written
// (of its id), and its file: its name in a mailbox.
type routedCopy struct {
	id, name string
	box      mailbox.Dir
	at       time.Time
}

// read reads c where it is: where it was listed, else in a state a copy
// moves on to (a seat files its inbox's copy in done/ meanwhile).
func (c routedCopy) read(ws *workspace.Workspace) (*mailbox.Message, error) {
	var err error
	for _, state := range routedStates {
		var data []byte
		if data, err = mailbox.ReadFile(c.box.Path(state, c.name), ws.Config.Router.MaxMessageSize); err == nil {
			return mailbox.Parse(data)
		}
	}
	return nil, err
}

// NewEnds returns an Ends of ws, which reads nothing until asked.
func NewEnds(ws *workspace.Workspace) *Ends {
	return &Ends{ws: ws, from: map[string][]routedCopy{}, seen: map[string]bool{}, end: map[string]bool{}}
}

// PastQuestion is PastQuestion(ws, q), read from e.
func (e *Ends) PastQuestion(q *mailbox.Message) bool {
	askedAt := idTime(q)
	from := senderOf(q)
	if askedAt.IsZero() {
		return false
	}
	if len(e.seen) == 0 {
		for _, agent := range e.ws.AgentNames() {
			e.list(agent)
		}
	}
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
			e.from[sender] = append(e.from[sender], routedCopy{id: id, name: name, box: box, at: at})
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
		isEnd, read := e.end[c.id]
		if !read {
			m, err := c.read(e.ws)
			if err != nil {
				continue // gone meanwhile, or not a message: another copy, if any
			}
			isEnd = typeOf(m) == SessionEndType && senderOf(m) == sender
			e.end[c.id] = isEnd
		}
		if isEnd {
			return true
		}
	}
	return false
}
