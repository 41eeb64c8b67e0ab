package workspace

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
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
	// typeLines are the lines of the types of Type, one each, for an
	// error about a type.
	typeLines []int
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
				"type": func(v *yaml.Node) error {
					t.typeLines = append(t.typeLines, wordLines(v)...)
					return wordList(v, key+".match.type", &t.Type, bad)
				},
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
						if twice, err := given(v, i, key+".nudge.fields", bad); twice {
							if err != nil {
								return err
							}
							continue
						}
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
		return t, bad(n, key+".after", "%w: say how long to wait (after: 120s)", ErrMissing)
	}
	return t, nil
}

// Rule says all a rule of timeouts: is, in one line, whatever its
// place in the list: a reply awaited by it is awaited by the same rule
// after a restart only when the line is the same (a rule edited, or one
// put above it, changes what its place names, not this).
func (t *Timeout) Rule() string {
	var b strings.Builder
	fmt.Fprintf(&b, "type=%s to=%s to_role=%s after=%s", strings.Join(t.Type, ","), strings.Join(t.To, ","), strings.Join(t.ToRole, ","), t.After)
	if n := t.Nudge; n != nil {
		keys := make([]string, 0, len(n.Fields))
		for k := range n.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintf(&b, " nudge type=%q body=%q", n.Type, n.Body)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%q", k, n.Fields[k])
		}
	}
	return b.String()
}

// RuleOf returns the rule of timeouts: a reply was awaited by, if it is
// still there, the same (Rule; by its place, Key, for a wait that does
// not say what its rule was), or nil.
func (w *Workspace) RuleOf(a Awaited) *Timeout {
	for i := range w.Config.Timeouts {
		p := &w.Config.Timeouts[i]
		if a.Rule != "" && p.Rule() == a.Rule || a.Rule == "" && p.Key == a.Policy {
			return p
		}
	}
	return nil
}
