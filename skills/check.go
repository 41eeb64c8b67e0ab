package skills

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
)

// Set is the protocol a workspace speaks: the types of the skills it uses.
type Set struct {
	Skills []*Skill
	types  map[string]*Type
	owner  map[string]*Skill
	fields map[string]bool // the top-level names of every type's fields (see declared)
}

// NewSet puts skills together. Two skills defining the same type is an
// error: a message of that type would not know which one it follows.
func NewSet(skills ...*Skill) (*Set, error) {
	s := &Set{Skills: skills, types: map[string]*Type{}, owner: map[string]*Skill{}, fields: map[string]bool{}}
	for _, sk := range skills {
		for _, t := range sk.Types {
			for _, f := range t.Fields {
				s.fields[topName(f.Name)] = true
			}
			if other, ok := s.owner[t.Name]; ok {
				return nil, fmt.Errorf("skills %s and %s both define %s: use one of them", other.Name, sk.Name, displayName(t.Name, t.Tagged))
			}
			s.types[t.Name] = t
			s.owner[t.Name] = sk
		}
	}
	return s, nil
}

// Type returns the type with this name, and the skill that defines it.
func (s *Set) Type(name string) (*Type, *Skill, bool) {
	t, ok := s.types[name]
	return t, s.owner[name], ok
}

