// Package orchestrator is the dev pipeline's orchestrator, a built-in
// agent (role orchestrator) that drives the dev-pipeline protocol from
// the signal and the fields of each message, never from its prose:
//
//   - a person's request -> triage_request to the architect;
//   - triage_result -> one research_request per research question, all at
//     once, their research_results joined into one architecture_request
//     (a `## Research Context` body); no research -> architecture_request
//     at once;
//   - plan_result -> the plan file is read and checked; blockers, a plan
//     that does not check or one outside plans/ -> the person; else the
//     first wave: one task_assignment per step, all at once;
//   - worker_submission rfr -> review_request to the reviewer, and to the
//     auditor when the plan's risk tags include security, auth,
//     data-mutation or concurrent; both verdicts are waited for;
//   - every verdict pass or pass_with_notes -> approval (lgtm) to the
//     worker, the step ticked in the plan, the next wave when the wave is
//     complete; a fail -> revision_request with the next iteration, until
//     MaxIterations attempts failed -> the person, with the history; a
//     retry starts a new round of MaxIterations, its attempts counted on
//     from the last (attempts 6-10);
//   - blocked / escalate -> the person, with the body's Route: line;
//   - parley's notice that a message it sent was given up (its
//     recipient's program failed every retry: the message is in that
//     agent's dead/) -> the person, with the step, the agent, the reason,
//     and `parley retry ID`; retry sends it again (a step's task again),
//     approve ticks the step;
//   - the person's answer (a reply in the pipeline's thread, with a
//     decision field or a first word approve, retry or stop) resumes it;
//     a reply in a pipeline's thread that answers no escalation starts
//     nothing (a note says so), and a plan_result naming a plan another
//     pipeline drives is set aside: one pipeline drives a plan;
//   - an answer is taken for the request it answers, and for that
//     request's pipeline, by its reply_to and thread, else by one rule
//     when it names neither, as models often do (see correlate); a second
//     answer to one request (a submission or triage printed twice) is set
//     aside, the person told;
//   - every step ticked -> the plan's status done, a summary to the person;
//   - a step the person ticked by hand after an escalation about it -> the
//     tick answers the escalation: when a runner starts (Start), and
//     while it runs, once a plan file changed (Due, Tick), a note to the
//     person, once, and the steps that follow it;
//   - a step it approved that the plan no longer ticks (the file put back
//     by a git checkout, reset or stash in the workspace) -> ticked again,
//     a note to the person, and the pipeline goes on (see rewound.go).
//
// It keeps nothing in memory but when it last looked at plans/: each message is decided from the
// orchestrator's own mailbox (what it sent, in outbox/ and sent/, and
// what it handled, in done/), from the message itself and from the plan
// file, so a runner killed at any point resumes where it was.
package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner/workspace"
	"gopkg.in/yaml.v3"
)

// MaxIterations is how many attempts at a step may fail review before the
// step goes to the person: the task_assignment is attempt 1, each
// revision_request the next.
const MaxIterations = 5

// RiskyTags are the plan risk tags that bring the auditor into a review.
var RiskyTags = []string{"security", "auth", "data-mutation", "concurrent"}

// Message types and signals of the dev-pipeline protocol.
const (
	TriageRequest       = "triage_request"
	TriageResult        = "triage_result"
	ResearchRequest     = "research_request"
	ResearchResult      = "research_result"
	ArchitectureRequest = "architecture_request"
	PlanResult          = "plan_result"
	TaskAssignment      = "task_assignment"
	WorkerSubmission    = "worker_submission"
	ReviewRequest       = "review_request"
	ReviewVerdict       = "review_verdict"
	AuditVerdict        = "audit_verdict"
	RevisionRequest     = "revision_request"
	Approval            = "approval"
	// EscalationType and PipelineNote are parley's additions to the
	// protocol: what the orchestrator sends the person (see the
	// dev-pipeline skill). A workspace whose protocol lacks them gets
	// them as informal messages, of no type.
	EscalationType = "escalation"
	PipelineNote   = "pipeline_note"
)

// Signals of the orchestrator's messages to the person.
const (
	SignalDecide = "decide" // an escalation: the pipeline waits for a decision
	SignalInfo   = "info"   // a note: nothing waits on the person
	SignalDone   = "done"   // the summary of a plan done
)

// Escalation kinds, in the escalation field of the orchestrator's
// messages to the person.
const (
	EscalatePlan    = "plan"      // the plan has blockers, or does not check
	EscalateLimit   = "iteration" // a step failed review MaxIterations times
	EscalateBlocked = "blocked"   // an agent signalled blocked or escalate
	EscalateGivenUp = "given_up"  // a message it sent was given up (in its recipient's dead/)
	// EscalateUnanswered: a request it sent was handled by a program
	// agent that answered nothing (see the runner's Unanswered).
	EscalateUnanswered = "unanswered"
)

// The person's decisions on an escalation, in the decision field of the
// answer (or its first word).
const (
	DecisionApprove = "approve" // accept it and go on
	DecisionRetry   = "retry"   // do it again, with the person's answer
	DecisionStop    = "stop"    // stop: the plan is marked blocked
)

// humanRole is the role of the agents escalations go to.
const humanRole = "human"

// Orchestrator is the built-in handler. Its zero value is not usable: set
// Workspace.
type Orchestrator struct {
	// Workspace is the workspace it works in: its agents and roles, the
	// orchestrator's mailbox, plans/.
	Workspace *workspace.Workspace
	// Log receives what it decides; nil discards.
	Log *slog.Logger
	// Checkpoint, when set, commits the plan once it is done (parley
	// sets it to a git checkpoint with `git: auto`). Its error is
	// logged: the plan is on disk either way.
	Checkpoint func(ctx context.Context, message string) error

	// reloaded is the workspace as the runner loaded it again after
	// parley.yaml changed (Reload); nil: Workspace.
	reloaded atomic.Pointer[workspace.Workspace]

	mu    sync.Mutex        // guards looks
	looks map[string]*looks // what each agent saw of plans/, for Due

	// files is what the histories keep of the mailboxes they read:
	// a history is read for every message handled, and holds every
	// message of the session; the index lists a state directory again
	// only when it changed, and reads only the files it did not hold.
	// Made at its first use (index).
	files     *index
	filesOnce sync.Once
	// persons marks the files of persons' mailboxes that a Tick reads
	// (escalations).
	persons marks

	liveMu sync.Mutex       // held while a message is handled
	lives  map[string]*live // each agent's history, kept from one message to the next
	// checkLive, when set, is handed each live history Handle decides
	// from and the history read afresh for the message (a test checks
	// that they agree).
	checkLive func(live, fresh *history)
}

// index is o.files, made the first time.
func (o *Orchestrator) index() *index {
	o.filesOnce.Do(func() {
		if o.files == nil {
			o.files = &index{}
		}
	})
	return o.files
}

// Reload has the orchestrator go on with the workspace as loaded again
// after parley.yaml changed: the agents and roles it sends work to. Its
// Tick is due at once: a request held by an agent removed from
// parley.yaml is escalated (escalateGone).
func (o *Orchestrator) Reload(ws *workspace.Workspace) {
	o.reloaded.Store(ws)
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, l := range o.looks {
		if l.changed.IsZero() {
			l.changed = time.Now()
		}
	}
}

// ws is the workspace as last loaded.
func (o *Orchestrator) ws() *workspace.Workspace {
	if ws := o.reloaded.Load(); ws != nil {
		return ws
	}
	return o.Workspace
}

func (o *Orchestrator) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// Handle decides what follows one message delivered to the orchestrator,
// agent, and returns the messages to send. It may tick a step of the plan
// and set its status; a message handled again after a crash decides the
// same (a tick is made once).
func (o *Orchestrator) Handle(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, error) {
	h, done := o.liveHistory(agent, in)
	defer done()
	if o.checkLive != nil {
		o.checkLive(h, o.history(agent, in))
	}
	r := &run{o: o, agent: agent, in: in, h: h, thread: h.threadOf(in)}
	out, err := r.decide()
	if err == nil && r.save != "" && o.Checkpoint != nil {
		if err := o.Checkpoint(ctx, r.save); err != nil {
			o.log().Warn("orchestrator: git checkpoint", "err", err)
		}
	}
	return out, err
}

