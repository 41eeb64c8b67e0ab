package plans

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/internal/textfile"
)

// example is the example plan of examples/pipeline.
const example = "../examples/pipeline/plans/retry-failed-deliveries.md"

func readExample(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseExample(t *testing.T) {
	p := Parse("p.md", readExample(t))
	if probs := p.Check(); len(probs) > 0 {
		t.Fatalf("Check() = %v, want none", probs)
	}
	if p.Date != "2026-11-26" || p.Task != "Retry failed deliveries" || p.Tier != 2 || p.Status != "approved" {
		t.Errorf("frontmatter = %q %q %d %q", p.Date, p.Task, p.Tier, p.Status)
	}
	if p.Title != "Retry failed deliveries" {
		t.Errorf("Title = %q", p.Title)
	}
	var names []string
	for _, s := range p.Sections {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff(Sections, names); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"data-mutation", "concurrent"}, p.RiskTags); diff != "" {
		t.Errorf("RiskTags (-want +got):\n%s", diff)
	}
	if len(p.Criteria) != 3 || !strings.HasPrefix(p.Criteria[0], "AC1: ") {
		t.Errorf("Criteria = %q", p.Criteria)
	}
	type wave struct {
		N       int
		Title   string
		Depends []int
		Steps   []int
	}
	var got []wave
	for _, w := range p.Waves {
		g := wave{N: w.Number, Title: w.Title, Depends: w.Depends}
		for _, s := range w.Steps {
			g.Steps = append(g.Steps, s.Number)
			if s.Wave != w.Number {
				t.Errorf("step %d: Wave = %d, want %d", s.Number, s.Wave, w.Number)
			}
		}
		got = append(got, g)
	}
	want := []wave{
		{1, "Policy", nil, []int{1, 2}},
		{2, "Redelivery", []int{1}, []int{3, 4, 5}},
		{3, "Documentation", []int{2}, []int{6, 7}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	s := p.Step(3)
	if s == nil || s.Title != "Due retries on rescan" || !strings.HasPrefix(s.Detail, "runner/route.go: ") || s.Done || s.Line != 44 {
		t.Errorf("Step(3) = %+v", s)
	}
	if !p.HasRisk("security", "concurrent") || p.HasRisk("auth") {
		t.Errorf("HasRisk wrong for tags %v", p.RiskTags)
	}
}

// plan builds a plan from the example, with old replaced by new.
func plan(t *testing.T, old, new string) []byte {
	t.Helper()
	data := readExample(t)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("the example has no %q", old)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

func TestCheck(t *testing.T) {
	extra := "- [ ] **Step 7: Testscript** — cmd/parley/testdata/retry.txtar.\n" +
		"- [ ] **Step 8: a** — a.\n- [ ] **Step 9: b** — b.\n- [ ] **Step 10: c** — c.\n- [ ] **Step 11: d** — d.\n"
	tests := []struct {
		name     string
		old, new string
		want     []string // line: problem, each a substring
	}{
		{"later wave", "(depends on Wave 1)", "(depends on Wave 3)", []string{"43: wave 2 depends on wave 3, which comes later"}},
		{"missing wave", "(depends on Wave 2)", "(depends on Wave 4)", []string{"48: wave 3 depends on wave 4, which the plan does not have"}},
		{"itself", "(depends on Wave 2)", "(depends on Wave 3)", []string{"48: wave 3 depends on itself"}},
		{"duplicate step", "**Step 4: Give", "**Step 3: Give", []string{"45: step 3 again (first at line 44)"}},
		{"too many steps", "- [ ] **Step 7: Testscript** — cmd/parley/testdata/retry.txtar: a removed mailbox, a retry, a give-up.\n", extra,
			[]string{"54: step 11 is the plan's step number 11: a plan has at most 10 steps"}},
		{"missing section", "## Risks\n", "## Hazards\n", []string{"32: no ## Risks section (it goes before ## Risk Tags)"}},
		{"missing last section", "## Acceptance Criteria\n", "## Criteria\n", []string{"56: no ## Acceptance Criteria section (it goes at the end)"}},
		{"no frontmatter field", "tier: 2\n", "", []string{"5: frontmatter: no tier"}},
		{"bad tier", "tier: 2\n", "tier: high\n", []string{`4: frontmatter: tier "high" is not one of 0, 1, 2, 3`}},
		{"bad status", "status: approved", "status: shipped", []string{`5: frontmatter: status "shipped" is not one of`}},
		{"bad date", "date: 2026-11-26", "date: yesterday", []string{`2: frontmatter: date "yesterday" is not a date`}},
		{"no frontmatter", "---\ndate: 2026-11-26\ntask: Retry failed deliveries\ntier: 2\nstatus: approved\n---\n", "",
			[]string{"1: no frontmatter"}},
		{"malformed step", "- [ ] **Step 5: Status shows retries** —", "- [ ] Step 5: Status shows retries —", []string{"46: not a step: want"}},
		{"step without detail", "**Step 6: README** — README.md: the policy, its defaults, what `parley status` shows.", "**Step 6: README**", []string{"49: step 6 says only its title"}},
		{"malformed wave", "### Wave 3 — Documentation", "### Third wave — Documentation", []string{"48: a heading in Implementation Waves that is not"}},
		{"wave out of order", "### Wave 3 — Documentation", "### Wave 4 — Documentation", []string{"48: wave 4 is the plan's wave number 3"}},
		{"duplicate wave", "### Wave 3 — Documentation (depends on Wave 2)", "### Wave 2 — Documentation (depends on Wave 1)", []string{"48: wave 2 again (first at line 43)"}},
		{"empty wave", "- [ ] **Step 6: README** — README.md: the policy, its defaults, what `parley status` shows.\n- [ ] **Step 7: Testscript** — cmd/parley/testdata/retry.txtar: a removed mailbox, a retry, a give-up.\n", "", []string{"48: wave 3 has no steps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse("p.md", plan(t, tt.old, tt.new))
			probs := p.Check()
			var got []string
			for _, pr := range probs {
				got = append(got, pr.Error())
			}
			if len(probs) != len(tt.want) {
				t.Fatalf("Check() = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], "p.md:") || !strings.Contains(got[i], w) {
					t.Errorf("Check()[%d] = %q, want p.md:%s", i, got[i], w)
				}
			}
			err := p.Err()
			var ce *CheckError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &ce) || len(ce.Problems) != len(probs) {
				t.Errorf("Err() = %v, want a *CheckError of the problems", err)
			}
		})
	}
}

func TestStepDetailUnder(t *testing.T) {
	// What a step says may be on the indented lines under its title.
	p := Parse("p.md", plan(t, "**Step 6: README** — README.md: the policy, its defaults, what `parley status` shows.", "**Step 6: README**\n  README.md: the policy,\n  and its defaults."))
	if probs := p.Check(); len(probs) > 0 {
		t.Errorf("Check() = %v, want none", probs)
	}
	if s := p.Step(6); s.Detail != "README.md: the policy,\nand its defaults." || !cmp.Equal(s.Files, []string{"README.md"}) {
		t.Errorf("Step(6) = %q, files %q", s.Detail, s.Files)
	}
}

func TestCheckEmpty(t *testing.T) {
	for _, data := range []string{"", "---\n", "# just a title\n", "\xff\xfe"} {
		if probs := Parse("p.md", []byte(data)).Check(); len(probs) == 0 {
			t.Errorf("Check(%q) = none, want problems", data)
		}
	}
}

func TestProgress(t *testing.T) {
	data := plan(t, "- [ ] **Step 1:", "- [x] **Step 1:")
	data = bytes.Replace(data, []byte("- [ ] **Step 2:"), []byte("- [X] **Step 2:"), 1)
	data = bytes.Replace(data, []byte("- [ ] **Step 4:"), []byte("- [x] **Step 4:"), 1)
	p := Parse("p.md", data)
	want := Progress{Done: 3, Total: 7, Waves: []WaveProgress{{1, 2, 2}, {2, 1, 3}, {3, 0, 2}}}
	if diff := cmp.Diff(want, p.Progress()); diff != "" {
		t.Errorf("Progress() (-want +got):\n%s", diff)
	}
	w, next := p.Next()
	var nums []int
	for _, s := range next {
		nums = append(nums, s.Number)
	}
	if w == nil || w.Number != 2 || !cmp.Equal(nums, []int{3, 5}) {
		t.Errorf("Next() = wave %v, steps %v; want wave 2, steps [3 5]", w, nums)
	}
	if !p.Wave(1).Complete() || p.Wave(2).Complete() || p.Wave(9) != nil {
		t.Error("Wave(n).Complete() wrong")
	}
}

func writePlan(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.md")
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTick(t *testing.T) {
	for _, variant := range []string{"lf", "crlf", "bom"} {
		crlf := variant == "crlf"
		data := readExample(t)
		if crlf {
			data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		}
		if variant == "bom" {
			// An editor's byte order mark: the plan reads as without it
			// (it had no frontmatter), and the tick keeps it.
			data = append([]byte("\uFEFF"), data...)
			if probs := Parse("bom.md", data).Check(); len(probs) > 0 {
				t.Errorf("a plan with a byte order mark: %v", probs)
			}
		}
		path := writePlan(t, data)
		p, changed, err := Tick(path, 4)
		if err != nil || !changed {
			t.Fatalf("Tick(4) = %v, %v", changed, err)
		}
		if !p.Step(4).Done {
			t.Error("Tick(4): the plan returned has step 4 not done")
		}
		got, _ := os.ReadFile(path)
		want := bytes.Replace(data, []byte("- [ ] **Step 4:"), []byte("- [x] **Step 4:"), 1)
		if !bytes.Equal(got, want) {
			t.Errorf("Tick(4) (%s) wrote (-want +got):\n%s", variant, cmp.Diff(string(want), string(got)))
		}
		if _, changed, err := Tick(path, 4); err != nil || changed {
			t.Errorf("Tick(4) again = %v, %v; want no change", changed, err)
		}
		if again, _ := os.ReadFile(path); !bytes.Equal(again, want) {
			t.Error("Tick(4) again changed the file")
		}
		if _, _, err := Tick(path, 12); !errors.Is(err, ErrNoStep) {
			t.Errorf("Tick(12) = %v, want ErrNoStep", err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("Tick changed the mode to %v", fi.Mode().Perm())
		}
		if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tmp")); len(tmps) > 0 {
			t.Errorf("Tick left %v", tmps)
		}
	}
	if _, _, err := Tick(filepath.Join(t.TempDir(), "none.md"), 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Tick(missing file) = %v, want ErrNotExist", err)
	}
}

// TestTickAmbiguous: a step number two steps of a plan have (a plan
// that does not check) is refused, naming the lines of both, and the
// file is left as it is; Tick used to tick the first and leave the
// other never tickable.
func TestTickAmbiguous(t *testing.T) {
	data := plan(t, "**Step 4: Give", "**Step 3: Give") // steps 3 at lines 44 and 45
	path := writePlan(t, data)
	p, changed, err := Tick(path, 3)
	var ae *AmbiguousStepError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAmbiguousStep) || p != nil || changed {
		t.Fatalf("Tick(3) = %v, %v, %v; want an *AmbiguousStepError", p, changed, err)
	}
	want := &AmbiguousStepError{Path: path, Step: 3, Lines: []int{44, 45}}
	if diff := cmp.Diff(want, ae); diff != "" {
		t.Errorf("Tick(3) error (-want +got):\n%s", diff)
	}
	if got, want := err.Error(), path+": 2 steps are numbered 3 (lines 44, 45)"; got != want {
		t.Errorf("Tick(3) error = %q, want %q", got, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Errorf("Tick(3) changed the file (-want +got):\n%s", cmp.Diff(string(data), string(got)))
	}
	// A step whose number the plan has once still ticks: the plan's
	// other problem does not stop it.
	if p, changed, err := Tick(path, 5); err != nil || !changed || !p.Step(5).Done {
		t.Errorf("Tick(5) of a plan with an unrelated problem = %v, %v", changed, err)
	}
}

func TestStepsNumbered(t *testing.T) {
	p := Parse("p.md", plan(t, "**Step 4: Give", "**Step 3: Give"))
	var lines []int
	for _, s := range p.StepsNumbered(3) {
		lines = append(lines, s.Line)
	}
	if !cmp.Equal(lines, []int{44, 45}) {
		t.Errorf("StepsNumbered(3) at lines %v, want [44 45]", lines)
	}
	if got := p.StepsNumbered(4); got != nil {
		t.Errorf("StepsNumbered(4) = %v, want none", got)
	}
	if s := p.Step(3); s == nil || s.Line != 44 {
		t.Errorf("Step(3) = %+v, want the one at line 44", s)
	}
}

func TestWaveOf(t *testing.T) {
	// Two waves numbered 2: step 6 is under the second, the file's third.
	p := Parse("p.md", plan(t, "### Wave 3 — Documentation (depends on Wave 2)", "### Wave 2 — Documentation (depends on Wave 1)"))
	w, i := p.WaveOf(p.Step(6))
	if w == nil || w.Line != 48 || i != 2 {
		t.Errorf("WaveOf(step 6) = %+v, %d; want the wave at line 48, index 2", w, i)
	}
	if w, i := p.WaveOf(&Step{Line: 1}); w != nil || i != -1 {
		t.Errorf("WaveOf(no step) = %+v, %d; want nil, -1", w, i)
	}
}

// TestAhead: a plan with problems has no next step, only its problems;
// one without has Next's steps, and none when every wave is done.
func TestAhead(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		problems bool  // Check's problems, all of them
		wave     int   // 0: none
		steps    []int // the next steps' numbers
	}{
		{"good", readExample(t), false, 1, []int{1, 2}},
		{"a step number twice", plan(t, "**Step 2: Journal", "**Step 1: Journal"), true, 0, nil},
		{"an unrelated problem", plan(t, "date: 2026-11-26", "date: soon"), true, 0, nil},
		{"not a plan", []byte("# no plan\n"), true, 0, nil},
		{"done", bytes.ReplaceAll(readExample(t), []byte("- [ ] **Step"), []byte("- [x] **Step")), false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parse("p.md", tt.data)
			probs, w, steps := p.Ahead()
			if diff := cmp.Diff(p.Check(), probs); diff != "" {
				t.Errorf("Ahead() problems (-Check() +got):\n%s", diff)
			}
			if got := len(probs) > 0; got != tt.problems {
				t.Errorf("Ahead() has problems: %v, want %v", got, tt.problems)
			}
			wave := 0
			if w != nil {
				wave = w.Number
			}
			var nums []int
			for _, s := range steps {
				nums = append(nums, s.Number)
			}
			if wave != tt.wave || !cmp.Equal(nums, tt.steps) {
				t.Errorf("Ahead() = wave %d, steps %v; want wave %d, steps %v", wave, nums, tt.wave, tt.steps)
			}
		})
	}
}

func TestSetStatus(t *testing.T) {
	data := readExample(t)
	path := writePlan(t, data)
	p, changed, err := SetStatus(path, "in_progress")
	if err != nil || !changed || p.Status != "in_progress" {
		t.Fatalf("SetStatus = %v, %v, %v", p, changed, err)
	}
	got, _ := os.ReadFile(path)
	if want := bytes.Replace(data, []byte("status: approved"), []byte("status: in_progress"), 1); !bytes.Equal(got, want) {
		t.Errorf("SetStatus wrote (-want +got):\n%s", cmp.Diff(string(want), string(got)))
	}
	if _, _, err := SetStatus(path, "finished"); !errors.Is(err, ErrStatus) {
		t.Errorf("SetStatus(finished) = %v, want ErrStatus", err)
	}

	// A quoted status, and none at all.
	path = writePlan(t, bytes.Replace(data, []byte("status: approved"), []byte(`status: "draft"`), 1))
	if _, _, err := SetStatus(path, "done"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Contains(got, []byte("\nstatus: done\n---\n")) {
		t.Errorf("SetStatus over a quoted value wrote:\n%s", got)
	}
	path = writePlan(t, bytes.Replace(data, []byte("status: approved\n"), nil, 1))
	if _, _, err := SetStatus(path, "done"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Contains(got, []byte("tier: 2\nstatus: done\n---\n")) {
		t.Errorf("SetStatus without a status line wrote:\n%s", got)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.md", "a.md", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), readExample(t), 0o644)
	}
	ps, err := List(dir)
	if err != nil || len(ps) != 2 || filepath.Base(ps[0].Path) != "a.md" {
		t.Errorf("List = %v, %v; want a.md, b.md", ps, err)
	}
	if ps, err := List(filepath.Join(dir, "none")); err != nil || len(ps) != 0 {
		t.Errorf("List(missing) = %v, %v; want none", ps, err)
	}
}

func TestFilesIn(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"runner/workspace/config.go: `retry: {attempts, backoff}` with defaults; config_test.go cases.", []string{"runner/workspace/config.go", "config_test.go"}},
		{"README.md: the policy, its defaults, what `parley status` shows.", []string{"README.md"}},
		{"cmd/parley/testdata/retry.txtar: a removed mailbox, a retry (see `runner/route.go`).", []string{"cmd/parley/testdata/retry.txtar", "runner/route.go"}},
		{"moves it to dead/ with the reason, e.g. after v1.2; see https://example.com/x.md and parley.yaml, parley.yaml.", []string{"parley.yaml"}},
		{"no files here.", nil},
	}
	for _, tt := range tests {
		if got := FilesIn(tt.text); !cmp.Equal(got, tt.want) {
			t.Errorf("FilesIn(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	p := Parse("p.md", readExample(t))
	if got := p.Step(3).Files; !cmp.Equal(got, []string{"runner/route.go"}) {
		t.Errorf("Step(3).Files = %q", got)
	}
}

// TestWriteConflict: a plan git left a merge conflict in is not written
// into by Tick or SetStatus (the orchestrator ticking a step, parley plan
// tick): textfile.ErrConflict at the <<<<<<< line, the file as it was.
func TestWriteConflict(t *testing.T) {
	data := bytes.Replace(readExample(t), []byte("- [ ] **Step 5:"),
		[]byte("<<<<<<< HEAD\n- [ ] **Step 5: Status shows retries, in A's words**\n=======\n- [ ] **Step 5:"), 1)
	data = bytes.Replace(data, []byte("and when.\n"), []byte("and when.\n>>>>>>> other\n"), 1)
	path := writePlan(t, data)
	for name, write := range map[string]func() (*Plan, bool, error){
		"Tick(4)":            func() (*Plan, bool, error) { return Tick(path, 4) },
		"SetStatus(done)":    func() (*Plan, bool, error) { return SetStatus(path, "done") },
		"SetStatus(blocked)": func() (*Plan, bool, error) { return SetStatus(path, "blocked") },
	} {
		_, changed, err := write()
		var ce *textfile.ConflictError
		if !errors.As(err, &ce) || changed || ce.Line != 46 {
			t.Errorf("%s = %v, %v; want a *textfile.ConflictError at line 46", name, changed, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Errorf("%s wrote into the conflict:\n%s", name, got)
		}
	}
}

// TestTickKeepsHandEdit: a person saves the plan (a note added by hand)
// while the orchestrator ticks a step: their save lands after the ticked
// text was written, before it is renamed into place. The rename used to
// put the plan as read, ticked, over their note. Tick sees the plan
// changed, ticks the step in what they saved, and keeps both.
func TestTickKeepsHandEdit(t *testing.T) {
	path := writePlan(t, readExample(t))
	saved := false
	textfile.BeforeRename = func(p string) {
		if p != path || saved {
			return
		}
		saved = true
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("\nA note written by hand.\n"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { textfile.BeforeRename = nil })
	p, changed, err := Tick(path, 4)
	if err != nil || !changed || !p.Step(4).Done {
		t.Fatalf("Tick(4) = %v, %v; want step 4 ticked", changed, err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Contains(got, []byte("- [x] **Step 4:")) || !bytes.HasSuffix(got, []byte("\nA note written by hand.\n")) {
		t.Errorf("the plan lost the tick or the hand's note:\n%s", got)
	}
}
