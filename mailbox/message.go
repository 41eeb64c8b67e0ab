// Package mailbox owns parley's message files and mailbox directories: it
// parses and writes messages (YAML frontmatter or tag-first), names them,
// and moves them between the states of a mailbox (tmp, outbox, sent,
// rejected, inbox, cur, done, dead) with renames that survive a crash.
// Its frontmatter splitter, SplitFrontmatter, serves skills and character
// sheets too.
package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/internal/visible"

	"github.com/parley-dev/parley/internal/yamlerr"
)

// Reserved header fields, in the order parley writes them when it adds
// them to a message. Every other header field is the protocol's payload.
var reserved = []string{
	"id", "from", "to", "cc", "type", "signal", "thread",
	"reply_to", "request_id", "summary", "created", "hops",
}

// IsReserved reports whether key is one of the header fields parley itself
// gives a meaning to (id, from, to, cc, type, signal, thread, reply_to,
// request_id, summary, created, and hops: how many messages in a row the
// sender and the recipient, two programs, have sent each other, which only
// the runner writes).
func IsReserved(key string) bool {
	for _, r := range reserved {
		if r == key {
			return true
		}
	}
	return false
}

// maxDepth bounds the nesting of a header value; deeper headers are refused
// rather than walked.
const maxDepth = 64

