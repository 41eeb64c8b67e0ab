package sheet_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/textfile"
)

// A sheet git left a merge conflict in is not written: not by Update
// (inventory add, the game master's tools), not by Save (character set).
// The item used to go inside the conflict block.
func TestConflictNotWritten(t *testing.T) {
	text := "# Tor\n\n| **Hit Points** | 13/13 |\n\n## Equipment\n\n### Pack Contents\n- Silver locket\n<<<<<<< HEAD\n- Lantern\n=======\n- Rope\n>>>>>>> other\n"
	path := filepath.Join(t.TempDir(), "tor.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sheet.Update(path, func(d *sheet.Doc) error {
		_, err := d.AddItem("Torch", 1, "")
		return err
	})
	var ce *textfile.ConflictError
	if !errors.As(err, &ce) || ce.Line != 9 {
		t.Errorf("Update = %v, want a conflict at line 9", err)
	}
	// Nor read: its values are either side's (a tryout: character show
	// and get_character_stats said one side's hit points).
	if _, err := sheet.Read(path); !errors.As(err, &ce) || ce.Line != 9 {
		t.Errorf("Read = %v, want a conflict at line 9", err)
	}
	if _, err := sheet.Inspect(path); !errors.As(err, &ce) || ce.Line != 9 {
		t.Errorf("Inspect = %v, want a conflict at line 9", err)
	}
	d, err := sheet.Parse(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetHP(5); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(); !errors.Is(err, textfile.ErrConflict) {
		t.Errorf("Save = %v, want ErrConflict", err)
	}
	if got, _ := os.ReadFile(path); string(got) != text {
		t.Errorf("the sheet was written:\n%s", got)
	}
}
