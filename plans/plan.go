// Package plans owns the dev pipeline's plan files: markdown files in a
// workspace's plans/ directory, each with a frontmatter (date, task, tier,
// status), the sections Summary, Out of Scope, Approach, Risks, Risk Tags,
// Implementation Waves and Acceptance Criteria, and in Implementation Waves
// the waves of the work and their steps, ticked as they are done:
//
//	### Wave 2 — Redelivery (depends on Wave 1)
//	- [x] **Step 3: Retry on start** — in runner/route.go, ...
//	- [ ] **Step 4: Give up after N** — ...
//
// It reads plans (Parse, Read), says what is wrong with one (Plan.Check),
// how far it is (Plan.Progress, Plan.Next), and changes one in place
// (Tick, SetStatus): only the characters that change are written, every
// other byte of the file stays as the person or agent wrote it.
package plans

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/textfile"
)

// Dir is the directory of a workspace that holds its plans.
const Dir = "plans"

// Section names, as the headings (`## Summary`) of a plan write them.
const (
	Summary             = "Summary"
	OutOfScope          = "Out of Scope"
	Approach            = "Approach"
	Risks               = "Risks"
	RiskTags            = "Risk Tags"
	ImplementationWaves = "Implementation Waves"
	AcceptanceCriteria  = "Acceptance Criteria"
)

// Sections are the sections every plan has, in the order a plan writes
// them. Other sections may come between them.
var Sections = []string{Summary, OutOfScope, Approach, Risks, RiskTags, ImplementationWaves, AcceptanceCriteria}

// Statuses a plan's frontmatter may give: an architect writes draft or
// approved, the orchestrator sets in_progress while workers implement it,
// done when every step is ticked, blocked when it needs a person.
var Statuses = []string{"draft", "approved", "in_progress", "blocked", "done"}

// MaxSteps is the most steps a plan may have; a larger piece of work is
// split into several plans.
const MaxSteps = 10

// Plan is a plan file as read. Line numbers count from 1.
type Plan struct {
	// Path is the file's path, as given to Parse or Read.
	Path string `json:"path"`
	// Date, Task, Tier and Status are the frontmatter's fields, as
	// written (Tier is -1 when missing or not a number).
	Date   string `json:"date"`
	Task   string `json:"task"`
	Tier   int    `json:"tier"`
	Status string `json:"status"`
	// Title is the text of the `# ` heading, if there is one.
	Title string `json:"title,omitempty"`
	// Sections are the `## ` sections, in file order.
	Sections []Section `json:"sections"`
	// RiskTags are the items of the Risk Tags section, lower case.
	RiskTags []string `json:"risk_tags"`
	// Waves are the `### Wave N` headings of Implementation Waves, in
	// file order, each with its steps.
	Waves []Wave `json:"waves"`
	// Criteria are the items of the Acceptance Criteria section.
	Criteria []string `json:"acceptance_criteria"`

	fields   map[string]field
	fmEnd    int // the line of the frontmatter's closing ---, 0 without one
	lines    int // how many lines the file has
	problems []Problem
}

// Section is one `## ` section of a plan.
type Section struct {
	Name string `json:"name"`
	Line int    `json:"line"`
	// Text is the section's text, from the line after its heading to the
	// next `## ` heading, without surrounding blank lines.
	Text string `json:"text"`
}

// Wave is one `### Wave N — description (depends on Wave M)` heading and
// its steps.
type Wave struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Depends []int  `json:"depends_on,omitempty"`
	Line    int    `json:"line"`
	Steps   []Step `json:"steps"`
}

// Step is one `- [ ] **Step N: title** — what/where/how` line.
type Step struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	// Detail is what follows the title (after the dash), with the
	// indented lines under the step, one per line.
	Detail string `json:"detail"`
	Done   bool   `json:"done"`
	Line   int    `json:"line"`
	Wave   int    `json:"wave"`
	// Files are the files the step names in its text (see FilesIn):
	// the files its worker may change.
	Files []string `json:"files,omitempty"`

	box  int      // the offset of the character between the brackets
	more []string // the indented lines under it, joined into Detail at the wave's end
}

