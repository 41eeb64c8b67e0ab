package sheet_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// FuzzParse checks that Parse never panics and that its errors are
// *Error values; that a sheet it reads gives back its bytes unchanged;
// that SetHP to a valid value changes exactly one line (or refuses with
// ErrUneditable and changes nothing); and that every other method either
// changes the text so that it reads back as the Doc says, or fails and
// leaves text and values as they were.
func FuzzParse(f *testing.F) {
	for _, p := range fixturePaths() {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		tableSheet, flowSheet, blockSheet,
		"| **HP** | 8 |\n", "**Hit Points**: 8/8\n", "| **Hit Points** | eight |\n", "| **Hit Points** | 0/0 |\n",
		"| **Hit Points** | 8/8 |\n| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 15 (+2) | 13 | 14 | 8 | 12 | 10 |\n| +2 | +1 | +2 | −1 | +1 | +0 |\n",
		"| **Hit Points** | 8/8 |\n| CHA | DEX | STR | INT | WIS | CON |\n|-|-|-|-|-|-|\n| 10 | 13 | 15 | 8 | 12 | 14 |\n| +0 | +1 |\n",
		"| **Hit Points** | 8/8 |\n## Equipment\n- Two daggers\n- Pack\n  - rope\n- Torch (x3)\n### Currency\n1,500 gold pieces, 3 sp\n",
		"| **Hit Points** | 8/8 |\n## Equipment\n- Dagger\n- 2 daggers\n",
		"---\nhp: 3\nmax_hp: 5\ninventory: [{name: A}, 'b', \"c\"]\ncurrency: {}\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  -\n    name: Rope\n  - Two daggers\ncurrency:\nlevel:\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory: ~\nabilities:\n  str: 15\n---\n",
		"---\r\nhp: 3\r\nmax_hp: 5\r\n---\r\n",
		"---\nhp: [3\n---\n| **Hit Points** | 8/8 |\n",
		"---\nhp: 3\nmax_hp: 5\nabilities: {str: 10, dex: 10, con: 10, int: 10, wis: 10, cha: 10\ninventory: []\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Rope\n   quantity: 2\n---\n", "---\nhp: 3\nmax_hp: 5\n\tlevel: 1\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Arrows\n    quantity: 5\n    qty: 3\n---\n",
		"---\nhp: &a 3\nmax_hp: *a\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: \"Long\n      sword\"\n    quantity: 2\n---\n",
		"```\n| **Hit Points** | 1/1 |\n```\n", "<!--\n-->", "", "---", "---\n---\n", "\xef\xbb\xbf---\nhp: 1\nmax_hp: 1\n---\n",
		// Maxima, levels, scores, coins and counts as people write them.
		"**Hit Points**: 12 (max 14)\n", "**HP**: 7 of 12\n", "| **HP** | 7 out of 12 |\n", "| **Hit Points** | 12 (maximum: 14) |\n",
		"| **Hit Points** | 12 (14 max) |\n", "**Hit Points**: 12, max 14\n", "**Hit Points**: 10/12 (max 14)\n", "| **Hit Points** | 12 (14) |\n",
		"| **Hit Points** | 12 |\n| **Max HP** | 14 |\n", "| **Maximum Hit Points** | 14 |\n| **Hit Points** | 12/14 |\n",
		"**HP**: 12\n**HP Max**: 14\n", "| **Hit Points** | 12 |\n| **Max Hit Points** | lots |\n",
		"| **Level** | 3rd |\n| **HP** | 8 |\n", "**Level**: 21\n**HP**: 8\n", "---\nhp: 3\nmax_hp: 5\nlevel: 23\nabilities: {str: 32, dex: 1, con: 1, int: 1, wis: 1, cha: 1}\n---\n",
		"| **HP** | 8 |\n| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 32 | 14 | 11 | 10 | 14 | 13 |\n",
		"| **Level** | 0 |\n| **HP** | 9/8 |\n| STR | 0 |\n| DEX | 99 |\n| CON | 1 |\n| INT | 1 |\n| WIS | 1 |\n| CHA | 1 |\n",
		"---\nhp: 3\nmax_hp: 5\nlevel: -3\nabilities: {str: 0, dex: -1, con: 31, int: 1, wis: 1, cha: 1}\n---\n",
		"| **HP** | 8 |\n### Currency\n**Gold**: 10\n**Silver**: 4\n**Copper**: 3\n**Electrum**: -\n**Platinum**:\n",
		"| **HP** | 8 |\n### Currency\n- **Gold:** 10\n", "| **HP** | 8 |\n### Currency\nGP: 10, SP: 4\n", "| **HP** | 8 |\n### Currency\nGP: 10 SP: 4\n",
		"| **HP** | 8 |\n### Currency\n| GP | SP |\n|---|---|\n| 10 | 4 |\n", "| **HP** | 8 |\n### Currency\n| | GP | SP |\n|:-:|:-:|:-:|\n| Purse | 1,200 | |\n",
		"| **HP** | 8 |\n### Currency\n| Coin | Amount |\n|---|---|\n| Gold | 10 |\n| Silver (sp) | **4** |\n",
		"| **HP** | 8 |\n### Currency\nNone\n", "| **HP** | 8 |\n### Currency\n-\n", "| **HP** | 8 |\n### Currency\nabout 40 in gems\n",
		"| **HP** | 8 |\n## Equipment\n- Rations (5)\n- Arrows (x20)\n- Torches (3) — for the sewers\n",
		// Temporary hit points on a row of their own, or misspelt.
		"| **Hit Points** | 8/12 |\n| **Temp HP** | 3 |\n", "**Temp HP**: —\n**Hit Points**: 8/12\n",
		"| **HP** | 8 |\n| **Temporary Hit Points** |  |\n", "**HP**: 8 (temp 2)\n**THP**: 2\n",
		"| **Hit Points** | 8/12 (temp 3) |\n| **Temp HP** | 2 |\n", "| **Hit Points** | 8/12 |\n| **Tmp HP** | 3 |\n",
		"**Hit Points**: 8/12\n**Temp. HP**:\n",
		// Hand edits gone wrong: a row without its value cell, a key or a
		// coin misspelt.
		"| **Level** 1 |\n| **Hit Points** | 8/8 |\n", "| **Levle** | 3 |\n| **HP** | 8 |\n", "| **Hit Points** 8/8 |\n", "| **HP** | 8 |\n| **Temp HP** 3 |\n| **Level** |\n",
		"---\nhp: 8\nmax_hp: 8\nlevle: 2\ntemp_pp: 1\n---\n", "---\nhp: 8\nmax_hpp: 8\n---\n", "---\nhp: 8\nmax_hp: 8\nlevel: 1\nlevle: 2\n---\n",
		"| **HP** | 8 |\n### Currency\n- 10gpp\n", "| **HP** | 8 |\n### Currency\n10 gp, 3 spp\n", "| **HP** | 8 |\n### Currency\n12 gc\n", "---\nhp: 8\nmax_hp: 8\ncurrency: {gpp: 10, credits: 3}\n---\n",
		"| **Level** | 3 |\n| **HP** | 8 |\n| **Levle** | 4 |\n", "| **Level** | one |\n| **HP** | 8 |\n", "| **Hit Points** | 8/12 |\n| **Max HP** twelve |\n", "| **Hit Points** | 8 |\n| **Max HP** 12 |\n", "---\nhp: 8\nmax_hpp: 9\nmax_hp: 8\nxp: 3\n---\n",
		"| **HP** | 8 |\n| STR | 1O |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| CHA | 14 |\n",
		"| **HP** | 8 |\n| STR 10 |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| **CHA** 14 |\n| STR | 11 |\n",
		// Empty parts for gear a new item goes in (the template's Worn/Carried).
		"| **HP** | 8 |\n## Equipment\n\n### Worn/Carried\n\n### Currency\n- 10 gp\n",
		"| **HP** | 8 |\n## Equipment\n### Notes\n- dry\n### Attuned\n### Gear\nwhat they carry\n### Currency\n5 gp\n",
		"| **HP** | 8 |\n## Equipment\n### Worn/Carried", "| **HP** | 8 |\n# Equipment\n## Carried\n```\n- a\n```\n",
		// Numbers that are not one, which Mend writes over.
		"| **Hit Points** | three/8 |\n", "| **Hit Points** | **three / 8** (temp 2) |\n", "| **HP** | seven of twelve |\n",
		"| **Hit Points** | three/eight |\n| **Level** | one |\n", "| **HP** | 8 |\n| **Max HP** | twelve |\n| **Temp HP** | x |\n",
		"| **HP** | 8 |\n| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 1O | 12 | 13 | 8 | 10 | **x** |\n",
		"---\nhp: three # hand edit\nmax_hp: 'eight'\nlevel: one\nabilities: {str: ten, dex: 1, con: 1, int: 1, wis: 1, cha: 1}\n---\n",
		// Items nested under items: packs and their contents.
		nestedSheet,
		"| **HP** | 8 |\n## Equipment\n- Pack\n\t- Rope\n\t- 2 torches\n- Torch\n",
		"| **HP** | 8 |\n## Equipment\n- Chest\n  - Pack\n    - Pouch\n      - 3 gems\n    - Rope\n  * Lantern\n+ Shield\n",
		"| **HP** | 8 |\n## Equipment\n- Pack, containing:\n  - Torch\n  - 2 torches\n",
		"| **HP** | 8 |\n## Equipment\n- Two sacks, containing:\n  - Flour\n  patched\n    - Salt\n\n  - Sugar\n",
		"| **HP** | 8 |\n## Equipment\n    - Sack\n        - Rope\n- Satchel with:\n  -\n  - ---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  - name: Sack\n    contents:\n      - Torch\n      - {name: Rope, contents: [Knot]}\n  - {name: Candle, in: Sack}\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory: [{name: Sack, contents: [Torch, Rope]}, {name: Torch, in: sack}]\n---\n",
		"---\nhp: 3\nmax_hp: 5\ninventory:\n  - {name: A, in: B}\n  - {name: B, in: A}\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := sheet.Parse("party/x.md", data)
		if err != nil {
			var se *sheet.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %v (%T) is not a *sheet.Error", err, err)
			}
			return
		}
		if !bytes.Equal(d.Bytes(), data) {
			t.Fatalf("Bytes() after Parse differs from the input")
		}
		for _, p := range d.Problems() {
			if p.Line < 1 || p.Field == "" || !errors.Is(p, sheet.ErrRange) {
				t.Fatalf("Invalid names no line or field, or is not ErrRange: %v", p)
			}
		}

		// SetHP to a valid value changes one line.
		n := (d.HP + 1) % (d.MaxHP + 1)
		before := d.Bytes()
		if err := d.SetHP(n); err != nil {
			if !errors.Is(err, sheet.ErrUneditable) {
				t.Fatalf("SetHP(%d) with MaxHP %d = %v", n, d.MaxHP, err)
			}
			if !bytes.Equal(d.Bytes(), before) {
				t.Fatalf("SetHP(%d) failed and changed the text", n)
			}
		} else {
			if d.HP != n {
				t.Fatalf("SetHP(%d): HP = %d", n, d.HP)
			}
			a, b := strings.Split(string(before), "\n"), strings.Split(string(d.Bytes()), "\n")
			if len(a) != len(b) {
				t.Fatalf("SetHP(%d) changed the number of lines: %d to %d", n, len(a), len(b))
			}
			changed := 0
			for i := range a {
				if a[i] != b[i] {
					changed++
				}
			}
			if changed != 1 {
				t.Fatalf("SetHP(%d) changed %d lines, want 1", n, changed)
			}
		}

		first := "nothing"
		if len(d.Items) > 0 {
			first = d.Items[0].Slug
		}
		ops := []func() error{
			func() error { _, _, err := d.Damage(1); return err },
			func() error { _, _, err := d.Heal(1); return err },
			func() error { return d.SetMaxHP(d.MaxHP + 2) },
			func() error { return d.SetLevel(2) },
			func() error { return d.SetAbility("dex", 12) },
			func() error { _, err := d.ChangeItem(first, 1); return err },
			func() error { _, err := d.AddItem("Fuzz torch", 2, "for the sewers"); return err },
			func() error { _, err := d.ChangeItem("fuzz torches", -1); return err },
			func() error {
				if len(d.Items) == 0 {
					return nil
				}
				_, err := d.AddItemTo(d.Items[len(d.Items)-1].Slug, "Fuzz chalk", 1, "")
				return err
			},
			func() error { _, err := d.ChangeItem("fuzz-chalk", -1); return err },
			func() error { return d.SetCurrency("sp", 3) },
			func() error { return d.SetCurrency("pp", 1) },
			func() error {
				if len(d.Items) == 0 {
					return nil
				}
				_, err := d.ChangeItem(d.Items[0].Slug, -d.Items[0].Quantity)
				return err
			},
		}
		for i, op := range ops {
			before, sh := d.Bytes(), d.Sheet
			if err := op(); err != nil {
				var se *sheet.Error
				if !errors.As(err, &se) {
					t.Fatalf("op %d: error %v (%T) is not a *sheet.Error", i, err, err)
				}
				if !bytes.Equal(d.Bytes(), before) {
					t.Fatalf("op %d failed (%v) and changed the text", i, err)
				}
				if diff := cmp.Diff(sh, d.Sheet, errText); diff != "" {
					t.Fatalf("op %d failed (%v) and changed the values:\n%s", i, err, diff)
				}
				continue
			}
			again, err := sheet.Parse("party/x.md", d.Bytes())
			if err != nil {
				t.Fatalf("op %d: the text no longer parses: %v", i, err)
			}
			if diff := cmp.Diff(d.Sheet, again.Sheet, cmpopts.EquateEmpty(), errText); diff != "" {
				t.Fatalf("op %d: the text reads back differently (-doc +reread):\n%s", i, diff)
			}
		}
	})
}

