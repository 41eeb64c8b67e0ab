package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLive: Current reads parley.yaml again once it changed (at once,
// waiting out the settle time of a file just written); a parley.yaml that
// does not load leaves the workspace read before, with why.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	write := func(cfg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents:\n  - a\n  - b\n")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(ws, nil)
	ctx := context.Background()
	if got, err := l.Current(ctx); got != ws || err != nil {
		t.Errorf("Current unchanged = %p, %v; want the workspace given", got, err)
	}
	write("agents:\n  - a\n  - c\n")
	// Just written: Look leaves it for a later look, Current waits.
	if got, read, _ := l.Look(); read || got != ws {
		t.Errorf("Look of a file just written: read %v, want it left for a later look", read)
	}
	got, err := l.Current(ctx)
	if err != nil || got.CheckAgent("c") != nil || got.CheckAgent("b") == nil {
		t.Fatalf("Current after an edit = agents %v (%v), want a and c", got.AgentNames(), err)
	}
	write("agents: [\n")
	again, err := l.Current(ctx)
	if err == nil || again != got {
		t.Errorf("Current of a parley.yaml that does not load = %v, %v; want the one read before, and why", again.AgentNames(), err)
	}
	if l.Last() != got {
		t.Error("Last is not the workspace read last")
	}
}