// decide decides what follows the message, by its type and signal.
func (r *run) decide() ([]*mailbox.Message, error) {
	in := r.in
	typ := typeOf(in)
	sig := get(in, "signal")
	r.o.log().Debug("orchestrator", "type", typ, "signal", sig, "thread", r.thread)
	if r.h.cur.msg() == in && r.h.cur.dup != nil {
		return r.duplicate()
	}
	if sig == "blocked" || sig == "escalate" {
		if typ == PlanResult {
			return r.escalate(EscalatePlan, "the architect is blocked", nil, nil)
		}
		return r.blocked(fmt.Sprintf("%s signalled %s (%s)", from(in), sig, orNone(typ)))
	}
	if q := r.h.byID[get(in, "reply_to")]; q != nil && q.sent && q.to(from(in)) && q.asksNone() && r.o.ws().IsProgram(from(in)) && r.h.cur.req == nil {
		// A program's answer to a message that asks none that says
		// nothing more ("Thanks for the approval!", the approved
		// submission printed again: see correlate): nothing waits on
		// it, and it tells nothing of a step (the step approved is
		// done; the next one's task, sent with the approval, is not
		// what it answers). A submission for another step, or one a
		// task is open to, is correlated to that request and handled
		// below; one that says it is blocked, or escalates, was heard
		// above.
		r.o.log().Info("orchestrator: an answer to a message that asks none, filed", "type", typ, "from", from(in), "reply_to", q.get("id"), "reply_to_type", q.typ())
		return nil, nil
	}
	switch typ {
	case workspace.ShutdownRequest:
		return r.shutdown(), nil
	case workspace.GivenUpNotice:
		if from(in) == workspace.Runner {
			return r.givenUp()
		}
	case workspace.UnansweredNotice:
		if from(in) == workspace.Runner {
			return r.unanswered()
		}
	case workspace.RetriedNotice:
		if from(in) == workspace.Runner {
			return r.retriedThere()
		}
	case TriageResult:
		return r.triaged()
	case ResearchResult:
		return r.researched()
	case PlanResult:
		return r.planned()
	case WorkerSubmission:
		return r.submitted()
	case ReviewVerdict, AuditVerdict:
		return r.judged()
	case "":
		if !r.o.ws().IsProgram(from(in)) {
			return r.fromPerson()
		}
		if q := r.h.byID[get(in, "reply_to")]; q != nil && q.sent && q.asksAnswer() {
			return r.untypedAnswer(q)
		}
	}
	r.o.log().Info("orchestrator: nothing to do", "type", typ, "from", from(in))
	return nil, nil
}

// duplicate sets aside a second answer to one request (see correlate):
// a program that printed its answer twice, or a model that wrote it
// twice, would have it acted on twice (two review rounds and two
// approvals for one submission, every research request sent twice).
// The person is told, once for each, and nothing else is done.
func (r *run) duplicate() ([]*mailbox.Message, error) {
	cur := r.h.cur
	r.o.log().Info("orchestrator: a second answer to one request, set aside", "type", cur.typ(), "from", from(r.in), "answers", cur.req.get("id"), "first", cur.dup.get("id"))
	return r.note(fmt.Sprintf("Set aside: the %s %s from %s answers the %s %s, which its %s %s answered already; a second answer to one request is not acted on.", orNone(cur.typ()), get(r.in, "id"), from(r.in), orNone(cur.req.typ()), cur.req.get("id"), orNone(cur.dup.typ()), cur.dup.get("id")))
}

// untypedAnswer handles a program's answer of no type to a request of
// ours (q): a worker that printed "Done." for its task. Its text is no
// submission, verdict or result, so the pipeline cannot go on from it,
// and left alone the step would wait for ever with nobody told: the
// person decides, as for a step an agent is blocked on (approve accepts
// the step, retry sends the work again, stop blocks the plan).
func (r *run) untypedAnswer(q *record) ([]*mailbox.Message, error) {
	what := fmt.Sprintf("%s answered the %s %s with a message of no type, which the pipeline cannot go on from", from(r.in), q.name(), q.get("id"))
	if pf, n, ok := r.stepOf(r.in); ok && !r.o.stepTicked(pf, n) {
		what = fmt.Sprintf("step %d of %s waits: %s", n, pf, what)
	}
	return r.blocked(what)
}

// HandlesNotice reports whether the orchestrator is handed parley's
// notices of type typ: those of its messages given up, and of its
// messages a program handled without answering, which it escalates.
func (o *Orchestrator) HandlesNotice(typ string) bool {
	return typ == workspace.GivenUpNotice || typ == workspace.UnansweredNotice || typ == workspace.RetriedNotice
}

// retriedThere handles the notice, from parley of another workspace, that
// `parley retry` there handed a message of ours given up there back to
// its agent: the escalation about it, if one was sent, needs no answer
// any more (an answer now sends nothing: the fate is HandedBack), and
// the person is told so.
func (r *run) retriedThere() ([]*mailbox.Message, error) {
	id, agent, there := get(r.in, "retried"), get(r.in, "agent"), get(r.in, "workspace")
	if !r.h.escalated(EscalateGivenUp, "given_up", id, agent) {
		r.o.log().Info("orchestrator: a message retried in another workspace, never escalated here", "retried", id, "agent", agent, "workspace", there)
		return nil, nil
	}
	return r.note(fmt.Sprintf("%s has the message given up (%s) again: it was handed back in workspace %s (parley retry there). The escalation about it needs no answer; answered, it sends nothing.", orDash(agent), id, orDash(there)))
}

// AwaitsAnswer reports whether the pipeline waits for an answer to a
// message of type typ it sends: a request (an approval, say, is the end
// of a step, and nothing answers it; see kindOf). parley tells the
// orchestrator only of those a program left unanswered
// (runner.AnswerWaiter), and of every step of a plan (a review request
// of no type is one).
func (o *Orchestrator) AwaitsAnswer(typ string) bool { return kindOf(typ, "") != "" }

// unanswered handles parley's notice that a request the orchestrator sent
// was handled by a program agent that answered nothing: its program said
// nothing, or all it said was refused (see the runner's Unanswered). The
// pipeline would wait for ever for the answer: the person decides, as for
// a message given up (retry sends it again, approve accepts its step,
// stop blocks the plan). Nothing is escalated for a message the pipeline
// does not wait on, one whose step went on since, or one escalated
// already.
func (r *run) unanswered() ([]*mailbox.Message, error) {
	id, agent := get(r.in, "unanswered"), get(r.in, "agent")
	rec := r.h.byID[id]
	if rec == nil || !rec.sent || !rec.to(agent) || !rec.asksAnswer() {
		r.o.log().Info("orchestrator: a message left unanswered that nothing waits on", "unanswered", id, "agent", agent)
		return nil, nil
	}
	if f, how := r.o.wentOn(r.h, id, agent); f == WentOn {
		if how == "ticked" {
			return r.fromTick(rec.msg(), agent, "handled the %s it was sent and answered nothing")
		}
		r.o.log().Info("orchestrator: a message left unanswered whose step went on", "unanswered", id, "agent", agent, "how", how)
		return nil, nil
	}
	if r.h.escalated(EscalateUnanswered, "unanswered", id, agent) {
		r.o.log().Info("orchestrator: a message left unanswered, escalated already", "unanswered", id, "agent", agent)
		return nil, nil
	}
	return r.escalateMessage(EscalateUnanswered, "unanswered", "waits", rec.msg(), "%s handled the %s it was sent%s and answered nothing", rec.name())
}

// fromTick goes on from a step a person ticked by hand in the plan while
// its message (orig, to agent) was out, when parley's notice being
// handled says nothing will answer it (what: a format whose %s is the
// message's type). The tick is the person's decision on the step, so
// nothing is escalated; but only an approval sends what follows a step,
// and left alone the plan would stall with nobody told: the steps that
// follow go now (or the plan is closed), and the person is told so.
func (r *run) fromTick(orig *mailbox.Message, agent, what string) ([]*mailbox.Message, error) {
	pf, n, _ := r.stepOf(orig)
	return r.goOnFromTick(pf, n, fmt.Sprintf("%s "+what, orDash(agent), typeOf(orig)), "")
}

// goOnFromTick goes on from step n of the plan pf, ticked by hand, when
// what (an agent's "worker-2 signalled blocked (worker_submission)")
// would have been escalated about it: the tick is the person's decision
// on the step, so nothing is escalated, the steps that follow go now (or
// the plan is closed), and the person is told so, with said (a section
// with what the agent wrote, if anything). Nothing when the plan does
// not go on.
func (r *run) goOnFromTick(pf string, n int, what, said string) ([]*mailbox.Message, error) {
	p, problem := r.readPlan(pf)
	if problem != "" || p.Status == "done" || p.Status == "blocked" {
		r.o.log().Info("orchestrator: a matter about a step ticked by hand, of a plan that does not go on", "matter", what, "plan", pf, "step", n)
		return nil, nil
	}
	text := fmt.Sprintf("Step %d of %s was ticked by hand, and %s: the tick stands for the step, and the pipeline goes on from it.", n, pf, what)
	if said != "" {
		text += "\n\n" + said
	}
	out, err := r.note(text)
	next, nerr := r.dispatch(p)
	return append(out, next...), errors.Join(err, nerr)
}

// blocked escalates what an agent is blocked on (what), as the message
// being handled says; but when it is about a step ticked by hand since
// its task went out, the tick decided the step, and the pipeline goes
// on from it (goOnFromTick): an escalation would wait for an answer
// nobody needs to give, the plan stalled meanwhile.
func (r *run) blocked(what string) ([]*mailbox.Message, error) {
	if pf, n, ok := r.stepOf(r.in); ok && r.o.stepTicked(pf, n) {
		said := ""
		if body := strings.TrimSpace(string(r.in.Body)); body != "" {
			said = fmt.Sprintf("## Message from %s\n\n%s", from(r.in), body)
		}
		return r.goOnFromTick(pf, n, what, said)
	}
	return r.escalate(EscalateBlocked, what, nil, nil)
}

