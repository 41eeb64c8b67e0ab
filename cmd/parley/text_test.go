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
