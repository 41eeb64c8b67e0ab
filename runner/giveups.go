package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// GiveUps. A message an agent's driver fails on every retry (or that
// times out) goes to that agent's dead/, with the reason beside it, and
// is shown by `parley status` and `parley pipeline`: a person reads it
// there. Its sender may be waiting for an answer that now never comes:
// the dev pipeline's orchestrator would wait for ever on a step whose
// task_assignment its worker's program gave up. So a built-in sender
// whose handler handles the notice (NoticeHandler) is sent, besides, a
// notice from parley, of type message_given_up, naming the message given
// up (given_up:, its type and thread), the agent that gave it up, the
// attempts, the reason and the file in dead/; and it is woken for it.
//
// Never in a loop: a notice is about an agent's message, never about
// parley's own, so a notice given up in its turn (a handler that fails on
// it) is told to nobody.
//
// At least once, never twice: the notice's id is derived from what it
// tells (the message, the agent that gave it up, and when: the time of
// the reason GiveUp wrote beside it, see mailbox.Dir.GivenUpAt), and it
// is delivered only when the sender's mailbox holds no message of that
// id in any state (mailbox.Dir.Deliver). The runner that gave the message
// up tells at once; a runner killed between the move to dead/ and the
// notice leaves it untold, and the next one tells it when it starts
// (tellGivenUps), as it does after a reload (which may make a sender one
// that is told). A message `parley retry` took out of dead/ is not told
// of; one given up again after it is a new give-up, with a notice of its
// own. Telling the same give-up again delivers nothing: the notice is
// there already, in the inbox, or handled in done/ (or dead/).
//
// Program agents (command, session, openai) are not told: one that
// answered by sending the message again would have it fail again, each
// round costing its retries, with nobody deciding; a person decides, from
// `parley status` or `parley pipeline`, or through the orchestrator,
// which asks one. People are told: an agent no program plays (a gm a
// person plays) gets the notice in its inbox, where `parley inbox`
// shows it; it said nothing there, and a person who sent a narrative the
// scribe gave up learned of it only at another person's seat. (A seat
// tells every give-up in words of its own, and files the notice unshown.)
//
// A sender that lives in another workspace (remote: in parley.yaml) is
// always told, whatever it is there: nobody of its workspace, person or
// program, sees this workspace's dead/, and its pipeline would wait for
// ever. The notice goes into its mailbox here, whose inbox the bridge
// forwards (from parley, so its subject ends .parley), with workspace:
// naming this one, where dead/ is and `parley retry` is run; its own
// workspace's Check accepts it only as such a notice, and decides there
// what becomes of it: a built-in orchestrator escalates it, a person
// reads it in the inbox, a program agent's is filed (see takesNotice).
// What this workspace's bridge refused from it (a dead/ reason starting
// workspace.BridgeRefused) is not told: the bridge never told of it at
// once, and telling it only when a runner starts would tell late and by
// chance.

// LogGaveUp is the message of the runner's log record for a message
// given up (at level error, with the agent and the id): a person's seat,
// which tells the person itself, leaves it out of what it shows.
const LogGaveUp = "gave up a message"

// LogRetrying is the message of the runner's log record for a message
// whose handling failed and is tried again (at level warn, with the
// agent, the id, the attempt and the error). A seat shows no such line:
// it tells the person once, in words of its own, that the agent is slow
// to answer (a person at the table would wait with no sign), and nothing
// more until the message is answered or given up, which it tells.
const LogRetrying = "handling failed; trying again"

// LogUnresponsive is the message of the runner's log record for an agent
// that gave no answer by its timeouts: rule (at level warn, with the
// agent, the message, the rule and the note agents.json keeps: "no
// answer to ID from X within 5m0s"). A seat tells it in words of its own,
// as it comes.
const LogUnresponsive = "agent unresponsive"

// LogLate is the message of the runner's log record for an agent that
// gave no answer by its timeouts: rule while its program is still at work
// on the message (with the same attributes as LogUnresponsive): it stays
// working, and is logged unresponsive (LogUnresponsive) once its program
// is done without an answer. A seat tells it as it tells LogUnresponsive.
const LogLate = "agent late: its program is still at work on the message"

// toldOfGiveUps reports whether an agent is sent a notice when a message
// of its is given up: a person's agent (no program plays it), a built-in
// agent whose handler handles it, or one that lives in another
// workspace.
func (r *Runner) toldOfGiveUps(agent string) bool {
	a, ok := r.ws().Agent(agent)
	if ok && (a.Remote != "" || !a.Driven()) {
		return true
	}
	if !ok || a.Driver != workspace.DriverBuiltin {
		return false
	}
	h, ok := r.opts.Handlers[a.Handler].(NoticeHandler)
	return ok && h.HandlesNotice(workspace.GivenUpNotice)
}

