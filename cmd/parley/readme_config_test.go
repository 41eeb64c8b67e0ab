package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestREADMEConfigAsInitWritesIt: the README's Configuration section
// shows parley.yaml "as parley init writes it"; it showed comments init
// does not write (a tryout). The block is init's file, byte for byte.
func TestREADMEConfigAsInitWritesIt(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scriptDir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const lead = "dnd-team` writes it:\n\n```yaml\n"
	i := bytes.Index(data, []byte(lead))
	if i < 0 {
		t.Fatal("README.md: the Configuration section's parley.yaml, as parley init writes it, is not there")
	}
	block, _, _ := strings.Cut(string(data[i+len(lead):]), "```\n")
	dir := filepath.Join(t.TempDir(), "ws")
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"parley", "init", dir, "--agent", "gm", "--agent", "aria:player", "--skill", "dnd-team"}, strings.NewReader(""), &out, &errs); code != 0 {
		t.Fatalf("parley init: exit %d: %s", code, errs.String())
	}
	written, err := os.ReadFile(filepath.Join(dir, workspace.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != block {
		t.Errorf("README.md's parley.yaml is not what parley init writes:\n--- README\n%s--- init\n%s", block, written)
	}
}
