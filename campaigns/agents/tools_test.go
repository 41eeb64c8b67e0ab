package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestSheetUnchangedAdvice: the notice of a change a malformed sheet kept
// from being made says what sets the sheet right, and that works: `parley
// character set` of the field for a number written that is not one (hit
// points "three/8", once advised and refused), an edit by hand for what it
// cannot write over.
func TestSheetUnchangedAdvice(t *testing.T) {
	tests := []struct {
		name, hp, want string
	}{
		{"a word before the maximum", "three/8", "`parley character set x hp=N` sets it"},
		{"one word", "eight", "`parley character set x hp=N` sets it"},
		{"words a number would not keep", "seven of twelve", "an edit of party/x.md by hand sets it"},
		{"no maximum either", "three/eight", "an edit of party/x.md by hand sets it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.md")
			if err := os.WriteFile(path, []byte("# X\n\n| **Hit Points** | "+tt.hp+" |\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := sheet.Update(path, func(d *sheet.Doc) error { _, _, err := d.Damage(1); return err })
			if err == nil {
				t.Fatalf("Damage on hit points %q = nil, want an error", tt.hp)
			}
			m := SheetUnchanged(nil, "gm", "update_character", err, []string{"ann"})
			if m == nil {
				t.Fatalf("SheetUnchanged(%v) = nil, want a notice", err)
			}
			if body := strings.Join(strings.Fields(string(m.Body)), " "); !strings.Contains(body, tt.want) {
				t.Errorf("SheetUnchanged(%v) says %q, want %q in it", err, body, tt.want)
			}
		})
	}
}
