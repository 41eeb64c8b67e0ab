// Package yamlerr says which line of a YAML text an error of yaml.v3 is
// about. yaml.v3 counts the lines of its parser's errors from 0 (and
// leaves out a line 0) and its scanner's from 1, and names where a list
// or mapping starts rather than the entry in it that is wrong; every
// reader of YAML a person writes (message headers, parley.yaml, character
// sheets) names the line a person has to fix through Line.
package yamlerr

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var lineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserErrors are the problems yaml.v3's parser (not its scanner)
// reports. It numbers their lines from 0, and the scanner's from 1; both
// give the line of the construct the problem is in (the "{" left open,
// the list an entry is missing from) when that is not the first line, and
// the line of the problem otherwise. A line 0 is not written at all.
var parserErrors = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// Line returns the line of text (counted from 1) that err, an error of
// yaml.v3 decoding text, is about, or 0 for none, and its problem
// without yaml.v3's "yaml: line N: ". Errors in a block list or mapping
// are about the line of the entry that does not fit in, not where the
// list or mapping starts (which yaml.v3 names); errors in a flow
// collection are about the line of its opening bracket.
func Line(text []byte, err error) (int, string) {
	line, msg := line0(text, err)
	return line + 1, msg
}

// line0 is Line counted from 0, -1 for none.
func line0(text []byte, err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	parser := parserErrors[msg]
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg, parser = m[2], parserErrors[m[2]]
		if !parser {
			line-- // the scanner's lines are 1-based
		}
	} else if !parser && !scannerError(msg) {
		return -1, msg // a decoding error, such as an unknown anchor: no line
	}
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) > 1 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	// failsAt reports whether lines 0 to k fail as the whole text does.
	failsAt := func(k int) bool {
		err := decode(bytes.Join(lines[:k+1], nil))
		return err != nil && strings.HasSuffix(err.Error(), msg)
	}
	switch {
	case msg == "found a tab character that violates indentation":
		// The line is where the value before the tab starts.
		if line >= 0 && line < len(lines) {
			line += sort.Search(len(lines)-line, func(k int) bool { return failsAt(line + k) })
		}
	case !parser:
	case strings.HasPrefix(msg, "did not find expected ',' or"):
		// The line is the open bracket's, or the problem's when the
		// bracket is on the first line.
		if line > 0 && failsAt(0) {
			line = 0
		}
	case msg == "did not find expected key" || msg == "did not find expected '-' indicator":
		// The line is where the list or mapping starts (or the entry
		// that does not fit in, when it starts on the first line): the
		// entry is the first line after it where the text fails so.
		if line >= 0 && line < len(lines) {
			line += sort.Search(len(lines)-line, func(k int) bool { return failsAt(line + k) })
		}
	}
	if line >= len(lines) {
		line = len(lines) - 1 // the end of the text
	}
	return line, msg
}

// scannerError reports whether msg, written without a line, is a
// problem of yaml.v3's scanner: one on the first line.
func scannerError(msg string) bool {
	return strings.HasPrefix(msg, "found ") || strings.HasPrefix(msg, "did not find") ||
		strings.HasPrefix(msg, "could not find") || strings.HasSuffix(msg, "not allowed in this context")
}

// decode decodes text as yaml.v3 does; a panic of the decoder is an error.
func decode(b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	var doc yaml.Node
	return yaml.Unmarshal(b, &doc)
}

// Hint returns msg, a problem Line returned for text at line (from 1),
// with the likely cause of the mistakes people make most added in words:
// a value holding ": " left unquoted, a key indented further than the
// one above it, a list item added under the wrong section. Any other
// problem is returned as it is.
func Hint(text []byte, line int, msg string) string {
	lines := strings.Split(string(text), "\n")
	at := func(n int) string { // line n (from 1), "" past the text
		if n < 1 || n > len(lines) {
			return ""
		}
		return strings.TrimRight(lines[n-1], " \t\r")
	}
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	here := at(line)
	body := strings.TrimPrefix(strings.TrimSpace(here), "- ")
	above := ""
	for n := line - 1; n >= 1; n-- {
		if s := at(n); strings.TrimSpace(s) != "" && !strings.HasPrefix(strings.TrimSpace(s), "#") {
			above = s
			break
		}
	}
	switch msg {
	case "mapping values are not allowed in this context":
		if _, value, ok := strings.Cut(body, ": "); ok && strings.Contains(value, ": ") && !strings.ContainsAny(value[:1], `"'[{`) {
			return msg + ` (a value holding ": " must be quoted: key: "a: b")`
		}
		if above != "" && indent(here) > indent(above) {
			return msg + " (indented further than the line above: line its key up with the keys beside it)"
		}
		return msg + ` (a key not lined up with the keys beside it, or a value holding ": " left unquoted)`
	case "did not find expected key":
		if strings.HasPrefix(strings.TrimSpace(here), "- ") {
			return msg + " (a list item that does not fit where it is: put it under its list, indented as the items there are)"
		}
		return msg + " (indented unlike the keys beside it: line it up with them)"
	}
	return msg
}
