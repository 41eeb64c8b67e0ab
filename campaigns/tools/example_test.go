package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
)

func ExampleBox_Call() {
	workspace, _ := os.MkdirTemp("", "parley")
	defer os.RemoveAll(workspace)
	camp, err := campaigns.New(workspace, "the-rot-beneath")
	if err != nil {
		fmt.Println(err)
		return
	}
	os.WriteFile(camp.SheetPath("tilda-brannock"), []byte(`# Tilda Brannock

| | |
|---|---|
| **Level** | 1 |
| **Hit Points** | 8/8 |

## Equipment

### Pack Contents
- 3 healing potions
- a torch
`), 0o644)

	box := tools.New(camp, dice.Seeded(1))
	ctx := context.Background()
	calls := []struct{ name, args string }{
		{"roll_dice", `{"dice": "1d20+5", "reason": "Perception check", "dc": 15}`},
		{"update_character", `{"damage": 11}`},
		{"update_inventory", `{"updates": [{"slug": "healing-potion", "quantityChange": -1}]}`},
		{"update_character", `{"hp": 9}`},
	}
	for _, c := range calls {
		res, err := box.Call(ctx, c.name, json.RawMessage(c.args))
		switch res := res.(type) {
		case *tools.RollResult:
			fmt.Println(res.Description)
		case *tools.InventoryResult:
			enc := json.NewEncoder(os.Stdout)
			enc.SetEscapeHTML(false) // "->", not "-\u003e"
			enc.Encode(res)
		case *tools.CharacterResult:
			fmt.Println(res.Message)
		}
		if errors.Is(err, sheet.ErrRange) {
			// A failed call changes nothing; its error goes back to the
			// model as {"success": false, "message": "Error: ..."}.
			fmt.Println("refused: out of range")
		}
	}
	// Output:
	// Rolled 1d20+5 for Perception check: [20]+5 = 25 vs DC 15: critical_success
	// tilda-brannock: 11 damage: HP 8 -> 0
	// {"success":true,"message":"tilda-brannock: healing potions 3 -> 2","character":"tilda-brannock","changes":[{"name":"healing potions","slug":"healing-potions","from":3,"to":2}]}
	// refused: out of range
}
