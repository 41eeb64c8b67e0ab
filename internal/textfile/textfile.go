// Package textfile owns what parley respects in a text file that people
// keep in git and parley changes: the merge conflicts git leaves in it,
// which parley must never write into, and its line ending, which what
// parley appends follows.
package textfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrConflict is the error, wrapped in a *ConflictError, for a file
// holding a merge conflict that is not resolved.
var ErrConflict = errors.New("unresolved merge conflict")

// ConflictError is the error for a file that holds an unresolved merge
// conflict: Line is the line (from 1) of its first "<<<<<<< " marker.
type ConflictError struct {
	Path string
	Line int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s:%d: %v (<<<<<<< here): resolve it, then git add", e.Path, e.Line, ErrConflict)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Conflict returns the line (from 1) where data holds an unresolved
// merge conflict: a line that starts "<<<<<<<" (then a space, or
// nothing) with a later line that starts ">>>>>>>" the same way. A line
// of "=======" alone is never one: it underlines a markdown heading too.
// It reports false when data holds none.
func Conflict(data []byte) (int, bool) {
	start := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case start == 0 && isMarker(line, "<<<<<<<"):
			start = i + 1
		case start != 0 && isMarker(line, ">>>>>>>"):
			return start, true
		}
	}
	return 0, false
}

// isMarker reports whether line is a conflict marker of git's: the
// seven characters of mark, then a space and a label, or nothing.
func isMarker(line []byte, mark string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(mark))
	return ok && (len(rest) == 0 || rest[0] == ' ')
}

// CheckConflict returns a *ConflictError naming path when data, read
// from it, holds an unresolved merge conflict, and nil when it holds
// none. Every writer of a file a person keeps in git calls it on what
// it read before it writes, so that nothing is written into a conflict.
func CheckConflict(path string, data []byte) error {
	if line, ok := Conflict(data); ok {
		return &ConflictError{Path: path, Line: line}
	}
	return nil
}

// Newline returns the line ending of data: "\r\n" when its first line
// ends so, else "\n".
func Newline(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// WithNewline returns s with every line ending (LF or CRLF) made nl.
func WithNewline(s, nl string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if nl == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", nl)
}

// MergeAppended merges ours and theirs, two versions of a file that is
// only appended to (a character's journal, the decision log), from base,
// their common ancestor: when each is base with text added at its end, it
// returns ours followed by what theirs added, each side's additions whole
// and in their order, and true. git's union merge keeps lines the two
// sides' additions share once (two entries that both end "**How I
// feel:** Tired.", or the blank line before each heading), which cuts
// one entry short and runs it into the other. What one side added that
// the other holds already is kept once. It reports false when either
// side changed base itself (a person edited an earlier entry): the
// caller merges it otherwise.
func MergeAppended(base, ours, theirs []byte) ([]byte, bool) {
	if !bytes.HasPrefix(ours, base) || !bytes.HasPrefix(theirs, base) {
		return nil, false
	}
	mine, added := ours[len(base):], theirs[len(base):]
	switch {
	case bytes.HasPrefix(mine, added):
		return ours, true
	case bytes.HasPrefix(added, mine):
		return theirs, true
	}
	out := make([]byte, 0, len(ours)+len(added)+2)
	out = append(out, ours...)
	if len(ours) > 0 && !bytes.HasSuffix(ours, []byte("\n")) {
		out = append(out, Newline(ours)...)
	}
	return append(out, added...), true
}
