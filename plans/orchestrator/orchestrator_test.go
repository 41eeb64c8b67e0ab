package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner/workspace"
)

const config = `skills: [dev-pipeline]
agents:
  - {name: you, role: human}
  - {name: orch, role: orchestrator, driver: builtin, handler: orchestrator}
  - {name: architect, driver: command, run: [true]}
  - {name: researcher, driver: command, run: [true]}
  - {name: worker-1, role: worker, driver: command, run: [true]}
  - {name: worker-2, role: worker, driver: command, run: [true]}
  - {name: reviewer, driver: command, run: [true]}
  - {name: auditor, driver: command, run: [true]}
`

// plan is a plan of two waves and three steps, tagged data-mutation.
const plan = `---
date: 2026-11-26
task: Retry
tier: 2
status: approved
---
## Summary
S.
## Out of Scope
O.
## Approach
A.
## Risks
R.
## Risk Tags
- data-mutation
## Implementation Waves
### Wave 1 — First
- [ ] **Step 1: One** — a.go: one.
- [ ] **Step 2: Two** — b.go: two.
### Wave 2 — Second (depends on Wave 1)
- [ ] **Step 3: Three** — c.go: three.
## Acceptance Criteria
- AC1: works.
`

// harness plays the runner around the orchestrator: each message it
// hands over is filed in done/ afterwards, and what the orchestrator
// answers is given an id and filed in sent/. One Orchestrator handles
// every message, as in a runner, the files it read kept in its cache;
// with fresh, each call makes a new one, as a runner started again
// would: nothing is carried in memory from one message to the next.
// Both decide alike (TestPipeline runs both).
type harness struct {
	t           *testing.T
	checkpoints []string
	ws          *workspace.Workspace
	now         time.Time
	ids         *mailbox.IDs
	o           *Orchestrator
	fresh       bool // a new Orchestrator for each message
}

