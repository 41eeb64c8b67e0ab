package sheet_test

import (
	"errors"
	"testing"

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
