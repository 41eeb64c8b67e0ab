package skills

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of the shipped skills")

// render writes down everything parley reads from a skill, one line per
// fact, for golden files.
func render(s *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "skill %s version %q\n%s\n", s.Name, s.Version, s.Description)
	for _, t := range s.Types {
		fmt.Fprintf(&b, "\n%s\n", header(t))
		for _, f := range fields(t) {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		for _, r := range t.Rules {
			var ifs []string
			for _, c := range r.If {
				ifs = append(ifs, c.String())
			}
			fmt.Fprintf(&b, "  rule: %s => %s\n", strings.Join(ifs, " or "), r.Then)
		}
	}
	for _, sg := range s.Signals {
		fmt.Fprintf(&b, "signal %s %s>%s\n", sg.Name, strings.Join(sg.Senders, ","), strings.Join(sg.Recipients, ","))
	}
	for _, d := range s.Deprecations {
		fmt.Fprintf(&b, "deprecated %s: %s -> %s: %s\n", d.Type, d.Introduced, d.Deprecated, d.Replacement)
	}
	for _, p := range s.Problems {
		fmt.Fprintf(&b, "problem %s\n", p)
	}
	return b.String()
}

// TestBuiltinGolden checks what parley reads from each shipped skill
// against testdata/<name>.golden (rewrite them with -update after a
// deliberate change, and read the diff).
func TestBuiltinGolden(t *testing.T) {
	files := Builtin()
	if len(files) != 4 {
		t.Errorf("%d shipped skills, want dnd-team, dnd-journal, dev-pipeline and team-requests", len(files))
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			s := Parse("builtin:"+n, files[n])
			if len(s.Problems) != 0 {
				t.Errorf("problems in a shipped skill: %v", s.Problems)
			}
			got := render(s)
			golden := filepath.Join("testdata", strings.TrimSuffix(n, ".md")+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("%s (-golden +got):\n%s", n, d)
			}
		})
	}
}

// TestBuiltinCoversSeeds checks that the shipped skills restate every
// message type of the reference protocols, with the same fields.
func TestBuiltinCoversSeeds(t *testing.T) {
	lib, err := LoadLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	for seed, skill := range map[string]string{
		"messaging-protocol-v2.md":        "dnd-team",
		"messaging-protocol-v1-phases.md": "dnd-team",
		"message-schema.md":               "dev-pipeline",
		"send-message-tool.md":            "team-requests",
	} {
		t.Run(seed, func(t *testing.T) {
			s := loadSeed(t, seed)
			ours, ok := lib.Get(skill)
			if !ok {
				t.Fatalf("no shipped skill %s", skill)
			}
			for _, st := range s.Types {
				ot, ok := ours.Type(st.Name)
				if !ok {
					t.Errorf("%s does not define %s", skill, st.Name)
					continue
				}
				if strings.Join(ot.Observers, ",") != strings.Join(st.Observers, ",") {
					t.Errorf("%s: %s is seen by %v, the seed says %v", skill, st.Name, ot.Observers, st.Observers)
				}
				for _, f := range st.Fields {
					of, ok := ot.Field(f.Name)
					if !ok {
						t.Errorf("%s: %s has no field %s", skill, st.Name, f.Name)
						continue
					}
					if of.Required != f.Required {
						t.Errorf("%s: %s.%s required = %v, the seed says %v", skill, st.Name, f.Name, of.Required, f.Required)
					}
					if len(f.Enum) > 0 && strings.Join(of.Enum, "|") != strings.Join(f.Enum, "|") && seed != "messaging-protocol-v1-phases.md" {
						t.Errorf("%s: %s.%s values %v, the seed says %v", skill, st.Name, f.Name, of.Enum, f.Enum)
					}
				}
			}
		})
	}
}
