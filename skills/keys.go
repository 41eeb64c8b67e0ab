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

// misspelt is a reserved field a key may be a misspelling of (see
// misspeltOf).
type misspelt struct {
	field, without string
	fits           func(s *Set, m *mailbox.Message, key string, isAgent func(string) bool) bool
}

// misspeltOf are the reserved fields a key is taken for a misspelling of,
// what the message is without them, and what a value of theirs looks
// like: a key one edit from one of them is a misspelling only when its
// value would do there (ot: aria, for an agent aria; tpye: GM_TO_PLAYER),
// so that a field of the sender's own (threat: high, tape: 90 min) is
// left alone. id and from are not among them: the router writes them
// when they are missing.
var misspeltOf = []misspelt{
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

// topName is the key a field of a type is written under: party for
// party[].name, stats for stats.hp.
func topName(field string) string {
	if i := strings.IndexAny(field, "[."); i >= 0 {
		return field[:i]
	}
	return field
}

// meantField returns the field of t that key looks meant for: of the
// keys t's fields are written under (see topName), the nearest, case not
// counted, when no other is as near and it is one edit away for a name of
// up to five letters, two for a longer one (as a type's name is judged);
// "" when key is reserved, is a field of t, or is near none.
func meantField(t *Type, key string) string {
	if mailbox.IsReserved(key) || t.hasTop(key) {
		return "" // most keys: no distance is worked out for them
	}
	lower := strings.ToLower(key)
	best, bestDist, tie := "", 3, false
	for i, f := range t.Fields {
		top := topName(f.Name)
		if t.hasTopBefore(i, top) {
			continue // party, of party[] and party[].name, once
		}
		switch d := spell.Distance(lower, strings.ToLower(top)); {
		case d < bestDist:
			best, bestDist, tie = top, d, false
		case d == bestDist:
			tie = true
		}
	}
	if tie || best == "" || bestDist > typoEdits(best) {
		return ""
	}
	return best
}

// hasTop reports whether key is one t's fields are written under.
func (t *Type) hasTop(key string) bool {
	return t.hasTopBefore(len(t.Fields), key)
}

// hasTopBefore reports whether one of the first n fields of t is written
// under key.
func (t *Type) hasTopBefore(n int, key string) bool {
	for _, f := range t.Fields[:n] {
		if topName(f.Name) == key {
			return true
		}
	}
	return false
}

// misspeltField finds a key of m that is a misspelling of the field
// want of type t, which m lacks (see meantField). It returns the key and
// its line; "" when there is none.
func misspeltField(m *mailbox.Message, t *Type, want string) (key string, line int) {
	for _, k := range m.Payload().Keys() {
		if meantField(t, k) == want {
			return k, m.Payload().Line(k)
		}
	}
	return "", 0
}

// misspeltFields returns a violation for each key of m that looks meant
// for a field of t which m lacks (see meantField), at the key's line, in
// the order they are written: sumary: for an optional summary would be
// delivered as a key of the sender's own, and the summary lost. Left
// out are the keys in said (a required field's refusal names them
// already) and keys meant for a field MisspeltKeys judges by its value
// (to, type, reply_to, ...), and keys that differ from the field only in
// case: a reader may take them for it (the journal reads Title: for
// title, as its entries are written). A field of up to two letters is
// taken only for its own letters swapped: beside dc and hp, ac and xp
// are words of their own. A key two edits from the field is left too:
// the message is whole without the field, and such a key is as likely a
// word of the sender's own (region: beside reason) as a slip.
func misspeltFields(m *mailbox.Message, t *Type, said []string) []Violation {
	var vs []Violation
	for _, k := range m.Payload().Keys() {
		near := meantField(t, k)
		if near == "" || slices.Contains(said, k) || m.For(near).Has(near) || strings.EqualFold(k, near) || len(near) <= 2 && !sameLetters(k, near) ||
			spell.Distance(strings.ToLower(k), strings.ToLower(near)) > 1 {
			continue
		}
		if slices.ContainsFunc(misspeltOf, func(r misspelt) bool { return r.field == near }) {
			continue
		}
		vs = append(vs, Violation{Field: k, Line: m.Payload().Line(k), Meant: near,
			Reason: fmt.Sprintf("no field of type %s is called %s; did you mean %s?", displayName(t.Name, t.Tagged), k, near)})
	}
	return vs
}

// sameLetters reports whether a and b hold the same letters, case not
// counted, in any order.
func sameLetters(a, b string) bool {
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
