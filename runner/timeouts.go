package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// expectation is a reply the runner waits for.
type expectation struct {
	agent    string           // who should answer
	waiting  string           // who sent the message
	message  string           // its id
	asked    *mailbox.Message // the message, as delivered
	policy   *workspace.Timeout
	deadline time.Time
	nudged   bool
	nudge    string // the id of the nudge sent
	unsent   string // why its nudge could not be sent, on one line
	told     bool   // the run said it waits for it (tellAwaited)
	// finished is where a program agent's worker had put the message
	// (done/ or dead/) before the reply was expected: a worker may take
	// a message from its inbox before the batch that delivered it lands
	// (see moving.land), and what it then said (finish) may have been
	// taken by a checkDeadlines that had no expectation for it yet.
	finished string
}

// expectReplies notes the replies a delivered message calls for, by the
// workspace's timeouts.
func (r *Runner) expectReplies(sender string, m *mailbox.Message, recipients []string) {
	r.clearExpectations(sender) // whoever speaks is alive
	r.state.spoke(sender)
	id, _ := m.Header().Get("id")
	for i := range r.ws().Config.Timeouts {
		p := &r.ws().Config.Timeouts[i]
		for _, to := range recipients {
			if !awaits(r.ws(), p, m, to) {
				continue
			}
			e := &expectation{agent: to, waiting: sender, message: id, asked: m, policy: p, deadline: r.opts.Now().Add(p.After)}
			if r.ws().IsProgram(to) {
				e.finished = r.ws().Mailbox(to).HandledIn(id)
			}
			r.expected = append(r.expected, e)
		}
	}
}

// awaits reports whether the timeout p awaits a reply from agent to to
// the message m.
func awaits(ws *workspace.Workspace, p *workspace.Timeout, m *mailbox.Message, to string) bool {
	if len(p.Type) > 0 && !slices.Contains(p.Type, workspace.TypeOf(m)) {
		return false
	}
	if len(p.To) > 0 && !slices.Contains(p.To, to) {
		return false
	}
	return len(p.ToRole) == 0 || ws.HasRole(to, p.ToRole...)
}

func (r *Runner) clearExpectations(agent string) {
	kept := r.expected[:0]
	for _, e := range r.expected {
		if e.agent != agent {
			kept = append(kept, e)
		}
	}
	r.expected = kept
}

// nextDeadline returns when the earliest awaited reply is due (zero when
// none is).
func (r *Runner) nextDeadline() time.Time {
	var next time.Time
	for _, e := range r.expected {
		if next.IsZero() || e.deadline.Before(next) {
			next = e.deadline
		}
	}
	return next
}

// checkDeadlines nudges agents whose reply is late, and marks unresponsive
// those that stayed silent after the nudge.
func (r *Runner) checkDeadlines() {
	nudged := false
	var silent []silence // marked unresponsive, with the waits that are left, in one change of the book
	defer func() { r.saveAwaited(nudged, silent...) }()
	// A late agent whose program is done: unresponsive, unless what it
	// said, still to be routed, answers.
	r.state.turnedUnresponsive(func(agent string) bool { return len(r.chains.published(agent)) > 0 })
	now := r.opts.Now()
	finished := r.takeFinished()
	kept := r.expected[:0]
	for _, e := range r.expected {
		if r.toldInstead(e, finished) {
			continue
		}
		if now.Before(e.deadline) {
			kept = append(kept, e)
			continue
		}
		if run := r.state.run(e.agent); run.State == workspace.StateWorking || run.State == workspace.StateRetrying {
			// Its program is at work (or tried again): busy, not
			// silent. On an earlier message, this one waits its turn,
			// and is timed from when the program starts on it.
			if run.Message != e.message {
				e.deadline = now.Add(e.policy.After)
				kept = append(kept, e)
				continue
			}
			if at := run.Since.Add(e.policy.After); run.State == workspace.StateWorking && now.Before(at) {
				e.deadline = at
				kept = append(kept, e)
				continue
			}
		}
		if !e.nudged && e.policy.Nudge != nil {
			if err := r.nudge(e); err != nil {
				e.unsent = oneLine(err)
				r.log.Error("the nudge was not sent", "agent", e.agent, "by", e.waiting, "err", e.unsent)
			}
			e.nudged, nudged = true, true
			e.deadline = now.Add(e.policy.After)
			kept = append(kept, e)
			continue
		}
		note := fmt.Sprintf("%s from %s within %v", lateNote(e.message), e.waiting, e.policy.After)
		switch {
		case e.unsent != "":
			note += "; its nudge was not sent: " + e.unsent
		case e.nudged:
			note += ", nor after a nudge"
		}
		// Logged by the state book, which decides whether the agent
		// is unresponsive, or late while its program is at work.
		silent = append(silent, silence{agent: e.agent, message: e.message, policy: e.policy.Key, note: note})
	}
	r.expected = kept
}

