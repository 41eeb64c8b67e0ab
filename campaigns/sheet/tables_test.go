package sheet_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestTablesChange applies methods to tables-layout sheets and checks the
// lines that changed, and that the text reads back as the Doc says.
func TestTablesChange(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n"
	tests := []struct {
		name, src string
		change    func(*sheet.Doc) error
		want      []string
	}{
		{"one number for hp and max", "| **HP** | 8 |\n", func(d *sheet.Doc) error { return d.SetHP(3) },
			[]string{"-| **HP** | 8 |\n", "+| **HP** | 3/8 |\n"}},
		{"bold line", "**Hit Points**: 8/8 (1d8 hit dice)\n", func(d *sheet.Doc) error { _, _, err := d.Damage(2); return err },
			[]string{"-**Hit Points**: 8/8 (1d8 hit dice)\n", "+**Hit Points**: 6/8 (1d8 hit dice)\n"}},
		{"bold value", "| **Hit Points** | **8 / 8** |\n", func(d *sheet.Doc) error { return d.SetMaxHP(12) },
			[]string{"-| **Hit Points** | **8 / 8** |\n", "+| **Hit Points** | **8 / 12** |\n"}},
		{"first hit points row counts", hp + "| **Hit Points** | 4/4 |\n", func(d *sheet.Doc) error { return d.SetHP(1) },
			[]string{"-" + hp, "+| **Hit Points** | 1/8 |\n"}},
		{"modifier beside the score", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 15 (+2) | 13 (+1) | 14 (+2) | 8 (-1) | 12 (+1) | 10 (+0) |\n",
			func(d *sheet.Doc) error { return d.SetAbility("wisdom", 7) },
			[]string{"-| 15 (+2) | 13 (+1) | 14 (+2) | 8 (-1) | 12 (+1) | 10 (+0) |\n", "+| 15 (+2) | 13 (+1) | 14 (+2) | 8 (-1) | 7 (-2) | 10 (+0) |\n"}},
		{"modifier row with a minus sign", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 15 | 13 | 14 | 8 | 12 | 10 |\n| +2 | +1 | +2 | −1 | +1 | +0 |\n",
			func(d *sheet.Doc) error { return d.SetAbility("int", 12) },
			[]string{"-| 15 | 13 | 14 | 8 | 12 | 10 |\n", "-| +2 | +1 | +2 | −1 | +1 | +0 |\n", "+| 15 | 13 | 14 | 12 | 12 | 10 |\n", "+| +2 | +1 | +2 | +1 | +1 | +0 |\n"}},
		{"short modifier row", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 7 | 14 | 11 | 10 | 14 | 13 |\n| -2 | +2 |\n",
			func(d *sheet.Doc) error { return d.SetAbility("str", 18) },
			[]string{"-| 7 | 14 | 11 | 10 | 14 | 13 |\n", "-| -2 | +2 |\n", "+| 18 | 14 | 11 | 10 | 14 | 13 |\n", "+| +4 | +2 |\n"}},
		{"short modifier row, an ability it lacks", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 7 | 14 | 11 | 10 | 14 | 13 |\n| -2 | +2 |\n",
			func(d *sheet.Doc) error { return d.SetAbility("cha", 8) },
			[]string{"-| 7 | 14 | 11 | 10 | 14 | 13 |\n", "+| 7 | 14 | 11 | 10 | 14 | 8 |\n"}},
		{"abilities one per row", hp + "| Ability | Score |\n|---|---|\n| **STR** | 15 |\n| **DEX** | 13 |\n| **CON** | 14 |\n| **INT** | 8 |\n| **WIS** | 12 |\n| **CHA** | 10 (+0) |\n",
			func(d *sheet.Doc) error { return d.SetAbility("CHA", 14) },
			[]string{"-| **CHA** | 10 (+0) |\n", "+| **CHA** | 14 (+2) |\n"}},
		{"existing item by singular", hp + "## Equipment\n- Two daggers\n", func(d *sheet.Doc) error { _, err := d.AddItem("Dagger", 1, "ignored"); return err },
			[]string{"-- Two daggers\n", "+- 3 daggers\n"}},
		{"item after the last of the section", hp + "## Equipment\n### Worn\n* Shield\n\n## Notes\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"+* Torch\n"}},
		{"pack contents without items", hp + "## Equipment\n### Pack Contents\n\n### Currency\n5 gp\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 2, ""); return err },
			[]string{"+- 2 Torch\n"}},
		{"equipment without items", hp + "## Equipment\n\n### Currency\n5 gp\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, "spare"); return err },
			[]string{"+### Pack Contents\n", "+- Torch — spare\n", "+\n"}},
		{"no equipment", "# Corwin\n\n" + hp, func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"+\n", "+## Equipment\n", "+\n", "+### Pack Contents\n", "+- Torch\n"}},
		{"no final newline", hp + "## Equipment\n- Shield", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			[]string{"-- Shield", "+- Shield\n", "+- Torch\n", "+"}},
		{"a count that reads as a unit", hp + "## Equipment\n- Shield\n", func(d *sheet.Doc) error { _, err := d.AddItem("ft of chain", 3, ""); return err },
			[]string{"+- ft of chain (x3)\n"}},
		{"item with lines under it", hp + "## Equipment\n- Pack\n  worn at the seams\n  smells of smoke\n\n- Shield\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("pack", -1); return err },
			[]string{"-- Pack\n", "-  worn at the seams\n", "-  smells of smoke\n"}},
		{"coin added", hp + "### Currency\n15 gp\n", func(d *sheet.Doc) error { return d.SetCurrency("silver", 3) },
			[]string{"-15 gp\n", "+15 gp, 3 sp\n"}},
		{"coin written in words", hp + "### Currency\n- 1,500 gold pieces\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 1450) },
			[]string{"-- 1,500 gold pieces\n", "+- 1,450 gold pieces\n"}},
		{"currency section without coins", hp + "### Currency\nNone yet.\n\n## Notes\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 2) },
			[]string{"+2 gp\n"}},
		{"no currency section", hp + "## Equipment\n- Shield\n\n## Notes\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 2) },
			[]string{"+### Currency\n", "+2 gp\n", "+\n"}},
		{"no currency at all", hp, func(d *sheet.Doc) error { return d.SetCurrency("cp", 9) },
			[]string{"+\n", "+## Equipment\n", "+\n", "+### Currency\n", "+9 cp\n"}},
		{"CRLF", "| **Hit Points** | 8/8 |\r\n## Equipment\r\n- Shield\r\n", func(d *sheet.Doc) error {
			if _, _, err := d.Damage(1); err != nil {
				return err
			}
			_, err := d.AddItem("Torch", 1, "")
			return err
		}, []string{"-| **Hit Points** | 8/8 |\r\n", "+| **Hit Points** | 7/8 |\r\n", "+- Torch\r\n"}},
		{"code blocks and comments are not read", "```\n| **Hit Points** | 1/1 |\n```\n<!--\n| **Hit Points** | 2/2 |\n-->\n" + hp, func(d *sheet.Doc) error { return d.SetHP(4) },
			[]string{"-" + hp, "+| **Hit Points** | 4/8 |\n"}},
		{"a rule above the sheet", "---\n**Player**: Human\n---\n" + hp, func(d *sheet.Doc) error { return d.SetHP(4) },
			[]string{"-" + hp, "+| **Hit Points** | 4/8 |\n"}},

		// Hit points and their maximum as people write them.
		{"max in parentheses", "**Hit Points**: 12 (max 14)\n", func(d *sheet.Doc) error { _, _, err := d.Damage(2); return err },
			[]string{"-**Hit Points**: 12 (max 14)\n", "+**Hit Points**: 10 (max 14)\n"}},
		{"max in parentheses raised", "**Hit Points**: 12 (max 14)\n", func(d *sheet.Doc) error { return d.SetMaxHP(16) },
			[]string{"-**Hit Points**: 12 (max 14)\n", "+**Hit Points**: 12 (max 16)\n"}},
		{"of", "**HP**: 7 of 12\n", func(d *sheet.Doc) error {
			if _, _, err := d.Damage(2); err != nil {
				return err
			}
			_, _, err := d.Heal(1)
			return err
		}, []string{"-**HP**: 7 of 12\n", "+**HP**: 6 of 12\n"}},
		{"out of", "| **HP** | 7 out of 12 |\n", func(d *sheet.Doc) error { _, _, err := d.Heal(10); return err },
			[]string{"-| **HP** | 7 out of 12 |\n", "+| **HP** | 12 out of 12 |\n"}},
		{"max row: damage changes hit points only", "| **Hit Points** | 12 |\n| **Max HP** | 14 |\n", func(d *sheet.Doc) error { _, _, err := d.Damage(2); return err },
			[]string{"-| **Hit Points** | 12 |\n", "+| **Hit Points** | 10 |\n"}},
		{"max row: SetMaxHP changes the row", "| **Hit Points** | 12 |\n| **Max HP** | 14 |\n", func(d *sheet.Doc) error { return d.SetMaxHP(16) },
			[]string{"-| **Max HP** | 14 |\n", "+| **Max HP** | 16 |\n"}},
		{"max row: SetMaxHP below hit points", "| **Hit Points** | 12 |\n| **Max HP** | 14 |\n", func(d *sheet.Doc) error { return d.SetMaxHP(10) },
			[]string{"-| **Hit Points** | 12 |\n", "-| **Max HP** | 14 |\n", "+| **Hit Points** | 10 |\n", "+| **Max HP** | 10 |\n"}},
		{"max line before hit points", "**Maximum Hit Points**: 14\n**Hit Points**: 12\n", func(d *sheet.Doc) error { _, _, err := d.Heal(5); return err },
			[]string{"-**Hit Points**: 12\n", "+**Hit Points**: 14\n"}},
		{"max beside and on a row", "| **Hit Points** | 12/14 |\n| **HP Max** | 14 |\n", func(d *sheet.Doc) error { return d.SetMaxHP(15) },
			[]string{"-| **Hit Points** | 12/14 |\n", "-| **HP Max** | 14 |\n", "+| **Hit Points** | 12/15 |\n", "+| **HP Max** | 15 |\n"}},

		// Levels as ordinals, and out of 1 to 20.
		{"ordinal level", "| **Level** | 3rd |\n" + hp, func(d *sheet.Doc) error { return d.SetLevel(4) },
			[]string{"-| **Level** | 3rd |\n", "+| **Level** | 4th |\n"}},
		{"ordinal level 1st", "| **Level** | 3rd |\n" + hp, func(d *sheet.Doc) error { return d.SetLevel(1) },
			[]string{"-| **Level** | 3rd |\n", "+| **Level** | 1st |\n"}},
		{"ordinal level 12th", "| **Level** | 3rd (Champion) |\n" + hp, func(d *sheet.Doc) error { return d.SetLevel(12) },
			[]string{"-| **Level** | 3rd (Champion) |\n", "+| **Level** | 12th (Champion) |\n"}},
		{"ordinal level in capitals", "**Level**: 3RD\n" + hp, func(d *sheet.Doc) error { return d.SetLevel(2) },
			[]string{"-**Level**: 3RD\n", "+**Level**: 2ND\n"}},
		{"level 21 does not stop damage", "| **Level** | 21 |\n" + hp, func(d *sheet.Doc) error { _, _, err := d.Damage(3); return err },
			[]string{"-" + hp, "+| **Hit Points** | 5/8 |\n"}},
		{"level 21 set to 20", "| **Level** | 21 |\n" + hp, func(d *sheet.Doc) error { return d.SetLevel(20) },
			[]string{"-| **Level** | 21 |\n", "+| **Level** | 20 |\n"}},
		{"ability above 30", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 32 | 14 | 11 | 10 | 14 | 13 |\n",
			func(d *sheet.Doc) error { return d.SetAbility("dex", 16) },
			[]string{"-| 32 | 14 | 11 | 10 | 14 | 13 |\n", "+| 32 | 16 | 11 | 10 | 14 | 13 |\n"}},

		// Coins as people write them: changed where written, added in their style.
		{"gold line", hp + "### Currency\n**Gold**: 10\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 8) },
			[]string{"-**Gold**: 10\n", "+**Gold**: 8\n"}},
		{"gold lines, coin added", hp + "### Currency\n- **Gold**: 10\n- **Silver**: 4\n\n## Notes\n", func(d *sheet.Doc) error { return d.SetCurrency("pp", 1) },
			[]string{"+- **Platinum**: 1\n"}},
		{"lower-case label, coin added", hp + "### Currency\ngold: 10\n", func(d *sheet.Doc) error { return d.SetCurrency("sp", 3) },
			[]string{"+silver: 3\n"}},
		{"labels on one line", hp + "### Currency\nGP: 10, SP: 4\n", func(d *sheet.Doc) error { return d.SetCurrency("silver", 5) },
			[]string{"-GP: 10, SP: 4\n", "+GP: 10, SP: 5\n"}},
		{"labels on one line, coin added", hp + "### Currency\nGP: 10, SP: 4\n", func(d *sheet.Doc) error { return d.SetCurrency("copper", 2) },
			[]string{"-GP: 10, SP: 4\n", "+GP: 10, SP: 4, CP: 2\n"}},
		{"coin columns", hp + "### Currency\n| GP | SP |\n|:--:|:--:|\n| 10 | 4 |\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 12) },
			[]string{"-| 10 | 4 |\n", "+| 12 | 4 |\n"}},
		{"coin columns, coin added", hp + "### Currency\n| GP | SP |\n|:--:|:--:|\n| 10 | 4 |\n", func(d *sheet.Doc) error { return d.SetCurrency("pp", 1) },
			[]string{"-| GP | SP |\n", "-|:--:|:--:|\n", "-| 10 | 4 |\n", "+| GP | SP | PP |\n", "+|:--:|:--:|:--:|\n", "+| 10 | 4 | 1 |\n"}},
		{"coin columns, a dash", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 | - |\n", func(d *sheet.Doc) error { return d.SetCurrency("sp", 3) },
			[]string{"-| 10 | - |\n", "+| 10 | 3 |\n"}},
		{"coin columns, an empty cell", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 | |\n", func(d *sheet.Doc) error { return d.SetCurrency("sp", 3) },
			[]string{"-| 10 | |\n", "+| 10 | 3 |\n"}},
		{"coin rows", hp + "### Currency\n| Coin | Amount |\n|---|---|\n| Gold | 10 |\n| Silver | 4 |\n", func(d *sheet.Doc) error { return d.SetCurrency("sp", 0) },
			[]string{"-| Silver | 4 |\n", "+| Silver | 0 |\n"}},
		{"coin rows, coin added", hp + "### Currency\n| Coin | Amount |\n|---|---|\n| Gold | 10 |\n| Silver | 4 |\n", func(d *sheet.Doc) error { return d.SetCurrency("cp", 3) },
			[]string{"+| Copper | 3 |\n"}},
		{"coins in words, added in words", hp + "### Currency\n1,500 gold pieces\n", func(d *sheet.Doc) error { return d.SetCurrency("sp", 3) },
			[]string{"-1,500 gold pieces\n", "+1,500 gold pieces, 3 silver pieces\n"}},
		{"no gold written as a dash", hp + "### Currency\n**Gold**: -\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 5) },
			[]string{"-**Gold**: -\n", "+**Gold**: 5\n"}},

		// A count in parentheses right after the name.
		{"count in parentheses", hp + "## Equipment\n- Rations (5)\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("rations", -1); return err },
			[]string{"-- Rations (5)\n", "+- Rations (4)\n"}},
		{"count in parentheses, added to", hp + "## Equipment\n- Rations (5) — dried\n", func(d *sheet.Doc) error { _, err := d.AddItem("Ration", 2, ""); return err },
			[]string{"-- Rations (5) — dried\n", "+- Rations (7) — dried\n"}},
		{"count in parentheses, used up", hp + "## Equipment\n- Rations (1)\n- Torch\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("ration", -1); return err },
			[]string{"-- Rations (1)\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if d.Layout != sheet.Tables {
				t.Errorf("Layout = %v, want tables", d.Layout)
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

// TestAddItemEmptyPart adds an item to a sheet whose Equipment holds
// no item yet but a part for gear, as the template's empty "###
// Worn/Carried": the item goes under that heading, no heading is added.
func TestAddItemEmptyPart(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n"
	tests := []struct {
		name, src, want, section string
	}{
		{"the template's", hp + "## Equipment\n\n### Worn/Carried\n\n### Currency\n- 10 gp\n",
			hp + "## Equipment\n\n### Worn/Carried\n- Rope\n\n### Currency\n- 10 gp\n", "Worn/Carried"},
		{"the one for gear in general, not notes", hp + "## Equipment\n### Notes\n- keep it dry\n### Attuned\n### Gear\n<!-- what they carry -->\n### Currency\n5 gp\n",
			hp + "## Equipment\n### Notes\n- keep it dry\n### Attuned\n### Gear\n- Rope\n\n<!-- what they carry -->\n### Currency\n5 gp\n", "Gear"},
		{"the first when none names gear", hp + "## Equipment\n### Weapons\n### Armor\n",
			hp + "## Equipment\n### Weapons\n- Rope\n\n### Armor\n", "Weapons"},
		{"at the end of the file", hp + "## Equipment\n### Worn/Carried",
			hp + "## Equipment\n### Worn/Carried\n- Rope\n", "Worn/Carried"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			it, err := d.AddItem("Rope", 1, "")
			if err != nil {
				t.Fatalf("AddItem(Rope) = %v", err)
			}
			if it.Section != tt.section {
				t.Errorf("AddItem(Rope) section = %q, want %q", it.Section, tt.section)
			}
			if diff := cmp.Diff(tt.want, string(d.Bytes())); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTablesRead reads the ways people write hit points, levels, ability
// scores, coins and counts in the tables layout.
func TestTablesRead(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n"
	type read struct {
		HP, MaxHP, Level int
		STR              int
		Currency         []sheet.Coin
		Items            []item
	}
	coins := func(c ...any) []sheet.Coin {
		var out []sheet.Coin
		for i := 0; i+1 < len(c); i += 2 {
			out = append(out, sheet.Coin{Denom: c[i].(string), Amount: c[i+1].(int)})
		}
		return out
	}
	tests := []struct {
		name, src string
		want      read
	}{
		{"max in parentheses", "**Hit Points**: 12 (max 14)\n", read{HP: 12, MaxHP: 14}},
		{"of", "**HP**: 7 of 12\n", read{HP: 7, MaxHP: 12}},
		{"out of", "| **HP** | 7 out of 12 |\n", read{HP: 7, MaxHP: 12}},
		{"maximum with a colon", "| **Hit Points** | 12 (maximum: 14) |\n", read{HP: 12, MaxHP: 14}},
		{"max HP in parentheses", "| **Hit Points** | 12 (Max HP 14) |\n", read{HP: 12, MaxHP: 14}},
		{"max after the number", "| **Hit Points** | 12 (14 max) |\n", read{HP: 12, MaxHP: 14}},
		{"max after a comma", "**Hit Points**: 12, max 14\n", read{HP: 12, MaxHP: 14}},
		{"of in parentheses", "**Hit Points**: 12 (of 14)\n", read{HP: 12, MaxHP: 14}},
		{"a note without a maximum", "| **Hit Points** | 8 (1d8 hit dice) |\n", read{HP: 8, MaxHP: 8}},
		{"Max HP row", "| **Hit Points** | 12 |\n| **Max HP** | 14 |\n", read{HP: 12, MaxHP: 14}},
		{"Maximum Hit Points row first", "| **Maximum Hit Points** | 14 |\n| **Hit Points** | 12 |\n", read{HP: 12, MaxHP: 14}},
		{"HP Max line", "**HP**: 12\n**HP Max**: 14\n", read{HP: 12, MaxHP: 14}},
		{"Max Hit Points row in bold", "| **Hit Points** | 12 |\n| **Max Hit Points** | **14** |\n", read{HP: 12, MaxHP: 14}},
		{"max beside and on a row, the same", "| **Hit Points** | 12/14 |\n| **Max HP** | 14 |\n", read{HP: 12, MaxHP: 14}},

		{"ordinal level", "| **Level** | 3rd |\n" + hp, read{HP: 8, MaxHP: 8, Level: 3}},
		{"ordinal level with a note", "| **Level** | 1st (Champion) |\n" + hp, read{HP: 8, MaxHP: 8, Level: 1}},
		{"level 21", "| **Level** | 21 |\n" + hp, read{HP: 8, MaxHP: 8, Level: 21}},
		{"level 22nd", "| **Level** | 22nd |\n" + hp, read{HP: 8, MaxHP: 8, Level: 22}},
		{"ability above 30", hp + "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 32 | 14 | 11 | 10 | 14 | 13 |\n", read{HP: 8, MaxHP: 8, STR: 32}},
		{"ability above 30, one per row", hp + "| **STR** | 31 |\n| **DEX** | 1 |\n| **CON** | 1 |\n| **INT** | 1 |\n| **WIS** | 1 |\n| **CHA** | 1 |\n", read{HP: 8, MaxHP: 8, STR: 31}},

		{"coin lines", hp + "### Currency\n**Gold**: 10\n**Silver**: 4\n**Copper**: 3\n**Electrum**: 2\n**Platinum**: 1\n",
			read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4, "cp", 3, "ep", 2, "pp", 1)}},
		{"coin bullets, colon in bold", hp + "### Currency\n- **Gold:** 10\n- **Silver:** 4\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"coin labels on one line", hp + "### Currency\nGP: 10, SP: 4\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"coin labels without commas", hp + "### Currency\nGP: 10 SP: 4\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"coin label with its coin", hp + "### Currency\n**Gold**: 10 gp\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10)}},
		{"coin columns", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 | 4 |\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"coin columns with a label column", hp + "### Currency\n| | GP | SP | CP |\n|---|---|---|---|\n| Purse | 1,200 | - | |\n",
			read{HP: 8, MaxHP: 8, Currency: coins("gp", 1200, "sp", 0, "cp", 0)}},
		{"coin rows", hp + "### Currency\n| Gold | 10 |\n| Silver | 4 |\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"coin rows under a header", hp + "### Currency\n| Coin | Amount |\n|---|---|\n| Gold pieces | 10 |\n| Silver (sp) | **4** |\n",
			read{HP: 8, MaxHP: 8, Currency: coins("gp", 10, "sp", 4)}},
		{"no money: None", hp + "### Currency\nNone\n", read{HP: 8, MaxHP: 8}},
		{"no money: a dash", hp + "### Currency\n-\n", read{HP: 8, MaxHP: 8}},
		{"no gold: a dash", hp + "### Currency\n**Gold**: -\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 0)}},
		{"coins and an ordinal", hp + "### Currency\n15 gp (from the 2nd job)\n", read{HP: 8, MaxHP: 8, Currency: coins("gp", 15)}},

		{"counts in parentheses", hp + "## Equipment\n- Rations (5)\n- Arrows (x20)\n- Torches (3) — for the sewers\n- Holy water (flask) (2)\n",
			read{HP: 8, MaxHP: 8, Items: []item{{"Rations", 5, "", ""}, {"Arrows", 20, "", ""}, {"Torches", 3, "", "for the sewers"}, {"Holy water", 1, "", "(flask) (2)"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			got := read{HP: d.HP, MaxHP: d.MaxHP, Level: d.Level, STR: d.Abilities[0], Currency: d.Currency}
			for _, it := range d.Items {
				got.Items = append(got.Items, item{it.Name, it.Quantity, it.Section, it.Note})
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestTablesItemReturns(t *testing.T) {
	d, err := sheet.Parse("party/x.md", []byte(tableSheet))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ChangeItem("dagger", -1)
	want := sheet.Item{Name: "dagger", Slug: "dagger", Quantity: 1, Section: "Worn/Carried", Line: 16}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("ChangeItem(dagger, -1) = %+v, %v; want %+v", got, err, want)
	}
	got, err = d.AddItem("Rope", 1, "50 ft")
	want = sheet.Item{Name: "Rope", Slug: "rope", Quantity: 1, Section: "Worn/Carried", Note: "50 ft", Line: 19}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("AddItem(Rope, 1, 50 ft) = %+v, %v; want %+v", got, err, want)
	}
	got, err = d.ChangeItem("climbing", -1)
	want = sheet.Item{Name: "Potion of climbing", Slug: "potion-of-climbing", Quantity: 0, Section: "Worn/Carried", Line: 18}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("ChangeItem(climbing, -1) = %+v, %v; want %+v", got, err, want)
	}
	from, to, err := d.Heal(100)
	if err != nil || from != 8 || to != 20 {
		t.Errorf("Heal(100) = %d, %d, %v; want 8, 20", from, to, err)
	}
}
