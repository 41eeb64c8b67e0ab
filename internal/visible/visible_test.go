package visible

import "testing"

func TestLine(t *testing.T) {
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
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"two\nlines\r\nkept\n", "two\nlines\nkept\n"},
		{"a\ttab kept", "a\ttab kept"},
		{"\x1b[31mred\x1b[0m\n\tbell\x07", "\\x1b[31mred\\x1b[0m\n\tbell\\a"},
		{"lone\rreturn", `lone\rreturn`},
		{"bidi \u202eevil", `bidi \u202eevil`},
	} {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