// oneLine writes an error on one line: a refusal lists each of its
// problems on a line of its own (workspace.Refusal.Error), which a note
// of parley status, one line, joins with "; ".
func oneLine(err error) string {
	return strings.Join(strings.Split(strings.TrimRight(err.Error(), "\n"), "\n"), "; ")
}

// lateNote is how the note of an agent marked unresponsive begins: the
// message it did not answer. It is taken back when the agent speaks.
func lateNote(message string) string { return "no answer to " + message }

// toldInstead reports whether nothing will answer e's message but parley
// said so already: its program agent gave it up (it is in dead/: parley
// status and the run's summary say so, and a built-in sender is told),
// or handled it and answered nothing, and its sender is told of that
// (see Unanswered); or the bridge gave up the copy for an agent of
// another workspace (in its dead/ here: the sender is told, see
// GiveUps). Its deadline then waits for nothing: a run until idle would
// sit out the timeout (30 minutes, for a task of the dev pipeline) after
// the orchestrator escalated it.
//
// A program agent's messages are finished by this runner's workers,
// which say so (finished, see takeFinished): its mailbox is not looked
// at for every deadline at every turn of the loop. A remote agent's copy
// is given up by the bridge, which may run in another process (parley
// bridge, beside a run until idle): its dead/ is looked at.
func (r *Runner) toldInstead(e *expectation, finished map[finishedKey]string) bool {
	ws := r.ws()
	if a, ok := ws.Agent(e.agent); ok && a.Remote != "" {
		return ws.Mailbox(e.agent).HandledIn(e.message) == mailbox.Dead
	}
	if !ws.IsProgram(e.agent) {
		return false
	}
	state := finished[finishedKey{e.agent, e.message}]
	if state == "" {
		state = e.finished
	}
	switch state {
	case mailbox.Dead:
		return true
	case mailbox.Done:
		return r.toldOfUnanswered(e.waiting, e.asked)
	}
	return false
}

// finishedKey names a message of an agent's mailbox.
type finishedKey struct{ agent, id string }

// finish notes that a worker finished agent's message id: it is in
// state (done/ or dead/), for toldInstead.
func (r *Runner) finish(agent, id, state string) {
	r.finishedMu.Lock()
	defer r.finishedMu.Unlock()
	if r.finished == nil {
		r.finished = make(map[finishedKey]string)
	}
	r.finished[finishedKey{agent, id}] = state
}

// takeFinished returns the messages the workers finished since it was
// last called, and forgets them, so the map does not grow with a long
// run. A message finished before its reply was expected (a worker took
// it before the batch that delivered it landed) is seen by the
// expectation itself, which looks at the mailbox once as it is made
// (expectation.finished).
func (r *Runner) takeFinished() map[finishedKey]string {
	r.finishedMu.Lock()
	defer r.finishedMu.Unlock()
	f := r.finished
	r.finished = nil
	return f
}

