package campaigns

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestNewSheet: both skeletons are sheets every tool reads, at their
// starting values; an existing sheet is never overwritten.
func TestNewSheet(t *testing.T) {
	c, err := New(t.TempDir(), "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ character, layout string }{{"tilda-brannock", LayoutMarkdown}, {"brother-aldo", LayoutFrontmatter}} {
		path, err := c.NewSheet(tt.character, tt.layout)
		if err != nil {
			t.Fatal(err)
		}
		d, err := sheet.Read(path)
		if err != nil {
			t.Fatalf("%s skeleton does not read: %v", tt.layout, err)
		}
		if d.HP != 8 || d.MaxHP != 8 || d.Level != 1 {
			t.Errorf("%s skeleton: HP %d/%d, level %d; want 8/8, level 1", tt.layout, d.HP, d.MaxHP, d.Level)
		}
		if _, err := c.NewSheet(tt.character, tt.layout); !errors.Is(err, fs.ErrExist) {
			t.Errorf("NewSheet over an existing sheet = %v, want fs.ErrExist", err)
		}
	}
	if _, err := c.NewSheet("Tilda B", ""); err == nil {
		t.Error("NewSheet took a name that is not kebab-case")
	}
	if _, err := c.NewSheet("sel-varga", "yaml"); err == nil {
		t.Error("NewSheet took an unknown layout")
	}
}
