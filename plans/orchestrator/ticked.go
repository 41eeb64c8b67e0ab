package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
)

// Start goes on from the steps a person ticked by hand in a plan after
// the orchestrator, agent, escalated a matter about them to the person (a
// step over its iteration limit, blocked, given up or left unanswered).
// The tick is the person's decision on the step: it answers the
// escalation, which waits no more (Escalation.Settled is "ticked"). But
// only an approval sends what follows a step, so left alone the plan
// stalled, the person waiting for the pipeline and the pipeline for the
// person's answer. So when the runner starts, and while it runs, once a
// plan file changed (see Due), each such escalation still in a person's
// inbox is noted to the person, once, and the steps that follow go (or
// the plan is closed). Steps the pipeline approved that a plan no
// longer ticks (the file rewound by git: see goOnFromRewinds) are ticked
// again, and the pipeline goes on from them. What it sends it writes
// into its outbox itself, for the router.
func (o *Orchestrator) Start(ctx context.Context, agent string) error {
	o.lookAtPlans(agent, time.Now()) // what changes from now on, Tick goes on from
	return errors.Join(o.goOnFromTicks(agent), o.escalateGone(agent), o.goOnFromRewinds(agent))
}

// planLook is how often a running orchestrator looks whether a plan file
// in plans/ changed (a stat of each), as a person's editor ticking a step
// changes it: see Due.
const planLook = 2 * time.Second

// looks is what an orchestrator agent saw of plans/ when it last looked.
type looks struct {
	at      time.Time            // when it looked; zero: never
	mtimes  map[string]time.Time // the plan files' modification times then
	changed time.Time            // when it saw a change not yet gone on from; zero: none
}

// Due returns when the orchestrator, agent, goes on from steps ticked by
// hand (Tick): at once when a plan file changed since it last looked
// (soon, when Tick waits for an escalation to be delivered), else never
// (the zero time). It looks every planLook at most: a stat of
// each file in plans/, no plan read. The runner calls it as a Timer; a
// run until idle does not wait for it unless a plan changed.
func (o *Orchestrator) Due(agent string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.looks[agent]
	if now := time.Now(); l != nil && l.changed.IsZero() && now.Sub(l.at) >= planLook {
		if o.plansChanged(l, now) {
			l.changed = now
		}
	}
	if l == nil {
		return time.Time{} // not started: Start looks first
	}
	return l.changed
}

// Tick goes on from the steps ticked by hand after their escalations, and
// from approved steps a plan no longer ticks, as Start does, once Due saw
// a plan file change, or parley.yaml was loaded
// again (Reload): then too a request held by an agent no longer in it is
// escalated (escalateGone). The runner never calls it
// while the orchestrator handles a message (runner.Timer).
//
// An escalation of agent's about a step ticked by hand that is still in
// its outbox, not delivered to the person yet (the plan changed while it
// was being routed), is none Tick goes on from; left so, the plan would
// stall with `parley pipeline` calling the escalation settled. So Tick
// looks again soon (planLook/4), until it is delivered.
func (o *Orchestrator) Tick(ctx context.Context, agent string, now time.Time) error {
	o.mu.Lock()
	if l := o.looks[agent]; l != nil {
		l.changed = time.Time{}
	}
	o.mu.Unlock()
	err := errors.Join(o.goOnFromTicks(agent), o.escalateGone(agent), o.goOnFromRewinds(agent))
	if o.tickedUnrouted(agent) {
		o.mu.Lock()
		if l := o.looks[agent]; l != nil && l.changed.IsZero() {
			l.changed = now.Add(planLook / 4)
		}
		o.mu.Unlock()
	}
	return err
}

// tickedUnrouted reports whether agent's outbox holds an escalation
// whose step was ticked by hand since (Fates.Settled): one not delivered
// to its person yet.
func (o *Orchestrator) tickedUnrouted(agent string) bool {
	box := o.ws().Mailbox(agent)
	names, _ := box.Names(mailbox.Outbox) // none: nothing unrouted
	fates := NewFates(o.ws())
	for _, n := range names {
		m, ok := readMessage(box.Path(mailbox.Outbox, n), o.ws().Config.Router.MaxMessageSize)
		if !ok || get(m, "escalation") == "" {
			continue
		}
		if from(m) == "" {
			m.Set("from", agent) // the router stamps from: on the copies it delivers
		}
		if fates.Settled(m) == "ticked" {
			return true
		}
	}
	return false
}

