package tools_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/campaigns/tools"
)

// nestedSheet has packs with their contents indented under them, the
// same torches in two of them.
const nestedSheet = `# Tilda Brannock

| **Hit Points** | 8/12 |

## Equipment

### Worn/Carried
- Mace
- Explorer's pack, containing:
  - Bedroll
  - 10 torches
- Dungeoneer's pack
  - 10 torches
  - Tinderbox
`

// TestNestedInventory checks the inventory tools on items in containers:
// a name held once just works, a name in two packs is refused until the
// call says which (in, or a container/slug), and changes move only the
// changed line.
func TestNestedInventory(t *testing.T) {
	tests := []struct {
		name, tool, args string
		json             string   // fields of the result
		diff             []string // lines changed
		err              string   // the error, when the call fails
		is               error
	}{
		{name: "a name held once", tool: "update_inventory", args: `{"updates": [{"slug": "tinderbox", "quantityChange": -1}]}`,
			json: `{"message": "tilda-brannock: Tinderbox in Dungeoneer's pack: used up"}`,
			diff: []string{"-  - Tinderbox"}},
		{name: "a name in two packs", tool: "update_inventory", args: `{"updates": [{"slug": "torch", "quantityChange": -1}]}`,
			err: `updates[0] "torch": party/tilda-brannock.md: items: ambiguous item "torch": it could be torches in Explorer's pack (line 11), torches in Dungeoneer's pack (line 13); say which, as explorers-pack/torches or dungeoneers-pack/torches`,
			is:  sheet.ErrAmbiguous},
		{name: "in says which", tool: "update_inventory", args: `{"updates": [{"slug": "torch", "in": "dungeoneers-pack", "quantityChange": -2}]}`,
			json: `{"message": "tilda-brannock: torches in Dungeoneer's pack 10 -> 8", "changes": [{"name": "torches", "slug": "torches", "in": "Dungeoneer's pack", "from": 10, "to": 8}]}`,
			diff: []string{"-  - 10 torches", "+  - 8 torches"}},
		{name: "a container/slug says which", tool: "update_inventory", args: `{"updates": [{"slug": "explorers-pack/torch", "quantityChange": -1}]}`,
			json: `{"message": "tilda-brannock: torches in Explorer's pack 10 -> 9"}`,
			diff: []string{"-  - 10 torches", "+  - 9 torches"}},
		{name: "a pack that holds items is not used up", tool: "update_inventory", args: `{"updates": [{"slug": "dungeoneers-pack", "quantityChange": -1}]}`,
			err: `updates[0] "dungeoneers-pack": party/tilda-brannock.md:12: items: Dungeoneer's pack: holds items: torches, Tinderbox; use them up, or edit the sheet`,
			is:  sheet.ErrNotEmpty},
		{name: "added into a pack", tool: "add_inventory", args: `{"items": [{"name": "Crowbar", "in": "dungeoneers-pack"}]}`,
			json: `{"message": "tilda-brannock: Crowbar in Dungeoneer's pack 0 -> 1"}`,
			diff: []string{"+  - Crowbar"}},
		{name: "added to the one item of that name", tool: "add_inventory", args: `{"items": [{"name": "Bedroll"}]}`,
			json: `{"message": "tilda-brannock: Bedroll in Explorer's pack 1 -> 2"}`,
			diff: []string{"-  - Bedroll", "+  - Bedroll (x2)"}},
		{name: "added by a name in two packs", tool: "add_inventory", args: `{"items": [{"name": "Torch", "quantity": 2}]}`,
			err: `items[0] "Torch": party/tilda-brannock.md: items: ambiguous item "Torch": it could be torches in Explorer's pack (line 11), torches in Dungeoneer's pack (line 13); say which, as explorers-pack/torches or dungeoneers-pack/torches`,
			is:  sheet.ErrAmbiguous},
		{name: "added into a pack that is not there", tool: "add_inventory", args: `{"items": [{"name": "Rope", "in": "chest"}]}`,
			err: `items[0] "Rope": party/tilda-brannock.md: items: in: no such item "chest"`, is: sheet.ErrUnknownItem},
		{name: "stats carry the container", tool: "get_character_stats", args: `{}`,
			json: `{"inventory": [
				{"name": "Mace", "slug": "mace", "quantity": 1, "section": "Worn/Carried"},
				{"name": "Explorer's pack", "slug": "explorers-pack", "quantity": 1, "section": "Worn/Carried"},
				{"name": "Bedroll", "slug": "bedroll", "quantity": 1, "section": "Worn/Carried", "in": "Explorer's pack"},
				{"name": "torches", "slug": "torches", "quantity": 10, "section": "Worn/Carried", "in": "Explorer's pack"},
				{"name": "Dungeoneer's pack", "slug": "dungeoneers-pack", "quantity": 1, "section": "Worn/Carried"},
				{"name": "torches", "slug": "torches", "quantity": 10, "section": "Worn/Carried", "in": "Dungeoneer's pack"},
				{"name": "Tinderbox", "slug": "tinderbox", "quantity": 1, "section": "Worn/Carried", "in": "Dungeoneer's pack"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCampaign(t, map[string]string{"tilda-brannock": nestedSheet})
			b := tools.New(c, dice.Seeded(1))
			got, err := call(t, b, tt.tool, tt.args)
			after := readFile(t, c.SheetPath("tilda-brannock"))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("%s %s = %v, want %q", tt.tool, tt.args, err, tt.err)
				}
				if !errors.Is(err, tt.is) {
					t.Errorf("%s = %v, want errors.Is %v", tt.tool, err, tt.is)
				}
				if after != nestedSheet {
					t.Errorf("a failed call changed the sheet:\n%s", after)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s = %v", tt.tool, tt.args, err)
			}
			checkFields(t, got, tt.json)
			if diff := cmp.Diff(tt.diff, lineDiff(nestedSheet, after)); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s", diff)
			}
		})
	}
}
