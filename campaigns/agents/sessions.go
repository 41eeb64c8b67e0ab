package agents

import (
	"slices"

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
// ended, and so asks nothing any more: a [SESSION_END] written after it,
// in any mailbox of ws, by its sender (by a game master, an agent with
// the role gm, for a question whose sender ends no session: a player's
// relay, a prompt the team lead handed on), read as PastEnd reads the
// mailboxes. Such a question, left unanswered when the session ended
// (the person left the seat first, or the session ran with no seat), is
// filed and told as from the last session, unanswered: the person's next
// line is not its answer. Only the messages written after q by those
// who may end its session are read. It is the one place that decides:
// the seats ask it.
func PastQuestion(ws *workspace.Workspace, q *mailbox.Message) bool {
	askedAt := idTime(q)
	from := senderOf(q)
	if askedAt.IsZero() {
		return false
	}
	endsOwn := ws.HasRole(from, "gm")
	names := ws.AgentNames()
	if from != "" && !slices.Contains(names, from) {
		names = append(names, from)
	}
	for _, agent := range names {
		box := ws.Mailbox(agent)
		for _, state := range []string{mailbox.Outbox, mailbox.Sent, mailbox.Inbox, mailbox.Cur, mailbox.Done} {
			files, err := box.Names(state)
			if err != nil {
				continue
			}
			for _, name := range files {
				id, ok := mailbox.IDFromName(name)
				if !ok {
					continue
				}
				at, sender, err := mailbox.ParseID(id)
				if err != nil || !at.After(askedAt) {
					continue
				}
				if sender != from && (endsOwn || !ws.HasRole(sender, "gm")) {
					continue // ends no session of q's: not read
				}
				data, err := mailbox.ReadFile(box.Path(state, name), ws.Config.Router.MaxMessageSize)
				if err != nil {
					continue // moved on meanwhile
				}
				m, err := mailbox.Parse(data)
				if err != nil {
					continue
				}
				if typeOf(m) == SessionEndType && senderOf(m) == sender {
					return true
				}
			}
		}
	}
	return false
}
