package sheet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// nestedSheet is the example: packs with their contents indented
// under them, in three bullet styles and two indentations.
const nestedSheet = "| **Hit Points** | 8/8 |\n\n## Equipment\n\n### Worn/Carried\n" +
	"- Mace\n" +
	"- Explorer's pack, containing:\n" +
	"  - Bedroll\n" +
	"  - 10 torches\n" +
	"  - Rations (5 days)\n" +
	"- Dungeoneer's pack\n" +
	"    - 10 torches\n" +
	"    - Tinderbox\n" +
	"- Belt pouch:\n" +
	"  * 2 candles\n" +
	"\n### Currency\n10 gp\n"

// nested is an Item without its line and section, for comparing.
type nested struct {
	Name     string
	Quantity int
	In       string
	Depth    int
}

func nestedItems(items []sheet.Item) []nested {
	var out []nested
	for _, it := range items {
		out = append(out, nested{it.Name, it.Quantity, it.In, it.Depth})
	}
	return out
}

// TestNestedRead checks that bullets indented under an item are items in
// it, however they are indented, and that the duplicate rule is per
// container.
func TestNestedRead(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n## Equipment\n"
	tests := []struct {
		name, src string
		want      []nested
	}{
		{"the issue's example", nestedSheet, []nested{
			{"Mace", 1, "", 0},
			{"Explorer's pack", 1, "", 0},
			{"Bedroll", 1, "Explorer's pack", 1},
			{"torches", 10, "Explorer's pack", 1},
			{"Rations", 1, "Explorer's pack", 1},
			{"Dungeoneer's pack", 1, "", 0},
			{"torches", 10, "Dungeoneer's pack", 1},
			{"Tinderbox", 1, "Dungeoneer's pack", 1},
			{"Belt pouch", 1, "", 0},
			{"candles", 2, "Belt pouch", 1},
		}},
		{"tab-indented", hp + "- Pack\n\t- Rope\n\t- 2 torches\n- Shield\n", []nested{
			{"Pack", 1, "", 0}, {"Rope", 1, "Pack", 1}, {"torches", 2, "Pack", 1}, {"Shield", 1, "", 0},
		}},
		{"three levels", hp + "- Chest\n  - Pack\n    - Pouch\n      - 3 gems\n    - Rope\n  - Lantern\n- Shield\n", []nested{
			{"Chest", 1, "", 0}, {"Pack", 1, "Chest", 1}, {"Pouch", 1, "Pack", 2}, {"gems", 3, "Pouch", 3},
			{"Rope", 1, "Pack", 2}, {"Lantern", 1, "Chest", 1}, {"Shield", 1, "", 0},
		}},
		{"a blank line inside", hp + "- Pack\n\n  - Rope\n", []nested{{"Pack", 1, "", 0}, {"Rope", 1, "Pack", 1}}},
		{"prose under an item is not an item", hp + "- Pack\n  patched twice\n  - Rope\n", []nested{{"Pack", 1, "", 0}, {"Rope", 1, "Pack", 1}}},
		{"container words", hp + "- Two sacks, containing:\n  - Flour\n- Chest contains\n  - Gold bar\n- Satchel with:\n  - Map\n- Bag of Holding\n- Staff with runes\n", []nested{
			{"sacks", 2, "", 0}, {"Flour", 1, "sacks", 1}, {"Chest", 1, "", 0}, {"Gold bar", 1, "Chest", 1},
			{"Satchel", 1, "", 0}, {"Map", 1, "Satchel", 1}, {"Bag of Holding", 1, "", 0}, {"Staff with runes", 1, "", 0},
		}},
		{"the same item in two packs and loose", hp + "- Torch\n- Pack\n  - Torch\n- Sack\n  - torches (x2)\n", []nested{
			{"Torch", 1, "", 0}, {"Pack", 1, "", 0}, {"Torch", 1, "Pack", 1}, {"Sack", 1, "", 0}, {"torches", 2, "Sack", 1},
		}},
		{"frontmatter in: and contents:", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Explorer's pack\n    contents:\n      - Bedroll\n      - {name: Torch, quantity: 10}\n  - {name: Candle, quantity: 2, in: Belt pouch}\n  - name: Belt pouch\n  - name: Torch\n    in: Belt pouch\n---\n", []nested{
			{"Explorer's pack", 1, "", 0}, {"Bedroll", 1, "Explorer's pack", 1}, {"Torch", 10, "Explorer's pack", 1},
			{"Candle", 2, "Belt pouch", 1}, {"Belt pouch", 1, "", 0}, {"Torch", 1, "Belt pouch", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if diff := cmp.Diff(tt.want, nestedItems(d.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNestedErrors checks that bad nesting is refused with the file, the
// line and the field, and never read half.
func TestNestedErrors(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n## Equipment\n"
	deep := hp
	for i := 0; i <= sheet.MaxDepth+1; i++ {
		deep += strings.Repeat("  ", i) + "- Box\n"
	}
	const fm = "---\nhp: 3\nmax_hp: 5\ninventory:\n"
	tests := []struct {
		name, src, want string
		is              error
	}{
		{"two torches directly in one pack", hp + "- Pack\n  - Torch\n  - 2 torches\n",
			`party/x.md:5: items: duplicate item: "Torch" on line 4 and "torches" on line 5, both in Pack`, sheet.ErrDuplicateItem},
		{"too deep", deep, "party/x.md:12: items: \"Box\" is 9 lists deep, out of range: at most 8", sheet.ErrRange},
		{"in: an unknown item", fm + "  - {name: Rope, in: Sack}\n---\n", `party/x.md:5: items: in: no such item "Sack" to hold Rope`, sheet.ErrUnknownItem},
		{"in: itself", fm + "  - {name: Sack, in: Box}\n  - {name: Box, in: Sack}\n---\n", "party/x.md:5: items: in: Sack is in itself", nil},
		{"in: empty", fm + "  - {name: Rope, in: }\n---\n", "party/x.md:5: items: in: want the name of the item it is in, like in: Explorer's pack", nil},
		{"contents: not a list", fm + "  - {name: Sack, contents: rope}\n---\n", "party/x.md:5: items: contents: want a list of items such as - {name: Longsword, quantity: 1}", nil},
		{"duplicate in frontmatter contents", fm + "  - name: Sack\n    contents: [Rope, ropes]\n---\n", `party/x.md:6: items: duplicate item: "Rope" on line 6 and "ropes" on line 6, both in Sack`, sheet.ErrDuplicateItem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse = nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse = %q, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse = %v, want errors.Is %v", err, tt.is)
			}
		})
	}
}

// TestNestedChange uses and adds items in containers and checks the lines
// that change: only the changed line's characters move, indentation and
// bullet kept.
func TestNestedChange(t *testing.T) {
	use := func(name string, n int) func(*sheet.Doc) error {
		return func(d *sheet.Doc) error { _, err := d.ChangeItem(name, -n); return err }
	}
	add := func(in, name string, n int) func(*sheet.Doc) error {
		return func(d *sheet.Doc) error { _, err := d.AddItemTo(in, name, n, ""); return err }
	}
	const fm = "---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Belt pouch\n  - {name: Candle, quantity: 2, in: Belt pouch}\n  - name: Sack\n    contents:\n      - Torch\n      - Rope\n---\n"
	tests := []struct {
		name, src string
		change    func(*sheet.Doc) error
		want      []string
	}{
		{"a qualified name", nestedSheet, use("dungeoneers-pack/torch", 3),
			[]string{"-    - 10 torches\n", "+    - 7 torches\n"}},
		{"a name held once", nestedSheet, use("bedroll", 1),
			[]string{"-  - Bedroll\n"}},
		{"a word of a name held once", nestedSheet, use("candle", 1),
			[]string{"-  * 2 candles\n", "+  * 1 candle\n"}},
		{"a container emptied keeps its line", nestedSheet, use("candles", 2),
			[]string{"-  * 2 candles\n"}},
		{"a container by its name", nestedSheet, use("explorers-pack/rations", 1),
			[]string{"-  - Rations (5 days)\n"}},
		{"a container's count", nestedSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("explorers pack", 1); return err },
			[]string{"-- Explorer's pack, containing:\n", "+- Explorer's pack, containing (x2):\n"}},
		{"added after the last item of a container", nestedSheet, add("dungeoneers-pack", "Crowbar", 1),
			[]string{"+    - Crowbar\n"}},
		{"added with the container's bullet", nestedSheet, add("belt pouch", "Chalk", 3),
			[]string{"+  * 3 Chalk\n"}},
		{"added to a container held once", nestedSheet, add("", "Tinderbox", 1),
			[]string{"-    - Tinderbox\n", "+    - Tinderbox (x2)\n"}},
		{"added by a qualified name", nestedSheet, add("", "explorers-pack/torch", 2),
			[]string{"-  - 10 torches\n", "+  - 12 torches\n"}},
		{"added to an empty container", "| **HP** | 8 |\n## Equipment\n- Sack\n- Shield\n", add("sack", "Rope", 1),
			[]string{"+  - Rope\n"}},
		{"added to a tab-indented container", "| **HP** | 8 |\n## Equipment\n- Sack\n\t- Rope\n- Shield\n", add("sack", "Chalk", 1),
			[]string{"+\t- Chalk\n"}},
		{"three levels deep", "| **HP** | 8 |\n## Equipment\n- Chest\n  - Pack\n    - Pouch\n      - 3 gems\n", use("pack/pouch/gem", 1),
			[]string{"-      - 3 gems\n", "+      - 2 gems\n"}},
		{"top level by a slash", "| **HP** | 8 |\n## Equipment\n- 2 torches\n- Pack\n  - Torch\n", use("/torch", 1),
			[]string{"-- 2 torches\n", "+- 1 torch\n"}},
		{"frontmatter: in contents", fm, use("sack/torch", 1),
			[]string{"-      - Torch\n"}},
		{"frontmatter: in by in:", fm, use("candle", 1),
			[]string{"-  - {name: Candle, quantity: 2, in: Belt pouch}\n", "+  - {name: Candle, quantity: 1, in: Belt pouch}\n"}},
		{"frontmatter: added with in:", fm, add("sack", "Chalk", 1),
			[]string{"+  - name: Chalk\n", "+    quantity: 1\n", "+    in: Sack\n"}},
		{"frontmatter: added with in: to a list of strings", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - Sack\n  - Two daggers\n---\n", add("sack", "Chalk", 2),
			[]string{"+  - {name: Chalk, quantity: 2, in: Sack}\n"}},
		{"frontmatter: added with in: to a flow list", "---\nhp: 3\nmax_hp: 5\ninventory: [Sack, {name: Rope, in: Sack}]\n---\n", add("sack", "Chalk", 1),
			[]string{"-inventory: [Sack, {name: Rope, in: Sack}]\n", "+inventory: [Sack, {name: Rope, in: Sack}, {name: Chalk, quantity: 1, in: Sack}]\n"}},
		{"frontmatter: used up in a flow contents list", "---\nhp: 3\nmax_hp: 5\ninventory: [{name: Sack, contents: [Torch, Rope]}, Rope]\n---\n", use("sack/rope", 1),
			[]string{"-inventory: [{name: Sack, contents: [Torch, Rope]}, Rope]\n", "+inventory: [{name: Sack, contents: [Torch]}, Rope]\n"}},
		{"frontmatter: a count in contents", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Sack\n    contents:\n      - name: Torch\n---\n", use("torch", -2),
			[]string{"+        quantity: 3\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if err := tt.change(d); err != nil {
				t.Fatalf("change: %v", err)
			}
			got := string(d.Bytes())
			if diff := cmp.Diff(tt.want, lineDiff(tt.src, got)); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s\ntext now:\n%s", diff, got)
			}
			again, err := sheet.Parse("party/x.md", d.Bytes())
			if err != nil {
				t.Fatalf("Parse(Bytes()) = %v", err)
			}
			if diff := cmp.Diff(d.Sheet, again.Sheet, errText); diff != "" {
				t.Errorf("Parse(Bytes()) (-doc +reread):\n%s", diff)
			}
		})
	}
}

// TestNestedRefused checks the changes that are refused: a name in two
// containers, a container that still holds items; nothing changes.
func TestNestedRefused(t *testing.T) {
	tests := []struct {
		name   string
		change func(*sheet.Doc) error
		want   string
		is     error
	}{
		{"a name in two packs", func(d *sheet.Doc) error { _, err := d.ChangeItem("torch", -1); return err },
			`party/x.md: items: ambiguous item "torch": it could be torches in Explorer's pack (line 9), torches in Dungeoneer's pack (line 12); say which, as explorers-pack/torches or dungeoneers-pack/torches`, sheet.ErrAmbiguous},
		{"added by a name in two packs", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			`party/x.md: items: ambiguous item "Torch": it could be torches in Explorer's pack (line 9), torches in Dungeoneer's pack (line 12); say which, as explorers-pack/torches or dungeoneers-pack/torches`, sheet.ErrAmbiguous},
		{"a container that holds items", func(d *sheet.Doc) error { _, err := d.ChangeItem("belt pouch", -1); return err },
			"party/x.md:14: items: Belt pouch: holds items: candles; use them up, or edit the sheet", sheet.ErrNotEmpty},
		{"an unknown container", func(d *sheet.Doc) error { _, err := d.AddItemTo("chest", "Rope", 1, ""); return err },
			`party/x.md: items: in: no such item "chest"`, sheet.ErrUnknownItem},
		{"a qualified name with a count", func(d *sheet.Doc) error { _, err := d.AddItem("explorers-pack/2 torches", 1, ""); return err },
			`party/x.md: items: "2 torches" carries a count: pass the name without it and the quantity`, nil},
		{"in a pack it is not in", func(d *sheet.Doc) error { _, err := d.ChangeItem("belt-pouch/torch", -1); return err },
			`party/x.md: items: no such item "belt-pouch/torch"`, sheet.ErrUnknownItem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(nestedSheet))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			err = tt.change(d)
			if err == nil || err.Error() != tt.want {
				t.Errorf("change = %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("change = %v, want errors.Is %v", err, tt.is)
			}
			if string(d.Bytes()) != nestedSheet {
				t.Errorf("a refused change changed the text:\n%s", d.Bytes())
			}
		})
	}
}
