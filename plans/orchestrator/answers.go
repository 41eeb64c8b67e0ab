package orchestrator

import (
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// Answer is a command that answers an escalation with one decision, and
// what the decision does.
type Answer struct {
	// Decision is the decision it sends; "" for an escalation that needs
	// none (NeedsDecision), answered in words alone.
	Decision string
	// Does says what the decision does (Choices).
	Does string
	// Command is the command, safe to paste into a shell as it is.
	Command string
}

// Answers returns the commands that answer the escalation id of kind,
// one per decision in the order Choices offers them ("parley reply ID
// --agent you --field decision=retry --body 'your reasons'"), or one
// with no decision when it needs none (needs: NeedsDecision). agent, when
// not "", is the person it waits for (--agent). Each command is safe to
// paste into a shell as it is: `decision=approve|retry|stop` pasted was
// a pipe, which approved with an empty body and said "retry: not found".
// parley pipeline, parley status --json, parley run's summary and the
// escalation's own text all say these.
func Answers(id, agent, kind string, needs bool) []Answer {
	cmd := "parley reply " + id
	if agent != "" {
		cmd += " --agent " + agent
	}
	if !needs {
		return []Answer{{Command: cmd + " --body 'your answer'"}}
	}
	var out []Answer
	for _, c := range Choices(kind) {
		out = append(out, Answer{Decision: c.Decision, Does: c.Does, Command: cmd + " --field decision=" + c.Decision + " --body 'your reasons'"})
	}
	return out
}

// Answers returns the commands that answer x (see the function Answers).
func (x Escalation) Answers() []Answer {
	return Answers(x.ID, x.Agent, x.Kind, NeedsDecision(x.Message))
}

// answersText says, in an escalation's text, how to answer it (id, of
// kind): a list of the commands, one per decision, each with what it
// does.
func answersText(id, kind string, needs bool) string {
	var b strings.Builder
	if !needs {
		b.WriteString("answer with your words (an MCP client: its reply tool):\n\n")
	} else {
		b.WriteString("answer with one of these, your reasons in the body (an MCP client: its reply tool, fields {decision: DECISION}):\n\n")
	}
	for _, a := range Answers(id, "", kind, needs) {
		b.WriteString("- `" + a.Command + "`")
		if a.Does != "" {
			b.WriteString(": " + a.Does)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// AnswerHint says in one line how to answer the escalation esc, for a
// sentence that tells a person how: the command of one decision, then
// the others ("parley reply ID --field decision=retry --body 'your
// reasons' (or decision=approve, decision=stop)"); pasted into a shell,
// the command runs as it reads, or nothing does. agent, when not "", is
// the person it waits for (--agent); first is the decision to give the
// command of, when it is one of its decisions, else the first Choices
// offers.
func AnswerHint(esc *mailbox.Message, agent, first string) string {
	answers := Answers(get(esc, "id"), agent, get(esc, "escalation"), NeedsDecision(esc))
	lead := 0
	for i, a := range answers {
		if a.Decision == first {
			lead = i
		}
	}
	hint := answers[lead].Command
	var others []string
	for i, a := range answers {
		if i != lead {
			others = append(others, "decision="+a.Decision)
		}
	}
	if len(others) > 0 {
		hint += " (or " + strings.Join(others, ", ") + ")"
	}
	return hint
}
