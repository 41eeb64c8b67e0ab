package workspace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// addressing is the recipients of a message as address works them out,
// each with the rules that send it there.
type addressing struct {
	list      []Recipient
	broadcast bool // addressed to "*", by the message or its protocol
	named     bool // to: or cc: names someone
}

// add sends the message to an agent by a rule.
func (a *addressing) add(agent string, r Rule) {
	for i := range a.list {
		if a.list[i].Agent == agent {
			if !slices.Contains(a.list[i].Rules, r) {
				a.list[i].Rules = append(a.list[i].Rules, r)
			}
			return
		}
	}
	a.list = append(a.list, Recipient{Agent: agent, Rules: []Rule{r}})
}

// has reports whether an agent is a recipient by a rule of this kind.
func (a *addressing) has(agent, kind string) bool {
	for _, r := range a.list {
		if r.Agent == agent {
			return slices.ContainsFunc(r.Rules, func(r Rule) bool { return r.Kind == kind })
		}
	}
	return false
}

// address works out a message's recipients, in this order: the agents
// its to: and cc: name ("*" is every agent but the sender; a name is an
// agent, or the agent that plays the character of that name; a tag-first
// message's own to: and cc: count too); when it names none, the agents
// its protocol sends the type to; the agents the protocol lets see every
// message of the type; and the agents routes add. An unknown or invalid
// name, or a message that goes nowhere, is refused.
func (w *Workspace) address(protocol *skills.Set, sender string, m *mailbox.Message) (*addressing, *Refusal) {
	a := &addressing{}
	if f := w.addressNamed(a, sender, m); f != nil {
		return nil, f
	}
	routes, err := w.applyRoutes(sender, m)
	if err != nil {
		return nil, &Refusal{Field: "to", Reason: err.Error()}
	}
	routed := slices.ContainsFunc(routes, func(r routed) bool { return len(r.Agents) > 0 })
	if !a.named {
		if f := w.addressByProtocol(a, protocol, sender, m, routed); f != nil {
			return nil, f
		}
	}
	w.addressObservers(a, protocol, sender, m)
	for _, rt := range routes {
		for _, ag := range rt.Agents {
			a.add(ag, Rule{Kind: RuleRoute, Source: rt.Route.Key, Line: rt.Route.Line, Text: fmt.Sprintf("%s (%s:%d)", rt.Route.Key, ConfigFile, rt.Route.Line)})
		}
	}
	if len(a.list) == 0 {
		if a.named {
			return nil, &Refusal{Line: m.Header().Line("to"), Field: "to", Reason: "names no agent (\"*\" alone, with no other agent in the workspace?)"}
		}
		if protocol != nil {
			// A misspelt type is why the protocol sent it nowhere.
			if v, ok := protocol.UnknownType(m, w.Config.Strict); ok && !v.Warning {
				return nil, &Refusal{Line: v.Line, Field: v.Field, Reason: v.Reason}
			}
		}
		if k := skills.MisspeltTo(m, func(name string) bool { _, ok := w.Agent(name); return ok }); k != "" {
			// too: gm, unnoticed as a misspelling while the message went
			// somewhere (a letter more makes a word of its own: see
			// skills.Set.MisspeltKey), is why it goes nowhere now.
			return nil, &Refusal{Line: m.Payload().Line(k), Field: k, Reason: fmt.Sprintf("no field is called %s; did you mean to? (the message says who it is for in to:, and has none)", k)}
		}
		return nil, &Refusal{Field: "to", Reason: "missing: say who the message is for (to: <agent>, a list, or \"*\" for everyone)"}
	}
	return a, nil
}

