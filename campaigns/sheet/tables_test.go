package sheet_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
		{"item with lines under it", hp + "## Equipment\n- Pack\n  - rope\n  - 5 candles\n\n- Shield\n", func(d *sheet.Doc) error { _, err := d.ChangeItem("pack", -1); return err },
			[]string{"-- Pack\n", "-  - rope\n", "-  - 5 candles\n"}},
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
			if diff := cmp.Diff(d.Sheet, again.Sheet); diff != "" {
				t.Errorf("Parse(Bytes()) (-doc +reread):\n%s", diff)
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
