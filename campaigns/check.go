package campaigns

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parley-dev/parley/campaigns/delta"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/textfile"
)

// Status says how a file of a campaign was found.
type Status string

// The statuses of a Finding. Missing required files and malformed ones
// fail a check; the others are for a person to know.
const (
	OK        Status = "ok"
	Missing   Status = "missing"   // a file the layout has is not there
	Malformed Status = "malformed" // there, but parley cannot read it
	Warning   Status = "warning"   // readable, but something is off
)

// Finding is what a check found about one file or directory.
type Finding struct {
	Path     string `json:"path"`   // relative to the campaign, slash-separated
	Status   Status `json:"status"` //
	Required bool   `json:"required"`
	Detail   string `json:"detail,omitempty"` // what it holds, or what is wrong
}

// Failed reports whether the finding fails the check.
func (f Finding) Failed() bool {
	return f.Status == Malformed || f.Status == Missing && f.Required
}

// Report is the result of checking a campaign.
type Report struct {
	Campaign string    `json:"campaign"`
	Dir      string    `json:"dir"`
	Findings []Finding `json:"findings"`
}

// OK reports whether nothing failed: every required file is there and
// every file parley reads parses.
func (r *Report) OK() bool {
	for _, f := range r.Findings {
		if f.Failed() {
			return false
		}
	}
	return true
}

// The files a campaign must have: what the game master and the players'
// agents read at every turn. The rest of the layout is optional.
var required = map[string]bool{Overview: true, StoryState: true, PartyKnowledge: true, PartyDir + "/": true}