// escalateMessage escalates (kind) a message of ours that nothing
// answers, as parley's notice being handled tells of it: its id (in the
// notice's field, the escalation's too), agent:, workspace: (where it
// was, when not here) and reason:. orig is the message, nil when it is
// none of ours; the escalation names its step, if any (it "waits", or
// "is stalled"). what says what agent did with it: a format whose three
// %s are the agent, typ and where it was.
func (r *run) escalateMessage(kind, field, stepVerb string, orig *mailbox.Message, what, typ string) ([]*mailbox.Message, error) {
	id, agent, elsewhere := get(r.in, field), get(r.in, "agent"), get(r.in, "workspace")
	in := ""
	if elsewhere != "" {
		in = " in workspace " + elsewhere // its done/ or dead/ out of sight
	}
	what = fmt.Sprintf(what, orDash(agent), typ, in)
	pf, n, step := "", 0, false
	if orig != nil {
		pf, n, step = r.stepOf(orig)
	}
	if step {
		what = fmt.Sprintf("step %d of %s %s: %s", n, pf, stepVerb, what)
	}
	if reason := get(r.in, "reason"); reason != "" {
		what += " (" + reason + ")"
	}
	out, err := r.escalate(kind, what, nil, nil)
	for _, m := range out {
		if step {
			m.SetValue("plan_file", pf)
			m.SetValue("step", strconv.Itoa(n))
		}
		m.SetValue(field, id)
		if agent != "" {
			m.SetValue("agent", agent)
		}
		if elsewhere != "" {
			m.SetValue("workspace", elsewhere)
		}
		if refused := get(r.in, "refused"); refused != "" {
			m.SetValue("refused", refused) // its agent's answer, refused: mended and retried, it answers
		}
	}
	return out, err
}

// givenUp handles parley's notice that a message the orchestrator sent
// was given up: its recipient's program failed it every retry, or timed
// out, and nothing will answer it. The person decides, as for a blocked
// step; the escalation names the step the message was for, if any. A
// give-up told again (see escalatedGiveUp) is escalated once.
func (r *run) givenUp() ([]*mailbox.Message, error) {
	id, agent := get(r.in, "given_up"), get(r.in, "agent")
	if r.h.escalatedGiveUp(id, agent) {
		r.o.log().Info("orchestrator: a give-up told again, escalated already", "given_up", id, "agent", agent, "notice", get(r.in, "id"))
		return nil, nil
	}
	var orig *mailbox.Message
	if rec := r.h.byID[id]; rec != nil && rec.sent && rec.to(agent) {
		orig = rec.msg() // else no message of ours to agent, and of no step
		if f, how := r.o.wentOn(r.h, id, agent); f == WentOn && how == "ticked" {
			return r.fromTick(orig, agent, "gave up the %s it was sent")
		}
	}
	typ := cmp.Or(typeOf(orig), get(r.in, "given_up_type"), "message")
	return r.escalateMessage(EscalateGivenUp, "given_up", "is stalled", orig, "%s gave up the %s it was sent%s", typ)
}

// shutdown answers a shutdown_request (parley stop): the orchestrator
// agrees, and the runner stops it; what is sent to it meanwhile waits in
// its inbox for the next run. The request never starts a pipeline.
func (r *run) shutdown() []*mailbox.Message {
	m := r.send([]string{from(r.in)}, workspace.ShutdownResponse, "", "Stopping: what comes for me waits in my inbox.\n")
	rid := get(r.in, "request_id")
	if rid == "" {
		rid = get(r.in, "id")
	}
	m.Set("request_id", rid)
	m.SetValue("approve", "true")
	return []*mailbox.Message{m}
}

// run is the handling of one message.
type run struct {
	o      *Orchestrator
	agent  string
	in     *mailbox.Message
	h      *history
	thread string
	save   string // the message of a git checkpoint to make, when the plan is done
}

// send makes a message of the pipeline's thread, answering the message
// being handled (reply_to).
func (r *run) send(to []string, typ, signal, body string) *mailbox.Message {
	m := mailbox.New([]byte(body))
	m.SetNames("to", to)
	if typ != "" {
		m.Set("type", typ)
	}
	if signal != "" {
		m.Set("signal", signal)
	}
	if r.thread != "" {
		m.Set("thread", r.thread)
	}
	if id := get(r.in, "id"); id != "" {
		m.Set("reply_to", id)
	}
	return m
}

// toPerson makes a message of the pipeline's thread to people, of the
// protocol's type typ and signal when the workspace's protocol has the
// type (the dev-pipeline skill does), else informal, of no type: a
// protocol of the workspace's own that lacks it would refuse it.
func (r *run) toPerson(people []string, typ, signal, body string) *mailbox.Message {
	if !r.protocolHas(typ) {
		typ, signal = "", ""
	}
	return r.send(people, typ, signal, body)
}

// role returns the agents of the workspace that hold one of roles, in
// parley.yaml's order.
func (r *run) role(roles ...string) []string {
	var names []string
	for _, a := range r.o.ws().Config.Agents {
		if a.Name != r.agent && r.o.ws().HasRole(a.Name, roles...) {
			names = append(names, a.Name)
		}
	}
	return names
}

// people are the agents escalations and the summary go to: those with
// role human, else every agent that is no program.
func (r *run) people() []string {
	if p := r.role(humanRole); len(p) > 0 {
		return p
	}
	return r.o.ws().Undriven()
}

// workers are the agents tasks go to.
func (r *run) workers() []string {
	if w := r.role("worker"); len(w) > 0 {
		return w
	}
	return r.role("debugger", "documenter")
}

// fromPerson handles a person's message: an answer to an escalation
// resumes the pipeline; anything else is a new request, triaged.
func (r *run) fromPerson() ([]*mailbox.Message, error) {
	if esc := r.h.pendingEscalation(r.thread); esc != nil {
		return r.decided(esc)
	}
	if r.h.started(r.thread) && r.h.noteRepliedTo(r.h.cur) != nil {
		if esc := r.h.waitingEscalation(r.thread, ""); esc != nil {
			// A decision in reply to a note ("approve" to a note about
			// the waves) is not the answer to the escalation waiting:
			// taking it for one decides what the person did not read.
			return r.note(fmt.Sprintf("Set aside: your message %s replies to my note %s, which asks no decision, so it decides nothing. The escalation %s still waits for your decision (%s): answer it with %s.", get(r.in, "id"), get(r.in, "reply_to"), get(esc, "id"), get(esc, "summary"), AnswerHint(esc, "", "")))
		}
	}
	if r.h.started(r.thread) {
		// A reply in a pipeline's thread ("ok, thanks" to a note) that
		// answers no escalation is no new request: a second pipeline in
		// the thread would drive its plan twice.
		return r.note(fmt.Sprintf("Set aside: your message %s is in the thread of a pipeline already started, and no decision of yours is waiting in it, so it starts nothing. To ask for something new, send a message of its own (parley send --to %s), not a reply.", get(r.in, "id"), r.agent))
	}
	if to := get(r.in, "reply_to"); to != "" && r.h.byID[to] == nil {
		// A reply to no message of ours (an id cut short, or copied
		// wrong) is no new request: started as one, it would set the
		// architect and the researchers to work on what was meant as an
		// answer.
		return r.note(fmt.Sprintf("Set aside: your message %s replies to %s, which is no message of mine, so it starts nothing. To answer an escalation, reply to its id as parley pipeline prints it; to ask for something new, send a message of its own (parley send --to %s), not a reply.", get(r.in, "id"), to, r.agent))
	}
	architects := r.role("architect")
	if len(architects) == 0 {
		return nil, errors.New("no agent has the role architect to triage the request")
	}
	r.thread = get(r.in, "id")
	if t := get(r.in, "thread"); t != "" {
		r.thread = t
	}
	body := "## Request\n\n" + strings.TrimSpace(string(r.in.Body)) + "\n"
	if s := get(r.in, "summary"); s != "" {
		body = "## Request\n\n" + s + "\n\n" + strings.TrimSpace(string(r.in.Body)) + "\n"
	}
	return []*mailbox.Message{r.send(architects[:1], TriageRequest, "execute", body)}, nil
}

// triaged handles a triage_result: research, or the plan straight away.
func (r *run) triaged() ([]*mailbox.Message, error) {
	if get(r.in, "research_needed") != "true" {
		return r.architecture("No research needed — proceed.\n")
	}
	questions := researchQuestions(string(r.in.Body))
	researchers := r.role("researcher")
	if len(questions) == 0 || len(researchers) == 0 {
		why := "the triage lists no research questions"
		if len(researchers) == 0 {
			why = "no agent has the role researcher"
		}
		return r.architecture(fmt.Sprintf("No research was done (%s) — proceed.\n", why))
	}
	var out []*mailbox.Message
	for i, q := range questions {
		m := r.send(researchers[i%len(researchers):i%len(researchers)+1], ResearchRequest, "research", q+"\n\n## Context\n\n"+strings.TrimSpace(string(r.in.Body))+"\n")
		m.SetValue("topic", topic(q))
		out = append(out, m)
	}
	return out, nil
}

// architecture asks the architect for the plan.
func (r *run) architecture(body string) ([]*mailbox.Message, error) {
	architects := r.role("architect")
	if len(architects) == 0 {
		return nil, errors.New("no agent has the role architect")
	}
	return []*mailbox.Message{r.send(architects[:1], ArchitectureRequest, "plan", body)}, nil
}

