package mailbox

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsed is what a caller reads back from a message: the tag, the
// protocol's field keys in file order (the header's, or those after the
// tag line) with their decoded values, and the body.
type parsed struct {
	Tag    string
	Keys   []string
	Values map[string]any
	Body   string
}

func summarize(m *Message) parsed {
	p := parsed{Tag: m.Tag, Keys: m.Payload().Keys(), Values: map[string]any{}, Body: string(m.Body)}
	for _, k := range p.Keys {
		n, ok := lookupIn(m.payload, k)
		if !ok {
			n, _ = lookupIn(m.header, k)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			v = n.Value
		}
		p.Values[k] = v
	}
	return p
}

func mustParse(t *testing.T, in string) *Message {
	t.Helper()
	m, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", in, err)
	}
	return m
}

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want parsed
	}{
		{
			name: "envelope",
			in: "---\nfrom: alice\nto: [bob, carol]\ntype: review_verdict\nsignal: pass\ncritical_count: 0\nurgent: false\n---\n" +
				"# Verdict\n\nLooks good.\n",
			want: parsed{
				Keys: []string{"from", "to", "type", "signal", "critical_count", "urgent"},
				Values: map[string]any{
					"from": "alice", "to": []any{"bob", "carol"}, "type": "review_verdict",
					"signal": "pass", "critical_count": 0, "urgent": false,
				},
				Body: "# Verdict\n\nLooks good.\n",
			},
		},
		{
			name: "body with --- lines is kept whole",
			in:   "---\nfrom: alice\n---\nintro\n---\nmore: text\n---\n",
			want: parsed{
				Keys:   []string{"from"},
				Values: map[string]any{"from": "alice"},
				Body:   "intro\n---\nmore: text\n---\n",
			},
		},
		{
			name: "CRLF line endings",
			in:   "---\r\nfrom: alice\r\nsummary: two lines\r\n---\r\nline one\r\nline two\r\n",
			want: parsed{
				Keys:   []string{"from", "summary"},
				Values: map[string]any{"from": "alice", "summary": "two lines"},
				Body:   "line one\r\nline two\r\n",
			},
		},
		{
			name: "no trailing newline",
			in:   "---\nfrom: alice\n---\nlast line",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: "last line"},
		},
		{
			name: "empty body",
			in:   "---\nfrom: alice\n---\n",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: ""},
		},
		{
			name: "closing line at end of file",
			in:   "---\nfrom: alice\n---",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: ""},
		},
		{
			name: "closed by ...",
			in:   "---\nfrom: alice\n...\nbody\n",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: "body\n"},
		},
		{
			name: "body white space and unicode byte for byte",
			in:   "---\nfrom: alice\n---\n\n  indented\t\ntrailing   \n\n\nüñï — ✓\n\n",
			want: parsed{
				Keys:   []string{"from"},
				Values: map[string]any{"from": "alice"},
				Body:   "\n  indented\t\ntrailing   \n\n\nüñï — ✓\n\n",
			},
		},
		{
			name: "empty header",
			in:   "---\n---\nbody\n",
			want: parsed{Keys: []string{}, Values: map[string]any{}, Body: "body\n"},
		},
		{
			name: "comments only",
			in:   "---\n# nothing yet\n---\nbody\n",
			want: parsed{Keys: []string{}, Values: map[string]any{}, Body: "body\n"},
		},
		{
			name: "byte order mark",
			in:   "\uFEFF---\nfrom: alice\n---\nbody\n",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: "body\n"},
		},
		{
			name: "delimiters with trailing blanks",
			in:   "--- \nfrom: alice\n---\t\nbody\n",
			want: parsed{Keys: []string{"from"}, Values: map[string]any{"from": "alice"}, Body: "body\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, summarize(m)); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseTagFirst(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want parsed
	}{
		{
			name: "tag and free text",
			in:   "[NARRATIVE]\n\nThe door creaks open.\n\nRain hammers the roof.\n",
			want: parsed{
				Tag:    "NARRATIVE",
				Keys:   []string{},
				Values: map[string]any{},
				Body:   "The door creaks open.\n\nRain hammers the roof.\n",
			},
		},
		{
			name: "fields then free text",
			in: "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_slug: the-warehouse-heist\n\n" +
				"## Scene\nDark.\n\n## Request\nReact.\n",
			want: parsed{
				Tag:  "GM_TO_PLAYER",
				Keys: []string{"request_type", "scene_slug"},
				Values: map[string]any{
					"request_type": "QUICK_REACTION",
					"scene_slug":   "the-warehouse-heist",
				},
				Body: "## Scene\nDark.\n\n## Request\nReact.\n",
			},
		},
		{
			name: "fields only",
			in:   "[DICE_RESULT]\ncharacter: corwin-voss\ncheck: Stealth\nroll: \"1d20+5 = [8]+5 = 13\"\ndc: 12\nresult: success\n",
			want: parsed{
				Tag:  "DICE_RESULT",
				Keys: []string{"character", "check", "roll", "dc", "result"},
				Values: map[string]any{
					"character": "corwin-voss", "check": "Stealth",
					"roll": "1d20+5 = [8]+5 = 13", "dc": 12, "result": "success",
				},
			},
		},
		{
			name: "block scalar with a blank line",
			in: "[SESSION_END]\nsummary: |\n  The party found the smugglers.\n\n  Then they went down.\n" +
				"state_saved: true\n\nSee you next week.\n",
			want: parsed{
				Tag:  "SESSION_END",
				Keys: []string{"summary", "state_saved"},
				Values: map[string]any{
					"summary":     "The party found the smugglers.\n\nThen they went down.\n",
					"state_saved": true,
				},
				Body: "See you next week.\n",
			},
		},
		{
			name: "nested list",
			in: "[ASK_PLAYER]\nquestion: \"Which character are you playing this session?\"\nheader: \"Character\"\noptions:\n" +
				"  - label: \"Corwin Voss\"\n    description: \"Human rogue, haunted by his past\"\n" +
				"  - label: \"New character\"\n    description: \"Create a new character for this campaign\"\n",
			want: parsed{
				Tag:  "ASK_PLAYER",
				Keys: []string{"question", "header", "options"},
				Values: map[string]any{
					"question": "Which character are you playing this session?",
					"header":   "Character",
					"options": []any{
						map[string]any{"label": "Corwin Voss", "description": "Human rogue, haunted by his past"},
						map[string]any{"label": "New character", "description": "Create a new character for this campaign"},
					},
				},
			},
		},
		{
			name: "lenient lines that are not YAML",
			in:   "[NARRATOR_NOTE]\nfrom: gm\nnote: Remember: the door is locked\n\nbody\n",
			want: parsed{
				Tag:  "NARRATOR_NOTE",
				Keys: []string{"from", "note"},
				Values: map[string]any{
					"from": "gm", "note": "Remember: the door is locked",
				},
				Body: "body\n",
			},
		},
		{
			name: "type that agrees with the tag",
			in:   "[NOTE]\ntype: NOTE\nfrom: gm\n\nbody\n",
			want: parsed{
				Tag:    "NOTE",
				Keys:   []string{"type", "from"},
				Values: map[string]any{"type": "NOTE", "from": "gm"},
				Body:   "body\n",
			},
		},
		{
			name: "no header and no blank line",
			in:   "[NARRATIVE]\nThe rain falls.\nIt does not stop.\n",
			want: parsed{
				Tag:    "NARRATIVE",
				Keys:   []string{},
				Values: map[string]any{},
				Body:   "The rain falls.\nIt does not stop.\n",
			},
		},
		{
			name: "header ended by free text without a blank line",
			in:   "[NOTE]\nfrom: gm\nWatch the left flank.\n",
			want: parsed{
				Tag:    "NOTE",
				Keys:   []string{"from"},
				Values: map[string]any{"from": "gm"},
				Body:   "Watch the left flank.\n",
			},
		},
		{
			name: "a URL is not a field",
			in:   "[NOTE]\nhttps://example.com/x\n",
			want: parsed{
				Tag:    "NOTE",
				Keys:   []string{},
				Values: map[string]any{},
				Body:   "https://example.com/x\n",
			},
		},
		{
			// Read as if the file ended with a line break, as Bytes writes it.
			name: "block scalar without a final line break",
			in:   "[SESSION_END]\nsummary: |\n  The end.",
			want: parsed{
				Tag:    "SESSION_END",
				Keys:   []string{"summary"},
				Values: map[string]any{"summary": "The end.\n"},
			},
		},
		{
			name: "tag alone",
			in:   "[PING]",
			want: parsed{Tag: "PING", Keys: []string{}, Values: map[string]any{}},
		},
		{
			name: "CRLF",
			in:   "[NOTE]\r\nfrom: gm\r\n\r\nbody\r\n",
			want: parsed{
				Tag:    "NOTE",
				Keys:   []string{"from"},
				Values: map[string]any{"from": "gm"},
				Body:   "body\r\n",
			},
		},
		{
			// The protocol's own type field is not the message type.
			name: "a field named like a reserved one",
			in:   "[PLAYER_TO_GM]\ntype: VETO\ncharacter: tilda-brannock\n\nThis touches my backstory.\n",
			want: parsed{
				Tag:    "PLAYER_TO_GM",
				Keys:   []string{"type", "character"},
				Values: map[string]any{"type": "VETO", "character": "tilda-brannock"},
				Body:   "This touches my backstory.\n",
			},
		},
		{
			name: "fields after a blank line to the end",
			in: "[AWAIT_PLAYERS]\ncharacters:\n  - name: tilda-brannock\n    request: \"Brief reaction.\"\n\n" +
				"scene_number: 005\nscene_slug: the-warehouse-heist\n",
			want: parsed{
				Tag:  "AWAIT_PLAYERS",
				Keys: []string{"characters", "scene_number", "scene_slug"},
				Values: map[string]any{
					"characters":   []any{map[string]any{"name": "tilda-brannock", "request": "Brief reaction."}},
					"scene_number": 5, "scene_slug": "the-warehouse-heist",
				},
			},
		},
		{
			name: "an indented body is not a field",
			in:   "[PLAYER_TO_PLAYER]\ncharacter: tilda\n\n    *whispers* Watch the left.\n",
			want: parsed{
				Tag:    "PLAYER_TO_PLAYER",
				Keys:   []string{"character"},
				Values: map[string]any{"character": "tilda"},
				Body:   "    *whispers* Watch the left.\n",
			},
		},
		{
			name: "a body line that looks like a field",
			in:   "[PLAYER_TO_GM]\ncharacter: tilda\n\nAnswer: I attack.\n",
			want: parsed{
				Tag:    "PLAYER_TO_GM",
				Keys:   []string{"character"},
				Values: map[string]any{"character": "tilda"},
				Body:   "Answer: I attack.\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q) = %v, want no error", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, summarize(m)); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if typ, _ := m.Header().Get("type"); typ != tt.want.Tag {
				t.Errorf("Parse(%q): type = %q, want the tag %q", tt.in, typ, tt.want.Tag)
			}
			if got := string(m.Content()); got != tt.in {
				t.Errorf("Parse(%q): Content() = %q, want the message as written", tt.in, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		line  int
		field string
		is    error // a sentinel the error must match, if any
	}{
		{name: "empty file", in: "", line: 0, is: ErrEmpty},
		{name: "white space only", in: " \n\t\n\n", line: 1, is: ErrEmpty},
		{name: "NUL byte", in: "---\nfrom: alice\n---\nbin\x00ary\n", line: 4, is: ErrBinary},
		{name: "invalid UTF-8", in: "---\nfrom: alice\nsummary: caf\xe9\n---\n", line: 3, is: ErrBinary},
		// The first byte that is not text is named, not a NUL after it.
		{name: "invalid UTF-8 before a NUL", in: "\xff\xfe\n---\n\x00\n", line: 1, is: ErrBinary},
		{name: "no header", in: "Hello Bob,\n\nsee you.\n", line: 1, is: ErrNoHeader},
		{name: "header after a blank first line", in: "\n---\nfrom: alice\n---\n", line: 1, is: ErrNoHeader},
		{name: "frontmatter never closed", in: "---\nfrom: alice\n\nHello.\n", line: 1, field: "header"},
		{name: "opening line only", in: "---\n", line: 1, field: "header"},
		{name: "unclosed flow list", in: "---\nfrom: alice\nto: [bob\nsummary: hi\n---\n", line: 3, field: "header"},
		{name: "bad indentation", in: "---\nfrom: alice\n  to: bob\n---\n", line: 3, field: "header"},
		{name: "list item after keys", in: "---\nfrom: alice\nto: bob\n- carol\n---\n", line: 4, field: "header"},
		{name: "unterminated quote", in: "---\nfrom: alice\nsummary: 'oops\n---\n", line: 3, field: "header"},
		{name: "tab indentation", in: "---\nfrom: alice\nto:\n\t- bob\n---\n", line: 4, field: "header"},
		{name: "header is a list", in: "---\n- from\n- alice\n---\n", line: 2},
		{name: "header is text", in: "---\n# who\njust some words\n---\n", line: 3},
		{name: "key is not a name", in: "---\nfrom: alice\n? [a, b]\n: c\n---\n", line: 3},
		{name: "duplicate key", in: "---\nfrom: alice\nto: bob\nfrom: mallory\n---\n", line: 4, field: "from"},
		{name: "anchor", in: "---\nfrom: alice\nbase: &b bob\n---\n", line: 3},
		{name: "alias", in: "---\nto: [bob]\ncc: *x\n---\n", line: 3, field: "header"},
		{name: "anchor and alias", in: "---\nfrom: alice\nto: &who bob\ncc: *who\n---\n", line: 3},
		{name: "merge key", in: "---\nbase: &b {x: 1}\nmore:\n  <<: *b\n---\n", line: 2},
		{name: "too deep", in: "---\nfrom: alice\ndeep: " + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + "\n---\n", line: 3},
		{name: "a second YAML document", in: "---\nfrom: alice\n--- to: bob\n---\n", line: 3, field: "header"},
		{name: "tag-first duplicate key", in: "[NOTE]\nfrom: gm\nfrom: alice\n\nbody\n", line: 3, field: "from"},
		{name: "tag-first YAML error", in: "[NOTE]\noptions:\n  - a\n  b: c\n\nbody\n", line: 4, field: "header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.in, summarize(m))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %T %v, want a *ParseError", tt.in, err, err)
			}
			type where struct {
				Line  int
				Field string
			}
			if diff := cmp.Diff(where{tt.line, tt.field}, where{pe.Line, pe.Field}); diff != "" {
				t.Errorf("Parse(%q) = %v; line and field mismatch (-want +got):\n%s", tt.in, err, diff)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse(%q) = %v, want an error matching %v", tt.in, err, tt.is)
			}
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	// The deepest value allowed nests maxDepth levels below the header.
	in := "---\ndeep: " + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + "\n---\n"
	if _, err := Parse([]byte(in)); err != nil {
		t.Errorf("Parse(%d nested lists) = %v, want no error", maxDepth, err)
	}
}

// aliasBomb returns a "billion laughs" header: each level refers nine times
// to the one before, so expanding the last key makes 9^levels strings.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		ref := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "lol%d: &l%d [%s]\n", i, i, strings.Repeat(ref+", ", 8)+ref)
	}
	return b.String()
}

func TestParseAliasBomb(t *testing.T) {
	header := aliasBomb(10) // 9^10 strings if expanded
	for _, in := range []string{
		"---\n" + header + "---\nbody\n",
		"[NOTE]\n" + header + "\nbody\n",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := Parse([]byte(in))
		var out []byte
		if err == nil {
			out = m.Bytes()
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("Parse(alias bomb) allocated %d bytes, want it refused or kept as text without expanding", alloc)
		}
		if strings.HasPrefix(in, "---") {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != 2 {
				t.Errorf("Parse(frontmatter alias bomb) = %v, want a *ParseError on line 2", err)
			}
			continue
		}
		// A tag-first header may be read leniently, as text: then the
		// aliases stay text and are never expanded.
		if err == nil {
			if got, _ := m.Payload().Get("lol9"); got != "&l9 ["+strings.Repeat("*l8, ", 8)+"*l8]" {
				t.Errorf("Parse(tag-first alias bomb).Get(lol9) = %q, want the text as written", got)
			}
			if len(out) > 2*len(in) {
				t.Errorf("Parse(tag-first alias bomb).Bytes() has %d bytes, want about %d", len(out), len(in))
			}
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	tests := []struct {
		err  *ParseError
		want string
	}{
		{&ParseError{Path: "mailboxes/alice/outbox/x.md", Line: 3, Field: "to", Err: errors.New("must be a name")},
			"mailboxes/alice/outbox/x.md:3: to: must be a name"},
		{&ParseError{Line: 4, Field: "header", Err: errors.New("bad")}, "4: header: bad"},
		{&ParseError{Path: "x.md", Err: ErrEmpty}, "x.md: empty file"},
		{&ParseError{Err: ErrEmpty}, "empty file"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("(%#v).Error() = %q, want %q", *tt.err, got, tt.want)
		}
	}
}

const handHeader = "# Review of the parser.\n" +
	"to: bob   # the reviewer\n" +
	"summary: 'quoted, kept'\n" +
	"signal: pass\n" +
	"\n" +
	"# What was found:\n" +
	"findings:\n" +
	"  - one\n" +
	"  - two\n"

func TestBytesKeepsHandWrittenHeader(t *testing.T) {
	const id = "20261121-101500.123456Z-alice-3fa9c2"
	m := mustParse(t, "---\n"+handHeader+"---\nBody text.\n")
	// Set in an order unlike parley's, which is what Bytes must use.
	m.Set("created", "2026-11-21T10:15:00.123456Z")
	m.Set("x_trace", "abc-123")
	m.Set("id", id)
	m.Set("from", "alice")

	want := "---\n" +
		"id: " + id + "\n" +
		"from: alice\n" +
		"created: 2026-11-21T10:15:00.123456Z\n" +
		handHeader +
		"x_trace: abc-123\n" +
		"---\n" +
		"Body text.\n"
	if diff := cmp.Diff(want, string(m.Bytes())); diff != "" {
		t.Errorf("Bytes() mismatch (-want +got):\n%s", diff)
	}
	wantKeys := []string{"id", "from", "created", "to", "summary", "signal", "findings", "x_trace"}
	if diff := cmp.Diff(wantKeys, m.Header().Keys()); diff != "" {
		t.Errorf("Keys() mismatch (-want +got):\n%s", diff)
	}
	m2 := mustParse(t, string(m.Bytes()))
	if diff := cmp.Diff(wantKeys, m2.Header().Keys()); diff != "" {
		t.Errorf("Parse(Bytes()).Keys() mismatch (-want +got):\n%s", diff)
	}
	for _, k := range []string{"id", "from", "created", "to", "summary", "signal", "x_trace"} {
		want, _ := m.Header().Get(k)
		if got, ok := m2.Header().Get(k); got != want || !ok {
			t.Errorf("Parse(Bytes()).Get(%q) = %q, %v, want %q, true", k, got, ok, want)
		}
	}
}

// TestBytesAddingFields covers what the router does to every hand-written
// message: add the reserved fields it lacks, then deliver Bytes().
func TestBytesAddingFields(t *testing.T) {
	const id = "20261121-101500.123456Z-alice-3fa9c2"
	tests := []struct {
		name string
		in   string
		want parsed
	}{
		{
			name: "indented header",
			in:   "---\n  to: bob\n  summary: hi\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from", "to", "summary"}, Values: map[string]any{"id": id, "from": "alice", "to": "bob", "summary": "hi"}, Body: "body\n"},
		},
		{
			name: "tagged header",
			in:   "---\n!!map\nto: bob\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from", "to"}, Values: map[string]any{"id": id, "from": "alice", "to": "bob"}, Body: "body\n"},
		},
		{
			name: "non-specific tag on a line of its own",
			in:   "---\n!\nto: bob\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from", "to"}, Values: map[string]any{"id": id, "from": "alice", "to": "bob"}, Body: "body\n"},
		},
		{
			name: "null header",
			in:   "---\n~\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from"}, Values: map[string]any{"id": id, "from": "alice"}, Body: "body\n"},
		},
		{
			name: "blank header line with a tab",
			in:   "---\n\t\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from"}, Values: map[string]any{"id": id, "from": "alice"}, Body: "body\n"},
		},
		{
			name: "flow header",
			in:   "---\n{to: bob, n: 2}\n---\nbody\n",
			want: parsed{Keys: []string{"id", "from", "to", "n"}, Values: map[string]any{"id": id, "from": "alice", "to": "bob", "n": 2}, Body: "body\n"},
		},
		{
			name: "tag-first block scalar without a final line break",
			in:   "[SESSION_END]\nsummary: |\n  The end.",
			want: parsed{
				Tag:    "SESSION_END",
				Keys:   []string{"summary"},
				Values: map[string]any{"summary": "The end.\n"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParse(t, tt.in)
			m.Set("from", "alice")
			m.Set("id", id)
			out := m.Bytes()
			m2, err := Parse(out)
			if err != nil {
				t.Fatalf("Parse(Bytes()) = %v, want no error; Bytes() = %q", err, out)
			}
			if diff := cmp.Diff(tt.want, summarize(m2)); diff != "" {
				t.Errorf("Parse(Bytes()) mismatch (-want +got):\n%s\nBytes() = %q", diff, out)
			}
		})
	}
}

