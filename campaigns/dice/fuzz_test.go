package dice_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-dev/parley/campaigns/dice"
)

// FuzzParse checks that Parse never panics; that its errors are *Error
// values pointing into the expression (or just past its end) and showing
// a caret; and that an expression it accepts prints without spaces,
// parses again to the same text, and rolls (from a fixed seed) to the
// same line either way, a line that starts with the expression and ends
// with the total, or fails with an *Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"1d20+5", "d20", "2d20kh1", "2d20kl1", "4d6dl1", "4d6kh3", "4d6dh1", "8d6k", "d%", "2d%kh1", "4dF", "4df+1",
		"3d6!", "1d6!!", "1d6!p", "2d6!>4", "1d6!>=5", "1d6!<2", "1d6!<=2", "1d6!3", "d%!", "3d6!!kh1", "3d6!kh2",
		"2d6r1", "1d6r<3", "1d6r>4", "1d6r1r2", "1d6ro1", "1d6ro<3", "1d6r<6!", "4d6r1dl1", "1d6!!r1",
		"(2d6+3)*2", " 1d20 + 5 ", "-7/2", "2*-3", "--3", "((1d6))", "1D20+5", "1d4+2*3-1d8/2",
		"9223372036854775807+1", "(-9223372036854775807-1)/-1", "1d6/0", "1d6/(1d2-1)",
		"", "1d20+", "((1)", "1)", "1d20 5", "1d", "0d6", "1001d6", "d0", "d10001", "4d6k5", "4d6d4",
		"1d1!", "1d6r<7", "1d6!=3", "1d6r", "4dF!", "1d6r1ro2", "é", "1d20\n", "\xff", "1000d10000!>1",
		strings.Repeat("(", 600) + "1" + strings.Repeat(")", 600),
		strings.Repeat("-", 999) + "1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := dice.Parse(s)
		if err != nil {
			checkError(t, s, err)
			return
		}
		text := e.String()
		if strings.ContainsAny(text, " \t") {
			t.Fatalf("Parse(%q).String() = %q, want no spaces", s, text)
		}
		e2, err := dice.Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q, which does not parse: %v", s, text, err)
		}
		if e2.String() != text {
			t.Fatalf("Parse(%q).String() = %q, then %q; want the same", s, text, e2.String())
		}
		r, err := e.Roll(dice.Seeded(1))
		r2, err2 := e2.Roll(dice.Seeded(1))
		if err != nil {
			checkError(t, s, err)
			if err2 == nil || err2.(*dice.Error).Err.Error() != err.(*dice.Error).Err.Error() {
				t.Fatalf("Roll(%q) = %v, but Roll(%q) = %v", s, err, text, err2)
			}
			return
		}
		if err2 != nil || r2.Roll != r.Roll {
			t.Fatalf("Roll(%q) = %q, but Roll(%q) = %q, %v", s, r.Roll, text, r2.Roll, err2)
		}
		if !strings.HasPrefix(r.Roll, text+" = ") || !strings.HasSuffix(r.Roll, " = "+strconv.FormatInt(r.Total, 10)) {
			t.Fatalf("Roll(%q) = %q, want %q = ... = %d", s, r.Roll, text, r.Total)
		}
		if r.Natural < 0 || r.Natural > 20 {
			t.Fatalf("Roll(%q).Natural = %d", s, r.Natural)
		}
		for _, term := range r.Terms {
			var sum int64
			for _, d := range term.Dice {
				if d.Kept {
					sum += int64(d.Value)
				}
			}
			if sum != term.Value {
				t.Fatalf("Roll(%q): term %s = %d, but its kept dice add up to %d", s, term.Notation, term.Value, sum)
			}
		}
	})
}

// checkError checks an error from parsing or rolling s.
func checkError(t *testing.T, s string, err error) {
	t.Helper()
	var de *dice.Error
	if !errors.As(err, &de) {
		t.Fatalf("Parse(%q) error = %T %v, want a *dice.Error", s, err, err)
	}
	n := utf8.RuneCountInString(s)
	if de.Col < 1 || de.Col > max(n+1, dice.MaxLen+1) || (n <= dice.MaxLen && de.Col > n+1) {
		t.Fatalf("Parse(%q) = %v: column %d, want one of the %d characters or just past them", s, err, de.Col, n)
	}
	if msg := err.Error(); strings.Count(msg, "\n") != 2 || !strings.HasSuffix(msg, "^") {
		t.Fatalf("Parse(%q) error = %q, want a message, the expression and a caret", s, msg)
	}
}
