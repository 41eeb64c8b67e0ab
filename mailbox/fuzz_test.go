package mailbox

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// FuzzParse checks that Parse never panics, that its errors are
// *ParseError values pointing into the file, and that a parsed message
// survives being written out: Parse(m.Bytes()) gives the same keys in the
// same order, the same scalar values and the same body, and writing that
// again gives the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nfrom: alice\nto: [bob, carol]\ntype: review_verdict\nsignal: pass\n---\n# Verdict\n\nLooks good.\n",
		"---\n" + handHeader + "---\nBody.\n",
		"---\r\nfrom: alice\r\n---\r\nline one\r\nline two\r\n",
		"---\r\nto: b\r\n---\r\nhi\r\n",
		"[NOTE]\r\nto: b\r\nsummary: |\r\n  one\r\n  two\r\n\r\nhi\r\n",
		"---\r\n{to: b}\r\n---\r\nhi\r\n",
		"---\nfrom: alice\n---\nintro\n---\nmore\n---\n",
		"---\n{from: alice, to: bob}\n---\nflow",
		"[NARRATIVE]\n\nThe door creaks open.\n",
		"[SESSION_END]\nsummary: |\n  one\n\n  two\nstate_saved: true\n\nbye\n",
		"[ASK_PLAYER]\nquestion: \"Which?\"\noptions:\n  - label: \"Corwin Voss\"\n    description: \"Rogue\"\n",
		"[NARRATOR_NOTE]\nfrom: gm\nnote: Remember: the door is locked\n\nbody\n",
		"[NARRATIVE]\nThe rain falls.\n",
		"[NARRATIVE]\ntype: SCENE\n\nbody\n",
		"[X]\nnull: abc\n\nbody\n",
		"[SUMMARY]\nsummary: |\n  no final line break",
		"---\n  from: alice\n  to: bob\n---\nindented header\n",
		"---\n~\n---\nnull header\n",
		"---\n!!map\nfrom: alice\n---\ntagged header\n",
		"",
		" \n\t\n",
		"---\nbin\x00ary\n---\n",
		"---\nsummary: caf\xe9\n---\n",
		"Hello Bob\n",
		"---\nfrom: alice\nnever closed\n",
		"---\nfrom: alice\nto: [bob\n---\n",
		"---\n- a\n- b\n---\n",
		"---\nfrom: a\nfrom: b\n---\n",
		"---\n" + aliasBomb(6) + "---\n",
		"[NOTE]\n" + aliasBomb(3) + "\nbody\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %T %v, want a *ParseError", data, err, err)
			}
			// YAML also ends a line at a lone "\r", so count those too.
			lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) - bytes.Count(data, []byte("\r\n")) + 1
			if pe.Line < 0 || pe.Line > lines {
				t.Fatalf("Parse(%q) = %v: line %d, want a line of the file's %d", data, err, pe.Line, lines)
			}
			return
		}
		out := m.Bytes()
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q).Bytes() = %q, which does not parse: %v", data, out, err)
		}
		if !slices.Equal(m.Header().Keys(), m2.Header().Keys()) {
			t.Fatalf("Parse(%q): keys %q, after Bytes %q; want the same", data, m.Header().Keys(), m2.Header().Keys())
		}
		for _, k := range m.Header().Keys() {
			v, ok := m.Header().Get(k)
			if !ok {
				continue
			}
			if v2, ok2 := m2.Header().Get(k); v2 != v || !ok2 {
				t.Fatalf("Parse(%q).Get(%q) = %q, after Bytes %q, %v; want the same", data, k, v, v2, ok2)
			}
		}
		if !bytes.Equal(m.Body, m2.Body) {
			t.Fatalf("Parse(%q): body %q, after Bytes %q; want the same", data, m.Body, m2.Body)
		}
		if out2 := m2.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("Parse(%q): Bytes() = %q, then %q; want the same", data, out, out2)
		}

		// What the router does to a hand-written message: add the fields
		// it lacks (it never changes one that is there). The copy it
		// delivers must read the same.
		keys := m.Header().Keys()
		for _, kv := range [][2]string{
			{"id", "20261121-101500.123456Z-alice-3fa9c2"},
			{"from", "alice"},
			{"created", "2026-11-21T10:15:00.123456Z"},
			{"x_routed", "yes"},
		} {
			if !m.Header().Has(kv[0]) {
				m.Set(kv[0], kv[1])
			}
		}
		out = m.Bytes()
		m3, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) after adding fields: Bytes() = %q, which does not parse: %v", data, out, err)
		}
		// A file with CRLF endings only keeps them: the lines added end
		// so too.
		if crlfOnly(data) && !crlfOnly(out) {
			t.Fatalf("Parse(%q) after adding fields: Bytes() = %q, with a line not ended by CRLF", data, out)
		}
		if !slices.Equal(m.Header().Keys(), m3.Header().Keys()) {
			t.Fatalf("Parse(%q) with keys %q, after adding fields: keys %q, after Bytes %q; want the same", data, keys, m.Header().Keys(), m3.Header().Keys())
		}
		for _, k := range m.Header().Keys() {
			v, ok := m.Header().Get(k)
			if v3, ok3 := m3.Header().Get(k); v3 != v || ok3 != ok {
				t.Fatalf("Parse(%q) after adding fields: Get(%q) = %q, %v, after Bytes %q, %v; want the same", data, k, v, ok, v3, ok3)
			}
		}
	})
}