func newHarness(t *testing.T, cfg string) *harness {
	t.Helper()
	ws := newWorkspace(t, cfg)
	if err := os.MkdirAll(filepath.Join(ws.Root, plans.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ws: ws, now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	h.ids = &mailbox.IDs{Now: func() time.Time { h.now = h.now.Add(time.Millisecond); return h.now }}
	return h
}

func (h *harness) writePlan(name, text string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws.Root, plans.Dir, name), []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// msg makes a message from an agent: fields are key, value pairs.
func (h *harness) msg(from, body string, fields ...string) *mailbox.Message {
	m := mailbox.New([]byte(body))
	m.Set("id", h.ids.New(from))
	m.Set("from", from)
	m.Set("to", "orch")
	for i := 0; i+1 < len(fields); i += 2 {
		m.SetValue(fields[i], fields[i+1])
	}
	return m
}

// answer makes an agent's answer to one of the orchestrator's messages.
func (h *harness) answer(to *mailbox.Message, typ, signal, body string, fields ...string) *mailbox.Message {
	names, _ := to.Header().Names("to")
	m := h.msg(names[0], body, append([]string{"type", typ, "signal", signal}, fields...)...)
	m.Set("thread", get(to, "thread"))
	m.Set("reply_to", get(to, "id"))
	return m
}

// handle hands a message to a new Orchestrator and files the input and
// the output as the runner would.
func (h *harness) handle(in *mailbox.Message) []*mailbox.Message {
	h.t.Helper()
	out := h.peek(in)
	box := h.ws.Mailbox("orch")
	if err := os.WriteFile(box.Path(mailbox.Done, get(in, "id")+".md"), in.Bytes(), 0o644); err != nil {
		h.t.Fatal(err)
	}
	for _, m := range out {
		id := h.ids.New("orch")
		m.Set("id", id)
		m.Set("from", "orch")
		if err := os.WriteFile(box.Path(mailbox.Sent, id+".md"), m.Bytes(), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	return out
}

// peek hands a message over without filing anything: a runner killed
// before it committed the handling.
func (h *harness) peek(in *mailbox.Message) []*mailbox.Message {
	h.t.Helper()
	if h.o == nil || h.fresh {
		h.o = &Orchestrator{Workspace: h.ws, Checkpoint: func(_ context.Context, msg string) error {
			h.checkpoints = append(h.checkpoints, msg)
			return nil
		}}
		h.o.checkLive = func(live, fresh *history) { sameHistory(h.t, live, fresh) }
	}
	out, err := h.o.Handle(context.Background(), "orch", in)
	if err != nil {
		h.t.Fatalf("Handle(%s %s): %v", typeOf(in), get(in, "signal"), err)
	}
	return out
}

// summary is what messages are: "to:type/signal", in order.
func summary(ms []*mailbox.Message) []string {
	var out []string
	for _, m := range ms {
		to, _ := m.Header().Names("to")
		s := strings.Join(to, ",") + ":" + typeOf(m)
		if sig := get(m, "signal"); sig != "" {
			s += "/" + sig
		}
		out = append(out, s)
	}
	return out
}

func want(t *testing.T, what string, got []*mailbox.Message, w ...string) {
	t.Helper()
	if g := summary(got); !slices.Equal(g, w) {
		t.Fatalf("%s: sent %q, want %q", what, g, w)
	}
}

// toPlan runs a pipeline to its first wave: request, triage without
// research, the plan. It returns the task assignments.
func (h *harness) toPlan() []*mailbox.Message {
	h.t.Helper()
	h.writePlan("retry.md", plan)
	out := h.handle(h.msg("you", "Retry failed deliveries."))
	want(h.t, "request", out, "architect:triage_request/execute")
	out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "Tier 2.", "tier", "2", "research_needed", "false"))
	want(h.t, "triage", out, "architect:architecture_request/plan")
	if !strings.Contains(string(out[0].Body), "No research needed") {
		h.t.Errorf("architecture_request without research says %q", out[0].Body)
	}
	out = h.handle(h.answer(out[0], PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
	want(h.t, "plan", out, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")
	return out
}

func (h *harness) readPlan() *plans.Plan {
	h.t.Helper()
	p, err := plans.Read(filepath.Join(h.ws.Root, plans.Dir, "retry.md"))
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) submit(task *mailbox.Message, files string) []*mailbox.Message {
	h.t.Helper()
	return h.handle(h.answer(task, WorkerSubmission, "rfr", "## Result\n\nDone.", "files_changed", files, "qa_check", "pass"))
}

func verdict(h *harness, req *mailbox.Message, signal string) *mailbox.Message {
	if names, _ := req.Header().Names("to"); names[0] == "auditor" {
		return h.answer(req, AuditVerdict, signal, "Audit: "+signal, "build_status", "pass", "test_status", "pass")
	}
	crit := "0"
	if signal == "fail" {
		crit = "1"
	}
	return h.answer(req, ReviewVerdict, signal, "CRITICAL: it loses data.\n", "critical_count", crit, "moderate_count", "0", "minor_count", "0")
}

func TestPipeline(t *testing.T) {
	t.Run("one orchestrator", func(t *testing.T) { testPipeline(t, false) })
	t.Run("one orchestrator a message", func(t *testing.T) { testPipeline(t, true) })
}

func testPipeline(t *testing.T, fresh bool) {
	h := newHarness(t, config)
	h.fresh = fresh
	tasks := h.toPlan()
	if p := h.readPlan(); p.Status != "in_progress" {
		t.Errorf("plan status = %q, want in_progress", p.Status)
	}
	if get(tasks[1], "step") != "2" || get(tasks[1], "plan_file") != "plans/retry.md" || get(tasks[1], "wave") != "1" {
		t.Errorf("task 2 fields: step %q plan_file %q wave %q", get(tasks[1], "step"), get(tasks[1], "plan_file"), get(tasks[1], "wave"))
	}

	// Step 1: reviewed and audited (data-mutation); approved once both pass.
	reqs := h.submit(tasks[0], "[a.go]")
	want(t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
	want(t, "first verdict", h.handle(verdict(h, reqs[0], "pass")))
	out := h.handle(verdict(h, reqs[1], "pass_with_notes"))
	want(t, "second verdict", out, "worker-1:approval/lgtm")
	if !h.readPlan().Step(1).Done {
		t.Error("step 1 not ticked after approval")
	}

	// A duplicate verdict changes nothing; nor does a late submission for
	// the step approved: each is set aside, and the person told.
	want(t, "duplicate verdict", h.handle(verdict(h, reqs[1], "pass")), "you:pipeline_note/info")
	want(t, "late submission", h.submit(tasks[0], "[a.go]"), "you:pipeline_note/info")

	// Step 2: failed by the auditor, revised with iteration 2.
	reqs = h.submit(tasks[1], "[b.go]")
	want(t, "step 2 verdict 1", h.handle(verdict(h, reqs[1], "fail")))
	out = h.handle(verdict(h, reqs[0], "pass"))
	want(t, "step 2 verdicts", out, "worker-2:revision_request/revise")
	if get(out[0], "iteration") != "2" || get(out[0], "fix_severity") != "all" || get(out[0], "max_iterations") != "5" {
		t.Errorf("revision fields: iteration %q fix_severity %q max %q", get(out[0], "iteration"), get(out[0], "fix_severity"), get(out[0], "max_iterations"))
	}
	if !strings.Contains(string(out[0].Body), "auditor (audit_verdict)") {
		t.Errorf("revision body does not name the auditor's failure:\n%s", out[0].Body)
	}
	reqs = h.submit(out[0], "[b.go]")
	if get(reqs[0], "iteration") != "2" {
		t.Errorf("review request iteration = %q, want 2", get(reqs[0], "iteration"))
	}
	h.handle(verdict(h, reqs[0], "pass"))

	// A runner killed after the tick but before it filed the handling:
	// the verdict is handled again, the approval and the next wave sent
	// once more, the tick not doubled.
	last := verdict(h, reqs[1], "pass")
	first := h.peek(last)
	want(t, "wave 1 done", first, "worker-2:approval/lgtm", "worker-1:task_assignment/execute")
	out = h.handle(last)
	want(t, "wave 1 done, again", out, "worker-2:approval/lgtm", "worker-1:task_assignment/execute")
	if pr := h.readPlan().Progress(); pr.Done != 2 {
		t.Errorf("progress after wave 1: %+v", pr)
	}

	// Step 3: passes; the plan is done, the person told.
	reqs = h.submit(out[1], "[c.go]")
	h.handle(verdict(h, reqs[0], "pass"))
	out = h.handle(verdict(h, reqs[1], "pass"))
	want(t, "plan done", out, "worker-1:approval/lgtm", "you:pipeline_note/done")
	if p := h.readPlan(); p.Status != "done" || !p.Progress().Complete() {
		t.Errorf("plan at the end: status %q, %+v", p.Status, p.Progress())
	}
	if s := get(out[1], "summary"); s != "plan done: plans/retry.md (3/3 steps)" {
		t.Errorf("summary = %q", s)
	}
	if !slices.Equal(h.checkpoints, []string{"plan done: plans/retry.md"}) {
		t.Errorf("checkpoints = %q, want one at the end", h.checkpoints)
	}
}

// TestPlanWithoutThread: a plan_result that comes with no thread, and no
// request before it, starts one pipeline: each step of its first wave is
// assigned once, and a submission for one step does not take the others
// for steps added by hand.
func TestPlanWithoutThread(t *testing.T) {
	h := newHarness(t, config)
	h.writePlan("retry.md", plan)
	tasks := h.handle(h.msg("architect", "The plan.", "type", PlanResult, "signal", "plan_complete", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
	want(t, "plan", tasks, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")
	for _, task := range tasks {
		if th := get(task, "thread"); th == "" || th != get(tasks[0], "thread") {
			t.Errorf("task %s: thread %q, want the one thread of the pipeline (%q)", get(task, "step"), th, get(tasks[0], "thread"))
		}
	}
	want(t, "submission", h.submit(tasks[0], "[a.go]"), "reviewer:review_request/review", "auditor:review_request/review")
}

func TestResearchJoin(t *testing.T) {
	h := newHarness(t, strings.Replace(config, "{name: researcher,", "{name: researcher-2, role: researcher, driver: command, run: [true]}\n  - {name: researcher, role: researcher,", 1))
	out := h.handle(h.msg("you", "Do it."))
	out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "## Research Questions\n\n- Which errors: transient ones?\n- How long to wait?\n- Jitter: how much?\n", "tier", "2", "research_needed", "true"))
	want(t, "fan-out", out, "researcher-2:research_request/research", "researcher:research_request/research", "researcher-2:research_request/research")
	if get(out[0], "topic") != "Which errors" || get(out[1], "topic") != "How long to wait" {
		t.Errorf("topics %q, %q", get(out[0], "topic"), get(out[1], "topic"))
	}
	// Answers come back out of order; one without reply_to, matched by
	// its topic; the join sends one architecture_request.
	want(t, "answer 3", h.handle(h.answer(out[2], ResearchResult, "research_complete", "Some.", "topic", "Jitter", "verified", "true")))
	a := h.answer(out[1], ResearchResult, "research_complete", "Seconds.", "topic", "How long to wait", "verified", "false")
	a.Delete("reply_to")
	want(t, "answer 2", h.handle(a))
	got := h.handle(h.answer(out[0], ResearchResult, "research_complete", "Transient ones.", "topic", "Which errors", "verified", "true"))
	want(t, "join", got, "architect:architecture_request/plan")
	body := string(got[0].Body)
	for _, s := range []string{"## Research Context", "### Which errors\n\nTransient ones.", "### How long to wait\n\n**Unverified:**", "### Jitter"} {
		if !strings.Contains(body, s) {
			t.Errorf("architecture_request lacks %q:\n%s", s, body)
		}
	}
	// A late duplicate answer does not join again: it is set aside.
	want(t, "duplicate answer", h.handle(h.answer(out[0], ResearchResult, "research_complete", "Again.", "topic", "Which errors", "verified", "true")), "you:pipeline_note/info")
}

func TestIterationLimit(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	task := tasks[0]
	var severities []string
	for i := 1; ; i++ {
		reqs := h.submit(task, "[a.go]")
		h.handle(verdict(h, reqs[0], "fail"))
		out := h.handle(verdict(h, reqs[1], "pass"))
		if i == MaxIterations {
			want(t, "fifth failure", out, "you:escalation/decide")
			body := string(out[0].Body)
			if get(out[0], "escalation") != EscalateLimit || get(out[0], "step") != "1" || !strings.Contains(body, "failed review 5 times") || !strings.Contains(body, "- iteration 5 (critical): CRITICAL: it loses data.") {
				t.Errorf("escalation:\n%s", out[0].Bytes())
			}
			// How to answer, at a terminal (a command per decision,
			// safe to paste) and from an MCP client.
			if !strings.Contains(body, " --field decision=approve --body 'your reasons'`: accept it and go on\n") || !strings.Contains(body, "(an MCP client: its reply tool, fields {decision: DECISION})") || strings.Contains(body, "|") {
				t.Errorf("the escalation does not say how to answer it:\n%s", body)
			}
			// The person approves: the step is ticked, the worker told.
			ans := h.msg("you", "Fine as it is.", "decision", "approve")
			ans.Set("thread", get(out[0], "thread"))
			ans.Set("reply_to", get(out[0], "id"))
			got := h.handle(ans)
			want(t, "approved by the person", got, "worker-1:approval/lgtm")
			if !h.readPlan().Step(1).Done {
				t.Error("step 1 not ticked on the person's approval")
			}
			break
		}
		want(t, "failure", out, "worker-1:revision_request/revise")
		if get(out[0], "iteration") != string(rune('0'+i+1)) {
			t.Errorf("failure %d: iteration %q", i, get(out[0], "iteration"))
		}
		severities = append(severities, get(out[0], "fix_severity"))
		task = out[0]
	}
	if !slices.Equal(severities, []string{"all", "all", "critical", "critical"}) {
		t.Errorf("fix_severity of iterations 2-5 = %q", severities)
	}
}

// TestIterationLimitAfterRetry guards the count after a person's retry:
// the attempts go on (6, 7, ...) rather than start again at 1, the
// retried round has MaxIterations attempts of its own, and its
// escalation says which attempts failed and how many in all, not
// "failed review 5 times" again.
func TestIterationLimitAfterRetry(t *testing.T) {
	h := newHarness(t, config)
	task := h.toPlan()[0]
	// failRound fails attempts until the orchestrator escalates, and
	// returns the escalation and the iteration of each revision request.
	failRound := func() (*mailbox.Message, []string, []string, []string) {
		t.Helper()
		var iters, maxes, sevs []string
		for range 2 * MaxIterations {
			reqs := h.submit(task, "[a.go]")
			h.handle(verdict(h, reqs[0], "fail"))
			out := h.handle(verdict(h, reqs[1], "pass"))
			if len(out) == 1 && get(out[0], "escalation") != "" {
				return out[0], iters, maxes, sevs
			}
			want(t, "failure", out, "worker-1:revision_request/revise")
			iters = append(iters, get(out[0], "iteration"))
			maxes = append(maxes, get(out[0], "max_iterations"))
			sevs = append(sevs, get(out[0], "fix_severity"))
			task = out[0]
		}
		t.Fatal("no escalation")
		return nil, nil, nil, nil
	}
	esc, _, _, _ := failRound()
	if !strings.Contains(string(esc.Body), "failed review 5 times.") || get(esc, "iteration") != "5" {
		t.Fatalf("first escalation:\n%s", esc.Bytes())
	}
	ans := h.msg("you", "Use the queue, not the loop.", "decision", "retry")
	ans.Set("thread", get(esc, "thread"))
	ans.Set("reply_to", get(esc, "id"))
	out := h.handle(ans)
	want(t, "retry", out, "worker-1:task_assignment/execute")
	if got := get(out[0], "iteration"); got != "6" {
		t.Errorf("task_assignment on retry: iteration %q, want 6 (the attempts go on)", got)
	}
	task = out[0]

	esc, iters, maxes, sevs := failRound()
	if !slices.Equal(iters, []string{"7", "8", "9", "10"}) {
		t.Errorf("iterations after the retry = %q, want 7-10", iters)
	}
	if !slices.Equal(maxes, []string{"10", "10", "10", "10"}) {
		t.Errorf("max_iterations after the retry = %q, want 10", maxes)
	}
	if !slices.Equal(sevs, []string{"all", "all", "critical", "critical"}) {
		t.Errorf("fix_severity after the retry = %q", sevs)
	}
	body := string(esc.Body)
	if !strings.Contains(body, "step 1 of plans/retry.md failed review 5 more times since the retry (attempts 6-10, 10 in all)") || get(esc, "iteration") != "10" {
		t.Errorf("second escalation:\n%s", esc.Bytes())
	}
	if !strings.Contains(body, "- iteration 10 (critical)") || strings.Contains(body, "- iteration 5 ") {
		t.Errorf("second escalation's history is not the retried round's:\n%s", body)
	}

	// Approved at last: the summary counts every attempt.
	ans = h.msg("you", "approve")
	ans.Set("thread", get(esc, "thread"))
	ans.Set("reply_to", get(esc, "id"))
	want(t, "approved", h.handle(ans), "worker-1:approval/lgtm")
}

func TestBadInput(t *testing.T) {
	t.Run("plan outside plans", func(t *testing.T) {
		h := newHarness(t, config)
		out := h.handle(h.msg("you", "Do it."))
		out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "", "tier", "1", "research_needed", "false"))
		out = h.handle(h.answer(out[0], PlanResult, "plan_complete", "", "plan_file", ".claude/plans/x.md", "wave_count", "1", "has_blockers", "false"))
		want(t, "plan outside", out, "you:escalation/decide")
		if !strings.Contains(string(out[0].Body), "not in plans/ of the workspace") {
			t.Errorf("escalation:\n%s", out[0].Body)
		}
	})
	t.Run("plan missing, then malformed", func(t *testing.T) {
		h := newHarness(t, config)
		out := h.handle(h.msg("you", "Do it."))
		out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "", "tier", "1", "research_needed", "false"))
		arch := out[0]
		out = h.handle(h.answer(arch, PlanResult, "plan_complete", "", "plan_file", "plans/retry.md", "wave_count", "1", "has_blockers", "false"))
		want(t, "plan missing", out, "you:escalation/decide")
		if !strings.Contains(string(out[0].Body), "cannot be read") {
			t.Errorf("escalation:\n%s", out[0].Body)
		}
		h.writePlan("retry.md", strings.Replace(plan, "(depends on Wave 1)", "(depends on Wave 3)", 1))
		out = h.handle(h.answer(arch, PlanResult, "plan_complete", "", "plan_file", "plans/retry.md", "wave_count", "1", "has_blockers", "false"))
		if !strings.Contains(string(out[0].Body), "plans/retry.md:21: wave 2 depends on wave 3, which the plan does not have") {
			t.Errorf("escalation:\n%s", out[0].Body)
		}
	})
	t.Run("blockers, then the person approves", func(t *testing.T) {
		h := newHarness(t, config)
		h.writePlan("retry.md", plan)
		out := h.handle(h.msg("you", "Do it."))
		out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "", "tier", "1", "research_needed", "false"))
		out = h.handle(h.answer(out[0], PlanResult, "plan_complete", "Needs a key.\n\nRoute: ask the person for the signing key", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "true"))
		want(t, "blockers", out, "you:escalation/decide")
		if !strings.Contains(string(out[0].Body), "\nRoute: ask the person for the signing key\n") {
			t.Errorf("escalation does not show the Route: line:\n%s", out[0].Body)
		}
		ans := h.msg("you", "approve: the key is in the vault.")
		ans.Set("thread", get(out[0], "thread"))
		want(t, "approved", h.handle(ans), "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")
	})
	t.Run("submission without files; verdict for a step edited away", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		out := h.submit(tasks[0], "[]")
		want(t, "no files", out, "worker-1:revision_request/revise")
		if !strings.Contains(string(out[0].Body), "lists no files_changed") {
			t.Errorf("revision:\n%s", out[0].Body)
		}
		reqs := h.submit(tasks[1], "[b.go]")
		h.writePlan("retry.md", strings.Replace(plan, "- [ ] **Step 2: Two** — b.go: two.\n", "", 1))
		out = h.handle(verdict(h, reqs[0], "pass"))
		want(t, "step gone", out, "you:pipeline_note/info", "you:pipeline_note/info")
		if !strings.Contains(string(out[0].Body), "plans/retry.md was changed by hand since it was read:\n\n- step 2 (\"Two\") is no longer in the plan") {
			t.Errorf("note of the change:\n%s", out[0].Body)
		}
		if !strings.Contains(string(out[1].Body), "step 2, which plans/retry.md does not have") {
			t.Errorf("note:\n%s", out[1].Body)
		}
		// Told once.
		out = h.handle(verdict(h, reqs[1], "pass"))
		want(t, "step gone, again", out, "you:pipeline_note/info")
	})
	t.Run("plan edited mid-wave: a step renamed, one added", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		h.writePlan("retry.md", strings.Replace(strings.Replace(plan, "**Step 2: Two**", "**Step 2: Two, better**", 1),
			"- [ ] **Step 2:", "- [ ] **Step 4: Four** — d.go: four.\n- [ ] **Step 2:", 1))
		reqs := h.submit(tasks[0], "[a.go]")
		want(t, "submission after the edit", reqs, "you:pipeline_note/info", "worker-1:task_assignment/execute", "reviewer:review_request/review", "auditor:review_request/review")
		body := string(reqs[0].Body)
		for _, l := range []string{"- step 2 is now \"Two, better\" (it was \"Two\" when assigned)", "- step 4 (\"Four\") was added to wave 1, which is under way"} {
			if !strings.Contains(body, l) {
				t.Errorf("the note lacks %q:\n%s", l, body)
			}
		}
		if get(reqs[1], "step") != "4" {
			t.Errorf("the new step's task is for step %q", get(reqs[1], "step"))
		}
		// The wave waits for the new step too.
		h.handle(verdict(h, reqs[2], "pass"))
		want(t, "step 1 approved", h.handle(verdict(h, reqs[3], "pass")), "worker-1:approval/lgtm")
	})
	t.Run("blocked worker; the person says retry", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		out := h.handle(h.answer(tasks[1], WorkerSubmission, "blocked", "No access.\nRoute: grant write access to b.go", "files_changed", "[]", "qa_check", "fail"))
		want(t, "blocked", out, "you:escalation/decide")
		if get(out[0], "escalation") != EscalateBlocked || !strings.Contains(string(out[0].Body), "Route: grant write access to b.go") {
			t.Errorf("escalation:\n%s", out[0].Bytes())
		}
		ans := h.msg("you", "Granted; try again.", "decision", "retry")
		ans.Set("thread", get(out[0], "thread"))
		out = h.handle(ans)
		want(t, "retry", out, "worker-2:task_assignment/execute")
		if get(out[0], "step") != "2" || !strings.Contains(string(out[0].Body), "Granted; try again.") {
			t.Errorf("task again:\n%s", out[0].Bytes())
		}
		// A second message of the person's, with nothing pending, is a new
		// request; so is one in no thread while an escalation waits.
		ans = h.msg("you", "Also: document it.")
		want(t, "new request", h.handle(ans), "architect:triage_request/execute")
		out = h.handle(h.answer(tasks[0], WorkerSubmission, "escalate", "Out of my depth.", "files_changed", "[]", "qa_check", "fail"))
		want(t, "escalated", out, "you:escalation/decide")
		want(t, "a request in no thread", h.handle(h.msg("you", "And a changelog.")), "architect:triage_request/execute")
	})
	t.Run("files outside the step", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		if names := list(tasks[0], "files"); !slices.Equal(names, []string{"a.go"}) {
			t.Errorf("task 1 files = %q, want [a.go]", names)
		}
		out := h.submit(tasks[0], "[a.go, secret.go]")
		want(t, "outside", out, "worker-1:revision_request/revise")
		if b := string(out[0].Body); !strings.Contains(b, "changes files step 1 does not name: secret.go. The step may change: a.go.") {
			t.Errorf("revision:\n%s", b)
		}
		if get(out[0], "iteration") != "2" || !slices.Equal(list(out[0], "files"), []string{"a.go"}) {
			t.Errorf("revision fields:\n%s", out[0].Bytes())
		}
	})
}