// ParseError is the error for a message file that cannot be read as a
// message. It names the file (when known), the line (1-based, counted in the
// file) and the header field concerned (when there is one).
type ParseError struct {
	Path  string // file the message came from; empty when parsed from memory
	Line  int    // 1-based line in the file; 0 when unknown
	Field string // header field concerned; empty when none
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		// A file name may hold anything: a newline in it would split the
		// reason into lines, an escape sequence act on a terminal.
		b.WriteString(visible.Line(e.Path))
		b.WriteString(":")
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(":")
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Errors callers may branch on with errors.Is.
var (
	// ErrEmpty is the error for an empty message file.
	ErrEmpty = errors.New("empty file")
	// ErrBinary is the error for a file that is not UTF-8 text.
	ErrBinary = errors.New("not a text file")
	// ErrNoHeader is the error for a file that has neither frontmatter nor
	// a tag line.
	ErrNoHeader = errors.New("no header: a message starts with a '---' frontmatter block or a [TYPE] tag line")
)

// Message is one parsed message: an ordered header and a body kept byte for
// byte. The header keeps the key order, comments and quoting of the file it
// came from; Bytes writes it back with only the added keys new. A file
// whose first line ends in CRLF is written back with CRLF line endings
// throughout: the lines Bytes adds (the '---' lines, added keys) end as
// the file's own do.
//
// A tag-first message ("[NARRATIVE]" on line one) is written by Bytes as a
// frontmatter envelope (type: NARRATIVE, and the id, from, to, cc and
// created parley adds) followed by the message exactly as it was written.
// Its protocol fields stay in that text, where the protocol put them: a
// protocol field may share a name with a reserved one ("type: VETO" in a
// [PLAYER_TO_GM], "from: gm" in a [NARRATOR_NOTE]) without clashing. Only
// id, to and cc are lifted into the envelope, as addressing.
type Message struct {
	// Tag is the tag of a tag-first message ("NARRATIVE" for a file whose
	// first line is "[NARRATIVE]"); empty for a frontmatter message.
	Tag string
	// Body is everything after the header, byte for byte.
	Body []byte

	header    *yaml.Node // mapping node
	raw       []byte     // header text as written, reusable while rawValid
	rawValid  bool       // raw is a block mapping that still matches header
	added     []string   // keys set since parsing that were not in raw
	firstLine int        // file line of the first header line
	crlf      bool       // the file's first line ends in CRLF: so do the lines Bytes adds

	// A tag-first message keeps its text as written (tag line, fields,
	// body) and is written after a frontmatter envelope; its fields are
	// read from that text.
	tagText      []byte
	payload      *yaml.Node // mapping of the fields after the tag line
	payloadFirst int        // file line of the first field line (the tag is on the line before)
}

// New returns an empty message with the given body.
func New(body []byte) *Message {
	return &Message{
		Body:      body,
		header:    &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"},
		rawValid:  true,
		firstLine: 2,
	}
}

var (
	tagLine = regexp.MustCompile(`^\[([A-Za-z][A-Za-z0-9_-]*)\][ \t]*\r?$`)
	keyLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*[ \t]*:([ \t]|\r?$)`)
)

// Parse reads a message: YAML frontmatter between '---' lines, or a
// tag-first message ("[TAG]" on line one, "key: value" lines, a blank line,
// free text), which is normalised to a header with "type: TAG". Errors are
// *ParseError values naming the line and, where there is one, the field.
func Parse(data []byte) (*Message, error) {
	if len(data) == 0 {
		return nil, &ParseError{Err: ErrEmpty}
	}
	// The first byte that is no text is named: a NUL (valid UTF-8, but
	// no text) or invalid UTF-8, whichever comes first.
	nul, bad := bytes.IndexByte(data, 0), -1
	if !utf8.Valid(data) {
		bad = firstInvalidUTF8(data)
	}
	if nul >= 0 && (bad < 0 || nul < bad) {
		return nil, &ParseError{Line: lineAt(data, nul), Err: fmt.Errorf("%w: NUL byte at offset %d", ErrBinary, nul)}
	}
	if bad >= 0 {
		return nil, &ParseError{Line: lineAt(data, bad), Err: fmt.Errorf("%w: invalid UTF-8 at offset %d", ErrBinary, bad)}
	}
	text := bytes.TrimPrefix(data, bom)
	first, _ := cutLine(text)
	fm, err := SplitFrontmatter(text)
	var m *Message
	switch {
	case err == nil:
		m, err = parseFrontmatter(fm)
	case errors.Is(err, ErrUnclosedFrontmatter):
		return nil, &ParseError{Line: 1, Field: "header", Err: err}
	case tagLine.Match(first):
		m, err = parseTagFirst(text, 1)
	case len(bytes.TrimSpace(text)) == 0:
		return nil, &ParseError{Line: 1, Err: fmt.Errorf("%w: only white space", ErrEmpty)}
	default:
		return nil, &ParseError{Line: 1, Err: ErrNoHeader}
	}
	if err != nil {
		return nil, err
	}
	m.crlf = bytes.HasSuffix(first, []byte("\r"))
	return m, nil
}

// parseFrontmatter parses a frontmatter message: the header, then the
// body as it is written.
func parseFrontmatter(fm Frontmatter) (*Message, error) {
	m, err := newParsed(fm.Header, 2)
	if err != nil {
		return nil, err
	}
	m.Body = fm.Body
	m.attachTagText(fm.BodyLine)
	return m, nil
}

// parseTagFirst parses a tag-first message: text starts with its "[TAG]"
// line, which is line firstLine of the file.
func parseTagFirst(text []byte, firstLine int) (*Message, error) {
	tagLineText, rest := cutLine(text)
	tag := string(tagLine.FindSubmatch(tagLineText)[1])
	payload, body, err := parseFields(rest, firstLine+1)
	if err != nil {
		return nil, err
	}
	m := New(nil)
	m.Tag = tag
	m.tagText = text
	m.payload = payload
	m.payloadFirst = firstLine + 1
	m.Body = body
	m.Set("type", tag)
	// Addressing is parley's business: lift it into the envelope.
	for _, key := range []string{"id", "to", "cc"} {
		if v, ok := lookupIn(payload, key); ok {
			m.SetNode(key, v)
		}
	}
	return m, nil
}

// attachTagText recognises a tag-first message in a frontmatter envelope:
// a body that starts with the "[TYPE]" line of the header's type (a
// delivered copy), or with a "[TAG]" line under a header with no type:
// at all (a person who wrote to: and from: above a tag-first message),
// which is then of type TAG. The body, starting on file line bodyLine,
// becomes the message's tag-first text. A body that does not read as a
// tag-first message is left a plain body.
func (m *Message) attachTagText(bodyLine int) {
	first, _ := cutLine(m.Body)
	if !tagLine.Match(first) {
		return
	}
	tag := string(tagLine.FindSubmatch(first)[1])
	typ, ok := m.Header().Get("type")
	untyped := !m.Header().Has("type")
	if !untyped && (!ok || typ != tag) {
		return
	}
	payload, body, err := parseFields(m.Body[len(first)+eolLen(m.Body[len(first):]):], bodyLine+1)
	if err != nil {
		return
	}
	if untyped {
		m.Set("type", tag)
	}
	m.Tag = tag
	m.tagText = m.Body
	m.payload = payload
	m.payloadFirst = bodyLine + 1
	m.Body = body
}

// parseFields reads the fields of a tag-first message from the text after
// its tag line (which starts on file line firstLine) and returns them with
// the body. The fields are YAML-like lines; they end at a blank line, or at
// the first line that is not a field. A blank line inside a block scalar
// does not end them, nor does one followed only by more fields to the end
// of the message (a list, a blank line, then more fields).
func parseFields(rest []byte, firstLine int) (fields *yaml.Node, body []byte, err error) {
	end, bodyStart := fieldsEnd(rest)
	header := rest[:end]
	if end > 0 && header[end-1] != '\n' {
		// A header that runs to the end of a file without a final line
		// break is read as if it had one: else a block scalar on its last
		// line would read differently once a body follows.
		header = append(header[:end:end], '\n')
	}
	m, err := newParsed(header, firstLine)
	if err != nil {
		lenient, lerr := parseLenient(header, firstLine)
		if lerr != nil {
			return nil, nil, err
		}
		m = lenient
	}
	return m.header, rest[bodyStart:], nil
}

// fieldsEnd finds where the fields of a tag-first message end (end) and its
// body starts (bodyStart), in one pass back and one forward over the lines.
func fieldsEnd(rest []byte) (end, bodyStart int) {
	type line struct {
		start, next int // offsets of the line and of the one after it
		text        []byte
		blank       bool
	}
	var lines []line
	for off := 0; off < len(rest); {
		l, _ := cutLine(rest[off:])
		next := off + len(l) + eolLen(rest[off+len(l):])
		lines = append(lines, line{off, next, l, len(bytes.TrimRight(l, " \t\r")) == 0})
		off = next
	}
	n := len(lines)
	// nextText[i] is the first non-blank line at or after i (n for none);
	// fieldsToEnd[i] says lines i.. are all field-like, to the end.
	nextText := make([]int, n+1)
	fieldsToEnd := make([]bool, n+1)
	nextText[n], fieldsToEnd[n] = n, true
	for i := n - 1; i >= 0; i-- {
		if lines[i].blank {
			nextText[i], fieldsToEnd[i] = nextText[i+1], fieldsToEnd[i+1]
			continue
		}
		nextText[i] = i
		fieldsToEnd[i] = headerLike(lines[i].text, false) && fieldsToEnd[i+1]
	}
	// commentsThenField says whether line i starts a run of comment
	// lines that a field line follows: "[TAG]", "# a note", "to: gm" has
	// its note in the header; "[TAG]", "# A Title", prose is a body.
	commentsThenField := func(i int) bool {
		start := i
		for ; i < n && bytes.HasPrefix(lines[i].text, []byte("#")); i++ {
		}
		return i > start && i < n && keyLine.Match(lines[i].text)
	}
	inBlock := false // the last field line opened or continues a block
	for i, l := range lines {
		if l.blank {
			k := nextText[i+1]
			indented := k < n && (lines[k].text[0] == ' ' || lines[k].text[0] == '\t')
			// A blank line inside a block scalar, or before a last run of
			// fields, does not end the fields.
			onlyFields := k < n && protocolKey.Match(lines[k].text) && fieldsToEnd[k+1]
			if i > 0 && ((inBlock && indented) || onlyFields) {
				continue
			}
			return l.start, l.next
		}
		if !headerLike(l.text, i == 0 && !commentsThenField(i)) {
			return l.start, l.start
		}
		inBlock = l.text[0] == ' ' || l.text[0] == '\t' || blockStart.Match(l.text)
	}
	return len(rest), len(rest)
}

// blockStart matches a field line that opens a block scalar ("summary: |").
var blockStart = regexp.MustCompile(`:[ \t]*[|>][-+0-9]*[ \t]*\r?$`)

// protocolKey matches the start of a field line as protocols write them:
// lower-case snake_case.
var protocolKey = regexp.MustCompile(`^[a-z_][a-z0-9_]*[ \t]*:([ \t]|\r?$)`)

// headerLike reports whether a line of a tag-first message belongs to its
// header: a "key:" line, an indented continuation, a list item or a comment.
func headerLike(l []byte, first bool) bool {
	if keyLine.Match(l) {
		return true
	}
	if first {
		return false
	}
	return l[0] == ' ' || l[0] == '\t' || l[0] == '#' || bytes.HasPrefix(l, []byte("- "))
}

// parseLenient reads a tag-first header that is not valid YAML as plain
// "key: value" lines, each value a string, the way people and models write
// them ("note: Remember: the door is locked").
func parseLenient(header []byte, firstLine int) (*Message, error) {
	m := New(nil)
	m.rawValid = false
	m.firstLine = firstLine
	for i, l := range strings.Split(strings.TrimRight(string(header), "\n"), "\n") {
		l = strings.TrimRight(l, "\r")
		if !keyLine.MatchString(l) {
			return nil, errors.New("not key: value lines")
		}
		k, v, _ := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if _, dup := lookupIn(m.header, k); dup {
			return nil, errors.New("duplicate key")
		}
		m.header.Content = append(m.header.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: i + 1},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(v), Line: i + 1})
	}
	return m, nil
}

// newParsed decodes a YAML header whose first line is firstLine in the file.
func newParsed(header []byte, firstLine int) (m *Message, err error) {
	m = New(nil)
	m.firstLine = firstLine
	if len(bytes.TrimSpace(header)) == 0 {
		return m, nil
	}
	doc, err := decodeOne(header)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Line += firstLine - 1
			return nil, pe
		}
		return nil, yamlError(err, header, firstLine)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return m, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return m, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &ParseError{Line: root.Line + firstLine - 1, Err: errors.New("header is not a set of key: value fields")}
	}
	if err := checkNode(root, firstLine, 0); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(root.Content)/2)
	for i := 0; i < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool") {
			return nil, &ParseError{Line: k.Line + firstLine - 1, Err: errors.New("header keys must be plain names")}
		}
		if seen[k.Value] {
			return nil, &ParseError{Line: k.Line + firstLine - 1, Field: k.Value, Err: errors.New("appears twice in the header")}
		}
		seen[k.Value] = true
	}
	m.header = root
	// A block mapping that starts with a key in the first column can take
	// more keys written before or after it as text; a flow mapping
	// ({a: 1}), a tagged one ("!!map" or "!" on a line of its own) or an
	// indented one has to be written out again. A header with no fields
	// keeps none of its text (blank lines, comments, "~"): keys written
	// beside it could make it invalid YAML.
	m.raw = header
	m.rawValid = root.Style == 0 && root.Column == 1 && len(root.Content) > 0 && root.Content[0].Line == root.Line
	return m, nil
}

// checkNode refuses anchors, aliases and excessive nesting anywhere in a
// header: a message has no use for them, and they are how YAML bombs work.
func checkNode(n *yaml.Node, firstLine, depth int) error {
	if depth > maxDepth {
		return &ParseError{Line: n.Line + firstLine - 1, Err: fmt.Errorf("header nests deeper than %d levels", maxDepth)}
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return &ParseError{Line: n.Line + firstLine - 1, Err: errors.New("YAML anchors and aliases are not allowed in a message header")}
	}
	for _, c := range n.Content {
		if err := checkNode(c, firstLine, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// decodeOne decodes a header that must be one YAML document: a second one
// (after a "--- " line, or a lone carriage return YAML takes for a line
// break) would hold fields the first does not show. Its errors are yaml.v3
// errors, or a *ParseError with a line counted in the header.
func decodeOne(data []byte) (doc yaml.Node, err error) {
	if doc, ok := decodeSimple(data); ok {
		return doc, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot decode header (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return doc, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return doc, nil
	case err != nil:
		return doc, err
	}
	return doc, &ParseError{Line: max(extra.Line, 1), Field: "header", Err: errors.New("a second YAML document starts here: a header is one set of fields (a '---' inside it?)")}
}

// safeUnmarshal decodes YAML and turns a panic in the decoder into an error:
// message headers come from anyone, and bad input must never crash parley.
func safeUnmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot decode header (%v)", r)
		}
	}()
	return yaml.Unmarshal(data, v)
}

// yamlError converts a yaml.v3 error into a *ParseError at the line of
// the file the problem is on (yamlerr.Line), or, for an error yaml.v3
// gives no line (an unknown alias, a decoder's panic), at the first line
// the header stops parsing (badLine).
func yamlError(err error, header []byte, firstLine int) error {
	line, msg := yamlerr.Line(header, err)
	if line == 0 {
		line = max(badLine(header), 1)
	} else {
		msg = yamlerr.Hint(header, line, msg)
	}
	return &ParseError{Line: line + firstLine - 1, Field: "header", Err: errors.New(msg)}
}

// maxBadLineSearch bounds the header size for which badLine searches.
const maxBadLineSearch = 200

// badLine finds the line of a header that YAML refuses: the line after the
// longest run of leading lines that still parses. It returns 0 for
// headers too long to search.
func badLine(header []byte) int {
	lines := bytes.SplitAfter(header, []byte("\n"))
	if len(lines) > maxBadLineSearch {
		return 0
	}
	for k := len(lines) - 1; k >= 0; k-- {
		var doc yaml.Node
		if safeUnmarshal(bytes.Join(lines[:k], nil), &doc) == nil {
			return k + 1
		}
	}
	return 1
}

// Content returns what follows the header in the file Bytes writes: the
// body, or, for a tag-first message, its whole text as written (tag line,
// fields, body).
func (m *Message) Content() []byte {
	if m.tagText != nil {
		return m.tagText
	}
	return m.Body
}

// Set sets a header field to a string value. A key already present keeps
// its place; a new reserved key goes before the keys of the file, in
// parley's order, and any other new key goes after them.
func (m *Message) Set(key, value string) {
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	m.SetNode(key, v)
}

// SetValue sets a header field to the YAML value written as text, as
// ParseValue reads it.
func (m *Message) SetValue(key, text string) {
	m.SetNode(key, ParseValue(text))
}

// ParseValue reads a field's value as YAML written on one line, the way
// `parley send --field` takes it: true is a boolean, 12 an integer, "001"
// (quoted) the string 001, [a, b] a list, {k: v} a mapping. Text that is
// not one such value (a "key: value" sentence, a block, a YAML error), or
// that holds several lines, is kept as a string, as written.
func ParseValue(text string) *yaml.Node {
	var doc yaml.Node
	if strings.Contains(text, "\n") {
		// Lines are kept as lines: read as YAML, a plain scalar over
		// two lines is folded into one ("a\nb" would be "a b").
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text}
	}
	if err := safeUnmarshal([]byte(text), &doc); err == nil && len(doc.Content) == 1 && checkNode(doc.Content[0], 1, 0) == nil {
		v := doc.Content[0]
		flow := v.Style&yaml.FlowStyle != 0
		if v.Kind == yaml.ScalarNode && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 ||
			(v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode) && flow {
			clearPos(v)
			return v
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text}
}

// NewTagFirst returns a tag-first message of type tag, as a person would
// write it: "[TAG]" on line one, the fields set with SetPayload, a blank
// line, then body. Bytes writes it after a frontmatter envelope, like a
// tag-first message that was parsed.
func NewTagFirst(tag string, body []byte) *Message {
	m := New(body)
	m.Tag = tag
	m.payload = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Set("type", tag)
	m.render()
	return m
}

// SetPayload sets a field of a tag-first message made by NewTagFirst to
// the YAML value written as text (as ParseValue reads it). to, cc and id
// address the message: like Parse, it lifts them into the header when the
// header has none. For any other message it sets the header field.
func (m *Message) SetPayload(key, text string) {
	if m.payload == nil {
		m.SetValue(key, text)
		return
	}
	v := ParseValue(text)
	if n, ok := lookupIn(m.payload, key); ok {
		*n = *v
	} else {
		m.payload.Content = append(m.payload.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	if _, ok := lookupIn(m.header, key); !ok && (key == "to" || key == "cc" || key == "id") {
		m.SetNode(key, v)
	}
	m.render()
}

// SetBody replaces the body of a message.
func (m *Message) SetBody(body []byte) {
	m.Body = body
	if m.payload != nil && m.tagText != nil {
		m.render()
	}
}

// render writes the text of a tag-first message from its fields and body.
func (m *Message) render() {
	var b bytes.Buffer
	b.WriteString("[" + m.Tag + "]\n")
	writeMapping(&b, m.payload.Content)
	if len(m.Body) > 0 {
		b.WriteString("\n")
	}
	m.tagText = append(m.eol(b.Bytes()), m.Body...)
}

func clearPos(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearPos(c)
	}
}

// SetNames sets a header field to one name, or to a list of names.
func (m *Message) SetNames(key string, names []string) {
	if len(names) == 1 {
		m.Set(key, names[0])
		return
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, n := range names {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: n})
	}
	m.SetNode(key, seq)
}

// SetNode sets a header field to a YAML node.
func (m *Message) SetNode(key string, v *yaml.Node) {
	c := m.header.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == key {
			c[i+1] = v
			m.rawValid = m.rawValid && m.isAdded(key)
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	m.added = append(m.added, key)
	if !IsReserved(key) {
		m.header.Content = append(m.header.Content, k, v)
		return
	}
	// Reserved keys go before the file's own keys, after earlier
	// additions that come before them in parley's order.
	at := 0
	for i := 0; i+1 < len(c); i += 2 {
		if !m.isAdded(c[i].Value) || !IsReserved(c[i].Value) || ReservedRank(c[i].Value) > ReservedRank(key) {
			break
		}
		at = i + 2
	}
	out := make([]*yaml.Node, 0, len(c)+2)
	out = append(out, c[:at]...)
	out = append(out, k, v)
	out = append(out, c[at:]...)
	m.header.Content = out
}

// Delete removes a header field.
func (m *Message) Delete(key string) {
	c := m.header.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == key {
			m.header.Content = append(c[:i:i], c[i+2:]...)
			if !m.isAdded(key) {
				m.rawValid = false
			}
			return
		}
	}
}

func (m *Message) isAdded(key string) bool {
	for _, a := range m.added {
		if a == key {
			return true
		}
	}
	return false
}

// ReservedRank returns the position of a reserved field in parley's order
// (id first, created last), and len(reserved) for any other field.
func ReservedRank(key string) int {
	for i, r := range reserved {
		if r == key {
			return i
		}
	}
	return len(reserved)
}

// Bytes returns the message as a frontmatter file: "---", the header,
// "---", the body. The header text of a parsed file is reused as written;
// keys added since parsing are written before it (reserved keys) or after it
// (payload keys), so comments, quoting and order survive.
func (m *Message) Bytes() []byte {
	var b bytes.Buffer
	b.Grow(len(m.raw) + len(m.Content()) + 256)
	var added bytes.Buffer // lines parley writes, ended as the file's are
	flush := func() {
		b.Write(m.eol(added.Bytes()))
		added.Reset()
	}
	added.WriteString("---\n")
	if m.rawValid {
		var before, after []*yaml.Node
		c := m.header.Content
		for i := 0; i+1 < len(c); i += 2 {
			if !m.isAdded(c[i].Value) {
				continue
			}
			if IsReserved(c[i].Value) {
				before = append(before, c[i], c[i+1])
			} else {
				after = append(after, c[i], c[i+1])
			}
		}
		writeMapping(&added, before)
		flush()
		b.Write(m.raw)
		if len(m.raw) > 0 && m.raw[len(m.raw)-1] != '\n' {
			added.WriteByte('\n')
		}
		writeMapping(&added, after)
	} else {
		writeMapping(&added, m.header.Content)
	}
	added.WriteString("---\n")
	flush()
	b.Write(m.Content())
	return b.Bytes()
}

// LineEnd is how the lines parley adds to the message end: "\r\n" when
// the file's first line ended so, "\n" otherwise.
func (m *Message) LineEnd() string {
	if m.crlf {
		return "\r\n"
	}
	return "\n"
}

// eol returns text, which parley wrote with LF line endings, with the
// line endings of the message's file: CRLF when its first line ended so.
func (m *Message) eol(text []byte) []byte {
	if !m.crlf {
		return text
	}
	return bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))
}

// writeMapping writes key/value node pairs as a block mapping: plain
// "key: value" lines where neither the key nor the value needs quoting or
// carries a comment, YAML's own encoding otherwise.
func writeMapping(b *bytes.Buffer, pairs []*yaml.Node) {
	for i := 0; i+1 < len(pairs); i += 2 {
		k, v := pairs[i], pairs[i+1]
		if plainSafe(k) && plainSafe(v) {
			b.WriteString(k.Value)
			b.WriteString(": ")
			b.WriteString(v.Value)
			b.WriteByte('\n')
			continue
		}
		enc := yaml.NewEncoder(b)
		enc.SetIndent(2)
		_ = enc.Encode(&yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{k, v}}) // encoding a well-formed node into a buffer cannot fail
		_ = enc.Close()
	}
}

// isPlainToken reports whether s is a letter or digit followed by letters,
// digits and _ . + - (what needs no quoting in YAML, read as a string or
// not).
func isPlainToken(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isTimestamp reports whether s is an RFC 3339 time as YAML writes it:
// 2026-11-21T10:15:00Z, with optional fractional seconds and an offset in
// place of Z.
func isTimestamp(s string) bool {
	const head = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(head)+1 {
		return false
	}
	for i := 0; i < len(head); i++ {
		if !matchDigit(s[i], head[i]) {
			return false
		}
	}
	rest := s[len(head):]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	if rest == "Z" {
		return true
	}
	const offset = "+dd:dd"
	if len(rest) != len(offset) || rest[0] != '+' && rest[0] != '-' {
		return false
	}
	for i := 1; i < len(offset); i++ {
		if !matchDigit(rest[i], offset[i]) {
			return false
		}
	}
	return true
}

// matchDigit matches c against a pattern byte: 'd' is any digit, any
// other byte itself.
func matchDigit(c, pattern byte) bool {
	if pattern == 'd' {
		return '0' <= c && c <= '9'
	}
	return c == pattern
}

// plainSafe reports whether a node can be written as "key: value" by hand:
// a string scalar made of name characters that YAML reads back as the same
// string.
func plainSafe(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return false
	}
	if !isPlainToken(n.Value) && !isTimestamp(n.Value) {
		return false
	}
	switch n.Tag {
	case "!!str":
		return readsAsString(n.Value)
	case "!!int", "!!bool", "!!float", "!!timestamp":
		return n.Style == 0
	}
	return false
}

// readsAsString reports whether a plain scalar made of name characters is
// read back by YAML as a string (and not as a boolean, null or number).
// Timestamps count as strings: parley reads them as text.
func readsAsString(v string) bool {
	if v != "" && isLetter(v[0]) && !strings.Contains(v, "_") {
		// A word: no number but YAML's (and Go's) inf and nan starts with
		// a letter. Decided without parsing, which allocates an error for
		// every value that is not a number.
		for _, w := range [...]string{"true", "false", "yes", "no", "y", "n", "on", "off", "null", "inf", "infinity", "nan"} {
			if equalFoldASCII(v, w) {
				return false
			}
		}
		return true
	}
	if !mayBeNumber(v) {
		return true // ids and times: digits joined by - and :
	}
	return parsesAsString(v)
}

// parsesAsString is readsAsString by its definition: not one of YAML's
// words for true, false or null, and no number strconv reads.
func parsesAsString(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "y", "n", "on", "off", "null":
		return false
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64); err == nil {
		return false
	}
	if _, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 0, 64); err == nil {
		return false
	}
	return true
}

// equalFoldASCII reports whether v is w, a lower-case ASCII word, in any
// case of its ASCII letters (unlike strings.EqualFold, 'ſ' is not 's', as
// for strings.ToLower).
func equalFoldASCII(v, w string) bool {
	if len(v) != len(w) {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// mayBeNumber reports whether v, its underscores left out, could be read by
// strconv.ParseFloat or ParseInt: false when it holds a ':' or a sign that
// neither starts it nor follows an exponent's letter, as in an id
// (20261127-050000-000-gm) or a time.
func mayBeNumber(v string) bool {
	var prev byte // the last character before this one that is not _
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '_':
			continue
		case ':':
			return false
		case '+', '-':
			if prev != 0 && prev != 'e' && prev != 'E' && prev != 'p' && prev != 'P' {
				return false
			}
		}
		prev = c
	}
	return true
}

// cutLine returns the first line of text without its line ending, and the
// text after the line ending.
func cutLine(text []byte) (line, rest []byte) {
	i := bytes.IndexByte(text, '\n')
	if i < 0 {
		return text, nil
	}
	return text[:i], text[i+1:]
}

// eolLen is the length of the line ending at the start of text (0 or 1).
func eolLen(text []byte) int {
	if len(text) > 0 && text[0] == '\n' {
		return 1
	}
	return 0
}

func lineAt(data []byte, offset int) int {
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}
