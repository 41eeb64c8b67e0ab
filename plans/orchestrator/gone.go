package orchestrator

import (
	"errors"
	"fmt"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// escalateGone escalates, once each, the requests of agent's (the
// orchestrator's) that wait for an answer from an agent no longer in
// parley.yaml: a worker removed while it held a step. Nothing will
// answer them (what it wrote into its outbox is not routed, and the
// runner awaits no reply from an agent it forgot), and left alone the
// step would wait for ever with nobody told. The person decides, as for
// a request a program left unanswered (an escalation unanswered): retry
// sends it to another agent of its role, approve accepts the step, stop
// blocks the plan. It is called when the runner starts (Start) and once
// parley.yaml was loaded again (Reload, then Tick). What it sends it
// writes into its outbox itself.
func (o *Orchestrator) escalateGone(agent string) error {
	h := o.history(agent, mailbox.New(nil))
	var errs []error
	for _, rec := range h.all {
		if !rec.sent || !rec.asksAnswer() {
			continue
		}
		to := rec.toNames()
		for _, name := range to {
			if _, ok := o.ws().Agent(name); ok || !o.waitsOnGone(h, rec, name) {
				continue
			}
			out, err := o.goneEscalation(agent, h, rec, name)
			errs = append(errs, err)
			for _, m := range out {
				errs = append(errs, o.send(agent, m))
				h.add(&record{m: m, sent: true}) // escalated: not again
			}
		}
	}
	return errors.Join(errs...)
}

// waitsOnGone reports whether the pipeline still waits on the request
// rec sent to gone, an agent no longer in parley.yaml: it was not
// answered, sent again, ticked (see wentOn), escalated already, nor
// overtaken (its step sent to another worker since, the research joined
// into the plan's request), and its plan goes on (not done, not
// blocked).
func (o *Orchestrator) waitsOnGone(h *history, rec *record, gone string) bool {
	id := rec.get("id")
	if f, _ := o.wentOn(h, id, gone); f != Stalled {
		return false
	}
	if h.escalated(EscalateUnanswered, "unanswered", id, gone) || h.escalatedGiveUp(id, gone) {
		return false
	}
	pf, n := rec.get("plan_file"), atoi(rec.get("step"))
	for _, r := range h.all {
		if !r.sent || !r.at.After(rec.at) || r.thread() != rec.thread() {
			continue
		}
		switch {
		case n != 0 && r.forStep(pf, n) && (r.typ() == TaskAssignment || r.typ() == RevisionRequest):
			return false // the step went to a worker again
		case n == 0 && r.typ() == ArchitectureRequest:
			return false // the pipeline went on to the plan
		}
	}
	if pf == "" {
		pf = h.planFile(rec.thread())
	}
	if pf != "" {
		if p, problem := o.readPlan(pf); problem == "" && (p.Status == "done" || p.Status == "blocked") {
			return false
		}
	}
	return true
}

// goneEscalation is the escalation unanswered of the request rec, sent
// by agent to gone, an agent no longer in parley.yaml.
func (o *Orchestrator) goneEscalation(agent string, h *history, rec *record, gone string) ([]*mailbox.Message, error) {
	id := rec.get("id")
	notice := mailbox.New([]byte(fmt.Sprintf("%s is no longer an agent of %s: it was removed while it held the %s %s, which nothing will answer now (what it wrote into its outbox, if anything, is not routed). Add it back to %s, or decide here.\n", gone, workspace.ConfigFile, rec.name(), id, workspace.ConfigFile)))
	notice.Set("from", workspace.Runner) // told as parley's notice is
	notice.Set("type", workspace.UnansweredNotice)
	notice.SetValue("unanswered", id)
	notice.SetValue("agent", gone)
	r := &run{o: o, agent: agent, in: notice, h: h, thread: rec.thread()}
	out, err := r.escalateMessage(EscalateUnanswered, "unanswered", "waits", rec.msg(), "%s, which was sent the %s%s, is no longer an agent of "+workspace.ConfigFile, rec.name())
	for _, m := range out {
		m.SetValue("about", id)
		m.SetValue("gone", "true")
	}
	return out, err
}

// replacement returns the agent a request of type typ (of submission:
// a review request of no type), sent to an agent no longer in
// parley.yaml, goes to instead: the first agent of the role such
// requests go to, by the answer they ask (kindOf); "" when there is
// none.
func (r *run) replacement(typ, submission string) string {
	var names []string
	switch kindOf(typ, submission) {
	case WorkerSubmission:
		names = r.workers()
	case ResearchResult:
		names = r.role("researcher")
	case TriageResult, PlanResult:
		names = r.role("architect")
	case ReviewVerdict:
		names = r.role("reviewer")
	}
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// known reports whether name is an agent of parley.yaml as last loaded.
func (r *run) known(name string) bool {
	_, ok := r.o.ws().Agent(name)
	return ok
}
