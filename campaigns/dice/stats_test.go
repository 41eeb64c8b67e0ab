package dice_test

import (
	"math"
	"testing"

	"github.com/parley-dev/parley/campaigns/dice"
)

// statsRolls is how many times the statistical tests roll each expression.
const statsRolls = 100000

// rollMany rolls expr n times from a fixed seed and returns the totals.
func rollMany(t *testing.T, expr string, n int) []int64 {
	t.Helper()
	e, err := dice.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	src := dice.Seeded(20261121)
	out := make([]int64, n)
	for i := range out {
		r, err := e.Roll(src)
		if err != nil {
			t.Fatalf("Roll(%q): %v", expr, err)
		}
		out[i] = r.Total
	}
	return out
}

// TestMean checks the mean of a few expressions over many seeded rolls
// against the exact expectation, within five standard errors.
func TestMean(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{
		{"3d6", 10.5},
		{"4d6dl1", 15869.0 / 1296}, // 12.2446
		{"4d6kh3", 15869.0 / 1296}, // the same
		{"2d20kh1", 13.825},        // advantage
		{"2d20kl1", 7.175},         // disadvantage
		{"4dF", 0},
		{"d%", 50.5},
		{"1d6!", 4.2},         // 3.5 * 6/5
		{"1d6!!", 4.2},        // the same total, in one die
		{"1d6!p", 4.0},        // 3.5 + (1/6) * 3
		{"1d6r1", 4.0},        // uniform on 2..6
		{"1d6ro1", 47.0 / 12}, // 1/6 * 3.5 + 5/6 * 4
		{"(2d6+3)/2", 4.75},   // (7+3)/2, less 1/2 for the half of the sums (s+3) that are odd
	} {
		t.Run(tc.expr, func(t *testing.T) {
			totals := rollMany(t, tc.expr, statsRolls)
			var sum, sq float64
			for _, v := range totals {
				sum += float64(v)
			}
			mean := sum / float64(len(totals))
			for _, v := range totals {
				sq += (float64(v) - mean) * (float64(v) - mean)
			}
			se := math.Sqrt(sq/float64(len(totals)-1)) / math.Sqrt(float64(len(totals)))
			if math.Abs(mean-tc.want) > 5*se {
				t.Errorf("mean of %d rolls of %s = %.4f, want %.4f ± %.4f (5 standard errors)", len(totals), tc.expr, mean, tc.want, 5*se)
			}
		})
	}
}

// TestUniform checks the faces of a d20 with a chi-square test, and the
// sums of 3d6 against their exact distribution. The bounds are generous:
// chi-square with 19 and 15 degrees of freedom exceeds them with
// probability well under 0.0001.
func TestUniform(t *testing.T) {
	t.Run("1d20", func(t *testing.T) {
		counts := make([]float64, 21)
		for _, v := range rollMany(t, "1d20", statsRolls) {
			counts[v]++
		}
		want := float64(statsRolls) / 20
		var chi2 float64
		for face := 1; face <= 20; face++ {
			chi2 += (counts[face] - want) * (counts[face] - want) / want
		}
		if chi2 > 50 {
			t.Errorf("1d20 over %d rolls: chi-square %.1f, want at most 50 (19 degrees of freedom); counts %v", statsRolls, chi2, counts[1:])
		}
	})
	t.Run("3d6", func(t *testing.T) {
		// ways[s] is the number of the 216 outcomes of 3d6 that sum to s.
		ways := make([]float64, 19)
		for a := 1; a <= 6; a++ {
			for b := 1; b <= 6; b++ {
				for c := 1; c <= 6; c++ {
					ways[a+b+c]++
				}
			}
		}
		counts := make([]float64, 19)
		for _, v := range rollMany(t, "3d6", statsRolls) {
			counts[v]++
		}
		var chi2 float64
		for s := 3; s <= 18; s++ {
			want := float64(statsRolls) * ways[s] / 216
			chi2 += (counts[s] - want) * (counts[s] - want) / want
		}
		if chi2 > 45 {
			t.Errorf("3d6 over %d rolls: chi-square %.1f, want at most 45 (15 degrees of freedom); counts %v", statsRolls, chi2, counts[3:])
		}
	})
	t.Run("4dF", func(t *testing.T) {
		// A Fudge die is -1, 0 or +1 with equal odds; four of them sum
		// to -4..4 with 1, 4, 10, 16, 19, 16, 10, 4, 1 ways in 81.
		ways := []float64{1, 4, 10, 16, 19, 16, 10, 4, 1}
		counts := make([]float64, 9)
		for _, v := range rollMany(t, "4dF", statsRolls) {
			counts[v+4]++
		}
		var chi2 float64
		for i, w := range ways {
			want := float64(statsRolls) * w / 81
			chi2 += (counts[i] - want) * (counts[i] - want) / want
		}
		if chi2 > 35 {
			t.Errorf("4dF over %d rolls: chi-square %.1f, want at most 35 (8 degrees of freedom); counts %v", statsRolls, chi2, counts)
		}
	})
}

// TestSeeded checks that a seed rolls the same dice every time.
func TestSeeded(t *testing.T) {
	e, err := dice.Parse("4d6dl1+1d20+3d6!")
	if err != nil {
		t.Fatal(err)
	}
	a, b := dice.Seeded(7), dice.Seeded(7)
	for range 100 {
		ra, err := e.Roll(a)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := e.Roll(b)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Roll != rb.Roll {
			t.Fatalf("seed 7 rolled %q, then %q", ra.Roll, rb.Roll)
		}
	}
}