// crlfOnly reports whether every line of data, the last one included,
// ends in CRLF.
func crlfOnly(data []byte) bool {
	return bytes.HasSuffix(data, []byte("\r\n")) && bytes.Count(data, []byte("\n")) == bytes.Count(data, []byte("\r\n"))
}

// FuzzSplitFrontmatter checks what SplitFrontmatter promises: of a
// frontmatter it finds, that its offsets give its header and body, that
// the header holds no closing line and that the body starts on BodyLine
// (checkSplit); of one it does not find, that the first line is not
// "---" (ErrNoFrontmatter) or that no later line closes it
// (ErrUnclosedFrontmatter). FuzzParse covers it too, through Parse.
func FuzzSplitFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nfrom: alice\n---\nHello.\n",
		"---\r\nfrom: alice\r\n---\r\nline one\r\n",
		"\uFEFF---\nfrom: alice\n...\nHello.\n",
		"---\n---\n",
		"--- \t\nfrom: alice\n---  \r\nintro\n---\nmore\n",
		"---\nfrom: alice\n---",
		"---\nfrom: alice\nnever closed\n",
		"---",
		"[NARRATIVE]\n\nThe door creaks open.\n",
		"\n---\n---\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := SplitFrontmatter(data)
		first, _ := cutLine(bytes.TrimPrefix(data, bom))
		switch {
		case err == nil:
			checkSplit(t, data, fm)
		case errors.Is(err, ErrNoFrontmatter):
			if isDelimiter(first, "---") {
				t.Fatalf("SplitFrontmatter(%q) = %v, but the first line %q opens a frontmatter", data, err, first)
			}
		case errors.Is(err, ErrUnclosedFrontmatter):
			if !isDelimiter(first, "---") {
				t.Fatalf("SplitFrontmatter(%q) = %v, but the first line %q opens no frontmatter", data, err, first)
			}
			lines := bytes.Split(data, []byte("\n"))
			for _, l := range lines[1:] {
				if isDelimiter(l, "---") || isDelimiter(l, "...") {
					t.Fatalf("SplitFrontmatter(%q) = %v, but line %q closes it", data, err, l)
				}
			}
		default:
			t.Fatalf("SplitFrontmatter(%q) error = %v, want ErrNoFrontmatter or ErrUnclosedFrontmatter", data, err)
		}
	})
}