// researched joins the research results: when every research_request of
// the last triage has its answer, the architect gets them all.
func (r *run) researched() ([]*mailbox.Message, error) {
	reqs := r.h.lastFanOut(r.thread)
	if len(reqs) == 0 {
		r.o.log().Info("orchestrator: a research result no request asked for", "from", from(r.in))
		return nil, nil
	}
	answers := r.h.answers(r.thread, reqs, ResearchResult)
	for _, q := range reqs {
		if answers[get(q, "id")] == nil {
			return nil, nil // the join waits for the others
		}
	}
	if r.h.sentAfter(r.thread, ArchitectureRequest, r.h.fanOutStart(reqs)) {
		// Joined already: a duplicate result, or the answer to a
		// request sent again after the plan was asked for (an older
		// parley asked for it with another pipeline's research). Its
		// plan asked for again would be dispatched again.
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("## Research Context\n")
	for _, q := range reqs {
		a := answers[get(q, "id")]
		fmt.Fprintf(&b, "\n### %s\n\n", get(q, "topic"))
		if get(a, "verified") != "true" {
			b.WriteString("**Unverified:** this answer rests on assumptions not checked against sources.\n\n")
		}
		b.WriteString(strings.TrimSpace(string(a.Body)) + "\n")
	}
	return r.architecture(b.String())
}

// planned handles a plan_result: the person first when the plan has
// blockers or is not a valid plan in plans/; else the first wave.
func (r *run) planned() ([]*mailbox.Message, error) {
	if get(r.in, "has_blockers") == "true" {
		return r.escalate(EscalatePlan, "the architect's plan has blockers", nil, nil)
	}
	p, problem := r.readPlan(get(r.in, "plan_file"))
	if problem != "" {
		return r.escalate(EscalatePlan, problem, nil, nil)
	}
	if other := r.h.driving(r.thread, p.Path); other != "" && p.Status == "in_progress" {
		return r.note(fmt.Sprintf("Set aside: the plan_result %s names %s, which the pipeline %s drives (status in_progress); one pipeline drives a plan. Stop that one first (decision stop marks the plan blocked), or name another plan.", get(r.in, "id"), p.Path, other))
	}
	if _, _, err := plans.SetStatus(r.planPath(p.Path), "in_progress"); err != nil {
		return nil, err
	}
	return r.dispatch(p)
}

// howDone says how step n of the plan pf was done, for the plan's
// summary: "2 attempts" (approved by its review), "5 attempts failed
// review; approved by you" (or blocked, given up, unanswered: approved
// on an escalation), "ticked by hand after 1 attempt" (no approval of
// the pipeline's: a person ticked it in the plan).
func (r *run) howDone(pf string, n int) string {
	attempts, _ := r.h.attempts(r.thread, pf, n)
	count := fmt.Sprintf("%d %s", attempts, plural(attempts, "attempt", "attempts"))
	by, kind, ok := r.h.approval(r.thread, pf, n)
	switch {
	case !ok && attempts == 0:
		return "ticked by hand"
	case !ok:
		return "ticked by hand after " + count
	case by == "":
		return count
	}
	switch kind {
	case EscalateLimit:
		count += " failed review"
	case EscalateBlocked:
		count += ", blocked"
	case EscalateGivenUp:
		count += ", given up"
	case EscalateUnanswered:
		count += ", unanswered"
	}
	return count + "; approved by " + by
}

// planPath is the path of a plan file named relative to the workspace.
func (r *run) planPath(name string) string {
	return filepath.Join(r.o.ws().Root, filepath.FromSlash(name))
}

// readPlan is Orchestrator.readPlan.
func (r *run) readPlan(name string) (*plans.Plan, string) {
	return r.o.readPlan(name)
}

// readPlan reads and checks the plan named by a plan_file field. The
// problem says what is wrong, for the person; the plan's Path is the name
// relative to the workspace, with slashes.
func (o *Orchestrator) readPlan(name string) (*plans.Plan, string) {
	if name == "" {
		return nil, "the plan_result names no plan_file"
	}
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(name)))
	if filepath.IsAbs(name) || !strings.HasPrefix(clean, plans.Dir+"/") || strings.Contains(clean[len(plans.Dir)+1:], "/") {
		return nil, fmt.Sprintf("the plan file %s is not in %s/ of the workspace", name, plans.Dir)
	}
	p, err := plans.Read(filepath.Join(o.ws().Root, filepath.FromSlash(clean)))
	if err != nil {
		return nil, fmt.Sprintf("the plan file %s cannot be read: %v", clean, err)
	}
	p.Path = clean
	if err := p.Err(); err != nil {
		return nil, fmt.Sprintf("the plan file %s is not a valid plan:\n\n%v", clean, err)
	}
	return p, ""
}

// dispatch sends the steps of the plan's next wave, one task_assignment
// each, all at once; or, when every step is done, closes the plan. A step
// that names a file a step of the wave before it in the plan also names,
// and that is not done, waits for it: the orchestrator says so to the
// person (once) and sends the step when the other is approved. Steps the
// pipeline approved that the plan no longer ticks (rewound by git) are
// ticked again first (retick).
func (r *run) dispatch(p *plans.Plan) ([]*mailbox.Message, error) {
	p, rewound, err := r.retick(p)
	if err != nil {
		return rewound, err
	}
	out, err := r.dispatchNext(p)
	return append(rewound, out...), err
}

// dispatchNext is dispatch, of a plan that ticks what was approved.
func (r *run) dispatchNext(p *plans.Plan) ([]*mailbox.Message, error) {
	w, steps := p.Next()
	if w == nil {
		return r.finish(p)
	}
	workers := r.workers()
	if len(workers) == 0 {
		return nil, errors.New("no agent has the role worker")
	}
	busy := map[string]int{} // a file -> the step under way that changes it
	var todo []plans.Step
	for _, s := range steps {
		if r.h.assigned(r.thread, p.Path, s.Number) || r.inHand(p.Path, s.Number) {
			for _, f := range s.Files {
				busy[f] = s.Number
			}
			continue
		}
		todo = append(todo, s)
	}
	var out []*mailbox.Message
	var waits []string
	for _, s := range todo {
		if n, f := overlap(s.Files, busy); n != 0 {
			waits = append(waits, fmt.Sprintf("- step %d waits for step %d: both change %s", s.Number, n, f))
			continue
		}
		for _, f := range s.Files {
			busy[f] = s.Number
		}
		out = append(out, r.task(p, s, workers[len(out)%len(workers)]))
	}
	var fresh []string
	for _, l := range waits {
		if !r.h.told(r.thread, l) {
			fresh = append(fresh, l)
		}
	}
	if len(fresh) > 0 {
		note, _ := r.note(fmt.Sprintf("Wave %d of %s: steps that change the same files go one after the other:\n\n%s", w.Number, p.Path, strings.Join(fresh, "\n")))
		out = append(out, note...)
	}
	return out, nil
}

// inHand reports whether step n of the plan pf is in hand: its task (or
// revision) was sent in the pipeline's thread, and what came back of it
// since was not set aside for a plan that did not check (a submission or
// a verdict escalated with the plan, see setAside: only the step sent
// again answers it). A step in hand is with its worker or its reviewers,
// or waits on the person's decision about it: a plan_result again (the
// same plan written twice, or planned again) never sends it twice.
func (r *run) inHand(pf string, n int) bool {
	var work, back *record
	r.h.each(r.thread, func(rec *record) {
		switch {
		case rec.sent && (rec.typ() == TaskAssignment || rec.typ() == RevisionRequest) && rec.forStep(pf, n):
			work, back = rec, nil
		case work != nil && !rec.sent && rec.dup == nil && rec.req != nil && rec.req.forStep(pf, n) && rec.at.After(work.at):
			back = rec
		}
	})
	if work == nil {
		return false
	}
	return back == nil || !r.h.escalatedAbout(EscalatePlan, back.get("id")) || !r.setAside(back)
}

// overlap returns the first of files a step under way changes, with that
// step; 0 when none does.
func overlap(files []string, busy map[string]int) (int, string) {
	for _, f := range files {
		if n, ok := busy[f]; ok {
			return n, f
		}
	}
	return 0, ""
}

// task is the task_assignment of one step.
func (r *run) task(p *plans.Plan, s plans.Step, worker string) *mailbox.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task\n\nStep %d of %s (wave %d): %s\n\n%s\n", s.Number, p.Path, s.Wave, s.Title, s.Detail)
	if len(p.Criteria) > 0 {
		b.WriteString("\n## Acceptance Criteria\n\n")
		for _, c := range p.Criteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	for _, name := range []string{plans.Summary, plans.OutOfScope} {
		for _, sec := range p.Sections {
			if sec.Name == name && sec.Text != "" {
				fmt.Fprintf(&b, "\n## %s\n\n%s\n", name, sec.Text)
			}
		}
	}
	if len(s.Files) > 0 {
		fmt.Fprintf(&b, "\n## Files\n\nThe step may change: %s. A submission that changes other files is sent back.\n", strings.Join(s.Files, ", "))
	}
	m := r.send([]string{worker}, TaskAssignment, "execute", b.String())
	m.SetValue("task", s.Title)
	if len(s.Files) > 0 {
		m.SetNode("files", flowList(s.Files))
	}
	m.SetValue("plan_file", p.Path)
	m.SetValue("wave", strconv.Itoa(s.Wave))
	m.SetValue("step", strconv.Itoa(s.Number))
	return m
}