// takesNotice reports whether the worker's driver is handed a notice from
// parley: a refusal notice (see Refusals), or a notice its built-in
// handler says it handles; any other is filed.
func (w *worker) takesNotice(m *mailbox.Message) bool {
	if wakes(m) {
		return true
	}
	b, ok := w.driver.(*builtinDriver)
	if !ok {
		return false
	}
	h, ok := b.handler.(NoticeHandler)
	return ok && h.HandlesNotice(typeOf(m))
}

// noticeOfGiveUp is the id of parley's notice that the message id,
// given up at a time by agent, was: an id of parley's, of that time, whose
// last six hex digits are drawn from agent and id (mailbox.IDOf), so the
// same give-up gets the same id however often it is told.
func noticeOfGiveUp(agent, id string, at time.Time) string {
	return mailbox.IDOf(workspace.Runner, at, agent, []byte(id))
}

// tellGivenUps tells the senders of the messages in the agents' dead/
// that were not told yet (a runner killed before it told them, or a
// sender that was no built-in one then): see GiveUps. Only the dead/ of
// workspaces with a sender told of give-ups are read, and only the
// messages in dead/: dead/ holds few, and whether the notice is there
// already is looked up by its id, never by listing another mailbox.
func (r *Runner) tellGivenUps() {
	ws := r.ws()
	told := false
	for _, a := range ws.Config.Agents {
		if r.toldOfGiveUps(a.Name) {
			told = true
			break
		}
	}
	if !told {
		return
	}
	for _, a := range ws.Config.Agents {
		if r.troubles[a.Name] != "" {
			continue // not used until it is mended: see repair
		}
		box := ws.Mailbox(a.Name)
		ids, err := box.IDs(mailbox.Dead)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				r.log.Warn("looking for messages given up whose sender was not told", "agent", a.Name, "err", err)
			}
			continue
		}
		for _, id := range ids {
			r.TellGivenUp(a.Name, id)
		}
	}
}

// TellGivenUp tells the sender of the message id, which agent's copy is
// in its dead/ (the bridge gave it up: it could not carry it to the
// agent's workspace), as the runner tells of its own give-ups: see
// GiveUps. It may be called from any goroutine.
func (r *Runner) TellGivenUp(agent, id string) {
	ws := r.ws()
	box := ws.Mailbox(agent)
	m := readFrom(box, mailbox.Dead, id, ws.Config.Router.MaxMessageSize)
	reason, _ := box.Reason(mailbox.Dead, mailbox.FileName(id))
	r.tellGivenUp(agent, id, m, reason, 0)
}

// tellGivenUp tells the sender of the message id, given up by agent and
// now in its dead/ (m, nil when it cannot be read), that it was, when the
// sender is told of give-ups and was not told of this give-up yet (see
// GiveUps): the notice is delivered into its inbox, journaled, and the
// sender woken. attempts is 0 when not known (a give-up of a runner
// before this one).
func (r *Runner) tellGivenUp(agent, id string, m *mailbox.Message, reason string, attempts int) {
	if m == nil {
		return
	}
	get := func(k string) string { return headerText(m, k) }
	sender := get("from")
	if sender == "" || sender == workspace.Runner || !r.toldOfGiveUps(sender) {
		return // a notice about a notice is never sent
	}
	ws := r.ws()
	remote := "" // this workspace's name on the bridge, for a sender of another
	if a, _ := ws.Agent(sender); a.Remote != "" {
		if strings.HasPrefix(reason, workspace.BridgeRefused) || ws.Config.Bridge == nil {
			return // refused by the bridge: see GiveUps
		}
		remote = ws.Config.Bridge.Name
	}
	at, ok := r.ws().Mailbox(agent).GivenUpAt(id)
	if !ok {
		// No reason beside it (a person removed it): the message's
		// own time, the same each time too.
		at, _, _ = mailbox.ParseID(id)
	}
	nid := noticeOfGiveUp(agent, id, at)
	dead := mailboxPath(agent, mailbox.Dead, mailbox.FileName(id))
	typ := get("type")
	what := youSent(typ)
	var b strings.Builder
	fmt.Fprintf(&b, "parley gave up %s to %s (%s): %s\n", what, agent, id, reason)
	if remote == "" {
		fmt.Fprintf(&b, "\nIt was not handled. It is in %s, with the reason beside it; `parley retry %s` hands it to %s again.\n", dead, id, agent)
	} else {
		fmt.Fprintf(&b, "\nIt was not handled. It is in %s in workspace %s, with the reason beside it; `parley retry %s`, run in workspace %s, hands it to %s again.\n", dead, remote, id, remote, agent)
	}
	to := []string{sender}
	n := noticeAbout(nid, workspace.GivenUpNotice, sender, m, "given_up", id, b.String())
	n.SetValue("agent", agent)
	if attempts > 0 {
		n.SetValue("attempts", strconv.Itoa(attempts))
	}
	n.SetValue("reason", reason)
	n.SetValue("dead", dead)
	if remote != "" {
		n.SetValue("workspace", remote)
	}
	// One telling at a time: the look for the notice in every state of
	// the sender's mailbox and the delivery are one step, so a notice
	// told by a worker and by tellGivenUps (after a reload) at once is
	// delivered once, whatever the sender does with it meanwhile.
	r.givenUpMu.Lock()
	delivered, err := r.ws().Mailbox(sender).Deliver(nid, n.Bytes(), r.syncer)
	r.givenUpMu.Unlock()
	if err != nil {
		// The message is in dead/ with its reason all the same; the
		// next runner tells it.
		r.log.Error("delivering parley's notice of a message given up", "to", sender, "id", id, "err", err)
		return
	}
	if !delivered {
		return // told already
	}
	r.record(workspace.Entry{ID: nid, From: workspace.Runner, To: to, Type: workspace.GivenUpNotice, Outcome: workspace.Delivered, File: mailbox.FileName(nid),
		Note: fmt.Sprintf("parley's notice to %s of its message %s given up by %s", sender, id, agent)})
	r.Wake([]string{sender})
}

