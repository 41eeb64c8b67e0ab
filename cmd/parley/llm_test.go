package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/internal/standin"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
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

// TestOpenAIDriverReloaded: after parley.yaml is reloaded (an agent
// added), the openai agent checks its model's answers against the new
// configuration, as the router does: an answer to the new agent is
// sent, not refused.
func TestOpenAIDriverReloaded(t *testing.T) {
	s := standin.New(standin.Step{Content: "---\nto: bob\n---\nWelcome, bob.\n"})
	defer s.Close()
	dir := t.TempDir()
	cfg := "agents:\n  - {name: gm, driver: openai, retries: 0, openai: {base_url: \"" + s.URL() + "\", model: m, max_retries: 0, max_repairs: 0}}\n  - {name: you, role: human}\n"
	before, err := workspace.InitConfig(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after, err := workspace.ParseConfig(workspace.ConfigFile, []byte(cfg+"  - {name: bob, role: human}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reloaded := &workspace.Workspace{Root: dir, Config: after}
	gm, _ := before.Agent("gm")
	h, err := outsideDrivers(slog.New(slog.DiscardHandler), os.Getenv)[workspace.DriverOpenAI](gm, before)
	if err != nil {
		t.Fatal(err)
	}
	in := mailbox.New([]byte("bob joins.\n"))
	in.Set("id", (&mailbox.IDs{}).New("you"))
	in.Set("from", "you")
	if _, err := h.Handle(context.Background(), &runner.Delivery{Agent: "gm", Message: in, Loaded: before}); err == nil {
		t.Fatalf("an answer to bob was accepted before bob was an agent")
	}
	out, err := h.Handle(context.Background(), &runner.Delivery{Agent: "gm", Message: in, Loaded: reloaded})
	if err != nil {
		t.Fatalf("after the reload: %v", err)
	}
	if to, _ := out[0].Header().Get("to"); to != "bob" {
		t.Errorf("answer to = %q", to)
	}
}
