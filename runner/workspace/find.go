package workspace

import (
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// AmbiguousIDError is the error for a short id that more than one
// message's id starts or ends with.
type AmbiguousIDError struct {
	Short      string
	Candidates []string // the ids it could be, sorted
}

func (e *AmbiguousIDError) Error() string {
	return fmt.Sprintf("%q could be any of %d messages: %s", e.Short, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

// MinShortID is the fewest characters a short id may have: fewer would
// match almost anything.
const MinShortID = 4

// ResolveID returns the message id a person means: the id itself, or, as
// in git, a unique start or end of one (2f322e, the six hex digits every
// id ends with, or 20261121-1015). The ids looked at are those of every
// message in any agent's mailbox, in any state. A short id that matches
// several gives *AmbiguousIDError naming them; one that matches none,
// ErrMessageNotFound.
func (w *Workspace) ResolveID(s string) (string, error) {
	if mailbox.IsID(s) {
		return s, nil
	}
	if strings.ContainsAny(s, "/ ") {
		return "", fmt.Errorf("%q: %w (not a message id, nor a message file of this workspace)", s, ErrMessageNotFound)
	}
	if len(s) < MinShortID {
		return "", fmt.Errorf("%q: %w (a short id needs %d characters or more)", s, ErrMessageNotFound, MinShortID)
	}
	var found []string
	for _, agent := range w.AgentNames() {
		found = shortMatches(found, s, w.Mailbox(agent), mailbox.States)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%q: %w", s, ErrMessageNotFound)
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", &AmbiguousIDError{Short: s, Candidates: found}
}

// shortMatches adds to found the ids of the messages box holds in the
// given states that the short id s starts or ends, each once.
func shortMatches(found []string, s string, box mailbox.Dir, states []string) []string {
	for _, state := range states {
		ids, err := box.IDs(state)
		if err != nil {
			continue // a state not made yet
		}
		for _, id := range ids {
			if (strings.HasPrefix(id, s) || strings.HasSuffix(id, s)) && !slices.Contains(found, id) {
				found = append(found, id)
			}
		}
	}
	return found
}

// ResolveOwnID is ResolveID for a program acting as agent (parley mcp),
// which may learn nothing of the other mailboxes: a short id is looked
// for among the ids of the messages agent holds in the given states
// alone, and its errors name no other message.
func (w *Workspace) ResolveOwnID(s, agent string, states ...string) (string, error) {
	if mailbox.IsID(s) {
		return s, nil
	}
	if strings.ContainsAny(s, "/ ") {
		return "", fmt.Errorf("%q: %w (not a message id)", s, ErrMessageNotFound)
	}
	if len(s) < MinShortID {
		return "", fmt.Errorf("%q: %w (a short id needs %d characters or more)", s, ErrMessageNotFound, MinShortID)
	}
	found := shortMatches(nil, s, w.Mailbox(agent), states)
	switch len(found) {
	case 0:
		return "", &notOwnError{what: strconv.Quote(s), agent: agent, states: states}
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", &AmbiguousIDError{Short: s, Candidates: found}
}

// Held returns the copy of a message that agent holds in the given
// states, in the first of them that holds it: Received for a program
// acting as agent (parley mcp). A message agent does not hold there is
// ErrMessageNotFound, saying where agent's own copy is if it has one
// elsewhere (sent/, say), and nothing of the other mailboxes.
func (w *Workspace) Held(id, agent string, states ...string) (Copy, error) {
	box, name := w.Mailbox(agent), mailbox.FileName(id)
	for _, st := range states {
		if p := box.Path(st, name); exists(p) {
			return Copy{Agent: agent, State: st, Path: p}, nil
		}
	}
	var own []string
	for _, st := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead, mailbox.Sent, mailbox.Outbox} {
		if p := box.Path(st, name); !slices.Contains(states, st) && exists(p) {
			own = append(own, w.Short(p))
		}
	}
	for _, n := range box.RejectedNames(id) {
		own = append(own, w.Short(box.Path(mailbox.Rejected, n)))
	}
	var err error = &notOwnError{what: id, agent: agent, states: states}
	if len(own) > 0 {
		err = fmt.Errorf("%w; it is in %s", err, strings.Join(own, ", "))
	}
	return Copy{}, err
}

// notOwnError is the error of ResolveOwnID and Held for a message that is
// not among an agent's own in the states looked in: ErrMessageNotFound,
// said without a word of any other mailbox.
type notOwnError struct {
	what, agent string
	states      []string
}

func (e *notOwnError) Error() string {
	dirs := make([]string, len(e.states))
	for i, st := range e.states {
		dirs[i] = st + "/"
	}
	return fmt.Sprintf("%s: not among the messages of %s (in its %s)", e.what, e.agent, strings.Join(dirs, ", "))
}

func (e *notOwnError) Unwrap() error { return ErrMessageNotFound }

// Copy is where one copy of a message is: whose mailbox, which state.
type Copy struct {
	Agent, State, Path string
}

// Copies returns every copy of a message in the workspace: the copies
// delivered to its recipients (in inbox/, cur/, done/ or dead/), then the
// sender's file (sent/, or outbox/ before it is routed), then the files
// named by its id that the router refused (rejected/).
func (w *Workspace) Copies(id string) []Copy { return w.copies(id, true) }

// copies is Copies; the rejected/ directories, listed, not looked up by
// name, are read only when refused is true.
func (w *Workspace) copies(id string, refused bool) []Copy {
	var out []Copy
	name := mailbox.FileName(id)
	for _, states := range [][]string{
		{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead},
		{mailbox.Sent, mailbox.Outbox},
	} {
		for _, agent := range w.AgentNames() {
			for _, st := range states {
				p := w.Mailbox(agent).Path(st, name)
				if exists(p) {
					out = append(out, Copy{Agent: agent, State: st, Path: p})
				}
			}
		}
	}
	if !refused {
		return out
	}
	for _, agent := range w.AgentNames() {
		box := w.Mailbox(agent)
		for _, n := range box.RejectedNames(id) {
			out = append(out, Copy{Agent: agent, State: mailbox.Rejected, Path: box.Path(mailbox.Rejected, n)})
		}
	}
	return out
}

// Received returns the copy of a message an agent received: of agent,
// or, when agent is "", of the one agent that holds it in the given
// states, in the first of them that holds it. A message that several
// agents hold there asks which. One held there by none is
// ErrMessageNotFound, saying where its copies are (whose mailbox, which
// state), if anywhere.
func (w *Workspace) Received(id, agent string, states ...string) (Copy, error) {
	var held []Copy
	for _, c := range w.copies(id, slices.Contains(states, mailbox.Rejected)) {
		if slices.Contains(states, c.State) && (agent == "" || c.Agent == agent) {
			held = append(held, c)
		}
	}
	switch {
	case len(held) == 1 || len(held) > 1 && oneAgent(held):
		// One agent's copies in several states are one message: a copy
		// came back (git stash, git checkout) beside the one handled. The
		// first state's stands for it (inbox/ before done/), for the
		// mailbox to file where the message is (see mailbox.Dir.Claim).
		return held[0], nil
	case len(held) == 0:
		err := fmt.Errorf("%s: %w in any agent's %s", id, ErrMessageNotFound, strings.Join(states, " or "))
		if agent != "" {
			err = fmt.Errorf("%s: %w in the %s of %s", id, ErrMessageNotFound, strings.Join(states, " or "), agent)
		}
		if where := w.where(id); where != "" {
			err = fmt.Errorf("%w; it is in %s", err, where)
		}
		return Copy{}, err
	}
	var who []string
	for _, c := range held {
		who = append(who, c.Agent)
	}
	return Copy{}, &SeveralHoldersError{ID: id, Agents: who}
}

// where names where the copies of message id are, for an error about
// it: those delivered to its recipients (whose mailbox, which state),
// else the sender's file; empty when there is none.
func (w *Workspace) where(id string) string {
	var delivered, sent []string
	for _, c := range w.Copies(id) {
		if c.State == mailbox.Sent || c.State == mailbox.Outbox || c.State == mailbox.Rejected {
			sent = append(sent, w.Short(c.Path))
		} else {
			delivered = append(delivered, w.Short(c.Path))
		}
	}
	if len(delivered) == 0 {
		delivered = sent
	}
	if len(delivered) > 3 {
		delivered = append(delivered[:3], fmt.Sprintf("%d more", len(delivered)-3))
	}
	return strings.Join(delivered, ", ")
}

// oneAgent reports whether the copies are all one agent's.
func oneAgent(cs []Copy) bool {
	for _, c := range cs[1:] {
		if c.Agent != cs[0].Agent {
			return false
		}
	}
	return true
}

// Handling returns the copy of a message an agent received that a person
// acts on (parley reply, parley done): the copy agent holds in its inbox/,
// cur/ or done/, or, when agent is "", the one copy any agent holds there.
// A copy already handled counts, so that a message several agents
// received, of which one has handled its copy, still asks whose copy is
// meant (*SeveralHoldersError) rather than answering for one of them.
func (w *Workspace) Handling(id, agent string) (Copy, error) {
	return w.Received(id, agent, mailbox.Inbox, mailbox.Cur, mailbox.Done)
}

// SeveralHoldersError is the error for a message several agents received,
// when a command has to know whose copy is meant.
type SeveralHoldersError struct {
	ID     string
	Agents []string
}

func (e *SeveralHoldersError) Error() string {
	return fmt.Sprintf("%s was delivered to several agents (%s): say whose copy with --agent", e.ID, strings.Join(e.Agents, ", "))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// AnsweredBy returns the id of a message one of agents wrote in reply to
// the message id (reply_to: id), in its outbox/ or sent/, or "": an
// answer sent by a seat that stopped before it filed the question. What
// asker, who asked it, sent in reply to it (a nudge, by timeouts:) is no
// answer.
func (w *Workspace) AnsweredBy(id, asker string, agents ...string) string {
	for a := range w.Replies(id, agents...) {
		if a.Sender != asker {
			return a.ID
		}
	}
	return ""
}

// A Reply is a message written in reply to another (reply_to).
type Reply struct {
	ID      string
	Sender  string // its from:, or the agent whose outbox holds it when it names none
	Path    string // in the sender's outbox/ or sent/
	Message *mailbox.Message
}

// Replies yields the messages agents wrote in reply to the message id
// (reply_to: id) that are in their outbox/ (not routed yet) or sent/.
// Only files named by an id later than id are read.
func (w *Workspace) Replies(id string, agents ...string) iter.Seq[Reply] {
	return func(yield func(Reply) bool) {
		for _, a := range slices.Compact(slices.Clone(agents)) {
			if _, ok := w.Agent(a); !ok {
				continue
			}
			box := w.Mailbox(a)
			for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
				names, _ := box.NamesUnsorted(state)
				for _, n := range names {
					ans, ok := mailbox.IDFromName(n)
					if !ok || ans <= id {
						continue
					}
					path := box.Path(state, n)
					m, err := mailbox.ReadMessage(path, w.Config.Router.MaxMessageSize)
					if err != nil {
						continue
					}
					if to, _ := m.Header().Get("reply_to"); to != id {
						continue
					}
					sender, _ := m.Header().Get("from")
					if sender == "" {
						sender = a // written by hand, into a's outbox
					}
					if !yield(Reply{ID: ans, Sender: sender, Path: path, Message: m}) {
						return
					}
				}
			}
		}
	}
}

// Opens says, for what sender's program printed or its model answered,
// which headers in a message's body open a message of their own
// (mailbox.SplitAnswer): a to: of names (or "*"), never the sender's own
// (a template of the sender's message, quoted to show a format) — a name
// of no agent too, for the message split off to be refused as sent to
// it, not passed to the first one's recipients in its body; a type:
// alone, a type of the protocol.
func (w *Workspace) Opens(sender string) mailbox.Opens {
	protocol, _ := w.Protocol()
	return mailbox.Opens{
		Recipient: func(name string) bool {
			if name == "*" {
				return true
			}
			if mailbox.CheckName(name) != nil {
				return false
			}
			agent, ok := w.Resolve(name)
			return !ok || agent != sender
		},
		Type: func(typ string) bool {
			if protocol == nil {
				return false
			}
			_, _, ok := protocol.Type(typ)
			return ok
		},
	}
}