func TestOverlappingSteps(t *testing.T) {
	h := newHarness(t, config)
	h.writePlan("retry.md", strings.Replace(plan, "b.go: two.", "b.go and a.go: two.", 1))
	out := h.handle(h.msg("you", "Do it."))
	out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "", "tier", "1", "research_needed", "false"))
	out = h.handle(h.answer(out[0], PlanResult, "plan_complete", "", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
	want(t, "wave 1, serialised", out, "worker-1:task_assignment/execute", "you:pipeline_note/info")
	if !strings.Contains(string(out[1].Body), "- step 2 waits for step 1: both change a.go") {
		t.Errorf("note:\n%s", out[1].Body)
	}
	reqs := h.submit(out[0], "[a.go]")
	want(t, "verdict 1", h.handle(verdict(h, reqs[0], "pass")))
	got := h.handle(verdict(h, reqs[1], "pass"))
	want(t, "step 1 approved, step 2 sent", got, "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
	if get(got[1], "step") != "2" {
		t.Errorf("then step %q", get(got[1], "step"))
	}
}

// givenUp is parley's notice that the message m the orchestrator sent was
// given up by its recipient.
func (h *harness) givenUp(m *mailbox.Message) *mailbox.Message {
	names, _ := m.Header().Names("to")
	// The runner leaves the message in its recipient's dead/ first.
	if err := os.WriteFile(h.ws.Mailbox(names[0]).Path(mailbox.Dead, get(m, "id")+".md"), m.Bytes(), 0o644); err != nil {
		h.t.Fatal(err)
	}
	n := h.msg(workspace.Runner, "parley gave up the message.\n", "type", workspace.GivenUpNotice, "given_up", get(m, "id"),
		"agent", names[0], "attempts", "3", "reason", names[0]+": gave up after 3 attempts: exit code 1: the program failed",
		"dead", "mailboxes/"+names[0]+"/dead/"+get(m, "id")+".md")
	n.Set("thread", get(m, "thread"))
	return n
}

// decide is the person's answer to an escalation.
func (h *harness) decide(esc *mailbox.Message, decision, body string) *mailbox.Message {
	ans := h.msg("you", body, "decision", decision)
	ans.Set("thread", get(esc, "thread"))
	ans.Set("reply_to", get(esc, "id"))
	return ans
}

// TestGivenUp: a task whose worker's program gave up (parley's
// message_given_up notice) goes to the person, with the step, the agent,
// the reason and parley retry; the person's decision moves the pipeline
// on: retry sends the task again, approve ticks the step, and after a
// parley retry the worker answered, nothing is sent twice. A review
// request given up and sent again replaces the first in its round.
func TestGivenUp(t *testing.T) {
	escalated := func(t *testing.T, h *harness, task *mailbox.Message) *mailbox.Message {
		t.Helper()
		out := h.handle(h.givenUp(task))
		want(t, "given up", out, "you:escalation/decide")
		esc := out[0]
		body := string(esc.Body)
		for k, v := range map[string]string{"escalation": EscalateGivenUp, "plan_file": "plans/retry.md", "step": get(task, "step"), "given_up": get(task, "id"), "agent": "worker-2"} {
			if get(esc, k) != v {
				t.Errorf("escalation's %s = %q, want %q", k, get(esc, k), v)
			}
		}
		for _, s := range []string{"step 2 of plans/retry.md is stalled: worker-2 gave up the task_assignment", "exit code 1", "parley retry " + get(task, "id"), "retry", "approve", "stop"} {
			if !strings.Contains(body, s) {
				t.Errorf("escalation lacks %q:\n%s", s, body)
			}
		}
		return esc
	}
	t.Run("retry", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := escalated(t, h, tasks[1])
		out := h.handle(h.decide(esc, "retry", "The quota is back."))
		want(t, "retry", out, "worker-2:task_assignment/execute")
		if get(out[0], "step") != "2" || !strings.Contains(string(out[0].Body), "The quota is back.") {
			t.Errorf("task sent again:\n%s", out[0].Bytes())
		}
		// The pipeline goes on from the task sent again.
		want(t, "submission", h.submit(out[0], "[b.go]"), "reviewer:review_request/review", "auditor:review_request/review")
	})
	t.Run("approve", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := escalated(t, h, tasks[1])
		want(t, "approve", h.handle(h.decide(esc, "approve", "I did it by hand.")), "worker-2:approval/lgtm")
		if !h.readPlan().Step(2).Done {
			t.Error("step 2 not ticked on the person's approval")
		}
	})
	t.Run("stop", func(t *testing.T) {
		h := newHarness(t, config)
		esc := escalated(t, h, h.toPlan()[1])
		want(t, "stop", h.handle(h.decide(esc, "stop", "Enough.")), "you:pipeline_note/info")
		if p := h.readPlan(); p.Status != "blocked" {
			t.Errorf("plan status = %q, want blocked", p.Status)
		}
	})
	t.Run("parley retry first", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := escalated(t, h, tasks[1])
		// The person ran parley retry ID: the worker answered the task.
		want(t, "submission", h.submit(tasks[1], "[b.go]"), "reviewer:review_request/review", "auditor:review_request/review")
		out := h.handle(h.decide(esc, "retry", "Try again."))
		want(t, "retry after parley retry", out, "you:pipeline_note/info")
		if !strings.Contains(string(out[0].Body), "went on already") {
			t.Errorf("note:\n%s", out[0].Body)
		}
	})
	t.Run("parley retry, not answered yet", func(t *testing.T) {
		// Bug: parley retry ID, then a retry decision, then parley run:
		// the orchestrator handled the decision before the worker
		// answered the task put back, and sent the step a second time.
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := escalated(t, h, tasks[1])
		// parley retry: the task is back in worker-2's inbox, unanswered.
		box := h.ws.Mailbox("worker-2")
		name := get(tasks[1], "id") + ".md"
		if err := os.Rename(box.Path(mailbox.Dead, name), box.Path(mailbox.Inbox, name)); err != nil {
			t.Fatal(err)
		}
		out := h.handle(h.decide(esc, "retry", "Try again."))
		want(t, "retry after parley retry", out, "you:pipeline_note/info")
		if !strings.Contains(string(out[0].Body), "nothing is sent again") {
			t.Errorf("note:\n%s", out[0].Body)
		}
	})
	t.Run("told again", func(t *testing.T) {
		// parley tells a give-up at least once: a runner killed before
		// it told, the next tells it. The same give-up told again, under
		// its own id or another of the time of the give-up, is
		// escalated once; given up again after a parley retry, it is a
		// new give-up, escalated again.
		h := newHarness(t, config)
		tasks := h.toPlan()
		n := h.givenUp(tasks[1])
		want(t, "given up", h.handle(n), "you:escalation/decide")
		want(t, "the same notice again", h.handle(n.Clone()))
		at, _, err := mailbox.ParseID(get(n, "id"))
		if err != nil {
			t.Fatal(err)
		}
		again := n.Clone()
		again.Set("id", mailbox.IDAt(workspace.Runner, at))
		want(t, "the give-up told under another id", h.handle(again))
		// parley retry, and worker-2's program fails it again.
		want(t, "given up again", h.handle(h.givenUp(tasks[1])), "you:escalation/decide")
	})
	t.Run("review request", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		reqs := h.submit(tasks[0], "[a.go]")
		out := h.handle(h.givenUp(reqs[0]))
		want(t, "given up", out, "you:escalation/decide")
		if get(out[0], "step") != "1" || get(out[0], "agent") != "reviewer" {
			t.Errorf("escalation:\n%s", out[0].Bytes())
		}
		again := h.handle(h.decide(out[0], "retry", "The reviewer is back."))
		want(t, "retry", again, "reviewer:review_request/review")
		if get(again[0], "submission") != get(reqs[0], "submission") || get(again[0], "step") != "1" {
			t.Errorf("review request sent again:\n%s", again[0].Bytes())
		}
		want(t, "audit", h.handle(verdict(h, reqs[1], "pass")))
		want(t, "review sent again", h.handle(verdict(h, again[0], "pass")), "worker-1:approval/lgtm")
	})
	t.Run("bad notices", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		// A notice about a message the orchestrator never sent still
		// goes to the person; retry then says what to do.
		n := h.givenUp(tasks[1])
		n.SetValue("given_up", "20261126-100000.000000Z-nobody-000000")
		out := h.handle(n)
		want(t, "unknown message", out, "you:escalation/decide")
		want(t, "retry unknown", h.handle(h.decide(out[0], "retry", "Again.")), "you:pipeline_note/info")
		// A message_given_up from an agent, not parley, starts nothing.
		fake := h.givenUp(tasks[0])
		fake.Set("from", "worker-1")
		want(t, "forged notice", h.handle(fake))
	})
}

