package yamlerr

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestLine: the line named is the one a person has to fix, whether
// yaml.v3's parser (lines from 0, line 0 left out) or its scanner (lines
// from 1) found the problem, and however long the text.
func TestLine(t *testing.T) {
	long := strings.Repeat("# a comment\n", 600)
	for _, tt := range []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"scanner", "a: 1\nb: c: d\n", 2, "mapping values are not allowed in this context"},
		{"scanner on line 1", "a: b: c\n", 1, "mapping values are not allowed in this context"},
		{"parser: flow left open", "a: 1\nb: [x, y\nc: 2\n", 2, "did not find expected ',' or ']'"},
		{"parser: flow left open on line 1", "b: [x, y\nc: 2\n", 1, "did not find expected ',' or ']'"},
		{"parser: an entry that does not fit in", "a: 1\nb:\n  x: 1\n y: 2\n", 4, "did not find expected key"},
		{"tab", "a: 1\n\tb: 2\n", 2, "found a tab character that violates indentation"},
		{"long: flow", long + "a: 1\nb: [x, y\nc: 2\n", 602, "did not find expected ',' or ']'"},
		{"long: entry", long + "a: 1\nb:\n  x: 1\n y: 2\n", 604, "did not find expected key"},
		{"no line: unknown alias", "a: 1\nb: *x\n", 0, "unknown anchor 'x' referenced"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			err := yaml.Unmarshal([]byte(tt.text), &doc)
			if err == nil {
				t.Fatal("the text parses")
			}
			line, msg := Line([]byte(tt.text), err)
			if line != tt.line || msg != tt.msg {
				t.Errorf("Line(%v) = %d, %q; want %d, %q", err, line, msg, tt.line, tt.msg)
			}
		})
	}
}

// TestHint: the YAML mistakes people make most are said with their
// likely cause; yaml.v3's words alone said nothing of what to do.
func TestHint(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		want string // what Hint adds to the problem
	}{
		{"a value holding \": \"", "to: bot\nsummary: Status: all green\n", `(a value holding ": " must be quoted: key: "a: b")`},
		{"one space too far", "agents:\n  - name: bot\n    driver: command\n     run: [sh, x.sh]\n", "(indented further than the line above: line its key up with the keys beside it)"},
		{"a list item after another section", "agents:\n  - name: me\nrouter:\n  settle: 1s\n  - name: extra\n", "(a list item that does not fit where it is: put it under its list, indented as the items there are)"},
		{"a key indented less", "a:\n  x: 1\n y: 2\n", "(indented unlike the keys beside it: line it up with them)"},
		{"no hint", "b: [x, y\nc: 2\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			err := yaml.Unmarshal([]byte(tt.text), &doc)
			if err == nil {
				t.Fatal("the text parses")
			}
			line, msg := Line([]byte(tt.text), err)
			got := strings.TrimSpace(strings.TrimPrefix(Hint([]byte(tt.text), line, msg), msg))
			if got != tt.want {
				t.Errorf("Hint(%q, %d, %q) adds %q; want %q", tt.text, line, msg, got, tt.want)
			}
		})
	}
}
