package sheet_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// tableSheet is a small tables-layout sheet for the error tests.
const tableSheet = `# Corwin Voss

| | |
|---|---|
| **Level** | 3 |
| **Hit Points** | 8/20 |

| STR | DEX | CON | INT | WIS | CHA |
|:---:|:---:|:---:|:---:|:---:|:---:|
| 7 | 14 | 11 | 10 | 14 | 13 |
| -2 | +2 | +0 | +0 | +2 | +1 |

## Equipment

### Worn/Carried
- Two daggers
- Healing potion
- Potion of climbing

### Currency
15 gp
`

// TestParseErrors feeds Parse sheets that are wrong and checks the error:
// its sentinel, and its message naming file, line and field.
func TestParseErrors(t *testing.T) {
	hp := "| | |\n|---|---|\n| **Hit Points** | 8/8 |\n"
	tests := []struct {
		name, src string
		is        error // nil: only the message is checked
		want      string
	}{
		{"hit points as text", "# X\n\n| | |\n|---|---|\n| **Hit Points** | eight |\n", nil,
			`party/x.md:5: hit points: "eight" is not a number`},
		{"hit points empty", "| **Hit Points** |  |\n", nil,
			`party/x.md:1: hit points: empty: want current/max, like 8/12`},
		{"hit points half text", "**Hit Points**: 8/eight\n", nil,
			`party/x.md:1: hit points: "8/eight" is not a number`},
		{"no hit points", "# X\n\nNothing to see.\n", sheet.ErrNoHP,
			`party/x.md: no hit points anywhere: want a "| **Hit Points** | 8/8 |" row, or hp and max_hp in the frontmatter`},
		{"empty file", "", sheet.ErrNoHP, ""},
		{"hit points misspelt", "# X\n\n| | |\n|---|---|\n| **XP** | 300 |\n| **Hit Pionts** | 24 |\n", sheet.ErrNoHP,
			`party/x.md:6: hit points: no hit points anywhere: "Hit Pionts" is no label parley reads: did you mean "Hit Points"?`},
		{"hit points misspelt on a line", "# X\n\n- **Hitpoints:** 24\n", sheet.ErrNoHP,
			`party/x.md:3: hit points: no hit points anywhere: "Hitpoints" is no label parley reads: did you mean "Hit Points"?`},
		{"frontmatter hp in capitals", "---\nHP: 8\nmax_hp: 8\nxp: 300\n---\n# X\n", sheet.ErrNoHP,
			`party/x.md:2: hit points: no hit points anywhere: "HP" is no key parley reads: did you mean hp?`},
		{"frontmatter without hp", "---\nxp: 300\nmax_hp: 8\n---\n# X\n", sheet.ErrNoHP,
			`party/x.md:3: hit points: no hit points anywhere: max_hp on line 3 has no hp beside it`},
		{"frontmatter never closed", "---\nhp: 8\nmax_hp: 8\n\n# X\n", sheet.ErrNoHP,
			`party/x.md:1: frontmatter: no hit points anywhere: the frontmatter opened with --- on line 1 is never closed: end it with a --- line after its last key`},
		{"hit points in a code block only", "```\n| **Hit Points** | 8/8 |\n```\n", sheet.ErrNoHP, ""},
		{"max below 1", "| **Hit Points** | 0/0 |\n", sheet.ErrRange,
			`party/x.md:1: max hit points: 0 is out of range: want at least 1`},
		{"level as text", "| **Level** | one |\n" + hp, nil,
			`party/x.md:1: level: "one" is not a number`},
		{"level 3rd-ish", "| **Level** | 3rdish |\n" + hp, nil,
			`party/x.md:1: level: "3rdish" is not a number`},
		{"level of ten digits", "| **Level** | 1234567890 |\n" + hp, sheet.ErrRange,
			`party/x.md:1: level: 1234567890 is out of range: want 1 to 20`},
		{"hit points with a max in words", "**Hit Points**: 12 (max fourteen)\n", nil,
			`party/x.md:1: max hit points: cannot tell the maximum from "12 (max fourteen)": want current/max, like 8/12`},
		{"hit points of a max in words", "**HP**: 7 of twelve\n", nil,
			`party/x.md:1: max hit points: cannot tell the maximum from "7 of twelve": want current/max, like 8/12`},
		{"hit points with a bare number beside", "| **Hit Points** | 12 (14) |\n", nil,
			`party/x.md:1: max hit points: cannot tell the maximum from "12 (14)": want current/max, like 8/12`},
		{"hit points with two maxima", "**Hit Points**: 10/12 (max 14)\n", nil,
			`party/x.md:1: max hit points: cannot tell the maximum from "10/12 (max 14)": want current/max, like 8/12`},
		{"max row as text", "| **Hit Points** | 12 |\n| **Max HP** | lots |\n", nil,
			`party/x.md:2: max hit points: "lots" is not a number`},
		{"max row and max beside disagree", "| **Hit Points** | 12/14 |\n| **Max HP** | 16 |\n", nil,
			`party/x.md:2: max hit points: line 1 says 14 and line 2 says 16: cannot tell the maximum`},
		{"max row 0", "| **Hit Points** | 0 |\n| **Max HP** | 0 |\n", sheet.ErrRange,
			`party/x.md:2: max hit points: 0 is out of range: want at least 1`},
		{"currency that is not coins", hp + "### Currency\nabout 40 in gems\n", nil,
			`party/x.md:5: currency: "about 40 in gems" is not an amount of coins: want "15 gp, 3 sp" or "**Gold**: 15"`},
		{"currency labels without colons", hp + "### Currency\nGP 10, SP 4\n", nil,
			`party/x.md:5: currency: "GP 10, SP 4" is not an amount of coins: want "15 gp, 3 sp" or "**Gold**: 15"`},
		{"currency label with words", hp + "### Currency\n**Gold**: 10\n**Silver**: a few\n", nil,
			`party/x.md:6: currency: sp: "a few" is not a number`},
		{"currency label and coin disagree", hp + "### Currency\nGold: 10 sp\n", nil,
			`party/x.md:5: currency: "Gold: 10 sp": gp or sp?`},
		{"currency written twice in two styles", hp + "### Currency\n**Gold**: 10\n5 gp\n", nil,
			`party/x.md:6: currency: gp written twice, on lines 5 and 6`},
		{"currency column as text", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 | four |\n", nil,
			`party/x.md:7: currency: sp: "four" is not a number`},
		{"currency columns without amounts", hp + "### Currency\n| GP | SP |\n|---|---|\n\nNone.\n", nil,
			`party/x.md:5: currency: no row of amounts under the coins`},
		{"currency columns with two rows", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 | 4 |\n| 2 | 1 |\n", nil,
			`party/x.md:8: currency: a second row of amounts under the coins of line 5: want one`},
		{"currency columns, a short row", hp + "### Currency\n| GP | SP |\n|---|---|\n| 10 |\n", nil,
			`party/x.md:7: currency: the row of amounts has no sp cell`},
		{"currency row as text", hp + "### Currency\n| Gold | lots |\n", nil,
			`party/x.md:5: currency: gp: "lots" is not a number`},
		{"currency row that is not coins", hp + "### Currency\n| Gems | 3 |\n", nil,
			`party/x.md:5: currency: "| Gems | 3 |" is not an amount of coins: want "15 gp, 3 sp" or "**Gold**: 15"`},
		{"ability table without CHA", hp + "\n| STR | DEX | CON | INT | WIS |\n|---|---|---|---|---|\n| 7 | 14 | 11 | 10 | 14 |\n", nil,
			`party/x.md:5: abilities: the table has no CHA column`},
		{"ability table without INT and CHA", hp + "\n| STR | DEX | CON | WIS |\n|---|---|---|---|\n| 7 | 14 | 11 | 14 |\n", nil,
			`party/x.md:5: abilities: the table has no INT, CHA columns`},
		{"ability row too short", hp + "\n| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n| 7 | 14 | 11 |\n", nil,
			`party/x.md:7: INT: the row of scores has no INT cell`},
		{"ability score as text", hp + "\n| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n| seven | 14 | 11 | 10 | 14 | 13 |\n", nil,
			`party/x.md:7: STR: "seven" is not a number`},
		{"ability table without scores", hp + "\n| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n", nil,
			`party/x.md:5: abilities: no row of scores under the table's header`},
		{"duplicate items", hp + "## Equipment\n### Worn/Carried\n- Dagger\n### Pack Contents\n- 2 daggers\n", sheet.ErrDuplicateItem,
			`party/x.md:8: items: duplicate item: "Dagger" on line 6 and "daggers" on line 8`},
		{"coins twice", hp + "### Currency\n15 gp, 3 gp\n", nil,
			`party/x.md:5: currency: gp written twice, on lines 5 and 5`},
		{"too big", hp + strings.Repeat("x", sheet.MaxSize), sheet.ErrRange, ""},

		{"frontmatter hp as text", "---\nhp: eight\nmax_hp: 8\n---\n", nil,
			`party/x.md:2: hit points: "eight" is not a number`},
		{"frontmatter hp quoted", "---\nhp: \"8\"\nmax_hp: 8\n---\n", nil,
			`party/x.md:2: hit points: "8" is quoted: write the number without quotes`},
		{"frontmatter without max_hp", "---\nhp: 8\n---\n", nil,
			`party/x.md:2: max hit points: no max_hp beside hp`},
		{"frontmatter max_hp 0", "---\nhp: 0\nmax_hp: 0\n---\n", sheet.ErrRange,
			`party/x.md:3: max hit points: 0 is out of range: want 1 to 1000000000`},
		{"frontmatter abilities without cha", "---\nhp: 8\nmax_hp: 8\nabilities: {str: 15, dex: 13, con: 14, int: 8, wis: 12}\n---\n", nil,
			`party/x.md:4: abilities: no cha`},
		{"frontmatter abilities as a list", "---\nhp: 8\nmax_hp: 8\nabilities: [15, 13]\n---\n", nil,
			`party/x.md:4: abilities: want a mapping such as {str: 15, dex: 13, con: 14, int: 8, wis: 12, cha: 10}`},
		{"frontmatter inventory not a list", "---\nhp: 8\nmax_hp: 8\ninventory: sword\n---\n", nil,
			`party/x.md:4: items: want a list of items such as - {name: Longsword, quantity: 1}`},
		{"frontmatter item without name", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - {quantity: 2}\n---\n", nil,
			`party/x.md:5: items: an item has no name`},
		{"frontmatter quantity as text", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - {name: Rope, quantity: lots}\n---\n", nil,
			`party/x.md:5: items: "lots" is not a number`},
		{"frontmatter duplicate items", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - {name: Torch}\n  - {name: Torches, quantity: 2}\n---\n", sheet.ErrDuplicateItem,
			`party/x.md:6: items: duplicate item: "Torch" on line 5 and "Torches" on line 6`},
		{"frontmatter item with quantity and qty", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Arrows\n    quantity: 5\n    qty: 3\n---\n", nil,
			`party/x.md:7: items: quantity written twice, as quantity on line 6 and qty on line 7`},
		{"frontmatter flow item with qty and quantity", "---\nhp: 8\nmax_hp: 8\ninventory: [{name: Arrows, qty: 3,\n  quantity: 5}]\n---\n", nil,
			`party/x.md:5: items: quantity written twice, as qty on line 4 and quantity on line 5`},
		{"frontmatter item name twice", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Arrows\n    name: Bolts\n---\n", nil,
			`party/x.md:6: items: name written twice, on lines 5 and 6`},
		{"frontmatter key twice", "---\nhp: 8\nmax_hp: 8\nhp: 9\n---\n", nil,
			`party/x.md:4: hp: written twice, on lines 2 and 4`},
		{"frontmatter not yaml", "---\nhp: [8\nmax_hp: 8\n---\n", nil,
			`party/x.md:2: frontmatter: did not find expected ',' or ']'`},
		// yaml.v3 numbers its parser's lines from 0 and its scanner's
		// from 1, and gives where a list or mapping starts: each is
		// read back to the line a person has to look at.
		{"frontmatter brace left open", "---\nhp: 8\nmax_hp: 8\nlevel: 1\nabilities: {str: 10, dex: 10, con: 10, int: 10, wis: 10, cha: 10\ninventory: []\n---\n", nil,
			`party/x.md:5: frontmatter: did not find expected ',' or '}'`},
		{"frontmatter bracket left open on a later line", "---\nhp: 8\nmax_hp: 8\ninventory: [Rope,\n  Torch\ncurrency: {gp: 1}\n---\n", nil,
			`party/x.md:4: frontmatter: did not find expected ',' or ']'`},
		{"frontmatter item key indented too little", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Rope\n   quantity: 2\ncurrency: {gp: 1}\n---\n", nil,
			`party/x.md:6: frontmatter: did not find expected '-' indicator`},
		{"frontmatter item key indented too little, second entry", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Rope\n    quantity: 2\n  - name: Torch\n   quantity: 2\n---\n", nil,
			`party/x.md:8: frontmatter: did not find expected '-' indicator`},
		{"frontmatter item key at the list's indent", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Rope\n    quantity: 2\n qty: 3\n---\n", nil,
			`party/x.md:7: frontmatter: did not find expected key (indented unlike the keys beside it: line it up with them)`},
		{"frontmatter item key indented too far", "---\nhp: 8\nmax_hp: 8\ninventory:\n  - name: Rope\n     quantity: 2\n---\n", nil,
			`party/x.md:6: frontmatter: mapping values are not allowed in this context (indented further than the line above: line its key up with the keys beside it)`},
		{"frontmatter list entry among keys", "---\nhp: 8\nmax_hp: 8\n- Rope\n---\n", nil,
			`party/x.md:4: frontmatter: did not find expected key (a list item that does not fit where it is: put it under its list, indented as the items there are)`},
		// A person's slip said with the line (yamlerr.Hint), as in a
		// message header or parley.yaml.
		{"frontmatter value holding a colon", "---\nhp: 8\nmax_hp: 8\nbackground: Sailor: retired\n---\n", nil,
			`party/x.md:4: frontmatter: mapping values are not allowed in this context (a value holding ": " must be quoted: key: "a: b")`},
		{"frontmatter tab", "---\nhp: 8\nmax_hp: 8\n\tlevel: 1\n---\n", nil,
			`party/x.md:4: frontmatter: found a tab character that violates indentation`},
		{"frontmatter stray character", "---\nhp: 8\nmax_hp: 8\nlevel: @1\n---\n", nil,
			`party/x.md:4: frontmatter: found character that cannot start any token`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if strings.Contains(tt.want, ": currency: ") {
				// Money it cannot read does not stop the sheet: it is
				// reported in Unread, SetCurrency refuses, the rest works.
				if err != nil {
					t.Fatalf("Parse = %v, want the sheet read without its money", err)
				}
				if len(d.Unread) != 1 || d.Unread[0] != tt.want || d.Currency != nil {
					t.Errorf("Unread = %q, Currency = %v; want [%q] and none", d.Unread, d.Currency, tt.want)
				}
				if err := d.SetCurrency("gp", 1); !errors.Is(err, sheet.ErrUneditable) {
					t.Errorf("SetCurrency = %v, want ErrUneditable", err)
				}
				if _, _, err := d.Damage(1); err != nil {
					t.Errorf("Damage = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", d.Sheet)
			}
			var se *sheet.Error
			if !errors.As(err, &se) || se.Path != "party/x.md" {
				t.Errorf("Parse error = %#v, want a *sheet.Error for party/x.md", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse error = %v, want errors.Is %v", err, tt.is)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("Parse error =\n\t%s\nwant\n\t%s", err, tt.want)
			}
		})
	}
}

// TestMethodErrors calls each method with what it must refuse and checks
// the error and that the Doc is left as it was.
func TestMethodErrors(t *testing.T) {
	noLevel := "| **Hit Points** | 5/5 |\n"
	uneditable := "---\nhp: 8\nmax_hp: 8\ninventory:\n  -\n    name: Rope\n    quantity: 2\n---\n"
	tests := []struct {
		name, src string
		call      func(*sheet.Doc) error
		is        error
		want      string
	}{
		{"SetHP below 0", tableSheet, func(d *sheet.Doc) error { return d.SetHP(-1) }, sheet.ErrRange,
			"party/x.md:6: hit points: -1 is out of range: want 0 to 20"},
		{"SetHP above max", tableSheet, func(d *sheet.Doc) error { return d.SetHP(21) }, sheet.ErrRange, ""},
		{"SetMaxHP 0", tableSheet, func(d *sheet.Doc) error { return d.SetMaxHP(0) }, sheet.ErrRange,
			"party/x.md:6: max hit points: 0 is out of range: want 1 to 1000000000"},
		{"Damage negative", tableSheet, func(d *sheet.Doc) error { _, _, err := d.Damage(-2); return err }, sheet.ErrRange, ""},
		{"Heal negative", tableSheet, func(d *sheet.Doc) error { _, _, err := d.Heal(-2); return err }, sheet.ErrRange, ""},
		{"SetLevel 0", tableSheet, func(d *sheet.Doc) error { return d.SetLevel(0) }, sheet.ErrRange, ""},
		{"SetLevel 21", tableSheet, func(d *sheet.Doc) error { return d.SetLevel(21) }, sheet.ErrRange,
			"party/x.md:5: level: 21 is out of range: want 1 to 20"},
		{"SetLevel without a level", noLevel, func(d *sheet.Doc) error { return d.SetLevel(2) }, sheet.ErrMissing,
			"party/x.md: level: the sheet has no level row: not on the sheet"},
		{"SetAbility unknown", tableSheet, func(d *sheet.Doc) error { return d.SetAbility("luck", 10) }, nil,
			`party/x.md:10: abilities: unknown ability "luck": want str, dex, con, int, wis or cha`},
		{"SetAbility 31", tableSheet, func(d *sheet.Doc) error { return d.SetAbility("str", 31) }, sheet.ErrRange,
			"party/x.md:10: STR: 31 is out of range: want 1 to 30"},
		{"SetLevel 22 on a sheet at 21", "| **Level** | 21 |\n| **HP** | 5 |\n", func(d *sheet.Doc) error { return d.SetLevel(22) }, sheet.ErrRange,
			"party/x.md:1: level: 22 is out of range: want 1 to 20"},
		{"SetAbility 32 on a score of 31", "| **HP** | 5 |\n| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 31 | 14 | 11 | 10 | 14 | 13 |\n",
			func(d *sheet.Doc) error { return d.SetAbility("str", 32) }, sheet.ErrRange, "party/x.md:4: STR: 32 is out of range: want 1 to 30"},
		{"SetHP above the max row", "| **HP** | 5 |\n| **Max HP** | 9 |\n", func(d *sheet.Doc) error { return d.SetHP(10) }, sheet.ErrRange,
			"party/x.md:1: hit points: 10 is out of range: want 0 to 9"},
		{"SetAbility without abilities", noLevel, func(d *sheet.Doc) error { return d.SetAbility("str", 10) }, sheet.ErrMissing, ""},
		{"ChangeItem unknown", tableSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("rope", -1); return err }, sheet.ErrUnknownItem,
			`party/x.md: items: no such item "rope"`},
		{"ChangeItem below zero", tableSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("dagger", -3); return err }, sheet.ErrBelowZero,
			"party/x.md:16: items: daggers: 2 held, 3 to take: below zero"},
		{"ChangeItem ambiguous", tableSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("potion", 1); return err }, sheet.ErrAmbiguous,
			`party/x.md: items: ambiguous item "potion": it could be Healing potion (line 17), Potion of climbing (line 18)`},
		{"AddItem without a name", tableSheet, func(d *sheet.Doc) error { _, err := d.AddItem(" ", 1, ""); return err }, nil,
			"party/x.md: items: an item needs a name"},
		{"AddItem with a count", tableSheet, func(d *sheet.Doc) error { _, err := d.AddItem("3 torches", 1, ""); return err }, nil,
			`party/x.md: items: "3 torches" carries a count: pass the name without it and the quantity`},
		{"AddItem 0", tableSheet, func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 0, ""); return err }, sheet.ErrRange, ""},
		{"AddItem two lines", tableSheet, func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, "a\nb"); return err }, nil, ""},
		{"SetCurrency unknown coin", tableSheet, func(d *sheet.Doc) error { return d.SetCurrency("gems", 1) }, nil,
			`party/x.md: currency: unknown coin "gems": want gp, sp, cp, ep or pp, or a currency the sheet holds`},
		{"SetCurrency below zero", tableSheet, func(d *sheet.Doc) error { return d.SetCurrency("gp", -1) }, sheet.ErrBelowZero, ""},
		{"frontmatter ChangeItem below zero", flowSheet, func(d *sheet.Doc) error { _, err := d.ChangeItem("longsword", -2); return err }, sheet.ErrBelowZero, ""},
		{"frontmatter entry that cannot be removed", uneditable, func(d *sheet.Doc) error { _, err := d.ChangeItem("rope", -2); return err }, sheet.ErrUneditable,
			`party/x.md:6: items: cannot change this in place: line 6: the entry does not start its line with "- "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			before, sh := d.Bytes(), d.Sheet
			err = tt.call(d)
			if err == nil {
				t.Fatalf("call = nil, want an error; text now:\n%s", d.Bytes())
			}
			var se *sheet.Error
			if !errors.As(err, &se) {
				t.Errorf("error = %#v, want a *sheet.Error", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error = %v, want errors.Is %v", err, tt.is)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error =\n\t%s\nwant\n\t%s", err, tt.want)
			}
			if !bytes.Equal(d.Bytes(), before) {
				t.Errorf("Bytes() changed after a failed call:\n%s", d.Bytes())
			}
			if diff := cmp.Diff(sh, d.Sheet, errText); diff != "" {
				t.Errorf("Sheet changed after a failed call (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corwin-voss.md")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("saves and keeps the mode", func(t *testing.T) {
		write(tableSheet)
		d, err := sheet.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetHP(3); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); err != nil {
			t.Fatalf("Save() = %v", err)
		}
		if got, want := read(), strings.Replace(tableSheet, "8/20", "3/20", 1); got != want {
			t.Errorf("file after Save:\n%s\nwant\n%s", got, want)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("mode after Save = %v, want 0600", st.Mode().Perm())
		}
		// A second change and save on the same Doc.
		if _, err := d.ChangeItem("daggers", 1); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); err != nil {
			t.Fatalf("second Save() = %v", err)
		}
		if !strings.Contains(read(), "- 3 daggers\n") {
			t.Errorf("file after the second Save:\n%s", read())
		}
	})

	t.Run("refuses when the file changed", func(t *testing.T) {
		write(tableSheet)
		d, err := sheet.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(tableSheet, "15 gp", "16 gp", 1)
		write(edited)
		if err := d.SetHP(3); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); !errors.Is(err, sheet.ErrChanged) {
			t.Errorf("Save() = %v, want ErrChanged", err)
		}
		if got := read(); got != edited {
			t.Errorf("Save overwrote the edit:\n%s", got)
		}
	})

	t.Run("refuses when the file is gone", func(t *testing.T) {
		write(tableSheet)
		d, err := sheet.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(path)
		if err := d.SetHP(3); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); !errors.Is(err, sheet.ErrChanged) {
			t.Errorf("Save() = %v, want ErrChanged", err)
		}
	})

	t.Run("nothing to save", func(t *testing.T) {
		write(tableSheet)
		d, err := sheet.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		write("changed by hand")
		if err := d.SetHP(d.HP); err != nil {
			t.Fatal(err)
		}
		if err := d.Save(); err != nil {
			t.Errorf("Save() with no change = %v, want nil", err)
		}
		if got := read(); got != "changed by hand" {
			t.Errorf("Save with no change wrote the file: %q", got)
		}
	})
}

// dirNames returns the names in dir, to see that nothing was left beside
// a sheet.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestReadErrors reads bad sheets from disk: the error names the file as
// given, the line and the field, and the file is left as it was, byte for
// byte, with nothing beside it.
func TestReadErrors(t *testing.T) {
	hp := "| | |\n|---|---|\n| **Hit Points** | 8/8 |\n"
	tests := []struct {
		name, src   string
		line        int
		field       string
		is          error // nil: no sentinel to check
		wantMessage string
	}{
		{"no hit points anywhere", "# Tilda Brannock\n\n## Equipment\n- Dagger\n", 0, "", sheet.ErrNoHP, "no hit points anywhere"},
		{"hit points as text", "# Tilda\n\n| | |\n|---|---|\n| **Hit Points** | eight |\n", 5, "hit points", nil, `"eight" is not a number`},
		{"ability row of 4 cells under 6 columns", hp + "\n| STR | DEX | CON | INT | WIS | CHA |\n|:---:|:---:|:---:|:---:|:---:|:---:|\n| 7 | 14 | 11 | 10 |\n", 7, "WIS", nil, "has no WIS cell"},
		{"ability header of 4 columns", hp + "\n| STR | DEX | CON | INT |\n|---|---|---|---|\n| 7 | 14 | 11 | 10 |\n", 5, "abilities", nil, "no WIS, CHA columns"},
		{"duplicate items", hp + "## Equipment\n### Worn/Carried\n- Dagger\n### Pack Contents\n- 2 daggers\n", 8, "items", sheet.ErrDuplicateItem, `"Dagger" on line 6 and "daggers" on line 8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tilda-brannock.md")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := sheet.Read(path)
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d.Sheet)
			}
			var se *sheet.Error
			if !errors.As(err, &se) {
				t.Fatalf("Read error = %#v, want a *sheet.Error", err)
			}
			if se.Path != path || se.Line != tt.line || se.Field != tt.field {
				t.Errorf("Read error names %s:%d, field %q; want %s:%d, field %q", se.Path, se.Line, se.Field, path, tt.line, tt.field)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Read error = %v, want errors.Is %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), path+":") || !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("Read error = %q, want it to start with %q and say %q", err, path+":", tt.wantMessage)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.src {
				t.Errorf("the file changed after a failed Read:\n%s", got)
			}
			if diff := cmp.Diff([]string{"tilda-brannock.md"}, dirNames(t, dir)); diff != "" {
				t.Errorf("files beside the sheet (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedChangeSave makes a change fail on a sheet read from disk and
// saves: the file holds what it held, with the changes that succeeded
// before the failure and nothing of the failed one.
func TestFailedChangeSave(t *testing.T) {
	tests := []struct {
		name, src string
		before    func(*sheet.Doc) error // a change that succeeds first, or nil
		fail      func(*sheet.Doc) error
		is        error
		want      string // the file after Save
	}{
		{"ChangeItem below zero", tableSheet, nil,
			func(d *sheet.Doc) error { _, err := d.ChangeItem("dagger", -3); return err }, sheet.ErrBelowZero, tableSheet},
		{"ChangeItem unknown", tableSheet, nil,
			func(d *sheet.Doc) error { _, err := d.ChangeItem("rope", -1); return err }, sheet.ErrUnknownItem, tableSheet},
		{"ChangeItem below zero after SetHP", tableSheet,
			func(d *sheet.Doc) error { return d.SetHP(3) },
			func(d *sheet.Doc) error { _, err := d.ChangeItem("daggers", -5); return err }, sheet.ErrBelowZero,
			strings.Replace(tableSheet, "8/20", "3/20", 1)},
		{"frontmatter ChangeItem below zero", flowSheet, nil,
			func(d *sheet.Doc) error { _, err := d.ChangeItem("healing potion", -3); return err }, sheet.ErrBelowZero, flowSheet},
		{"frontmatter ChangeItem unknown", blockSheet, nil,
			func(d *sheet.Doc) error { _, err := d.ChangeItem("dagger", 1); return err }, sheet.ErrUnknownItem, blockSheet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tilda-brannock.md")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := sheet.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.before != nil {
				if err := tt.before(d); err != nil {
					t.Fatal(err)
				}
			}
			err = tt.fail(d)
			var se *sheet.Error
			if !errors.Is(err, tt.is) || !errors.As(err, &se) || se.Path != path || se.Field != "items" {
				t.Errorf("change error = %v, want a *sheet.Error for %s, field items, wrapping %v", err, path, tt.is)
			}
			if err := d.Save(); err != nil {
				t.Fatalf("Save() = %v", err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.want {
				t.Errorf("file after a failed change and Save (-want +got):\n%s", cmp.Diff(tt.want, string(got)))
			}
			if diff := cmp.Diff([]string{"tilda-brannock.md"}, dirNames(t, dir)); diff != "" {
				t.Errorf("files beside the sheet (-want +got):\n%s", diff)
			}
		})
	}
}
