package plans

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzParse reads any text as a plan: Parse never fails or panics, every
// problem is at a line of the file, every step's box is where Tick writes,
// and a tick changes that one byte only, the plan read again having the
// step done and nothing else changed; a tick of a number two steps have
// is refused. The seeds (testdata/fuzz/FuzzParse
// and the example plan) run with the normal tests.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(example); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse("p.md", data)
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, pr := range p.Check() {
			if pr.Line < 1 || pr.Line > lines {
				t.Fatalf("problem at line %d of a %d-line file: %v", pr.Line, lines, pr)
			}
		}
		pr := p.Progress()
		if pr.Done > pr.Total {
			t.Fatalf("Progress() = %+v", pr)
		}
		ticked := 0
		for _, w := range p.Waves {
			for _, s := range w.Steps {
				if ticked++; ticked > 20 {
					break // each tick parses the file again: enough
				}
				if c := data[s.box]; c != ' ' && c != 'x' && c != 'X' {
					t.Fatalf("step %d: box at %d holds %q", s.Number, s.box, c)
				}
				if n := len(p.StepsNumbered(s.Number)); n > 1 {
					if _, err := tick(p, data, s.Number); !errors.Is(err, ErrAmbiguousStep) {
						t.Fatalf("tick of step %d, the number of %d steps: %v, want ErrAmbiguousStep", s.Number, n, err)
					}
					continue
				}
				if s.Done {
					continue
				}
				out, err := tick(p, data, s.Number)
				if err != nil {
					t.Fatal(err)
				}
				if len(out) != len(data) {
					t.Fatalf("tick changed the length")
				}
				for i := range out {
					if out[i] != data[i] && i != s.box {
						t.Fatalf("tick changed byte %d, not only the box at %d", i, s.box)
					}
				}
				q := Parse("p.md", out)
				if q.Step(s.Number) == nil || !q.Step(s.Number).Done {
					t.Fatalf("step %d not done after tick:\n%s", s.Number, out)
				}
				if q.Progress().Done != pr.Done+1 {
					t.Fatalf("tick of step %d: done %d -> %d", s.Number, pr.Done, q.Progress().Done)
				}
			}
		}
		if out, err := setStatus(p, data, "done"); err == nil {
			if q := Parse("p.md", out); q.Status != "done" || q.Progress().Total != pr.Total {
				t.Fatalf("setStatus(done): status %q, %d steps; was %d:\n%s", q.Status, q.Progress().Total, pr.Total, out)
			}
		}
	})
}
