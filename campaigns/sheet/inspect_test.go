package sheet_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
)

// TestInspect: a level that is not a number fails Read, but Inspect
// returns the rest of the sheet and the error naming its line and field.
func TestInspect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(path, []byte("| **HP** | 8/9 |\n| **Level** | one |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sheet.Read(path); err == nil {
		t.Fatal("Read accepted a level of one")
	}
	d, err := sheet.Inspect(path)
	if d == nil || d.HP != 8 || d.MaxHP != 9 || d.Level != 0 {
		t.Fatalf("Inspect = %+v, %v; want the hit points read, the level not", d, err)
	}
	var se *sheet.Error
	if !errors.As(err, &se) || se.Line != 2 || se.Field != "level" {
		t.Fatalf("Inspect error = %v, want line 2, level", err)
	}
	if u := d.Unreadable(); len(u) != 1 || u[0].Field != "level" {
		t.Fatalf("Unreadable() = %v", u)
	}
	// A sheet that reads: no error, nothing unreadable.
	if err := os.WriteFile(path, []byte("| **HP** | 8/9 |\n| **Level** | 2 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := sheet.Inspect(path); err != nil || d.Level != 2 || len(d.Unreadable()) != 0 {
		t.Fatalf("Inspect = %v, %v", d, err)
	}
}
