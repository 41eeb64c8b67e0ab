package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/parley-dev/parley/mailbox"
)

// Start goes on from the steps a person ticked by hand in a plan after
// the orchestrator, agent, escalated a matter about them to the person (a
// step over its iteration limit, blocked, given up or left unanswered).
// The tick is the person's decision on the step: it answers the
// escalation, which waits no more (Escalation.Settled is "ticked"). But
// only an approval sends what follows a step, so left alone the plan
// stalled, the person waiting for the pipeline and the pipeline for the
// person's answer. So when the runner starts, each such escalation still
// in a person's inbox is noted to the person, once, and the steps that
// follow go (or the plan is closed). What it sends it writes into its
// outbox itself, for the router.
func (o *Orchestrator) Start(ctx context.Context, agent string) error {
	var errs []error
	seen := map[string]bool{} // one escalation to several people: one copy each
	for _, x := range Escalations(o.Workspace, nil) {
		if x.Settled != "ticked" || from(x.Message) != agent || seen[x.ID] {
			continue
		}
		seen[x.ID] = true
		out, err := o.fromTickedEscalation(agent, x.Message)
		errs = append(errs, err)
		for _, m := range out {
			errs = append(errs, o.send(agent, m))
		}
	}
	return errors.Join(errs...)
}

// fromTickedEscalation is the note to the person that the step of the
// escalation esc was ticked by hand since, which answers it, and the
// steps that follow; nothing when it was noted already, or its plan is
// done or blocked.
func (o *Orchestrator) fromTickedEscalation(agent string, esc *mailbox.Message) ([]*mailbox.Message, error) {
	h := o.history(agent, mailbox.New(nil))
	r := &run{o: o, agent: agent, in: esc, h: h, thread: cmp.Or(get(esc, "thread"), get(esc, "id"))}
	pf, n := get(esc, "plan_file"), atoi(get(esc, "step"))
	said := fmt.Sprintf("Step %d of %s was ticked by hand since the escalation %s about it", n, pf, get(esc, "id"))
	if h.told(r.thread, said) {
		return nil, nil
	}
	p, problem := r.readPlan(pf)
	if problem != "" || p.Status == "done" || p.Status == "blocked" {
		o.log().Info("orchestrator: an escalation whose step was ticked by hand, of a plan that does not go on", "escalation", get(esc, "id"), "plan", pf, "step", n)
		return nil, nil
	}
	out, err := r.note(said + ": the tick answers it, and the pipeline goes on from it.")
	next, nerr := r.dispatch(p)
	return append(out, next...), errors.Join(err, nerr)
}

// send writes a message of agent's into its outbox, as a person would
// (mailbox.Dir.Post): the router takes it from there.
func (o *Orchestrator) send(agent string, m *mailbox.Message) error {
	_, _, err := o.Workspace.Mailbox(agent).Post(m)
	return err
}
