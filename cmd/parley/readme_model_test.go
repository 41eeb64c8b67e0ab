package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMEModelExample: the parley.yaml that testdata/llm_readme.txtar
// runs is the README's example of "A model as an agent", as written.
func TestREADMEModelExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scriptDir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i := strings.Index(readme, "### A model as an agent")
	if i < 0 {
		t.Fatal(`the README has no "A model as an agent" section`)
	}
	begin := strings.Index(readme[i:], "```yaml\n")
	if begin < 0 {
		t.Fatal("the section has no yaml example")
	}
	begin += i + len("```yaml\n")
	end := strings.Index(readme[begin:], "```\n")
	example := readme[begin : begin+end]
	ar, err := txtar.ParseFile(testdataPath("llm_readme.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "parley.yaml" {
			if got := string(f.Data); got != example {
				t.Errorf("testdata/llm_readme.txtar's parley.yaml is not the README's example:\n%s\nREADME:\n%s", got, example)
			}
			return
		}
	}
	t.Fatal("testdata/llm_readme.txtar has no parley.yaml")
}
