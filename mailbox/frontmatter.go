package mailbox

import (
	"bytes"
	"errors"
)

// Errors of SplitFrontmatter, for callers to branch on with errors.Is.
var (
	// ErrNoFrontmatter is the error for a text whose first line is not
	// "---".
	ErrNoFrontmatter = errors.New("no frontmatter: the first line is not '---'")
	// ErrUnclosedFrontmatter is the error for a text whose first line is
	// "---" but no later line is "---" or "...".
	ErrUnclosedFrontmatter = errors.New("frontmatter is never closed: add a '---' line after the header")
)

// bom is the UTF-8 byte order mark, which an editor may write before the
// first line.
var bom = []byte("\uFEFF")

// Frontmatter is where SplitFrontmatter found a file's YAML frontmatter:
// the header and the body as they are written, their offsets in the file
// (for editing it in place) and the line the body starts on (for naming
// lines). The header always starts on the file's line 2, so a yaml.v3
// node's Line plus 1 is its line in the file.
type Frontmatter struct {
	// Header is the YAML text between the opening and the closing line,
	// byte for byte, with its last line break: data[HeaderStart:HeaderEnd].
	// It is empty when the closing line follows the opening one.
	Header []byte
	// Body is everything after the closing line and its line break,
	// byte for byte: data[BodyStart:].
	Body []byte

	HeaderStart int // offset of the header: after the opening line and its line break
	HeaderEnd   int // offset of the header's end: the start of the closing line
	BodyStart   int // offset of the body: after the closing line and its line break
	BodyLine    int // 1-based line of the file the body starts on: the one after the closing line
}

// SplitFrontmatter finds the YAML frontmatter at the start of data: an
// opening line "---" (after a UTF-8 byte order mark, if there is one),
// the header, and a closing line "---" or "...". The first closing line
// ends the header; a "---" further down belongs to the body. Spaces, tabs
// and carriage returns at the end of a delimiter line are ignored, so a
// CRLF file splits as its LF copy does, and the header and the body keep
// their line endings. Lines end at "\n" only.
//
// It returns ErrNoFrontmatter when the first line is not "---", and
// ErrUnclosedFrontmatter when no line closes it. It does not decode the
// header: callers read it with yaml.v3 (a tag-first message, "[TAG]" on
// line one, has no frontmatter; Parse reads it).
func SplitFrontmatter(data []byte) (Frontmatter, error) {
	text := bytes.TrimPrefix(data, bom)
	first, _ := cutLine(text)
	if !isDelimiter(first, "---") {
		return Frontmatter{}, ErrNoFrontmatter
	}
	start := len(data) - len(text) + len(first) + eolLen(text[len(first):])
	line := 2 // of the file, at off
	for off := start; off < len(data); line++ {
		l, _ := cutLine(data[off:])
		next := off + len(l) + eolLen(data[off+len(l):])
		if isDelimiter(l, "---") || isDelimiter(l, "...") {
			return Frontmatter{
				Header:      data[start:off:off],
				Body:        data[next:],
				HeaderStart: start,
				HeaderEnd:   off,
				BodyStart:   next,
				BodyLine:    line + 1,
			}, nil
		}
		off = next
	}
	return Frontmatter{}, ErrUnclosedFrontmatter
}

// isDelimiter reports whether line is delim, ignoring spaces, tabs and
// carriage returns at its end.
func isDelimiter(line []byte, delim string) bool {
	return string(bytes.TrimRight(line, " \t\r")) == delim
}