// TestAnswerToEarlierEscalation guards a person's answer to an
// escalation that a later one followed: it decides the escalation it
// replies to, not the last one sent. It used to decide the last: a retry
// answered to a given_up escalation of step 2 (its step gone on since,
// after parley retry) sent step 6 again, whose escalation came after.
func TestAnswerToEarlierEscalation(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	first := h.handle(h.givenUp(tasks[1])) // step 2, worker-2
	want(t, "step 2 given up", first, "you:escalation/decide")
	second := h.handle(h.givenUp(tasks[0])) // step 1, worker-1
	want(t, "step 1 given up", second, "you:escalation/decide")

	want(t, "approve step 2", h.handle(h.decide(first[0], "approve", "Done by hand.")), "worker-2:approval/lgtm")
	if p := h.readPlan(); !p.Step(2).Done || p.Step(1).Done {
		t.Errorf("after approving step 2: step 1 done %v, step 2 done %v; want false, true", p.Step(1).Done, p.Step(2).Done)
	}
	// The later escalation still waits for its own answer.
	want(t, "approve step 1", h.handle(h.decide(second[0], "approve", "That too.")), "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
	// An escalation answered already is not decided twice.
	out := h.handle(h.decide(first[0], "retry", "Again."))
	want(t, "second answer", out, "you:pipeline_note/info")
	if p := h.readPlan(); !p.Step(1).Done || !p.Step(2).Done {
		t.Errorf("after a second answer to step 2: step 1 done %v, step 2 done %v; want both", p.Step(1).Done, p.Step(2).Done)
	}
}

// TestMisspeltDecision guards a decision field that is none of approve,
// retry and stop (decision=aprove): it used to be taken as retry, and
// sent the step again. Now nothing is done, the person is told, and the
// escalation still waits for an answer.
func TestMisspeltDecision(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	esc := h.handle(h.givenUp(tasks[1]))
	want(t, "given up", esc, "you:escalation/decide")
	out := h.handle(h.decide(esc[0], "aprove", "Fine."))
	want(t, "misspelt decision", out, "you:pipeline_note/info")
	if body := string(out[0].Body); !strings.Contains(body, `"aprove" is none of approve, retry, stop`) {
		t.Errorf("note:\n%s", body)
	}
	want(t, "approve after the typo", h.handle(h.decide(esc[0], "approve", "Fine.")), "worker-2:approval/lgtm")
}

// TestGivenUpFate: what became of a task given up, as GivenUps.Fate tells
// it (what `parley pipeline` shows), is what the person's decision acts
// on. A step ticked by hand since went on: the view said so ("answering
// it sends nothing"), but a retry decision used to send the task again.
func TestGivenUpFate(t *testing.T) {
	fate := func(h *harness, task *mailbox.Message) Fate {
		t.Helper()
		return (&Orchestrator{Workspace: h.ws}).GivenUps("orch").Fate(get(task, "id"), "worker-2")
	}
	t.Run("stalled, handed back, answered", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		want(t, "given up", h.handle(h.givenUp(tasks[1])), "you:escalation/decide")
		if f := fate(h, tasks[1]); f != Stalled {
			t.Errorf("Fate of a task given up = %v, want %v", f, Stalled)
		}
		box := h.ws.Mailbox("worker-2")
		name := get(tasks[1], "id") + ".md"
		if err := os.Rename(box.Path(mailbox.Dead, name), box.Path(mailbox.Inbox, name)); err != nil {
			t.Fatal(err)
		}
		if f := fate(h, tasks[1]); f != HandedBack {
			t.Errorf("Fate after parley retry = %v, want %v", f, HandedBack)
		}
		h.submit(tasks[1], "[b.go]")
		if f := fate(h, tasks[1]); f != WentOn {
			t.Errorf("Fate once answered = %v, want %v", f, WentOn)
		}
		if f := (&Orchestrator{Workspace: h.ws}).GivenUps("orch").Fate("20261126-100000.000000Z-nobody-000000", "worker-2"); f != Unknown {
			t.Errorf("Fate of a message never sent = %v, want %v", f, Unknown)
		}
	})
	t.Run("ticked by hand", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := h.handle(h.givenUp(tasks[1]))
		want(t, "given up", esc, "you:escalation/decide")
		if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
			t.Fatal(err)
		}
		if f := fate(h, tasks[1]); f != WentOn {
			t.Errorf("Fate of a task whose step is ticked = %v, want %v", f, WentOn)
		}
		out := h.handle(h.decide(esc[0], "retry", "Again."))
		want(t, "retry of a step ticked", out, "you:pipeline_note/info")
		if !strings.Contains(string(out[0].Body), "was ticked since, so nothing is sent again") {
			t.Errorf("note:\n%s", out[0].Body)
		}
	})
	t.Run("ticked by hand before the give-up", func(t *testing.T) {
		// The person ticked both steps of wave 1 while their tasks
		// were out; step 2's is then given up. Nothing is escalated
		// (the tick is the decision), and wave 2 goes out, which
		// nothing else would send.
		h := newHarness(t, config)
		tasks := h.toPlan()
		for _, n := range []int{1, 2} {
			if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), n); err != nil {
				t.Fatal(err)
			}
		}
		out := h.handle(h.givenUp(tasks[1]))
		want(t, "given up, ticked", out, "you:pipeline_note/info", "worker-1:task_assignment/execute")
		if !strings.Contains(string(out[0].Body), "Step 2 of plans/retry.md was ticked by hand, and worker-2 gave up the task_assignment it was sent") {
			t.Errorf("note:\n%s", out[0].Body)
		}
		if get(out[1], "step") != "3" {
			t.Errorf("sent step %s, want step 3", get(out[1], "step"))
		}
	})
	t.Run("sent again", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		esc := h.handle(h.givenUp(tasks[1]))
		want(t, "retry", h.handle(h.decide(esc[0], "retry", "Again.")), "worker-2:task_assignment/execute")
		if f := fate(h, tasks[1]); f != WentOn {
			t.Errorf("Fate of a task sent again = %v, want %v", f, WentOn)
		}
	})
}

