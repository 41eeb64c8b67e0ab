package orchestrator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner/workspace"
)

// A plan file lives in the workspace, which is often a git work tree that
// the agents' own git runs in: a worker's `git checkout -- .`, `git
// reset --hard` or `git stash` after its step was approved puts the plan
// back as it was committed, and the ticks the orchestrator made since are
// gone. Left so, the pipeline stalls for good: the next wave follows the
// ticks, and the steps it waits for were done and approved, so nothing
// will send them again. The approvals the orchestrator sent are in its
// mailbox (outbox/, sent/): they are the record of what was approved,
// and a step one approved is ticked again from it, with a note to the
// person and a warning in the runner's log (retick). That happens
// whenever the pipeline decides what comes next (dispatch), when the
// runner starts (Start) and once a plan file changed while it runs (Tick).

// pipelinePlan is a plan as one pipeline (a thread) drives it.
type pipelinePlan struct{ thread, planFile string }

// approvedSteps is, for each plan of the pipelines of thread ("" for
// every pipeline), the steps the orchestrator approved, each with the id
// of its last approval: the approvals sent since the pipeline's last
// plan_result naming the plan (a plan written again numbers its steps
// afresh).
func (h *history) approvedSteps(thread string) map[pipelinePlan]map[int]string {
	out := map[pipelinePlan]map[int]string{}
	h.each(thread, func(r *record) {
		switch {
		case !r.sent && r.typ() == PlanResult:
			delete(out, pipelinePlan{r.thread(), cleanPlan(r.get("plan_file"))})
		case r.sent && r.typ() == Approval:
			_, pf, n := h.approved(r)
			if pf == "" || n == 0 {
				return
			}
			k := pipelinePlan{r.thread(), cleanPlan(pf)}
			if out[k] == nil {
				out[k] = map[int]string{}
			}
			out[k][n] = r.get("id")
		}
	})
	return out
}

// untickedOf is the steps of approved (step -> approval) that p has and
// does not tick, in order.
func untickedOf(p *plans.Plan, approved map[int]string) []int {
	var lost []int
	for n := range approved {
		if s := p.Step(n); s != nil && !s.Done {
			lost = append(lost, n)
		}
	}
	slices.Sort(lost)
	return lost
}

// retick ticks again the steps of p that the pipeline approved and the
// plan no longer ticks (rewound outside parley), and sets its status
// back to in_progress when it was rewound too; the note tells the person
// which, and why. p is the plan as it is then.
func (r *run) retick(p *plans.Plan) (*plans.Plan, []*mailbox.Message, error) {
	approved := r.h.approvedSteps(r.thread)[pipelinePlan{r.thread, p.Path}]
	lost := untickedOf(p, approved)
	if len(lost) == 0 {
		return p, nil, nil
	}
	name, status := p.Path, p.Status
	for _, n := range lost {
		q, _, err := plans.Tick(r.planPath(name), n)
		if err != nil {
			return p, nil, err
		}
		p = q
	}
	if status != "in_progress" && status != "done" && status != "blocked" {
		q, _, err := plans.SetStatus(r.planPath(name), "in_progress")
		if err != nil {
			return p, nil, err
		}
		p = q
	}
	p.Path = name
	ids := make([]string, len(lost))
	for i, n := range lost {
		ids[i] = approved[n]
	}
	r.o.log().Warn("orchestrator: approved steps no longer ticked in the plan (changed outside parley: git checkout, reset or stash?), ticked again", "plan", name, "steps", stepList(lost), "approvals", strings.Join(ids, ","), "status", status)
	what := fmt.Sprintf("%s %s of %s, approved, ticked again: the plan no longer ticked %s.\n\n", plural(len(lost), "Step", "Steps"), stepList(lost), name, plural(len(lost), "it", "them"))
	what += fmt.Sprintf("The file was changed outside parley since the pipeline approved %s (%s): a git checkout, reset or stash of the workspace puts it back as it was committed.", plural(len(lost), "it", "them"), strings.Join(ids, ", "))
	if status != p.Status {
		what = strings.TrimSuffix(what, ".") + fmt.Sprintf(" (its status was put back too, to %s).", cmp.Or(status, "none"))
	}
	what += " The approvals stand, and the pipeline goes on from them. Keep the agents' git out of the workspace (a clone or a git worktree of their own, see the README's dev pipeline) so that it does not happen again."
	note, err := r.note(what)
	return p, note, err
}

// stepList is "1, 2 and 5".
func stepList(steps []int) string {
	s := make([]string, len(steps))
	for i, n := range steps {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// goOnFromRewinds ticks again, in every plan a pipeline of agent's
// approved steps of, those the plan no longer ticks (retick), and goes
// on from them as an approval does (dispatch); of a plan marked blocked
// it only ticks them. What it sends it writes into agent's outbox.
func (o *Orchestrator) goOnFromRewinds(agent string) error {
	h := o.history(agent, mailbox.New(nil))
	steps := h.approvedSteps("")
	keys := make([]pipelinePlan, 0, len(steps))
	for k := range steps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b pipelinePlan) int {
		return cmp.Or(cmp.Compare(a.planFile, b.planFile), cmp.Compare(a.thread, b.thread))
	})
	var errs []error
	for _, k := range keys {
		p, problem := o.readPlan(k.planFile)
		if problem != "" || len(untickedOf(p, steps[k])) == 0 {
			continue // a plan gone or broken: what next comes of it escalates it
		}
		r := &run{o: o, agent: agent, in: mailbox.New(nil), h: h, thread: k.thread}
		var out []*mailbox.Message
		var err error
		if p.Status == "blocked" {
			_, out, err = r.retick(p)
		} else {
			out, err = r.dispatch(p)
		}
		errs = append(errs, err)
		for _, m := range out {
			errs = append(errs, o.send(agent, m))
			h.add(&record{m: m, sent: true})
		}
	}
	return errors.Join(errs...)
}

// Unticked returns, for each plan file (named relative to ws's root,
// with slashes), the steps that an orchestrator agent of ws approved
// (its approvals say so) and the plan no longer ticks: the file was
// changed outside parley since (git checkout, reset or stash). The
// orchestrator ticks them again when it next looks (a running runner
// within seconds, else the next one when it starts). It only reads.
func Unticked(ws *workspace.Workspace) map[string][]int {
	out := map[string][]int{}
	o := &Orchestrator{Workspace: ws}
	for _, a := range ws.Config.Agents {
		if a.Handler != "orchestrator" || a.Remote != "" {
			continue
		}
		for k, approved := range o.history(a.Name, mailbox.New(nil)).approvedSteps("") {
			p, problem := o.readPlan(k.planFile)
			if problem != "" {
				continue
			}
			for _, n := range untickedOf(p, approved) {
				if !slices.Contains(out[k.planFile], n) {
					out[k.planFile] = append(out[k.planFile], n)
				}
			}
		}
	}
	for _, steps := range out {
		slices.Sort(steps)
	}
	return out
}
