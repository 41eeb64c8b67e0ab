package orchestrator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// TestAnswerHint: bug: the command that answers an escalation read
// `--field decision=approve|retry|stop`, which pasted into a shell is a
// pipe (it approved with an empty body, then "retry: not found"). A
// hint gives one decision's command, the others in words.
func TestAnswerHint(t *testing.T) {
	const id = "20261129-100000.000000Z-orch-abcdef"
	esc := func(fields ...string) *mailbox.Message {
		m := mailbox.New([]byte("The pipeline needs your decision.\n"))
		m.Set("id", id)
		for i := 0; i+1 < len(fields); i += 2 {
			m.Set(fields[i], fields[i+1])
		}
		return m
	}
	tests := []struct {
		name         string
		esc          *mailbox.Message
		agent, first string
		want         string
	}{
		{"iteration", esc("escalation", EscalateLimit, "plan_file", "plans/p.md", "step", "1"), "", "",
			"parley reply " + id + " --field decision=approve --body 'your reasons' (or decision=retry, decision=stop)"},
		{"unanswered, retry first", esc("escalation", EscalateUnanswered), "you", "",
			"parley reply " + id + " --agent you --field decision=retry --body 'your reasons' (or decision=approve, decision=stop)"},
		{"stop asked for", esc("escalation", EscalateGivenUp), "you", DecisionStop,
			"parley reply " + id + " --agent you --field decision=stop --body 'your reasons' (or decision=retry, decision=approve)"},
		{"blocked with no step: no decision", esc("escalation", EscalateBlocked), "you", DecisionApprove,
			"parley reply " + id + " --agent you --body 'your answer'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AnswerHint(tt.esc, tt.agent, tt.first); got != tt.want {
				t.Errorf("AnswerHint() = %q, want %q", got, tt.want)
			}
		})
	}
	var got []string
	for _, a := range Answers(id, "you", EscalateLimit, true) {
		got = append(got, a.Command)
	}
	want := []string{
		"parley reply " + id + " --agent you --field decision=approve --body 'your reasons'",
		"parley reply " + id + " --agent you --field decision=retry --body 'your reasons'",
		"parley reply " + id + " --agent you --field decision=stop --body 'your reasons'",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Answers() (-want +got):\n%s", d)
	}
}
