package sheet_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// A sheet a person edited to hit points above the maximum is read, says
// so in Invalid, and setting hp or max_hp sets it right: the command a
// person would use anyway is not refused for what the sheet was before.
// (It was refused: "30 is out of range" on every change.)
func TestHPAboveMax(t *testing.T) {
	sheets := []struct {
		name, src, invalid string
	}{
		{"tables", "# X\n\n| **Hit Points** | 30/24 |\n\n## Equipment\n- Dagger\n",
			"party/x.md:3: hit points: 30 is out of range: want 0 to 24, the maximum"},
		{"max row", "| **Max HP** | 14 |\n| **Hit Points** | 15 |\n",
			"party/x.md:2: hit points: 15 is out of range: want 0 to 14, the maximum"},
		{"frontmatter", "---\nhp: 30\nmax_hp: 24\ninventory: [{name: Dagger, quantity: 1}]\n---\n# X\n",
			"party/x.md:2: hit points: 30 is out of range: want 0 to 24, the maximum"},
	}
	for _, sh := range sheets {
		t.Run(sh.name, func(t *testing.T) {
			d := parseOK(t, sh.src)
			if d.Invalid == nil || d.Invalid.Error() != sh.invalid || !errors.Is(d.Invalid, sheet.ErrRange) {
				t.Fatalf("Invalid = %v, want %s (ErrRange)", d.Invalid, sh.invalid)
			}
			// Damage and Heal cannot tell where to start from.
			if _, _, err := d.Damage(1); err == nil || err.Error() != sh.invalid+"; set hp or max_hp first" {
				t.Errorf("Damage(1) = %v, want %s; set hp or max_hp first", err, sh.invalid)
			}
			if _, _, err := d.Heal(1); !errors.Is(err, sheet.ErrRange) {
				t.Errorf("Heal(1) = %v, want ErrRange", err)
			}
			// A change of something else is made; the sheet stays invalid.
			if _, err := d.AddItem("Torch", 1, ""); err != nil {
				t.Errorf("AddItem = %v", err)
			}
			if d.Invalid == nil {
				t.Errorf("after AddItem, Invalid = nil: the hit points are still above the maximum")
			}
			// hp=8 sets it right.
			fixed := parseOK(t, sh.src)
			if err := fixed.SetHP(8); err != nil {
				t.Fatalf("SetHP(8) = %v", err)
			}
			if fixed.Invalid != nil || fixed.HP != 8 {
				t.Errorf("after SetHP(8): HP %d, Invalid %v; want 8, nil", fixed.HP, fixed.Invalid)
			}
			// So does a maximum the hit points fit under.
			raised := parseOK(t, sh.src)
			if err := raised.SetMaxHP(40); err != nil {
				t.Fatalf("SetMaxHP(40) = %v", err)
			}
			if raised.Invalid != nil || raised.MaxHP != 40 {
				t.Errorf("after SetMaxHP(40): max %d, Invalid %v; want 40, nil", raised.MaxHP, raised.Invalid)
			}
			// hp above the maximum is still not written by SetHP.
			if err := parseOK(t, sh.src).SetHP(31); !errors.Is(err, sheet.ErrRange) {
				t.Errorf("SetHP(31) = %v, want ErrRange", err)
			}
		})
	}
}

func parseOK(t *testing.T, src string) *sheet.Doc {
	t.Helper()
	d, err := sheet.Parse("party/x.md", []byte(src))
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	return d
}

