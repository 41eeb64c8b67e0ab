package plans

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// ErrNoStep is the error of Tick for a step the plan does not have.
var ErrNoStep = errors.New("no such step")

// ErrAmbiguousStep is what an *AmbiguousStepError is: Tick was asked for
// a step number more than one step of the plan has.
var ErrAmbiguousStep = errors.New("step number used by more than one step")

// AmbiguousStepError is the error of Tick for a step number more than one
// step of the plan has (a plan that does not check): which to tick cannot
// be told, so none is.
type AmbiguousStepError struct {
	Path  string
	Step  int
	Lines []int // the lines of the steps numbered Step, in file order
}

// Error says which lines have the number.
func (e *AmbiguousStepError) Error() string {
	lines := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		lines[i] = strconv.Itoa(l)
	}
	return fmt.Sprintf("%s: %d steps are numbered %d (lines %s)", e.Path, len(e.Lines), e.Step, strings.Join(lines, ", "))
}

// Is makes an AmbiguousStepError match ErrAmbiguousStep.
func (e *AmbiguousStepError) Is(target error) bool { return target == ErrAmbiguousStep }

// ErrStatus is the error of SetStatus for a status not in Statuses.
var ErrStatus = errors.New("not a plan status")

// Tick marks step n of the plan at path done: its `- [ ]` becomes
// `- [x]`, and no other byte of the file changes. A step already done is
// left as it is. It returns the plan as it is now on disk, and whether
// it changed it. A number the plan has no step of is ErrNoStep; one two
// steps have (a plan that does not check) an *AmbiguousStepError, and
// the file is left as it is. Other problems of the plan do not stop a
// tick. A plan git left a merge conflict in is a *textfile.ConflictError
// (errors.Is textfile.ErrConflict), for Tick and SetStatus alike, and is
// left as it is.
//
// The file is replaced atomically (a temporary file beside it, fsync,
// rename, fsync of the directory), keeping its permissions; Ticks and
// SetStatuses of the plans of one directory, from any process, take
// turns (mailbox.LockDir), so none is lost.
func Tick(path string, n int) (*Plan, bool, error) {
	return update(path, func(p *Plan, data []byte) ([]byte, error) { return tick(p, data, n) })
}

// tick returns data, the text p was parsed from, with step n ticked.
func tick(p *Plan, data []byte, n int) ([]byte, error) {
	steps := p.StepsNumbered(n)
	switch {
	case len(steps) == 0:
		return nil, fmt.Errorf("%s: step %d: %w", p.Path, n, ErrNoStep)
	case len(steps) > 1:
		e := &AmbiguousStepError{Path: p.Path, Step: n}
		for _, s := range steps {
			e.Lines = append(e.Lines, s.Line)
		}
		return nil, e
	}
	s := steps[0]
	if s.Done {
		return data, nil
	}
	out := slices.Clone(data)
	out[s.box] = 'x'
	return out, nil
}

// SetStatus sets the status of the plan at path, changing only the
// value of its frontmatter's status line (adding the line at the end of
// the frontmatter when there is none). It writes as Tick does, and
// returns the plan as it is now and whether it changed it.
func SetStatus(path, status string) (*Plan, bool, error) {
	if !slices.Contains(Statuses, status) {
		return nil, false, fmt.Errorf("%q: %w (one of %v)", status, ErrStatus, Statuses)
	}
	return update(path, func(p *Plan, data []byte) ([]byte, error) { return setStatus(p, data, status) })
}

// ErrNoFrontmatter is the error of SetStatus for a file without a
// frontmatter to set the status in.
var ErrNoFrontmatter = errors.New("no frontmatter")

// setStatus returns data, the text p was parsed from, with the status
// set.
func setStatus(p *Plan, data []byte, status string) ([]byte, error) {
	if f, ok := p.fields["status"]; ok {
		if f.value == status {
			return data, nil
		}
		return slices.Concat(data[:f.start], []byte(status), data[f.end:]), nil
	}
	if p.fmEnd == 0 {
		return nil, fmt.Errorf("%s: %w to set the status in", p.Path, ErrNoFrontmatter)
	}
	ls := splitLines(data)
	eol := "\n"
	if strings.HasSuffix(string(data[:ls[1].off]), "\r\n") {
		eol = "\r\n"
	}
	at := ls[p.fmEnd-1].off
	return slices.Concat(data[:at], []byte("status: "+status+eol), data[at:]), nil
}

// update reads the plan at path, asks change for its new content, and
// writes that atomically when it differs, holding the directory's lock.
// A plan holding an unresolved merge conflict is a
// *textfile.ConflictError, and is left as it is.
func update(path string, change func(*Plan, []byte) ([]byte, error)) (*Plan, bool, error) {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	unlock, err := mailbox.LockDir(filepath.Dir(real))
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	// A person may be editing the plan meanwhile (their editor takes no
	// lock): textfile.Edit writes, then compares, and starts again from
	// their save.
	var p *Plan
	var out []byte
	changed := false
	err = textfile.Edit(real, func(data []byte) ([]byte, error) {
		if data == nil {
			return nil, &fs.PathError{Op: "open", Path: real, Err: fs.ErrNotExist}
		}
		// A plan is kept in git: nothing is written into a merge conflict.
		if err := textfile.CheckConflict(path, data); err != nil {
			return nil, err
		}
		p = Parse(path, data)
		o, err := change(p, data)
		if err != nil {
			return nil, err
		}
		out, changed = o, !bytes.Equal(o, data)
		return o, nil
	})
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return p, false, nil
	}
	return Parse(path, out), true, nil
}

// List reads the plans in dir (its *.md files, in name order). A
// directory that is not there holds no plans.
func List(dir string) ([]*Plan, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	var ps []*Plan
	for _, name := range names {
		p, err := Read(name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}