// changes compares the plan with what was assigned from it, for a plan
// a person edited while it runs: a step gone or renamed is told to the
// person (once), and a step added to a wave under way is assigned now.
func (r *run) changes(p *plans.Plan) []*mailbox.Message {
	assigned := r.h.assignedSteps(r.thread, p.Path)
	if len(assigned) == 0 {
		return nil
	}
	var said []string
	var out []*mailbox.Message
	nums := make([]int, 0, len(assigned))
	for n := range assigned {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	underWay := map[int]bool{}
	for _, n := range nums {
		s := p.Step(n)
		switch {
		case s == nil:
			said = append(said, fmt.Sprintf("step %d (%q) is no longer in the plan", n, assigned[n]))
		case s.Title != assigned[n]:
			said = append(said, fmt.Sprintf("step %d is now %q (it was %q when assigned)", n, s.Title, assigned[n]))
			underWay[s.Wave] = true
		default:
			underWay[s.Wave] = true
		}
	}
	added := false
	for _, w := range p.Waves {
		if !underWay[w.Number] {
			continue
		}
		for _, s := range w.Steps {
			if _, ok := assigned[s.Number]; ok || s.Done || r.h.told(r.thread, fmt.Sprintf("- step %d waits for step ", s.Number)) {
				continue
			}
			said = append(said, fmt.Sprintf("step %d (%q) was added to wave %d, which is under way", s.Number, s.Title, w.Number))
			added = true
		}
	}
	if added {
		// Sent as the wave's steps are: at once, unless it changes a
		// file a step under way changes.
		more, _ := r.dispatch(p)
		out = append(out, more...)
	}
	var fresh []string
	for _, l := range said {
		if !r.h.told(r.thread, l) {
			fresh = append(fresh, "- "+l)
		}
	}
	if len(fresh) > 0 {
		if note, _ := r.note(fmt.Sprintf("%s was changed by hand since it was read:\n\n%s", p.Path, strings.Join(fresh, "\n"))); note != nil {
			out = append(note, out...)
		}
	}
	return out
}

// finish closes a plan whose steps are all done: its status done, and a
// summary to the person.
func (r *run) finish(p *plans.Plan) ([]*mailbox.Message, error) {
	if _, _, err := plans.SetStatus(r.planPath(p.Path), "done"); err != nil {
		return nil, err
	}
	if r.h.sentSummary(r.thread, p.Path) {
		return nil, nil
	}
	r.save = "plan done: " + p.Path
	pr := p.Progress()
	var b strings.Builder
	fmt.Fprintf(&b, "The plan %s is done: %d of %d steps in %d waves.\n\n", p.Path, pr.Done, pr.Total, len(p.Waves))
	for _, w := range p.Waves {
		fmt.Fprintf(&b, "- Wave %d — %s\n", w.Number, w.Title)
		for _, s := range w.Steps {
			fmt.Fprintf(&b, "  - [x] Step %d: %s (%s)\n", s.Number, s.Title, r.howDone(p.Path, s.Number))
		}
	}
	m := r.toPerson(r.people(), PipelineNote, SignalDone, b.String())
	m.SetValue("summary", fmt.Sprintf("plan done: %s (%d/%d steps)", p.Path, pr.Done, pr.Total))
	m.SetValue("plan_file", p.Path)
	m.SetValue("pipeline", "done")
	return []*mailbox.Message{m}, nil
}

// stepOf finds the plan and step a message is about: its own step and
// plan_file fields, else those of the message of ours it answers, else of
// the last task or revision we sent its sender.
func (r *run) stepOf(m *mailbox.Message) (planFile string, step int, ok bool) {
	try := []*mailbox.Message{m}
	if q := r.h.replied(m); q != nil {
		try = append(try, q.msg())
	}
	if q := r.h.lastSentTo(r.thread, from(m), TaskAssignment, RevisionRequest, ReviewRequest); q != nil {
		try = append(try, q)
	}
	for _, c := range try {
		if n, err := strconv.Atoi(get(c, "step")); err == nil && get(c, "plan_file") != "" {
			return get(c, "plan_file"), n, true
		}
	}
	return "", 0, false
}

// submitted handles a worker_submission rfr: the review (and audit).
func (r *run) submitted() ([]*mailbox.Message, error) {
	planFile, n, ok := r.stepOf(r.in)
	if !ok {
		return r.escalate(EscalateBlocked, fmt.Sprintf("a submission from %s belongs to no step of a plan", from(r.in)), nil, nil)
	}
	p, s, changed, instead, err := r.readStep(planFile, n, "A submission from "+from(r.in))
	if s == nil {
		return instead, err
	}
	if s.Done {
		// Ticked by hand while its task was out: the tick is the
		// person's decision, and the pipeline goes on from it (nothing
		// else would send the steps that follow).
		r.o.log().Info("orchestrator: a submission for a step done already", "from", from(r.in), "step", n)
		if p.Status == "done" || p.Status == "blocked" {
			return changed, nil
		}
		next, err := r.dispatch(p)
		return append(changed, next...), err
	}
	files := list(r.in, "files_changed")
	if len(files) == 0 {
		return withChanges(changed)(r.revise(p, s, from(r.in), []string{"### parley\n\nThe submission lists no files_changed: list the files the step changed, and submit again."}))
	}
	if outside := outsideOf(files, s.Files); len(outside) > 0 {
		return withChanges(changed)(r.revise(p, s, from(r.in), []string{fmt.Sprintf("### parley\n\nThe submission changes files step %d does not name: %s. The step may change: %s. Undo the others, or ask for a change of the plan (signal: blocked).", n, strings.Join(outside, ", "), strings.Join(s.Files, ", "))}))
	}
	iteration, _ := r.h.attempts(r.thread, p.Path, n)
	reviewers := r.role("reviewer")
	if p.HasRisk(RiskyTags...) {
		reviewers = append(reviewers, r.role("auditor")...)
	}
	if len(reviewers) == 0 {
		return nil, errors.New("no agent has the role reviewer")
	}
	typed := r.protocolHas(ReviewRequest)
	var out []*mailbox.Message
	for _, rv := range reviewers {
		body := fmt.Sprintf("## Step %d: %s\n\n%s\n\n## Submission of %s\n\n%s\n", s.Number, s.Title, s.Detail, from(r.in), strings.TrimSpace(string(r.in.Body)))
		var m *mailbox.Message
		if typed {
			m = r.send([]string{rv}, ReviewRequest, "review", body)
		} else {
			m = r.send([]string{rv}, "", "", body)
			m.SetValue("summary", fmt.Sprintf("review step %d of %s", n, p.Path))
		}
		m.SetValue("submission", get(r.in, "id"))
		m.SetValue("plan_file", p.Path)
		m.SetValue("wave", strconv.Itoa(s.Wave))
		m.SetValue("step", strconv.Itoa(n))
		m.SetValue("iteration", strconv.Itoa(iteration))
		m.SetValue("worker", from(r.in))
		m.SetNames("files_changed", files)
		out = append(out, m)
	}
	return append(changed, out...), nil
}

// readStep reads the plan and finds step n in it, with the messages
// about the plan's changes since it was assigned (see changes). When the
// plan cannot be read, or lacks the step, s is nil and instead is what to
// send: an escalation, or a note that the message (what) was set aside.
func (r *run) readStep(planFile string, n int, what string) (p *plans.Plan, s *plans.Step, changed, instead []*mailbox.Message, err error) {
	p, problem := r.readPlan(planFile)
	if problem != "" {
		instead, err = r.escalate(EscalatePlan, problem, nil, nil)
		return nil, nil, nil, instead, err
	}
	changed = r.changes(p)
	if s = p.Step(n); s == nil {
		note := r.mustNote(fmt.Sprintf("%s is for step %d, which %s does not have; it was set aside.", what, n, p.Path))
		return nil, nil, nil, append(changed, note...), nil
	}
	return p, s, changed, nil, nil
}

// approve ticks step s of p, tells its worker to commit (text, answering
// the message replyTo, or the one handled), and sends the next wave, or
// closes the plan, when the step's wave is complete.
func (r *run) approve(p *plans.Plan, s *plans.Step, worker, text, replyTo string) ([]*mailbox.Message, error) {
	name := p.Path
	p, _, err := plans.Tick(r.planPath(name), s.Number)
	if err != nil {
		return nil, err
	}
	p.Path = name
	if !r.known(worker) {
		// Removed from parley.yaml: nobody to tell to commit; the
		// person is told instead, and the plan goes on.
		note, nerr := r.note(fmt.Sprintf("Step %d of %s is approved and ticked; its worker %s is no longer an agent of %s, so no approval is sent to it: commit its work yourself.", s.Number, p.Path, orDash(worker), workspace.ConfigFile))
		next, err := r.dispatch(p)
		return append(note, next...), errors.Join(nerr, err)
	}
	ok := r.send([]string{worker}, Approval, "lgtm", text)
	if replyTo != "" {
		ok.Set("reply_to", replyTo)
	}
	// Sent: the plan's summary, if this step was its last, says how.
	r.h.add(&record{m: ok, sent: true})
	// The next wave when this one is complete; else a step of this wave
	// that waited for this one.
	next, err := r.dispatch(p)
	return append([]*mailbox.Message{ok}, next...), err
}

// approvalText is the text of the approval of step n of the plan pf (by
// a person, when by is set). It says what to commit: the files the
// worker changed, in its own working copy. A worker's `git add -A` in
// the workspace commits the messages in flight of every agent, and its
// later reset deletes them (README: Where the workers' code lives).
func approvalText(n int, pf, by string) string {
	if by != "" {
		by = " by " + by
	}
	return fmt.Sprintf("Step %d of %s is approved%s: commit it.\n\nCommit the files you changed (git add FILES), in your own working copy of the code; not git add -A in the parley workspace, whose mailboxes/, plans/ and .parley/ are parley's.\n", n, pf, by)
}

// outsideOf is the files not among allowed; none when the step names no
// files (it does not say what it may change).
func outsideOf(files, allowed []string) []string {
	if len(allowed) == 0 {
		return nil
	}
	var out []string
	for _, f := range files {
		if !slices.Contains(allowed, filepath.ToSlash(filepath.Clean(f))) && !slices.Contains(allowed, f) {
			out = append(out, f)
		}
	}
	return out
}

// flowList is a YAML list written on one line: [a, b].
func flowList(items []string) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, it := range items {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it})
	}
	return seq
}

