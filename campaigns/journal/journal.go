// Package journal keeps a character's journal, party/<character>-journal.md:
// dated entries, newest last, each telling what happened, what the
// character did, what they learned and how they feel, in their own voice.
//
// An entry is appended; nothing else in the file moves, so a person may
// edit earlier entries by hand. An entry written for a message carries the
// message id in an HTML comment (invisible when the file is rendered), so
// that a message handled twice after a crash is journaled once.
package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// Entry is one journal entry.
type Entry struct {
	Date     time.Time
	Title    string
	Happened string // what happened
	Did      string // what I did
	Learned  string // what I learned
	Feel     string // how I feel
	// ID, when set, is the id of the message the entry was written for:
	// an entry with an id the journal holds already is not added again.
	ID string
}

// ErrEmpty is the error for an entry that says nothing.
var ErrEmpty = errors.New("the entry says nothing: give a title or what happened")

// The parts of an entry, as they are labelled in the file and in text
// given to Parse.
var parts = []struct {
	label string
	field func(*Entry) *string
}{
	{"What happened", func(e *Entry) *string { return &e.Happened }},
	{"What I did", func(e *Entry) *string { return &e.Did }},
	{"What I learned", func(e *Entry) *string { return &e.Learned }},
	{"How I feel", func(e *Entry) *string { return &e.Feel }},
}

// part returns the part of the entry a label or field name names:
// "title", a part's label ("What happened", "how i feel") or its short
// name ("happened", "did", "learned", "feel"), in any case, with _ for a
// space; nil for any other name.
func (e *Entry) part(name string) *string {
	name = strings.ReplaceAll(name, "_", " ")
	if strings.EqualFold(name, "title") {
		return &e.Title
	}
	for _, p := range parts {
		short := p.label[strings.LastIndexByte(p.label, ' ')+1:]
		if strings.EqualFold(name, p.label) || strings.EqualFold(name, short) {
			return p.field(e)
		}
	}
	return nil
}

// Set sets the part of the entry a message's field names (see Parse for
// the names). It reports whether the field names a part; an empty value
// changes nothing.
func (e *Entry) Set(field, value string) bool {
	dst := e.part(field)
	if dst == nil {
		return false
	}
	if value = strings.TrimSpace(value); value != "" {
		*dst = value
	}
	return true
}

// Parse reads an entry from text a person or an agent wrote: an optional
// "Title:" line, then paragraphs, each part starting with its label ("What
// happened:", "What I did:", "What I learned:", "How I feel:", or the
// short "Happened:", "Did:", "Learned:", "Feel:", in any case, with or
// without ** around it). Text before any label is what happened.
func Parse(text string) Entry {
	var e Entry
	cur := &e.Happened
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		bare := strings.TrimSpace(strings.ReplaceAll(line, "**", ""))
		if name, rest, ok := strings.Cut(bare, ":"); ok {
			switch dst := e.part(name); {
			case dst == &e.Title && e.Title == "":
				e.Title = strings.TrimSpace(rest)
				continue
			case dst != nil && dst != &e.Title:
				cur = dst
				*cur = appendLine(*cur, strings.TrimSpace(rest))
				continue
			}
		}
		*cur = appendLine(*cur, line)
	}
	for _, p := range parts {
		f := p.field(&e)
		*f = strings.TrimSpace(*f)
	}
	return e
}

func appendLine(s, line string) string {
	if s == "" {
		return line
	}
	return s + "\n" + line
}

// Add appends an entry to the journal at path, creating the file with a
// heading for character when it does not exist (or is empty). The entry's
// lines end as the file's first line does (CRLF or LF). The file is replaced
// atomically. It reports false, with no error, when the journal holds an
// entry for e.ID already.
func Add(path, character string, e Entry) (bool, error) {
	if strings.TrimSpace(e.Title+e.Happened+e.Did+e.Learned+e.Feel) == "" {
		return false, ErrEmpty
	}
	// Read, then replaced whole: writers take turns, or one entry would
	// be lost (the journal agent and the team lead, which takes a
	// player's plain reply as its entry, in one runner; parley journal
	// add at a shell meanwhile). The lock is the journal's directory's:
	// the file itself is replaced, the directory stays.
	unlock, err := mailbox.LockFile(filepath.Dir(path))
	if err != nil {
		return false, err
	}
	defer unlock()
	// A person may be writing the journal meanwhile (their editor takes
	// no lock): textfile.Edit starts again from their save.
	added := false
	err = textfile.Edit(path, func(old []byte) ([]byte, error) {
		added = false
		if len(bytes.TrimSpace(old)) == 0 {
			old = []byte(fmt.Sprintf("# %s — Journal\n\n> Written in %s's own voice, one entry per day of play, newest last.\n", displayName(character), displayName(character)))
		}
		if e.ID != "" && bytes.Contains(old, []byte(marker(e.ID))) {
			return nil, nil
		}
		if err := textfile.CheckConflict(path, old); err != nil {
			return nil, err
		}
		// The entry follows the file's line ending: a journal kept with
		// CRLF (its first line ends so) gets CRLF lines, never mixed ones.
		nl := textfile.Newline(old)
		var b bytes.Buffer
		b.Write(old)
		if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
			b.WriteString(nl)
		}
		b.WriteString(textfile.WithNewline(Format(e), nl))
		added = true
		return b.Bytes(), nil
	})
	return added && err == nil, err
}

// Format renders an entry as it is appended to a journal: a blank line,
// a dated heading, then each part that has something to say.
func Format(e Entry) string {
	var b strings.Builder
	b.WriteString("\n")
	date := e.Date
	if date.IsZero() {
		date = time.Now()
	}
	heading := date.Format("2006-01-02")
	if e.Title != "" {
		heading += " — " + oneLine(e.Title)
	}
	fmt.Fprintf(&b, "## %s\n", heading)
	if e.ID != "" {
		fmt.Fprintf(&b, "%s\n", marker(e.ID))
	}
	for _, p := range parts {
		if text := strings.TrimSpace(*p.field(&e)); text != "" {
			fmt.Fprintf(&b, "\n**%s:** %s\n", p.label, escapeHeadings(text))
		}
	}
	return b.String()
}

// escapeHeadings escapes a "#" that starts a line of an entry's text, so
// that the text cannot start an entry or a section of its own.
func escapeHeadings(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "#") {
			lines[i] = l[:len(l)-len(t)] + "\\" + t
		}
	}
	return strings.Join(lines, "\n")
}

// Has reports whether the journal at path holds an entry written from the
// message id (its marker); a journal that cannot be read holds none.
func Has(path, id string) bool {
	data, err := os.ReadFile(path)
	return err == nil && id != "" && bytes.Contains(data, []byte(marker(id)))
}

func marker(id string) string { return "<!-- message " + id + " -->" }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// displayName turns tilda-brannock into "Tilda Brannock".
func displayName(character string) string {
	words := strings.Split(character, "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