// A level or an ability score edited by hand out of range is read, and
// said in Invalid by the rule SetLevel and SetAbility refuse by (it was
// read as written, and a level of 0 as no level at all); setting it
// sets it right, and damage is not refused for it.
func TestLevelAndScoreOutOfRange(t *testing.T) {
	const hp = "| **Hit Points** | 8/8 |\n"
	const scores = "| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n"
	tests := []struct {
		name, src string
		invalid   string
		fields    []string
		set       func(d *sheet.Doc) error // sets it right
	}{
		{"level 25", hp + "| **Level** | 25 |\n",
			"party/x.md:2: level: 25 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(20) }},
		{"level 0", hp + "| **Level** | 0 |\n",
			"party/x.md:2: level: 0 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(2) }},
		{"level 0th", "**Level**: 0th\n" + hp,
			"party/x.md:1: level: 0 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(1) }},
		{"score 99", hp + scores + "| 99 | 14 | 11 | 10 | 14 | 13 |\n",
			"party/x.md:4: STR: 99 is out of range: want 1 to 30", []string{"STR"}, func(d *sheet.Doc) error { return d.SetAbility("str", 15) }},
		{"score 0", hp + scores + "| 10 | 14 | 0 | 10 | 14 | 13 |\n",
			"party/x.md:4: CON: 0 is out of range: want 1 to 30", []string{"CON"}, func(d *sheet.Doc) error { return d.SetAbility("con", 9) }},
		{"score rows", hp + "| STR | 8 |\n| DEX | 31 |\n| CON | 11 |\n| INT | 10 |\n| WIS | 14 |\n| CHA | 13 |\n",
			"party/x.md:3: DEX: 31 is out of range: want 1 to 30", []string{"DEX"}, func(d *sheet.Doc) error { return d.SetAbility("dex", 30) }},
		{"frontmatter level 25", "---\nhp: 8\nmax_hp: 8\nlevel: 25\n---\n",
			"party/x.md:4: level: 25 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(5) }},
		{"frontmatter level 0", "---\nhp: 8\nmax_hp: 8\nlevel: 0\n---\n",
			"party/x.md:4: level: 0 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(1) }},
		{"frontmatter level -2", "---\nhp: 8\nmax_hp: 8\nlevel: -2\n---\n",
			"party/x.md:4: level: -2 is out of range: want 1 to 20", []string{"level"}, func(d *sheet.Doc) error { return d.SetLevel(1) }},
		{"frontmatter scores", "---\nhp: 8\nmax_hp: 8\nabilities:\n  str: 99\n  dex: 0\n  con: 10\n  int: 10\n  wis: 10\n  cha: 10\n---\n",
			"party/x.md:5: STR: 99 is out of range: want 1 to 30; party/x.md:6: DEX: 0 is out of range: want 1 to 30", []string{"STR", "DEX"},
			func(d *sheet.Doc) error {
				if err := d.SetAbility("str", 18); err != nil {
					return err
				}
				return d.SetAbility("dex", 3)
			}},
		{"all at once", "| **Hit Points** | 9/8 |\n| **Level** | 21 |\n" + scores + "| 10 | 14 | 11 | 10 | 14 | 40 |\n",
			"party/x.md:1: hit points: 9 is out of range: want 0 to 8, the maximum; party/x.md:2: level: 21 is out of range: want 1 to 20; party/x.md:5: CHA: 40 is out of range: want 1 to 30",
			[]string{"hit points", "level", "CHA"},
			func(d *sheet.Doc) error {
				if err := d.SetHP(8); err != nil {
					return err
				}
				if err := d.SetLevel(20); err != nil {
					return err
				}
				return d.SetAbility("cha", 18)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseOK(t, tt.src)
			if d.Invalid == nil || d.Invalid.Error() != tt.invalid || !errors.Is(d.Invalid, sheet.ErrRange) {
				t.Fatalf("Invalid = %v, want %s (ErrRange)", d.Invalid, tt.invalid)
			}
			var fields []string
			for _, p := range d.Problems() {
				if p.Line == 0 {
					t.Errorf("problem %v names no line", p)
				}
				fields = append(fields, p.Field)
			}
			if diff := cmp.Diff(tt.fields, fields); diff != "" {
				t.Errorf("Problems() fields (-want +got):\n%s", diff)
			}
			if len(tt.fields) == 1 && tt.fields[0] != "hit points" {
				// Not the hit points: damage goes on as usual.
				if _, _, err := d.Damage(1); err != nil {
					t.Errorf("Damage(1) = %v, want nil", err)
				}
			}
			fixed := parseOK(t, tt.src)
			if err := tt.set(fixed); err != nil {
				t.Fatalf("setting it right = %v", err)
			}
			if fixed.Invalid != nil || fixed.Problems() != nil {
				t.Errorf("after setting it right, Invalid = %v", fixed.Invalid)
			}
		})
	}
}

// TestCheckRanges: the one rule of levels and scores, which reading a
// sheet and SetLevel/SetAbility share.
func TestCheckRanges(t *testing.T) {
	for _, tt := range []struct {
		check func(int) error
		n     int
		want  string // "" for nil
	}{
		{sheet.CheckLevel, 0, "0 is out of range: want 1 to 20"},
		{sheet.CheckLevel, 1, ""},
		{sheet.CheckLevel, 20, ""},
		{sheet.CheckLevel, 21, "21 is out of range: want 1 to 20"},
		{sheet.CheckScore, 0, "0 is out of range: want 1 to 30"},
		{sheet.CheckScore, 1, ""},
		{sheet.CheckScore, 30, ""},
		{sheet.CheckScore, 99, "99 is out of range: want 1 to 30"},
	} {
		err := tt.check(tt.n)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, sheet.ErrRange) {
				t.Errorf("check(%d) = %v, not ErrRange", tt.n, err)
			}
		}
		if got != tt.want {
			t.Errorf("check(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	// SetLevel and SetAbility say it as the reading does.
	d := parseOK(t, "| **Hit Points** | 8/8 |\n| **Level** | 1 |\n| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n| 10 | 14 | 11 | 10 | 14 | 13 |\n")
	if err := d.SetLevel(0); err == nil || err.Error() != "party/x.md:2: level: 0 is out of range: want 1 to 20" {
		t.Errorf("SetLevel(0) = %v", err)
	}
	if err := d.SetAbility("str", 99); err == nil || err.Error() != "party/x.md:5: STR: 99 is out of range: want 1 to 30" {
		t.Errorf("SetAbility(str, 99) = %v", err)
	}
}
