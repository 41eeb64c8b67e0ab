package dice_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns/dice"
)

// TestParseErrors checks that bad expressions are refused with an *Error
// that names the column of the mistake, and the sentinel callers branch
// on where there is one.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		col  int
		msg  string
		is   error
	}{
		{"", 1, "empty expression", nil},
		{"   ", 1, "empty expression", nil},
		{"1d20+", 6, `expected a number, a die or "(" after "+"`, nil},
		{"1d20 + ", 8, `expected a number, a die or "(" after "+"`, nil},
		{"(", 2, `expected a number, a die or "(" after "("`, nil},
		{"1d20 5", 6, `unexpected "5": expected + - * / or the end`, nil},
		{"1d6 d6", 5, `unexpected "d": expected + - * / or the end`, nil},
		{"4d6 kh3", 5, `unexpected "k"`, nil},
		{"((1)", 5, `expected ")" to close the "(" at column 1`, nil},
		{"(1d6+2", 7, `expected ")" to close the "(" at column 1`, nil},
		{"1)", 2, `unexpected ")" with no "(" to close`, nil},
		{"()", 2, `unexpected ")": expected a number, a die or "("`, nil},
		{"1**2", 3, `unexpected "*"`, nil},
		{"x", 1, `unexpected "x"`, nil},
		{"1d20+5 é", 8, `unexpected "é"`, nil},
		{"1d20\n", 5, `unexpected "\n"`, nil},
		{"1d", 3, `expected the number of sides, "%" or "F" after "d"`, nil},
		{"1dx", 3, `expected the number of sides`, nil},
		{"1d 6", 3, `expected the number of sides`, nil},
		{"0d6", 1, "roll at least 1 die", nil},
		{"1001d6", 1, "1001 dice is over the limit: at most 1000 per term", dice.ErrLimit},
		{"2+1001d6", 3, "1001 dice is over the limit", dice.ErrLimit},
		{"d0", 2, "a die has at least 1 side", nil},
		{"d10001", 2, "d10001 is over the limit: at most 10000 sides", dice.ErrLimit},
		{"99999999999999999999", 1, "number 99999999999999999999 is over the limit of 64-bit integers", dice.ErrLimit},
		{"d99999999999999999999", 2, "over the limit", dice.ErrLimit},
		{strings.Repeat("1000d6+", 10) + "1d6", 71, "the expression is over the limit: at most 10000 dice in all", dice.ErrLimit},
		{strings.Repeat("1+", 500) + "1", 1001, "the expression is over the limit: at most 1000 characters", dice.ErrLimit},
		{"4d6k5", 4, "keeps 5 of 4 dice", nil},
		{"4d6k0", 4, "keep or drop at least 1 die", nil},
		{"4d6dl0", 4, "keep or drop at least 1 die", nil},
		{"4d6d4", 4, "drops 4 of 4 dice, leaving none", nil},
		{"4d6dh5", 4, "drops 5 of 4 dice, leaving none", nil},
		{"4d6!d4", 5, "drops 4 of 4 dice, leaving none", nil},
		{"4d6k1001", 5, "1001 is more dice than the term can roll", nil},
		{"4d6kh3kl1", 7, "a die term takes one keep or drop (the first is at column 4)", nil},
		{"4d6kh3d1", 7, "a die term takes one keep or drop", nil},
		{"1d6!!!", 6, `a die term explodes once (the first "!" is at column 4)`, nil},
		{"1d6!r1!", 7, "a die term explodes once", nil},
		{"1d6!>", 6, `expected a number after ">"`, nil},
		{"1d6!<=", 7, `expected a number after "<="`, nil},
		{"1d6!=3", 5, `unexpected "=": write the face alone (!3, r1)`, nil},
		{"1d6r", 5, `expected the face to reroll after "r" (r1, r<3, ro1)`, nil},
		{"1d6ro", 6, `expected the face to reroll after "ro"`, nil},
		{"1d6r<", 6, `expected a number after "<"`, nil},
		{"1d6r1ro2", 6, "a die term rerolls with r or with ro, not both", nil},
		{"1d6ro1r2", 7, "a die term rerolls with r or with ro, not both", nil},
		{"4dF!", 4, "a Fudge die does not explode", nil},
		{"4dFr1", 4, "a Fudge die is not rerolled", nil},
		{"1d1!", 4, "every face of a d1 explodes, so it would never stop rolling", dice.ErrForever},
		{"1d6!>0", 4, "every face of a d6 explodes", dice.ErrForever},
		{"1d6!<7", 4, "every face of a d6 explodes", dice.ErrForever},
		{"1d6!!>=1", 4, "every face of a d6 explodes", dice.ErrForever},
		{"1d6!p<=6", 4, "every face of a d6 explodes", dice.ErrForever},
		{"1d6r<7", 4, "every face of a d6 is rerolled, so it would never stop rolling", dice.ErrForever},
		{"1d1r1", 4, "every face of a d1 is rerolled", dice.ErrForever},
		{"1d6r1r2r3r>3", 4, "every face of a d6 is rerolled", dice.ErrForever},
		{"1d20+1d6kh1r>0", 12, "every face of a d6 is rerolled", dice.ErrForever},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := dice.Parse(tc.expr)
			var de *dice.Error
			if !errors.As(err, &de) {
				t.Fatalf("Parse(%q) error = %v, want an *Error", tc.expr, err)
			}
			if de.Col != tc.col || de.Expr != tc.expr || !strings.Contains(de.Err.Error(), tc.msg) {
				t.Errorf("Parse(%q) = column %d: %v; want column %d: %s", tc.expr, de.Col, de.Err, tc.col, tc.msg)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Parse(%q) = %v, want errors.Is %v", tc.expr, err, tc.is)
			}
		})
	}
}

