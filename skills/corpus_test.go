package skills

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// The conformance corpus: protocol documents written in styles unlike the
// reference documents, each a txtar archive in testdata/corpus holding the
// document (skill.md), a workspace for it (parley.yaml), the schema parley
// must read from it (schema.golden), and messages that must be delivered
// (ok/SENDER/NAME.md) or refused (bad/SENDER/NAME.md, with a line of the
// reason in NAME.md.reason). The runner's tests route the messages end to
// end; this test checks the schema, and that skills check has nothing to
// say (every reading is sure).

// corpus returns the corpus archives by name.
func corpus(t *testing.T) map[string]*txtar.Archive {
	t.Helper()
	paths, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]*txtar.Archive{}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".txtar")] = a
	}
	return out
}

func archiveFile(a *txtar.Archive, name string) []byte {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// renderSchema writes a skill's types as the golden files hold them: per
// type, sorted by name, its header line, then one line per field.
func renderSchema(s *Skill) string {
	var types []string
	for _, t := range s.Types {
		var b strings.Builder
		b.WriteString(header(t) + "\n")
		for _, f := range fields(t) {
			b.WriteString("  " + f + "\n")
		}
		types = append(types, b.String())
	}
	sort.Strings(types)
	return strings.Join(types, "")
}

func TestCorpusSchemas(t *testing.T) {
	for name, a := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			s := Parse(name+".md", archiveFile(a, "skill.md"))
			for _, p := range s.Problems {
				t.Errorf("skills check says: line %d: %s", p.Line, p.Message)
			}
			if d := cmp.Diff(string(archiveFile(a, "schema.golden")), renderSchema(s)); d != "" {
				t.Errorf("schema (-golden +read):\n%s", d)
			}
		})
	}
}