// MissingRequired returns the files the campaign must have that are not
// there (story-state.md removed by hand, say), in name order: at once,
// without reading any (Check reads them all).
func (c *Campaign) MissingRequired() []string {
	var out []string
	for name := range required {
		if _, err := os.Lstat(c.Path(name)); errors.Is(err, fs.ErrNotExist) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Check reads a campaign's files and reports what is present, missing or
// malformed: the top-level files and their sections, every character
// sheet (parsed as package sheet reads it), journals without a sheet,
// scene files and their frontmatter, the note directories, and deltas
// waiting in tmp/. It returns an error only when the campaign cannot be
// read at all; problems with files are findings.
func (c *Campaign) Check() (*Report, error) {
	r := &Report{Campaign: c.Name, Dir: c.Root}
	add := func(path string, s Status, detail string) {
		// A file git left a merge conflict in fails, whatever else was
		// found: parley writes into none (see textfile.CheckConflict).
		if s != Missing && !strings.HasSuffix(path, "/") {
			if err := c.conflict(path); err != nil {
				s, detail = Malformed, err.Error()
			}
		}
		r.Findings = append(r.Findings, Finding{Path: path, Status: s, Required: required[path], Detail: detail})
	}
	for _, name := range []string{Overview, WorldPrimer, StoryState, PartyKnowledge, Preferences, DecisionLog} {
		data, err := os.ReadFile(c.Path(name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			detail := ""
			if required[name] {
				detail = "`parley campaign fill` writes it anew, with its sections"
			}
			add(name, Missing, detail)
			continue
		case err != nil:
			add(name, Malformed, err.Error())
			continue
		}
		s, detail := OK, describeSections(data)
		if lost := missingSections(name, data); len(lost) > 0 {
			s = Warning
			detail += "; no " + strings.Join(lost, ", no ") + " section (added when first written to)"
		}
		if name == Preferences {
			if err := c.checkPrefs(ParsePrefs(data)); err != nil {
				s, detail = Malformed, c.Short(err).Error()
			}
		}
		add(name, s, detail)
	}
	if err := c.checkParty(add); err != nil {
		return nil, err
	}
	if err := c.checkScenes(add); err != nil {
		return nil, err
	}
	for _, dir := range NoteDirs {
		n, err := countFiles(c.Path(dir), ".md")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			add(dir+"/", Missing, "")
		case err != nil:
			add(dir+"/", Malformed, err.Error())
		default:
			add(dir+"/", OK, plural(n, "note"))
		}
		c.checkNoteConflicts(dir, add)
	}
	c.checkDeltas(add)
	return r, nil
}

// conflict returns the error for the campaign's file at rel (slash-
// separated) when it holds an unresolved merge conflict, naming it by
// rel; nil when it holds none or cannot be read.
func (c *Campaign) conflict(rel string) error {
	data, err := os.ReadFile(c.Path(filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	return textfile.CheckConflict(rel, data)
}

// checkNoteConflicts adds a finding for each note in dir that holds an
// unresolved merge conflict; the others are counted, not listed.
func (c *Campaign) checkNoteConflicts(dir string, add func(string, Status, string)) {
	entries, err := os.ReadDir(c.Path(dir))
	if err != nil {
		return
	}
	for _, e := range entries {
		rel := dir + "/" + e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && c.conflict(rel) != nil {
			add(rel, Malformed, "")
		}
	}
}

// checkParty checks the sheets and journals in party/.
func (c *Campaign) checkParty(add func(string, Status, string)) error {
	pf, err := c.partyFiles()
	if err != nil {
		return err
	}
	if pf.missing {
		add(PartyDir+"/", Missing, "the character sheets go here: party/<character>.md")
		return nil
	}
	sheets := map[string]bool{}
	for _, n := range pf.sheets {
		sheets[n] = true
	}
	journals, names := pf.journals, pf.sheets
	if len(sheets) == 0 {
		add(PartyDir+"/", Warning, "no character sheets yet: put them in party/<character>.md")
	} else {
		detail := plural(len(sheets), "character")
		if len(pf.others) > 0 {
			detail += ", " + plural(len(pf.others), "other file")
		}
		add(PartyDir+"/", OK, detail)
	}
	for _, o := range pf.others {
		add(PartyDir+"/"+o, OK, "not a character sheet: kept as it is")
	}
	for _, n := range pf.strays {
		add(PartyDir+"/"+n, Warning, strayAdvice(n, sheets))
	}
	for _, n := range names {
		path := PartyDir + "/" + n + ".md"
		d, err := sheet.Read(c.Path(PartyDir, n+".md"))
		if err != nil {
			add(path, Malformed, c.Short(err).Error())
			continue
		}
		if ps := d.Problems(); len(ps) > 0 {
			said := make([]string, len(ps))
			for i, p := range ps {
				said[i] = c.Short(p).Error() + ": set " + SetKeys(p.Field) + " to set it right"
			}
			add(path, Malformed, strings.Join(said, "; "))
			continue
		}
		detail := fmt.Sprintf("HP %d/%d, level %s, %s", d.HP, d.MaxHP, levelText(d.Level), plural(len(d.Items), "item"))
		if len(d.Unread) > 0 {
			add(path, Warning, detail+"; could not read "+c.shorten(strings.Join(d.Unread, "; ")))
			continue
		}
		add(path, OK, detail)
	}
	sort.Strings(journals)
	for _, j := range journals {
		who := strings.TrimSuffix(j, JournalSuffix)
		if !sheets[who] {
			add(PartyDir+"/"+j, Warning, fmt.Sprintf("a journal without a sheet: no party/%s.md", who))
			continue
		}
		n, runTogether, err := countEntries(c.Path(PartyDir, j))
		if err != nil {
			add(PartyDir+"/"+j, Malformed, err.Error())
			continue
		}
		if len(runTogether) > 0 {
			add(PartyDir+"/"+j, Warning, plural(n, "entry")+"; "+strings.Join(runTogether, "; "))
			continue
		}
		add(PartyDir+"/"+j, OK, plural(n, "entry"))
	}
	return nil
}

// Stray says, of a file party/NAME.md that is a sheet whose name is no
// character's ("tilda-brannock (copy)"), what campaign check says of it:
// that it is no character, and how to make it one; ok is false for any
// other name.
func (c *Campaign) Stray(name string) (advice string, ok bool) {
	pf, err := c.partyFiles()
	if err != nil || !slices.Contains(pf.strays, name+".md") {
		return "", false
	}
	sheets := map[string]bool{}
	for _, n := range pf.sheets {
		sheets[n] = true
	}
	return strayAdvice(name+".md", sheets), true
}

// strayAdvice says of a sheet in party/ whose file name is no
// character's name (a copy, "tilda-brannock (copy).md") that it is not
// counted, and how to make it a character or keep it out of the way.
func strayAdvice(file string, sheets map[string]bool) string {
	base := strings.TrimSuffix(file, ".md")
	said := "not a character: the file name is no character's name (full kebab-case, like tilda-brannock.md)"
	if k := Kebab(base); k != "" && !sheets[k] {
		return fmt.Sprintf("%s; to play it, rename it %s/%s.md; else move it out of %s/", said, PartyDir, k, PartyDir)
	}
	return fmt.Sprintf("%s; move it out of %s/ (or rename it, to a name of its own, to play it)", said, PartyDir)
}

// checkScenes checks the scene files: their names, their frontmatter,
// and the merge conflicts git left in them (scenes are not merge=union).
func (c *Campaign) checkScenes(add func(string, Status, string)) error {
	dir := c.Path(ScenesDir)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		add(ScenesDir+"/", Missing, "made when the first scene is told")
		return nil
	}
	if err != nil {
		return err
	}
	all, err := scenes.List(dir)
	if err != nil {
		return err
	}
	add(ScenesDir+"/", OK, plural(len(all), "scene"))
	isScene := map[string]bool{}
	for _, s := range all {
		rel := ScenesDir + "/" + filepath.Base(s.Path)
		isScene[filepath.Base(s.Path)] = true
		switch err := scenes.Check(s.Path); {
		case err != nil:
			add(rel, Malformed, c.Short(err).Error())
		case c.conflict(rel) != nil: // add names it at its <<<<<<<
			add(rel, Malformed, "")
		}
	}
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".md") && !isScene[n] {
			add(ScenesDir+"/"+n, Warning, "not a scene file name (NNN-slug.md, like 004-the-sewers.md): the scribe leaves it alone")
		}
	}
	return nil
}

// checkDeltas reports the deltas waiting in tmp/, and their lines that
// cannot be applied.
func (c *Campaign) checkDeltas(add func(string, Status, string)) {
	for _, name := range []string{delta.StoryDelta, delta.PartyDelta} {
		data, err := os.ReadFile(c.Path(filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			add(name, Malformed, err.Error())
			continue
		}
		d, _ := delta.Parse(name, data)
		if p, err := c.Party(); err == nil && name == delta.StoryDelta {
			d.CheckParty(p) // as apply does
		}
		refused := delta.Refused(name, d) // as apply decides
		if len(refused) > 0 {
			why := make([]string, len(refused))
			for i, le := range refused {
				why[i] = le.Error()
			}
			some := "some cannot"
			if len(refused) == len(d.Entries) {
				some = map[bool]string{true: "it cannot", false: "none can"}[len(d.Entries) == 1]
			}
			add(name, Warning, fmt.Sprintf("%s waiting; %s be applied: %s", plural(len(d.Entries), "line"), some, strings.Join(why, "; ")))
			continue
		}
		add(name, Warning, fmt.Sprintf("%s waiting to be applied: parley campaign apply %s", plural(len(d.Entries), "line"), c.Name))
	}
}

// describeSections says how many "## " sections a markdown file has.
func describeSections(data []byte) string {
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("## ")) {
			n++
		}
	}
	return plural(n, "section")
}

