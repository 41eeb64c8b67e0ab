package orchestrator

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// TestRewound: a plan put back as it was written (a worker's git
// checkout in the workspace) lost the ticks of steps the pipeline had
// approved, and the next wave waited on them for ever. The approvals are
// the record: the steps are ticked again, the person told, and the
// pipeline goes on, whether from the next approval (dispatch) or when a
// runner starts (Start). A plan written again (a new plan_result)
// numbers its steps afresh: approvals from before it tick nothing.
func TestRewound(t *testing.T) {
	t.Run("next approval", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		h.approveStep(tasks[0], "[a.go]")
		h.writePlan("retry.md", plan) // rewound: step 1 unticked, status approved
		out := h.approveStep(tasks[1], "[b.go]")
		want(t, "step 2 approved", out, "worker-2:approval/lgtm", "you:pipeline_note/info", "worker-1:task_assignment/execute")
		if !strings.HasPrefix(string(out[1].Body), "Step 1 of plans/retry.md, approved, ticked again: the plan no longer ticked it.\n") {
			t.Errorf("note = %q", out[1].Body)
		}
		if p := h.readPlan(); !p.Step(1).Done || !p.Step(2).Done || p.Status != "in_progress" {
			t.Errorf("plan after: step 1 done %v, step 2 done %v, status %q", p.Step(1).Done, p.Step(2).Done, p.Status)
		}
	})
	t.Run("start", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		h.approveStep(tasks[0], "[a.go]")
		h.approveStep(tasks[1], "[b.go]")
		h.writePlan("retry.md", plan)
		if err := (&Orchestrator{Workspace: h.ws}).Start(context.Background(), "orch"); err != nil {
			t.Fatal(err)
		}
		got := h.outbox()
		want(t, "start", got, "you:pipeline_note/info")
		if !strings.HasPrefix(string(got[0].Body), "Steps 1 and 2 of plans/retry.md, approved, ticked again") {
			t.Errorf("note = %q", got[0].Body)
		}
		if pr := h.readPlan().Progress(); pr.Done != 2 {
			t.Errorf("progress after start: %+v", pr)
		}
		// Wave 2 was sent with step 2's approval: not again.
		if err := (&Orchestrator{Workspace: h.ws}).Start(context.Background(), "orch"); err != nil {
			t.Fatal(err)
		}
		want(t, "start again", h.outbox(), "you:pipeline_note/info")
	})
	t.Run("planned again", func(t *testing.T) {
		h := newHarness(t, config)
		tasks := h.toPlan()
		h.approveStep(tasks[0], "[a.go]")
		h.writePlan("retry.md", plan)
		out := h.handle(h.msg("architect", "The plan again.", "type", PlanResult, "signal", "plan_complete", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false", "thread", get(tasks[0], "thread")))
		for _, m := range out {
			if strings.Contains(string(m.Body), "ticked again") {
				t.Errorf("a plan written again had step 1 ticked again: %s", m.Body)
			}
		}
		if h.readPlan().Step(1).Done {
			t.Error("step 1 of the plan written again is ticked")
		}
	})
}

// approveStep submits the task and passes both verdicts; it returns what
// the last verdict sent.
func (h *harness) approveStep(task *mailbox.Message, files string) []*mailbox.Message {
	h.t.Helper()
	reqs := h.submit(task, files)
	h.handle(verdict(h, reqs[0], "pass"))
	return h.handle(verdict(h, reqs[1], "pass"))
}

// outbox reads what the orchestrator wrote into its outbox itself.
func (h *harness) outbox() []*mailbox.Message {
	h.t.Helper()
	box := h.ws.Mailbox("orch")
	names, err := box.Names(mailbox.Outbox)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*mailbox.Message
	for _, n := range names {
		data, err := os.ReadFile(box.Path(mailbox.Outbox, n))
		if err != nil {
			h.t.Fatal(err)
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
