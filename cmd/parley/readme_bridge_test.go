package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMEBridgeSeat: the parley.yaml that testdata/bridgeseat.txtar
// runs is the README's seat workspace of "Beyond one machine" (its second
// yaml example), as written.
func TestREADMEBridgeSeat(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scriptDir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i := strings.Index(readme, "## Beyond one machine")
	if i < 0 {
		t.Fatal(`the README has no "Beyond one machine" section`)
	}
	var example string
	rest := readme[i:]
	for n := 0; n < 2; n++ {
		begin := strings.Index(rest, "```yaml\n")
		if begin < 0 {
			t.Fatalf("the section has %d yaml examples, want the seat's as the second", n)
		}
		rest = rest[begin+len("```yaml\n"):]
		example = rest[:strings.Index(rest, "```\n")]
	}
	ar, err := txtar.ParseFile(testdataPath("bridgeseat.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "parley.yaml" {
			if got := string(f.Data); got != example {
				t.Errorf("testdata/bridgeseat.txtar's parley.yaml is not the README's seat:\n%s\nREADME:\n%s", got, example)
			}
			return
		}
	}
	t.Fatal("testdata/bridgeseat.txtar has no parley.yaml")
}
