package sheet_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestMend writes a number over a value written where a number goes
// that is not one, as `parley character set` does: hit points edited by
// hand to "three/8" were refused by every command, so that only a hand
// edit set them right. Every other byte stays; what a number would not
// mend is refused with Read's error, and nothing is written.
func TestMend(t *testing.T) {
	const abil = "| STR | DEX | CON | INT | WIS | CHA |\n|-|-|-|-|-|-|\n"
	tests := []struct {
		name, src string
		values    map[string]int // by field, as the *Error names it
		want      string         // "" when refused
	}{
		{"a word before the maximum", "| **Hit Points** | three/8 |\n", map[string]int{"hit points": 3}, "| **Hit Points** | 3/8 |\n"},
		{"in emphasis", "| **Hit Points** | **three / 8** |\n", map[string]int{"hit points": 3}, "| **Hit Points** | **3 / 8** |\n"},
		{"a note after", "**Hit Points**: three/8 (1d8 hit dice)\n", map[string]int{"hit points": 3}, "**Hit Points**: 3/8 (1d8 hit dice)\n"},
		{"one word", "| **HP** | eight |\n", map[string]int{"hit points": 8}, "| **HP** | 8 |\n"},
		{"a maximum row", "| **Hit Points** | 8 |\n| **Max HP** | twelve |\n", map[string]int{"max hit points": 12}, "| **Hit Points** | 8 |\n| **Max HP** | 12 |\n"},
		{"a level and hit points", "| **Level** | one |\n| **HP** | eight/8 |\n", map[string]int{"level": 1, "hit points": 8}, "| **Level** | 1 |\n| **HP** | 8/8 |\n"},
		{"a score", "| **HP** | 8 |\n" + abil + "| 1O | 12 | 13 | 8 | 10 | 14 |\n", map[string]int{"STR": 10}, "| **HP** | 8 |\n" + abil + "| 10 | 12 | 13 | 8 | 10 | 14 |\n"},
		{"frontmatter", "---\nhp: three # hand edit\nmax_hp: 8\n---\n# X\n", map[string]int{"hit points": 3}, "---\nhp: 3 # hand edit\nmax_hp: 8\n---\n# X\n"},
		{"another field is not mended", "| **Hit Points** | three/8 |\n| **Level** | 1 |\n", map[string]int{"level": 2}, ""},
		{"words a number would not keep", "| **Hit Points** | seven of twelve |\n", map[string]int{"hit points": 7}, ""},
		{"the maximum does not read either", "| **Hit Points** | three/eight |\n", map[string]int{"hit points": 3}, ""},
		{"no number below 0", "| **Hit Points** | three/8 |\n", map[string]int{"hit points": -3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.md")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, readErr := sheet.Read(path)
			var nn *sheet.NotNumber
			if !errors.As(readErr, &nn) {
				t.Fatalf("Read = %v, want a NotNumber", readErr)
			}
			mend := func(e *sheet.Error) (int, bool) {
				n, ok := tt.values[e.Field]
				return n, ok
			}
			d, err := sheet.Mend(path, mend, func(*sheet.Doc) error { return nil })
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tt.want == "" {
				if err == nil || err.Error() != readErr.Error() {
					t.Errorf("Mend = %v, want Read's error %v", err, readErr)
				}
				if diff := cmp.Diff(tt.src, string(got)); diff != "" {
					t.Errorf("refused, and the file changed (-was +now):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Mend = %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, string(d.Bytes())); diff != "" {
				t.Errorf("Bytes() (-want +got):\n%s", diff)
			}
		})
	}
}