// FuzzMend checks that Mend, writing 5 over every value it can that is
// not a number, never panics; that its errors are *Error values; that
// it writes only where such values were (the file keeps its lines, and
// each changed line is one an *Error named); and that what it wrote
// reads.
func FuzzMend(f *testing.F) {
	for _, s := range []string{
		"| **Hit Points** | three/8 |\n", "| **HP** | eight |\n| **Level** | one |\n", "| **HP** | seven of twelve |\n",
		"| **HP** | 8 |\n| **Max HP** | twelve |\n", "---\nhp: three\nmax_hp: 8\n---\n", tableSheet,
		"| **HP** | 8 |\n| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n| 1O | 12 | 13 | 8 | 10 | x |\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.md")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		named := map[int]bool{}
		mend := func(e *sheet.Error) (int, bool) {
			named[e.Line] = true
			return 5, true
		}
		_, err := sheet.Mend(path, mend, func(*sheet.Doc) error { return nil })
		got, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			var se *sheet.Error
			if !errors.As(err, &se) {
				t.Fatalf("Mend error %v (%T) is not a *sheet.Error", err, err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("Mend failed (%v) and changed the file", err)
			}
			return
		}
		a, b := strings.Split(string(data), "\n"), strings.Split(string(got), "\n")
		if len(a) != len(b) {
			t.Fatalf("Mend changed the number of lines: %d to %d", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] && !named[i+1] {
				t.Fatalf("Mend changed line %d, which no error named: %q to %q", i+1, a[i], b[i])
			}
		}
		if _, err := sheet.Parse("party/x.md", got); err != nil {
			t.Fatalf("what Mend wrote does not read: %v", err)
		}
	})
}

// fixturePaths returns the fixture sheets, or none when they are absent.
func fixturePaths() []string {
	var out []string
	for _, name := range []string{"corwin-voss", "gideon-harrowmoor", "seraphine-duskhollow", "tilda-brannock"} {
		p := fixtureDir + "/" + name + ".md"
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
