package runner

import (
	"fmt"
	"os"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Unanswered. A program agent that handles a message and answers
// nothing leaves its sender waiting: the dev pipeline's orchestrator
// sends a worker its task and waits for the submission, and a worker
// whose program printed nothing, or whose answers were all refused and
// that sent nothing mended, stalled the pipeline with nobody told (the
// message is in done/: nothing failed). So a built-in sender whose
// handler handles the notice (NoticeHandler) is sent a notice from
// parley, of type message_unanswered, naming the message (unanswered:,
// its type), the agent, why (reason:) and the refused answer, if any
// (refused:); and it is woken for it. The sender decides what an
// unanswered message means: the orchestrator escalates a request it
// waits on, and lets any other be.
//
// A message is unanswered when the program agent's driver said nothing
// in answer to it that the router could route, and no file the program
// wrote into its outbox itself (parley send) answers it: none was
// routed or refused while it was handled, and the outbox holds none when
// the driver is done (what the driver said in answer to an earlier
// message, still waiting there to be routed, answers that one, not this:
// outboxHolds). Said by the driver but refused: the program is
// told, by a refusal notice (see Refusals), and what it says in answer
// to the notice answers the message its refused file answered (the
// notice names it: answering:, answering_from:). So it is unanswered
// too when the program answers that notice with nothing, or when its
// answers were refused MaxRefusedNotices times in a row and it is told
// no more; and when the driver's answers were refused before they
// reached the router (a scratch name, too large: mailbox.Stage).
//
// A step of a plan (plan_file: and step:) left unanswered is told to its
// sender whoever it is: a person reads the notice in the inbox, a program
// agent's is filed in its done/ (takesNotice), where its program may look;
// the plan waits for that step, and nobody told, it waited for ever. Of
// other messages, people and programs are not told: a person sees the
// agent's done/ and the refused files in `parley status`, and a program
// that answered by sending its message again would only wait again. A
// sender of another workspace is told when parley.yaml gives it the role
// orchestrator (workspace.OrchestratorRole): the notice goes into its
// mailbox here, which the bridge forwards, with workspace: naming this
// one, and that workspace's Check takes it as such a notice
// (checkRemoteNotice). Its handler is out of sight, so it is told of
// every message of its left unanswered, and decides there which it
// waited on. toldOfUnanswered decides who is told. The notice's id is
// drawn from the message and the agent, so telling it again (a runner
// started after a crash finishing the message) delivers nothing new.

// toldOfUnanswered reports whether sender is sent a notice when its
// message m is handled by a program agent that answers nothing; m is nil
// when it could not be read. It is the one place that decides who is
// told (see Unanswered):
//
//   - a step of a plan (isStep), whoever sent it: a person, a program
//     agent, a built-in, an agent of another workspace. A step waits for
//     its answer, and the plan with it: nobody told, it waited for ever;
//   - of any other message, a built-in sender whose handler handles the
//     notice (NoticeHandler), of the messages it waits on (AnswerWaiter;
//     of every one when m is nil), and a sender of another workspace
//     given the role orchestrator here, through the bridge (its handler
//     is out of sight: it decides there which it waited on).
func (r *Runner) toldOfUnanswered(sender string, m *mailbox.Message) bool {
	ws := r.ws()
	a, ok := ws.Agent(sender)
	if !ok {
		return false
	}
	if a.Remote != "" {
		return ws.Config.Bridge != nil && (isStep(m) || ws.HasRole(sender, workspace.OrchestratorRole))
	}
	if isStep(m) {
		return true
	}
	if a.Driver != workspace.DriverBuiltin {
		return false
	}
	h, ok := r.opts.Handlers[a.Handler].(NoticeHandler)
	if !ok || !h.HandlesNotice(workspace.UnansweredNotice) {
		return false
	}
	if w, ok := h.(AnswerWaiter); ok && m != nil {
		return w.AwaitsAnswer(workspace.TypeOf(m))
	}
	return true
}

// isStep reports whether m is a step of a plan (plan_file: and step:, as
// the dev pipeline's tasks, revisions and review requests carry): its
// sender waits for its answer, whatever it is and whatever role
// parley.yaml gives it.
func isStep(m *mailbox.Message) bool {
	return m != nil && headerText(m, "plan_file") != "" && headerText(m, "step") != ""
}

// answeringField and answeringFromField are the fields of a refusal
// notice that name the message the refused file answered, and its
// sender: what the program's answer to the notice answers in turn.
const (
	answeringField     = "answering"
	answeringFromField = "answering_from"
)

// saidNothing is called when agent's driver said nothing the router can
// route in answer to the message a (refused holds what it said that was
// refused on the way: mailbox.Stage's refusals). It tells the sender of
// the message a's chain began with, when nothing else answered it.
func (w *worker) saidNothing(a answer, refused []mailbox.Refusal) {
	r := w.r
	agent := w.agent.Name
	if a.root == "" || !r.ws().IsProgram(agent) {
		return // (who is told is decided once the message is read: unansweredNotice)
	}
	if r.chains.saidWhileHandling(agent, a.id) || w.outboxHolds() {
		return // the program wrote into its outbox itself: that answers it
	}
	reason := "its program said nothing in answer"
	rel := ""
	if len(refused) > 0 {
		reason = "what its program said in answer was refused: " + refused[0].Reason
		rel = mailboxPath(agent, mailbox.Rejected, refused[0].Name)
	}
	if a.From == workspace.Runner {
		// Told of its refused answer (a.refused), it said nothing
		// mended: that file, mended, answers the message.
		reason = "its answer was refused, and its program said nothing in answer to parley's notice of it"
		if a.why != "" {
			reason += "; refused for: " + a.why
		}
		if len(refused) > 0 {
			reason = "its answer was refused, and what its program said in answer to parley's notice of it was refused too: " + refused[0].Reason
		}
		if rel == "" {
			rel = a.refused
		}
	}
	r.tellUnanswered(agent, a.root, a.rootFrom, reason, rel)
}

// NoteAnsweredNothing starts the journal's note on a message a program
// agent handled without answering: its program printed nothing (a
// session's result with no text), wrote nothing into its outbox, and
// sent nothing answering it while it was handled, when a rule of
// timeouts: awaits an answer to it. The run's log warns of it too
// (LogAnsweredNothing).
const NoteAnsweredNothing = "answered nothing: its program said nothing in answer"

// LogAnsweredNothing is the message of the runner's log record for a
// message a program agent handled without answering (see
// NoteAnsweredNothing), with the agent, the id and the note.
const LogAnsweredNothing = "answered nothing"

// answeredNothing returns the journal's note on the message id (in) that
// the worker's program agent handled, when its driver said nothing in
// answer and it sent nothing of its own, and logs it; "" otherwise, and
// for an agent that runs no program of its own (a built-in handler, which
// may well answer nothing, as the team lead joining answers), and when no
// rule of timeouts: awaits an answer (the note says who waits).
func (w *worker) answeredNothing(id string, in *mailbox.Message) string {
	ws := w.r.ws()
	agent := w.agent.Name
	if w.agent.Driver != workspace.DriverCommand && w.agent.Driver != workspace.DriverSession {
		return ""
	}
	from := headerText(in, "from")
	why := ""
	for i := range ws.Config.Timeouts {
		if p := &ws.Config.Timeouts[i]; awaits(ws, p, in, agent) {
			why = p.Key + " in " + workspace.ConfigFile
			break
		}
	}
	if why == "" || from == "" || from == workspace.Runner {
		// Awaited by no one: a program may well have nothing to say (an
		// announcement to everyone), and a note on each would be noise.
		// (Nor is its outbox listed for every message it handles.)
		return ""
	}
	if w.r.chains.saidWhileHandling(agent, answerOf(in).id) || w.outboxHolds() {
		return "" // the program wrote into its outbox itself
	}
	note := NoteAnsweredNothing + fmt.Sprintf("; %s waits for an answer (%s)", from, why)
	w.r.log.Warn(LogAnsweredNothing, "agent", agent, "id", id, "note", note)
	return note
}

// outboxHolds reports whether the worker's agent's outbox holds a file
// the router routes (or will refuse) that the program wrote there itself.
// It is asked only when the driver said nothing in answer to the message
// handled, so that what the driver said in answer to an earlier message,
// still waiting there to be routed (a router behind, under load), is no
// answer to this one: a program whose answer was refused and that said
// nothing to parley's notice of it was taken to have answered, and the
// step waited for ever with nobody told (a tryout). The runner's own are
// known (chains.publish notes them before they are moved there, and
// forgets them once they are moved out), so they are read before the
// outbox is listed: one listing, and no file counted for being forgotten
// between the two looks.
func (w *worker) outboxHolds() bool {
	earlier := w.r.chains.published(w.agent.Name)
	names, err := w.box.NamesUnsorted(mailbox.Outbox)
	if err != nil {
		return false
	}
	for _, n := range names {
		if mailbox.IsScratch(n) || strings.HasSuffix(n, mailbox.ReasonSuffix) || earlier[n] {
			continue
		}
		if info, err := os.Lstat(w.box.Path(mailbox.Outbox, n)); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// tellUnanswered tells sender that its message id, which agent handled,
// has no answer (see Unanswered): delivered into its inbox, journaled,
// and the sender woken.
func (r *Runner) tellUnanswered(agent, id, sender, reason, rel string) {
	n := r.unansweredNotice(agent, id, sender, reason, rel)
	if n == nil {
		return
	}
	r.givenUpMu.Lock() // one telling at a time, as for give-ups
	delivered, err := r.ws().Mailbox(sender).Deliver(n.id, n.data, r.syncer)
	r.givenUpMu.Unlock()
	if err != nil {
		r.log.Error("delivering parley's notice of a message unanswered", "to", sender, "id", id, "err", err)
		return
	}
	if !delivered {
		return // told already
	}
	r.record(n.entry)
	r.Wake(n.recipients)
}

// unansweredNotice writes the notice that sender's message id, which
// agent handled, has no answer: why (reason), and the file of agent's
// rejected/ that would have answered it (rel), if any. Its id is drawn
// from the message and agent. It returns nil when id is no message id,
// or the sender waits for no answer to a message of its type.
func (r *Runner) unansweredNotice(agent, id, sender, reason, rel string) *notice {
	ws := r.ws()
	at, _, err := mailbox.ParseID(id)
	if err != nil {
		return nil
	}
	m := readFrom(ws.Mailbox(agent), mailbox.Done, id, ws.Config.Router.MaxMessageSize)
	if m == nil {
		m = readFrom(ws.Mailbox(agent), mailbox.Cur, id, ws.Config.Router.MaxMessageSize)
	}
	if !r.toldOfUnanswered(sender, m) {
		return nil // a message its sender waits on no answer to
	}
	typ := headerText(m, "type")
	remote := "" // this workspace's name on the bridge, for a sender of another
	if a, _ := ws.Agent(sender); a.Remote != "" {
		remote = ws.Config.Bridge.Name
	}
	nid := mailbox.IDOf(workspace.Runner, at, agent, []byte("unanswered "+id))
	what := youSent(typ)
	var b strings.Builder
	end := "." // the reason may end a sentence of its own ("did you mean critical_count?")
	if strings.HasSuffix(reason, ".") || strings.HasSuffix(reason, "?") {
		end = ""
	}
	fmt.Fprintf(&b, "%s handled %s (%s) and answered nothing: %s%s\n", agent, what, id, reason, end)
	where := mailboxPath(agent, mailbox.Done, mailbox.FileName(id))
	if remote != "" {
		where += " in workspace " + remote
	}
	fmt.Fprintf(&b, "\nNothing answers it until someone acts. It is in %s.\n", where)
	if rel != "" {
		there, run := "", "run"
		if remote != "" {
			there, run = " in workspace "+remote, "run there"
		}
		fmt.Fprintf(&b, "The refused answer is in %s%s, with the reason beside it. Mend it, then %s `parley retry %s`: it goes out as %s's answer.\n", rel, there, run, rel, agent)
	}
	to := []string{sender}
	n := noticeAbout(nid, workspace.UnansweredNotice, sender, m, "unanswered", id, b.String())
	n.SetValue("agent", agent)
	n.SetValue("reason", reason)
	if rel != "" {
		n.SetValue("refused", rel)
	}
	if remote != "" {
		n.SetValue("workspace", remote)
	}
	return &notice{
		id: nid, data: n.Bytes(), recipients: to,
		entry: workspace.Entry{ID: nid, From: workspace.Runner, To: to, Type: workspace.UnansweredNotice, Outcome: workspace.Delivered, File: mailbox.FileName(nid),
			Note: fmt.Sprintf("parley's notice to %s of its message %s handled by %s with no answer", sender, id, agent)},
	}
}
