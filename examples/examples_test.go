package examples

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestGitignore checks that each example's .gitignore keeps out what the
// .gitignore of `parley init` keeps out, and nothing of what it keeps:
// an example copied to start a project is versioned as a new workspace is.
func TestGitignore(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ws.Root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	want := patterns(string(data))
	for name, fsys := range map[string]fs.FS{"teams": Teams, "dnd": DnD, "pipeline": Pipeline} {
		got, err := fs.ReadFile(fsys, name+"/.gitignore")
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, p := range patterns(string(got)) {
			have[p] = true
		}
		for _, p := range want {
			if !have[p] {
				t.Errorf("examples/%s/.gitignore lacks %q, which parley init writes", name, p)
			}
		}
		for p := range have {
			if strings.HasPrefix(strings.TrimPrefix(p, "/"), "mailboxes") && !slices.Contains(want, p) {
				t.Errorf("examples/%s/.gitignore has %q, which parley init does not write", name, p)
			}
		}
	}
}

// TestGitattributes checks that each example's .gitattributes has every
// line of the one `parley init` writes (union merges of the files parley
// appends to, LF scripts): an example copied into git merges and checks
// out as a new workspace does.
func TestGitattributes(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ws.Root, ".gitattributes"))
	if err != nil {
		t.Fatal(err)
	}
	for name, fsys := range map[string]fs.FS{"teams": Teams, "dnd": DnD, "pipeline": Pipeline} {
		got, err := fs.ReadFile(fsys, name+"/.gitattributes")
		if err != nil {
			t.Fatal(err)
		}
		have := patterns(string(got))
		for _, p := range patterns(string(data)) {
			if !slices.Contains(have, p) {
				t.Errorf("examples/%s/.gitattributes lacks %q, which parley init writes", name, p)
			}
		}
	}
}

// patterns returns the lines of a .gitignore that are patterns.
func patterns(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestREADMEPipeline keeps the README's orchestrator workspace as
// examples/pipeline has it: the yaml block of "### The orchestrator" is
// its parley.yaml, byte for byte.
func TestREADMEPipeline(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n### The orchestrator\n")
	if !ok {
		t.Fatal("the README has no ### The orchestrator section")
	}
	_, block, ok := strings.Cut(sec, "\n```yaml\n")
	if !ok {
		t.Fatal("the README's orchestrator section has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```\n")
	want, err := fs.ReadFile(Pipeline, "pipeline/parley.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if block != string(want) {
		t.Errorf("the README's orchestrator workspace is not examples/pipeline/parley.yaml:\n%s", block)
	}
}