func TestBytesTagFirst(t *testing.T) {
	m := mustParse(t, "[NARRATOR_NOTE]\nfrom: gm\nnote: \"Emphasize the reunion.\"\n\nThe scene.\n")
	m.Set("id", "20261121-101500.123456Z-gm-000001")
	m.Set("from", "gm")
	// The envelope, then the message as written: its "from: gm" is the
	// protocol's field, left where the protocol put it.
	want := "---\nid: 20261121-101500.123456Z-gm-000001\nfrom: gm\ntype: NARRATOR_NOTE\n---\n" +
		"[NARRATOR_NOTE]\nfrom: gm\nnote: \"Emphasize the reunion.\"\n\nThe scene.\n"
	if diff := cmp.Diff(want, string(m.Bytes())); diff != "" {
		t.Errorf("Bytes() mismatch (-want +got):\n%s", diff)
	}
	m2 := mustParse(t, string(m.Bytes()))
	if m2.Tag != "NARRATOR_NOTE" || string(m2.Body) != "The scene.\n" {
		t.Errorf("re-read: Tag %q, Body %q; want the tag and the body of the original", m2.Tag, m2.Body)
	}
	if v, _ := m2.Payload().Get("note"); v != "Emphasize the reunion." {
		t.Errorf("re-read: Field(note) = %q", v)
	}

	// Addressing is lifted into the envelope.
	m = mustParse(t, "[PLAYER_TO_PLAYER]\nfrom: tilda-brannock\nto: grimjaw-ironforge\n\n*whispers*\n")
	if to, _ := m.Header().Get("to"); to != "grimjaw-ironforge" || m.Header().Line("to") != 3 {
		t.Errorf("Get(to) = %q on line %d, want grimjaw-ironforge on line 3", to, m.Header().Line("to"))
	}
	if m.Header().Has("from") {
		t.Errorf("the protocol's from: field was taken for the sender")
	}
	if from, _ := m.Payload().Get("from"); from != "tilda-brannock" {
		t.Errorf("Field(from) = %q, want tilda-brannock", from)
	}
}

