package sheet_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/campaigns/sheet"
)

func Example() {
	dir, _ := os.MkdirTemp("", "party")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "corwin-voss.md")
	os.WriteFile(path, []byte(`# Corwin Voss

| | |
|---|---|
| **Hit Points** | 8/8 |

## Equipment

### Worn/Carried
- Shortsword
- Two daggers

### Pack Contents
- Burglar's pack (backpack, crowbar, 10 pitons)

### Currency
15 gp
`), 0o644)

	d, err := sheet.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	from, to, _ := d.Damage(5)
	fmt.Printf("%s: %d -> %d hit points\n", d.Name, from, to)
	it, _ := d.ChangeItem("dagger", -1)
	fmt.Printf("%s: %d left\n", it.Name, it.Quantity)
	d.AddItem("Torch", 3, "")
	d.SetCurrency("sp", 4)
	if _, err := d.ChangeItem("rope", -1); errors.Is(err, sheet.ErrUnknownItem) {
		fmt.Println("no rope to use")
	}
	if err := d.Save(); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(path)
	fmt.Print(strings.SplitN(string(b), "\n", 5)[4])
	// Output:
	// corwin-voss: 8 -> 3 hit points
	// dagger: 1 left
	// no rope to use
	// | **Hit Points** | 3/8 |
	//
	// ## Equipment
	//
	// ### Worn/Carried
	// - Shortsword
	// - 1 dagger
	//
	// ### Pack Contents
	// - Burglar's pack (backpack, crowbar, 10 pitons)
	// - 3 Torch
	//
	// ### Currency
	// 15 gp, 4 sp
}

func ExampleDoc_AddItemTo() {
	d, err := sheet.Parse("party/vex.md", []byte(`| **Hit Points** | 8/8 |

## Equipment
- Explorer's pack, containing:
  - 10 torches
- Dungeoneer's pack
  - 10 torches
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := d.ChangeItem("torch", -1); errors.Is(err, sheet.ErrAmbiguous) {
		fmt.Println(err)
	}
	it, _ := d.ChangeItem("dungeoneers-pack/torch", -1)
	fmt.Printf("%s in %s: %d\n", it.Name, it.In, it.Quantity)
	d.AddItemTo("explorers-pack", "Bedroll", 1, "")
	fmt.Print(string(d.Bytes()))
	// Output:
	// party/vex.md: items: ambiguous item "torch": it could be torches in Explorer's pack (line 5), torches in Dungeoneer's pack (line 7); say which, as explorers-pack/torches or dungeoneers-pack/torches
	// torches in Dungeoneer's pack: 9
	// | **Hit Points** | 8/8 |
	//
	// ## Equipment
	// - Explorer's pack, containing:
	//   - 10 torches
	//   - Bedroll
	// - Dungeoneer's pack
	//   - 9 torches
}
