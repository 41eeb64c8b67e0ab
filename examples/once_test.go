package examples

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDnDScriptsHandleTwiceAlike: parley hands a message at least once,
// again after a runner was killed before it noted the message handled.
// The table's game master keeps where the story is in its state; handled
// again, a message gets the answer it got the first time, and a state a
// first attempt left half changed is put back first.
func TestDnDScriptsHandleTwiceAlike(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
	table := func() string {
		dir := t.TempDir()
		sub, err := fs.Sub(DnD, "dnd")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, sub); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const start, answer = "20261127-100000.000000Z-lead-000001", "20261127-100100.000000Z-lead-000002"
	gm := func(dir, id, typ, text string) string {
		t.Helper()
		msg := filepath.Join(dir, "message.md")
		text = "---\nid: " + id + "\nfrom: lead\nto: gm\n---\n" + text
		if err := os.WriteFile(msg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "agents/gm.sh")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(text)
		cmd.Env = append(os.Environ(), "PARLEY_MESSAGE="+msg, "PARLEY_MESSAGE_ID="+id, "PARLEY_TYPE="+typ, "PARLEY_AGENT=gm", "PARLEY_FROM=lead")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gm.sh: %v", err)
		}
		return string(out)
	}
	// The session starts; the table answers the game master's question.
	play := func(dir string) string {
		t.Helper()
		gm(dir, start, "SESSION_COMMAND", "[SESSION_COMMAND]\ncommand: start\ncampaign: the-sunken-bell\n\nBegin.\n")
		return gm(dir, answer, "PLAYER_ANSWER", "[PLAYER_ANSWER]\nanswer: Through the collapsed nave\n\nThe nave.\n")
	}
	dir := table()
	first := play(dir)
	if !strings.Contains(first, "[NARRATIVE]") || !strings.Contains(first, "Mira leads the way") {
		t.Fatalf("gm.sh answered the answer with %q; want the next beat", first)
	}
	if again := gm(dir, answer, "PLAYER_ANSWER", "[PLAYER_ANSWER]\nanswer: Through the collapsed nave\n\nThe nave.\n"); again != first {
		t.Errorf("handled again, gm.sh answered %q; want its first answer %q", again, first)
	}

	// A first attempt cut short: the state copied aside, then changed
	// (the beat moved on), and no answer kept.
	dir = table()
	first = play(dir)
	state := filepath.Join(dir, "campaigns/the-sunken-bell/tmp/gm")
	kept := filepath.Join(state, ".kept")
	if err := os.Rename(filepath.Join(kept, answer+".answer"), filepath.Join(kept, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(kept, answer+".before"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kept, answer+".before", "beat"), []byte("opening\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gm(dir, answer, "PLAYER_ANSWER", "[PLAYER_ANSWER]\nanswer: Through the collapsed nave\n\nThe nave.\n"); got != first {
		t.Errorf("after an attempt cut short, gm.sh answered %q; want %q", got, first)
	}
}
