package dice_test

import (
	"testing"

	"github.com/parley-dev/parley/campaigns/dice"
)

// typical are expressions as a table rolls them: checks, advantage,
// damage, ability scores, Fudge dice.
var typical = []string{
	"1d20+5", "2d20kh1+3", "2d20kl1-1", "d20", "1d8+3", "2d6+4", "8d6", "4d6dl1", "1d12+1d6+2", "4dF+2",
}

// BenchmarkRoll100 parses and rolls 100 typical expressions, the work of
// `parley roll` with 100 arguments (target for the whole process: under
// 50 ms).
func BenchmarkRoll100(b *testing.B) {
	exprs := make([]string, 100)
	for i := range exprs {
		exprs[i] = typical[i%len(typical)]
	}
	src := dice.Seeded(1)
	for b.Loop() {
		for _, s := range exprs {
			if _, err := dice.Roll(s, src); err != nil {
				b.Fatal(err)
			}
		}
	}
}
