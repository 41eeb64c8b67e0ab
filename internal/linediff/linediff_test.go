package linediff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want []string
	}{
		{"a\nb\nc\n", "a\nb\nc\n", nil},
		{"a\nb\nc\n", "a\nB\nc\n", []string{"-b\n", "+B\n"}},
		{"a\nc\n", "a\nb\nc\n", []string{"+b\n"}},
		{"a\nb\nc", "a\nc", []string{"-b\n"}},
		{"", "x\n", []string{"+x\n"}},
	} {
		got := Lines(strings.SplitAfter(tt.a, "\n"), strings.SplitAfter(tt.b, "\n"))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lines(%q, %q) (-want +got):\n%s", tt.a, tt.b, diff)
		}
	}
}