// TypeNames returns the names of every type, sorted.
func (s *Set) TypeNames() []string {
	names := make([]string, 0, len(s.types))
	for n := range s.types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UnknownType returns the verdict on a message whose type the protocol
// does not define (as Check gives it), and false for a message of no type
// or of a type the protocol defines.
func (s *Set) UnknownType(m *mailbox.Message, strict bool) (Violation, bool) {
	name, _ := m.Header().Get("type")
	if name == "" {
		return Violation{}, false
	}
	if _, _, ok := s.Type(name); ok {
		return Violation{}, false
	}
	return s.unknownType(m, name, strict), true
}

// unknownType is the verdict on a message whose type the protocol does not
// define. One or two edits from a known type is a typo, refused with the
// type meant; a tag-first message with another tag is informal, delivered
// with a warning unless strict: true; a type: field must name a type.
func (s *Set) unknownType(m *mailbox.Message, name string, strict bool) Violation {
	v := Violation{Field: "type", Line: m.Header().Line("type")}
	written, show := fmt.Sprintf("%q", name), func(n string) string { return fmt.Sprintf("%q", n) }
	if m.Tag != "" {
		written, show = "["+name+"]", func(n string) string { return "[" + n + "]" }
	}
	switch near := spell.Nearest(name, s.TypeNames(), typoEdits(name)); {
	case near != "":
		v.Reason = fmt.Sprintf("%s is no type of this workspace's protocol; did you mean %s?", written, show(near))
	case m.Tag != "" && strict:
		v.Reason = fmt.Sprintf("%s is no type of this workspace's protocol, and strict: true refuses informal messages", written)
	case m.Tag != "":
		v.Reason = fmt.Sprintf("%s is no type of this workspace's protocol: delivered as an informal message", written)
		v.Warning = true
	default:
		v.Reason = fmt.Sprintf("%s is not a message type of this workspace's protocol (%s); leave type out for an informal message", written, strings.Join(s.TypeNames(), ", "))
	}
	return v
}

// typoEdits is how many edits a name written may be from the one meant
// and still be taken for a typo of it: one for a short name, two from six
// letters on.
func typoEdits(name string) int {
	if len(name) >= 6 {
		return 2
	}
	return 1
}

// Party is an agent a message comes from or goes to, with its roles.
type Party struct {
	Name  string
	Roles []string
	// Named says its one role is its name: the workspace gives it none.
	Named bool
}

// roles says a party's roles in a refusal: "role player", or, for one
// parley.yaml gives none, "role gm, from its name".
func (p Party) roles() string {
	if p.Named {
		return "role " + p.Name + ", from its name"
	}
	return roleList(p.Roles)
}

// Envelope is what the router knows of a message besides its text.
type Envelope struct {
	Sender     Party
	Recipients []Party
	// Broadcast is set when the message is addressed to "*".
	Broadcast bool
	// Phase is the session's phase (1, 2, ...); 0 when the workspace
	// does not say, and phases are not checked.
	Phase int
	// Strict makes deprecated and wrong-phase messages, and tag-first
	// messages with an unknown tag, violations rather than warnings.
	Strict bool
}

// Violation is a way a message breaks its protocol. A warning does not
// stop the message; anything else refuses it.
type Violation struct {
	Field   string `json:"field,omitempty"`
	Line    int    `json:"line,omitempty"`
	Reason  string `json:"reason"`
	Warning bool   `json:"warning,omitempty"`
	// Meant is, for a key taken for a misspelling of a field parley
	// reserves (MisspeltKeys) or of a field of the message's type, that
	// field: type, for tpye; summary, for sumary.
	Meant string `json:"meant,omitempty"`
}

func (v Violation) Error() string {
	if v.Field == "" {
		return v.Reason
	}
	return v.Field + ": " + v.Reason
}

// Check checks a message against the protocol: its type is known (a
// tag-first message with an unknown tag is informal, and passes with a
// warning), required fields are there, no key is a misspelling of a
// field of its type that it lacks (sumary: for summary), enumerated
// values are exact, the sender's and recipients' roles may send and
// receive it, a structured request is not broadcast, hard rules hold,
// and its phase is right; and the signal it carries, typed or informal,
// is one the sender may emit to those recipients, by the protocol's
// signal tables. It returns the message's type (nil for an informal
// message) and every violation found.
func (s *Set) Check(m *mailbox.Message, env Envelope) (*Type, []Violation) {
	signals := s.checkSignal(m, env)
	name, _ := m.Header().Get("type")
	if name == "" {
		return nil, signals
	}
	t, _, ok := s.Type(name)
	if !ok {
		return nil, append([]Violation{s.unknownType(m, name, env.Strict)}, signals...)
	}
	vs := signals
	// add reports a violation about the message (its type, sender,
	// recipients) at the line of that header field.
	add := func(field, reason string, warning bool) {
		vs = append(vs, Violation{Field: field, Line: m.Header().Line(field), Reason: reason, Warning: warning})
	}
	// addField reports a violation about a protocol field at its line.
	addField := func(field, reason string) {
		vs = append(vs, Violation{Field: field, Line: m.Payload().Line(topName(field)), Reason: reason})
	}
	get := func(path string) (any, bool) { return valueAt(m, path) }
	label := displayName(t.Name, t.Tagged)
	var said []string           // keys a required field's refusal names
	shaped := map[string]bool{} // parents of nested fields whose shape was checked

	for _, f := range t.Fields {
		if f.When != nil && !f.When.holds(get) {
			continue
		}
		vals, present := valuesAt(m, f.Name)
		// A tag-first protocol's own type field (ACTION, VETO, ...) is
		// written after the tag line: in a frontmatter header, type: is
		// the message's type, never the protocol's field.
		envelopeType := f.Name == "type" && t.Tagged && m.Tag == ""
		if envelopeType {
			vals, present = nil, false
		}
		parent, key, nested := cutLast(f.Name)
		if nested && !shaped[parent] {
			shaped[parent] = true
			if top, why := shapeProblem(m, parent, key); why != "" {
				addField(top, why)
				continue
			}
		}
		if nested {
			// A nested field is required in every element of its parent,
			// when the parent is there.
			if f.Required {
				pvs := parentValues(m, parent)
				for i, pv := range pvs {
					if mv, ok := pv.(map[string]any); ok {
						if _, ok := mv[key]; !ok {
							which := "an element"
							if strings.HasSuffix(parent, "[]") && len(pvs) > 1 {
								which = fmt.Sprintf("element %d (of %d)", i+1, len(pvs))
							}
							addField(f.Name, fmt.Sprintf("missing in %s of %s: %s requires it", which, strings.TrimSuffix(parent, "[]"), label))
							break
						}
					}
				}
			}
			present = true
		}
		if f.Required && !nested && present && allEmpty(vals) {
			addField(f.Name, fmt.Sprintf("empty: %s requires a value", label))
			continue
		}
		if f.Required && !present {
			why := missing(t, f, envelopeType)
			if k, line := misspeltField(m, t, f.Name); k != "" && !nested {
				// Said at the line of the key that looks meant for it.
				at := k
				if line > 0 {
					at = fmt.Sprintf("%s on line %d", k, line)
				}
				vs = append(vs, Violation{Field: f.Name, Line: line, Reason: fmt.Sprintf("%s; %s is no field of %s: did you mean %s?", why, at, label, f.Name)})
				said = append(said, k)
				continue
			}
			addField(f.Name, why)
			continue
		}
		if len(f.Enum) == 0 || f.Name == "to" || f.Name == "cc" || f.Name == "from" {
			// Addressing is checked as names and roles, not as values.
			continue
		}
		for _, v := range vals {
			if v == nil {
				continue
			}
			got := scalarString(v)
			if !contains(f.Enum, got) {
				why := fmt.Sprintf("%q is not one of %s", got, strings.Join(f.Enum, ", "))
				if close := caseMatch(f.Enum, got); close != "" {
					why += fmt.Sprintf(" (values are exact: %q, not %q)", close, got)
				}
				addField(f.Name, why)
			}
		}
	}

	vs = append(vs, misspeltFields(m, t, said)...)
	for _, name := range []string{"scene_number", "scene_slug"} {
		if v, ok := get(name); ok && v != nil {
			if why := ShapeProblem(name, v); why != "" {
				addField(name, why)
			}
		}
	}

	if why := t.SenderRefusal(env.Sender); why != "" {
		add("from", why, false)
	}
	if len(t.Recipients) > 0 && !allows(t.Recipients, []string{"*"}) {
		var refused []string
		for _, r := range env.Recipients {
			if len(r.Roles) > 0 && !allows(t.Recipients, r.Roles) {
				refused = append(refused, fmt.Sprintf("%s (%s)", r.Name, r.roles()))
			}
		}
		if len(refused) > 0 {
			add("to", fmt.Sprintf("%s may not receive %s: it goes to %s", strings.Join(refused, ", "), label, strings.Join(t.Recipients, " or ")), false)
		}
	}
	if t.NoBroadcast && env.Broadcast {
		add("to", fmt.Sprintf("%s is a structured request and cannot be broadcast: name its recipient", label), false)
	}
	for _, r := range t.Rules {
		for _, c := range append(append([]Condition(nil), r.If...), r.Then) {
			if c.Op == "==" || c.Op == "!=" {
				continue
			}
			if v, ok := get(c.Path); ok && v != nil {
				if _, err := strconv.ParseFloat(scalarString(v), 64); err != nil {
					addField(c.Path, fmt.Sprintf("%q is not a number, and a hard rule of %s compares it (%s)", scalarString(v), label, c))
				}
			}
		}
		if r.Then.holds(get) {
			continue
		}
		for _, c := range r.If {
			if c.holds(get) {
				v, _ := get(c.Path)
				got, _ := get(r.Then.Path)
				addField(r.Then.Path, fmt.Sprintf("hard rule of %s: %s (here %s is %s and %s is %q)", label, r.Text, c.Path, scalarString(v), r.Then.Path, scalarString(got)))
				break
			}
		}
	}
	if d := t.Deprecated; d != nil {
		since := phaseNumber(d.Deprecated)
		if env.Phase == 0 || since == 0 || env.Phase >= since {
			why := fmt.Sprintf("%s is deprecated since %s", label, d.Deprecated)
			if d.Replacement != "" {
				why += ": " + d.Replacement
			}
			add("type", why, !env.Strict)
		}
	}
	if env.Phase > 0 && t.Phase != "" && !inPhase(t.Phase, env.Phase) && t.Deprecated == nil {
		add("type", fmt.Sprintf("%s belongs to phase %s, and the session is in phase %d", label, t.Phase, env.Phase), !env.Strict)
	}
	return t, vs
}

// missing says why a required field that is absent is needed, and what
// it may hold. envelopeType is set for a tag-first protocol's type field
// looked for in a frontmatter message, which cannot hold it.
func missing(t *Type, f *Field, envelopeType bool) string {
	label := displayName(t.Name, t.Tagged)
	why := "missing: " + label + " requires it"
	if len(f.Enum) > 0 {
		why = "missing: " + label + " needs one of " + strings.Join(f.Enum, ", ")
	}
	if f.When != nil {
		why += " when " + f.When.String()
	}
	switch {
	case envelopeType:
		why += " (in a frontmatter header, type: is the message's type: write the message tag-first, " + label + " on line one, then the type: line)"
	case f.Description != "" && len(f.Enum) == 0:
		why += " (" + f.Description + ")"
	}
	return why
}

// SenderRefusal says why an agent may not send messages of type t: its
// roles are none of those the protocol lets send it. It returns "" when
// it may, or when the agent's roles are not known.
func (t *Type) SenderRefusal(sender Party) string {
	if len(t.Senders) == 0 || len(sender.Roles) == 0 || allows(t.Senders, sender.Roles) {
		return ""
	}
	return fmt.Sprintf("%s (%s) may not send %s: it is sent by %s", sender.Name, sender.roles(), displayName(t.Name, t.Tagged), strings.Join(t.Senders, " or "))
}

// DefaultRecipients says where a message of type t goes when it names no
// recipient: the roles it is sent to, and whether to every agent of those
// roles (all) or to the one agent that has them. Broadcast types give "*".
func (t *Type) DefaultRecipients() (roles []string, all bool) {
	return t.Recipients, t.AllRecipients || t.IsBroadcast()
}

// allEmpty reports whether every value is null or an empty string.
func allEmpty(vals []any) bool {
	for _, v := range vals {
		if s, ok := v.(string); v != nil && (!ok || strings.TrimSpace(s) != "") {
			return false
		}
	}
	return true
}

// shapeProblem says what is wrong with the value at a parent path of a
// nested field (key, one of its fields) when it is not a list of fields
// ("a[]") or fields ("a"), as the path says it is: items: hello where
// the protocol has items[].name. It returns the path to report, and "" when
// the value is absent, empty, or of the right shape.
func shapeProblem(m *mailbox.Message, parent, key string) (path, why string) {
	path = strings.TrimSuffix(parent, "[]")
	vals, ok := valuesAt(m, path)
	if !ok {
		return "", ""
	}
	if !strings.HasSuffix(parent, "[]") {
		for _, v := range vals {
			if _, ok := v.(map[string]any); v != nil && !ok {
				return path, fmt.Sprintf("expected fields (%s.%s: ...), not %s", path, key, describeValue(v))
			}
		}
		return "", ""
	}
	for _, v := range vals {
		l, ok := v.([]any)
		if v != nil && !ok {
			return path, fmt.Sprintf("expected a list (- %s: ...), not %s", key, describeValue(v))
		}
		for i, e := range l {
			if _, ok := e.(map[string]any); !ok {
				return path, fmt.Sprintf("element %d (of %d) is %s: each element holds fields (- %s: ...)", i+1, len(l), describeValue(e), key)
			}
		}
	}
	return "", ""
}

// describeValue names what a value is, for a message about its shape.
func describeValue(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "fields"
	case []any:
		return "a list"
	case nil:
		return "empty"
	default:
		return fmt.Sprintf("%q", scalarString(v))
	}
}

