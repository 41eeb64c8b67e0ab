package orchestrator

import (
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
