package skills

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// A protocol's signal tables say who may emit each value of the signal
// field and to whom it is sent: a column ("Emitted by", "Sent to"), or
// the table's heading ("Orchestrator → Agent"). They are rules like a
// type's sender and recipients, for any message carrying the signal.

// SignalSenders returns the roles that may emit the signal: its table's
// column, else the left side of its heading; nil when any agent may, or
// the protocol does not say.
func (sg *Signal) SignalSenders() []string {
	roles := sg.Senders
	if len(roles) == 0 {
		if from, _, ok := headingRoles(sg.Direction); ok {
			roles, _ = parseRoles(from)
		}
	}
	if Generic(roles) {
		return nil
	}
	return roles
}

// SignalRecipients returns the roles the signal is sent to, as
// SignalSenders does for who emits it.
func (sg *Signal) SignalRecipients() []string {
	roles := sg.Recipients
	if len(roles) == 0 {
		if _, to, ok := headingRoles(sg.Direction); ok {
			roles, _ = parseRoles(to)
		}
	}
	if Generic(roles) {
		return nil
	}
	return roles
}

// signalNames returns the names of every signal of the protocol's
// skills.
func (s *Set) signalNames() []string {
	var out []string
	for _, sk := range s.Skills {
		for _, sg := range sk.Signals {
			out = append(out, sg.Name)
		}
	}
	return out
}

// Signal returns the signal of this name and the skill that defines it.
func (s *Set) Signal(name string) (*Signal, *Skill, bool) {
	for _, sk := range s.Skills {
		for _, sg := range sk.Signals {
			if sg.Name == name {
				return sg, sk, true
			}
		}
	}
	return nil, nil, false
}

// checkSignal checks the signal a message carries against the protocol's
// signal tables: the sender's role may emit it, and each recipient's role
// may receive it.
func (s *Set) checkSignal(m *mailbox.Message, env Envelope) []Violation {
	v, ok := valueAt(m, "signal")
	if !ok || v == nil {
		return nil
	}
	name := scalarString(v)
	sg, sk, ok := s.Signal(name)
	if !ok {
		return nil
	}
	line := m.Header().Line("signal")
	if line == 0 {
		line = m.Payload().Line("signal")
	}
	var vs []Violation
	where := fmt.Sprintf("%s:%d", filepath.Base(sk.Source), sg.Line)
	if senders := sg.SignalSenders(); len(senders) > 0 && len(env.Sender.Roles) > 0 && !allows(senders, env.Sender.Roles) {
		vs = append(vs, Violation{Field: "signal", Line: line, Reason: fmt.Sprintf("%s (%s) may not emit %s: it is emitted by %s (%s)", env.Sender.Name, roleList(env.Sender.Roles), name, strings.Join(senders, " or "), where)})
	}
	if to := sg.SignalRecipients(); len(to) > 0 && !env.Broadcast {
		var refused []string
		for _, r := range env.Recipients {
			if len(r.Roles) > 0 && !allows(to, r.Roles) {
				refused = append(refused, fmt.Sprintf("%s (%s)", r.Name, roleList(r.Roles)))
			}
		}
		if len(refused) > 0 {
			vs = append(vs, Violation{Field: "signal", Line: line, Reason: fmt.Sprintf("%s is sent to %s, not to %s (%s)", name, strings.Join(to, " or "), strings.Join(refused, ", "), where)})
		}
	}
	return vs
}
