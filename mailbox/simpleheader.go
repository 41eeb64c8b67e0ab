package mailbox

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decodeSimple reads the headers parley and most agents write — lines of
// "key: value" with plain names, ids, numbers, times and short words —
// into the nodes the YAML decoder makes of them, without the decoder,
// which costs more than all the rest of routing a message. ok is false
// for anything else (quotes, lists, comments, blank lines, CR, a word
// YAML reads as a boolean or null): decodeOne reads those.
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
		tag := simpleValueTag(value)
		if tag == "" {
			return doc, false
		}
		nodes[2*i] = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: i + 1, Column: 1}
		nodes[2*i+1] = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: i + 1, Column: len(key) + 3}
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

// simpleValueTag returns the tag YAML gives a plain value, or "" when the
// value is not one decodeSimple reads.
func simpleValueTag(v string) string {
	switch {
	case v == "":
		return ""
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
// then letters, digits, _ - . , and single spaces, not ending in a space
// or a dot.
func isWords(s string) bool {
	if !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case isAlnum(c), c == '_', c == '-', c == '.', c == ',':
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
