package runner

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/mailbox"
)

// Timeout is a liveness policy: an agent sent a matching message is
// expected to say something within After; if it does not, it is nudged
// with a configured message, and if it still does not, it is marked
// unresponsive.
//
//	timeouts:
//	  - match: {type: GM_TO_PLAYER}   # type, to (agent names), to_role; all optional
//	    after: 120s
//	    nudge:                        # sent by the one waiting, to the silent agent
//	      type: CONTEXT_REFRESH
//	      fields: {campaign: the-rot-beneath}
//	      body: Are you still with us?
type Timeout struct {
	Type   []string
	To     []string
	ToRole []string
	After  time.Duration
	Nudge  *Nudge
	Line   int
	Key    string
}

// Nudge is the message a Timeout sends.
type Nudge struct {
	Type   string
	Fields map[string]string
	Body   string
}

func parseTimeout(n *yaml.Node, key string, bad badFunc) (Timeout, error) {
	t := Timeout{Line: n.Line, Key: key}
	err := eachKey(n, key, bad, map[string]func(*yaml.Node) error{
		"match": func(v *yaml.Node) error {
			return eachKey(v, key+".match", bad, map[string]func(*yaml.Node) error{
				"type":    func(v *yaml.Node) error { return wordList(v, key+".match.type", &t.Type, bad) },
				"to":      func(v *yaml.Node) error { return nameList(v, key+".match.to", &t.To, bad) },
				"to_role": func(v *yaml.Node) error { return nameList(v, key+".match.to_role", &t.ToRole, bad) },
			})
		},
		"after": func(v *yaml.Node) error { return duration(v, key+".after", &t.After, bad) },
		"nudge": func(v *yaml.Node) error {
			t.Nudge = &Nudge{Fields: map[string]string{}}
			return eachKey(v, key+".nudge", bad, map[string]func(*yaml.Node) error{
				"type": func(v *yaml.Node) error { return scalar(v, key+".nudge.type", &t.Nudge.Type, bad) },
				"body": func(v *yaml.Node) error { return scalar(v, key+".nudge.body", &t.Nudge.Body, bad) },
				"fields": func(v *yaml.Node) error {
					if v.Kind != yaml.MappingNode {
						return bad(v, key+".nudge.fields", "expected field: value pairs")
					}
					for i := 0; i+1 < len(v.Content); i += 2 {
						t.Nudge.Fields[v.Content[i].Value] = v.Content[i+1].Value
					}
					return nil
				},
			})
		},
	})
	if err != nil {
		return t, err
	}
	for i, ty := range t.Type {
		t.Type[i] = strings.Trim(ty, "[]")
	}
	if t.After <= 0 {
		return t, bad(n, key+".after", "missing: say how long to wait (after: 120s)")
	}
	return t, nil
}

// expectation is a reply the runner waits for.
type expectation struct {
	agent    string // who should answer
	waiting  string // who sent the message
	message  string // its id
	policy   *Timeout
	deadline time.Time
	nudged   bool
}

// expectReplies notes the replies a delivered message calls for, by the
// workspace's timeouts.
func (r *Runner) expectReplies(sender string, m *mailbox.Message, recipients []string) {
	r.clearExpectations(sender) // whoever speaks is alive
	typ := messageType(m)
	id, _ := m.Get("id")
	for i := range r.ws.Config.Timeouts {
		p := &r.ws.Config.Timeouts[i]
		if len(p.Type) > 0 && !contains(p.Type, typ) {
			continue
		}
		for _, to := range recipients {
			if len(p.To) > 0 && !contains(p.To, to) {
				continue
			}
			if len(p.ToRole) > 0 && !overlaps(p.ToRole, r.ws.Roles(to)) {
				continue
			}
			r.expected = append(r.expected, &expectation{agent: to, waiting: sender, message: id, policy: p, deadline: r.opts.Now().Add(p.After)})
		}
	}
}

func (r *Runner) clearExpectations(agent string) {
	kept := r.expected[:0]
	for _, e := range r.expected {
		if e.agent != agent {
			kept = append(kept, e)
		}
	}
	r.expected = kept
}

// nextDeadline returns when the earliest awaited reply is due (zero when
// none is).
func (r *Runner) nextDeadline() time.Time {
	var next time.Time
	for _, e := range r.expected {
		if next.IsZero() || e.deadline.Before(next) {
			next = e.deadline
		}
	}
	return next
}

// checkDeadlines nudges agents whose reply is late, and marks unresponsive
// those that stayed silent after the nudge.
func (r *Runner) checkDeadlines() {
	now := r.opts.Now()
	kept := r.expected[:0]
	for _, e := range r.expected {
		if now.Before(e.deadline) {
			kept = append(kept, e)
			continue
		}
		if !e.nudged && e.policy.Nudge != nil {
			if err := r.nudge(e); err != nil {
				r.log.Error("nudging", "agent", e.agent, "err", err)
			}
			e.nudged = true
			e.deadline = now.Add(e.policy.After)
			kept = append(kept, e)
			continue
		}
		note := fmt.Sprintf("no answer to %s from %s within %v", e.message, e.waiting, e.policy.After)
		if e.nudged {
			note += ", nor after a nudge"
		}
		r.state.set(e.agent, StateUnresponsive, e.message)
		r.state.note(e.agent, note)
		r.log.Warn("agent unresponsive", "agent", e.agent, "message", e.message, "policy", e.policy.Key)
	}
	r.expected = kept
}

// nudge sends a policy's nudge message from the one waiting to the silent
// agent, through the bus.
func (r *Runner) nudge(e *expectation) error {
	n := e.policy.Nudge
	body := n.Body
	if body == "" {
		body = fmt.Sprintf("No answer yet to %s.", e.message)
	}
	m := mailbox.New([]byte(strings.TrimRight(body, "\n") + "\n"))
	m.Set("id", (&mailbox.IDs{Now: r.opts.Now}).New(e.waiting))
	m.Set("from", e.waiting)
	m.Set("to", e.agent)
	if n.Type != "" {
		m.Set("type", n.Type)
	}
	m.Set("reply_to", e.message)
	for k, v := range n.Fields {
		m.SetValue(k, v)
	}
	id, _ := m.Get("id")
	r.nudges[id] = fmt.Sprintf("a nudge: %s did not answer %s within %v", e.agent, e.message, e.policy.After)
	_, err := r.agents[e.waiting].Send(m)
	r.kickRouter()
	r.log.Info("nudged", "agent", e.agent, "by", e.waiting, "about", e.message)
	return err
}