// TestBytesLineEndings checks that a copy keeps the line endings of the
// file it came from: a CRLF file is written with CRLF throughout (the
// '---' lines and the keys the router adds too), an LF file with LF.
func TestBytesLineEndings(t *testing.T) {
	const id = "20261121-101500.123456Z-alice-3fa9c2"
	tests := []struct {
		name, in, want string
	}{
		{
			name: "CRLF frontmatter",
			in:   "---\r\nto: b\r\n---\r\nhi\r\n",
			want: "---\r\nid: " + id + "\r\nfrom: alice\r\nto: b\r\nx_note: added\r\n---\r\nhi\r\n",
		},
		{
			name: "CRLF tag-first",
			in:   "[NOTE]\r\nto: b\r\n\r\nhi\r\n",
			want: "---\r\nid: " + id + "\r\nfrom: alice\r\nto: b\r\ntype: NOTE\r\nx_note: added\r\n---\r\n[NOTE]\r\nto: b\r\n\r\nhi\r\n",
		},
		{
			name: "LF frontmatter with a CRLF body",
			in:   "---\nto: b\n---\nhi\r\n",
			want: "---\nid: " + id + "\nfrom: alice\nto: b\nx_note: added\n---\nhi\r\n",
		},
		{
			name: "CRLF header written anew",
			in:   "---\r\n{to: b}\r\n---\r\nhi\r\n",
			want: "---\r\nid: " + id + "\r\nfrom: alice\r\nto: b\r\nx_note: added\r\n---\r\nhi\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParse(t, tt.in)
			m.Set("from", "alice")
			m.Set("id", id)
			m.Set("x_note", "added")
			if diff := cmp.Diff(tt.want, string(m.Bytes())); diff != "" {
				t.Errorf("Parse(%q).Bytes() after adding fields mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSetExistingKey(t *testing.T) {
	m := mustParse(t, "---\nfrom: alice\nto: bob\nsummary: old\n---\nbody\n")
	m.Set("to", "carol")
	if diff := cmp.Diff([]string{"from", "to", "summary"}, m.Header().Keys()); diff != "" {
		t.Errorf("Keys() after Set(to) mismatch (-want +got):\n%s", diff)
	}
	want := "---\nfrom: alice\nto: carol\nsummary: old\n---\nbody\n"
	if diff := cmp.Diff(want, string(m.Bytes())); diff != "" {
		t.Errorf("Bytes() after Set(to) mismatch (-want +got):\n%s", diff)
	}
}

func TestSetExistingKeyKeepsComments(t *testing.T) {
	in := "---\n# Sent by hand.\nfrom: alice # me\n\n# Who reads it:\nto: bob\nsummary: old\n---\nbody\n"
	m := mustParse(t, in)
	m.Set("summary", "new")
	out := string(m.Bytes())
	for _, c := range []string{"# Sent by hand.", "# me", "# Who reads it:"} {
		if !strings.Contains(out, c) {
			t.Errorf("Set(summary, new): Bytes() = %q, want the comment %q kept", out, c)
		}
	}
	m2 := mustParse(t, out)
	if diff := cmp.Diff(summarize(m), summarize(m2)); diff != "" {
		t.Errorf("Parse(Bytes()) mismatch (-want +got):\n%s", diff)
	}
}

func TestDelete(t *testing.T) {
	m := mustParse(t, "---\nfrom: alice\nto: bob\nsummary: old\n---\nbody\n")
	m.Delete("to")
	m.Delete("missing")
	m2 := mustParse(t, string(m.Bytes()))
	want := parsed{Keys: []string{"from", "summary"}, Values: map[string]any{"from": "alice", "summary": "old"}, Body: "body\n"}
	if diff := cmp.Diff(want, summarize(m2)); diff != "" {
		t.Errorf("Parse(Bytes()) after Delete(to) mismatch (-want +got):\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []string{
		"---\n" + handHeader + "---\nBody text.\n",
		"---\nfrom: alice\nto: [bob, carol]\n---\n---\nnot a header\n",
		"---\r\nfrom: alice\r\n---\r\nbody\r\n",
		"---\n{from: alice, to: bob}\n---\nflow header\n",
		"---\nfrom: alice\n---\nno newline",
		"[SESSION_END]\nsummary: |\n  one\n\n  two\nstate_saved: true\n\nbye\n",
		"[NARRATOR_NOTE]\nfrom: gm\nnote: Remember: the door is locked\n\nbody\n",
		"[NARRATIVE]\nThe rain falls.\n",
		"[X]\nnull: abc\n\nbody\n",
		"[X]\ntrue: abc\nnote: a: b\n",
		"---\n{\"a: b\": x, c: d}\n---\n",
		"---\n{\"#a\": x, c: d}\n---\n",
	}
	for _, in := range tests {
		m, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%q) = %v, want no error", in, err)
			continue
		}
		out := m.Bytes()
		m2, err := Parse(out)
		if err != nil {
			t.Errorf("Parse(Parse(%q).Bytes()) = %v, want no error; Bytes() = %q", in, err, out)
			continue
		}
		want := summarize(m)
		if diff := cmp.Diff(want, summarize(m2)); diff != "" {
			t.Errorf("Parse(Parse(%q).Bytes()) mismatch (-want +got):\n%s", in, diff)
		}
		if again := m2.Bytes(); string(again) != string(out) {
			t.Errorf("Bytes() of %q is not stable:\nfirst  %q\nsecond %q", in, out, again)
		}
	}
}

func TestSetValue(t *testing.T) {
	tests := []struct {
		text string
		want any
	}{
		{"true", true},
		{"false", false},
		{"12", 12},
		{"1.5", 1.5},
		{"[a, b]", []any{"a", "b"}},
		{"[]", []any{}},
		{"null", nil},
		{"hello", "hello"},
		{"a: b", "a: b"},
		{"- a", "- a"},
		{"{a: 1}", map[string]any{"a": 1}},
		{`"001"`, "001"},
		{"'x: y'", "x: y"},
		{"001", 1},
		{"Hello, world", "Hello, world"},
		{"|\n  block", "|\n  block"},
		{"two\nlines", "two\nlines"}, // read as YAML, folded into "two lines"
		{"[a,\n b]", "[a,\n b]"},
		{"&x value", "&x value"},
		{"*x", "*x"},
		{"# not a comment", "# not a comment"},
		{"", ""},
	}
	for _, tt := range tests {
		m := New(nil)
		m.SetValue("k", tt.text)
		if diff := cmp.Diff(tt.want, m.Payload().Value("k")); diff != "" {
			t.Errorf("SetValue(k, %q): Value(k) mismatch (-want +got):\n%s", tt.text, diff)
		}
		out := m.Bytes()
		m2, err := Parse(out)
		if err != nil {
			t.Errorf("SetValue(k, %q): Parse(Bytes()) = %v, want no error; Bytes() = %q", tt.text, err, out)
			continue
		}
		if diff := cmp.Diff(tt.want, m2.Payload().Value("k")); diff != "" {
			t.Errorf("SetValue(k, %q): Parse(Bytes()).Value(k) mismatch (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestSetNames(t *testing.T) {
	tests := []struct {
		names []string
		line  string // how the field is written
	}{
		{[]string{"bob"}, "to: bob\n"},
		{[]string{"bob", "carol"}, "to: [bob, carol]\n"},
	}
	for _, tt := range tests {
		m := mustParse(t, "---\nfrom: alice\n---\n")
		m.SetNames("to", tt.names)
		out := string(m.Bytes())
		if !strings.Contains(out, tt.line) {
			t.Errorf("SetNames(to, %q): Bytes() = %q, want a line %q", tt.names, out, tt.line)
		}
		got, err := mustParse(t, out).Header().Names("to")
		if err != nil {
			t.Fatalf("SetNames(to, %q): Parse(Bytes()).Names(to) = %v", tt.names, err)
		}
		if diff := cmp.Diff(tt.names, got); diff != "" {
			t.Errorf("SetNames(to, %q): Parse(Bytes()).Names(to) mismatch (-want +got):\n%s", tt.names, diff)
		}
	}
	m := New(nil)
	m.SetNames("to", []string{"bob"})
	if got, ok := m.Header().Get("to"); got != "bob" || !ok {
		t.Errorf("SetNames(to, [bob]); Get(to) = %q, %v, want bob, true", got, ok)
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		header string
		want   []string
		line   int // line of the error; 0 for none
	}{
		{"to: bob", []string{"bob"}, 0},
		{"to: bob, carol", []string{"bob", "carol"}, 0},
		{"to: ' bob ,carol, '", []string{"bob", "carol"}, 0},
		{"to: '*'", []string{"*"}, 0},
		{"to: [bob, carol]", []string{"bob", "carol"}, 0},
		{"to:\n  - bob\n  - carol", []string{"bob", "carol"}, 0},
		{"cc: bob", nil, 0},
		{"to:", nil, 0},
		{"to: {bob: 1}", nil, 3},
		{"to: [bob, [carol]]", nil, 3},
		{"to: [bob, {carol: 1}]", nil, 3},
	}
	for _, tt := range tests {
		m := mustParse(t, "---\nfrom: alice\n"+tt.header+"\n---\n")
		got, err := m.Header().Names("to")
		if tt.line == 0 {
			if err != nil {
				t.Errorf("Names(to) of %q = %v, want no error", tt.header, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Names(to) of %q mismatch (-want +got):\n%s", tt.header, diff)
			}
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Field != "to" || pe.Line != tt.line {
			t.Errorf("Names(to) of %q = %q, %v; want a *ParseError for field to on line %d", tt.header, got, err, tt.line)
		}
	}
}

func TestGetAndText(t *testing.T) {
	m := mustParse(t, "---\nfrom: alice\nto: [bob, carol]\nempty:\ncount: 5\ndice:\n  count: 2\n  sides: 6\n---\n")
	tests := []struct {
		key    string
		get    string
		getOK  bool
		text   string
		hasKey bool
	}{
		{"from", "alice", true, "alice", true},
		{"count", "5", true, "5", true},
		{"empty", "", true, "", true},
		{"to", "", false, "bob, carol", true},
		{"dice", "", false, "\n  count: 2\n  sides: 6", true},
		{"missing", "", false, "", false},
	}
	for _, tt := range tests {
		if got, ok := m.Header().Get(tt.key); got != tt.get || ok != tt.getOK {
			t.Errorf("Get(%q) = %q, %v, want %q, %v", tt.key, got, ok, tt.get, tt.getOK)
		}
		if got := m.Header().Text(tt.key); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.key, got, tt.text)
		}
		if got := m.Header().Has(tt.key); got != tt.hasKey {
			t.Errorf("Has(%q) = %v, want %v", tt.key, got, tt.hasKey)
		}
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]int
	}{
		{
			in:   "---\n# comment\nfrom: alice\nto:\n  - bob\n  - carol\nsummary: hi\n---\nbody\n",
			want: map[string]int{"from": 3, "to": 4, "summary": 7, "missing": 0},
		},
		{
			in:   "\uFEFF---\r\nfrom: alice\r\n\r\nto: bob\r\n---\r\n",
			want: map[string]int{"from": 2, "to": 4},
		},
		{
			in:   "[NOTE]\nfrom: gm\nnote: hi\n\nbody\n",
			want: map[string]int{"type": 1, "from": 2, "note": 3}, // the tag line says the type
		},
		{
			in:   "[NOTE]\nfrom: gm\nnote: Remember: the door\n\nbody\n",
			want: map[string]int{"type": 1, "from": 2, "note": 3}, // the tag line says the type
		},
	}
	for _, tt := range tests {
		m := mustParse(t, tt.in)
		got := map[string]int{}
		for k := range tt.want {
			got[k] = m.Header().Line(k)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q).Line mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
	m := mustParse(t, "---\nfrom: alice\n---\n")
	m.Set("id", "20261121-101500.123456Z-alice-3fa9c2")
	m.Set("from", "bob")
	if got := m.Header().Line("id"); got != 0 {
		t.Errorf("Line(id) of an added key = %d, want 0", got)
	}
	if got := m.Header().Line("from"); got != 2 {
		t.Errorf("Line(from) after Set(from) = %d, want 2", got)
	}
}

func TestIsReserved(t *testing.T) {
	for _, k := range []string{"id", "from", "to", "cc", "type", "signal", "thread", "reply_to", "request_id", "summary", "created"} {
		if !IsReserved(k) {
			t.Errorf("IsReserved(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"character", "findings", "ID", "From", ""} {
		if IsReserved(k) {
			t.Errorf("IsReserved(%q) = true, want false", k)
		}
	}
}

// TestNewTagFirst: a tag-first message built in memory is written as a
// person writes one, after the envelope, and reads back the same: its own
// fields may share a name with a header field.
func TestNewTagFirst(t *testing.T) {
	m := NewTagFirst("PLAYER_TO_GM", nil)
	m.Set("id", "20261121-101500.000000Z-aria-0a0b0c")
	m.Set("from", "aria")
	m.SetPayload("type", "ACTION")
	m.SetPayload("character", "tilda-brannock")
	m.SetPayload("to", "gm")
	m.SetBody([]byte("I push the door.\n"))
	want := "---\nid: 20261121-101500.000000Z-aria-0a0b0c\nfrom: aria\nto: gm\ntype: PLAYER_TO_GM\n---\n" +
		"[PLAYER_TO_GM]\ntype: ACTION\ncharacter: tilda-brannock\nto: gm\n\nI push the door.\n"
	if got := string(m.Bytes()); got != want {
		t.Fatalf("Bytes() =\n%s\nwant\n%s", got, want)
	}
	back := mustParse(t, want)
	for _, c := range []struct {
		view       Fields
		key, value string
	}{
		{back.Header(), "type", "PLAYER_TO_GM"},
		{back.Payload(), "type", "ACTION"},
		{back.Payload(), "character", "tilda-brannock"},
		{back.Header(), "to", "gm"},
	} {
		if got, _ := c.view.Get(c.key); got != c.value {
			t.Errorf("read back: %s = %q, want %q", c.key, got, c.value)
		}
	}
	if string(back.Body) != "I push the door.\n" {
		t.Errorf("body = %q", back.Body)
	}
}

// TestClone: changing the header of a clone leaves the original alone.
func TestClone(t *testing.T) {
	m := mustParse(t, "---\nto: aria\n# a comment\n---\nHi.\n")
	before := string(m.Bytes())
	c := m.Clone()
	c.Set("from", "gm")
	c.Set("to", "bram")
	c.Delete("to")
	if got := string(m.Bytes()); got != before {
		t.Errorf("the original changed:\n%s\nwant\n%s", got, before)
	}
	if got := string(c.Bytes()); got != "---\nfrom: gm\n---\nHi.\n" {
		t.Errorf("the clone = %q", got)
	}
}

// TestTagFirstLeadingComment: a comment right after the tag line belongs
// to the fields when fields follow it; a markdown title there is body.
func TestTagFirstLeadingComment(t *testing.T) {
	m := mustParse(t, "[PLAYER_TO_GM]\n# a note for the gm\ntype: ACTION\ncharacter: tilda-brannock\n\nI push.\n")
	if got, _ := m.Payload().Get("type"); got != "ACTION" {
		t.Errorf("type = %q, want ACTION: the comment hid the fields", got)
	}
	if string(m.Body) != "I push.\n" {
		t.Errorf("body = %q", m.Body)
	}
	m = mustParse(t, "[NARRATIVE]\n# The Drowned Lantern\nRain hammers the roof.\n")
	if string(m.Body) != "# The Drowned Lantern\nRain hammers the roof.\n" {
		t.Errorf("body = %q, want the title and the prose", m.Body)
	}
}

// TestUntypedEnvelopeTag: a person who writes to: above a tag-first
// message means the tag's type; an envelope whose type: says otherwise, or
// leaves it empty, keeps its body as written.
func TestUntypedEnvelopeTag(t *testing.T) {
	m, err := Parse([]byte("---\nto: journal\n---\n[JOURNAL_ENTRY]\ntitle: The docks\nWe waited.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := m.Header().Get("type"); typ != "JOURNAL_ENTRY" || m.Tag != "JOURNAL_ENTRY" {
		t.Errorf("type %q, tag %q: want JOURNAL_ENTRY for both", typ, m.Tag)
	}
	if title, _ := m.Payload().Get("title"); title != "The docks" || string(m.Body) != "We waited.\n" {
		t.Errorf("title %q, body %q", title, m.Body)
	}
	if got := m.Header().Line("type"); got != 4 {
		t.Errorf("type is on line %d, want 4 (the tag line)", got)
	}
	for _, text := range []string{
		"---\ntype: NOTE\n---\n[JOURNAL_ENTRY]\ntitle: x\n",
		"---\ntype: \"\"\n---\n[JOURNAL_ENTRY]\ntitle: x\n",
	} {
		m, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if m.Tag != "" || !strings.HasPrefix(string(m.Body), "[JOURNAL_ENTRY]\n") {
			t.Errorf("%q: tag %q, body %q: want the body kept as written", text, m.Tag, m.Body)
		}
	}
}

// TestParseYAMLErrorLine: a header that is not YAML is refused at the
// line to fix, however long the header. Past 200 lines it named yaml.v3's
// line: counted from 0 for a bracket left open (one line early), and the
// line before a block for an entry that does not fit in it.
func TestParseYAMLErrorLine(t *testing.T) {
	long := strings.Repeat("# a note\n", 300)
	for _, tt := range []struct {
		name   string
		header string
		line   int // in the file: the header starts on line 2
		msg    string
	}{
		{"bracket left open", "to: gm\ncc: [a, b\ntype: X\n", 3, "did not find expected ',' or ']'"},
		{"bracket left open, long", long + "to: gm\ncc: [a, b\ntype: X\n", 303, "did not find expected ',' or ']'"},
		{"entry out of its block, long", long + "to: gm\nfields:\n  a: 1\n b: 2\n", 305, "did not find expected key (indented unlike the keys beside it: line it up with them)"},
		{"mapping values, long", long + "to: gm\ntype: a: b\n", 303, `mapping values are not allowed in this context (a value holding ": " must be quoted: key: "a: b")`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("---\n" + tt.header + "---\nbody\n"))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %v, want a *ParseError", err)
			}
			if pe.Line != tt.line || pe.Err.Error() != tt.msg {
				t.Errorf("Parse = line %d: %v; want line %d: %s", pe.Line, pe.Err, tt.line, tt.msg)
			}
		})
	}
}