// field is one `key: value` line of the frontmatter.
type field struct {
	value      string
	line       int
	start, end int // the value's bytes in the file, quotes included
}

var (
	waveRe    = regexp.MustCompile(`^###\s+Wave\s+(\d+)\b\s*(?:[—–:-]+\s*)?(.*?)\s*$`)
	dependsRe = regexp.MustCompile(`(?i)\(\s*depends\s+on\s+([^)]*)\)\s*$`)
	numberRe  = regexp.MustCompile(`\d+`)
	stepRe    = regexp.MustCompile(`^\s*[-*]\s+\[([ xX])\]\s+\*\*\s*Step\s+(\d+)\s*:\s*(.*?)\s*\*\*\s*(.*)$`)
	boxRe     = regexp.MustCompile(`^\s*[-*]\s+\[`)
	dashRe    = regexp.MustCompile(`^(?:[—–]|--?)\s*`)
)

// fileRe is a word that names a file: a path with a slash, or a name with
// an extension that has a letter (parley.yaml, README.md, a.go; not v1.2,
// and not e.g. or i.e., where name and extension are one letter each).
var fileRe = regexp.MustCompile(`^(?:[\w.-]+/)+[\w.-]*\w$|^(?:[\w-][\w.-]*\w|\w)\.(?:[0-9A-Za-z]*[A-Za-z][0-9A-Za-z]*)$`)

// abbreviation reports whether a bare word is a one-letter name with a
// one-letter extension (e.g, i.e), not a file.
func abbreviation(w string) bool {
	return len(w) == 3 && w[1] == '.'
}

// FilesIn returns the files a step's text names, in order, once each:
// words that are paths (runner/route.go) or file names with an extension
// (README.md), written bare or in backticks, with the punctuation around
// them left out. A directory (a word ending in /) is no file.
func FilesIn(text string) []string {
	var files []string
	for _, w := range strings.Fields(text) {
		w = strings.TrimLeft(w, "`*_\"'([{")
		w = strings.TrimRight(w, "`*_\"')]},;:!?.")
		if w == "" || strings.HasSuffix(w, "/") || strings.Contains(w, "://") || abbreviation(w) || !fileRe.MatchString(w) {
			continue
		}
		if !slices.Contains(files, w) {
			files = append(files, w)
		}
	}
	return files
}

// Read reads and parses the plan file at path. Its error is the file's
// (not there, unreadable); what is wrong in the text is for Check.
func Read(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data), nil
}

// line is one line of the file: its text without the line ending, and
// the offset of its first byte.
type line struct {
	text string
	off  int
}

func splitLines(data []byte) []line {
	var ls []line
	// A UTF-8 byte order mark an editor wrote before the first line is
	// no part of it (messages, parley.yaml and skills read past it too):
	// the first line starts after it, and an edit keeps it.
	start := len(data) - len(bytes.TrimPrefix(data, []byte("\uFEFF")))
	for off := start; off < len(data); {
		end := off
		for end < len(data) && data[end] != '\n' {
			end++
		}
		text := string(data[off:end])
		ls = append(ls, line{text: strings.TrimSuffix(text, "\r"), off: off})
		off = end + 1
	}
	return ls
}

