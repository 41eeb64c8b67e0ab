package mailbox

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// split is what a SplitFrontmatter test expects: the header and the body
// as text, the line the body starts on, and the error. The offsets are
// checked against the header and the body by checkSplit.
type split struct {
	Header, Body string
	BodyLine     int
	Err          error
}

func TestSplitFrontmatter(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want split
	}{
		{"plain", "---\nfrom: alice\nto: bob\n---\nHello.\n",
			split{Header: "from: alice\nto: bob\n", Body: "Hello.\n", BodyLine: 5}},
		{"CRLF keeps its line endings", "---\r\nfrom: alice\r\n---\r\nline one\r\nline two\r\n",
			split{Header: "from: alice\r\n", Body: "line one\r\nline two\r\n", BodyLine: 4}},
		{"byte order mark", "\uFEFF---\nfrom: alice\n---\nHello.\n",
			split{Header: "from: alice\n", Body: "Hello.\n", BodyLine: 4}},
		{"byte order mark and CRLF", "\uFEFF---\r\nfrom: alice\r\n...\r\nHello.\r\n",
			split{Header: "from: alice\r\n", Body: "Hello.\r\n", BodyLine: 4}},
		{"closed by ...", "---\nfrom: alice\n...\nHello.\n",
			split{Header: "from: alice\n", Body: "Hello.\n", BodyLine: 4}},
		{"empty header", "---\n---\nHello.\n",
			split{Header: "", Body: "Hello.\n", BodyLine: 3}},
		{"empty body", "---\nfrom: alice\n---\n",
			split{Header: "from: alice\n", Body: "", BodyLine: 4}},
		{"closing line without a line break", "---\nfrom: alice\n---",
			split{Header: "from: alice\n", Body: "", BodyLine: 4}},
		{"--- inside the body", "---\nfrom: alice\n---\nintro\n---\nmore\n...\n",
			split{Header: "from: alice\n", Body: "intro\n---\nmore\n...\n", BodyLine: 4}},
		{"trailing spaces and tabs on the delimiters", "--- \t\nfrom: alice\n---  \nHello.\n",
			split{Header: "from: alice\n", Body: "Hello.\n", BodyLine: 4}},
		{"trailing spaces before CRLF", "---  \r\nfrom: alice\r\n... \r\nHello.\r\n",
			split{Header: "from: alice\r\n", Body: "Hello.\r\n", BodyLine: 4}},
		{"body without a final line break", "---\nfrom: alice\n---\nHello.",
			split{Header: "from: alice\n", Body: "Hello.", BodyLine: 4}},
		{"blank lines kept in the body", "---\nfrom: alice\n---\n\n\nHello.\n",
			split{Header: "from: alice\n", Body: "\n\nHello.\n", BodyLine: 4}},
		{"a longer rule is not a delimiter", "---\nfrom: alice\n----\nx\n---\nHello.\n",
			split{Header: "from: alice\n----\nx\n", Body: "Hello.\n", BodyLine: 6}},

		{"unclosed", "---\nfrom: alice\n\nHello.\n", split{Err: ErrUnclosedFrontmatter}},
		{"unclosed, opening line alone", "---", split{Err: ErrUnclosedFrontmatter}},
		{"unclosed, opening line and a line break", "---\n", split{Err: ErrUnclosedFrontmatter}},
		{"... opens nothing", "...\nfrom: alice\n...\n", split{Err: ErrNoFrontmatter}},
		{"empty", "", split{Err: ErrNoFrontmatter}},
		{"tag-first", "[NARRATIVE]\nscene: 5\n\nThe door creaks open.\n", split{Err: ErrNoFrontmatter}},
		{"a blank line before the opening line", "\n---\nfrom: alice\n---\n", split{Err: ErrNoFrontmatter}},
		{"an indented opening line", " ---\nfrom: alice\n---\n", split{Err: ErrNoFrontmatter}},
		{"a longer rule opens nothing", "----\nfrom: alice\n----\n", split{Err: ErrNoFrontmatter}},
		{"an indented closing line closes nothing", "---\nfrom: alice\n ---\n", split{Err: ErrUnclosedFrontmatter}},
		{"a lone carriage return does not end a line", "---\rfrom: alice\r---\r", split{Err: ErrNoFrontmatter}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := SplitFrontmatter([]byte(tt.in))
			got := split{Header: string(fm.Header), Body: string(fm.Body), BodyLine: fm.BodyLine, Err: err}
			if diff := cmp.Diff(tt.want, got, cmpErrorsIs); diff != "" {
				t.Fatalf("SplitFrontmatter(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if err == nil {
				checkSplit(t, []byte(tt.in), fm)
			}
		})
	}
}

