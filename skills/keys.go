package skills

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
)

// Misspelt keys. A key one letter off a field that decides what a
// message is or where it goes (tpye: for type:) would otherwise go
// unnoticed: the message is delivered as something else, an informal
// message rather than the [GM_TO_PLAYER] it names, to the protocol's
// recipients rather than the agent it names.

// misspeltOf are the reserved fields a key is taken for a misspelling of,
// what the message is without them, and what a value of theirs looks
// like: a key one edit from one of them is a misspelling only when its
// value would do there (ot: aria, for an agent aria; tpye: GM_TO_PLAYER),
// so that a field of the sender's own (threat: high, tape: 90 min) is
// left alone. id and from are not among them: the router writes them
// when they are missing.
var misspeltOf = []struct {
	field, without string
	fits           func(s *Set, m *mailbox.Message, key string, isAgent func(string) bool) bool
}{
	{"to", "it goes only where its type and the routes send it", namesAgents},
	{"cc", "it goes only where its type and the routes send it", namesAgents},
	{"type", "it is an informal message, checked against no type", namesOne(func(s *Set) []string { return s.TypeNames() })},
	{"signal", "it carries no signal", namesOne(func(s *Set) []string { return s.signalNames() })},
	{"thread", "it starts a thread of its own", isID},
	{"reply_to", "it answers no message", isID},
	{"request_id", "it answers no request", isID},
}

// namesOne returns a fits that reports whether the value of key is a
// name the protocol knows (of names), or a typo of one as a type's name
// is judged (one or two edits, case not counted: gm_to_player,
// GM_TO_PLAYR), brackets and quotes aside ("[GM_TO_PLAYER]"); a nil Set
// knows none.
func namesOne(names func(s *Set) []string) func(*Set, *mailbox.Message, string, func(string) bool) bool {
	return func(s *Set, m *mailbox.Message, key string, _ func(string) bool) bool {
		if s == nil {
			return false
		}
		v, _ := m.Payload().Get(key)
		v = strings.Trim(strings.TrimSpace(v), `[]"'`)
		all := names(s)
		if slices.Contains(all, v) {
			return true
		}
		return v != "" && spell.Nearest(v, all, typoEdits(v)) != ""
	}
}

// namesAgents reports whether the value of key is "*" or names agents
// only.
func namesAgents(_ *Set, m *mailbox.Message, key string, isAgent func(string) bool) bool {
	names, err := m.Payload().Names(key)
	if err != nil || len(names) == 0 {
		return false
	}
	for _, n := range names {
		if n != "*" && !isAgent(n) {
			return false
		}
	}
	return true
}

// MisspeltTo finds a key of m one edit from to (too, tp, t) whose value
// names agents only, as a misspelt to: would (see namesAgents); "" when
// there is none. MisspeltKeys leaves such a key alone, a word of its own
// while the message goes somewhere; for a message that goes nowhere for
// want of a to:, it is what was meant.
func MisspeltTo(m *mailbox.Message, isAgent func(string) bool) string {
	for _, key := range m.Payload().Keys() {
		if key == "to" || key == "cc" || spell.Distance(strings.ToLower(key), "to") != 1 {
			continue
		}
		if namesAgents(nil, m, key, isAgent) {
			return key
		}
	}
	return ""
}

// isID reports whether the value of key is a message id.
func isID(_ *Set, m *mailbox.Message, key string, _ func(string) bool) bool {
	v, _ := m.Payload().Get(key)
	_, _, err := mailbox.ParseID(v)
	return err == nil
}

// declared reports whether key is the name of a field of any type of the
// protocol (top level: "party" for "party[].name"). A nil Set (a
// workspace of no skills) declares none.
func (s *Set) declared(key string) bool {
	return s != nil && s.fields[key]
}

// MisspeltKeys finds the keys of m that are misspellings of a field
// parley reserves (to, cc, type, signal, thread, reply_to, request_id)
// which m does not have: one edit away (a letter added, dropped or
// changed, two swapped, or only the case), the name of no field of the
// protocol's types, and holding what that field would (see misspeltOf);
// isAgent says which names are agents. It returns a violation for each,
// at the key's line, in the order they are written (a message with tpye:
// and sigal: is told of both). A nil Set is a workspace of no skills: a
// key is taken for to or cc there, or for a field holding an id.
func (s *Set) MisspeltKeys(m *mailbox.Message, isAgent func(string) bool) []Violation {
	var targets []string
	for _, r := range misspeltOf {
		if !m.Header().Has(r.field) && !m.Payload().Has(r.field) {
			targets = append(targets, r.field)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	var vs []Violation
	for _, key := range m.Payload().Keys() {
		if mailbox.IsReserved(key) || s.declared(key) {
			continue
		}
		near := spell.Nearest(key, targets, 1)
		if near == "" || len(near) <= 2 && !sameLetters(key, near) {
			// to and cc: only their two letters swapped or in
			// another case (ot:, To:); a letter more makes a word of
			// its own (toe:, top:, acc:).
			continue
		}
		for _, r := range misspeltOf {
			if r.field == near && r.fits(s, m, key, isAgent) {
				vs = append(vs, Violation{Field: key, Line: m.Payload().Line(key), Meant: near,
					Reason: fmt.Sprintf("no field of this workspace's protocol is called %s; did you mean %s? (without %s: %s)", key, near, near, r.without)})
				break
			}
		}
	}
	return vs
}

// misspeltField finds a key of m that is a misspelling of the field
// want of type t, which m lacks: one edit from a name of up to five
// letters, two from a longer one (as a type's name is judged), and
// neither reserved nor a field of t. It returns the key and its line;
// "" when there is none.
func misspeltField(m *mailbox.Message, t *Type, want string) (key string, line int) {
	edits := typoEdits(want)
	for _, k := range m.Payload().Keys() {
		if mailbox.IsReserved(k) {
			continue
		}
		if _, ok := t.Field(k); ok {
			continue
		}
		if spell.Nearest(k, []string{want}, edits) == want {
			return k, m.Payload().Line(k)
		}
	}
	return "", 0
}

// sameLetters reports whether a and b hold the same letters, case not
// counted, in any order.
func sameLetters(a, b string) bool {
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