// protocolHas reports whether the workspace's protocol has a message type.
func (r *run) protocolHas(typ string) bool {
	set, err := r.o.ws().Protocol()
	if err != nil || set == nil {
		return false // no skills: nothing is checked, and nothing typed is known
	}
	_, _, ok := set.Type(typ)
	return ok
}

// judged handles a verdict: when every review of the round is in, the
// step is approved and ticked, or sent back, or, past the limit, goes to
// the person.
func (r *run) judged() ([]*mailbox.Message, error) {
	req := r.h.cur.req // see correlate
	if req == nil {
		r.o.log().Info("orchestrator: a verdict no review asked for", "from", from(r.in))
		return r.note(fmt.Sprintf("A %s from %s answers no review request of the pipeline; it was set aside.", typeOf(r.in), from(r.in)))
	}
	planFile, n := get(req.msg(), "plan_file"), atoi(get(req.msg(), "step"))
	p, s, changed, instead, err := r.readStep(planFile, n, "A "+typeOf(r.in)+" from "+from(r.in))
	if s == nil {
		return instead, err
	}
	submission := get(req.msg(), "submission")
	round := r.h.reviewRound(r.thread, submission)
	verdicts := map[string]*mailbox.Message{} // review request id -> verdict
	for _, q := range round {
		if v := r.h.verdictFor(q); v != nil {
			verdicts[get(q, "id")] = v
		}
	}
	if len(verdicts) < len(round) {
		return changed, nil // the other verdict is awaited
	}
	worker := get(req.msg(), "worker")
	var failed []string
	for _, q := range round {
		v := verdicts[get(q, "id")]
		if get(v, "signal") == "fail" {
			failed = append(failed, fmt.Sprintf("### %s (%s)\n\n%s", from(v), typeOf(v), strings.TrimSpace(string(v.Body))))
		}
	}
	if len(failed) > 0 && s.Done {
		// Ticked by hand while under review: the tick is the person's
		// decision, and a revision (or an escalation at the limit)
		// would wait for work nobody needs; the person is told what the
		// review found.
		return withChanges(changed)(r.goOnFromTick(p.Path, n, fmt.Sprintf("its review failed it (%d of %d verdicts)", len(failed), len(round)), "## Review\n\n"+strings.Join(failed, "\n\n")))
	}
	if len(failed) > 0 {
		return withChanges(changed)(r.revise(p, s, worker, failed))
	}
	return withChanges(changed)(r.approve(p, s, worker, approvalText(n, p.Path, ""), submission))
}

// revise sends a step back to its worker with the failures, or, after
// MaxIterations failed attempts in a round, to the person. A round is
// the attempts since the step was assigned, or assigned again on the
// person's retry; iteration counts on over the rounds, max_iterations is
// the last attempt of this round and fix_severity follows the attempt's
// place in its round.
func (r *run) revise(p *plans.Plan, s *plans.Step, worker string, failures []string) ([]*mailbox.Message, error) {
	attempt, start := r.h.attempts(r.thread, p.Path, s.Number)
	if attempt-start+1 >= MaxIterations {
		return r.escalate(EscalateLimit, limitReached(s.Number, p.Path, attempt, start), s, failures)
	}
	iteration := attempt + 1
	severity := "all"
	if iteration-start+1 > 3 {
		severity = "critical"
	}
	body := fmt.Sprintf("## Issues to fix (step %d: %s)\n\n%s\n", s.Number, s.Title, strings.Join(failures, "\n\n"))
	m := r.send([]string{worker}, RevisionRequest, "revise", body)
	m.SetValue("iteration", strconv.Itoa(iteration))
	m.SetValue("max_iterations", strconv.Itoa(start+MaxIterations-1))
	m.SetValue("fix_severity", severity)
	if len(s.Files) > 0 {
		m.SetNode("files", flowList(s.Files))
	}
	m.SetValue("plan_file", p.Path)
	m.SetValue("wave", strconv.Itoa(s.Wave))
	m.SetValue("step", strconv.Itoa(s.Number))
	return []*mailbox.Message{m}, nil
}

// limitReached says that a round of attempts at a step failed: attempts
// start to attempt. After a retry it says the round's attempts and the
// count in all, so a second escalation is not mistaken for the first.
func limitReached(step int, planFile string, attempt, start int) string {
	if start <= 1 {
		return fmt.Sprintf("step %d of %s failed review %d times", step, planFile, attempt)
	}
	return fmt.Sprintf("step %d of %s failed review %d more times since the retry (attempts %d-%d, %d in all)", step, planFile, attempt-start+1, start, attempt, attempt)
}

