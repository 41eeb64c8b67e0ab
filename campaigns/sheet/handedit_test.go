package sheet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestHandEdits checks that a sheet edited by hand with a typo says
// where, and what was meant, rather than read as if the value were not
// there: a table row that lost the | before its value, a frontmatter key
// or a coin misspelt. (A user tryout found each ignored silently.)
func TestHandEdits(t *testing.T) {
	tests := []struct {
		name, src string
		unread    []string
	}{
		{"level row without its value cell", "# X\n\n| | |\n|---|---|\n| **Level** 1 |\n| **Hit Points** | 8/8 |\n",
			[]string{`party/x.md:5: level: "| **Level** 1 |" is a row with a label and no value cell: want "| **Level** | 1 |"`}},
		{"temp hp row without its value cell", "| **Hit Points** | 8/8 |\n| **Temp HP** 3 |\n",
			[]string{`party/x.md:2: temp hit points: "| **Temp HP** 3 |" is a row with a label and no value cell: want "| **Temp HP** | 3 |"`}},
		{"a label alone", "| **Hit Points** | 8/8 |\n| **Level** |\n",
			[]string{`party/x.md:2: level: "| **Level** |" is a row with a label and no value cell: want "| **Level** | N |"`}},
		{"level label misspelt", "| **Levle** | 3 |\n| **Hit Points** | 8/8 |\n",
			[]string{`party/x.md:1: level: "Levle" is no label parley reads: did you mean "Level"?`}},
		{"a row that is not a value", "| **Hit Points** | 8/8 |\n| **Notes** 1 |\n", nil},
		{"frontmatter level misspelt", "---\nhp: 8\nmax_hp: 8\nlevle: 2\n---\n# X\n",
			[]string{`party/x.md:4: level: "levle" is no key parley reads: did you mean level?`}},
		{"frontmatter temp_hp misspelt", "---\nhp: 8\nmax_hp: 8\ntemp_hpp: 2\nxp: 300\n---\n# X\n",
			[]string{`party/x.md:4: temp hit points: "temp_hpp" is no key parley reads: did you mean temp_hp?`}},
		// The key and its typo: the key wins, and the typo is named (a
		// tryout: it said nothing).
		{"frontmatter level written too", "---\nhp: 8\nmax_hp: 8\nlevel: 1\nlevle: 2\n---\n# X\n",
			[]string{`party/x.md:5: level: "levle" is no key parley reads: level on line 4 is the one read`}},
		{"frontmatter max_hp written too", "---\nhp: 8\nmax_hpp: 9\nmax_hp: 8\n---\n# X\n",
			[]string{`party/x.md:3: max hit points: "max_hpp" is no key parley reads: max_hp on line 4 is the one read`}},
		{"level label misspelt beside it", "| **Level** | 3 |\n| **Hit Points** | 8/8 |\n| **Levle** | 4 |\n",
			[]string{`party/x.md:3: level: "Levle" is no label parley reads: the Level on line 1 is the one read`}},
		{"level label misspelt before it", "**Levle**: 4\n**Level**: 3\n**Hit Points**: 8/8\n",
			[]string{`party/x.md:1: level: "Levle" is no label parley reads: the Level on line 2 is the one read`}},
		{"keys of their own beside hp", "---\nhp: 8\nmax_hp: 8\nxp: 300\nhd: 1d8\n---\n# X\n", nil},
		// A Max HP row or an ability row that does not read, where the
		// sheet reads without it (a tryout: read past without a word).
		{"max hp row without its value cell", "| **Hit Points** | 8/12 |\n| **Max HP** twelve |\n",
			[]string{`party/x.md:2: max hit points: "| **Max HP** twelve |" is a row with a label and no value cell: want "| **Max HP** | twelve |"`}},
		{"an ability score misread", "| **HP** | 8 |\n\n| | |\n|---|---|\n| STR | 1O |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| CHA | 14 |\n",
			[]string{`party/x.md:5: STR: "1O" is not a number`}},
		{"ability rows without their value cells", "| **HP** | 8 |\n| STR 10 |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| **CHA** 14 |\n",
			[]string{`party/x.md:2: STR: "| STR 10 |" is a row with a label and no value cell: want "| STR | 10 |"`,
				`party/x.md:7: CHA: "| **CHA** 14 |" is a row with a label and no value cell: want "| **CHA** | 14 |"`}},
		{"saving throws, not scores", "| **HP** | 8 |\n| STR | +2 |\n| DEX | +1 |\n| CON | +1 |\n| INT | -1 |\n| WIS | +0 |\n| CHA | +2 |\n", nil},
		{"an ability row of another table", "| **HP** | 8 |\n| STR | 10 |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| CHA | 14 |\n\n| Save | |\n|---|---|\n| STR | proficient |\n", nil},
		{"a coin misspelt", "| **Hit Points** | 8/8 |\n\n### Currency\n- 10gpp\n",
			[]string{`party/x.md:4: currency: "10gpp" is no coin parley reads: did you mean gp?`}},
		{"a second coin misspelt", "| **Hit Points** | 8/8 |\n\n### Currency\n10 gp, 3 spp\n",
			[]string{`party/x.md:4: currency: "3 spp" is no coin parley reads: did you mean sp?`}},
		{"a frontmatter coin misspelt", "---\nhp: 8\nmax_hp: 8\ncurrency: {gpp: 10, credits: 3}\n---\n",
			[]string{`party/x.md:4: currency: "gpp" is no coin parley reads: did you mean gp?`}},
		{"a setting's own money", "| **Hit Points** | 8/8 |\n\n### Currency\n10 crowns, 3 marks\n", nil},
		{"a setting's own two-letter coin", "| **Hit Points** | 8/8 |\n\n### Currency\n12 gc, 4 sc\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse = %v, want it read", err)
			}
			if diff := cmp.Diff(tt.unread, d.Unread); diff != "" {
				t.Errorf("Unread (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHandEditsRefused checks that a change to a value the sheet writes
// where it cannot be read is refused with what was meant, and leaves the
// sheet as it was: a second level is never written beside the first.
func TestHandEditsRefused(t *testing.T) {
	tests := []struct {
		name, src string
		change    func(*sheet.Doc) error
		want      string
	}{
		{"level row without its value cell", "| **Level** 1 |\n| **Hit Points** | 8/8 |\n", func(d *sheet.Doc) error { return d.SetLevel(2) },
			`party/x.md:1: level: "| **Level** 1 |" is a row with a label and no value cell: want "| **Level** | 1 |"`},
		{"level label misspelt", "**Levle**: 3\n**Hit Points**: 8/8\n", func(d *sheet.Doc) error { return d.SetLevel(4) },
			`party/x.md:1: level: "Levle" is no label parley reads: did you mean "Level"?`},
		{"frontmatter level misspelt", "---\nhp: 8\nmax_hp: 8\nlevle: 2\n---\n", func(d *sheet.Doc) error { return d.SetLevel(3) },
			`party/x.md:4: level: "levle" is no key parley reads: did you mean level?`},
		{"frontmatter temp_hp misspelt", "---\nhp: 8\nmax_hp: 8\ntemp_hpp: 2\n---\n", func(d *sheet.Doc) error { return d.SetTempHP(3) },
			`party/x.md:4: temp hit points: "temp_hpp" is no key parley reads: did you mean temp_hp?`},
		{"a coin misspelt", "| **Hit Points** | 8/8 |\n### Currency\n- 10gpp\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 5) },
			`did you mean gp?`},
		{"a frontmatter coin misspelt", "---\nhp: 8\nmax_hp: 8\ncurrency:\n  gpp: 10\n---\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 5) },
			`party/x.md:5: currency: "gpp" is no coin parley reads: did you mean gp?`},
		{"frontmatter inventory misspelt", "---\nhp: 8\nmax_hp: 8\ninventroy: [Rope]\n---\n", func(d *sheet.Doc) error { _, err := d.AddItem("Torch", 1, ""); return err },
			`party/x.md:4: items: "inventroy" is no key parley reads: did you mean inventory?`},
		{"frontmatter currency misspelt", "---\nhp: 8\nmax_hp: 8\ncurency: {gp: 10}\n---\n", func(d *sheet.Doc) error { return d.SetCurrency("gp", 5) },
			`party/x.md:4: currency: "curency" is no key parley reads: did you mean currency?`},
		{"max hp row without its value cell", "| **Hit Points** | 8/12 |\n| **Max HP** 12 |\n", func(d *sheet.Doc) error { return d.SetMaxHP(14) },
			`party/x.md:2: max hit points: "| **Max HP** 12 |" is a row with a label and no value cell: want "| **Max HP** | 12 |"`},
		{"an ability score misread", "| **HP** | 8 |\n| STR | 1O |\n| DEX | 12 |\n| CON | 13 |\n| INT | 8 |\n| WIS | 10 |\n| CHA | 14 |\n", func(d *sheet.Doc) error { return d.SetAbility("dex", 13) },
			`party/x.md:2: STR: "1O" is not a number`},
		{"frontmatter abilities misspelt", "---\nhp: 8\nmax_hp: 8\nabilites: {str: 10}\n---\n", func(d *sheet.Doc) error { return d.SetAbility("str", 12) },
			`party/x.md:4: abilities: "abilites" is no key parley reads: did you mean abilities?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			err = tt.change(d)
			var se *sheet.Error
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &se) {
				t.Errorf("the change = %v, want an *Error saying %q", err, tt.want)
			}
			if got := string(d.Bytes()); got != tt.src {
				t.Errorf("the sheet changed:\n%s", got)
			}
		})
	}
}

// TestHandEditsFail checks the typos a sheet cannot be read without: the
// hit points on a row without its value cell, max_hp misspelt.
func TestHandEditsFail(t *testing.T) {
	tests := []struct {
		name, src string
		is        error
		want      string
	}{
		{"hit points row without its value cell", "| **Level** | 1 |\n| **Hit Points** 8/8 |\n", sheet.ErrNoHP,
			`party/x.md:2: hit points: no hit points anywhere: "| **Hit Points** 8/8 |" is a row with a label and no value cell: want "| **Hit Points** | 8/8 |"`},
		{"max_hp misspelt", "---\nhp: 8\nmax_hpp: 8\n---\n", nil,
			`party/x.md:3: max hit points: no max_hp beside hp: "max_hpp" is no key parley reads: did you mean max_hp?`},
		// The hit points say no maximum of their own: it is not guessed.
		{"max hp row without its value cell", "| **Hit Points** | 8 |\n| **Max HP** 12 |\n", nil,
			`party/x.md:2: max hit points: "| **Max HP** 12 |" is a row with a label and no value cell: want "| **Max HP** | 12 |"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sheet.Parse("party/x.md", []byte(tt.src))
			if err == nil || err.Error() != tt.want || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestUnreadNotes checks what a reader is told of what could not be
// read: the words of Unread, or, for a reader who may not see every line
// of the sheet (a spectator), where and nothing the sheet says.
func TestUnreadNotes(t *testing.T) {
	d, err := sheet.Parse("party/x.md", []byte("| **Levle** | 3 |\n| **Hit Points** | 8/8 |\n### Currency\n- 10gpp\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`could not read: party/x.md:1: level: "Levle" is no label parley reads: did you mean "Level"?`,
		`could not read: party/x.md:4: currency: "10gpp" is no coin parley reads: did you mean gp?`,
	}
	if diff := cmp.Diff(want, d.UnreadNotes(true)); diff != "" {
		t.Errorf("UnreadNotes(true) (-want +got):\n%s", diff)
	}
	want = []string{"could not read line 1: level", "could not read line 4: currency"}
	if diff := cmp.Diff(want, d.UnreadNotes(false)); diff != "" {
		t.Errorf("UnreadNotes(false) (-want +got):\n%s", diff)
	}
}
