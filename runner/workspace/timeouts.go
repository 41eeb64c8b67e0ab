package workspace

import (
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
