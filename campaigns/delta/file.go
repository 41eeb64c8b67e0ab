package delta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/internal/markdown"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// Options tune Apply.
type Options struct {
	// DryRun makes Apply report what it would do without writing or
	// removing any file.
	DryRun bool
	// Party, when not nil, is the party's characters, each with its
	// maximum hit points: a Party HP line of the GM's delta naming none
	// of them is kept in the delta, and hit points over the maximum are
	// said in the FileReport's Warnings (see Delta.CheckParty). Nil
	// checks no name.
	Party Party
}

// Outcome says what Apply did with a delta file.
type Outcome string

// The outcomes of a delta file.
const (
	// Done: every line applied, the target written, the delta removed.
	Done Outcome = "applied"
	// Partial: some lines applied and the target written; the delta now
	// holds only the other lines, under a comment saying why.
	Partial Outcome = "partial"
	// NotApplied: no line could be applied; the target was not written,
	// and the delta holds its lines under a comment saying why.
	NotApplied Outcome = "not applied"
	// Empty: the delta had no lines; it was removed.
	Empty Outcome = "empty"
)

// Report says what Apply did, a FileReport per delta file found.
type Report struct {
	Files []FileReport
}

// FileReport says what Apply did with one delta file.
type FileReport struct {
	Delta   string // relative to the campaign: "tmp/gm-state-delta.md"
	Target  string // relative to the campaign: "story-state.md"
	Outcome Outcome
	Applied []Change     // the lines applied
	Kept    []*LineError // the lines kept in the delta, and why
	// Warnings are about lines applied all the same: hit points over
	// the character's maximum (ErrOverMax).
	Warnings []*LineError
}

// job is a delta file and its target.
type job struct {
	delta, target string
	apply         func([]byte, *Delta) ([]byte, *Result)
}

var jobs = []job{
	{StoryDelta, StoryFile, ApplyStory},
	{PartyDelta, PartyFile, ApplyParty},
}