// TestGivenUpRemote: a task a worker of another workspace gave up is told
// by that workspace's runner (workspace: names it); the dead/ it is in is
// out of sight here. The escalation says where it was given up and that
// parley retry is run there; its fate is Stalled, not handed back (the
// local dead/ never held it), until the worker answers, and a retry
// decision sends the task again.
func TestGivenUpRemote(t *testing.T) {
	cfg := "bridge: {name: home, url: \"nats://127.0.0.1:4222\"}\n" + strings.Replace(config, "{name: worker-2, role: worker, driver: command, run: [true]}", "{name: worker-2, role: worker, remote: inn}", 1)
	notice := func(h *harness, task *mailbox.Message) *mailbox.Message {
		id := get(task, "id")
		n := h.msg(workspace.Runner, "parley gave up the task_assignment you sent to worker-2.\n", "type", workspace.GivenUpNotice, "given_up", id,
			"given_up_type", TaskAssignment, "agent", "worker-2", "attempts", "3", "reason", "worker-2: gave up after 3 attempts: exit code 1: the program failed",
			"dead", "mailboxes/worker-2/dead/"+id+".md", "workspace", "inn")
		n.Set("thread", get(task, "thread"))
		return n
	}
	fate := func(h *harness, task *mailbox.Message) Fate {
		t.Helper()
		return (&Orchestrator{Workspace: h.ws}).GivenUps("orch").Fate(get(task, "id"), "worker-2")
	}
	h := newHarness(t, cfg)
	tasks := h.toPlan()
	if got := get(tasks[1], "to"); got != "worker-2" {
		t.Fatalf("step 2's task goes to %q, want worker-2", got)
	}
	n := notice(h, tasks[1])
	out := h.handle(n)
	want(t, "given up in inn", out, "you:escalation/decide")
	esc := out[0]
	if got, wantSummary := get(esc, "summary"), "escalation: step 2 of plans/retry.md is stalled: worker-2 gave up the task_assignment it was sent in workspace inn"; !strings.HasPrefix(got, wantSummary) {
		t.Errorf("escalation's summary = %q, want it to start %q", got, wantSummary)
	}
	if get(esc, "workspace") != "inn" {
		t.Errorf("escalation's workspace = %q, want inn", get(esc, "workspace"))
	}
	if !strings.Contains(string(esc.Body), "do one of these, not both: run `parley retry "+get(tasks[1], "id")+"` in workspace inn, where it is in worker-2's dead/ (this workspace cannot see it;") {
		t.Errorf("the escalation does not say parley retry is run in workspace inn, or a retry answered here, not both:\n%s", esc.Body)
	}
	// A parley retry run in inn is out of sight here until worker-2
	// answers: a retry decision after it sends the task a second time.
	if !strings.Contains(string(esc.Body), "answering retry here as well would have worker-2 do it twice") {
		t.Errorf("the escalation does not warn against both parley retry in inn and a retry answered here:\n%s", esc.Body)
	}
	if f := fate(h, tasks[1]); f != Stalled {
		t.Errorf("Fate of a task given up in another workspace = %v, want %v (this workspace's dead/ never held it)", f, Stalled)
	}
	want(t, "the same notice again (told again by inn's next runner)", h.handle(n.Clone()))
	again := h.handle(h.decide(esc, "retry", "The quota is back."))
	want(t, "retry", again, "worker-2:task_assignment/execute")
	if f := fate(h, tasks[1]); f != WentOn {
		t.Errorf("Fate of a task sent again = %v, want %v", f, WentOn)
	}

	// Answered (a parley retry run in inn): it went on.
	h = newHarness(t, cfg)
	tasks = h.toPlan()
	want(t, "given up in inn", h.handle(notice(h, tasks[1])), "you:escalation/decide")
	h.submit(tasks[1], "[b.go]")
	if f := fate(h, tasks[1]); f != WentOn {
		t.Errorf("Fate once answered = %v, want %v", f, WentOn)
	}

	// The bridge here gave up the copy for worker-2 (it could not carry
	// it): the notice is this runner's, without workspace:, and the
	// message is in the dead/ here, where parley retry is run.
	h = newHarness(t, cfg)
	tasks = h.toPlan()
	out = h.handle(h.givenUp(tasks[1]))
	want(t, "given up by the bridge here", out, "you:escalation/decide")
	if strings.Contains(string(out[0].Body), "in workspace") || get(out[0], "workspace") != "" {
		t.Errorf("the escalation of a give-up here names a workspace:\n%s", out[0].Bytes())
	}
	if f := fate(h, tasks[1]); f != Stalled {
		t.Errorf("Fate of a copy the bridge gave up = %v, want %v", f, Stalled)
	}
	box := h.ws.Mailbox("worker-2")
	name := get(tasks[1], "id") + ".md"
	if err := os.Rename(box.Path(mailbox.Dead, name), box.Path(mailbox.Inbox, name)); err != nil {
		t.Fatal(err)
	}
	if f := fate(h, tasks[1]); f != HandedBack {
		t.Errorf("Fate after parley retry here = %v, want %v", f, HandedBack)
	}

	// A forged notice from inn: given_up is step 1's task, sent to
	// worker-1 here, not to worker-2. Its fate is Unknown, the
	// escalation names no step, and a retry sends worker-2 nothing.
	h = newHarness(t, cfg)
	tasks = h.toPlan()
	forged := notice(h, tasks[0])
	if f := fate(h, tasks[0]); f != Unknown {
		t.Errorf("Fate of worker-1's task said given up by worker-2 = %v, want %v", f, Unknown)
	}
	out = h.handle(forged)
	want(t, "a forged notice", out, "you:escalation/decide")
	if strings.Contains(get(out[0], "summary"), "step 1") || get(out[0], "step") != "" {
		t.Errorf("the escalation of a forged notice names step 1 (worker-1's):\n%s", out[0].Bytes())
	}
	out = h.handle(h.decide(out[0], "retry", "Go."))
	want(t, "retry on a forged notice", out, "you:pipeline_note/info")
	if !strings.Contains(string(out[0].Body), "not among those I sent to worker-2") {
		t.Errorf("the answer to retry on a forged notice:\n%s", out[0].Body)
	}
}

