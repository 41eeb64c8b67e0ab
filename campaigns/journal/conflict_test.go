package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/internal/textfile"
)

// An entry is not appended after a merge conflict git left in the
// journal.
func TestAddConflict(t *testing.T) {
	text := "# Tor — Journal\n\n<<<<<<< HEAD\nA note\n=======\nB note\n>>>>>>> other\n"
	path := filepath.Join(t.TempDir(), "tor-journal.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Add(path, "tor", Entry{Title: "x", Did: "y"})
	if !errors.Is(err, textfile.ErrConflict) {
		t.Errorf("Add = %v, want ErrConflict", err)
	}
	if got, _ := os.ReadFile(path); string(got) != text {
		t.Errorf("the journal was written:\n%s", got)
	}
}
