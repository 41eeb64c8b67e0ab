package scenes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/textfile"
)

// The scribe appends nothing to a scene git left a merge conflict in.
func TestAppendConflict(t *testing.T) {
	dir := t.TempDir()
	text := "---\nscene: 1\nslug: opening\n---\n# Scene 1: Opening\n\n<<<<<<< HEAD\nA.\n=======\nB.\n>>>>>>> other\n"
	path := filepath.Join(dir, "001-opening.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Append(dir, Entry{Number: 1, Slug: "opening", Text: "More."})
	if !errors.Is(err, textfile.ErrConflict) {
		t.Errorf("Append = %v, want ErrConflict", err)
	}
	if got, _ := os.ReadFile(path); string(got) != text {
		t.Errorf("the scene was written:\n%s", got)
	}
}

// An entry appended to a scene kept with CRLF (a clone made with
// core.autocrlf) has CRLF lines: no file of mixed endings.
func TestAppendCRLF(t *testing.T) {
	dir := t.TempDir()
	text := "# Scene 1: Opening\r\n\r\nThe tavern is loud.\r\n"
	path := filepath.Join(dir, "001-opening.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Append(dir, Entry{Number: 1, Slug: "opening", Text: "A rat squeaks.\nAnother.", ID: "20261121-101600.000000Z-gm-000002"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if n := strings.Count(string(got), "\n") - strings.Count(string(got), "\r\n"); n != 0 || !strings.HasSuffix(string(got), "Another.\r\n") {
		t.Errorf("%d LF-only lines after the append:\n%q", n, got)
	}
}