// TestGivenUpFromRemoteSender: in the workspace that gave up a step sent
// by an orchestrator of another (remote:), the fate is told from what the
// agent here received from that orchestrator and answered it: the step
// sent again by it, or answered to it, went on; messages of others, of
// other steps, and a plan of the same name here (the sender's plan is in
// its workspace) do not settle it.
func TestGivenUpFromRemoteSender(t *testing.T) {
	cfg := "bridge: {name: away, url: \"nats://127.0.0.1:4222\"}\nagents:\n" +
		"  - {name: orch, role: orchestrator, remote: home}\n" +
		"  - {name: you, role: human}\n" +
		"  - {name: w, role: worker, driver: command, run: [\"true\"]}\n"
	h := newHarness(t, cfg)
	box := h.ws.Mailbox("w")
	put := func(state, id string, fields ...string) {
		t.Helper()
		m := mailbox.New([]byte("Step.\n"))
		m.Set("id", id)
		for i := 0; i+1 < len(fields); i += 2 {
			m.Set(fields[i], fields[i+1])
		}
		if err := os.WriteFile(box.Path(state, mailbox.FileName(id)), m.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task := func(from, step string) []string {
		return []string{"from", from, "to", "w", "type", TaskAssignment, "thread", "t1", "plan_file", "plans/retry.md", "step", step}
	}
	dead := "20261126-100000.000000Z-orch-aaaaaa"
	put(mailbox.Dead, dead, task("orch", "2")...)
	how := func(want Fate, wantHow string) {
		t.Helper()
		f, got := (&Orchestrator{Workspace: h.ws}).GivenUps("orch").How(dead, "w")
		if f != want || got != wantHow {
			t.Errorf("How = %v %q, want %v %q", f, got, want, wantHow)
		}
	}
	how(Stalled, "")
	if f := (&Orchestrator{Workspace: h.ws}).GivenUps("orch").Fate("20261126-100000.000000Z-orch-bbbbbb", "w"); f != Unknown {
		t.Errorf("Fate of a message w never received = %v, want %v", f, Unknown)
	}
	put(mailbox.Inbox, "20261126-110000.000000Z-you-000001", task("you", "2")...)
	put(mailbox.Inbox, "20261126-110000.000000Z-orch-000002", task("orch", "3")...)
	put(mailbox.Sent, "20261126-110000.000000Z-w-000003", "to", "you", "type", "worker_submission", "thread", "t1", "plan_file", "plans/retry.md", "step", "2")
	h.writePlan("retry.md", plan)
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
		t.Fatal(err)
	}
	how(Stalled, "")
	put(mailbox.Inbox, "20261126-120000.000000Z-orch-000004", task("orch", "2")...)
	how(WentOn, "sent again")
	if err := os.Remove(box.Path(mailbox.Inbox, "20261126-120000.000000Z-orch-000004.md")); err != nil {
		t.Fatal(err)
	}
	put(mailbox.Sent, "20261126-130000.000000Z-w-000005", "to", "orch", "type", "worker_submission", "thread", "t1", "plan_file", "plans/retry.md", "step", "2")
	how(WentOn, "answered")
}

// TestDecisionInReplyToNote: a decision in reply to a note of the
// orchestrator's (which asks nothing) decides no escalation: it used to
// approve the escalation waiting, which the person had not answered. The
// note that says so names the escalation that waits, and a reply to that
// note with a decision answers it.
func TestDecisionInReplyToNote(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	chat := h.msg("you", "ok, thanks")
	chat.Set("thread", get(tasks[0], "thread"))
	notes := h.handle(chat)
	want(t, "a chat in the thread", notes, "you:pipeline_note/info")
	if get(notes[0], WaitingEscalation) != "" {
		t.Fatalf("a note with no escalation waiting names one: %s", notes[0].Bytes())
	}
	esc := h.handle(h.givenUp(tasks[1]))
	want(t, "given up", esc, "you:escalation/decide")

	approve := h.decide(notes[0], "approve", "ok")
	out := h.handle(approve)
	want(t, "approve in reply to a note", out, "you:pipeline_note/info")
	if !strings.Contains(string(out[0].Body), "replies to my note "+get(notes[0], "id")+", which asks no decision, so it decides nothing") {
		t.Errorf("the note:\n%s", out[0].Body)
	}
	if !strings.Contains(string(out[0].Body), "The escalation "+get(esc[0], "id")+" still waits for your decision") {
		t.Errorf("the note does not name the escalation waiting:\n%s", out[0].Body)
	}
	if p := h.readPlan(); p.Step(2).Done {
		t.Error("step 2 was approved by a reply to a note")
	}
	want(t, "retry in reply to that note", h.handle(h.decide(out[0], "retry", "Again.")), "you:pipeline_note/info")

	// The note on a decision misspelt names the escalation, answered
	// already: a reply to it with a decision answers the escalation.
	misspelt := h.handle(h.decide(esc[0], "aprove", "Fine."))
	want(t, "a decision misspelt", misspelt, "you:pipeline_note/info")
	if got := get(misspelt[0], WaitingEscalation); got != get(esc[0], "id") {
		t.Errorf("%s = %q, want the escalation waiting, %s", WaitingEscalation, got, get(esc[0], "id"))
	}
	want(t, "retry in reply to the note on the misspelt decision", h.handle(h.decide(misspelt[0], "retry", "Again.")), "worker-2:task_assignment/execute")
}

// TestTickedAfterEscalation: bug: a step a person ticked by hand in the
// plan after an escalation about it was sent (blocked, given up) still
// waited for the escalation's answer: parley status listed a blocked
// one as waiting, nothing sent the steps that follow, and a retry
// answered later did the ticked step again. The tick is the person's
// decision: the escalation is settled ("ticked"), the orchestrator's
// Start (a runner starting) notes it once and sends what follows, and an
// answer given after sends nothing again.
func TestTickedAfterEscalation(t *testing.T) {
	for _, tc := range []struct{ kind, when string }{
		{EscalateBlocked, "start"}, {EscalateGivenUp, "start"},
		{EscalateBlocked, "running"}, {EscalateGivenUp, "running"},
	} {
		kind := tc.kind
		t.Run(kind+" "+tc.when, func(t *testing.T) {
			h := newHarness(t, config)
			tasks := h.toPlan()
			for _, r := range h.submit(tasks[0], "[a.go]") {
				h.handle(verdict(h, r, "pass"))
			}
			if !h.readPlan().Step(1).Done {
				t.Fatal("step 1 not approved")
			}
			var esc []*mailbox.Message
			if kind == EscalateBlocked {
				esc = h.handle(h.answer(tasks[1], WorkerSubmission, "blocked", "I cannot reach the queue."))
			} else {
				esc = h.handle(h.givenUp(tasks[1]))
			}
			want(t, "escalated", esc, "you:escalation/decide")
			// Delivered to the person, as the runner does.
			if err := os.WriteFile(h.ws.Mailbox("you").Path(mailbox.Inbox, get(esc[0], "id")+".md"), esc[0].Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			xs := Escalations(h.ws, nil)
			if len(xs) != 1 || !xs[0].Waiting() {
				t.Fatalf("Escalations before the tick = %+v, want the one, waiting", xs)
			}
			// routed moves what the orchestrator wrote into its outbox
			// to sent/, as the runner does, and returns it.
			routed := func() []*mailbox.Message {
				t.Helper()
				return routeOutbox(t, h.ws.Mailbox("orch"), "")
			}
			start := func() []*mailbox.Message {
				t.Helper()
				if err := (&Orchestrator{Workspace: h.ws}).Start(context.Background(), "orch"); err != nil {
					t.Fatal(err)
				}
				return routed()
			}
			// A runner running since before the tick: it notices the
			// plan file changed (Due), and goes on from it (Tick).
			running := &Orchestrator{Workspace: h.ws}
			if tc.when == "running" {
				if d := running.Due("orch"); !d.IsZero() {
					t.Errorf("Due before Start = %v, want never", d)
				}
				if err := running.Start(context.Background(), "orch"); err != nil {
					t.Fatal(err)
				}
				want(t, "started before the tick", routed())
				if d := running.Due("orch"); !d.IsZero() {
					t.Errorf("Due with no plan changed = %v, want never", d)
				}
			}
			if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
				t.Fatal(err)
			}
			if xs := Escalations(h.ws, nil); len(xs) != 1 || xs[0].Settled != "ticked" || !xs[0].Pending {
				t.Errorf("Escalations after the tick = %+v, want the one settled: ticked, pending", xs)
			}
			var sent []*mailbox.Message
			if tc.when == "running" {
				end := time.Now().Add(10 * planLook)
				for running.Due("orch").IsZero() {
					if time.Now().After(end) {
						t.Fatalf("Due after the tick = never, %v on", 10*planLook)
					}
					time.Sleep(10 * time.Millisecond)
				}
				if err := running.Tick(context.Background(), "orch", time.Now()); err != nil {
					t.Fatal(err)
				}
				sent = routed()
			} else {
				sent = start()
			}
			want(t, "started after the tick", sent, "you:pipeline_note/info", "worker-1:task_assignment/execute")
			if !strings.Contains(string(sent[0].Body), "Step 2 of plans/retry.md was ticked by hand since the escalation "+get(esc[0], "id")+" about it: the tick answers it") {
				t.Errorf("note:\n%s", sent[0].Body)
			}
			if get(sent[1], "step") != "3" {
				t.Errorf("sent step %s, want step 3", get(sent[1], "step"))
			}
			if xs := Escalations(h.ws, nil); len(xs) != 1 || xs[0].Settled != "ticked" || xs[0].Pending {
				t.Errorf("Escalations gone on from = %+v, want the one settled: ticked, not pending", xs)
			}
			want(t, "started again", start())
			// Answered after all: nothing is done twice.
			out := h.handle(h.decide(esc[0], "retry", "Again."))
			want(t, "retry of a step ticked", out, "you:pipeline_note/info")
			if !strings.Contains(string(out[0].Body), "was ticked since, so nothing is sent again") {
				t.Errorf("note:\n%s", out[0].Body)
			}
		})
	}
}

// TestSubmittedAfterTick: bug: a step a person ticked by hand while its
// task was out, then submitted by its worker as usual, was set aside
// ("a submission for a step done already") and nothing more was sent:
// the plan stalled at the next wave, nobody told. The tick is the
// person's decision: the submission goes on from it.
func TestSubmittedAfterTick(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	for _, r := range h.submit(tasks[0], "[a.go]") {
		h.handle(verdict(h, r, "pass"))
	}
	if !h.readPlan().Step(1).Done {
		t.Fatal("step 1 not approved")
	}
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
		t.Fatal(err)
	}
	want(t, "submitted after the tick", h.submit(tasks[1], "[b.go]"), "worker-1:task_assignment/execute")
}

