package main

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, ünïcödé and 🎲", "plain text, ünïcödé and 🎲"},
		{"", ""},
		{"two\nlines\r\n", `two\nlines\r\n`},
		{"tab\there", `tab\there`},
		{"\x1b]0;title\x07", `\x1b]0;title\a`},
		{"\x1b[2Jclear", `\x1b[2Jclear`},
		{"del\x7f", `del\x7f`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"sep \u2028 \u2029", `sep \u2028 \u2029`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{`a back\slash stays`, `a back\slash stays`},
		{"zero\u200dwidth joiner stays", "zero\u200dwidth joiner stays"},
	} {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

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