// TellRetried tells the sender of the message id, which `parley retry`
// put back from agent's dead/ into its inbox, that it was, when the
// sender lives in another workspace (remote:): told of the give-up (see
// GiveUps), it cannot see the retry, and its orchestrator, deciding
// retry on the escalation meanwhile, would send the message a second
// time. The notice, of type message_retried (retried:, retried_type:,
// agent:, workspace: naming this one), goes into the sender's mailbox
// here, which the bridge forwards, made durable; that workspace's Check
// takes it as such (checkRemoteNotice). It returns the notice's journal
// line, nil when nobody is told. Each retry is a notice of its own.
func TellRetried(ws *workspace.Workspace, agent, id string, now time.Time) (*workspace.Entry, error) {
	m := readFrom(ws.Mailbox(agent), mailbox.Inbox, id, ws.Config.Router.MaxMessageSize)
	if m == nil || ws.Config.Bridge == nil {
		return nil, nil
	}
	get := func(k string) string { return headerText(m, k) }
	sender := get("from")
	a, ok := ws.Agent(sender)
	if !ok || a.Remote == "" {
		return nil, nil
	}
	here := ws.Config.Bridge.Name
	nid := mailbox.IDOf(workspace.Runner, now, agent, []byte("retried "+id))
	typ := get("type")
	what := youSent(typ)
	body := fmt.Sprintf("%s (%s), given up by %s in workspace %s, was handed back to %s there (parley retry): %s has it again.\n\nDo not send it again: it would be done twice.\n", what, id, agent, here, agent, agent)
	to := []string{sender}
	n := noticeAbout(nid, workspace.RetriedNotice, sender, m, "retried", id, body)
	n.SetValue("agent", agent)
	n.SetValue("workspace", here)
	syncer, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		return nil, err
	}
	defer syncer.Close()
	if _, err := ws.Mailbox(sender).Deliver(nid, n.Bytes(), syncer); err != nil {
		return nil, err
	}
	if err := syncer.Sync(); err != nil {
		return nil, err
	}
	return &workspace.Entry{ID: nid, From: workspace.Runner, To: to, Type: workspace.RetriedNotice, Outcome: workspace.Delivered, File: mailbox.FileName(nid),
		Note: fmt.Sprintf("parley's notice to %s, of workspace %s, of its message %s handed back to %s (parley retry)", sender, a.Remote, id, agent)}, nil
}

// youSent is how a notice to the sender of a message of type typ names
// it: "the task_assignment you sent", or "a message you sent".
func youSent(typ string) string {
	if typ == "" {
		return "a message you sent"
	}
	return "the " + typ + " you sent"
}

// noticeAbout makes parley's notice of type typ (nid its id) to sender,
// about its message id (m, read from a mailbox): in the message's
// thread (its id when it has none), naming it in field (field: its id,
// field_type: its type).
func noticeAbout(nid, typ, sender string, m *mailbox.Message, field, id, body string) *mailbox.Message {
	thread := headerText(m, "thread")
	if thread == "" {
		thread = id
	}
	n := noticeWithID(nid, typ, []string{sender}, thread, body)
	n.SetValue(field, id)
	if t := headerText(m, "type"); t != "" {
		n.SetValue(field+"_type", t)
	}
	return n
}

// headerText is the field k of m's header, trimmed; "" when m is nil
// (not read: a person removed it) or has no such field.
func headerText(m *mailbox.Message, k string) string {
	if m == nil {
		return ""
	}
	v, _ := m.Header().Get(k)
	return strings.TrimSpace(v)
}