// cutLast splits a nested path at its last dot: "a[].b" gives "a[]", "b".
func cutLast(path string) (parent, key string, ok bool) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", path, false
	}
	return path[:i], path[i+1:], true
}

// parentValues returns the values at a parent path, each element of a
// list when it ends in "[]".
func parentValues(m *mailbox.Message, parent string) []any {
	list := strings.HasSuffix(parent, "[]")
	vals, ok := valuesAt(m, strings.TrimSuffix(parent, "[]"))
	if !ok {
		return nil
	}
	if list {
		return elements(vals)
	}
	return vals
}

// valueAt returns the value at a dotted path of a message's fields.
func valueAt(m *mailbox.Message, path string) (any, bool) {
	vals, ok := valuesAt(m, path)
	if !ok || len(vals) == 0 {
		return nil, false
	}
	return vals[0], true
}

// valuesAt returns every value at a path: "a.b" in a map, "a[].b" in each
// element of a list, "a.*" each value of a map. present is false when the
// path's first part is absent.
func valuesAt(m *mailbox.Message, path string) (vals []any, present bool) {
	parts := splitPath(path)
	fields := m.For(parts[0].key)
	root := fields.Value(parts[0].key)
	if root == nil {
		if present = fields.Has(parts[0].key); !present {
			return nil, false
		}
	}
	vals = []any{root}
	if parts[0].list {
		vals = elements(vals)
	}
	for _, p := range parts[1:] {
		var next []any
		for _, v := range vals {
			mv, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if p.key == "*" {
				for _, k := range sortedKeys(mv) {
					next = append(next, mv[k])
				}
				continue
			}
			if x, ok := mv[p.key]; ok {
				next = append(next, x)
			}
		}
		if p.list {
			next = elements(next)
		}
		vals = next
	}
	return vals, true
}

