package mailbox

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		text     string // Answer.Text
		unfenced bool
		tag      string // the message's type; "" for none
		noHeader bool   // ErrNoHeader
		late     LateHeader
	}{
		{name: "frontmatter", in: "---\nto: ann\n---\nHi.\n", text: "---\nto: ann\n---\nHi.\n"},
		{name: "fenced frontmatter", in: "```markdown\n---\nto: ann\n---\nHi.\n```", text: "---\nto: ann\n---\nHi.\n", unfenced: true},
		{name: "fenced tag", in: "```\n[NARRATIVE]\n\nRain.\n```\n", text: "[NARRATIVE]\n\nRain.\n", unfenced: true, tag: "NARRATIVE"},
		{name: "fenced CRLF", in: "```md\r\n[NARRATIVE]\r\n\r\nRain.\r\n```\r\n", text: "[NARRATIVE]\r\n\r\nRain.\r\n", unfenced: true, tag: "NARRATIVE"},
		// A fence that holds no message is a plain answer, fence and all.
		{name: "fenced code", in: "```go\nx := 1\n```\n", text: "```go\nx := 1\n```\n", noHeader: true},
		{name: "fence and more", in: "```go\nx := 1\n``` and more", text: "```go\nx := 1\n``` and more", noHeader: true},
		{name: "fence info of two words", in: "``` two words\n[NARRATIVE]\n\nx\n```", text: "``` two words\n[NARRATIVE]\n\nx\n```", noHeader: true,
			late: LateHeader{Line: 2, Text: "[NARRATIVE]"}},
		{name: "plain", in: "Tor nods.\n", text: "Tor nods.\n", noHeader: true},
		{name: "chatter before a tag", in: "I'll answer as Tor.\n\n[PLAYER_TO_GM]\ntype: ACTION\n\nTor lights a torch.\n",
			text: "I'll answer as Tor.\n\n[PLAYER_TO_GM]\ntype: ACTION\n\nTor lights a torch.\n", noHeader: true,
			late: LateHeader{Line: 3, Text: "[PLAYER_TO_GM]"}},
		{name: "chatter before a fenced header", in: "Here it is:\n```\n---\nto: gm\n---\nTor listens.\n```\n",
			text: "Here it is:\n```\n---\nto: gm\n---\nTor listens.\n```\n", noHeader: true,
			late: LateHeader{Line: 3, Text: "---"}},
		{name: "chatter before a tag with bad fields", in: "Here:\n[PLAYER_TO_GM]\ntype: [ACTION\n\nTor.\n", text: "Here:\n[PLAYER_TO_GM]\ntype: [ACTION\n\nTor.\n", noHeader: true,
			late: LateHeader{Line: 2, Text: "[PLAYER_TO_GM]"}},
		// A rule is no header: nothing closes it, or what it holds is no header.
		{name: "rules", in: "Notes.\n\n---\n\nMore.\n\n---\n\nEnd.\n", text: "Notes.\n\n---\n\nMore.\n\n---\n\nEnd.\n", noHeader: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAnswer([]byte(tc.in))
			if got := string(a.Text); got != tc.text {
				t.Errorf("ParseAnswer(%q).Text = %q, want %q", tc.in, got, tc.text)
			}
			if a.Unfenced != tc.unfenced {
				t.Errorf("ParseAnswer(%q).Unfenced = %v, want %v", tc.in, a.Unfenced, tc.unfenced)
			}
			if got := errors.Is(err, ErrNoHeader); got != tc.noHeader {
				t.Fatalf("ParseAnswer(%q) error = %v, want ErrNoHeader %v", tc.in, err, tc.noHeader)
			}
			if !tc.noHeader && err != nil {
				t.Fatalf("ParseAnswer(%q) error = %v", tc.in, err)
			}
			if tc.tag != "" && a.Message.Tag != tc.tag {
				t.Errorf("ParseAnswer(%q).Message.Tag = %q, want %q", tc.in, a.Message.Tag, tc.tag)
			}
			if a.Late != tc.late {
				t.Errorf("ParseAnswer(%q).Late = %+v, want %+v", tc.in, a.Late, tc.late)
			}
		})
	}
}

// Bug: a fenced message whose header does not parse was refused as the
// header's error with the line counted from inside the fence (3, where
// the answer as written has it on line 4).
func TestParseAnswerFencedBadHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"---\nto: ann\nsummary: Status: all green\n---\nHi.\n", 3},
		{"```markdown\n---\nto: ann\nsummary: Status: all green\n---\nHi.\n```\n", 4},
		{"\n\n```\n---\nto: ann\nsummary: Status: all green\n---\nHi.\n```", 6},
		{"```\r\n---\r\nto: ann\r\nsummary: Status: all green\r\n---\r\nHi.\r\n```\r\n", 4},
	} {
		a, err := ParseAnswer([]byte(tc.in))
		var pe *ParseError
		if !errors.As(err, &pe) || errors.Is(err, ErrNoHeader) || pe.Field != "header" {
			t.Errorf("ParseAnswer(%q) error = %v, want the header's own error", tc.in, err)
			continue
		}
		if pe.Line != tc.line {
			t.Errorf("ParseAnswer(%q) error line = %d, want %d (%v)", tc.in, pe.Line, tc.line, err)
		}
		if want := "---\n"; !bytes.HasPrefix(bytes.ReplaceAll(a.Text, []byte("\r"), nil), []byte(want)) {
			t.Errorf("ParseAnswer(%q).Text = %q, want the message out of its fence", tc.in, a.Text)
		}
	}
}

func TestLateHeaderString(t *testing.T) {
	for _, tc := range []struct {
		l    LateHeader
		want string
	}{
		{LateHeader{Line: 3, Text: "[PLAYER_TO_GM]"}, "line 3 is a [PLAYER_TO_GM] tag line"},
		{LateHeader{Line: 2, Text: "---"}, "a frontmatter header begins at line 2"},
	} {
		if got := tc.l.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.l, got, tc.want)
		}
	}
}

// FuzzParseAnswer: what was written is taken out of its fence, never
// changed: the text parley sends is a part of the answer as written, and
// a late header is a line of it.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{"```\nx\n```", "```md\n---\nto: a\n---\nb\n```\n", "plain", "```", "```\n```", "\n```\n\n```\n", "a\n[T]\n\nb\n", "a\n---\nto: b\n---\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, _ := ParseAnswer([]byte(s))
		if !bytes.Contains([]byte(s), a.Text) {
			t.Fatalf("ParseAnswer(%q).Text = %q, not a part of it", s, a.Text)
		}
		if a.Late.Line > 0 && !bytes.Contains(a.Text, []byte(a.Late.Text)) {
			t.Fatalf("ParseAnswer(%q).Late = %+v, not a line of it", s, a.Late)
		}
	})
}
