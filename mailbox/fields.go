package mailbox

import (
	"errors"
	"strings"

	"gopkg.in/yaml.v3"
)

// Fields is one view of a message's fields: its header, which parley
// reads to know who sends the message, to whom, and what it is (id, from,
// to, cc, type, signal, thread, reply_to, ...), or its payload, the fields
// of the protocol the message follows.
//
// The two differ only for a tag-first message ("[PLAYER_TO_GM]" on line
// one): its payload is the fields written after the tag line, and its
// header the envelope parley reads or writes around them (type from the
// tag; id, to and cc lifted from the fields as addressing). A protocol
// field may share a name with a header field there without clashing:
// "type: VETO" in a [PLAYER_TO_GM] is Payload().Get("type"), while
// Header().Get("type") is PLAYER_TO_GM. In a frontmatter message header and
// payload are the same fields, side by side.
type Fields struct {
	m       *Message
	payload bool
}

// Header returns the view of the message's header: the envelope.
func (m *Message) Header() Fields { return Fields{m: m} }

// Payload returns the view of the protocol's fields: those after the tag
// line of a tag-first message, the header of any other.
func (m *Message) Payload() Fields { return Fields{m: m, payload: true} }

// For returns the view a protocol's field is read from: the payload;
// except that a from, to or cc the payload leaves out is the header's —
// the message's sender and recipients stand for the protocol's (a
// [NARRATOR_REQUEST] needs a to:, and the router fills in the header's).
func (m *Message) For(key string) Fields {
	p := m.Payload()
	if !p.Has(key) && (key == "from" || key == "to" || key == "cc") {
		return m.Header()
	}
	return p
}

// mapping returns the mapping node the view reads, and the file line of
// its first line.
func (f Fields) mapping() (*yaml.Node, int) {
	if f.payload && f.m.tagText != nil {
		return f.m.payload, f.m.payloadFirst
	}
	return f.m.header, f.m.firstLine
}

func (f Fields) lookup(key string) (*yaml.Node, bool) {
	n, _ := f.mapping()
	return lookupIn(n, key)
}

// Has reports whether the field is there.
func (f Fields) Has(key string) bool {
	_, ok := f.lookup(key)
	return ok
}

// Get returns a scalar field as a string. ok is false when the field is
// absent or is not a scalar (a list or a mapping); a null value gives "".
func (f Fields) Get(key string) (value string, ok bool) {
	return scalarValue(f.lookup(key))
}

// Value returns a field decoded into a Go value (string, bool, int,
// float64, time.Time for a timestamp, []any, map[string]any), or nil when
// it is absent.
func (f Fields) Value(key string) any {
	n, ok := f.lookup(key)
	if !ok {
		return nil
	}
	return decoded(n)
}

// Names returns a field that holds one name, several separated by
// commas, or a list of names (to, cc). An absent or null field gives nil.
// Any other value is a *ParseError naming the field and its line.
func (f Fields) Names(key string) ([]string, error) {
	n, found := f.lookup(key)
	if !found || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		var out []string
		for _, part := range strings.Split(n.Value, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, f.namesError(key)
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, f.namesError(key)
}

func (f Fields) namesError(key string) error {
	return &ParseError{Line: f.Line(key), Field: key, Err: errors.New("must be a name or a list of names")}
}

// Keys returns the keys in file order; keys parley added come where
// Bytes writes them.
func (f Fields) Keys() []string {
	n, _ := f.mapping()
	if n == nil {
		return nil
	}
	return keysOf(n)
}

// Line returns the file line of a field, or 0 when it is absent or was
// added after parsing. The header of a tag-first message places its type
// on the tag line, and the fields lifted from the payload (id, to, cc) on
// their lines there.
func (f Fields) Line(key string) int {
	n, first := f.mapping()
	if l := keyLineIn(n, key, first); l > 0 || f.payload || f.m.tagText == nil {
		return l
	}
	if key == "type" {
		return f.m.payloadFirst - 1 // the tag line says the type
	}
	return keyLineIn(f.m.payload, key, f.m.payloadFirst)
}

// Text returns a field as a person would read it: a scalar as its value,
// a list of scalars as "a, b", anything else as indented YAML on the
// lines below. An absent field gives "".
func (f Fields) Text(key string) string {
	n, ok := f.lookup(key)
	if !ok {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		parts := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				parts = nil
				break
			}
			parts = append(parts, c.Value)
		}
		if parts != nil {
			return strings.Join(parts, ", ")
		}
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return n.Value
	}
	return "\n  " + strings.ReplaceAll(strings.TrimRight(string(b), "\n"), "\n", "\n  ")
}

// lookupIn returns the value node of key in a mapping.
func lookupIn(mapping *yaml.Node, key string) (*yaml.Node, bool) {
	if mapping == nil {
		return nil, false
	}
	c := mapping.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == key {
			return c[i+1], true
		}
	}
	return nil, false
}

func decoded(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

func scalarValue(n *yaml.Node, found bool) (string, bool) {
	if !found || n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Tag == "!!null" {
		return "", true
	}
	return n.Value, true
}

func keysOf(mapping *yaml.Node) []string {
	keys := make([]string, 0, len(mapping.Content)/2)
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		keys = append(keys, mapping.Content[i].Value)
	}
	return keys
}

func keyLineIn(mapping *yaml.Node, key string, firstLine int) int {
	if mapping == nil {
		return 0
	}
	c := mapping.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == key && c[i].Line > 0 {
			return c[i].Line + firstLine - 1
		}
	}
	return 0
}

// Clone returns a copy of the message whose header can be changed
// without changing m: setting or deleting a header field of the copy
// leaves m as it was. Field values and the body are shared, and neither
// copy changes them in place.
func (m *Message) Clone() *Message {
	c := *m
	h := *m.header
	h.Content = append([]*yaml.Node(nil), m.header.Content...)
	c.header = &h
	c.added = append([]string(nil), m.added...)
	return &c
}
