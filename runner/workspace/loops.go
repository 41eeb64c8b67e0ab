package workspace

import (
	"errors"
	"fmt"

	"github.com/parley-dev/parley/mailbox"
)

// Loops. Two programs can answer each other for ever. parley counts how
// many messages in a row two program agents have sent each other, along
// each chain of answers, and writes the count as hops: into each program
// recipient's copy: a message a program sends back to the program whose
// message it is handling counts one more than that message did; any other
// message a program sends counts 1; a person's message counts nothing.
// The message that would be one past hop_limit is refused: the loop is
// stopped.
//
// The count is parley's: it is worked out from what the runner knows (who
// sent the message a program was handling, and the hops: parley wrote in
// the program's copy), never from what the program wrote. A program that
// copies the header it was given, or writes hops: 0, changes nothing.
//
// A workflow that goes through an orchestrator, or a person, does not
// trip it however long it runs: the orchestrator passes each answer on to
// someone else (the reviewer, the next worker), which counts 1 again; a
// worker and a reviewer that answer each other directly count their
// rounds, as they should.

// Runner is the name parley's runner writes its own notices under (the
// loop notices): no agent may take it.
const Runner = "parley"

// LoopNotice is the type of the notice the runner sends when it stops a
// loop.
const LoopNotice = "loop_stopped"

// RefusedNotice is the type of the notice the runner sends a program
// agent whose message it refused: the refused file, the field and the
// reason, so that the program can send it again, mended (see the
// runner's Refusals).
const RefusedNotice = "message_refused"

// GivenUpNotice is the type of the notice the runner sends a built-in
// agent whose message it gave up (moved to the recipient's dead/): the
// message's id, the agent that could not handle it, the reason and the
// attempts, so that the sender (the pipeline's orchestrator) can tell a
// person (see the runner's GiveUps). A sender of another workspace is
// told too, over the bridge, with workspace: naming the one it was given
// up in; Check accepts it from there only as such (checkRemoteNotice).
const GivenUpNotice = "message_given_up"

// UnansweredNotice is the type of the notice the runner sends a built-in
// agent whose message a program agent handled without answering: its
// program said nothing, or everything it said was refused and it sent
// nothing mended. It names the message (unanswered:), the agent and
// why, so that the sender (the pipeline's orchestrator), which would
// otherwise wait for ever, can tell a person (see the runner's
// Unanswered).
const UnansweredNotice = "message_unanswered"

// RetriedNotice is the type of the notice `parley retry` sends the
// sender, of another workspace, of a message it put back from an agent's
// dead/: that workspace was told of the give-up, and could not see the
// retry (see the runner's TellRetried); Check accepts it from there only
// as such (checkRemoteNotice).
const RetriedNotice = "message_retried"

// OrchestratorRole is the role of the dev pipeline's orchestrator: the
// web view shows the pipeline of an agent that has it, and a sender of
// another workspace that has it is told of its messages left unanswered
// here (see the runner's Unanswered).
const OrchestratorRole = "orchestrator"

// MaxRefusedNotices is how many refusal notices in a row a program agent
// is sent: one whose answers to them are refused again, this many times,
// is told no more, and its refused files wait in rejected/ for a person.
const MaxRefusedNotices = 3

// ErrLoop is what a refusal for stopping a loop is (errors.Is): the
// message would have been one more in a loop between two programs.
var ErrLoop = errors.New("loop stopped")

// Answering is the message a program agent was handling when it said the
// one checked, as the runner knows it: who sent it, and the hops: in the
// program's copy of it.
type Answering struct {
	From string
	Hops int
}

// Loop is a loop stopped: From and With, two programs, would have sent
// each other Hops messages in a row, past Limit (hop_limit).
type Loop struct {
	From  string `json:"from"`
	With  string `json:"with"`
	Hops  int    `json:"hops"`
	Limit int    `json:"limit"`
}

// IsProgram reports whether an agent's messages are written by a
// program: the runner drives it (see Agent.Driven).
func (w *Workspace) IsProgram(agent string) bool {
	a, ok := w.Agent(agent)
	return ok && a.Driven()
}

// Undriven returns the agents the runner drives no program for, in
// parley.yaml's order: the people, and the agents of other workspaces.
// parley's notices (a budget used up, a key refused, a sheet left
// unchanged) go to them.
func (w *Workspace) Undriven() []string {
	var names []string
	for _, a := range w.Config.Agents {
		if !a.Driven() {
			names = append(names, a.Name)
		}
	}
	return names
}

// checkLoop works out the hops: of a program's message in each program
// recipient's copy (see Loops), and refuses it past hop_limit. The hops:
// the sender wrote are dropped, whatever it wrote.
func (w *Workspace) checkLoop(in Input, m *mailbox.Message, recipients []string) (map[string]int, *Refusal) {
	m.Delete("hops")
	a := in.Answering
	if a == nil || !w.IsProgram(in.Sender) {
		return nil, nil
	}
	var hops map[string]int
	for _, to := range recipients {
		if !w.IsProgram(to) {
			continue
		}
		n := 1
		if to == a.From {
			n = max(a.Hops, 0) + 1
		}
		if n > w.Config.HopLimit {
			loop := &Loop{From: in.Sender, With: to, Hops: n, Limit: w.Config.HopLimit}
			return nil, &Refusal{Reason: loop.reason(), Loop: loop}
		}
		if hops == nil {
			hops = make(map[string]int)
		}
		hops[to] = n
	}
	return hops, nil
}

// Sent returns how many messages in a row From and With sent each other
// before the one stopped: Hops counts that one too. The notice of the
// loop and the journal's line say this count (Tally).
func (l *Loop) Sent() int { return l.Hops - 1 }

// Tally says how far the loop went, as parley's notice and the journal
// say it: "have sent each other 3 messages in a row, and ping's answer
// would have been message 4".
func (l *Loop) Tally() string {
	return fmt.Sprintf("have sent each other %d %s in a row, and %s's answer would have been message %d", l.Sent(), plural(l.Sent(), "message", "messages"), l.From, l.Hops)
}

// Between names the two, as the notice and the journal do: "ping and
// pong", or "ping, answering itself".
func (l *Loop) Between() string {
	if l.From == l.With {
		return l.From + ", answering itself"
	}
	return l.From + " and " + l.With
}

func (l *Loop) reason() string {
	between := l.From + " and " + l.With
	if l.From == l.With {
		between = l.From + " and itself"
	}
	return fmt.Sprintf("%v: it would be message %d in a row between %s, programs answering each other (hop_limit: %d in %s)", ErrLoop, l.Hops, between, l.Limit, ConfigFile)
}
