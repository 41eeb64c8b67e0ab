package sheet_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

const flowSheet = `---
name: tilda-brannock
level: 1
hp: 12
max_hp: 12
abilities: {str: 15, dex: 13, con: 14, int: 8, wis: 12, cha: 10}
inventory:
  - {name: Longsword, quantity: 1}
  - {name: Healing potion, quantity: 2, note: "heals 2d4+2"}
currency: {gp: 10, sp: 5}
---
# Tilda Brannock

Former corporal of the Flaming Fist. hp: 3 here is prose.
`

const blockSheet = `---
name: tilda-brannock
level: 1
hp: 12     # after the goblins
max_hp: 12
abilities:
  str: 15
  dex: 13
  con: 14
  int: 8
  wis: 12
  cha: 10
inventory:
  - name: Longsword
    quantity: 1
  - name: Healing potion
    quantity: 2
    note: heals 2d4+2
  - name: Rope
currency:
  gp: 10
  sp: 5
---
# Tilda Brannock
`

func TestFrontmatterRead(t *testing.T) {
	want := sheet.Sheet{
		Name: "tilda-brannock", Path: "party/tilda-brannock.md", Layout: sheet.Frontmatter,
		HP: 12, MaxHP: 12, Level: 1,
		Abilities: sheet.Abilities{15, 13, 14, 8, 12, 10},
		Items: []sheet.Item{
			{Name: "Longsword", Slug: "longsword", Quantity: 1, Line: 8},
			{Name: "Healing potion", Slug: "healing-potion", Quantity: 2, Note: "heals 2d4+2", Line: 9},
		},
		Currency: []sheet.Coin{{Denom: "gp", Amount: 10}, {Denom: "sp", Amount: 5}},
	}
	d, err := sheet.Parse("party/tilda-brannock.md", []byte(flowSheet))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, d.Sheet, errText); diff != "" {
		t.Errorf("Parse(flow sheet) (-want +got):\n%s", diff)
	}

	want.Items = []sheet.Item{
		{Name: "Longsword", Slug: "longsword", Quantity: 1, Line: 14},
		{Name: "Healing potion", Slug: "healing-potion", Quantity: 2, Note: "heals 2d4+2", Line: 16},
		{Name: "Rope", Slug: "rope", Quantity: 1, Line: 19},
	}
	d, err = sheet.Parse("party/tilda-brannock.md", []byte(blockSheet))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, d.Sheet, errText); diff != "" {
		t.Errorf("Parse(block sheet) (-want +got):\n%s", diff)
	}
}

