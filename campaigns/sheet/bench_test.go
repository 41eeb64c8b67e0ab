package sheet_test

import (
	"os"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// BenchmarkUpdate parses a sheet, makes one change and renders it, the
// work of one `parley character` or tool call short of the disk (target:
// under 2 ms). It uses the largest fixture sheet, or a small sheet when
// the fixtures are absent.
func BenchmarkUpdate(b *testing.B) {
	data := []byte(tableSheet)
	for _, p := range fixturePaths() {
		if d, err := os.ReadFile(p); err == nil && len(d) > len(data) {
			data = d
		}
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d, err := sheet.Parse("party/x.md", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := d.Damage(1); err != nil {
			b.Fatal(err)
		}
		_ = d.Bytes()
	}
}

// BenchmarkUpdateItem is BenchmarkUpdate with an inventory change.
func BenchmarkUpdateItem(b *testing.B) {
	paths := fixturePaths()
	if len(paths) == 0 {
		b.Skip("no fixture sheets")
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d, err := sheet.Parse("party/x.md", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.ChangeItem("dagger", -1); err != nil {
			b.Fatal(err)
		}
		_ = d.Bytes()
	}
}

// BenchmarkUpdateFrontmatter is BenchmarkUpdate for parley's own layout.
func BenchmarkUpdateFrontmatter(b *testing.B) {
	data := []byte(blockSheet)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d, err := sheet.Parse("party/x.md", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.ChangeItem("potion", -1); err != nil {
			b.Fatal(err)
		}
		_ = d.Bytes()
	}
}
