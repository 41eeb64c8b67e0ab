package dice_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/dice"
)

// faces is a Source that returns chosen faces, in order: for a die of n
// sides, IntN(n) returns face-1. It fails the test when asked for more
// faces than it holds, or for a face the die does not have; check tells
// whether every face was used.
type faces struct {
	t  *testing.T
	fs []int
	i  int
}

func (f *faces) IntN(n int) int {
	f.t.Helper()
	if f.i >= len(f.fs) {
		f.t.Fatalf("rolled more dice than the %d faces given %v", len(f.fs), f.fs)
	}
	v := f.fs[f.i]
	f.i++
	if v < 1 || v > n {
		f.t.Fatalf("face %d given for a %d-sided die", v, n)
	}
	return v - 1
}

func (f *faces) check() {
	f.t.Helper()
	if f.i != len(f.fs) {
		f.t.Errorf("rolled %d dice, want all %d faces given %v used", f.i, len(f.fs), f.fs)
	}
}

// fudge turns Fudge faces (-1, 0, +1) into the faces of the 3-sided die
// the roller draws them from.
func fudge(fs ...int) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = f + 2
	}
	return out
}

// always is a Source that always rolls the same face.
type always int

func (a always) IntN(n int) int { return min(int(a), n) - 1 }

// TestRoll checks every operator with chosen faces: the total and the
// line in the protocol's notation.
func TestRoll(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		faces []int
		want  string
	}{
		// Dice.
		{"1d20+5", []int{8}, "1d20+5 = [8]+5 = 13"},
		{"d20", []int{20}, "d20 = [20] = 20"},
		{"3d6", []int{1, 2, 3}, "3d6 = [1, 2, 3] = 6"},
		{"d%", []int{100}, "d% = [100] = 100"},
		{"2d%", []int{5, 37}, "2d% = [5, 37] = 42"},
		{"4dF", fudge(1, -1, 0, 1), "4dF = [+1, -1, 0, +1] = 1"},
		{"4df+1", fudge(-1, -1, 0, -1), "4df+1 = [-1, -1, 0, -1]+1 = -2"},
		{"1d1", []int{1}, "1d1 = [1] = 1"},
		{"1D20+5", []int{8}, "1D20+5 = [8]+5 = 13"},
		{" 1d20 +\t5 ", []int{8}, "1d20+5 = [8]+5 = 13"},

		// Keep and drop; among equal dice the first is kept first and
		// dropped first.
		{"4d6kh3", []int{2, 5, 3, 6}, "4d6kh3 = [~~2~~, 5, 3, 6] = 14"},
		{"4d6k3", []int{2, 5, 3, 6}, "4d6k3 = [~~2~~, 5, 3, 6] = 14"},
		{"4d6k", []int{2, 5, 3, 6}, "4d6k = [~~2~~, ~~5~~, ~~3~~, 6] = 6"},
		{"4d6kl1", []int{2, 5, 3, 6}, "4d6kl1 = [2, ~~5~~, ~~3~~, ~~6~~] = 2"},
		{"4d6kl2", []int{2, 5, 3, 6}, "4d6kl2 = [2, ~~5~~, 3, ~~6~~] = 5"},
		{"4d6dl1", []int{2, 5, 3, 6}, "4d6dl1 = [~~2~~, 5, 3, 6] = 14"},
		{"4d6d1", []int{2, 5, 3, 6}, "4d6d1 = [~~2~~, 5, 3, 6] = 14"},
		{"4d6d", []int{2, 5, 3, 6}, "4d6d = [~~2~~, 5, 3, 6] = 14"},
		{"4d6dl2", []int{2, 5, 3, 6}, "4d6dl2 = [~~2~~, 5, ~~3~~, 6] = 11"},
		{"4d6dh1", []int{2, 5, 3, 6}, "4d6dh1 = [2, 5, 3, ~~6~~] = 10"},
		{"4d6dh3", []int{2, 5, 3, 6}, "4d6dh3 = [2, ~~5~~, ~~3~~, ~~6~~] = 2"},
		{"4d6kh4", []int{2, 5, 3, 6}, "4d6kh4 = [2, 5, 3, 6] = 16"},
		{"4d6dl1", []int{3, 3, 5, 6}, "4d6dl1 = [~~3~~, 3, 5, 6] = 14"},
		{"4d6dh1", []int{6, 3, 5, 6}, "4d6dh1 = [~~6~~, 3, 5, 6] = 14"},
		{"2d20kh1", []int{7, 7}, "2d20kh1 = [7, ~~7~~] = 7"},
		{"2d20kl1", []int{7, 7}, "2d20kl1 = [7, ~~7~~] = 7"},
		{"2d20kh1", []int{3, 15}, "2d20kh1 = [~~3~~, 15] = 15"},
		{"2d20kl1", []int{3, 15}, "2d20kl1 = [3, ~~15~~] = 3"},
		{"4dFkh2", fudge(-1, 1, 0, 1), "4dFkh2 = [~~-1~~, +1, ~~0~~, +1] = 2"},
		{"4D6KH3", []int{2, 5, 3, 6}, "4D6KH3 = [~~2~~, 5, 3, 6] = 14"},

		// Exploding: ! adds a die after the one that exploded, !! adds
		// into it, !p adds a die that counts one less.
		{"3d6!", []int{6, 4, 2, 5}, "3d6! = [6!, 4, 2, 5] = 17"},
		{"1d6!", []int{6, 6, 1}, "1d6! = [6!, 6!, 1] = 13"},
		{"1d6!!", []int{6, 6, 1}, "1d6!! = [6!+6!+1] = 13"},
		{"2d6!!", []int{3, 6, 2}, "2d6!! = [3, 6!+2] = 11"},
		{"1d6!p", []int{6, 6, 1}, "1d6!p = [6!, 5!, 0] = 11"},
		{"1d6!p", []int{6, 3}, "1d6!p = [6!, 2] = 8"},
		{"2d6!>4", []int{5, 3, 2}, "2d6!>4 = [5!, 3, 2] = 10"},
		{"1d6!>=5", []int{5, 6, 1}, "1d6!>=5 = [5!, 6!, 1] = 12"},
		{"1d6!<2", []int{1, 1, 4}, "1d6!<2 = [1!, 1!, 4] = 6"},
		{"1d6!<=2", []int{2, 3}, "1d6!<=2 = [2!, 3] = 5"},
		{"1d6!3", []int{3, 3, 6}, "1d6!3 = [3!, 3!, 6] = 12"},
		{"1d6!!>4", []int{5, 6, 2}, "1d6!!>4 = [5!+6!+2] = 13"},
		{"1d6!p>5", []int{6, 6, 2}, "1d6!p>5 = [6!, 5!, 1] = 12"},
		{"d%!", []int{100, 7}, "d%! = [100!, 7] = 107"},
		{"3d6!kh2", []int{6, 1, 2, 3}, "3d6!kh2 = [6!, ~~1~~, ~~2~~, 3] = 9"},
		{"2d6!k3", []int{6, 6, 1, 4}, "2d6!k3 = [6!, 6!, ~~1~~, 4] = 16"},
		{"3d6!!kh1", []int{6, 2, 3, 4}, "3d6!!kh1 = [6!+2, ~~3~~, ~~4~~] = 8"},
		{"3d6!!kl1", []int{6, 2, 3, 4}, "3d6!!kl1 = [~~6!+2~~, 3, ~~4~~] = 3"},

		// Rerolls: r again and again, ro once; they apply to every roll,
		// including the extra rolls of an explosion.
		{"2d6r1", []int{1, 1, 4, 5}, "2d6r1 = [~~1~~, ~~1~~, 4, 5] = 9"},
		{"1d6r<3", []int{2, 1, 3}, "1d6r<3 = [~~2~~, ~~1~~, 3] = 3"},
		{"1d6r<=2", []int{2, 1, 3}, "1d6r<=2 = [~~2~~, ~~1~~, 3] = 3"},
		{"1d6r>4", []int{6, 5, 4}, "1d6r>4 = [~~6~~, ~~5~~, 4] = 4"},
		{"1d6r>=5", []int{5, 6, 1}, "1d6r>=5 = [~~5~~, ~~6~~, 1] = 1"},
		{"1d6r1r2", []int{1, 2, 3}, "1d6r1r2 = [~~1~~, ~~2~~, 3] = 3"},
		{"1d6ro1", []int{1, 1}, "1d6ro1 = [~~1~~, 1] = 1"},
		{"1d6ro<3", []int{2, 2}, "1d6ro<3 = [~~2~~, 2] = 2"},
		{"1d6ro<7", []int{2, 2}, "1d6ro<7 = [~~2~~, 2] = 2"},
		{"2d6ro1", []int{1, 6, 1, 1}, "2d6ro1 = [~~1~~, 6, ~~1~~, 1] = 7"},
		{"1d20ro1", []int{1, 15}, "1d20ro1 = [~~1~~, 15] = 15"},
		{"4d6r1dl1", []int{1, 2, 5, 3, 6}, "4d6r1dl1 = [~~1~~, ~~2~~, 5, 3, 6] = 14"},
		{"1d6!!r1", []int{6, 1, 4}, "1d6!!r1 = [6!+~~1~~+4] = 10"},
		{"1d6!r1", []int{6, 1, 4}, "1d6!r1 = [6!, ~~1~~, 4] = 10"},
		{"1d6r1!", []int{6, 1, 4}, "1d6r1! = [6!, ~~1~~, 4] = 10"},

		// Arithmetic, with the usual precedence; division rounds toward
		// zero.
		{"1d4+2*3", []int{4}, "1d4+2*3 = [4]+2*3 = 10"},
		{"(1d4+2)*3", []int{4}, "(1d4+2)*3 = ([4]+2)*3 = 18"},
		{"2*(3+4)", nil, "2*(3+4) = 14"},
		{"2+3", nil, "2+3 = 5"},
		{"10-2-3", nil, "10-2-3 = 5"},
		{"12/2/3", nil, "12/2/3 = 2"},
		{"2*3+4*5", nil, "2*3+4*5 = 26"},
		{"7/2", nil, "7/2 = 3"},
		{"-7/2", nil, "-7/2 = -3"},
		{"7/-2", nil, "7/-2 = -3"},
		{"-7/-2", nil, "-7/-2 = 3"},
		{"1/3", nil, "1/3 = 0"},
		{"2*-3", nil, "2*-3 = -6"},
		{"--3", nil, "--3 = 3"},
		{"+3", nil, "+3 = 3"},
		{"0", nil, "0 = 0"},
		{"-(1d4)", []int{3}, "-(1d4) = -([3]) = -3"},
		{"1d6*0", []int{5}, "1d6*0 = [5]*0 = 0"},
		{"2d20kh1+1d4", []int{3, 15, 2}, "2d20kh1+1d4 = [~~3~~, 15]+[2] = 17"},
		{"1d8+1d8-1d4", []int{8, 1, 4}, "1d8+1d8-1d4 = [8]+[1]-[4] = 5"},
		{"(2d6+3)/2", []int{6, 6}, "(2d6+3)/2 = ([6, 6]+3)/2 = 7"},
		{"((1d6))", []int{2}, "((1d6)) = (([2])) = 2"},
		{"9223372036854775807", nil, "9223372036854775807 = 9223372036854775807"},
		{"-9223372036854775807-1", nil, "-9223372036854775807-1 = -9223372036854775808"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			src := &faces{t: t, fs: tc.faces}
			r, err := dice.Roll(tc.expr, src)
			if err != nil {
				t.Fatalf("Roll(%q) error: %v", tc.expr, err)
			}
			src.check()
			if got := r.String(); got != tc.want {
				t.Errorf("Roll(%q) = %q, want %q", tc.expr, got, tc.want)
			}
			// The total is the last number of the line, and the kept dice
			// add up to each term's value.
			if !strings.HasSuffix(tc.want, " "+strconv.FormatInt(r.Total, 10)) {
				t.Errorf("Roll(%q).Total = %d, want the end of %q", tc.expr, r.Total, tc.want)
			}
			for _, term := range r.Terms {
				var sum int64
				for _, d := range term.Dice {
					if d.Kept {
						sum += int64(d.Value)
					}
				}
				if sum != term.Value {
					t.Errorf("Roll(%q): term %s value %d, but its kept dice add up to %d", tc.expr, term.Notation, term.Value, sum)
				}
			}
		})
	}
}

