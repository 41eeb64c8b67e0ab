package workspace

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// Refusal says why a message is rejected: the line and header field
// concerned (when known) and a reason a person can act on.
type Refusal struct {
	Line   int
	Field  string
	Reason string
}

// text formats the refusal as "file:line: field: reason".
func (f *Refusal) Text(file string) string {
	var b strings.Builder
	b.WriteString(file)
	b.WriteString(":")
	if f.Line > 0 {
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteString(":")
	}
	b.WriteString(" ")
	if f.Field != "" {
		b.WriteString(f.Field)
		b.WriteString(": ")
	}
	b.WriteString(f.Reason)
	return b.String()
}

func RefusalOf(err error) *Refusal {
	var pe *mailbox.ParseError
	if errors.As(err, &pe) {
		return &Refusal{Line: pe.Line, Field: pe.Field, Reason: pe.Err.Error()}
	}
	return &Refusal{Reason: err.Error()}
}

// Addressing is how a message's recipients were worked out: what it
// names, what its protocol says, and what the workspace's routes add.
type Addressing struct {
	Recipients []string `json:"recipients"`          // every recipient, in order
	Broadcast  bool     `json:"broadcast,omitempty"` // addressed to "*"
	Named      []string `json:"named,omitempty"`     // from to: and cc:
	// Default are the agents the protocol sends the type to, when the
	// message names none; DefaultRoles the roles they were chosen by.
	Default      []string     `json:"default,omitempty"`
	DefaultRoles []string     `json:"default_roles,omitempty"`
	Routes       []RouteMatch `json:"routes,omitempty"`
}

// RouteMatch is a route that matched a message, and the agents it added.
type RouteMatch struct {
	Key    string   `json:"route"` // routes[i]
	Line   int      `json:"line"`  // in parley.yaml
	Agents []string `json:"agents"`
}

// Address resolves a message's recipients: to and cc ("*" is every agent
// but the sender; a name is an agent, or the agent playing a character of
// that name), the protocol's default for its type when it names none, and
// the routes that match it. An unknown or invalid name, or a message with
// no recipient, is refused.
func (w *Workspace) Address(protocol *skills.Set, sender string, m *mailbox.Message) (*Addressing, *Refusal) {
	a := &Addressing{}
	seen := make(map[string]bool)
	addAgent := func(n string) {
		if !seen[n] {
			seen[n] = true
			a.Recipients = append(a.Recipients, n)
		}
	}
	everyone := func() []string {
		a.Broadcast = true
		var all []string
		for _, ag := range w.Config.Agents {
			if ag.Name != sender {
				addAgent(ag.Name)
				all = append(all, ag.Name)
			}
		}
		return all
	}
	named := false
	for _, field := range []string{"to", "cc"} {
		names, err := m.Header().Names(field)
		if err != nil {
			return nil, RefusalOf(err)
		}
		for _, n := range names {
			named = true
			if n == "*" {
				a.Named = append(a.Named, everyone()...)
				continue
			}
			if err := mailbox.CheckName(n); err != nil {
				return nil, &Refusal{Line: m.Header().Line(field), Field: field, Reason: err.Error()}
			}
			agent, ok := w.Resolve(n)
			if !ok {
				return nil, &Refusal{Line: m.Header().Line(field), Field: field, Reason: (&UnknownAgentError{Name: n, Agents: w.AgentNames()}).Error()}
			}
			addAgent(agent)
			a.Named = appendNew(a.Named, agent)
		}
	}
	// Routes add to what the message names and what its protocol says.
	routes, err := w.applyRoutes(sender, m)
	if err != nil {
		return nil, &Refusal{Field: "to", Reason: err.Error()}
	}
	var routedTo []string
	for _, rt := range routes {
		a.Routes = append(a.Routes, RouteMatch{Key: rt.Route.Key, Line: rt.Route.Line, Agents: rt.Agents})
		for _, ag := range rt.Agents {
			routedTo = appendNew(routedTo, ag)
		}
	}
	if !named {
		roles, all, f := defaultRoles(protocol, m)
		if f != nil && len(routedTo) == 0 {
			return nil, f
		}
		a.DefaultRoles = roles
		switch {
		case roles == nil:
		case slices.Contains(roles, "*"):
			a.Default = everyone()
		default:
			var byRole []string
			for _, ag := range w.Config.Agents {
				if ag.Name != sender && overlaps(w.Roles(ag.Name), roles) {
					byRole = append(byRole, ag.Name)
				}
			}
			switch {
			case len(byRole) > 1 && !all && len(routedTo) == 0:
				return nil, &Refusal{Field: "to", Reason: fmt.Sprintf("missing: %s goes to one %s, and there are several (%s): name it with to:", typeLabel(m), strings.Join(roles, " or "), strings.Join(byRole, ", "))}
			case len(byRole) == 1 || all:
				a.Default = byRole
				for _, ag := range byRole {
					addAgent(ag)
				}
			}
			if len(byRole) == 0 && len(routedTo) == 0 {
				return nil, &Refusal{Field: "to", Reason: fmt.Sprintf("missing, and no agent but the sender has the role %s goes to (%s): give an agent that role in parley.yaml, or name the recipient", typeLabel(m), strings.Join(roles, " or "))}
			}
		}
	}
	for _, ag := range routedTo {
		addAgent(ag)
	}
	if len(a.Recipients) == 0 {
		if named {
			return nil, &Refusal{Line: m.Header().Line("to"), Field: "to", Reason: "names no agent (\"*\" alone, with no other agent in the workspace?)"}
		}
		return nil, &Refusal{Field: "to", Reason: "missing: say who the message is for (to: <agent>, a list, or \"*\" for everyone)"}
	}
	return a, nil
}

// defaultRoles returns the roles a message that names no recipient goes
// to, from its type in the protocol; nil roles when the protocol does not
// say. all reports that it goes to every agent of those roles.
func defaultRoles(protocol *skills.Set, m *mailbox.Message) (roles []string, all bool, f *Refusal) {
	if protocol == nil {
		return nil, false, nil
	}
	name, _ := m.Header().Get("type")
	t, _, ok := protocol.Type(name)
	if !ok || len(t.Recipients) == 0 {
		return nil, false, nil
	}
	roles, all = t.DefaultRecipients()
	if slices.Contains(roles, "any") {
		return nil, false, &Refusal{Field: "to", Reason: fmt.Sprintf("missing: %s may go to any agent: name it with to:", typeLabel(m))}
	}
	return roles, all, nil
}

// typeLabel names a message's type as its protocol writes it.
func typeLabel(m *mailbox.Message) string {
	name, _ := m.Header().Get("type")
	if m.Tag != "" {
		return "[" + name + "]"
	}
	return name
}

// Explain works out where a message from sender would go, and why,
// without sending it: what it names, what its protocol says, and each
// route that matches. A message that would be refused gives an error with
// the reason, naming file.
func (w *Workspace) Explain(file, sender string, m *mailbox.Message) (*Addressing, error) {
	protocol, err := w.Protocol()
	if err != nil {
		return nil, err
	}
	if m.Header().Has("from") {
		from, _ := m.Header().Get("from")
		if from != sender {
			return nil, fmt.Errorf("%s: from: %q, but it is sent by %q", file, from, sender)
		}
	}
	a, f := w.Address(protocol, sender, m)
	if f != nil {
		return nil, errors.New(f.Text(file))
	}
	return a, nil
}