// Apply applies the deltas waiting in the tmp/ directory of the campaign
// at campaignDir: tmp/gm-state-delta.md to story-state.md, then
// tmp/party-knowledge-delta.md to party-knowledge.md. A delta file that
// is not there is skipped.
//
// For each delta it writes the target atomically (textfile.Edit: a save
// of the target by a person meanwhile is kept, the delta applied again to
// it) and only then removes the delta, or, when some lines were not applied,
// rewrites it atomically to hold just those lines, under a "#" comment
// saying why. When no line could be applied, the target is not written
// and the delta is rewritten the same way (unless it says so already). A delta
// with no lines is removed. A delta whose target is missing is kept, and
// the error wraps ErrMissingTarget; a delta whose target holds an
// unresolved merge conflict is kept, the target not written, and the
// error wraps textfile.ErrConflict; a delta that changed while it was
// applied is left as it is, and the error wraps ErrChanged. Each delta is
// handled on its own: the error joins the errors of both, and the Report
// (never nil) holds the ones handled.
//
// Apply does not lock the campaign: one Apply at a time.
func Apply(ctx context.Context, campaignDir string, opts Options) (*Report, error) {
	rep := &Report{}
	if _, err := os.Stat(campaignDir); err != nil {
		return rep, err
	}
	var errs []error
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		fr, err := applyFile(campaignDir, j, opts)
		if fr != nil {
			rep.Files = append(rep.Files, *fr)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// applyFile applies one delta file; it returns a nil report when there
// is no delta, or when it failed before applying it.
func applyFile(dir string, j job, opts Options) (*FileReport, error) {
	deltaPath := filepath.Join(dir, filepath.FromSlash(j.delta))
	data, err := os.ReadFile(deltaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d, _ := Parse(j.delta, data) // entries Parse found wrong are kept, below
	fr := &FileReport{Delta: j.delta, Target: j.target}
	if opts.Party != nil && j.delta == StoryDelta {
		fr.Warnings = d.CheckParty(opts.Party)
	}
	if len(d.Entries) == 0 {
		fr.Outcome = Empty
		if opts.DryRun {
			return fr, nil
		}
		return fr, settle(deltaPath, j.delta, data, nil)
	}
	targetPath := filepath.Join(dir, filepath.FromSlash(j.target))
	// The game master, or a person, may be writing the target meanwhile:
	// textfile.Edit applies the delta again to their save.
	var res *Result
	err = textfile.Edit(targetPath, func(doc []byte) ([]byte, error) {
		if doc == nil {
			return nil, fmt.Errorf("%s: %w: %s (the delta is kept)", j.delta, ErrMissingTarget, j.target)
		}
		if err := textfile.CheckConflict(targetPath, doc); err != nil {
			return nil, fmt.Errorf("%w (the delta is kept)", err)
		}
		var out []byte
		out, res = j.apply(doc, d)
		if len(res.Applied) == 0 || opts.DryRun {
			return nil, nil // the target is not written
		}
		return out, nil
	})
	if err != nil {
		if errors.Is(err, ErrMissingTarget) || errors.Is(err, textfile.ErrConflict) {
			return nil, err
		}
		return fr, fmt.Errorf("%s: %w", j.target, err)
	}
	fr.Applied, fr.Kept = res.Applied, res.Kept
	switch {
	case len(res.Applied) == 0:
		// The target is not written; the delta says why under a comment.
		fr.Outcome = NotApplied
		if rest := keptDelta(j.target, d, res.Kept); !opts.DryRun && !bytes.Equal(rest, data) {
			return fr, settle(deltaPath, j.delta, data, rest)
		}
		return fr, nil
	case len(res.Kept) == 0:
		fr.Outcome = Done
	default:
		fr.Outcome = Partial
	}
	if opts.DryRun {
		return fr, nil
	}
	var rest []byte
	if len(res.Kept) > 0 {
		rest = keptDelta(j.target, d, res.Kept)
	}
	return fr, settle(deltaPath, j.delta, data, rest)
}

// settle removes the delta at path, or replaces it with rest when rest is
// not nil; it leaves it alone if it no longer holds data.
func settle(path, name string, data, rest []byte) error {
	now, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, data) {
		return fmt.Errorf("%s: %w", name, ErrChanged)
	}
	if rest != nil {
		err := textfile.Replace(path, data, rest)
		if errors.Is(err, textfile.ErrChanged) {
			return fmt.Errorf("%s: %w", name, ErrChanged)
		}
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return mailbox.SyncDir(filepath.Dir(path))
}

// keptDelta returns the delta holding only the kept entries, under a
// comment saying why they were not applied to target:
//
//	# parley: not applied to party-knowledge.md: SECRET, UPCOMING: refused: ...; MONSTER: unknown keyword
func keptDelta(target string, d *Delta, kept []*LineError) []byte {
	byLine := make(map[int]*Entry, len(d.Entries))
	for i := range d.Entries {
		byLine[d.Entries[i].Line] = &d.Entries[i]
	}
	var reasons []string
	who := make(map[string][]string) // reason -> keywords
	var body strings.Builder
	for _, le := range kept {
		what, r := reason(le)
		if _, ok := who[r]; !ok {
			reasons = append(reasons, r)
		}
		if !slices.Contains(who[r], what) {
			who[r] = append(who[r], what)
		}
		if e := byLine[le.Line]; e != nil {
			for _, l := range source(e) {
				body.WriteString(l + "\n")
			}
			delete(byLine, le.Line)
		}
	}
	why := make([]string, len(reasons))
	for i, r := range reasons {
		why[i] = strings.Join(who[r], ", ") + ": " + r
	}
	return []byte("# parley: not applied to " + target + ": " + strings.Join(why, "; ") + "\n" + body.String())
}

// source returns an entry's lines as written, shifted left so that it
// starts at the margin, or lines made from its fields.
func source(e *Entry) []string {
	if len(e.Source) == 0 {
		word := e.Word
		if word == "" && e.Keyword != Learned {
			word = string(e.Keyword)
		}
		first := "- " + e.Text
		if word != "" {
			first = "- " + word + ": " + e.Text
		}
		return append([]string{first}, indentAll(e.More)...)
	}
	n := markdown.Indent(e.Source[0])
	out := make([]string, len(e.Source))
	for i, l := range e.Source {
		if l != "" {
			out[i] = unindent(l, n)
		}
	}
	return out
}

// indentAll indents the non-blank lines by two spaces.
func indentAll(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		if l != "" {
			out[i] = "  " + l
		}
	}
	return out
}

// reason says briefly what was kept and why, for the delta's comment.
func reason(le *LineError) (what, why string) {
	what = le.Keyword
	if what == "" {
		what = fmt.Sprintf("%q", clip(le.Text, 24))
	}
	switch {
	case errors.Is(le.Err, ErrNoColon):
		why = "missing its colon"
		switch {
		case errors.Is(le.Err, ErrRefused):
			why += "; " + ErrRefused.Error()
		case errors.Is(le.Err, ErrMisplaced):
			why += "; " + ErrMisplaced.Error()
		}
		return what, why
	case errors.Is(le.Err, ErrUnknownKeyword):
		return what, "unknown keyword"
	case errors.Is(le.Err, ErrHP):
		return what, "want a character and hit points"
	case errors.Is(le.Err, ErrNoCharacter):
		return what, "no sheet in party/ for the character"
	}
	return what, le.Err.Error()
}