// TestFrontmatterChange applies each method to frontmatter sheets and
// checks the lines that changed, and that the text reads back as the Doc
// says.
func TestFrontmatterChange(t *testing.T) {
	tests := []struct {
		name, src string
		change    func(*sheet.Doc) error
		want      []string
	}{
		{"flow SetHP", flowSheet, func(d *sheet.Doc) error { return d.SetHP(7) },
			[]string{"-hp: 12\n", "+hp: 7\n"}},
		{"flow Damage", flowSheet, func(d *sheet.Doc) error { _, _, err := d.Damage(20); return err },
			[]string{"-hp: 12\n", "+hp: 0\n"}},
		{"flow Heal", flowSheet, func(d *sheet.Doc) error {
			if err := d.SetHP(2); err != nil {
				return err
			}
			_, _, err := d.Heal(5)
			return err
		}, []string{"-hp: 12\n", "+hp: 7\n"}},
		{"flow SetMaxHP lowers hp", flowSheet, func(d *sheet.Doc) error { return d.SetMaxHP(10) },
			[]string{"-hp: 12\n", "-max_hp: 12\n", "+hp: 10\n", "+max_hp: 10\n"}},
		{"flow SetMaxHP raises", flowSheet, func(d *sheet.Doc) error { return d.SetMaxHP(20) },
			[]string{"-max_hp: 12\n", "+max_hp: 20\n"}},
		{"flow SetLevel", flowSheet, func(d *sheet.Doc) error { return d.SetLevel(3) },
			[]string{"-level: 1\n", "+level: 3\n"}},
		{"flow SetAbility", flowSheet, func(d *sheet.Doc) error { return d.SetAbility("Int", 9) },
			[]string{"-abilities: {str: 15, dex: 13, con: 14, int: 8, wis: 12, cha: 10}\n", "+abilities: {str: 15, dex: 13, con: 14, int: 9, wis: 12, cha: 10}\n"}},
		{"flow ChangeItem", flowSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("healing potions", -1); return err },
			[]string{"-  - {name: Healing potion, quantity: 2, note: \"heals 2d4+2\"}\n", "+  - {name: Healing potion, quantity: 1, note: \"heals 2d4+2\"}\n"}},
		{"flow ChangeItem to zero", flowSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("longsword", -1); return err },
			[]string{"-  - {name: Longsword, quantity: 1}\n"}},
		{"flow AddItem existing", flowSheet, func(d *sheet.Doc) error { _, err := d.AddItem("Longswords", 2, ""); return err },
			[]string{"-  - {name: Longsword, quantity: 1}\n", "+  - {name: Longsword, quantity: 3}\n"}},
		{"flow AddItem new", flowSheet, func(d *sheet.Doc) error { _, err := d.AddItem("Rope, hempen", 1, "50 ft"); return err },
			[]string{"+  - {name: \"Rope, hempen\", quantity: 1, note: 50 ft}\n"}},
		{"flow SetCurrency", flowSheet, func(d *sheet.Doc) error { return d.SetCurrency("gp", 125) },
			[]string{"-currency: {gp: 10, sp: 5}\n", "+currency: {gp: 125, sp: 5}\n"}},
		{"flow SetCurrency new coin", flowSheet, func(d *sheet.Doc) error { return d.SetCurrency("PP", 1) },
			[]string{"-currency: {gp: 10, sp: 5}\n", "+currency: {gp: 10, sp: 5, pp: 1}\n"}},

		{"block SetHP keeps the comment", blockSheet, func(d *sheet.Doc) error { return d.SetHP(5) },
			[]string{"-hp: 12     # after the goblins\n", "+hp: 5     # after the goblins\n"}},
		{"block SetAbility", blockSheet, func(d *sheet.Doc) error { return d.SetAbility("charisma", 11) },
			[]string{"-  cha: 10\n", "+  cha: 11\n"}},
		{"block ChangeItem", blockSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("potion", 3); return err },
			[]string{"-    quantity: 2\n", "+    quantity: 5\n"}},
		{"block ChangeItem without quantity", blockSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("rope", 1); return err },
			[]string{"+    quantity: 2\n"}},
		{"block ChangeItem to zero", blockSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("healing-potion", -2); return err },
			[]string{"-  - name: Healing potion\n", "-    quantity: 2\n", "-    note: heals 2d4+2\n"}},
		{"block AddItem new", blockSheet, func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 3, "for the sewers"); return err },
			[]string{"+  - name: Torch\n", "+    quantity: 3\n", "+    note: for the sewers\n"}},
		{"block SetCurrency new coin", blockSheet, func(d *sheet.Doc) error { return d.SetCurrency("cp", 40) },
			[]string{"+  cp: 40\n"}},

		{"no inventory key", "---\nhp: 3\nmax_hp: 5\n---\nprose\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"+inventory:\n", "+  - {name: Torch, quantity: 1}\n"}},
		{"empty inventory key", "---\nhp: 3\nmax_hp: 5\ninventory:\nlevel: 2\n---\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 2, ""); return err },
			[]string{"+  - {name: Torch, quantity: 2}\n"}},
		{"null inventory", "---\nhp: 3\nmax_hp: 5\ninventory: ~\n---\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 2, ""); return err },
			[]string{"-inventory: ~\n", "+inventory:\n", "+  - {name: Torch, quantity: 2}\n"}},
		{"empty flow inventory", "---\nhp: 3\nmax_hp: 5\ninventory: []\n---\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"-inventory: []\n", "+inventory: [{name: Torch, quantity: 1}]\n"}},
		{"flow inventory list remove middle", "---\nhp: 3\nmax_hp: 5\ninventory: [{name: A}, {name: B}, {name: C}]\n---\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("b", -1); return err },
			[]string{"-inventory: [{name: A}, {name: B}, {name: C}]\n", "+inventory: [{name: A}, {name: C}]\n"}},
		{"flow inventory list remove last", "---\nhp: 3\nmax_hp: 5\ninventory: [{name: A}, {name: B}]\n---\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("b", -1); return err },
			[]string{"-inventory: [{name: A}, {name: B}]\n", "+inventory: [{name: A}]\n"}},
		{"flow item without quantity", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - {name: Torch}\n---\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("torches", 2); return err },
			[]string{"-  - {name: Torch}\n", "+  - {name: Torch, quantity: 3}\n"}},
		{"string items", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - Two daggers\n  - Rope\n---\n", func(d *sheet.Doc) error {
			if _, err := d.ChangeItem("dagger", -1); err != nil {
				return err
			}
			_, err := d.AddItem("Torch", 3, "")
			return err
		}, []string{"-  - Two daggers\n", "+  - 1 dagger\n", "+  - 3 Torch\n"}},
		{"missing level and currency", "---\nhp: 3\nmax_hp: 5\n---\n", func(d *sheet.Doc) error {
			if err := d.SetLevel(4); err != nil {
				return err
			}
			return d.SetCurrency("gp", 7)
		}, []string{"+level: 4\n", "+currency: {gp: 7}\n"}},
		{"CRLF", "---\r\nhp: 3\r\nmax_hp: 5\r\n---\r\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"+inventory:\r\n", "+  - {name: Torch, quantity: 1}\r\n"}},
		{"level and ability above the rules do not stop damage", "---\nhp: 3\nmax_hp: 5\nlevel: 23\nabilities: {str: 32, dex: 1, con: 1, int: 1, wis: 1, cha: 1}\n---\n",
			func(d *sheet.Doc) error {
				if d.Level != 23 || d.Abilities[0] != 32 {
					return fmt.Errorf("Level, STR = %d, %d; want 23, 32", d.Level, d.Abilities[0])
				}
				_, _, err := d.Damage(1)
				return err
			}, []string{"-hp: 3\n", "+hp: 2\n"}},
		{"level above 20 set to 20", "---\nhp: 3\nmax_hp: 5\nlevel: 23\n---\n", func(d *sheet.Doc) error { return d.SetLevel(20) },
			[]string{"-level: 23\n", "+level: 20\n"}},
		{"string item with a count in parentheses", "---\nhp: 3\nmax_hp: 5\ninventory:\n  - Rations (5)\n---\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("rations", -2); return err },
			[]string{"-  - Rations (5)\n", "+  - Rations (3)\n"}},
		{"frontmatter without hp is left alone", "---\ntags: [pc]\n---\n| **Hit Points** | 4/9 |\n", func(d *sheet.Doc) error { return d.SetHP(9) },
			[]string{"-| **Hit Points** | 4/9 |\n", "+| **Hit Points** | 9/9 |\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/tilda-brannock.md", []byte(tt.src))
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
			again, err := sheet.Parse("party/tilda-brannock.md", d.Bytes())
			if err != nil {
				t.Fatalf("Parse(Bytes()) = %v", err)
			}
			if diff := cmp.Diff(d.Sheet, again.Sheet, errText); diff != "" {
				t.Errorf("Parse(Bytes()) (-doc +reread):\n%s", diff)
			}
		})
	}
}