// TestRollErrors checks the errors only rolling finds: they name the
// column of the operator.
func TestRollErrors(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		faces []int
		col   int
		is    error
	}{
		{"1d6/0", []int{3}, 4, dice.ErrDivisionByZero},
		{"1d6/(1d2-1)", []int{3, 1}, 4, dice.ErrDivisionByZero},
		{"10 / (2 - 2)", nil, 4, dice.ErrDivisionByZero},
		{"9223372036854775807+1", nil, 20, dice.ErrOverflow},
		{"-9223372036854775807-2", nil, 21, dice.ErrOverflow},
		{"9223372036854775807*2", nil, 20, dice.ErrOverflow},
		{"-9223372036854775807*-2", nil, 21, dice.ErrOverflow},
		{"-(-9223372036854775807-1)", nil, 1, dice.ErrOverflow},
		{"(-9223372036854775807-1)/-1", nil, 25, dice.ErrOverflow},
		{"(-9223372036854775807-1)*-1", nil, 25, dice.ErrOverflow},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := dice.Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Roll(&faces{t: t, fs: tc.faces})
			var de *dice.Error
			if !errors.As(err, &de) || de.Col != tc.col || !errors.Is(err, tc.is) {
				t.Errorf("Roll(%q) error = %v, want column %d: %v", tc.expr, err, tc.col, tc.is)
			}
		})
	}
}

// TestErrorMessage checks the whole message: the column, what is wrong,
// and the expression with a caret under the column; a long expression is
// cut around the column.
func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		{"1d20+", "column 6: expected a number, a die or \"(\" after \"+\"\n  1d20+\n       ^"},
		{"1d20+\t5x", "column 8: unexpected \"x\": expected + - * / or the end\n  1d20+ 5x\n         ^"},
		{"2d6\x00", "column 4: unexpected \"\\x00\": expected + - * / or the end\n  2d6?\n     ^"},
		{strings.Repeat("1+", 40) + "x",
			"column 81: unexpected \"x\": expected a number, a die or \"(\"\n" +
				"  ..." + (strings.Repeat("1+", 40) + "x")[21:] + "\n" +
				"  " + strings.Repeat(" ", 3+80-21) + "^"},
		{"x" + strings.Repeat("+1", 40),
			"column 1: unexpected \"x\": expected a number, a die or \"(\"\n" +
				"  x" + strings.Repeat("+1", 29) + "+...\n" +
				"  ^"},
	} {
		_, err := dice.Parse(tc.expr)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error =\n%v\nwant\n%s", tc.expr, err, tc.want)
		}
	}
}

// TestString checks the normalised expression: as written, without
// spaces.
func TestString(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1d20+5", "1d20+5"},
		{" 1d20 + 5 ", "1d20+5"},
		{"( 2d6 + 3 ) * 2", "(2d6+3)*2"},
		{"\t4d6dl1\t", "4d6dl1"},
		{"- 1d4", "-1d4"},
		{"1D20", "1D20"},
	} {
		e, err := dice.Parse(tc.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.expr, err)
		}
		if got := e.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