// nudge sends a policy's nudge message from the one waiting to the silent
// agent, through the bus. The nudge follows up the message that got no
// answer: it is a reply to it (reply_to, thread), sent on to the silent
// agent rather than back to its sender.
func (r *Runner) nudge(e *expectation) error {
	n := e.policy.Nudge
	body := n.Body
	if body == "" {
		body = fmt.Sprintf("No answer yet to %s.", e.message)
	}
	m := mailbox.Reply(e.asked, []byte(strings.TrimRight(body, "\n")+"\n"))
	m.Set("id", (&mailbox.IDs{Now: r.opts.Now}).New(e.waiting))
	m.Set("from", e.waiting)
	m.Set("to", e.agent)
	if n.Type != "" {
		m.Set("type", n.Type)
	}
	for k, v := range n.Fields {
		m.SetValue(k, v)
	}
	// Checked as the router will check it, before it is written: a nudge
	// the protocol does not let the one waiting send (a type that is
	// another role's) is said to be refused, here, not sent and then
	// refused with no word of the timeout it came from.
	v, err := r.ws().Check(workspace.Input{File: "the nudge", Sender: e.waiting, Message: m})
	if err != nil {
		return err
	}
	if !v.Accepted() {
		return fmt.Errorf("%v (a nudge of timeouts: in %s is sent by the agent waiting, %s, and checked as its message)", v.Refusal, workspace.ConfigFile, e.waiting)
	}
	id, _ := m.Header().Get("id")
	r.nudges[id] = nudgeNote(e)
	if _, err := r.agents[e.waiting].Send(m); err != nil {
		return err
	}
	e.nudge = id
	r.recordNudge(e, id)
	r.kickRouter()
	r.log.Info("nudged", "agent", e.agent, "by", e.waiting, "about", e.message)
	return nil
}

// nudgeNote is what the journal says of a nudge as it is delivered.
func nudgeNote(e *expectation) string {
	return fmt.Sprintf("a nudge: %s did not answer %s within %v", e.agent, e.message, e.policy.After)
}

// Awaited returns the replies the run waits for while it has nothing
// else to do (no file to route, no driver at work), the one due first
// first; none while it has. Any goroutine may call it: it is what the
// router last noted (noteAwaited), which it does each time it has done
// what it could and waits (a watching run with Options.NoteAwaited).
func (r *Runner) Awaited() []workspace.Awaited {
	if as := r.awaitedNow.Load(); as != nil {
		return slices.Clone(*as)
	}
	return nil
}

// noteAwaited notes, for Awaited, the replies the run waits for if it has
// nothing else to do, and returns them. Called by the router only.
func (r *Runner) noteAwaited() []workspace.Awaited {
	if len(r.expected) == 0 || !r.nothingPending() || !r.workersIdle() {
		if r.awaitedNow.Load() != nil {
			r.awaitedNow.Store(nil)
		}
		return nil
	}
	as := r.awaitedList()
	r.awaitedNow.Store(&as)
	return as
}

// awaitedList returns the replies awaited, the one due first first.
func (r *Runner) awaitedList() []workspace.Awaited {
	as := make([]workspace.Awaited, 0, len(r.expected))
	for _, e := range r.expected {
		as = append(as, workspace.Awaited{Agent: e.agent, Message: e.message, Type: workspace.TypeOf(e.asked),
			From: e.waiting, Until: e.deadline.UTC(), After: e.policy.After, Policy: e.policy.Key, Rule: e.policy.Rule(), Nudged: e.nudged, Nudge: e.nudge, Unsent: e.unsent})
	}
	slices.SortStableFunc(as, func(a, b workspace.Awaited) int { return a.Until.Compare(b.Until) })
	return as
}

// saveAwaited writes the replies awaited into the state book, when they
// changed, for parley status and for the next runner (takeUpWaits),
// with the agents marked unresponsive as their waits ended, in one
// change: the book never holds one without the other (a runner killed
// between the two left a wait ended, or an agent unresponsive with no
// mark). A nudge just sent is written at once: the next runner does not
// send it again; so is a wait begun: a runner killed before the book's
// next write (within 100ms) left the next one awaiting nothing, and the
// silent agent was never nudged.
func (r *Runner) saveAwaited(nudged bool, silent ...silence) {
	as := r.awaitedList()
	if slices.Equal(as, r.savedAwaited) && len(silent) == 0 {
		return
	}
	begun := slices.ContainsFunc(as, func(a workspace.Awaited) bool {
		return !slices.ContainsFunc(r.savedAwaited, func(b workspace.Awaited) bool { return a.Agent == b.Agent && a.Message == b.Message })
	})
	r.savedAwaited = as
	r.state.setAwaited(as, silent...)
	if nudged || begun {
		r.state.flush()
	}
}