// TestFrontmatterReturns checks what the item methods return.
func TestFrontmatterReturns(t *testing.T) {
	d, err := sheet.Parse("x.md", []byte(flowSheet))
	if err != nil {
		t.Fatal(err)
	}
	it, err := d.AddItem("Torch", 2, "")
	if err != nil || it.Name != "Torch" || it.Quantity != 2 || it.Line != 10 {
		t.Errorf("AddItem(Torch, 2) = %+v, %v; want Torch x2 on line 10", it, err)
	}
	it, err = d.ChangeItem("torch", -2)
	if err != nil || it.Quantity != 0 || it.Name != "Torch" {
		t.Errorf("ChangeItem(torch, -2) = %+v, %v; want Torch x0", it, err)
	}
	if strings.Contains(string(d.Bytes()), "Torch") {
		t.Errorf("the torch is still written:\n%s", d.Bytes())
	}
}

// TestFrontmatterSplit checks which layout each way of writing the
// frontmatter's delimiter lines gives (they are split as messages are,
// by mailbox.SplitFrontmatter), and that SetHP edits the hp line of each.
func TestFrontmatterSplit(t *testing.T) {
	const table = "| **Hit Points** | 4/9 |\n"
	for _, tt := range []struct {
		name, src string
		layout    sheet.Layout
		want      []string // lines SetHP(2) changes
	}{
		{"plain", "---\nhp: 3\nmax_hp: 5\n---\n# Tilda\n", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"byte order mark", "\uFEFF---\nhp: 3\nmax_hp: 5\n---\n# Tilda\n", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"CRLF closed by ...", "---\r\nhp: 3\r\nmax_hp: 5\r\n...\r\n# Tilda\r\n", sheet.Frontmatter,
			[]string{"-hp: 3\r\n", "+hp: 2\r\n"}},
		{"trailing spaces on the delimiters", "--- \nhp: 3\nmax_hp: 5\n---\t\n# Tilda\n", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"closing line without a line break", "---\nhp: 3\nmax_hp: 5\n---", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"closing line ending in a carriage return, without a line feed", "---\nhp: 3\nmax_hp: 5\n---\r", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"--- in the prose", "---\nhp: 3\nmax_hp: 5\n---\n# Tilda\n---\nhp: 7\n", sheet.Frontmatter,
			[]string{"-hp: 3\n", "+hp: 2\n"}},
		{"unclosed: read as tables", "---\ntags: [pc]\n" + table, sheet.Tables,
			[]string{"-| **Hit Points** | 4/9 |\n", "+| **Hit Points** | 2/9 |\n"}},
		{"empty frontmatter: read as tables", "---\n---\n" + table, sheet.Tables,
			[]string{"-| **Hit Points** | 4/9 |\n", "+| **Hit Points** | 2/9 |\n"}},
		{"indented opening line: no frontmatter", " ---\nhp: 3\n---\n" + table, sheet.Tables,
			[]string{"-| **Hit Points** | 4/9 |\n", "+| **Hit Points** | 2/9 |\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/tilda-brannock.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if d.Layout != tt.layout {
				t.Errorf("Parse: layout %v, want %v", d.Layout, tt.layout)
			}
			if err := d.SetHP(2); err != nil {
				t.Fatalf("SetHP(2) = %v", err)
			}
			if diff := cmp.Diff(tt.want, lineDiff(tt.src, string(d.Bytes()))); diff != "" {
				t.Errorf("SetHP(2): changed lines (-want +got):\n%s", diff)
			}
		})
	}
}
