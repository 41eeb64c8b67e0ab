// Package scenes keeps the story as it is told: scenes/NNN-slug.md in a
// campaign, one file per scene, numbered in order, holding the prose the
// players heard. A scribe appends each narrative to the scene it belongs
// to, starting a new file when the scene number or slug changes; the
// file's frontmatter holds the scene's location and time when they are
// known. Secrets, difficulty classes and raw dice notation never reach a
// scene file: they are for the GM's eyes.
package scenes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/internal/yamlerr"

	"github.com/parley-dev/parley/mailbox"
)

// Scene is a scene file.
type Scene struct {
	Number int
	Slug   string
	Path   string
	// Told is, from Current, when the scene's newest entry with a message
	// id was sent; zero when it has none.
	Told time.Time
}

var fileRE = regexp.MustCompile(`^(\d{1,4})-([a-z0-9]+(?:-[a-z0-9]+)*)\.md$`)

// FileName returns the name of a scene's file: 005-the-warehouse-heist.md.
func FileName(number int, slug string) string {
	return fmt.Sprintf("%03d-%s.md", number, slug)
}

// List returns the scene files of a scenes directory, in order. Files
// whose names do not follow NNN-slug.md are not scenes and are left out.
func List(dir string) ([]Scene, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Scene
	for _, de := range des {
		m := fileRE.FindStringSubmatch(de.Name())
		if m == nil || de.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, Scene{Number: n, Slug: m[2], Path: filepath.Join(dir, de.Name())})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// Current returns the scene being told: the one whose file was told in
// last, by the newest message id among its entries (the story may go
// back to an earlier scene: tell 1, 2, then 1 again, and 001 is being
// told); a file above it that holds no entry with an id (a scene a
// person started by hand) is newer still. With no ids at all, it is the
// highest-numbered one (the last by name among files with that number).
// ok is false when there is none.
func Current(dir string) (Scene, bool, error) {
	all, err := List(dir)
	if err != nil || len(all) == 0 {
		return Scene{}, false, err
	}
	return telling(all), true, nil
}

// telling returns the scene being told among all, as Current says.
func telling(all []Scene) Scene {
	best := -1
	var newest time.Time
	marked := make([]bool, len(all))
	for i, s := range all {
		data, err := os.ReadFile(s.Path)
		if err != nil {
			continue
		}
		at, ok := newestEntry(data)
		marked[i] = ok
		all[i].Told = at
		if ok && (best < 0 || !at.Before(newest)) {
			best, newest = i, at
		}
	}
	if best < 0 {
		return all[len(all)-1]
	}
	for i := len(all) - 1; i > best; i-- {
		if !marked[i] && all[i].Number > all[best].Number {
			return all[i]
		}
	}
	return all[best]
}

// newestEntry returns when the newest entry of a scene file was sent, by
// the message ids of its markers; false when none has one.
func newestEntry(doc []byte) (time.Time, bool) {
	var newest time.Time
	found := false
	open := []byte("<!-- message ")
	for {
		i := bytes.Index(doc, open)
		if i < 0 {
			return newest, found
		}
		doc = doc[i+len(open):]
		id, _, ok := bytes.Cut(doc, []byte(" -->"))
		if !ok {
			return newest, found
		}
		if at, _, err := mailbox.ParseID(string(id)); err == nil && (!found || at.After(newest)) {
			newest, found = at, true
		}
	}
}

// Entry is a piece of the story to append.
type Entry struct {
	Number   int    // the scene's number; 0 for the scene being told
	Slug     string // the scene's slug; "" for the scene being told
	Location string // where it happens, when known
	Time     string // when it happens, when known
	Text     string // the prose, before Clean
	// ID, when set, is the id of the message the text came from: text with
	// an id the scene holds already is not appended again.
	ID string
}

// ErrNothingToTell is the error for an entry whose text is empty once
// cleaned.
var ErrNothingToTell = errors.New("nothing to append: the text is empty once secrets, DCs and dice are removed")

// Append adds an entry to the scene it belongs to in dir, and returns the
// scene's file. A new scene file is numbered from the highest existing one
// unless the entry names a number that is free. It reports false, with no
// error, when the scene holds the entry's id already. A scene file whose
// frontmatter a person broke is not touched: the error names it.
func Append(dir string, e Entry) (string, bool, error) {
	f, err := File(dir, e)
	return f.Path, f.Added, err
}

// Filed is where File put an entry, and why there.
type Filed struct {
	Path  string // the scene's file
	Added bool   // false when the scene held the entry's id already
	// Why says why the entry went to that scene, by the number and slug
	// it gave or did not give: "no scene number or slug: the scene told
	// in last".
	Why string
}

// File is Append, and says why the entry went where it went: a person
// who left out the scene's number and slug learns which scene it was
// added to.
func File(dir string, e Entry) (Filed, error) {
	text := Clean(e.Text)
	if text == "" {
		return Filed{}, ErrNothingToTell
	}
	if e.Slug != "" && !fileRE.MatchString(FileName(1, e.Slug)) {
		return Filed{}, fmt.Errorf("scene slug %q: use lower-case words joined by - (the-warehouse-heist)", e.Slug)
	}
	target, why, err := pick(dir, e)
	if err != nil {
		return Filed{}, err
	}
	f, err := appendTo(dir, target, e, text)
	f.Why = why
	return f, err
}

// appendTo adds an entry's cleaned text to the scene target. A person
// may be writing the scene meanwhile: textfile.Edit starts again from
// their save.
func appendTo(dir string, target Scene, e Entry, text string) (Filed, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Filed{}, err
	}
	added := false
	err := textfile.Edit(target.Path, func(old []byte) ([]byte, error) {
		added = false
		var doc []byte
		if old == nil {
			doc = newScene(target, e)
		} else {
			if e.ID != "" && bytes.Contains(old, []byte(marker(e.ID))) {
				return nil, nil
			}
			if err := textfile.CheckConflict(target.Path, old); err != nil {
				return nil, err
			}
			var err error
			doc, err = setFront(target.Path, old, map[string]string{"location": e.Location, "time": e.Time})
			if err != nil {
				return nil, err
			}
		}
		// The entry follows the file's line ending (CRLF in a clone made
		// with core.autocrlf), never mixed ones.
		nl := textfile.Newline(doc)
		var add strings.Builder
		if !bytes.HasSuffix(doc, []byte("\n")) {
			add.WriteString("\n")
		}
		add.WriteString("\n")
		if e.ID != "" {
			add.WriteString(marker(e.ID) + "\n")
		}
		add.WriteString(text)
		add.WriteString("\n")
		var b bytes.Buffer
		b.Write(doc)
		b.WriteString(textfile.WithNewline(add.String(), nl))
		added = true
		return b.Bytes(), nil
	})
	if err != nil {
		return Filed{}, err
	}
	return Filed{Path: target.Path, Added: added}, nil
}