// escalate tells the person what needs a decision: what happened, the
// agent's Route: line when its body has one, and the history of a step.
func (r *run) escalate(kind, what string, s *plans.Step, history []string) ([]*mailbox.Message, error) {
	people := r.people()
	if len(people) == 0 {
		return nil, fmt.Errorf("escalation (%s) with no person to send it to: no agent has the role human", what)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The pipeline needs your decision: %s.\n", what)
	if route := routeLine(string(r.in.Body)); route != "" {
		fmt.Fprintf(&b, "\n%s\n", route)
	}
	if len(history) > 0 {
		b.WriteString("\n## History\n\n")
		if s != nil {
			for _, h := range r.h.failures(r.thread, r.planOf(), s.Number) {
				b.WriteString(h + "\n\n")
			}
		}
		b.WriteString(strings.Join(history, "\n\n") + "\n")
	}
	if len(history) == 0 {
		heading := "Message from " + from(r.in)
		if from(r.in) == workspace.Runner {
			heading = "parley's notice to " + r.agent // its "you" is the orchestrator
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", heading, strings.TrimSpace(string(r.in.Body)))
	}
	// The escalation's own id, so that the commands it gives can be
	// pasted as they are; its text is written once its fields say
	// whether it needs a decision (NeedsDecision).
	own := (&mailbox.IDs{}).New(r.agent)
	m := r.toPerson(people, EscalationType, SignalDecide, "")
	m.Set("id", own)
	m.SetValue("summary", "escalation: "+firstLine(what))
	m.SetValue("escalation", kind)
	if pf := r.planOf(); pf != "" {
		m.SetValue("plan_file", pf)
	}
	if s == nil && kind == EscalateBlocked {
		if pf, n, ok := r.stepOf(r.in); ok {
			m.SetValue("plan_file", pf)
			m.SetValue("step", strconv.Itoa(n))
		}
	}
	if s != nil {
		m.SetValue("step", strconv.Itoa(s.Number))
		attempt, _ := r.h.attempts(r.thread, r.planOf(), s.Number)
		m.SetValue("iteration", strconv.Itoa(attempt))
	}
	m.SetValue("about", get(r.in, "id"))
	b.WriteString("\n" + r.howToAnswer(kind, own, NeedsDecision(m)))
	m.Body = []byte(b.String())
	return []*mailbox.Message{m}, nil
}

// howToAnswer says, in an escalation's text (own is its id), what the
// person can do: for a message given up, parley retry it, here or in the
// workspace that gave it up; for one left unanswered because its agent's
// answer was refused, mend that file and parley retry it; or answer the
// escalation, with one command per decision (answersText).
func (r *run) howToAnswer(kind, own string, needs bool) string {
	id, agent := orDash(get(r.in, "given_up")), orDash(get(r.in, "agent"))
	switch ws := get(r.in, "workspace"); {
	case kind == EscalateGivenUp && ws != "":
		// A parley retry run there is told here through the bridge
		// (message_retried); until that notice comes, a retry decision
		// sends the message a second time.
		return fmt.Sprintf("Nothing answers it until you act. Mend what made it fail, then do one of these, not both: run `parley retry %s` in workspace %s, where it is in %s's dead/ (this workspace cannot see it; the same message to %s again), or answer here. A parley retry run in %s is told here through the bridge, and your answer then sends nothing; until that notice comes, answering retry here as well would have %s do it twice. To answer here, %s", id, ws, agent, agent, ws, agent, answersText(own, kind, needs))
	case kind == EscalateGivenUp:
		return fmt.Sprintf("Nothing answers it until you act. Mend what made it fail, then run `parley retry %s` (the same message to %s again), or %s", id, agent, answersText(own, kind, needs))
	case kind == EscalateUnanswered && get(r.in, "refused") != "" && ws == "":
		refused := get(r.in, "refused")
		return fmt.Sprintf("Nothing answers it until you act. %s's refused answer is in %s, with the reason beside it: mend it, then run `parley retry %s`, and it goes out as %s's answer (this escalation then needs no answer); or %s", agent, refused, refused, agent, answersText(own, kind, needs))
	}
	s := answersText(own, kind, needs)
	return strings.ToUpper(s[:1]) + s[1:]
}

// planOf is the plan the pipeline of the thread works on, if it has one.
func (r *run) planOf() string {
	if pf := get(r.in, "plan_file"); pf != "" {
		return pf
	}
	return r.h.planFile(r.thread)
}

// withChanges puts the messages about a plan's changes first.
func withChanges(changed []*mailbox.Message) func([]*mailbox.Message, error) ([]*mailbox.Message, error) {
	return func(out []*mailbox.Message, err error) ([]*mailbox.Message, error) {
		return append(changed, out...), err
	}
}

// mustNote is note, for callers with nothing else to fail.
func (r *run) mustNote(text string) []*mailbox.Message {
	m, _ := r.note(text)
	return m
}

// note tells the person something that needs no decision.
func (r *run) note(text string) ([]*mailbox.Message, error) {
	people := r.people()
	if len(people) == 0 {
		return nil, nil
	}
	m := r.toPerson(people, PipelineNote, SignalInfo, text+"\n")
	m.SetValue("summary", "note: "+firstLine(text))
	return []*mailbox.Message{m}, nil
}

// WaitingEscalation is the field of a note that names the escalation
// still waiting for the person's decision, which the person answered
// already (with a decision misspelt): a reply to the note with a
// decision answers that escalation.
const WaitingEscalation = "waiting_escalation"

// noteWaiting is a note to the person about the escalation esc, which
// still waits: a reply to the note answers esc.
func (r *run) noteWaiting(esc *mailbox.Message, text string) ([]*mailbox.Message, error) {
	out, err := r.note(text)
	for _, m := range out {
		m.Set(WaitingEscalation, get(esc, "id"))
	}
	return out, err
}

// decided resumes the pipeline with the person's answer to an
// escalation: approve, retry or stop (DecisionOf). An answer that gives
// none does nothing, and the escalation still waits; to an escalation no
// step waits on, it is passed on to who raised the matter.
func (r *run) decided(esc *mailbox.Message) ([]*mailbox.Message, error) {
	decision, ok := DecisionOf(r.in)
	about := r.h.byID[get(esc, "about")]
	if !ok && NeedsDecision(esc) {
		again := fmt.Sprintf("so nothing was done, and the escalation %s still waits: answer it again: %s.", get(esc, "id"), AnswerHint(esc, "", ""))
		if get(r.in, "decision") != "" {
			return r.noteWaiting(esc, fmt.Sprintf("Your decision %q is none of %s, %s", decision, strings.Join(Decisions(), ", "), again))
		}
		said := "Your answer gives no decision (a decision field, or a first word approve, retry or stop)"
		if k := MisspeltDecisionKey(r.in); k != "" {
			said += fmt.Sprintf("; its field %q is not decision", k)
		}
		return r.noteWaiting(esc, said+", "+again)
	}
	planFile := get(esc, "plan_file")
	if decision == DecisionStop {
		if planFile != "" {
			if _, _, err := plans.SetStatus(r.planPath(planFile), "blocked"); err != nil {
				return nil, err
			}
		}
		return r.note(fmt.Sprintf("Stopped as you decided; %s is marked blocked.", orNone(planFile)))
	}
	switch get(esc, "escalation") {
	case EscalatePlan:
		if decision == DecisionApprove {
			p, problem := r.readPlan(planFile)
			if problem != "" {
				return r.escalate(EscalatePlan, problem, nil, nil)
			}
			if _, _, err := plans.SetStatus(r.planPath(p.Path), "in_progress"); err != nil {
				return nil, err
			}
			if about != nil && r.setAside(about) {
				return r.again(about)
			}
			return r.dispatch(p)
		}
		return r.architecture("## Decision of " + from(r.in) + "\n\n" + strings.TrimSpace(string(r.in.Body)) + "\n")
	case EscalateGivenUp:
		return r.retryGivenUp(esc, decision)
	case EscalateUnanswered:
		return r.retryUnanswered(esc, decision)
	case EscalateLimit, EscalateBlocked:
		n := atoi(get(esc, "step"))
		if planFile == "" || n == 0 {
			if about != nil && typeOf(about.msg()) != "" && from(about.msg()) != "" {
				return r.passOn(about.msg())
			}
			return r.note("Your answer was noted; the pipeline has no step waiting on it.")
		}
		if r.o.stepTicked(planFile, n) {
			// Ticked by hand since: the tick decided the step (see
			// Start), and a retry would do it twice.
			out, err := r.note(fmt.Sprintf("Your answer was noted; step %d of %s was ticked since, so nothing is sent again; the pipeline goes on from it.", n, planFile))
			if p, problem := r.readPlan(planFile); problem == "" && p.Status != "done" && p.Status != "blocked" {
				next, nerr := r.dispatch(p)
				return append(out, next...), errors.Join(err, nerr)
			}
			return out, err
		}
		return r.resume(planFile, n, decision, "")
	}
	return r.note("Your answer was noted; the pipeline has nothing waiting on it.")
}

// setAside reports whether rec is a message of a step the pipeline set
// aside for a plan it could not read (a worker's submission or a
// verdict that came while the plan file did not check: escalated as a
// plan that is not valid), and nothing was sent from it since but the
// escalation and notes. Approving that escalation, once the plan is
// mended, accepts the message: it is handled again (see again), else
// the step would wait for ever on a submission nobody reviews.
func (r *run) setAside(rec *record) bool {
	switch {
	case rec.sent:
		return false
	case rec.typ() != WorkerSubmission && rec.typ() != ReviewVerdict && rec.typ() != AuditVerdict:
		return false
	}
	pf, n, step := r.stepOf(rec.msg())
	if step && r.o.stepTicked(pf, n) {
		return false // approved since, or ticked by hand: dispatch goes on
	}
	for _, q := range r.h.since(rec.at) {
		if !q.sent || !q.at.After(rec.at) || q.typ() == EscalationType || q.typ() == PipelineNote || q.get("escalation") != "" {
			continue
		}
		if q.get("reply_to") == rec.get("id") || q.get("submission") == rec.get("id") || step && q.forStep(pf, n) {
			return false // handled since, or its step sent again
		}
	}
	return true
}

// again handles the message rec again, as when it came, now that the
// person approved going on with the plan mended: what follows it (a
// review request, an approval, the next wave) is sent in answer to it.
func (r *run) again(rec *record) ([]*mailbox.Message, error) {
	h := r.o.history(r.agent, rec.msg())
	sub := &run{o: r.o, agent: r.agent, in: rec.msg(), h: h, thread: h.threadOf(rec.msg())}
	out, err := sub.decide()
	r.save = cmp.Or(r.save, sub.save)
	return out, err
}

// Decisions returns the decisions the orchestrator knows, in the order a
// person is told them: approve, retry, stop.
func Decisions() []string { return []string{DecisionApprove, DecisionRetry, DecisionStop} }

// Choice is a decision a person may answer an escalation with, and what
// it does.
type Choice struct{ Decision, Does string }

// Choices are the decisions an escalation of kind is answered with, in
// the order they are offered, each with what it does: the escalation's
// own text and the web seat's buttons say them so.
func Choices(kind string) []Choice {
	if kind == EscalateGivenUp || kind == EscalateUnanswered {
		return []Choice{
			{DecisionRetry, "sent again, with your answer: a step's task to its worker"},
			{DecisionApprove, "the step is accepted as it is and the pipeline goes on"},
			{DecisionStop, "the plan is marked blocked"},
		}
	}
	return []Choice{
		{DecisionApprove, "accept it and go on"},
		{DecisionRetry, "the work again, with your answer; for a plan, the architect plans again with it"},
		{DecisionStop, "the plan is marked blocked"},
	}
}

// DecisionOf returns the decision a person's answer to an escalation
// gives, in lower case: its decision field, or else the first word of its
// body ("approve: the tests pass"); ok when it is one of Decisions. An
// answer that gives none ("ok", "looks fine, ship it", a field misspelt
// decison) decides nothing: the escalation still waits.
func DecisionOf(m *mailbox.Message) (decision string, ok bool) {
	decision = strings.ToLower(get(m, "decision"))
	if decision == "" {
		if words := strings.Fields(strings.ToLower(string(m.Body))); len(words) > 0 {
			decision = strings.Trim(words[0], ".,:;!")
		}
	}
	return decision, slices.Contains(Decisions(), decision)
}

// NeedsDecision reports whether an escalation waits for a decision
// (approve, retry, stop): every one but a limit or blocked one with no
// step of a plan to resume, whose answer is passed on to who raised the
// matter.
func NeedsDecision(esc *mailbox.Message) bool {
	kind := get(esc, "escalation")
	return !((kind == EscalateLimit || kind == EscalateBlocked) && (get(esc, "plan_file") == "" || atoi(get(esc, "step")) == 0))
}

// MisspeltDecisionKey returns the key of m's header that looks like a
// misspelt decision (decison, desicion); "" when none does.
func MisspeltDecisionKey(m *mailbox.Message) string {
	for _, k := range m.Header().Keys() {
		if k != "decision" && spell.Distance(strings.ToLower(k), "decision") <= 2 {
			return k
		}
	}
	return ""
}

// resume resumes step n of a plan on the person's decision: approve ticks
// it; anything else sends its task again (to worker, else to the worker
// it was last assigned to), with the person's answer, as a new round
// whose attempts count on from the step's last.
func (r *run) resume(planFile string, n int, decision, worker string) ([]*mailbox.Message, error) {
	p, problem := r.readPlan(planFile)
	if problem != "" {
		return r.escalate(EscalatePlan, problem, nil, nil)
	}
	s := p.Step(n)
	if s == nil {
		return r.note(fmt.Sprintf("%s has no step %d any more; nothing to resume.", p.Path, n))
	}
	if worker == "" {
		worker = r.h.workerOf(r.thread, p.Path, n)
	}
	if !r.known(worker) && decision != DecisionApprove {
		// Removed from parley.yaml: the task goes to another worker.
		if worker = r.replacement(TaskAssignment, ""); worker == "" {
			return nil, errors.New("no agent has the role worker")
		}
	}
	if decision == DecisionApprove {
		return r.approve(p, s, worker, approvalText(n, p.Path, from(r.in)), "")
	}
	m := r.task(p, *s, worker)
	if attempt, _ := r.h.attempts(r.thread, p.Path, n); attempt > 0 {
		// A new round: its attempts count on from the last.
		m.SetValue("iteration", strconv.Itoa(attempt+1))
	}
	m.SetBody(append(m.Body, r.decisionText()...))
	return []*mailbox.Message{m}, nil
}

// decisionText is the person's answer, as a section of a message.
func (r *run) decisionText() string {
	return "\n## Decision of " + from(r.in) + "\n\n" + strings.TrimSpace(string(r.in.Body)) + "\n"
}

// retryGivenUp resumes the pipeline on the person's decision about a
// message of ours given up (esc, an escalation given_up), by its fate
// (see Fate). The step went on already when its agent answered since
// (`parley retry`), it was ticked or sent again: the decision then
// changes nothing. Else approve ticks the step; anything
// else sends again what was given up: a step's task (or revision) as its
// task, anything else (a review, a triage) as a copy, with the answer.
func (r *run) retryGivenUp(esc *mailbox.Message, decision string) ([]*mailbox.Message, error) {
	id, agent := get(esc, "given_up"), get(esc, "agent")
	switch fate, _ := r.o.fate(r.h, id, agent); {
	case fate == Unknown:
		if planFile, n := get(esc, "plan_file"), atoi(get(esc, "step")); decision == DecisionApprove && planFile != "" && n != 0 {
			return r.resume(planFile, n, decision, "") // the step's worker, whoever agent is
		}
		there := ""
		if ws := get(esc, "workspace"); ws != "" {
			there = ", run in workspace " + ws + ","
		}
		return r.note(fmt.Sprintf("The message given up (%s) is not among those I sent to %s, so I cannot send it again: `parley retry %s`%s hands it to %s again.", orDash(id), orDash(agent), orDash(id), there, orDash(agent)))
	case fate == HandedBack && decision != DecisionApprove:
		// parley retry handed it back to its agent, which has not
		// answered yet: sending it again would do the step twice.
		if ws := get(esc, "workspace"); ws != "" {
			return r.note(fmt.Sprintf("Your answer was noted; the message given up (%s) was handed back to %s in workspace %s (parley retry there), so %s has it again, and nothing is sent again.", id, orDash(agent), ws, orDash(agent)))
		}
		return r.note(fmt.Sprintf("Your answer was noted; the message given up (%s) is no longer in %s's dead/ (parley retry handed it back), so %s has it again, and nothing is sent again.", id, orDash(agent), orDash(agent)))
	}
	return r.sendAgain(esc, decision, id, agent, "given up")
}

// retryUnanswered resumes the pipeline on the person's decision about a
// request of ours that a program agent left unanswered (esc, an
// escalation unanswered), as retryGivenUp does: the message is in the
// agent's done/, handled, so only whether its step went on since counts.
func (r *run) retryUnanswered(esc *mailbox.Message, decision string) ([]*mailbox.Message, error) {
	id, agent := get(esc, "unanswered"), get(esc, "agent")
	if fate, _ := r.o.wentOn(r.h, id, agent); fate == Unknown {
		if planFile, n := get(esc, "plan_file"), atoi(get(esc, "step")); decision == DecisionApprove && planFile != "" && n != 0 {
			return r.resume(planFile, n, decision, "") // the step's worker, whoever agent is
		}
		return r.note(fmt.Sprintf("The message left unanswered (%s) is not among those I sent to %s, so I cannot send it again.", orDash(id), orDash(agent)))
	}
	return r.sendAgain(esc, decision, id, agent, "left unanswered")
}

// sendAgain carries out the person's decision on a message of ours to
// agent that nothing answers (given up, or left unanswered: what), one
// the orchestrator sent: nothing when its step went on since; approve
// ticks its step; anything else sends it again, a step's task (or
// revision) as its task, anything else as a copy, with the answer.
func (r *run) sendAgain(esc *mailbox.Message, decision, id, agent, what string) ([]*mailbox.Message, error) {
	planFile, n := get(esc, "plan_file"), atoi(get(esc, "step"))
	switch fate, how := r.o.wentOn(r.h, id, agent); {
	case fate == WentOn && how == "answered":
		return r.note(fmt.Sprintf("Your answer was noted; %s answered the message %s (%s) since, so the pipeline went on already, and nothing is sent again.", orDash(agent), what, id))
	case fate == WentOn && how == "ticked":
		// Ticked by hand: nothing sent the steps that follow it, and the
		// pipeline would wait for ever. They go now, as an approval
		// sends them.
		out, err := r.note(fmt.Sprintf("Your answer was noted; the step of the message %s (%s) was ticked since, so nothing is sent again; the pipeline goes on from it.", what, id))
		if p, problem := r.readPlan(planFile); problem == "" && p.Status != "done" && p.Status != "blocked" {
			next, nerr := r.dispatch(p)
			return append(out, next...), errors.Join(err, nerr)
		}
		return out, err
	case fate == WentOn && how == "planned":
		return r.note(fmt.Sprintf("Your answer was noted; the pipeline of the %s %s (%s) asked the architect for its plan since, without its answer, so nothing is sent again.", orNone(typeOf(r.h.byID[id].msg())), what, id))
	case fate == WentOn:
		return r.note(fmt.Sprintf("Your answer was noted; the step of the message %s (%s) went on since (%s), so nothing is sent again.", what, id, how))
	}
	orig := r.h.byID[id].msg()
	worker := "" // the step's worker: resume finds it
	if typeOf(orig) == TaskAssignment || typeOf(orig) == RevisionRequest {
		worker = agent // not a reviewer's or an auditor's
	}
	if planFile != "" && n != 0 && (decision == DecisionApprove || worker != "") {
		return r.resume(planFile, n, decision, worker)
	}
	if decision == DecisionApprove {
		return r.note(fmt.Sprintf("Your answer was noted; the %s %s is for no step, so there is nothing to approve: answer retry to send it again, or stop.", orNone(typeOf(orig)), what))
	}
	m := orig.Clone()
	for _, k := range []string{"id", "from", "created", "hops"} {
		m.Delete(k)
	}
	if !r.known(agent) {
		// Removed from parley.yaml: sent to another of its role.
		instead := r.replacement(typeOf(orig), get(orig, "submission"))
		if instead == "" {
			return r.note(fmt.Sprintf("Your answer was noted; %s is no longer an agent of %s, and no other agent takes a %s, so nothing is sent again: add one, then answer retry again, or approve or stop.", orDash(agent), workspace.ConfigFile, r.h.byID[id].name()))
		}
		m.SetNames("to", []string{instead})
	}
	m.SetBody(append(append([]byte{}, orig.Body...), r.decisionText()...))
	return []*mailbox.Message{m}, nil
}

// inDead reports whether message id is still in agent's dead/, where
// parley put it when it gave it up; parley retry takes it out.
func (o *Orchestrator) inDead(agent, id string) bool {
	if agent == "" || !mailbox.IsID(id) {
		return false
	}
	if _, known := o.ws().Agent(agent); !known {
		return false
	}
	_, err := os.Lstat(o.ws().Mailbox(agent).Path(mailbox.Dead, mailbox.FileName(id)))
	return err == nil
}

// passOn sends the person's answer to the agent whose message was
// escalated, as an informal message.
func (r *run) passOn(to *mailbox.Message) ([]*mailbox.Message, error) {
	m := r.send([]string{from(to)}, "", "", "## Decision of "+from(r.in)+"\n\n"+strings.TrimSpace(string(r.in.Body))+"\n")
	m.Set("reply_to", get(to, "id"))
	return []*mailbox.Message{m}, nil
}

// researchQuestions are the items of the body's Research Questions
// section (a heading with those words, any level).
func researchQuestions(body string) []string {
	var qs []string
	in := false
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			in = strings.Contains(strings.ToLower(t), "research question")
			continue
		}
		if !in {
			continue
		}
		for _, p := range []string{"- ", "* "} {
			if q, ok := strings.CutPrefix(t, p); ok {
				qs = append(qs, strings.TrimSpace(q))
			}
		}
		if i := strings.Index(t, ". "); i > 0 && i < 4 {
			if _, err := strconv.Atoi(t[:i]); err == nil {
				qs = append(qs, strings.TrimSpace(t[i+2:]))
			}
		}
	}
	return qs
}

// topic is a question's short name: its text before a colon or a
// question mark, at most 60 characters.
func topic(q string) string {
	t := q
	if i := strings.IndexAny(t, ":?"); i > 0 {
		t = t[:i]
	}
	t = strings.Trim(strings.TrimSpace(t), "*`")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:60])
	}
	return t
}

// routeLine is the body's `Route:` line, if it has one.
func routeLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "*"))
		if strings.HasPrefix(strings.ToLower(t), "route:") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func typeOf(m *mailbox.Message) string { return get(m, "type") }

func from(m *mailbox.Message) string { return get(m, "from") }

func get(m *mailbox.Message, key string) string {
	if m == nil {
		return ""
	}
	v, _ := m.Header().Get(key)
	return strings.TrimSpace(v)
}

// list reads a field that is a list of strings (or one string).
func list(m *mailbox.Message, key string) []string {
	switch v := m.Header().Value(key).(type) {
	case string:
		if v != "" {
			return []string{v}
		}
	case []any:
		var out []string
		for _, x := range v {
			if s := strings.TrimSpace(fmt.Sprint(x)); s != "" && x != nil {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no type"
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSuffix(l, ":")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
