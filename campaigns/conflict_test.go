package campaigns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parley-dev/parley/internal/textfile"
)

// TestCheckConflicts: a file git left a merge conflict in fails the
// check, at the line of its <<<<<<< (a tryout: a conflicted journal was
// "ok, 8 entries", a conflicted sheet only a warning); a heading
// underlined with ======= is no conflict. A scene whose frontmatter
// reads was "ok" (a tryout: two clones told the same scene).
func TestCheckConflicts(t *testing.T) {
	ws := t.TempDir()
	c, err := New(ws, "the-test")
	if err != nil {
		t.Fatal(err)
	}
	conflict := "<<<<<<< HEAD\nA note\n=======\nB note\n>>>>>>> other\n"
	files := map[string]string{
		"party/tor.md":         "# Tor\n\n| | |\n|---|---|\n| **Hit Points** | 13/13 |\n\n## Equipment\n" + conflict,
		"party/tor-journal.md": "# Tor — Journal\n\n" + conflict,
		DecisionLog:            conflict,
		"npcs/mirsk.md":        "# Mirsk\n" + conflict,
		"scenes/001-x.md":      "---\nscene: 1\nslug: x\n---\n# Scene 1: X\n\n" + conflict,
		WorldPrimer:            "World Primer\n=======\n\nThe land.\n",
	}
	for rel, text := range files {
		if err := os.WriteFile(filepath.Join(c.Root, filepath.FromSlash(rel)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	got := findings(r)
	for rel, want := range map[string]string{
		"party/tor.md":         "party/tor.md:8: unresolved merge conflict (<<<<<<< here): resolve it, then git add",
		"party/tor-journal.md": "party/tor-journal.md:3: unresolved merge conflict (<<<<<<< here): resolve it, then git add",
		DecisionLog:            "decision-log.md:1: unresolved merge conflict (<<<<<<< here): resolve it, then git add",
		"npcs/mirsk.md":        "npcs/mirsk.md:2: unresolved merge conflict (<<<<<<< here): resolve it, then git add",
		"scenes/001-x.md":      "scenes/001-x.md:7: unresolved merge conflict (<<<<<<< here): resolve it, then git add",
	} {
		if f := got[rel]; f.Status != Malformed || f.Detail != want {
			t.Errorf("%s: %s %q, want malformed %q", rel, f.Status, f.Detail, want)
		}
	}
	if f := got[WorldPrimer]; f.Status != OK {
		t.Errorf("%s: %s %q, want ok: a setext heading is no conflict", WorldPrimer, f.Status, f.Detail)
	}
	if r.OK() {
		t.Error("the check passed")
	}
	// Conflicts, for parley status (which said nothing of them): the
	// same files, and lines, named from the workspace.
	cs, err := Conflicts(ws)
	if err != nil {
		t.Fatalf("Conflicts() = %v", err)
	}
	var gotc []string
	for _, ce := range cs {
		gotc = append(gotc, fmt.Sprintf("%s:%d", ce.Path, ce.Line))
	}
	wantc := []string{"campaigns/the-test/decision-log.md:1", "campaigns/the-test/npcs/mirsk.md:2", "campaigns/the-test/party/tor-journal.md:3", "campaigns/the-test/party/tor.md:8", "campaigns/the-test/scenes/001-x.md:7"}
	if !slices.Equal(gotc, wantc) {
		t.Errorf("Conflicts() = %q, want %q", gotc, wantc)
	}
}

// TestWritePrefsConflict: preferences.md is not written into a merge
// conflict git left in it.
func TestWritePrefsConflict(t *testing.T) {
	c, err := New(t.TempDir(), "the-test")
	if err != nil {
		t.Fatal(err)
	}
	text := "# Preferences\n\n<<<<<<< HEAD\n**dialogue_format**: prose\n=======\n**dialogue_format**: script\n>>>>>>> other\n"
	if err := os.WriteFile(c.Path(Preferences), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.WritePrefs("tor", "Tor", "prose"); !errors.Is(err, textfile.ErrConflict) {
		t.Errorf("WritePrefs = %v, want ErrConflict", err)
	}
	if got, _ := os.ReadFile(c.Path(Preferences)); string(got) != text {
		t.Errorf("preferences.md was written:\n%s", got)
	}
}
