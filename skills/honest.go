package skills

import (
	"fmt"
	"slices"
	"strings"
)

// Readings that look wrong. A document parley reads without an error may
// still have been misread: a heading taken for a type, a sentence taken
// for a role. review notes, as warnings, what a person should look at
// before trusting the schema; and a document with no message type at all
// is no protocol parley can read, which is an error.
func (p *parser) review() {
	s := p.skill
	if len(s.Types) == 0 {
		p.skill.Problems = append(p.skill.Problems, Problem{Line: 1, Message: "no message type found: not a protocol parley can read " +
			"(it reads types from headings such as ### `[TYPE]` or ### `type_name`, from a table of types with sender and recipient columns, " +
			"and from Required:/Optional: lines or field tables under them)"})
		return
	}
	for _, t := range s.Types {
		label := displayName(t.Name, t.Tagged)
		warn := func(line int, format string, args ...any) {
			if line == 0 {
				line = t.Line
			}
			s.Problems = append(s.Problems, Problem{Line: line, Section: t.Section, Message: label + ": " + fmt.Sprintf(format, args...), Warning: true})
		}
		// A phrase of three words or more that is no role parley knows
		// ("the narrator requests handler") is not guessed into a role:
		// it is left out, and said.
		var strays []string
		// When nothing is left, the warnings below say so once.
		t.Senders, strays = dropStrays(t.Senders)
		for _, r := range strays {
			if len(t.Senders) == 0 {
				break
			}
			warn(t.Line, "the sender %q has words parley cannot read as a role (%q): they are left out", t.SenderText, strings.ReplaceAll(r, "-", " "))
		}
		t.Recipients, strays = dropStrays(t.Recipients)
		for _, r := range strays {
			if len(t.Recipients) == 0 {
				break
			}
			warn(t.RecipientLine, "the recipient %q has words parley cannot read as a role (%q): they are left out", t.RecipientText, strings.ReplaceAll(r, "-", " "))
		}
		switch {
		case len(t.Recipients) == 0 && t.RecipientText != "":
			warn(t.RecipientLine, "the recipient %q names no role parley can read: a message of this type goes only where its to: says", t.RecipientText)
		case len(t.Recipients) == 0:
			warn(t.Line, "no recipient found: a message of this type goes only where its to: says")
		}
		if len(t.Senders) == 0 && t.SenderText != "" {
			warn(t.Line, "the sender %q names no role parley can read: any agent may send it", t.SenderText)
		}
		for _, r := range t.Rules {
			for _, c := range append(slices.Clone(r.If), r.Then) {
				if c.Path != "" && !typeHasField(t, c.Path) {
					warn(r.Line, "a hard rule on %q, a field the type does not have: %s", c.Path, r.Text)
					break
				}
			}
		}
	}
}

// dropStrays splits roles into those kept and the strays: roles of three
// words or more that parley does not know, likely a sentence read as a
// role ("narrator-requests-handler").
func dropStrays(roles []string) (kept, strays []string) {
	for _, r := range roles {
		if strings.Count(r, "-") >= 2 && !knownRole(r) {
			strays = append(strays, r)
			continue
		}
		kept = append(kept, r)
	}
	return kept, strays
}

func knownRole(r string) bool {
	for _, v := range roleWords {
		if v == r {
			return true
		}
	}
	return false
}

// typeHasField reports whether a type has the field a path names, or the
// field the path is in.
func typeHasField(t *Type, path string) bool {
	top := strings.SplitN(strings.SplitN(path, "[", 2)[0], ".", 2)[0]
	for _, f := range t.Fields {
		ftop := strings.SplitN(strings.SplitN(f.Name, "[", 2)[0], ".", 2)[0]
		if f.Name == path || ftop == top {
			return true
		}
	}
	return slices.Contains([]string{"type", "from", "to", "cc", "id", "signal"}, top)
}

// Roles returns every role the skill names as a sender, recipient or
// observer of a type, or as the emitter or receiver of a signal, sorted;
// not "any" nor "*".
func (s *Skill) Roles() []string {
	var out []string
	add := func(roles []string) {
		for _, r := range roles {
			if r != "" && !Generic([]string{r}) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	for _, t := range s.Types {
		add(t.Senders)
		add(t.Recipients)
		add(t.Observers)
	}
	for _, sg := range s.Signals {
		add(sg.Senders)
		add(sg.Recipients)
	}
	slices.Sort(out)
	return out
}
