package mailbox

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decodeSimple reads the headers parley and most agents write — lines of
// "key: value" with plain names, ids, numbers, times, true and false,
// short words and paths, text in quotes without escapes, and lists of
// those in brackets — into the nodes the YAML decoder makes of them,
// without the decoder, which costs more than all the rest of routing a
// message. ok is false for anything else (escapes, maps, comments, blank
// lines, CR, a word YAML reads as a null or some readers as a boolean):
// decodeOne reads those.
// simpleheader_test.go checks the nodes against the decoder's.
func decodeSimple(header []byte) (doc yaml.Node, ok bool) {
	text := string(header)
	if text == "" || text[len(text)-1] != '\n' {
		return doc, false
	}
	lines := strings.Count(text, "\n")
	nodes := make([]yaml.Node, 2*lines)
	content := make([]*yaml.Node, 2*lines)
	for i := 0; i < lines; i++ {
		end := strings.IndexByte(text, '\n')
		line := text[:end]
		text = text[end+1:]
		key, value, found := strings.Cut(line, ": ")
		if !found || !simpleKey(key) {
			return doc, false
		}
		nodes[2*i] = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: i + 1, Column: 1}
		v, ok := simpleValue(value, i+1, len(key)+3)
		if !ok {
			return doc, false
		}
		nodes[2*i+1] = v
		content[2*i], content[2*i+1] = &nodes[2*i], &nodes[2*i+1]
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1, Content: content}
	return yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: 1, Content: []*yaml.Node{root}}, true
}

// simpleKey reports whether a key is a lower-case name: a letter or _,
// then letters, digits and _.
func simpleKey(s string) bool {
	if s == "" || !(s[0] == '_' || 'a' <= s[0] && s[0] <= 'z') || yamlWord(s) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c == '_' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// simpleValue is the node of a value at line and column: a plain value
// (simpleValueTag), a quoted one without escapes, or a list of plain
// values in brackets ([a, b]); ok is false for any other.
func simpleValue(v string, line, column int) (n yaml.Node, ok bool) {
	n = yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: column}
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && quotable(v[1:len(v)-1], '"'):
		n.Tag, n.Value, n.Style = "!!str", v[1:len(v)-1], yaml.DoubleQuotedStyle
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' && quotable(v[1:len(v)-1], '\''):
		n.Tag, n.Value, n.Style = "!!str", v[1:len(v)-1], yaml.SingleQuotedStyle
	case len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']':
		return simpleList(v, line, column)
	default:
		n.Tag, n.Value = simpleValueTag(v), v
	}
	return n, n.Tag != ""
}

// quotable reports whether s, between quotes q, is read as it is written:
// printable ASCII, with neither q nor a backslash (an escape in double
// quotes; YAML's own rules for those are left to the decoder).
func quotable(s string, q byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == q || c == '\\' {
			return false
		}
	}
	return true
}

// simpleList is the node of a list in brackets of plain values, each
// after ", " ("[a, b]", "[]"), at line and column.
func simpleList(v string, line, column int) (n yaml.Node, ok bool) {
	n = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: column}
	inner := v[1 : len(v)-1]
	if inner == "" {
		return n, true
	}
	items := strings.Split(inner, ", ")
	nodes := make([]yaml.Node, len(items))
	n.Content = make([]*yaml.Node, len(items))
	at := column + 1
	for i, item := range items {
		// In brackets, , [ ] { } and : end or open what YAML reads.
		if strings.ContainsAny(item, ",[]{}:") {
			return n, false
		}
		tag := simpleValueTag(item)
		if tag == "" || tag == "!!timestamp" {
			return n, false
		}
		nodes[i] = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: item, Line: line, Column: at}
		n.Content[i] = &nodes[i]
		at += len(item) + 2
	}
	return n, true
}

// simpleValueTag returns the tag YAML gives a plain value, or "" when the
// value is not one decodeSimple reads.
func simpleValueTag(v string) string {
	switch {
	case v == "":
		return ""
	case v == "true" || v == "false":
		return "!!bool"
	case IsID(v):
		return "!!str"
	case isTimestamp(v):
		if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
			return ""
		}
		return "!!timestamp"
	case isCount(v):
		return "!!int"
	case isWords(v) && !yamlWord(v):
		return "!!str"
	}
	return ""
}

// isCount reports whether s is a number without sign or leading zero that
// fits in an int64.
func isCount(s string) bool {
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isWords reports whether s is words YAML reads as plain text: a letter,
// then letters, digits, single spaces and the marks _ - . , / ( ) ' + =,
// and : but before a space, not ending in a space, a dot or a colon
// (plans/retry.md, "Retry on a full disk (ENOSPC)").
func isWords(s string) bool {
	if !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == '.' || last == ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case isAlnum(c), c == '_', c == '-', c == '.', c == ',', c == '/', c == '(', c == ')', c == '\'', c == '+', c == '=':
		case c == ':':
			if s[i+1] == ' ' {
				return false
			}
		case c == ' ':
			if s[i-1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// yamlWord reports whether YAML may read s as something other than a
// string: a boolean, a null, or a word some YAML readers take for one.
func yamlWord(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "y", "n", "on", "off", "null":
		return true
	}
	return false
}
