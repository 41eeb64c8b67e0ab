package sheet_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// Damage takes temporary hit points first, then hit points, as D&D 5e
// does; healing does not give temporary hit points back. (A tryout: a
// sheet's "(temp 3)" was read as a note, and damage went straight to the
// hit points.)
func TestTempHP(t *testing.T) {
	tests := []struct {
		name, src   string
		temp        int
		call        func(*sheet.Doc) error
		hp, wantTmp int
		want        string // the sheet's text after
	}{
		{"damage within temp", "| **Hit Points** | 8/12 (temp 3) |\n", 3,
			func(d *sheet.Doc) error { _, _, err := d.Damage(2); return err },
			8, 1, "| **Hit Points** | 8/12 (temp 1) |\n"},
		{"damage past temp", "| **Hit Points** | 8/12 (temp 3) |\n", 3,
			func(d *sheet.Doc) error { _, _, err := d.Damage(5); return err },
			6, 0, "| **Hit Points** | 6/12 |\n"},
		{"a lone number with temp", "**Hit Points**: 12 (temp: 5)\n", 5,
			func(d *sheet.Doc) error { _, _, err := d.Damage(7); return err },
			10, 0, "**Hit Points**: 10/12\n"},
		{"temp hp, and a note after", "| **HP** | 8 (max 12) (temp hp 2) (raging) |\n", 2,
			func(d *sheet.Doc) error { _, _, err := d.Damage(30); return err },
			0, 0, "| **HP** | 0 (max 12) (raging) |\n"},
		{"healing leaves temp", "| **Hit Points** | 5/12 (temp 3) |\n", 3,
			func(d *sheet.Doc) error { _, _, err := d.Heal(20); return err },
			12, 3, "| **Hit Points** | 12/12 (temp 3) |\n"},
		{"set temp", "| **Hit Points** | 8/12 |\n", 0,
			func(d *sheet.Doc) error { return d.SetTempHP(4) },
			8, 4, "| **Hit Points** | 8/12 (temp 4) |\n"},
		{"set temp on a lone number", "| **Hit Points** | 12 |\n", 0,
			func(d *sheet.Doc) error { return d.SetTempHP(4) },
			12, 4, "| **Hit Points** | 12 (temp 4) |\n"},
		{"set temp after a max in parentheses", "| **Hit Points** | 8 (max 12) |\n", 0,
			func(d *sheet.Doc) error { return d.SetTempHP(4) },
			8, 4, "| **Hit Points** | 8 (max 12) (temp 4) |\n"},
		{"frontmatter damage", "---\nhp: 8\nmax_hp: 12\ntemp_hp: 3\n---\n", 3,
			func(d *sheet.Doc) error { _, _, err := d.Damage(5); return err },
			6, 0, "---\nhp: 6\nmax_hp: 12\ntemp_hp: 0\n---\n"},
		{"frontmatter set temp", "---\nhp: 8\nmax_hp: 12\n---\n", 0,
			func(d *sheet.Doc) error { return d.SetTempHP(2) },
			8, 2, "---\nhp: 8\nmax_hp: 12\ntemp_hp: 2\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseOK(t, tt.src)
			if d.TempHP != tt.temp {
				t.Fatalf("TempHP = %d, want %d", d.TempHP, tt.temp)
			}
			if err := tt.call(d); err != nil {
				t.Fatal(err)
			}
			if d.HP != tt.hp || d.TempHP != tt.wantTmp {
				t.Errorf("after: HP %d temp %d, want HP %d temp %d", d.HP, d.TempHP, tt.hp, tt.wantTmp)
			}
			if diff := cmp.Diff(tt.want, string(d.Bytes())); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}
