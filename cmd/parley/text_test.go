package main

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven ch…"},
		{"ééééééééééé", 5, "éééé…"},
	} {
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestLogTime: the UTC times parley log prints without parsing them are
// the times it prints by parsing them.
func TestLogTime(t *testing.T) {
	for _, s := range []string{"2026-11-21T10:15:00.412345Z", "2026-01-01T00:00:00.000000Z", "1999-12-31T23:59:59.999999Z"} {
		if !isJournalTime(s) {
			t.Fatalf("isJournalTime(%q) = false", s)
		}
		fast := string(appendEntry(nil, &workspace.Entry{Time: s, Outcome: workspace.Refused}, time.UTC))
		parsed, err := time.Parse(mailbox.TimeFormat, s)
		if err != nil {
			t.Fatal(err)
		}
		if want := parsed.UTC().Format(logTime); fast[:len(want)] != want {
			t.Errorf("appendEntry time of %q = %q, want %q", s, fast, want)
		}
	}
	for _, s := range []string{"", "2026-11-21T10:15:00Z", "2026-11-21 10:15:00.412345Z", "2026-11-21T10:15:00.41234xZ"} {
		if isJournalTime(s) {
			t.Errorf("isJournalTime(%q) = true", s)
		}
	}
}

func TestPrintableLines(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"one line \x1b[2J", `one line \x1b[2J`},
		{"first\x07\nsecond\t", "first\\a\nsecond\\t"},
	} {
		if got := printableLines(tt.in); got != tt.want {
			t.Errorf("printableLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIndentLines(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"one", "one"},
		{"a.md:3: too: x\na.md:4: tpye: y", "a.md:3: too: x\n    a.md:4: tpye: y"},
		{"2 files rejected:\n  rejected  aria  x.md", "2 files rejected:\n  rejected  aria  x.md"}, // laid out by the error
	} {
		if got := indentLines(tt.in); got != tt.want {
			t.Errorf("indentLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCutProblems(t *testing.T) {
	for _, tt := range []struct{ reason, file, first, more string }{
		{"a.md:3: too: x", "a.md", "a.md:3: too: x", ""},
		{"a.md:3: too: x\na.md:4: y\na.md: and 2 more problems", "a.md", "a.md:3: too: x", "a.md:4: y\na.md: and 2 more problems"},
		{"a.md:1: no header\n\tsecond line", "a.md", "a.md:1: no header\n\tsecond line", ""}, // a line break of the problem itself
		{"x\ny", "", "x\ny", ""},
	} {
		first, more := cutProblems(tt.reason, tt.file)
		if first != tt.first || more != tt.more {
			t.Errorf("cutProblems(%q, %q) = %q, %q; want %q, %q", tt.reason, tt.file, first, more, tt.first, tt.more)
		}
	}
}