type pathPart struct {
	key  string
	list bool
}

func splitPath(path string) []pathPart {
	var out []pathPart
	for _, seg := range strings.Split(path, ".") {
		p := pathPart{key: seg}
		if k, ok := strings.CutSuffix(seg, "[]"); ok {
			p = pathPart{key: k, list: true}
		}
		out = append(out, p)
	}
	return out
}

func elements(vals []any) []any {
	var out []any
	for _, v := range vals {
		if l, ok := v.([]any); ok {
			out = append(out, l...)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// allows reports whether any of roles is one of allowed ("any" and "*"
// allow every role).
func allows(allowed, roles []string) bool {
	for _, a := range allowed {
		if a == "any" || a == "*" {
			return true
		}
		if contains(roles, a) {
			return true
		}
	}
	return false
}

func roleList(roles []string) string {
	if len(roles) == 1 {
		return "role " + roles[0]
	}
	return "roles " + strings.Join(roles, ", ")
}

// caseMatch returns the allowed value that differs from got only in case.
func caseMatch(allowed []string, got string) string {
	for _, a := range allowed {
		if strings.EqualFold(a, got) {
			return a
		}
	}
	return ""
}

// phaseNumber reads the number in "Phase 2", "2+" or "2".
func phaseNumber(s string) int {
	m := phaseRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// inPhase reports whether a type of phase spec ("1+", "1 only") may be
// sent in phase n.
func inPhase(spec string, n int) bool {
	p := phaseNumber(spec)
	if strings.HasSuffix(spec, "+") {
		return n >= p
	}
	return n == p
}

// fieldShapes holds the fields whose value becomes a number or a file
// name wherever a message carries them, whatever its type: a scene's
// number and slug name the scene file the scribe writes
// (scenes/NNN-slug.md). Each returns why a value will not do, or "".
var fieldShapes = map[string]func(v any) string{
	"scene_number": func(v any) string {
		s, ok := scalarText(v)
		if !ok {
			return fmt.Sprintf("%s is not a scene number: write one number, like 005", shapeOf(v))
		}
		s = strings.TrimSpace(s)
		if n, err := strconv.Atoi(s); err != nil || n < 1 || strings.TrimLeft(s, "0123456789") != "" {
			return fmt.Sprintf("%q is not a scene number: write a whole number from 1, like 005", s)
		}
		return ""
	},
	"scene_slug": func(v any) string {
		s, ok := scalarText(v)
		if !ok {
			return fmt.Sprintf("%s is not a scene slug: write lower-case words joined by -, like the-warehouse-heist", shapeOf(v))
		}
		if strings.ContainsAny(s, "/\\") || strings.Contains(s, "..") {
			return fmt.Sprintf("%q is not a scene slug: it names a scene file, and holds no path (/, \\, ..): write lower-case words joined by -, like the-warehouse-heist", s)
		}
		// As the scribe names the file (campaigns.Kebab): something of
		// it, and not more than a file name holds.
		switch k := campaigns.Kebab(s); {
		case strings.TrimSpace(s) != "" && k == "":
			return fmt.Sprintf("%q is not a scene slug: it has no letter or digit to name the scene file by: write lower-case words joined by -, like the-warehouse-heist", s)
		case len(k) > maxSlug:
			return fmt.Sprintf("a scene slug of %d characters is too long: it names the scene file; write a few words joined by -, at most %d characters", len(k), maxSlug)
		}
		return ""
	},
}

// ShapeProblem says why value will not do for the field name, whose value
// becomes a number or a file name wherever a message carries it
// (scene_number, scene_slug); "" when it will, or the field has no such
// rule. The check refuses a typed message so; the scribe, a narrator's
// prose of no type, by the same rule.
func ShapeProblem(name string, value any) string {
	if shape, ok := fieldShapes[name]; ok && value != nil {
		return shape(value)
	}
	return ""
}

// maxSlug is the longest scene slug: a few words, well inside a file
// name's 255 bytes.
const maxSlug = 100

// shapeOf says what a value that should be one word or number is.
func shapeOf(v any) string {
	if _, ok := v.(map[string]any); ok {
		return "a map"
	}
	return describeValue(v)
}

// scalarText returns a scalar value as text; ok is false for a list or
// a map.
func scalarText(v any) (string, bool) {
	switch v.(type) {
	case []any, map[string]any:
		return "", false
	}
	return scalarString(v), true
}