// TestBlockedAfterTick: bug: a step a person ticked by hand while its
// task was out, whose worker then signalled blocked (or answered with a
// message of no type), was escalated: `parley pipeline` listed the
// escalation as settled by the tick ("answering it sends nothing"), but
// the tick was seen before the escalation reached the person, so
// nothing went on from it, and the plan stalled until the person
// answered. The tick is the person's decision on the step: nothing is
// escalated, the person is told what the worker said, and the steps that
// follow go out.
func TestBlockedAfterTick(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(h *harness, task *mailbox.Message) *mailbox.Message
	}{
		{"blocked", func(h *harness, task *mailbox.Message) *mailbox.Message {
			return h.answer(task, WorkerSubmission, "blocked", "I cannot reach the queue.", "files_changed", "[b.go]", "qa_check", "fail")
		}},
		{"no type", func(h *harness, task *mailbox.Message) *mailbox.Message {
			m := h.msg("worker-2", "I cannot reach the queue.")
			m.Set("thread", get(task, "thread"))
			m.Set("reply_to", get(task, "id"))
			return m
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, config)
			tasks := h.toPlan()
			for _, r := range h.submit(tasks[0], "[a.go]") {
				h.handle(verdict(h, r, "pass"))
			}
			if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
				t.Fatal(err)
			}
			out := h.handle(tc.answer(h, tasks[1]))
			want(t, "answered after the tick", out, "you:pipeline_note/info", "worker-1:task_assignment/execute")
			for _, w := range []string{"Step 2 of plans/retry.md was ticked by hand, and worker-2 ", ": the tick stands for the step, and the pipeline goes on from it.", "I cannot reach the queue."} {
				if !strings.Contains(string(out[0].Body), w) {
					t.Errorf("note lacks %q:\n%s", w, out[0].Body)
				}
			}
			if get(out[1], "step") != "3" {
				t.Errorf("sent step %s, want step 3", get(out[1], "step"))
			}
		})
	}
}

// TestSummaryHowDone: bug: the summary of a plan done said "(1 attempt)"
// of a step a person ticked by hand after its task was given up, and
// "(5 attempts)" of one the person approved after it failed review five
// times, as if the review had passed it. It says how each step was done.
func TestSummaryHowDone(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	task := tasks[0]
	var esc []*mailbox.Message
	for i := 1; i <= MaxIterations; i++ {
		reqs := h.submit(task, "[a.go]")
		h.handle(verdict(h, reqs[0], "fail"))
		esc = h.handle(verdict(h, reqs[1], "pass"))
		task = esc[0]
	}
	want(t, "fifth failure", esc, "you:escalation/decide")
	want(t, "approved by the person", h.handle(h.decide(esc[0], "approve", "Fine as it is.")), "worker-1:approval/lgtm")
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
		t.Fatal(err)
	}
	out := h.handle(h.givenUp(tasks[1]))
	want(t, "given up, ticked by hand", out, "you:pipeline_note/info", "worker-1:task_assignment/execute")
	var done []*mailbox.Message
	for _, r := range h.submit(out[1], "[c.go]") {
		done = h.handle(verdict(h, r, "pass"))
	}
	want(t, "plan done", done, "worker-1:approval/lgtm", "you:pipeline_note/done")
	for _, w := range []string{
		"  - [x] Step 1: One (5 attempts failed review; approved by you)\n",
		"  - [x] Step 2: Two (ticked by hand after 1 attempt)\n",
		"  - [x] Step 3: Three (1 attempt)\n",
	} {
		if !strings.Contains(string(done[1].Body), w) {
			t.Errorf("summary lacks %q:\n%s", w, done[1].Body)
		}
	}
}

