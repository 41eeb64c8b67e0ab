package plans

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Problem is one thing wrong with a plan file, at a line of it.
type Problem struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Msg  string `json:"problem"`
}

func newProblem(path string, line int, format string, args ...any) Problem {
	return Problem{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Error returns the problem as path:line: what.
func (p Problem) Error() string { return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg) }

// ErrInvalid is what a CheckError is: the plan file is not a valid plan.
var ErrInvalid = errors.New("not a valid plan")

// CheckError is a plan's problems, as Plan.Err returns them.
type CheckError struct {
	Problems []Problem
}

// Error returns the problems, one a line.
func (e *CheckError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Is makes a CheckError match ErrInvalid.
func (e *CheckError) Is(target error) bool { return target == ErrInvalid }

// Err returns the plan's problems as a *CheckError, or nil when it has
// none.
func (p *Plan) Err() error {
	if probs := p.Check(); len(probs) > 0 {
		return &CheckError{Problems: probs}
	}
	return nil
}

// Check says what is wrong with the plan, in line order: what Parse could
// not read (no frontmatter, a malformed step or wave heading), missing
// frontmatter fields and sections, a wave that depends on a later or a
// missing wave, duplicate wave or step numbers, a wave without steps, and
// more than MaxSteps steps. Each problem names the file and the line.
func (p *Plan) Check() []Problem {
	probs := slices.Clone(p.problems)
	add := func(line int, format string, args ...any) {
		probs = append(probs, newProblem(p.Path, line, format, args...))
	}
	if p.fmEnd > 0 {
		for _, key := range []string{"date", "task", "tier", "status"} {
			f, ok := p.fields[key]
			if !ok {
				add(p.fmEnd, "frontmatter: no %s", key)
				continue
			}
			switch {
			case f.value == "":
				add(f.line, "frontmatter: %s is empty", key)
			case key == "date":
				if _, err := time.Parse(time.DateOnly, f.value); err != nil {
					add(f.line, "frontmatter: date %q is not a date (YYYY-MM-DD)", f.value)
				}
			case key == "tier":
				if p.Tier < 0 || p.Tier > 3 {
					add(f.line, "frontmatter: tier %q is not one of 0, 1, 2, 3", f.value)
				}
			case key == "status":
				if !slices.Contains(Statuses, f.value) {
					add(f.line, "frontmatter: status %q is not one of %s", f.value, strings.Join(Statuses, ", "))
				}
			}
		}
	}

	seen := map[string]int{}
	for _, s := range p.Sections {
		if first, dup := seen[s.Name]; dup && slices.Contains(Sections, s.Name) {
			add(s.Line, "## %s again (first at line %d)", s.Name, first)
			continue
		}
		seen[s.Name] = s.Line
	}
	for i, name := range Sections {
		if _, ok := seen[name]; ok {
			continue
		}
		// Where it is missing: at the next section that is there.
		at, where := max(p.lines, 1), "at the end"
		for _, next := range Sections[i+1:] {
			if l, ok := seen[next]; ok {
				at, where = l, "before ## "+next
				break
			}
		}
		add(at, "no ## %s section (it goes %s)", name, where)
	}

	if _, ok := seen[ImplementationWaves]; ok && len(p.Waves) == 0 {
		add(seen[ImplementationWaves], "## %s has no `### Wave N — description` heading", ImplementationWaves)
	}
	waveAt := map[int]int{}
	for i, w := range p.Waves {
		if first, dup := waveAt[w.Number]; dup {
			add(w.Line, "wave %d again (first at line %d)", w.Number, first)
		} else {
			waveAt[w.Number] = w.Line
			if i+1 != w.Number {
				add(w.Line, "wave %d is the plan's wave number %d: number the waves 1, 2, 3 in order", w.Number, i+1)
			}
		}
		if len(w.Steps) == 0 {
			add(w.Line, "wave %d has no steps", w.Number)
		}
	}
	for _, w := range p.Waves {
		for _, d := range w.Depends {
			switch _, ok := waveAt[d]; {
			case d == w.Number:
				add(w.Line, "wave %d depends on itself", w.Number)
			case !ok:
				add(w.Line, "wave %d depends on wave %d, which the plan does not have", w.Number, d)
			case d > w.Number:
				add(w.Line, "wave %d depends on wave %d, which comes later", w.Number, d)
			}
		}
	}
	stepAt := map[int]int{}
	count := 0
	for _, w := range p.Waves {
		for _, s := range w.Steps {
			count++
			if count == MaxSteps+1 {
				add(s.Line, "step %d is the plan's step number %d: a plan has at most %d steps (split the work into several plans)", s.Number, count, MaxSteps)
			}
			if s.Detail == "" {
				add(s.Line, "step %d says only its title: add ` — ` and what to do, where and how", s.Number)
			}
			if first, dup := stepAt[s.Number]; dup {
				add(s.Line, "step %d again (first at line %d): step numbers are unique in a plan", s.Number, first)
				continue
			}
			stepAt[s.Number] = s.Line
		}
	}
	slices.SortStableFunc(probs, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return probs
}

// Progress is how far a plan is: steps done of all, overall and per wave.
type Progress struct {
	Done  int            `json:"done"`
	Total int            `json:"total"`
	Waves []WaveProgress `json:"waves"`
}

// WaveProgress is how far one wave is.
type WaveProgress struct {
	Wave  int `json:"wave"`
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Complete reports whether every step is done.
func (pr Progress) Complete() bool { return pr.Done == pr.Total }

// Progress counts the steps done, overall and per wave.
func (p *Plan) Progress() Progress {
	var pr Progress
	for _, w := range p.Waves {
		wp := WaveProgress{Wave: w.Number, Total: len(w.Steps)}
		for _, s := range w.Steps {
			if s.Done {
				wp.Done++
			}
		}
		pr.Done += wp.Done
		pr.Total += wp.Total
		pr.Waves = append(pr.Waves, wp)
	}
	return pr
}

// Complete reports whether every step of the wave is done.
func (w *Wave) Complete() bool {
	for _, s := range w.Steps {
		if !s.Done {
			return false
		}
	}
	return true
}

// Next returns the steps to do next: the steps not done of the first wave
// in file order that is not complete. Waves are done one after the
// other; a wave's steps may be done at once. It returns nil when every
// wave is complete.
func (p *Plan) Next() (*Wave, []Step) {
	for i := range p.Waves {
		w := &p.Waves[i]
		if w.Complete() {
			continue
		}
		var steps []Step
		for _, s := range w.Steps {
			if !s.Done {
				steps = append(steps, s)
			}
		}
		return w, steps
	}
	return nil, nil
}

// Ahead says what comes next for the plan: the one answer every view of
// a plan's progress gives. A plan with problems (Check) has no next step
// — its waves or steps may not all have been read, and a number may name
// two steps — so then probs are its problems, and w and steps are nil;
// else probs is nil and w and steps are Next's, nil when every wave is
// done.
func (p *Plan) Ahead() (probs []Problem, w *Wave, steps []Step) {
	if probs := p.Check(); len(probs) > 0 {
		return probs, nil, nil
	}
	w, steps = p.Next()
	return nil, w, steps
}

// Wave returns the wave numbered n, or nil.
func (p *Plan) Wave(n int) *Wave {
	for i := range p.Waves {
		if p.Waves[i].Number == n {
			return &p.Waves[i]
		}
	}
	return nil
}

// Step returns the step numbered n, or nil; the first, when a plan that
// does not check numbers two steps alike (StepsNumbered returns them
// all).
func (p *Plan) Step(n int) *Step {
	if steps := p.StepsNumbered(n); len(steps) > 0 {
		return steps[0]
	}
	return nil
}

// StepsNumbered returns the steps numbered n, in file order: one in a
// plan that checks, none when the plan has no step n, more when a plan
// that does not check uses the number twice.
func (p *Plan) StepsNumbered(n int) []*Step {
	var steps []*Step
	for i := range p.Waves {
		for j := range p.Waves[i].Steps {
			if p.Waves[i].Steps[j].Number == n {
				steps = append(steps, &p.Waves[i].Steps[j])
			}
		}
	}
	return steps
}

// WaveOf returns the wave step s is in, and its index in Waves (and in
// Progress().Waves): the wave it is under in the file, even when a plan
// that does not check numbers two waves alike. It returns nil, -1 when s
// is no step of the plan.
func (p *Plan) WaveOf(s *Step) (*Wave, int) {
	for i := range p.Waves {
		for j := range p.Waves[i].Steps {
			if p.Waves[i].Steps[j].Line == s.Line {
				return &p.Waves[i], i
			}
		}
	}
	return nil, -1
}

// HasRisk reports whether the plan's risk tags include one of tags.
func (p *Plan) HasRisk(tags ...string) bool {
	for _, t := range p.RiskTags {
		if slices.Contains(tags, t) {
			return true
		}
	}
	return false
}