// pick finds the file an entry goes to, and says why there (Filed.Why).
func pick(dir string, e Entry) (Scene, string, error) {
	all, err := List(dir)
	if err != nil {
		return Scene{}, "", err
	}
	var cur *Scene
	if len(all) > 0 {
		cur = &all[len(all)-1]
	}
	next := 1
	if cur != nil {
		next = cur.Number + 1
	}
	free := func(n int) bool {
		for _, s := range all {
			if s.Number == n {
				return false
			}
		}
		return true
	}
	at := func(n int, slug string) Scene {
		return Scene{Number: n, Slug: slug, Path: filepath.Join(dir, FileName(n, slug))}
	}
	switch {
	case e.Number == 0 && e.Slug == "":
		if cur != nil {
			return telling(all), "no scene number or slug: the scene told in last", nil
		}
		return at(1, "opening"), "no scene number or slug, and no scene yet: a first one", nil
	case e.Slug == "":
		// A number alone: that scene if it exists, else a new one.
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].Number == e.Number {
				return all[i], fmt.Sprintf("scene number %d, no slug: the scene of that number", e.Number), nil
			}
		}
		if cur != nil {
			return at(e.Number, cur.Slug), fmt.Sprintf("scene number %d, no slug: a new scene, under the slug of the last", e.Number), nil
		}
		return at(e.Number, "untitled"), fmt.Sprintf("scene number %d, no slug: a new scene, untitled", e.Number), nil
	}
	for _, s := range all {
		if s.Slug == e.Slug && (e.Number == 0 || s.Number == e.Number) {
			if e.Number == 0 {
				return s, fmt.Sprintf("scene slug %s, no number: the scene of that slug", e.Slug), nil
			}
			return s, fmt.Sprintf("scene %d, %s", e.Number, e.Slug), nil
		}
	}
	if e.Number > 0 && free(e.Number) {
		return at(e.Number, e.Slug), fmt.Sprintf("scene %d, %s: a new scene", e.Number, e.Slug), nil
	}
	if e.Number > 0 {
		return at(next, e.Slug), fmt.Sprintf("scene %d, %s: a new scene, numbered after the last (another scene has the number %d)", e.Number, e.Slug, e.Number), nil
	}
	return at(next, e.Slug), fmt.Sprintf("scene slug %s, no number: a new scene, numbered after the last", e.Slug), nil
}