// addressNamed adds the agents a message names in to: and cc:: in its
// header, and, for a tag-first message, among its fields.
func (w *Workspace) addressNamed(a *addressing, sender string, m *mailbox.Message) *Refusal {
	views := []mailbox.Fields{m.Header()}
	if m.Tag != "" {
		views = append(views, m.Payload())
	}
	for _, fields := range views {
		for _, field := range []string{"to", "cc"} {
			names, err := fields.Names(field)
			if err != nil {
				return RefusalOf("", err)
			}
			line := fields.Line(field)
			for _, n := range names {
				a.named = true
				if f := w.addName(a, sender, field, line, n); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

// addName adds the agent a name in to: or cc: stands for.
func (w *Workspace) addName(a *addressing, sender, field string, line int, name string) *Refusal {
	if name == "*" {
		a.broadcast = true
		for _, ag := range w.AgentNames() {
			if ag != sender {
				a.add(ag, Rule{Kind: RuleNamed, Source: field, Line: line, Text: field + `: "*" (everyone but the sender)`})
			}
		}
		return nil
	}
	if err := mailbox.CheckName(name); err != nil {
		reason := err.Error()
		if agent, ok := w.Resolve(strings.ToLower(name)); ok {
			reason += fmt.Sprintf(" (did you mean %s?)", agent) // Gm for gm
		}
		return &Refusal{Line: line, Field: field, Reason: reason}
	}
	agent, ok := w.Resolve(name)
	if !ok {
		return &Refusal{Line: line, Field: field, Reason: (&UnknownAgentError{Name: name, Agents: w.AgentNames(), Characters: w.Characters()}).Error()}
	}
	text := "named in " + field + ":"
	if agent != name {
		text = fmt.Sprintf("%s: %s, the character it plays", field, name)
	}
	a.add(agent, Rule{Kind: RuleNamed, Source: field, Line: line, Text: text})
	return nil
}

// addressByProtocol adds the agents the protocol sends a message's type
// to, for a message that names no recipient: every agent of the
// recipient roles for a broadcast or a plural ("player teammates"), else
// the one agent that has the role. routed says routes add recipients,
// which is then enough when the protocol cannot choose.
func (w *Workspace) addressByProtocol(a *addressing, protocol *skills.Set, sender string, m *mailbox.Message, routed bool) *Refusal {
	t, skill := typeOf(protocol, m)
	if t == nil || len(t.Recipients) == 0 {
		return nil
	}
	if why := t.SenderRefusal(w.Party(sender)); why != "" {
		// The sender is the problem, not the recipient: say so.
		return &Refusal{Line: m.Header().Line("from"), Field: "from", Reason: why}
	}
	roles, all := t.DefaultRecipients()
	label := typeLabel(m)
	rule := Rule{Kind: RuleProtocol, Source: w.Short(skill.Source), Line: t.Line, Text: fmt.Sprintf("the protocol: %s goes to %s", label, t.RecipientText)}
	if slices.Contains(roles, "*") {
		a.broadcast = true
		rule.Text = fmt.Sprintf("the protocol: %s goes to everyone", label)
		for _, ag := range w.AgentNames() {
			if ag != sender {
				a.add(ag, rule)
			}
		}
		return nil
	}
	if slices.Contains(roles, "any") {
		if routed {
			return nil
		}
		return &Refusal{Field: "to", Reason: fmt.Sprintf("missing: %s may go to any agent: name it with to:", label)}
	}
	var byRole []string
	for _, ag := range w.AgentNames() {
		if ag != sender && w.HasRole(ag, roles...) {
			byRole = append(byRole, ag)
		}
	}
	switch {
	case len(byRole) > 1 && !all:
		if routed {
			return nil
		}
		return &Refusal{Field: "to", Reason: fmt.Sprintf("missing: %s goes to one %s, and there are several (%s): name it with to:", label, strings.Join(roles, " or "), strings.Join(byRole, ", "))}
	case len(byRole) == 0:
		if routed {
			return nil
		}
		return &Refusal{Field: "to", Reason: fmt.Sprintf("missing, and no agent but the sender has the role %s goes to (%s): give an agent that role in %s, or name the recipient", label, strings.Join(roles, " or "), ConfigFile)}
	}
	for _, ag := range byRole {
		a.add(ag, rule)
	}
	return nil
}

// addressObservers adds the agents whose role the protocol lets see every
// message of the type (the gm and the narrator see every
// [PLAYER_TO_PLAYER]), but the sender.
func (w *Workspace) addressObservers(a *addressing, protocol *skills.Set, sender string, m *mailbox.Message) {
	t, skill := typeOf(protocol, m)
	if t == nil || len(t.Observers) == 0 {
		return
	}
	rule := Rule{Kind: RuleVisibility, Source: w.Short(skill.Source), Line: t.ObserversLine, Text: fmt.Sprintf("the protocol: %s see every %s (%s:%d)", strings.Join(t.Observers, " and "), typeLabel(m), w.Short(skill.Source), t.ObserversLine)}
	for _, ag := range w.AgentNames() {
		if ag != sender && w.HasRole(ag, t.Observers...) {
			a.add(ag, rule)
		}
	}
}

// typeOf returns the protocol's type of a message, and the skill that
// defines it; nil for a message of no type the protocol knows.
func typeOf(protocol *skills.Set, m *mailbox.Message) (*skills.Type, *skills.Skill) {
	if protocol == nil {
		return nil, nil
	}
	name, _ := m.Header().Get("type")
	t, skill, ok := protocol.Type(name)
	if !ok {
		return nil, nil
	}
	return t, skill
}

// typeLabel names a message's type as its protocol writes it.
func typeLabel(m *mailbox.Message) string {
	name, _ := m.Header().Get("type")
	if m.Tag != "" {
		return "[" + name + "]"
	}
	return name
}

// checkProtocol checks a message against the workspace's protocol: its
// fields and values, its hard rules, that its sender's role may send it,
// and that each agent it names or its protocol sends it to may receive
// it. The agents routes and the protocol's visibility rules add are the
// workspace's decision and are not checked against the recipient column
// (parley says so when it starts: see Lint). It returns every breach,
// and the warnings.
func (w *Workspace) checkProtocol(protocol *skills.Set, sender string, m *mailbox.Message, a *addressing) ([]*Refusal, []string) {
	if protocol == nil {
		return nil, nil
	}
	env := skills.Envelope{
		Sender:    w.Party(sender),
		Broadcast: a.broadcast,
		Phase:     w.Config.Phase,
		Strict:    w.Config.Strict,
	}
	for _, r := range a.list {
		if a.has(r.Agent, RuleNamed) || a.has(r.Agent, RuleProtocol) {
			env.Recipients = append(env.Recipients, w.Party(r.Agent))
		}
	}
	_, vs := protocol.Check(m, env)
	var warnings []string
	var fs []*Refusal
	for _, v := range vs {
		if v.Warning {
			warnings = append(warnings, v.Error())
			continue
		}
		fs = append(fs, &Refusal{Line: v.Line, Field: v.Field, Reason: v.Reason, Meant: v.Meant})
	}
	return fs, warnings
}
