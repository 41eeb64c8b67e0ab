package web

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parley-dev/parley/runner/workspace"
)

// Lanes is a session as a sequence diagram: one lane per agent, one step
// per message delivered (an arrow from the sender to each recipient,
// labelled with the message's type) or refused (a note on the sender's
// lane).
type Lanes struct {
	Agents []string
	Steps  []Step
}

// Step is one message on the lanes.
type Step struct {
	N       int // the journal entry's number, from 0
	From    string
	To      []string
	Label   string // type/signal, or "message" for one without a type
	Refused bool   // a refusal: Label is the reason
	ID      string
}

// LanesOf makes the lanes of journal entries numbered from first: the
// agents of the workspace in its order, then any other sender or
// recipient in the order met.
func LanesOf(agents []string, entries []workspace.Entry, first int) Lanes {
	l := Lanes{Agents: slices.Clone(agents)}
	add := func(name string) {
		if name != "" && !slices.Contains(l.Agents, name) {
			l.Agents = append(l.Agents, name)
		}
	}
	for i, e := range entries {
		label := e.Type
		if label == "" {
			label = "message"
		}
		if e.Signal != "" {
			label += "/" + e.Signal
		}
		switch {
		case e.Arrived():
			add(e.From)
			for _, to := range e.To {
				add(to)
			}
			l.Steps = append(l.Steps, Step{N: first + i, From: e.From, To: e.To, Label: label, ID: e.ID})
		case e.Outcome == workspace.Refused:
			add(e.From)
			label := "rejected: "
			if e.InPlace() {
				label = "refused in place: "
			}
			l.Steps = append(l.Steps, Step{N: first + i, From: e.From, Label: label + e.Reason, Refused: true, ID: e.ID})
		}
	}
	return l
}

// WriteMermaid writes the lanes as a Mermaid sequence diagram. Agents are
// participants P1, P2, ... named by their agent; labels lose the
// characters Mermaid reads as syntax.
func (l Lanes) WriteMermaid(w io.Writer) error {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	ids := map[string]string{}
	for i, a := range l.Agents {
		ids[a] = fmt.Sprintf("P%d", i+1)
		fmt.Fprintf(&b, "    participant %s as %s\n", ids[a], mermaidText(a))
	}
	for _, s := range l.Steps {
		if s.Refused {
			fmt.Fprintf(&b, "    Note over %s: %s\n", ids[s.From], mermaidText(s.Label))
			continue
		}
		for _, to := range s.To {
			fmt.Fprintf(&b, "    %s->>%s: %s\n", ids[s.From], ids[to], mermaidText(s.Label))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidText makes text safe as a Mermaid label: one line, without the
// characters that start comments, entities or directives.
func mermaidText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r < ' ', r == 0x7f:
			return ' '
		case strings.ContainsRune(";#%<>{}`\"", r):
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	if s == "" {
		s = "-"
	}
	return s
}