// newScene is the start of a new scene file.
func newScene(s Scene, e Entry) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "scene: %d\n", s.Number)
	fmt.Fprintf(&b, "slug: %s\n", s.Slug)
	if e.Location != "" {
		fmt.Fprintf(&b, "location: %s\n", quote(e.Location))
	}
	if e.Time != "" {
		fmt.Fprintf(&b, "time: %s\n", quote(e.Time))
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "# Scene %d: %s\n", s.Number, title(s.Slug))
	return []byte(b.String())
}

// setFront sets frontmatter keys to the values given (empty ones are
// left alone), changing only their lines.
func setFront(path string, doc []byte, values map[string]string) ([]byte, error) {
	if !bytes.HasPrefix(doc, []byte("---\n")) {
		return doc, nil // no frontmatter: a person's choice, kept
	}
	end := bytes.Index(doc[4:], []byte("\n---\n"))
	if end < 0 && bytes.HasSuffix(doc, []byte("\n---")) {
		end = len(doc) - 4 - 4
	}
	if end < 0 {
		return nil, fmt.Errorf("%s:1: frontmatter: no closing --- line", path)
	}
	front := doc[4 : 4+end+1] // the header lines, each ending in \n
	var n yaml.Node
	if err := yaml.Unmarshal(front, &n); err != nil {
		// The header's first line is the file's second, after ---.
		line, msg := yamlerr.Line(front, err)
		if line == 0 {
			return nil, fmt.Errorf("%s: frontmatter: %s", path, msg)
		}
		// A person edits the file: the likely slip is said (a value
		// holding ": " left unquoted).
		msg = yamlerr.Hint(front, line, msg)
		return nil, fmt.Errorf("%s:%d: frontmatter: %s", path, line+1, msg)
	}
	if len(n.Content) > 0 && n.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:2: frontmatter: expected key: value lines", path)
	}
	lines := strings.SplitAfter(string(front), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	changed := false
	for _, key := range []string{"location", "time"} {
		v := values[key]
		if v == "" {
			continue
		}
		line := key + ": " + quote(v) + "\n"
		found := false
		for i, l := range lines {
			if strings.HasPrefix(l, key+":") {
				found = true
				if l != line {
					lines[i], changed = line, true
				}
			}
		}
		if !found {
			lines, changed = append(lines, line), true
		}
	}
	if !changed {
		return doc, nil
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.WriteString(strings.Join(lines, ""))
	b.Write(doc[4+end+1:])
	return b.Bytes(), nil
}

func marker(id string) string { return "<!-- message " + id + " -->" }

// quote writes a value as YAML: plain when it reads back as the same text.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var back string
	if yaml.Unmarshal([]byte("v: "+s), &struct{ V *string }{&back}) == nil && back == s && !strings.ContainsAny(s, "#:") {
		return s
	}
	return strconv.Quote(s)
}

