package delta

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/internal/spell"
)

// Party is what a campaign's sheets say of its characters, for the Party
// HP lines of a delta: each character by its sheet's name
// (tilda-brannock), with its maximum hit points (0 when its sheet does
// not say).
type Party map[string]int

var (
	// ErrNoCharacter is the error for a Party HP line naming a character
	// the party has no sheet of: it is kept in the delta, as a line with
	// an unknown keyword is, with the name that comes closest.
	ErrNoCharacter = errors.New("no such character")
	// ErrOverMax is the warning for a Party HP line whose hit points are
	// over the character's maximum (its sheet's, or the one the line
	// gives): the line is written all the same, and the warning said.
	ErrOverMax = errors.New("hit points over the maximum")
)

// noCharacter is the error for a name p has no sheet of.
type noCharacter struct {
	name, near string
	have       []string
}

func (e *noCharacter) Error() string {
	s := fmt.Sprintf("no sheet in party/ for %q", e.name)
	switch {
	case e.near != "":
		return s + fmt.Sprintf(" (did you mean %s?)", e.near)
	case len(e.have) == 0:
		return s + " (no character has a sheet)"
	}
	return s + " (characters: " + strings.Join(e.have, ", ") + ")"
}

func (e *noCharacter) Unwrap() error { return ErrNoCharacter }

// CheckParty checks the Party HP entries of d against the party's
// sheets. An entry naming a character p has no sheet of gets its Err
// (wrapping ErrNoCharacter, with the name that comes closest), so that
// it is kept as an entry Parse found wrong is; a name is a character's
// when it is its sheet's name in any spelling ("Tilda Brannock") or its
// first words ("Tilda"). For the others it returns the warnings, each
// wrapping ErrOverMax: hit points over the sheet's maximum, or over the
// maximum the line gives ("30/14"). A party with no sheet at all (a
// campaign that keeps none yet) keeps no line: a name is then a warning,
// wrapping ErrNoCharacter.
func (d *Delta) CheckParty(p Party) []*LineError {
	have := slices.Sorted(maps.Keys(p))
	var warn []*LineError // warnings of the entries not kept
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.Keyword != PartyHP || e.Err != nil {
			continue
		}
		hs, err := parseHP(e.Text, e.More)
		if err != nil {
			continue // check says so
		}
		var over []*LineError
		for _, h := range hs {
			who := p.character(h.name)
			if who == "" && len(p) == 0 {
				over = append(over, &LineError{File: d.Path, Line: e.Line, Keyword: keywordOf(e), Text: h.name + " " + h.value, Err: &noCharacter{name: h.name}})
				continue
			}
			if who == "" {
				e.Err = lineError(d.Path, e, &noCharacter{name: h.name, near: nearest(kebab(h.name), have), have: have})
				break
			}
			if err := overMax(h.value, p[who]); err != nil {
				over = append(over, &LineError{File: d.Path, Line: e.Line, Keyword: keywordOf(e), Text: h.name + " " + h.value, Err: fmt.Errorf("%s %s: %w", who, h.value, err)})
			}
		}
		if e.Err == nil {
			warn = append(warn, over...)
		}
	}
	return warn
}

// keywordOf is the keyword of an entry as a LineError names it.
func keywordOf(e *Entry) string {
	if e.Word != "" {
		return e.Word
	}
	return string(e.Keyword)
}

// character returns the sheet's name of the character name names, or "".
func (p Party) character(name string) string {
	key := kebab(name)
	if key == "" {
		return ""
	}
	if _, ok := p[key]; ok {
		return key
	}
	for _, c := range slices.Sorted(maps.Keys(p)) {
		if strings.HasPrefix(c, key+"-") {
			return c
		}
	}
	return ""
}

// nearest returns the sheet's name closest to key, when it is close: a
// misspelt full name, or a misspelt first name.
func nearest(key string, have []string) string {
	edits := max(2, len(key)/4)
	if n := spell.Nearest(key, have, edits); n != "" {
		return n
	}
	firsts := map[string]string{}
	var words []string
	for _, c := range have {
		w, _, _ := strings.Cut(c, "-")
		if _, dup := firsts[w]; !dup {
			words = append(words, w)
		}
		firsts[w] = c
	}
	if w := spell.Nearest(key, words, edits); w != "" {
		return firsts[w]
	}
	return ""
}

// kebab writes a name as a sheet's: lower case, words joined by "-".
func kebab(name string) string {
	f := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == ' ' || r == '\t' || r == '-' || r == '_' || r == '.'
	})
	return strings.Join(f, "-")
}

// hpNumbersRE reads the hit points of a Party HP value: "9/14", "9 / 14 HP", "9".
var hpNumbersRE = regexp.MustCompile(`^\s*(\d+)(?:\s*/\s*(\d+))?`)

// overMax says whether the hit points a value gives are over the sheet's
// maximum (sheetMax, 0: not known) or over the maximum the value gives.
func overMax(value string, sheetMax int) error {
	m := hpNumbersRE.FindStringSubmatch(value)
	if m == nil {
		return nil
	}
	cur, _ := strconv.Atoi(m[1])
	if sheetMax > 0 && cur > sheetMax {
		return fmt.Errorf("%w, %d on its sheet", ErrOverMax, sheetMax)
	}
	if m[2] != "" {
		if written, _ := strconv.Atoi(m[2]); cur > written {
			return fmt.Errorf("%w, %d as the line gives it", ErrOverMax, written)
		}
	}
	return nil
}