// TestRollDice checks what a result says about each die: its value,
// whether it was kept, and its history of rerolls and explosions.
func TestRollDice(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		faces []int
		want  []dice.Die
	}{
		{"4d6dl1", []int{2, 5, 3, 6}, []dice.Die{
			{Value: 2, Rolls: []dice.Throw{{Face: 2}}},
			{Value: 5, Kept: true, Rolls: []dice.Throw{{Face: 5}}},
			{Value: 3, Kept: true, Rolls: []dice.Throw{{Face: 3}}},
			{Value: 6, Kept: true, Rolls: []dice.Throw{{Face: 6}}},
		}},
		{"2d6r1", []int{1, 1, 4, 5}, []dice.Die{
			{Value: 4, Kept: true, Rolls: []dice.Throw{{Face: 1, Rerolled: true}, {Face: 1, Rerolled: true}, {Face: 4}}},
			{Value: 5, Kept: true, Rolls: []dice.Throw{{Face: 5}}},
		}},
		{"1d6!", []int{6, 3}, []dice.Die{
			{Value: 6, Kept: true, Rolls: []dice.Throw{{Face: 6, Exploded: true}}},
			{Value: 3, Kept: true, Extra: true, Rolls: []dice.Throw{{Face: 3}}},
		}},
		{"1d6!!", []int{6, 3}, []dice.Die{
			{Value: 9, Kept: true, Rolls: []dice.Throw{{Face: 6, Exploded: true}, {Face: 3}}},
		}},
		{"1d6!p", []int{6, 3}, []dice.Die{
			{Value: 6, Kept: true, Rolls: []dice.Throw{{Face: 6, Exploded: true}}},
			{Value: 2, Kept: true, Extra: true, Rolls: []dice.Throw{{Face: 3}}},
		}},
		{"1d6!r1", []int{6, 1, 3}, []dice.Die{
			{Value: 6, Kept: true, Rolls: []dice.Throw{{Face: 6, Exploded: true}}},
			{Value: 3, Kept: true, Extra: true, Rolls: []dice.Throw{{Face: 1, Rerolled: true}, {Face: 3}}},
		}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			r, err := dice.Roll(tc.expr, &faces{t: t, fs: tc.faces})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Terms[0].Dice); diff != "" {
				t.Errorf("Roll(%q).Terms[0].Dice mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

// TestTerms checks what a result says about each term.
func TestTerms(t *testing.T) {
	r, err := dice.Roll(" 2d20kh1 + 4dF - d%", &faces{t: t, fs: append(append([]int{3, 15}, fudge(1, 1, 0, -1)...), 42)})
	if err != nil {
		t.Fatal(err)
	}
	var got []dice.Term
	for _, term := range r.Terms {
		term.Dice = nil
		got = append(got, term)
	}
	want := []dice.Term{
		{Notation: "2d20kh1", Column: 2, Sides: 20, Value: 15},
		{Notation: "4dF", Column: 12, Sides: 3, Fudge: true, Value: 1},
		{Notation: "d%", Column: 18, Sides: 100, Value: 42},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Terms mismatch (-want +got):\n%s", diff)
	}
	if r.Expr != "2d20kh1+4dF-d%" || r.Total != 15+1-42 {
		t.Errorf("Expr, Total = %q, %d; want %q, %d", r.Expr, r.Total, "2d20kh1+4dF-d%", 15+1-42)
	}
}

// TestAgainst checks the outcome against a DC: natural 20 and 1 on the
// kept d20 of a d20 check, the total otherwise.
func TestAgainst(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		faces   []int
		dc      int64
		natural int
		want    dice.Outcome
	}{
		{"1d20+5", []int{8}, 12, 8, dice.Success},
		{"1d20+5", []int{8}, 13, 8, dice.Success},
		{"1d20+5", []int{8}, 14, 8, dice.Failure},
		{"d20", []int{20}, 30, 20, dice.CriticalSuccess},
		{"1d20+10", []int{1}, 5, 1, dice.CriticalFailure},
		{"2d20kh1", []int{1, 20}, 25, 20, dice.CriticalSuccess},
		{"2d20kh1", []int{20, 1}, 25, 20, dice.CriticalSuccess},
		{"2d20kl1+3", []int{1, 20}, 2, 1, dice.CriticalFailure},
		{"2d20kl1+3", []int{19, 20}, 22, 19, dice.Success},
		{"2d20dl1", []int{5, 12}, 13, 12, dice.Failure},
		{"2d20dh1", []int{5, 20}, 5, 5, dice.Success},
		{"3d20kh1", []int{3, 20, 9}, 99, 20, dice.CriticalSuccess},
		{"1d20ro1", []int{1, 15}, 15, 15, dice.Success},
		{"1d20ro1", []int{1, 1}, 0, 1, dice.CriticalFailure},
		{"5+1d20", []int{1}, 2, 1, dice.CriticalFailure},
		{"1d20*2", []int{20}, 50, 20, dice.CriticalSuccess},
		{"(1d20+2)/2", []int{20}, 50, 20, dice.CriticalSuccess},
		// Not d20 checks: no naturals.
		{"1d6+1d20", []int{6, 20}, 26, 0, dice.Success},
		{"1d6+1d20", []int{1, 1}, 2, 0, dice.Success},
		{"2d20", []int{20, 1}, 22, 0, dice.Failure},
		{"1d20!", []int{20, 5}, 30, 0, dice.Failure},
		{"1d12", []int{1}, 1, 0, dice.Success},
		{"4dF", fudge(1, 1, 1, 1), 4, 0, dice.Success},
		{"20", nil, 20, 0, dice.Success},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			r, err := dice.Roll(tc.expr, &faces{t: t, fs: tc.faces})
			if err != nil {
				t.Fatal(err)
			}
			if r.Natural != tc.natural {
				t.Errorf("Roll(%q).Natural = %d, want %d", tc.expr, r.Natural, tc.natural)
			}
			if got := r.Against(tc.dc); got != tc.want {
				t.Errorf("Roll(%q) = %d; Against(%d) = %s, want %s", tc.expr, r.Total, tc.dc, got, tc.want)
			}
		})
	}
}

