package dice_test

import (
	"fmt"
	"log"

	"github.com/parley-dev/parley/campaigns/dice"
)

func ExampleRoll() {
	r, err := dice.Roll("1d20+5", dice.Seeded(42))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r)
	fmt.Println(r.Total, r.Against(12))
	// Output:
	// 1d20+5 = [13]+5 = 18
	// 18 success
}

func ExampleExpr_Roll() {
	e, err := dice.Parse("4d6dl1")
	if err != nil {
		log.Fatal(err)
	}
	src := dice.Seeded(7)
	for range 3 {
		r, err := e.Roll(src)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r)
	}
	// Output:
	// 4d6dl1 = [6, ~~1~~, 5, 1] = 12
	// 4d6dl1 = [~~2~~, 2, 5, 2] = 9
	// 4d6dl1 = [~~3~~, 4, 4, 3] = 11
}

func ExampleResult_Against() {
	// Advantage: the higher of two d20s.
	r, err := dice.Roll("2d20kh1+3", dice.Seeded(2))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r)
	fmt.Println("natural", r.Natural, "against DC 25:", r.Against(25))
	// Output:
	// 2d20kh1+3 = [~~4~~, 20]+3 = 23
	// natural 20 against DC 25: critical_success
}

func ExampleParse_error() {
	_, err := dice.Parse("2d20kh1+")
	fmt.Println(err)
	// Output:
	// column 9: expected a number, a die or "(" after "+"
	//   2d20kh1+
	//           ^
}
