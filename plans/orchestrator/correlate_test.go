package orchestrator

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// bare is an agent's answer as a model often writes it: no thread:, no
// reply_to:.
func bare(m *mailbox.Message) *mailbox.Message {
	m.Delete("thread")
	m.Delete("reply_to")
	return m
}

// TestAnswersWithoutThread guards the pipeline whose agents leave out
// thread: and reply_to:. It used to take a plan_result that named
// neither for a pipeline of its own: the steps ran, but the escalation
// of a step failed 5 times had no plan_file, said iteration 0 with no
// history, and the person's approve was passed to the reviewer as an
// untyped message, the step never ticked. Verdicts matched the last
// review request to the reviewer, not the one they answer.
func TestAnswersWithoutThread(t *testing.T) {
	h := newHarness(t, config)
	h.writePlan("retry.md", plan)
	out := h.handle(h.msg("you", "Retry failed deliveries."))
	out = h.handle(bare(h.answer(out[0], TriageResult, "triage_complete", "Tier 2.", "tier", "2", "research_needed", "false")))
	want(t, "triage", out, "architect:architecture_request/plan")
	thread := get(out[0], "thread")
	tasks := h.handle(bare(h.answer(out[0], PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false")))
	want(t, "plan", tasks, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")
	for _, task := range tasks {
		if get(task, "thread") != thread {
			t.Errorf("task of step %s: thread %q, want the request's %q", get(task, "step"), get(task, "thread"), thread)
		}
	}

	// Both steps under review at once: each verdict answers the review
	// request it was written for: the oldest its agent has not answered
	// (not the last one sent it), or the one of the step it names.
	reqs1 := h.handle(bare(h.answer(tasks[0], WorkerSubmission, "rfr", "Done.", "files_changed", "[a.go]", "qa_check", "pass")))
	reqs2 := h.handle(bare(h.answer(tasks[1], WorkerSubmission, "rfr", "Done.", "files_changed", "[b.go]", "qa_check", "pass")))
	want(t, "submissions", append(reqs1, reqs2...), "reviewer:review_request/review", "auditor:review_request/review", "reviewer:review_request/review", "auditor:review_request/review")
	want(t, "step 1 review", h.handle(bare(verdict(h, reqs1[0], "pass"))))
	want(t, "step 2 review", h.handle(bare(verdict(h, reqs2[0], "pass"))))
	audit := bare(verdict(h, reqs2[1], "pass"))
	audit.SetValue("plan_file", "plans/retry.md")
	audit.SetValue("step", "2")
	want(t, "step 2 audit", h.handle(audit), "worker-2:approval/lgtm")
	if p := h.readPlan(); p.Step(1).Done || !p.Step(2).Done {
		t.Fatalf("after step 2's verdicts: step 1 done %v, step 2 done %v; want false, true", p.Step(1).Done, p.Step(2).Done)
	}

	// Step 1 fails its audit 5 times: the escalation is the one answers
	// with thread and reply_to get.
	task := tasks[0]
	reqs := reqs1
	var esc *mailbox.Message
	for i := 1; esc == nil; i++ {
		if i > 1 {
			reqs = h.handle(bare(h.answer(task, WorkerSubmission, "rfr", "Done.", "files_changed", "[a.go]", "qa_check", "pass")))
			want(t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
			h.handle(bare(verdict(h, reqs[0], "pass")))
		}
		out := h.handle(bare(verdict(h, reqs[1], "fail")))
		switch {
		case i == MaxIterations:
			want(t, "fifth failure", out, "you:escalation/decide")
			esc = out[0]
		case i > MaxIterations:
			t.Fatal("no escalation")
		default:
			want(t, "failure", out, "worker-1:revision_request/revise")
			task = out[0]
		}
	}
	body := string(esc.Body)
	for k, v := range map[string]string{"escalation": EscalateLimit, "plan_file": "plans/retry.md", "step": "1", "iteration": "5", "thread": thread} {
		if get(esc, k) != v {
			t.Errorf("escalation's %s = %q, want %q", k, get(esc, k), v)
		}
	}
	if !strings.Contains(body, "failed review 5 times") || !strings.Contains(body, "- iteration 5 (critical)") {
		t.Errorf("escalation lacks the history:\n%s", body)
	}
	want(t, "approved by the person", h.handle(h.decide(esc, "approve", "Ship it.")), "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
	if !h.readPlan().Step(1).Done {
		t.Error("step 1 not ticked on the person's approval")
	}
}

// TestGivenUpAnsweredWithoutThread guards the escalation of a request
// given up, then handed back by parley retry and answered with no
// thread: and no reply_to: it is settled ("answered"), as when the
// answer names them; it used to wait for a decision for ever.
func TestGivenUpAnsweredWithoutThread(t *testing.T) {
	h := newHarness(t, config)
	h.writePlan("retry.md", plan)
	out := h.handle(h.msg("you", "Retry failed deliveries."))
	triage := out[0]
	want(t, "given up", h.handle(h.givenUp(triage)), "you:escalation/decide")
	box := h.ws.Mailbox("architect")
	name := get(triage, "id") + ".md"
	if err := os.Rename(box.Path(mailbox.Dead, name), box.Path(mailbox.Done, name)); err != nil {
		t.Fatal(err) // parley retry, and the architect handled it
	}
	want(t, "triage", h.handle(bare(h.answer(triage, TriageResult, "triage_complete", "Tier 2.", "tier", "2", "research_needed", "false"))), "architect:architecture_request/plan")
	fates := NewFates(h.ws)
	if got := fates.WentOn("orch", get(triage, "id"), "architect"); got != "answered" {
		t.Errorf("WentOn of the triage_request given up, then answered = %q, want answered", got)
	}
}

// TestDuplicateAnswers guards a second answer to one request: a worker
// that printed its worker_submission twice had two review rounds and two
// approvals, a model that wrote its triage_result twice had every
// research request sent twice, and a verdict written twice was dropped
// unsaid. Each is set aside, and the person told.
func TestDuplicateAnswers(t *testing.T) {
	for _, named := range []bool{true, false} {
		answer := func(m *mailbox.Message) *mailbox.Message {
			if !named {
				return bare(m)
			}
			return m
		}
		name := "with reply_to"
		if !named {
			name = "without reply_to"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, strings.Replace(config, "{name: researcher,", "{name: researcher, role: researcher,", 1))
			h.writePlan("retry.md", plan)
			out := h.handle(h.msg("you", "Retry failed deliveries."))
			triage := out[0]
			result := func() *mailbox.Message {
				return answer(h.answer(triage, TriageResult, "triage_complete", "## Research Questions\n\n- Which errors?\n", "tier", "2", "research_needed", "true"))
			}
			research := h.handle(result())
			want(t, "triage", research, "researcher:research_request/research")
			second := h.handle(result())
			want(t, "triage again", second, "you:pipeline_note/info")
			if b := string(second[0].Body); !strings.Contains(b, "Set aside: the triage_result") || !strings.Contains(b, "answers the triage_request "+get(triage, "id")) {
				t.Errorf("note:\n%s", b)
			}
			out = h.handle(answer(h.answer(research[0], ResearchResult, "research_complete", "Transient ones.", "verified", "true")))
			want(t, "research", out, "architect:architecture_request/plan")
			tasks := h.handle(answer(h.answer(out[0], PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false")))
			want(t, "plan", tasks, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")

			submission := func() *mailbox.Message {
				return answer(h.answer(tasks[0], WorkerSubmission, "rfr", "Done.", "files_changed", "[a.go]", "qa_check", "pass"))
			}
			reqs := h.handle(submission())
			want(t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
			want(t, "submission again", h.handle(submission()), "you:pipeline_note/info")
			want(t, "review", h.handle(answer(verdict(h, reqs[0], "pass"))))
			want(t, "review again", h.handle(answer(verdict(h, reqs[0], "pass"))), "you:pipeline_note/info")
			want(t, "audit", h.handle(answer(verdict(h, reqs[1], "pass"))), "worker-1:approval/lgtm")
		})
	}
}

// TestAnswerAfterUntyped guards the request an untyped answer replied
// to ("Done.", escalated and approved): a later answer that names no
// request is not taken for one to it, but for the request its agent has
// open, the next step's task.
func TestAnswerAfterUntyped(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	done := h.msg("worker-1", "Done.")
	done.Set("thread", get(tasks[0], "thread"))
	done.Set("reply_to", get(tasks[0], "id"))
	esc := h.handle(done)
	want(t, "untyped answer", esc, "you:escalation/decide")
	want(t, "approved", h.handle(h.decide(esc[0], "approve", "It is done.")), "worker-1:approval/lgtm")
	reqs := h.submit(tasks[1], "[b.go]")
	h.handle(verdict(h, reqs[0], "pass"))
	out := h.handle(verdict(h, reqs[1], "pass"))
	want(t, "wave 1 done", out, "worker-2:approval/lgtm", "worker-1:task_assignment/execute")
	reqs = h.handle(bare(h.answer(out[1], WorkerSubmission, "rfr", "Done.", "files_changed", "[c.go]", "qa_check", "pass")))
	want(t, "step 3 submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
	if get(reqs[0], "step") != "3" {
		t.Errorf("review request for step %q, want 3", get(reqs[0], "step"))
	}
}

// TestRevisionNamesTask guards a worker's revised submission that names,
// by reply_to:, the task it revises rather than the revision_request: it
// answers the revision_request open for it, and is reviewed again. It
// was set aside as a second answer to the task, and the step stalled.
// So too when the revision_request was given up and handed back by
// parley retry, and when a retry decision sent the task again.
func TestRevisionNamesTask(t *testing.T) {
	// failed runs step 1 to a failed review, and returns the task and
	// the revision_request.
	failed := func(h *harness) (task, revision *mailbox.Message) {
		h.t.Helper()
		tasks := h.toPlan()
		reqs := h.submit(tasks[0], "[a.go]")
		want(h.t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
		h.handle(verdict(h, reqs[0], "pass"))
		out := h.handle(verdict(h, reqs[1], "fail"))
		want(h.t, "failure", out, "worker-1:revision_request/revise")
		return tasks[0], out[0]
	}
	revised := func(h *harness, task *mailbox.Message) []*mailbox.Message {
		return h.handle(h.answer(task, WorkerSubmission, "rfr", "Fixed.", "files_changed", "[a.go]", "qa_check", "pass"))
	}
	t.Run("open", func(t *testing.T) {
		h := newHarness(t, config)
		task, _ := failed(h)
		want(t, "revised", revised(h, task), "reviewer:review_request/review", "auditor:review_request/review")
		want(t, "revised again", revised(h, task), "you:pipeline_note/info")
	})
	t.Run("another step", func(t *testing.T) {
		// An answer that names its step answers no open request of
		// another step: a second answer.
		h := newHarness(t, config)
		task, _ := failed(h)
		again := h.answer(task, WorkerSubmission, "rfr", "Fixed.", "files_changed", "[a.go]", "qa_check", "pass", "plan_file", "plans/retry.md", "step", "3")
		want(t, "revised, of step 3", h.handle(again), "you:pipeline_note/info")
	})
	t.Run("a later step", func(t *testing.T) {
		// A second answer to the task of step 1, once its worker has the
		// task of step 3, is not taken for step 3's: set aside.
		h := newHarness(t, config)
		tasks := h.toPlan()
		for i, files := range []string{"[a.go]", "[b.go]"} {
			reqs := h.submit(tasks[i], files)
			h.handle(verdict(h, reqs[0], "pass"))
			if out := h.handle(verdict(h, reqs[1], "pass")); i == 1 {
				want(t, "wave 1 done", out, "worker-2:approval/lgtm", "worker-1:task_assignment/execute")
			}
		}
		want(t, "step 1 again", revised(h, tasks[0]), "you:pipeline_note/info")
	})
	t.Run("parley retry", func(t *testing.T) {
		h := newHarness(t, config)
		task, revision := failed(h)
		want(t, "given up", h.handle(h.givenUp(revision)), "you:escalation/decide")
		box := h.ws.Mailbox("worker-1")
		name := get(revision, "id") + ".md"
		if err := os.Rename(box.Path(mailbox.Dead, name), box.Path(mailbox.Inbox, name)); err != nil {
			t.Fatal(err) // parley retry
		}
		want(t, "revised", revised(h, task), "reviewer:review_request/review", "auditor:review_request/review")
	})
	t.Run("parley retry in another workspace", func(t *testing.T) {
		h := newHarness(t, config)
		task, revision := failed(h)
		n := h.givenUp(revision)
		n.SetValue("workspace", "other")
		want(t, "given up there", h.handle(n), "you:escalation/decide")
		back := h.msg(workspace.Runner, "parley retry handed it back.\n", "type", workspace.RetriedNotice, "retried", get(revision, "id"), "agent", "worker-1", "workspace", "other")
		want(t, "handed back there", h.handle(back), "you:pipeline_note/info")
		want(t, "revised", revised(h, task), "reviewer:review_request/review", "auditor:review_request/review")
	})
	t.Run("retry decision", func(t *testing.T) {
		h := newHarness(t, config)
		task, revision := failed(h)
		esc := h.handle(h.givenUp(revision))
		want(t, "given up", esc, "you:escalation/decide")
		want(t, "retry", h.handle(h.decide(esc[0], "retry", "Again.")), "worker-1:task_assignment/execute")
		want(t, "revised", revised(h, task), "reviewer:review_request/review", "auditor:review_request/review")
	})
}

// TestVerdictNamesSubmission guards verdicts that name no request, sent
// for step 2 before step 1's: each answers the review request of the
// submission it names (submission:), not the oldest open one.
func TestVerdictNamesSubmission(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	reqs1 := h.submit(tasks[0], "[a.go]")
	reqs2 := h.submit(tasks[1], "[b.go]")
	want(t, "submissions", append(reqs1, reqs2...), "reviewer:review_request/review", "auditor:review_request/review", "reviewer:review_request/review", "auditor:review_request/review")
	of := func(req *mailbox.Message) *mailbox.Message {
		v := bare(verdict(h, req, "pass"))
		v.SetValue("submission", get(req, "submission"))
		return v
	}
	want(t, "step 2 review", h.handle(of(reqs2[0])))
	want(t, "step 2 audit", h.handle(of(reqs2[1])), "worker-2:approval/lgtm")
	if p := h.readPlan(); p.Step(1).Done || !p.Step(2).Done {
		t.Fatalf("after step 2's verdicts: step 1 done %v, step 2 done %v; want false, true", p.Step(1).Done, p.Step(2).Done)
	}
	want(t, "step 1 review", h.handle(of(reqs1[0])))
	want(t, "step 1 audit", h.handle(of(reqs1[1])), "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
}

// TestAnswerToApproval: bug: a worker that answered the approval of its
// step ("Thanks for the approval!", as a model does) had the person sent
// an escalation that the step of its next task, sent with the approval,
// waited on that answer; once the pipeline approved that step, a note
// said it was ticked by hand. A submission printed again in answer to
// the approval was taken for the next task's, reviewed, and the real one
// set aside. An approval asks no answer: what is said to it that says
// nothing more (no type, the approved submission printed again byte for
// byte, a submission for the step approved) is filed, and the next step
// goes on as if nothing was said. (The case "submission again" had a
// submission of other text for no step filed; one such is taken for the
// open next task's: see TestSubmissionNamesApproval.)
func TestAnswerToApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(h *harness, ok *mailbox.Message) *mailbox.Message
	}{
		{"no type", func(h *harness, ok *mailbox.Message) *mailbox.Message {
			m := h.msg("worker-1", "Thanks for the approval!")
			m.Set("thread", get(ok, "thread"))
			m.Set("reply_to", get(ok, "id"))
			return m
		}},
		{"submission again", func(h *harness, ok *mailbox.Message) *mailbox.Message {
			// As h.submit printed it for step 1.
			return h.answer(ok, WorkerSubmission, "rfr", "## Result\n\nDone.", "files_changed", "[a.go]", "qa_check", "pass")
		}},
		{"the step approved", func(h *harness, ok *mailbox.Message) *mailbox.Message {
			return h.answer(ok, WorkerSubmission, "rfr", "Committed.", "files_changed", "[a.go]", "qa_check", "pass", "plan_file", "plans/retry.md", "step", "1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, config)
			tasks := h.toPlan()
			reqs := h.submit(tasks[1], "[b.go]")
			h.handle(verdict(h, reqs[0], "pass"))
			want(t, "step 2 approved", h.handle(verdict(h, reqs[1], "pass")), "worker-2:approval/lgtm")
			reqs = h.submit(tasks[0], "[a.go]")
			h.handle(verdict(h, reqs[0], "pass"))
			out := h.handle(verdict(h, reqs[1], "pass"))
			want(t, "step 1 approved", out, "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
			got := h.handle(tc.answer(h, out[0]))
			if len(got) > 0 {
				t.Errorf("answer to the approval: sent %q, want nothing\n%s", summary(got), got[0].Body)
			}
			for _, m := range got {
				// Delivered to the person, as the runner does.
				if to, _ := m.Header().Names("to"); slices.Contains(to, "you") {
					if err := os.WriteFile(h.ws.Mailbox("you").Path(mailbox.Inbox, get(m, "id")+".md"), m.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			reqs = h.submit(out[1], "[c.go]")
			want(t, "step 3 submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
			if get(reqs[0], "step") != "3" {
				t.Errorf("review request for step %q, want 3", get(reqs[0], "step"))
			}
			h.handle(verdict(h, reqs[0], "pass"))
			want(t, "plan done", h.handle(verdict(h, reqs[1], "pass")), "worker-1:approval/lgtm", "you:pipeline_note/done")
			if xs := Escalations(h.ws, nil); len(xs) > 0 {
				t.Errorf("Escalations() = %+v, want none", xs)
			}
			if err := h.o.Start(context.Background(), "orch"); err != nil {
				t.Fatal(err)
			}
			for _, m := range routeOutbox(t, h.ws.Mailbox("orch"), "") {
				t.Errorf("Start sent %s, want nothing (no step was ticked by hand):\n%s", summary([]*mailbox.Message{m}), m.Body)
			}
		})
	}
}

// TestSubmissionNamesApproval: bug: a real submission for the next step
// (its text and files) whose reply_to named the approval of the step
// before, which a model is often handed with its next task, was filed:
// nothing reviewed that step, nobody was told, the plan waited for ever.
// One that names no step answers the task open to it; one that names a
// step, that step's task.
func TestSubmissionNamesApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields []string
	}{
		{"names no step", nil},
		{"names its step", []string{"plan_file", "plans/retry.md", "step", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, config)
			tasks := h.toPlan()
			reqs := h.submit(tasks[1], "[b.go]")
			h.handle(verdict(h, reqs[0], "pass"))
			h.handle(verdict(h, reqs[1], "pass"))
			reqs = h.submit(tasks[0], "[a.go]")
			h.handle(verdict(h, reqs[0], "pass"))
			out := h.handle(verdict(h, reqs[1], "pass"))
			want(t, "step 1 approved", out, "worker-1:approval/lgtm", "worker-1:task_assignment/execute")
			sub := h.answer(out[1], WorkerSubmission, "rfr", "## Result\n\nStep 3 done.", append([]string{"files_changed", "[c.go]", "qa_check", "pass"}, tc.fields...)...)
			sub.Set("reply_to", get(out[0], "id"))
			reqs = h.handle(sub)
			want(t, "step 3 submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
			if get(reqs[0], "step") != "3" {
				t.Errorf("review request for step %q, want 3", get(reqs[0], "step"))
			}
			h.handle(verdict(h, reqs[0], "pass"))
			want(t, "plan done", h.handle(verdict(h, reqs[1], "pass")), "worker-1:approval/lgtm", "you:pipeline_note/done")
			if xs := Escalations(h.ws, nil); len(xs) > 0 {
				t.Errorf("Escalations() = %+v, want none", xs)
			}
		})
	}
}

// TestApprovedAfterEscalation: a step escalated (its worker answered
// "Done." with no type), then submitted after all and approved by its
// review, was ticked by the pipeline, not by hand: no note says it was,
// and nothing is sent again when a runner starts.
func TestApprovedAfterEscalation(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	done := h.msg("worker-2", "Done.")
	done.Set("thread", get(tasks[1], "thread"))
	done.Set("reply_to", get(tasks[1], "id"))
	esc := h.handle(done)
	want(t, "blocked", esc, "you:escalation/decide")
	if err := os.WriteFile(h.ws.Mailbox("you").Path(mailbox.Inbox, get(esc[0], "id")+".md"), esc[0].Bytes(), 0o644); err != nil {
		t.Fatal(err) // delivered to the person, as the runner does
	}
	reqs := h.submit(tasks[1], "[b.go]")
	want(t, "submitted after all", reqs, "reviewer:review_request/review", "auditor:review_request/review")
	h.handle(verdict(h, reqs[0], "pass"))
	want(t, "step 2 approved", h.handle(verdict(h, reqs[1], "pass")), "worker-2:approval/lgtm")
	if xs := Escalations(h.ws, nil); len(xs) != 1 || xs[0].Pending {
		t.Errorf("Escalations() = %+v, want the one, not pending", xs)
	}
	if err := (&Orchestrator{Workspace: h.ws}).Start(context.Background(), "orch"); err != nil {
		t.Fatal(err)
	}
	for _, m := range routeOutbox(t, h.ws.Mailbox("orch"), "") {
		t.Errorf("Start sent %s, want nothing (step 2 was approved by its review):\n%s", summary([]*mailbox.Message{m}), m.Body)
	}
}

// TestReviewRequestOfNoType: a review request forwarded as an informal
// message (a workspace whose protocol lacks review_request) asks an
// answer as a typed one does, yet what asks one was decided by type: a
// reviewer's answer of no type to it was logged as nothing to do, and
// its being left unanswered as a message nothing waits on; the step
// waited for ever with nobody told. Both are escalated, as for a task.
func TestReviewRequestOfNoType(t *testing.T) {
	h := newHarness(t, strings.TrimPrefix(config, "skills: [dev-pipeline]\n"))
	h.writePlan("retry.md", plan)
	out := h.handle(h.msg("you", "Retry failed deliveries."))
	out = h.handle(h.answer(out[0], TriageResult, "triage_complete", "Tier 2.", "tier", "2", "research_needed", "false"))
	tasks := h.handle(h.answer(out[0], PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false"))
	want(t, "plan", tasks, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")
	reqs := h.submit(tasks[0], "[a.go]")
	want(t, "submission", reqs, "reviewer:", "auditor:")

	fine := h.msg("reviewer", "Looks fine.")
	fine.Set("thread", get(reqs[0], "thread"))
	fine.Set("reply_to", get(reqs[0], "id"))
	esc := h.handle(fine)
	want(t, "answered with no type", esc, "you:")
	if w := "step 1 of plans/retry.md waits: reviewer answered the review request " + get(reqs[0], "id") + " with a message of no type"; !strings.Contains(string(esc[0].Body), w) {
		t.Errorf("escalation lacks %q:\n%s", w, esc[0].Body)
	}

	n := h.msg(workspace.Runner, "auditor handled it and answered nothing.\n", "type", workspace.UnansweredNotice, "unanswered", get(reqs[1], "id"), "agent", "auditor", "reason", "its program said nothing in answer")
	n.Set("thread", get(reqs[1], "thread"))
	esc = h.handle(n)
	want(t, "left unanswered", esc, "you:")
	if w := "step 1 of plans/retry.md waits: auditor handled the review request it was sent and answered nothing"; !strings.Contains(string(esc[0].Body), w) {
		t.Errorf("escalation lacks %q:\n%s", w, esc[0].Body)
	}
}

// TestAwaitsAnswer: parley tells the orchestrator of its requests left
// unanswered, not of the messages that ask no answer.
func TestAwaitsAnswer(t *testing.T) {
	o := &Orchestrator{}
	for typ, want := range map[string]bool{
		TriageRequest: true, ResearchRequest: true, ArchitectureRequest: true,
		TaskAssignment: true, ReviewRequest: true, RevisionRequest: true,
		Approval: false, PipelineNote: false, EscalationType: false, workspace.ShutdownResponse: false, "": false,
	} {
		if got := o.AwaitsAnswer(typ); got != want {
			t.Errorf("AwaitsAnswer(%q) = %v, want %v", typ, got, want)
		}
	}
}
