package orchestrator

import (
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// researchers is the test's config with two researchers.
var researchers = strings.Replace(config, "{name: researcher,", "{name: researcher-2, role: researcher, driver: command, run: [true]}\n  - {name: researcher, role: researcher,", 1)

// questions is a triage's body that asks two research questions.
const questions = "## Research Questions\n\n- Which errors: transient ones?\n- How long to wait?\n"

// researching starts a pipeline of the request body to its research:
// it returns the research requests, one to each researcher.
func (h *harness) researching(body string) []*mailbox.Message {
	h.t.Helper()
	out := h.handle(h.msg("you", body))
	want(h.t, "request", out, "architect:triage_request/execute")
	out = h.handle(h.answer(out[0], TriageResult, "triage_complete", questions, "tier", "2", "research_needed", "true"))
	want(h.t, "fan-out", out, "researcher-2:research_request/research", "researcher:research_request/research")
	return out
}

// TestResearchOfTwoPipelines guards two requests that ask the same
// research questions (an architect asks them again for a second
// request): the second pipeline's architecture_request went to the
// architect as soon as one of its researchers answered, with the first
// pipeline's answers as its research context, its own answer left out,
// since answers were matched by topic across every pipeline, whatever
// request their reply_to named. Each pipeline waits for its own.
func TestResearchOfTwoPipelines(t *testing.T) {
	for _, named := range []bool{true, false} {
		name := "answers with reply_to"
		if !named {
			name = "answers with thread and topic only"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, researchers)
			answer := func(req *mailbox.Message, body string) *mailbox.Message {
				a := h.answer(req, ResearchResult, "research_complete", body, "topic", get(req, "topic"), "verified", "true")
				if !named {
					a.Delete("reply_to")
				}
				return a
			}
			first := h.researching("First.")
			want(t, "first, one answer", h.handle(answer(first[0], "First's errors.")))
			want(t, "first, joined", h.handle(answer(first[1], "First's wait.")), "architect:architecture_request/plan")

			second := h.researching("Second.")
			want(t, "second, one answer", h.handle(answer(second[1], "Second's wait.")))
			esc := h.handle(h.givenUp(second[0]))
			want(t, "second, given up", esc, "you:escalation/decide")
			out := h.handle(h.decide(esc[0], "retry", "Again."))
			want(t, "second, asked again", out, "researcher-2:research_request/research")
			out = h.handle(answer(out[0], "Second's errors."))
			want(t, "second, joined", out, "architect:architecture_request/plan")
			body := string(out[0].Body)
			for _, s := range []string{"### Which errors\n\nSecond's errors.", "### How long to wait\n\nSecond's wait."} {
				if !strings.Contains(body, s) {
					t.Errorf("the second architecture_request lacks %q:\n%s", s, body)
				}
			}
			if strings.Contains(body, "First's") {
				t.Errorf("the second architecture_request has the first pipeline's research:\n%s", body)
			}
		})
	}
}

// sentBefore files m in the orchestrator's sent/ as a message it sent,
// as an older parley did: a history this one goes on from.
func (h *harness) sentBefore(m *mailbox.Message) *mailbox.Message {
	h.t.Helper()
	m.Set("id", h.ids.New("orch"))
	m.Set("from", "orch")
	if err := os.WriteFile(h.ws.Mailbox("orch").Path(mailbox.Sent, get(m, "id")+".md"), m.Bytes(), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return m
}

// TestResearchAfterPlan guards a pipeline whose plan was asked for while
// one of its research requests was out (an older parley asked it with
// another pipeline's research; repro-7 of a tryout): the request, given
// up, was escalated, the person's retry sent a copy of it, its answer
// asked the architect for the plan a second time, and the second
// plan_result assigned again the steps already with the workers, each
// done and reviewed twice. The request went on without its answer: a
// decision sends nothing, parley pipeline counts it settled; an answer
// to its copy (sent by an older parley) asks for no plan again; and a
// plan_result again sends no step in hand.
func TestResearchAfterPlan(t *testing.T) {
	h := newHarness(t, researchers)
	h.writePlan("retry.md", plan)
	reqs := h.researching("Second.")
	got := h.handle(h.answer(reqs[1], ResearchResult, "research_complete", "Seconds.", "topic", get(reqs[1], "topic"), "verified", "true"))
	want(t, "one answer", got)
	// The older parley asked for the plan then.
	arch := mailbox.New([]byte("## Research Context\n\nAnother pipeline's.\n"))
	arch.Set("to", "architect")
	arch.SetValue("type", ArchitectureRequest)
	arch.SetValue("signal", "plan")
	arch.Set("thread", get(reqs[0], "thread"))
	arch = h.sentBefore(arch)
	planResult := func() *mailbox.Message {
		return h.answer(arch, PlanResult, "plan_complete", "The plan.", "plan_file", "plans/retry.md", "wave_count", "2", "has_blockers", "false")
	}
	tasks := h.handle(planResult())
	want(t, "plan", tasks, "worker-1:task_assignment/execute", "worker-2:task_assignment/execute")

	esc := h.handle(h.givenUp(reqs[0]))
	want(t, "given up", esc, "you:escalation/decide")
	if how := NewFates(h.ws).WentOn("orch", get(reqs[0], "id"), "researcher-2"); how != "planned" {
		t.Errorf("WentOn of the research request given up after its pipeline was planned = %q, want planned", how)
	}
	out := h.handle(h.decide(esc[0], "retry", "Again."))
	want(t, "retry", out, "you:pipeline_note/info")
	if b := string(out[0].Body); !strings.Contains(b, "asked the architect for its plan since, without its answer, so nothing is sent again") {
		t.Errorf("note:\n%s", b)
	}

	// The older parley sent the copy, answered now.
	c := reqs[0].Clone()
	for _, k := range []string{"id", "from", "created"} {
		c.Delete(k)
	}
	c = h.sentBefore(c)
	want(t, "the copy's answer", h.handle(h.answer(c, ResearchResult, "research_complete", "Transient.", "topic", get(c, "topic"), "verified", "true")))

	// The plan again, its steps with the workers: nothing sent twice.
	want(t, "the plan again", h.handle(planResult()))
	reqs = h.submit(tasks[0], "[a.go]")
	want(t, "submission", reqs, "reviewer:review_request/review", "auditor:review_request/review")
	want(t, "the plan again, in review", h.handle(planResult()))
}
