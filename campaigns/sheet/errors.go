package sheet

import (
	"errors"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/internal/textfile"
)

// Error is a problem with one sheet: the file, the line (0 when the
// problem has no line of its own), the field and what is wrong. Its
// message reads
//
//	party/x.md:28: hit points: "eight" is not a number
//
// Err may wrap one of the package's sentinel errors; test for them with
// errors.Is.
type Error struct {
	Path  string // the sheet's path as the caller gave it
	Line  int    // 1-based; 0 when the problem is not on one line
	Field string // "hit points", "max hit points", "level", "STR", "items", "currency", "frontmatter"; "" for the whole sheet
	Err   error
}

// Error returns "path:line: field: problem", leaving out what is empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// NotNumber is the Err of an *Error about a value written where a number
// goes that is not one: hit points "three/8", a level "one". Its message
// reads `"three/8" is not a number`. Mend writes a number in its place.
type NotNumber struct {
	Text string // the value as written: "three/8"
	// at is where a number goes in its place: "three" of "three/8", so
	// that the maximum stays; not ok when the package cannot tell ("seven
	// of twelve").
	at span
}

// Error returns `"three/8" is not a number`.
func (e *NotNumber) Error() string { return strconv.Quote(e.Text) + " is not a number" }

// Mendable reports whether Mend can write a number in the value's place.
func (e *NotNumber) Mendable() bool { return e.at.ok() }

// Key returns the key of a field as the frontmatter layout writes it, and
// as `parley character set` takes it: "hp" for "hit points", "max_hp",
// "temp_hp", "level", "str" for "STR"; "" for a field no number of its
// own is set by ("items", "currency").
func Key(field string) string {
	for k, f := range frontFields {
		if f == field && f != "items" && f != "currency" && f != "abilities" {
			return k
		}
	}
	for _, a := range AbilityNames {
		if a == field {
			return strings.ToLower(a)
		}
	}
	return ""
}

// Conditions callers branch on. Every error the package returns about a
// sheet is an *Error; these are wrapped inside it.
var (
	// ErrNoHP: the sheet says nowhere how many hit points the character
	// has. A sheet without hit points is not a sheet.
	ErrNoHP = errors.New("no hit points anywhere")

	// ErrUnknownItem: no item on the sheet goes by that name.
	ErrUnknownItem = errors.New("no such item")

	// ErrAmbiguous: the name matches several items and none exactly.
	ErrAmbiguous = errors.New("ambiguous item")

	// ErrBelowZero: a change would leave a negative quantity or amount.
	ErrBelowZero = errors.New("below zero")

	// ErrDuplicateItem: two items on one sheet have the same slug and are
	// directly in the same container, or both in none; the same item in
	// two packs is not a duplicate. The error names both lines.
	ErrDuplicateItem = errors.New("duplicate item")

	// ErrNotEmpty: an item that holds other items (a pack with its
	// contents indented under it) would be used up; nothing is removed.
	ErrNotEmpty = errors.New("holds items")

	// ErrChanged: Save found that the file on disk is no longer what was
	// read; nothing was written. It is textfile.ErrChanged, what every
	// writer of a file people edit by hand says so with.
	ErrChanged = textfile.ErrChanged

	// ErrRange: a value outside what the field allows (hit points above
	// the maximum, a level of 21, an ability score of 0, a maximum below 1).
	ErrRange = errors.New("out of range")

	// ErrMissing: the value to change is not written on the sheet, and
	// the package does not invent a place for it (a level or ability
	// table that a tables-layout sheet does not have).
	ErrMissing = errors.New("not on the sheet")

	// ErrUneditable: the value is written in a way the package cannot
	// change in place safely (a multi-line YAML scalar, an alias, text
	// that does not read back as intended). The sheet is left unchanged;
	// a person edits it by hand.
	ErrUneditable = errors.New("cannot change this in place")
)
