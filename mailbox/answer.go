package mailbox

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode"
)

// Answer is what an agent's program or model said, as ParseAnswer reads
// it: the text to send and, when it has a header, the message it is.
type Answer struct {
	// Text is what is sent: the output as written, or, when the whole of
	// it was one code fence holding a message, what was inside the fence.
	Text []byte
	// Unfenced says Text was taken out of a code fence.
	Unfenced bool
	// Message is the message Text is; nil when ParseAnswer returns an
	// error (ErrNoHeader for plain text).
	Message *Message
	// Late is, for text with no header on line one, the first later line
	// where one begins; its Line is 0 when there is none.
	Late LateHeader
}

// LateHeader is a header that begins after line one of a text: a "[TAG]"
// line, or a '---' line opening a frontmatter block that parses. A
// header counts only on line one: such a text is plain text, though its
// writer most likely meant a message and put words before it ("I'll
// answer as Tor." then "[PLAYER_TO_GM]").
type LateHeader struct {
	Line int    // the line of the text it begins on, from 1
	Text string // that line, as written ("[PLAYER_TO_GM]", "---")
}

// String says what the line is: "line 3 is a [PLAYER_TO_GM] tag line",
// "a frontmatter header begins at line 3".
func (l LateHeader) String() string {
	if strings.HasPrefix(l.Text, "[") {
		return "line " + strconv.Itoa(l.Line) + " is a " + l.Text + " tag line"
	}
	return "a frontmatter header begins at line " + strconv.Itoa(l.Line)
}

// maxLateTries is how many '---' lines after line one LateHeaderOf
// tries as a frontmatter block before it gives up: words put
// before a message are a line or two, and a long plain text with many
// '---' rules is not read again from each.
const maxLateTries = 16

// ParseAnswer reads what an agent's program printed (or wrote into its
// outbox) or what a model answered, the one way both are read: the text
// is parsed as a message (Parse); a text whose whole is one code fence
// ("```markdown" ... "```", the way a model often writes a message)
// holding a message with a header is taken out of the fence first. It
// returns Parse's error, with the Answer still filled in: for plain text
// (ErrNoHeader, or ErrUnclosedFrontmatter for a first line '---' never
// closed) Text is what to send as a reply, and Late names a header that
// begins after line one, for the caller to say the text went as plain
// text although it looks like a message there.
func ParseAnswer(data []byte) (Answer, error) {
	a := Answer{Text: data}
	if inner, above, ok := unfence(data); ok {
		if m, err := Parse(inner); err == nil || !plainOrNot(err) {
			a.Text, a.Unfenced = inner, true
			a.Message = m
			// The error names a line of the answer as written, the
			// fence's opening line counted.
			if pe := (*ParseError)(nil); errors.As(err, &pe) && pe.Line > 0 {
				pe.Line += above
			}
			return a, err
		}
	}
	m, err := Parse(data)
	a.Message = m
	if errors.Is(err, ErrNoHeader) || errors.Is(err, ErrUnclosedFrontmatter) {
		a.Late = LateHeaderOf(data)
	}
	return a, err
}

// plainOrNot reports whether Parse's error says the text is no message
// with a header at all: plain text, an unclosed '---', empty, binary. A
// fence holding such a text is kept as written.
func plainOrNot(err error) bool {
	return errors.Is(err, ErrNoHeader) || errors.Is(err, ErrUnclosedFrontmatter) ||
		errors.Is(err, ErrEmpty) || errors.Is(err, ErrBinary)
}

// LateHeaderOf finds the first line after line one of text where a
// header begins (see LateHeader): a line that is only "[TAG]", or a
// '---' line from which the rest of the text parses as a frontmatter
// message. It tries the first '---' lines only (maxLateTries).
func LateHeaderOf(text []byte) LateHeader {
	_, rest := cutLine(text)
	off := len(text) - len(rest)
	tries := 0
	for line := 2; off < len(text) && tries < maxLateTries; line++ {
		l, _ := cutLine(text[off:])
		switch {
		case tagLine.Match(l):
			// A line that is only "[TAG]" is meant as one, even when
			// its fields would not parse.
			return LateHeader{Line: line, Text: string(bytes.TrimRight(l, " \t\r"))}
		case isDelimiter(l, "---"):
			// A rule is common in markdown: only a frontmatter block
			// that parses counts.
			tries++
			if _, err := Parse(text[off:]); err == nil {
				return LateHeader{Line: line, Text: "---"}
			}
		}
		off += len(l) + eolLen(text[off+len(l):])
	}
	return LateHeader{}
}

// unfence returns what is inside the one code fence that is the whole of
// data (blank space around it aside): an opening line of three or more
// backticks and at most one word ("```", "```markdown"), a closing line
// of backticks alone. above is the number of lines of data before inner
// (the opening line, and blank ones before it). ok is false for data
// that is not one such fence.
func unfence(data []byte) (inner []byte, above int, ok bool) {
	t := bytes.TrimSpace(data)
	if !bytes.HasPrefix(t, []byte("```")) || !bytes.HasSuffix(t, []byte("```")) {
		return nil, 0, false
	}
	first, rest, found := bytes.Cut(t, []byte("\n"))
	if !found || bytes.ContainsAny(bytes.TrimSpace(bytes.Trim(first, "`")), " \t") {
		return nil, 0, false
	}
	i := bytes.LastIndexByte(rest, '\n')
	if i < 0 || len(bytes.Trim(bytes.TrimRight(rest[i+1:], "\r"), "`")) != 0 {
		return nil, 0, false
	}
	above = bytes.Count(data[:len(data)-len(bytes.TrimLeftFunc(data, unicode.IsSpace))], []byte("\n")) + 1
	return rest[:i+1], above, true
}
