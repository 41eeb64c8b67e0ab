package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestRoleFiles: an openai player's model is shown what its character may
// know (campaigns.View: its sheet and journal, the party's knowledge,
// the world primer), never the game master's story state nor another
// character's sheet, and gets no campaign tools; the game master's gets
// the story files and the tools.
func TestRoleFiles(t *testing.T) {
	dir := t.TempDir()
	ws, err := workspace.InitConfig(dir, `agents:
  - {name: gm, role: gm, driver: openai, openai: {model: m}}
  - {name: aria, role: player, character: mira-voss, driver: openai, openai: {model: m}}
  - {name: you, role: human}
`)
	if err != nil {
		t.Fatal(err)
	}
	camp, err := campaigns.New(dir, "the-rot")
	if err != nil {
		t.Fatal(err)
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			r, _ := filepath.Rel(camp.Path(), p)
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	player := rel(roleFiles(ws, "aria"))
	for _, want := range []string{"party/mira-voss.md", "party/mira-voss-journal.md", "party-knowledge.md", "world-primer.md"} {
		if !slices.Contains(player, want) {
			t.Errorf("a player's files %v lack %s", player, want)
		}
	}
	for _, never := range []string{"story-state.md", "party/tilda-brannock.md", "scenes"} {
		if slices.Contains(player, never) {
			t.Errorf("a player's files %v hold %s", player, never)
		}
	}
	if gm := rel(roleFiles(ws, "gm")); !slices.Contains(gm, "story-state.md") {
		t.Errorf("the gm's files %v lack story-state.md", gm)
	}
	if n := len(gmTools(ws, "aria")); n != 0 {
		t.Errorf("a player gets %d campaign tools, want none", n)
	}
	if n := len(gmTools(ws, "gm")); n != 5 {
		t.Errorf("the gm gets %d campaign tools, want 5", n)
	}
	if files := roleFiles(ws, "you"); files != nil {
		t.Errorf("an agent of no role at the table gets %v", files)
	}
}