// TestCaps checks that rerolls and explosions that keep going stop at
// their limits and say so, and that an expression cannot roll without
// end.
func TestCaps(t *testing.T) {
	t.Run("reroll", func(t *testing.T) {
		r, err := dice.Roll("1d6r1", always(1))
		if err != nil {
			t.Fatal(err)
		}
		d := r.Terms[0].Dice[0]
		if !r.Capped || !d.Capped || len(d.Rolls) != dice.MaxRerolls+1 || d.Value != 1 || r.Total != 1 {
			t.Errorf("Roll(1d6r1) with only 1s: capped %v, die capped %v, %d rolls, value %d, total %d; want true, true, %d, 1, 1",
				r.Capped, d.Capped, len(d.Rolls), d.Value, r.Total, dice.MaxRerolls+1)
		}
	})
	t.Run("reroll once", func(t *testing.T) {
		r, err := dice.Roll("1d6ro1", always(1))
		if err != nil {
			t.Fatal(err)
		}
		if r.Capped || len(r.Terms[0].Dice[0].Rolls) != 2 {
			t.Errorf("Roll(1d6ro1) with only 1s: capped %v, %d rolls; want false, 2", r.Capped, len(r.Terms[0].Dice[0].Rolls))
		}
	})
	t.Run("explode", func(t *testing.T) {
		r, err := dice.Roll("1d6!", always(6))
		if err != nil {
			t.Fatal(err)
		}
		ds := r.Terms[0].Dice
		if !r.Capped || len(ds) != dice.MaxExplosions+1 || !ds[len(ds)-1].Capped || ds[len(ds)-1].Rolls[0].Exploded || r.Total != 6*(dice.MaxExplosions+1) {
			t.Errorf("Roll(1d6!) with only 6s: capped %v, %d dice, total %d; want true, %d, %d", r.Capped, len(ds), r.Total, dice.MaxExplosions+1, 6*(dice.MaxExplosions+1))
		}
	})
	t.Run("compound", func(t *testing.T) {
		r, err := dice.Roll("1d6!!", always(6))
		if err != nil {
			t.Fatal(err)
		}
		d := r.Terms[0].Dice[0]
		if !r.Capped || !d.Capped || len(r.Terms[0].Dice) != 1 || len(d.Rolls) != dice.MaxExplosions+1 || d.Value != 6*(dice.MaxExplosions+1) {
			t.Errorf("Roll(1d6!!) with only 6s: capped %v, %d dice, %d rolls, value %d", r.Capped, len(r.Terms[0].Dice), len(d.Rolls), d.Value)
		}
	})
	t.Run("reroll into explosion", func(t *testing.T) {
		// Every face but 6 is rerolled, and 6 explodes: only the caps end it.
		r, err := dice.Roll("1d6r<6!", dice.Seeded(1))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Capped || r.Total != 6*(dice.MaxExplosions+1) {
			t.Errorf("Roll(1d6r<6!): capped %v, total %d; want true, %d", r.Capped, r.Total, 6*(dice.MaxExplosions+1))
		}
	})
	t.Run("rolls", func(t *testing.T) {
		// 1000 dice, each exploding 100 times: over MaxRolls.
		_, err := dice.Roll("1+1000d6!!", always(6))
		var de *dice.Error
		if !errors.As(err, &de) || !errors.Is(err, dice.ErrLimit) || de.Col != 3 {
			t.Fatalf("Roll(1+1000d6!!) with only 6s: error %v, want an *Error at column 3 wrapping ErrLimit", err)
		}
	})
}