func title(slug string) string {
	words := strings.Split(slug, "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

var (
	commentRE = regexp.MustCompile(`(?s)<!--.*?-->`)
	// A line that is a note for the GM: "SECRET: ...", "GM note: ...",
	// "(GM only) ...", possibly as a list item or a quote.
	// "Hidden:" counts, but not "Hidden — behind the altar", nor words
	// such as "Secret-keepers": a dash marks a note only with spaces
	// around it, and only after "secret" or "GM note".
	secretLineRE = regexp.MustCompile(`(?i)^\s*(?:[>*-]\s*)*(?:\*\*|__)?(?:(?:[\[(](?:secret|gm[ _-]?notes?|gm[ _-]?only|hidden)[\])])|(?:(?:secret|gm[ _-]?notes?|gm[ _-]?only|hidden)(?:\*\*|__)?\s*:)|(?:(?:secret|gm[ _-]?notes?|gm[ _-]?only)(?:\*\*|__)?\s+[—–-]\s))`)
	// An inline aside for the GM: "[secret: ...]", "(GM: ...)".
	secretInlineRE = regexp.MustCompile(`(?i)\s*[\[(](?:secret|gm[ _-]?notes?|gm[ _-]?only|gm|hidden)\s*:[^\])]*[\])]`)
	// A difficulty class: "DC 15", "(DC 15)", "DC15".
	dcRE = regexp.MustCompile(`\s*\(\s*DC\s*\d+\s*\)|(?:\b(?:vs\.?|versus|against)\s+)?\bDC\s*\d+\b\s*`)
	// Dice notation, with what a roll shows: "1d20+5 = [8]+5 = 13",
	// "2d6", "d20", "4d6dl1", "[13]".
	diceRE = regexp.MustCompile(`\b\d*d(?:\d+|%|F)(?:(?:k[hl]?|d[hl]?|r[o]?|!{1,2}p?|[<>]=?)\d*)*(?:\s*[-+*/]\s*\d+)*(?:\s*=\s*(?:\[[^\]]*\](?:\s*[-+*/]\s*\d+)*|-?\d+))*`)
	// An aside about the mechanics: "(DC 14 to notice)", "(2d6 fire)".
	mechanicsRE  = regexp.MustCompile(`\s*\([^()]*(?:\bDC\s*\d+|\b\d*d(?:\d+|%|F)\b)[^()]*\)`)
	emptyParenRE = regexp.MustCompile(`\(\s*[,;:]?\s*\)|\[\s*\]`)
	spacesRE     = regexp.MustCompile(`[ \t]{2,}`)
	spacePunctRE = regexp.MustCompile(`[ \t]+([.,;:!?])`)
	blankRunRE   = regexp.MustCompile(`\n{3,}`)
)

// Clean removes what players must not read from prose: what
// WithoutNotes removes, and difficulty classes and raw dice notation.
// What remains is trimmed; paragraphs are kept.
func Clean(text string) string {
	var kept []string
	for _, line := range strings.Split(WithoutNotes(text), "\n") {
		line = mechanicsRE.ReplaceAllString(line, "")
		line = outsideQuotes(line, func(s string) string { return dcRE.ReplaceAllString(s, "") })
		line = removeDice(line)
		line = emptyParenRE.ReplaceAllString(line, "")
		line = spacesRE.ReplaceAllString(line, " ")
		line = spacePunctRE.ReplaceAllString(line, "$1")
		kept = append(kept, strings.TrimRight(line, " \t"))
	}
	text = strings.Join(kept, "\n")
	text = blankRunRE.ReplaceAllString(text, "\n\n")
	return strings.TrimSpace(text)
}

// WithoutNotes removes what is for the GM alone from a text: HTML
// comments, and lines and asides marked secret or for the GM ("SECRET:
// ...", "GM note: ...", "(GM only) ...", "[secret: ...]"). The rest is
// kept as it is, line endings made "\n". Clean does this, and more.
func WithoutNotes(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = commentRE.ReplaceAllString(text, "")
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if secretLineRE.MatchString(line) {
			continue
		}
		kept = append(kept, secretInlineRE.ReplaceAllString(line, ""))
	}
	return strings.Join(kept, "\n")
}

// outsideQuotes applies fn to the parts of a line outside double quotes:
// what a character says ("DC 10 forever!") is theirs.
func outsideQuotes(line string, fn func(string) string) string {
	var b strings.Builder
	inside := false
	start := 0
	for i, r := range line {
		if r != '"' && r != '“' && r != '”' {
			continue
		}
		part := line[start:i]
		if !inside {
			part = fn(part)
		}
		b.WriteString(part)
		b.WriteRune(r)
		start = i + utf8.RuneLen(r)
		inside = !inside
	}
	part := line[start:]
	if !inside {
		part = fn(part)
	}
	b.WriteString(part)
	return b.String()
}

// removeDice removes dice notation from a line, leaving a die named as a
// thing alone ("a d20-shaped idol", "d20s", "the d20's face"): notation
// that a letter, a hyphen or an apostrophe touches is part of a word.
func removeDice(line string) string {
	locs := diceRE.FindAllStringIndex(line, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		a, b := locs[i][0], locs[i][1]
		if b < len(line) {
			if r, _ := utf8.DecodeRuneInString(line[b:]); unicode.IsLetter(r) || r == '-' || r == '\'' || r == '’' {
				continue
			}
		}
		if a > 0 {
			if r, _ := utf8.DecodeLastRuneInString(line[:a]); unicode.IsLetter(r) || r == '-' && a > 1 && unicode.IsLetter(rune(line[a-2])) {
				continue
			}
		}
		line = line[:a] + line[b:]
	}
	return line
}

// Check reads a scene file and reports what would stop Append from
// adding to it: frontmatter that does not parse, or is not key: value
// lines. A scene without frontmatter is fine.
func Check(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc = bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
	_, err = setFront(path, doc, nil)
	return err
}
