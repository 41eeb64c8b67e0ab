package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestDNDLLMGMPromptSeatsEveryPlayer: examples/dnd-llm's game master is
// told of every player at the table, by its character's name (a tryout
// found the prompt naming three players of four: Mira was left out).
func TestDNDLLMGMPromptSeatsEveryPlayer(t *testing.T) {
	dir := filepath.Join(examplesDir, "dnd-llm")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "prompts", "gm.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(prompt)), " ")
	players := 0
	for _, a := range ws.Config.Agents {
		if !slices.Contains(ws.Roles(a.Name), "player") {
			continue
		}
		players++
		character := a.Character
		if character == "" {
			character = a.Name
		}
		sheets, _ := filepath.Glob(filepath.Join(dir, "campaigns", "*", "party", character+".md"))
		if len(sheets) != 1 {
			t.Fatalf("agent %s: sheets %v, want one", a.Name, sheets)
		}
		data, err := os.ReadFile(sheets[0])
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		name := strings.TrimPrefix(first, "# ")
		if !strings.Contains(text, name) {
			t.Errorf("prompts/gm.md does not name %s (agent %s)", name, a.Name)
		}
	}
	if players < 4 {
		t.Errorf("%d players found, want the table's four", players)
	}
}
