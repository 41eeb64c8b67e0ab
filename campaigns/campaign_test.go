package campaigns

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

func TestNewAndFind(t *testing.T) {
	ws := t.TempDir()
	if _, err := Find(ws, ""); !errors.Is(err, ErrNoCampaign) {
		t.Errorf("Find in an empty workspace = %v", err)
	}
	c, err := New(ws, "the-rot-beneath")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{Overview, WorldPrimer, StoryState, PartyKnowledge, Preferences, DecisionLog, ".gitignore", "party/.gitkeep", "scenes/.gitkeep", "npcs/.gitkeep", "beats/.gitkeep", "tmp"} {
		if _, err := os.Stat(c.Path(f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	story, _ := os.ReadFile(c.Path(StoryState))
	for _, want := range []string{"# Story State: The Rot Beneath\n", "## Current Situation\n", "## GM Notes (Secret)\n", "### Hidden Information\n", "**Hit Points**:\n"} {
		if !strings.Contains(string(story), want) {
			t.Errorf("story-state.md lacks %q", want)
		}
	}
	if _, err := New(ws, "the-rot-beneath"); !errors.Is(err, ErrExists) {
		t.Errorf("New twice = %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(ws, Dir, ".*")); len(leftovers) != 0 {
		t.Errorf("staging left behind: %v", leftovers)
	}
	got, err := Find(ws, "")
	if err != nil || got.Name != "the-rot-beneath" {
		t.Errorf("Find the only campaign = %+v, %v", got, err)
	}
	New(ws, "second-wind")
	if _, err := Find(ws, ""); !errors.Is(err, ErrSeveral) || !strings.Contains(err.Error(), "second-wind, the-rot-beneath") {
		t.Errorf("Find among two = %v", err)
	}
	if _, err := Find(ws, "nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "(campaigns: second-wind, the-rot-beneath)") {
		t.Errorf("Find a missing one = %v", err)
	}
	names, _ := List(ws)
	if d := cmp.Diff([]string{"second-wind", "the-rot-beneath"}, names); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
}

func TestBadNames(t *testing.T) {
	ws := t.TempDir()
	for _, name := range []string{"the/rot", "../escape", "The Rot", "", "-x", "a--b"} {
		if _, err := New(ws, name); !errors.Is(err, mailbox.ErrBadName) {
			t.Errorf("New(%q) = %v, want a bad name", name, err)
		}
		if _, err := Open(ws, name); !errors.Is(err, mailbox.ErrBadName) {
			t.Errorf("Open(%q) = %v, want a bad name", name, err)
		}
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("bad names made files: %v", entries)
	}
}

func TestCharacters(t *testing.T) {
	ws := t.TempDir()
	c, _ := New(ws, "x")
	for f, text := range map[string]string{
		"tilda-brannock.md":         "| **Hit Points** | 8/8 |\n",
		"tilda-brannock-journal.md": "x\n",
		"corwin-voss.md":            "# Corwin\n\n## Equipment\n- Lute\n", // a sheet, with a mistake
		"notes.txt":                 "x\n",
		"appearance-briefs.md":      "# Appearance briefs\n\n- Tilda: short\n", // beside the sheets
		// Copies of a sheet whose names name no character: not characters.
		"tilda-brannock (copy).md": "| **Hit Points** | 8/8 |\n",
		"Tilda Brannock.md":        "| **Hit Points** | 8/8 |\n",
		"tilda-brannock.md~":       "| **Hit Points** | 8/8 |\n",
	} {
		os.WriteFile(c.Path(PartyDir, f), []byte(text), 0o644)
	}
	got, _ := c.Characters()
	if d := cmp.Diff([]string{"corwin-voss", "tilda-brannock"}, got); d != "" {
		t.Errorf("Characters (-want +got):\n%s", d)
	}
	if _, err := c.Sheet("mira-voss"); !errors.Is(err, ErrNoSheet) || !strings.Contains(err.Error(), "characters: corwin-voss, tilda-brannock") {
		t.Errorf("Sheet of a missing character = %v", err)
	}
	if _, err := c.Sheet("Tilda"); !errors.Is(err, mailbox.ErrBadName) {
		t.Errorf("Sheet(Tilda) = %v", err)
	}
}
