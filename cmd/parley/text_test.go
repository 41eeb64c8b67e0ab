package main

import "testing"

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