// TestTickedWhileRouted: bug: a step ticked by hand while its
// escalation was on its way to the person (written, not yet routed) was
// gone on from by no one: the running orchestrator saw the plan change
// and found no escalation in the person's inbox to go on from, and saw
// no change after; `parley pipeline` called the escalation settled by the
// tick, and the plan stalled until a restart. Tick looks again until
// the escalation is delivered, and goes on from it.
func TestTickedWhileRouted(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	for _, r := range h.submit(tasks[0], "[a.go]") {
		h.handle(verdict(h, r, "pass"))
	}
	esc := h.handle(h.answer(tasks[1], WorkerSubmission, "blocked", "I cannot reach the queue.", "files_changed", "[b.go]", "qa_check", "fail"))
	want(t, "escalated", esc, "you:escalation/decide")
	orch := h.ws.Mailbox("orch")
	name := get(esc[0], "id") + ".md"
	// Written into the outbox, not routed yet.
	if err := os.Rename(orch.Path(mailbox.Sent, name), orch.Path(mailbox.Outbox, name)); err != nil {
		t.Fatal(err)
	}
	o := &Orchestrator{Workspace: h.ws}
	if err := o.Start(context.Background(), "orch"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
		t.Fatal(err)
	}
	// tick waits for Due and ticks, as the runner does; it returns what
	// the orchestrator wrote into its outbox besides the escalation.
	tick := func() []*mailbox.Message {
		t.Helper()
		end := time.Now().Add(10 * planLook)
		for d := o.Due("orch"); d.IsZero() || time.Now().Before(d); d = o.Due("orch") {
			if time.Now().After(end) {
				t.Fatalf("Due = %v, %v on", d, 10*planLook)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := o.Tick(context.Background(), "orch", time.Now()); err != nil {
			t.Fatal(err)
		}
		return routeOutbox(t, orch, name)
	}
	want(t, "ticked, the escalation not delivered", tick())
	if o.Due("orch").IsZero() {
		t.Fatal("Due with the escalation not delivered = never, want soon")
	}
	// Routed: delivered to the person, moved to sent/.
	if err := os.WriteFile(h.ws.Mailbox("you").Path(mailbox.Inbox, name), esc[0].Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(orch.Path(mailbox.Outbox, name), orch.Path(mailbox.Sent, name)); err != nil {
		t.Fatal(err)
	}
	sent := tick()
	want(t, "ticked, the escalation delivered", sent, "you:pipeline_note/info", "worker-1:task_assignment/execute")
	if get(sent[1], "step") != "3" {
		t.Errorf("sent step %s, want step 3", get(sent[1], "step"))
	}
	if d := o.Due("orch"); !d.IsZero() {
		t.Errorf("Due once gone on = %v, want never", d)
	}
}

// TestFailedAfterTick: bug: a step a person ticked by hand while it was
// under review, whose review then failed it, was sent back to its worker
// for a revision (at the limit, escalated, the escalation settled by the
// tick at once and gone on from by nobody): the plan waited on work the
// person had decided. The tick stands: the person is told what the
// review found, and the steps that follow go out.
func TestFailedAfterTick(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	for _, r := range h.submit(tasks[0], "[a.go]") {
		h.handle(verdict(h, r, "pass"))
	}
	reqs := h.submit(tasks[1], "[b.go]")
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 2); err != nil {
		t.Fatal(err)
	}
	want(t, "one verdict of two", h.handle(verdict(h, reqs[0], "fail")))
	out := h.handle(verdict(h, reqs[1], "pass"))
	want(t, "review failed after the tick", out, "you:pipeline_note/info", "worker-1:task_assignment/execute")
	for _, w := range []string{"Step 2 of plans/retry.md was ticked by hand, and its review failed it (1 of 2 verdicts): the tick stands for the step", "CRITICAL: it loses data."} {
		if !strings.Contains(string(out[0].Body), w) {
			t.Errorf("note lacks %q:\n%s", w, out[0].Body)
		}
	}
	if get(out[1], "step") != "3" {
		t.Errorf("sent step %s, want step 3", get(out[1], "step"))
	}
}

// routeOutbox moves what box's outbox holds, but the file named keep, to
// its sent/, as the router does, and returns those messages.
func routeOutbox(t *testing.T, box mailbox.Dir, keep string) []*mailbox.Message {
	t.Helper()
	names, _ := box.Names(mailbox.Outbox)
	var sent []*mailbox.Message
	for _, n := range names {
		if n == keep {
			continue
		}
		data, err := os.ReadFile(box.Path(mailbox.Outbox, n))
		if err != nil {
			t.Fatal(err)
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, m)
		if err := os.Rename(box.Path(mailbox.Outbox, n), box.Path(mailbox.Sent, n)); err != nil {
			t.Fatal(err)
		}
	}
	return sent
}

// TestHistoryFollowsFiles: the orchestrator of a runner reads its
// mailbox's files once (Orchestrator.files), and its history still
// follows them: a message edited by hand in done/ is read as it is now,
// one removed is gone, and a file written by hand without an id is
// given the id of its name in the history without changing what the
// cache keeps.
func TestHistoryFollowsFiles(t *testing.T) {
	h := newHarness(t, config)
	o := &Orchestrator{Workspace: h.ws}
	box := h.ws.Mailbox("orch")
	in := h.msg("you", "Add retries.")
	done := box.Path(mailbox.Done, get(in, "id")+".md")
	if err := os.WriteFile(done, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(done, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	handWritten := box.Path(mailbox.Sent, h.ids.New("orch")+".md")
	if err := os.WriteFile(handWritten, []byte("---\nto: architect\ntype: triage_request\n---\nBy hand.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := func(hist *history, id string) string {
		if r := hist.byID[id]; r != nil {
			return string(r.msg().Body)
		}
		return "(none)"
	}
	id := get(in, "id")
	if got := body(o.history("orch", mailbox.New(nil)), id); got != "Add retries." {
		t.Fatalf("first history: body %q", got)
	}
	handID := strings.TrimSuffix(filepath.Base(handWritten), ".md")
	if hist := o.history("orch", mailbox.New(nil)); hist.byID[handID] == nil {
		t.Errorf("the file written by hand is not in the history under the id of its name")
	}
	kept := func(path string) *entry {
		d := o.index().dirs[filepath.Dir(path)]
		if d == nil {
			return nil
		}
		return d.files[filepath.Base(path)]
	}
	if e := kept(handWritten); e == nil || e.field("id") != "" {
		t.Errorf("the kept hand-written message was changed: %v", e)
	}
	// What another workspace's sender did with orch: the file written
	// by hand to it is orch's in that history, the cached one unchanged.
	// (With its id, as parley send writes one, but no from:.)
	remoteID := h.ids.New("orch")
	toRemote := box.Path(mailbox.Sent, remoteID+".md")
	if err := os.WriteFile(toRemote, []byte("---\nid: "+remoteID+"\nto: architect\ntype: note\n---\nTo the far side.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := o.remoteHistory("architect", "orch").byID[remoteID]; r == nil || r.from() != "orch" {
		t.Errorf("the remote history lacks the file written by hand, from orch: %v", r)
	}
	if e := kept(toRemote); e == nil || e.field("from") != "" {
		t.Errorf("the kept message was changed by the remote history: %v", e)
	}

	edited := in.Clone()
	edited.SetBody([]byte("Add retries, with backoff."))
	if err := os.WriteFile(done, edited.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := body(o.history("orch", mailbox.New(nil)), id); got != "Add retries, with backoff." {
		t.Errorf("after a hand edit: body %q", got)
	}
	if err := os.Remove(done); err != nil {
		t.Fatal(err)
	}
	if got := body(o.history("orch", mailbox.New(nil)), id); got != "(none)" {
		t.Errorf("after the file was removed: body %q", got)
	}
}

// TestPlanAgain guards a plan_result handled again while its steps are
// in hand: each step went to a worker a second time, as a plan_result
// started the steps afresh, and was done and reviewed twice. A step in
// hand (with its worker, in review) is never sent again; one whose
// submission was set aside while the plan did not check is, when the
// person's retry has the architect plan again.
func TestPlanAgain(t *testing.T) {
	t.Run("the same plan", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		arch := h.byType(t, ArchitectureRequest)
		again := func() []*mailbox.Message {
			return h.handle(h.answer(arch, PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
		}
		want(t, "the plan again", again())
		reqs := h.submit(tasks[0], "[a.go]")
		want(t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
		want(t, "the plan again, step 1 in review", again())
	})
	t.Run("planned again", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		h.writePlan("retry.md", strings.Replace(plan, "(depends on Wave 1)", "(depends on Wave 3)", 1))
		esc := h.submit(tasks[0], "[a.go]")
		want(t, "submission, the plan broken", esc, "you:escalation/decide")
		out := h.handle(h.decide(esc[0], "retry", "Plan it again."))
		want(t, "retry", out, "architect:architecture_request/plan")
		h.writePlan("retry.md", plan)
		out = h.handle(h.answer(out[0], PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
		want(t, "planned again", out, "worker-1:task_assignment/execute")
		if get(out[0], "step") != "1" {
			t.Errorf("planned again: the task of step %s sent again, want step 1's (its submission set aside; step 2 is with its worker)", get(out[0], "step"))
		}
	})
}

// byType is the last message of type typ the orchestrator sent.
func (h *harness) byType(t *testing.T, typ string) *mailbox.Message {
	t.Helper()
	box := h.ws.Mailbox("orch")
	names, err := box.Names(mailbox.Sent)
	if err != nil {
		t.Fatal(err)
	}
	var last *mailbox.Message
	for _, n := range names {
		b, err := os.ReadFile(box.Path(mailbox.Sent, n))
		if err != nil {
			t.Fatal(err)
		}
		m, err := mailbox.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if typeOf(m) == typ {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("no %s sent", typ)
	}
	return last
}

// newWorkspace makes a workspace of the parley.yaml cfg, with its
// mailboxes, in a directory of tb's.
func newWorkspace(tb testing.TB, cfg string) *workspace.Workspace {
	tb.Helper()
	root := tb.TempDir()
	if err := os.WriteFile(filepath.Join(root, workspace.ConfigFile), []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		tb.Fatal(err)
	}
	return ws
}
