package campaigns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// findings returns a report's findings as "status path" lines.
func findings(r *Report) map[string]Finding {
	out := map[string]Finding{}
	for _, f := range r.Findings {
		out[f.Path] = f
	}
	return out
}

// The real campaign people already have passes; what it lacks is optional.
func TestCheckFixture(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "fixtures", "campaigns", "the-rot-beneath")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no fixture campaign: %v", err)
	}
	c := &Campaign{Name: "the-rot-beneath", Root: dir}
	r, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("the fixture campaign fails the check: %+v", r.Findings)
	}
	got := findings(r)
	for path, want := range map[string]Status{
		StoryState: OK, PartyKnowledge: OK, Overview: OK, "party/": OK,
		"party/tilda-brannock.md": OK, "party/corwin-voss.md": OK, "party/gideon-harrowmoor.md": OK, "party/seraphine-duskhollow.md": OK,
		DecisionLog: Missing, "scenes/": Missing, "items/": Missing,
	} {
		if got[path].Status != want {
			t.Errorf("%s: %q (%s), want %q", path, got[path].Status, got[path].Detail, want)
		}
	}
	if d := got["party/tilda-brannock.md"].Detail; d != "HP 12/12, level 1, 8 items" {
		t.Errorf("tilda-brannock: %q", d)
	}
}

func TestCheckProblems(t *testing.T) {
	ws := t.TempDir()
	c, err := New(ws, "the-test-run")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || findings(r)["party/"].Status != Warning {
		t.Errorf("a new campaign: %+v", r.Findings)
	}

	write := func(rel, text string) {
		t.Helper()
		if err := os.WriteFile(c.Path(rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("party/mira-voss.md", "| **Hit Points** | 8/8 |\n")
	write("party/Mira Voss.md", "| **Hit Points** | 8/8 |\n")
	write("party/nobody-journal.md", "## 2026-11-21 — x\n")
	write("party/mira-voss-journal.md", "# Journal\n\n## 2026-11-21 — a\n\n## 2026-11-22 — b\n")
	write("party/broken.md", "| **Hit Points** | eight |\n")
	write("party/mira-voss (copy).md", "| **Hit Points** | 8/8 |\n")
	write("party/too-high.md", "| **Hit Points** | 8/8 |\n| **Level** | 25 |\n| STR | DEX | CON | INT | WIS | CHA |\n|---|---|---|---|---|---|\n| 99 | 14 | 11 | 10 | 14 | 13 |\n")
	write("party/zero.md", "| **Hit Points** | 8/8 |\n| **Level** | 0 |\n")
	write("party/relationships.md", "# Who trusts whom\n\nMira trusts nobody.\n")
	write("scenes/001-the-inn.md", "---\nlocation: [unclosed\n---\nText.\n")
	write("scenes/notes.md", "ideas\n")
	write("tmp/gm-state-delta.md", "- NPC: Wiven\n")
	if err := os.Remove(c.Path(PartyKnowledge)); err != nil {
		t.Fatal(err)
	}
	r, err = c.Check()
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() {
		t.Error("the check passed")
	}
	got := findings(r)
	for path, want := range map[string]struct {
		status Status
		detail string
	}{
		PartyKnowledge:              {Missing, ""},
		"party/":                    {OK, "4 characters, 1 other file"},
		"party/relationships.md":    {OK, "not a character sheet: kept as it is"},
		"party/mira-voss.md":        {OK, "HP 8/8, level not written, 0 items"},
		"party/Mira Voss.md":        {Warning, "not a character: the file name is no character's name (full kebab-case, like tilda-brannock.md); move it out of party/"},
		"party/mira-voss (copy).md": {Warning, "; to play it, rename it party/mira-voss-copy.md; else move it out of party/"},
		"party/too-high.md": {Malformed, "party/too-high.md:2: level: 25 is out of range: want 1 to 20: set level to set it right; " +
			"party/too-high.md:5: STR: 99 is out of range: want 1 to 30: set str to set it right"},
		"party/zero.md":              {Malformed, "party/zero.md:2: level: 0 is out of range: want 1 to 20: set level to set it right"},
		"party/broken.md":            {Malformed, `party/broken.md:1: hit points: "eight" is not a number`},
		"party/nobody-journal.md":    {Warning, "no party/nobody.md"},
		"party/mira-voss-journal.md": {OK, "2 entries"},
		"scenes/001-the-inn.md":      {Malformed, "scenes/001-the-inn.md:2: frontmatter: did not find expected ',' or ']'"},
		"scenes/notes.md":            {Warning, "not a scene file name"},
		"tmp/gm-state-delta.md":      {Warning, "1 line waiting to be applied"},
	} {
		f := got[path]
		if f.Status != want.status || !strings.Contains(f.Detail, want.detail) {
			t.Errorf("%s: %s %q, want %s %q", path, f.Status, f.Detail, want.status, want.detail)
		}
	}
	if !got[PartyKnowledge].Failed() || got[DecisionLog].Failed() {
		t.Error("a missing required file must fail the check, and only it")
	}
}