// takeUpWaits takes up what the runner before this one awaited: the
// replies it waited for (each due when it was, nudged or not), and the
// agents it had marked unresponsive, who stay so until they speak. A
// reply whose rule of timeouts: is gone or no longer matches it, or
// whose message is nowhere to be found, is awaited no more.
func (r *Runner) takeUpWaits() {
	ws := r.ws()
	taken := 0
	for agent, before := range r.state.previous {
		if _, ok := ws.Agent(agent); !ok {
			continue
		}
		r.state.keepSilent(agent, before)
		for _, a := range before.Awaited {
			if a.Nudge != "" && !ws.Mailbox(a.From).IsSent(a.Nudge) {
				// Sent, not yet routed: parley's when it is, whether
				// its wait is taken up or not.
				r.nudges[a.Nudge] = fmt.Sprintf("a nudge: %s did not answer %s", a.Agent, a.Message)
			}
			m := r.findAsked(a)
			if m == nil {
				r.log.Warn("a reply awaited before is awaited no more: its message is gone", "agent", agent, "message", a.Message)
				continue
			}
			p := r.policy(a, m)
			if p == nil {
				r.log.Warn("a reply awaited before is awaited no more: its rule of timeouts: was removed or changed, or awaits it no more", "agent", agent, "message", a.Message, "policy", a.Policy)
				continue
			}
			e := &expectation{agent: agent, waiting: a.From, message: a.Message, asked: m, policy: p, deadline: a.Until, nudged: a.Nudged, nudge: a.Nudge, unsent: a.Unsent}
			if _, ok := r.nudges[a.Nudge]; ok {
				r.nudges[a.Nudge] = nudgeNote(e)
			}
			if ws.IsProgram(agent) {
				e.finished = ws.Mailbox(agent).HandledIn(a.Message)
			}
			r.expected = append(r.expected, e)
			taken++
		}
	}
	r.state.previous = nil
	if taken > 0 {
		r.log.Info(fmt.Sprintf("awaiting %d %s the runner before awaited", taken, plural(taken, "reply", "replies")))
	}
	r.saveAwaited(false)
	r.state.write() // the book of the runner before is replaced at once
}

// policy returns the rule of timeouts: an awaited reply was awaited by
// (Workspace.RuleOf), if it still awaits an answer from its agent to m.
func (r *Runner) policy(a workspace.Awaited, m *mailbox.Message) *workspace.Timeout {
	if p := r.ws().RuleOf(a); p != nil && awaits(r.ws(), p, m, a.Agent) {
		return p
	}
	return nil
}

// findAsked reads the message an awaited reply answers: the copy its
// agent received (deleted, it is awaited no more).
func (r *Runner) findAsked(a workspace.Awaited) *mailbox.Message {
	ws := r.ws()
	c, err := ws.Received(a.Message, a.Agent, mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead)
	if err != nil {
		return nil
	}
	return readFrom(ws.Mailbox(c.Agent), c.State, a.Message, ws.Config.Router.MaxMessageSize)
}

// tellAwaited says, once for each awaited reply, that a run until idle
// with nothing else to do waits for it (awaited, as noteAwaited returns
// them), and until when: a run waiting out a timeout of minutes says why
// it has not ended. It names the reply due first, and how many more are
// awaited.
func (r *Runner) tellAwaited(awaited []workspace.Awaited) {
	untold := false
	for _, e := range r.expected {
		untold = untold || !e.told
		e.told = true
	}
	if !untold || len(awaited) == 0 {
		return
	}
	first := awaited[0]
	msg := fmt.Sprintf("waiting until %s for %s's answer to %s from %s (timeouts: after %v)",
		first.Until.Local().Format("15:04:05"), first.Agent, first.Message, first.From, first.After)
	if n := len(awaited) - 1; n > 0 {
		msg += fmt.Sprintf(", and %d more %s", n, plural(n, "reply", "replies"))
	}
	r.log.Info(msg, "agent", first.Agent, "message", first.Message, "until", first.Until, "policy", first.Policy)
}