// lookAtPlans notes the modification times of the plan files as agent
// sees them at now, from which Due tells a change.
func (o *Orchestrator) lookAtPlans(agent string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.looks == nil {
		o.looks = map[string]*looks{}
	}
	l := &looks{}
	o.plansChanged(l, now)
	o.looks[agent] = l
}

// plansChanged looks at the plan files (l.mtimes) at now, and reports
// whether one is new or changed since l.at. A file whose time was within
// a second of the last look counts as changed again: a second change
// within the file system's clock tick leaves its time as it was.
// o.mu is held.
func (o *Orchestrator) plansChanged(l *looks, now time.Time) bool {
	entries, _ := os.ReadDir(filepath.Join(o.ws().Root, plans.Dir)) // none yet: nothing changed
	seen := make(map[string]time.Time, len(entries))
	changed := false
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		mt := fi.ModTime()
		seen[e.Name()] = mt
		fresh := l.at.Sub(mt) < time.Second && mt.Sub(l.at) < time.Second // a time set ahead is no change
		if was, ok := l.mtimes[e.Name()]; !ok || !was.Equal(mt) || fresh {
			changed = true
		}
	}
	l.at, l.mtimes = now, seen
	return changed
}

// goOnFromTicks is Start's and Tick's one decision: each escalation of
// agent's whose step was ticked by hand since is noted, once, and the
// steps that follow it are sent.
func (o *Orchestrator) goOnFromTicks(agent string) error {
	var errs []error
	seen := map[string]bool{} // one escalation to several people: one copy each
	for _, x := range o.escalations() {
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
	p, pending := o.tickPending(h, esc)
	if !pending {
		return nil, nil
	}
	out, err := r.note(tickedSince(esc) + ": the tick answers it, and the pipeline goes on from it.")
	next, nerr := r.dispatch(p)
	return append(out, next...), errors.Join(err, nerr)
}

// tickPending reports whether the orchestrator, whose history is h, has
// still to go on from the escalation esc, whose step was ticked by hand
// since: it did not tell the person so yet, the plan goes on (it is not
// done or blocked), and no approval of the pipeline's was sent for the
// step (its review passed it after all: the pipeline ticked it, and went
// on from it then); p is the plan then.
func (o *Orchestrator) tickPending(h *history, esc *mailbox.Message) (p *plans.Plan, pending bool) {
	thread := cmp.Or(get(esc, "thread"), get(esc, "id"))
	if h.told(thread, tickedSince(esc)) {
		return nil, false
	}
	pf := get(esc, "plan_file")
	if _, _, ok := h.approval(thread, pf, atoi(get(esc, "step"))); ok {
		o.log().Debug("orchestrator: an escalation whose step the pipeline approved since", "escalation", get(esc, "id"), "plan", pf, "step", get(esc, "step"))
		return nil, false
	}
	p, problem := o.readPlan(pf)
	if problem != "" || p.Status == "done" || p.Status == "blocked" {
		o.log().Info("orchestrator: an escalation whose step was ticked by hand, of a plan that does not go on", "escalation", get(esc, "id"), "plan", pf, "step", get(esc, "step"))
		return nil, false
	}
	return p, true
}

// tickedSince is what the note on the escalation esc, whose step was
// ticked by hand since, says first: the orchestrator went on from the
// tick once it told it (Escalation.Pending).
func tickedSince(esc *mailbox.Message) string {
	return fmt.Sprintf("Step %d of %s was ticked by hand since the escalation %s about it", atoi(get(esc, "step")), get(esc, "plan_file"), get(esc, "id"))
}

// send writes a message of agent's into its outbox, as a person would
// (mailbox.Dir.Post): the router takes it from there.
func (o *Orchestrator) send(agent string, m *mailbox.Message) error {
	_, _, err := o.ws().Mailbox(agent).Post(m)
	return err
}