// missingSections returns the sections the tools write into that a file
// lacks. They are created when needed, so their absence is a warning.
func missingSections(name string, data []byte) []string {
	var want []string
	switch name {
	case StoryState:
		want = []string{"Current Situation", "GM Notes (Secret)"}
	case PartyKnowledge:
		want = []string{"Current Situation"}
	default:
		return nil
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "## "); ok {
			have[strings.ToLower(strings.TrimSpace(t))] = true
		}
	}
	var lost []string
	for _, w := range want {
		if !have[strings.ToLower(w)] {
			lost = append(lost, `"## `+w+`"`)
		}
	}
	return lost
}

// countEntries counts the "## " entries of a journal, and says, by
// line, where two entries run together, as git's union merge leaves them
// when the two sides' new entries share a line: a heading right after a
// line that is not blank, or a part (**How I feel:**) twice in one entry.
func countEntries(path string) (int, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	n := 0
	var said []string
	var prev []byte             // the line before
	entry := 0                  // the line of the entry's heading
	labels := map[string]bool{} // the labels of the entry's parts so far
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		switch {
		case bytes.HasPrefix(l, []byte("## ")):
			n++
			if line > 1 && len(bytes.TrimSpace(prev)) > 0 {
				said = append(said, fmt.Sprintf("line %d: the entry's heading follows line %d with no blank line between: two entries run together (a git merge?): put a blank line before it, and look for a line one lost", line, line-1))
			}
			entry = line
			clear(labels)
		case entry > 0 && bytes.HasPrefix(l, []byte("**")):
			label, _, ok := bytes.Cut(l[2:], []byte(":**"))
			if !ok {
				break
			}
			if labels[string(label)] {
				said = append(said, fmt.Sprintf("line %d: a second **%s:** in the entry of line %d: two entries run together (a git merge?)", line, label, entry))
			}
			labels[string(label)] = true
		}
		prev = append(prev[:0], l...)
	}
	return n, said, sc.Err()
}