// Parse reads a plan from data, the content of the file at path. It
// never fails: what it cannot read is kept for Check, which reports it
// with the rest.
func Parse(path string, data []byte) *Plan {
	p := &Plan{Path: path, Tier: -1, fields: map[string]field{}}
	ls := splitLines(data)
	p.lines = len(ls)
	if line, ok := textfile.Conflict(data); ok {
		// Said first: what else is wrong (a step twice, from both
		// sides) follows from it.
		p.problem(line, "%v (<<<<<<< here): resolve it, then git add", textfile.ErrConflict)
	}
	if !utf8.Valid(data) {
		for i, l := range ls {
			if !utf8.ValidString(l.text) {
				p.problem(i+1, "the file is not UTF-8 text")
				break
			}
		}
	}
	i := p.frontmatter(ls)
	var (
		sec     *Section
		secText []string
		wave    *Wave
		step    *Step
		badWave bool // under a wave heading that could not be read
	)
	closeSection := func() {
		if sec != nil {
			sec.Text = strings.Trim(strings.Join(secText, "\n"), "\n")
			p.Sections = append(p.Sections, *sec)
		}
		sec, secText = nil, nil
	}
	closeWave := func() {
		if wave != nil {
			for i := range wave.Steps {
				st := &wave.Steps[i]
				if len(st.more) > 0 {
					st.Detail = strings.Join(append([]string{st.Detail}, st.more...), "\n")
					st.Detail = strings.TrimPrefix(st.Detail, "\n")
					st.more = nil
				}
				st.Files = FilesIn(st.Detail)
			}
			p.Waves = append(p.Waves, *wave)
		}
		wave, step = nil, nil
	}
	inFence := false
	for ; i < len(ls); i++ {
		l, n := ls[i].text, i+1
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(l, "## ") {
			closeWave()
			closeSection()
			badWave = false
			sec = &Section{Name: canonical(strings.TrimRight(strings.TrimSpace(l[3:]), "# ")), Line: n}
			continue
		}
		if !inFence && sec == nil && strings.HasPrefix(l, "# ") && p.Title == "" {
			p.Title = strings.TrimSpace(l[2:])
			continue
		}
		if sec == nil {
			continue
		}
		secText = append(secText, l)
		if inFence {
			continue
		}
		switch sec.Name {
		case RiskTags:
			p.riskTags(l)
		case AcceptanceCriteria:
			if item, ok := listItem(l); ok {
				p.Criteria = append(p.Criteria, item)
			}
		case ImplementationWaves:
			switch {
			case strings.HasPrefix(l, "### "):
				closeWave()
				wave = p.wave(l, n)
				badWave = wave == nil
			case boxRe.MatchString(l):
				step = nil
				s, ok := p.step(ls[i], n)
				if !ok {
					break
				}
				if wave == nil {
					if badWave {
						break
					}
					p.problem(n, "step %d comes before any `### Wave N` heading", s.Number)
					break
				}
				s.Wave = wave.Number
				wave.Steps = append(wave.Steps, s)
				step = &wave.Steps[len(wave.Steps)-1]
			case step != nil && strings.TrimSpace(l) != "" && (l[0] == ' ' || l[0] == '\t'):
				step.more = append(step.more, strings.TrimSpace(l))
			case strings.TrimSpace(l) == "":
			default:
				step = nil
			}
		}
	}
	closeWave()
	closeSection()
	return p
}

// frontmatter reads the frontmatter, if the file starts with one, and
// returns the index of the line after it.
func (p *Plan) frontmatter(ls []line) int {
	if len(ls) == 0 || strings.TrimSpace(ls[0].text) != "---" {
		p.problem(1, "no frontmatter: a plan starts with a `---` line, then date, task, tier and status, then `---`")
		return 0
	}
	for i := 1; i < len(ls); i++ {
		l, n := ls[i].text, i+1
		if strings.TrimSpace(l) == "---" {
			p.fmEnd = n
			return i + 1
		}
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			p.problem(n, "frontmatter: want `key: value`, got %q", l)
			continue
		}
		if prev, dup := p.fields[key]; dup {
			p.problem(n, "frontmatter: %s again (first at line %d)", key, prev.line)
			continue
		}
		lead := len(val) - len(strings.TrimLeft(val, " \t"))
		raw := strings.TrimSpace(val)
		start := ls[i].off + strings.Index(l, ":") + 1 + lead
		f := field{value: unquote(raw), line: n, start: start, end: start + len(raw)}
		p.fields[key] = f
		switch key {
		case "date":
			p.Date = f.value
		case "task":
			p.Task = f.value
		case "status":
			p.Status = f.value
		case "tier":
			if t, err := strconv.Atoi(f.value); err == nil {
				p.Tier = t
			}
		}
	}
	p.problem(1, "the frontmatter that starts here is never closed with a `---` line")
	p.fmEnd = 0
	return len(ls)
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// canonical is a section heading's name as Sections spell it, when it is
// one of them in another case; any other name as written.
func canonical(name string) string {
	for _, s := range Sections {
		if strings.EqualFold(s, name) {
			return s
		}
	}
	return name
}