// cmpErrorsIs compares errors with errors.Is.
var cmpErrorsIs = cmp.Comparer(func(a, b error) bool {
	return errors.Is(a, b) || errors.Is(b, a)
})

// checkSplit checks what SplitFrontmatter promises of a frontmatter it
// found in data: the offsets give the header and the body, the opening
// line is "---", the closing line is the first "---" or "..." after it,
// and the body starts on BodyLine.
func checkSplit(t *testing.T, data []byte, fm Frontmatter) {
	t.Helper()
	if fm.HeaderStart < 0 || fm.HeaderStart > fm.HeaderEnd || fm.HeaderEnd >= fm.BodyStart || fm.BodyStart > len(data) {
		t.Fatalf("SplitFrontmatter(%q): offsets %d, %d, %d out of order", data, fm.HeaderStart, fm.HeaderEnd, fm.BodyStart)
	}
	if !bytes.Equal(fm.Header, data[fm.HeaderStart:fm.HeaderEnd]) || !bytes.Equal(fm.Body, data[fm.BodyStart:]) {
		t.Fatalf("SplitFrontmatter(%q): header %q and body %q, offsets %d:%d and %d:; want the same text", data, fm.Header, fm.Body, fm.HeaderStart, fm.HeaderEnd, fm.BodyStart)
	}
	if cap(fm.Header) != len(fm.Header) {
		t.Fatalf("SplitFrontmatter(%q): header capacity %d, want %d: an append would write over the closing line", data, cap(fm.Header), len(fm.Header))
	}
	opening := bytes.TrimPrefix(data[:fm.HeaderStart], bom)
	if !bytes.HasSuffix(opening, []byte("\n")) || !isDelimiter(opening[:len(opening)-1], "---") {
		t.Fatalf("SplitFrontmatter(%q): opening line %q, want \"---\" and a line break", data, opening)
	}
	closing := bytes.TrimSuffix(data[fm.HeaderEnd:fm.BodyStart], []byte("\n"))
	if !isDelimiter(closing, "---") && !isDelimiter(closing, "...") || bytes.Contains(closing, []byte("\n")) {
		t.Fatalf("SplitFrontmatter(%q): closing line %q, want \"---\" or \"...\"", data, closing)
	}
	if len(fm.Header) > 0 && fm.Header[len(fm.Header)-1] != '\n' {
		t.Fatalf("SplitFrontmatter(%q): header %q does not end its last line", data, fm.Header)
	}
	for _, l := range bytes.SplitAfter(fm.Header, []byte("\n")) {
		if l := bytes.TrimSuffix(l, []byte("\n")); isDelimiter(l, "---") || isDelimiter(l, "...") {
			t.Fatalf("SplitFrontmatter(%q): header %q holds a closing line %q", data, fm.Header, l)
		}
	}
	if want := bytes.Count(data[:fm.HeaderEnd], []byte("\n")) + 2; fm.BodyLine != want {
		t.Fatalf("SplitFrontmatter(%q): body line %d, want %d (the line after the closing one)", data, fm.BodyLine, want)
	}
}