// countFiles counts the files with a suffix in a directory.
func countFiles(dir, suffix string) (int, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, de := range des {
		if !de.IsDir() && strings.HasSuffix(de.Name(), suffix) {
			n++
		}
	}
	return n, nil
}

// SetKeys returns the keys of `parley character set` that set right a
// field of a sheet's Invalid (sheet.Sheet.Problems): "hp or max_hp" for
// the hit points, "level", "str".
func SetKeys(field string) string {
	if field == "hit points" {
		return "hp or max_hp"
	}
	return strings.ToLower(field)
}

func levelText(level int) string {
	if level == 0 {
		return "not written"
	}
	return fmt.Sprint(level)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Party returns the party's characters, for the Party HP lines of a
// delta (delta.Options.Party): each character with a sheet in party/,
// with its maximum hit points (0 when its sheet cannot be read).
func (c *Campaign) Party() (delta.Party, error) {
	have, err := c.Characters()
	if err != nil {
		return nil, err
	}
	p := delta.Party{}
	for _, n := range have {
		p[n] = 0
		if d, err := sheet.Read(c.SheetPath(n)); err == nil {
			p[n] = d.MaxHP
		}
	}
	return p, nil
}

// Conflicts returns the markdown files of the workspace's campaigns that
// hold an unresolved merge conflict, each as a *textfile.ConflictError
// whose Path is relative to the workspace (slash-separated) and whose
// Line is the conflict's first: what Check says of conflicts, for every
// campaign at once and without the rest of Check, so that `parley
// status` can say it. tmp/ (the deltas being written) and dot
// directories are passed over, and so is a file that cannot be read.
func Conflicts(workspace string) ([]*textfile.ConflictError, error) {
	names, err := List(workspace)
	if err != nil {
		return nil, err
	}
	var out []*textfile.ConflictError
	for _, name := range names {
		root := filepath.Join(workspace, Dir, name)
		err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				if path == root {
					return err
				}
				return nil // a directory that cannot be read: Check says so
			}
			if de.IsDir() {
				if path != root && (de.Name() == TmpDir || strings.HasPrefix(de.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			if line, ok := textfile.Conflict(data); ok {
				rel, _ := filepath.Rel(workspace, path)
				out = append(out, &textfile.ConflictError{Path: filepath.ToSlash(rel), Line: line})
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