// listItem is the text of a `- item`, `* item` or `1. item` line.
func listItem(l string) (string, bool) {
	t := strings.TrimSpace(l)
	for _, b := range []string{"- ", "* ", "+ "} {
		if s, ok := strings.CutPrefix(t, b); ok {
			return strings.TrimSpace(s), true
		}
	}
	if j := strings.IndexAny(t, ".)"); j > 0 && j+1 < len(t) && t[j+1] == ' ' {
		if _, err := strconv.Atoi(t[:j]); err == nil {
			return strings.TrimSpace(t[j+2:]), true
		}
	}
	return "", false
}

// riskTags adds the tags of one line of Risk Tags: list items, or words
// separated by commas; `none` is no tag.
func (p *Plan) riskTags(l string) {
	item, ok := listItem(l)
	if !ok {
		item = strings.TrimSpace(l)
	}
	for _, t := range strings.Split(item, ",") {
		t = strings.ToLower(strings.Trim(strings.TrimSpace(t), "`*_"))
		if t == "" || t == "none" {
			continue
		}
		p.RiskTags = append(p.RiskTags, t)
	}
}

// wave reads a `### Wave N — description (depends on Wave M)` heading.
func (p *Plan) wave(l string, n int) *Wave {
	m := waveRe.FindStringSubmatch(l)
	if m == nil {
		p.problem(n, "a heading in %s that is not `### Wave N — description`: %q", ImplementationWaves, l)
		return nil
	}
	w := &Wave{Line: n, Title: m[2]}
	w.Number, _ = strconv.Atoi(m[1])
	if d := dependsRe.FindStringSubmatchIndex(w.Title); d != nil {
		list := w.Title[d[2]:d[3]]
		w.Title = strings.TrimSpace(w.Title[:d[0]])
		nums := numberRe.FindAllString(list, -1)
		if len(nums) == 0 && !strings.EqualFold(strings.TrimSpace(list), "nothing") {
			p.problem(n, "wave %d: (depends on %s) names no wave number", w.Number, list)
		}
		for _, s := range nums {
			d, _ := strconv.Atoi(s)
			w.Depends = append(w.Depends, d)
		}
	}
	return w
}

// step reads a `- [ ] **Step N: title** — what/where/how` line.
func (p *Plan) step(l line, n int) (Step, bool) {
	m := stepRe.FindStringSubmatchIndex(l.text)
	if m == nil {
		p.problem(n, "not a step: want `- [ ] **Step N: title** — what, where, how`, got %q", l.text)
		return Step{}, false
	}
	s := Step{Line: n, Done: l.text[m[2]] != ' ', box: l.off + m[2]}
	s.Number, _ = strconv.Atoi(l.text[m[4]:m[5]])
	s.Title = l.text[m[6]:m[7]]
	s.Detail = dashRe.ReplaceAllString(strings.TrimSpace(l.text[m[8]:m[9]]), "")
	if s.Title == "" {
		p.problem(n, "step %d has no title", s.Number)
	}
	return s, true
}

func (p *Plan) problem(line int, format string, args ...any) {
	p.problems = append(p.problems, newProblem(p.Path, line, format, args...))
}
