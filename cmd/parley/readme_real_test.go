package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMERealAgents: the README's "Real agents" section shows
// examples/dnd-llm's parley.yaml as it is, and every parley command of
// its "Run it" block is one testdata/dndllm.txtar runs against the
// example.
func TestREADMERealAgents(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scriptDir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i := strings.Index(readme, "### Real agents: examples/dnd-llm")
	if i < 0 {
		t.Fatal(`the README has no "Real agents" section`)
	}
	section := readme[i:]
	if j := strings.Index(section[1:], "\n### "); j >= 0 {
		section = section[:j+1]
	}
	block := func(fence string) string {
		t.Helper()
		begin := strings.Index(section, fence)
		if begin < 0 {
			t.Fatalf("the section has no %s block", fence)
		}
		begin += len(fence)
		end := strings.Index(section[begin:], "```\n")
		return section[begin : begin+end]
	}
	want, err := os.ReadFile(filepath.Join(examplesDir, "dnd-llm", "parley.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := block("```yaml\n"); got != string(want) {
		t.Errorf("the README's parley.yaml is not examples/dnd-llm's:\n%s\nexample:\n%s", got, want)
	}
	script, err := os.ReadFile(testdataPath("dndllm.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(block("```sh\n"), "\n") {
		if !strings.HasPrefix(line, "parley ") || strings.HasPrefix(line, "parley play") {
			continue
		}
		n++
		if !strings.Contains(string(script), "\nexec "+line+"\n") && !strings.Contains(string(script), "\n"+line+"\n") {
			t.Errorf("testdata/dndllm.txtar does not run the README's %q", line)
		}
	}
	if n < 5 {
		t.Errorf("found %d parley commands in the section's sh block, want the README's several", n)
	}
}
