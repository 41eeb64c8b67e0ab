package runner

import (
	"fmt"
	"strconv"
	"strings"

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
// it) is told to nobody; and the notice is sent once, when the message
// goes to dead/ (a runner killed in between leaves the message in dead/
// with its reason, and no notice, as for a person).
//
// Program agents (command, session, openai) are not told: one that
// answered by sending the message again would have it fail again, each
// round costing its retries, with nobody deciding; a person decides, from
// `parley status` or `parley pipeline`, or through the orchestrator,
// which asks one. People are not told either: they see dead/ in those
// views already.

// toldOfGiveUps reports whether an agent is sent a notice when a message
// of its is given up: a built-in agent whose handler handles it.
func (r *Runner) toldOfGiveUps(agent string) bool {
	a, ok := r.ws().Agent(agent)
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

// tellGivenUp tells the sender of the message id, given up and now in
// the worker's dead/ (m, nil when it cannot be read), that it was, when
// the sender is told of give-ups (see GiveUps): the notice is delivered
// into its inbox, journaled, and the sender woken.
func (w *worker) tellGivenUp(id string, m *mailbox.Message, reason string, attempts int) {
	if m == nil {
		return
	}
	get := func(k string) string {
		v, _ := m.Header().Get(k)
		return strings.TrimSpace(v)
	}
	sender := get("from")
	if sender == "" || sender == workspace.Runner || !w.r.toldOfGiveUps(sender) {
		return // a notice about a notice is never sent
	}
	dead := mailboxPath(w.agent.Name, mailbox.Dead, mailbox.FileName(id))
	typ := get("type")
	what := "a message you sent"
	if typ != "" {
		what = "the " + typ + " you sent"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "parley gave up %s to %s (%s): %s\n", what, w.agent.Name, id, reason)
	fmt.Fprintf(&b, "\nIt was not handled. It is in %s, with the reason beside it; `parley retry %s` hands it to %s again.\n", dead, id, w.agent.Name)
	thread := get("thread")
	if thread == "" {
		thread = id
	}
	to := []string{sender}
	n, nid := w.r.newNotice(workspace.GivenUpNotice, to, thread, b.String())
	n.SetValue("given_up", id)
	if typ != "" {
		n.SetValue("given_up_type", typ)
	}
	n.SetValue("agent", w.agent.Name)
	n.SetValue("attempts", strconv.Itoa(attempts))
	n.SetValue("reason", reason)
	n.SetValue("dead", dead)
	if _, err := w.r.ws().Mailbox(sender).Deliver(nid, n.Bytes(), w.r.syncer); err != nil {
		// The message is in dead/ with its reason all the same.
		w.r.log.Error("delivering parley's notice of a message given up", "to", sender, "id", id, "err", err)
		return
	}
	w.r.record(workspace.Entry{ID: nid, From: workspace.Runner, To: to, Type: workspace.GivenUpNotice, Outcome: workspace.Delivered, File: mailbox.FileName(nid),
		Note: fmt.Sprintf("parley's notice to %s of its message %s given up by %s", sender, id, w.agent.Name)})
	w.r.Wake([]string{sender})
}
