package runner

import (
	"strings"
	"testing"
)

// TestLastBytes: what a reason in dead/ keeps of a failed program's
// stdout is its end, from the start of a line.
func TestLastBytes(t *testing.T) {
	long := strings.Repeat("frame\n", 1000) + "at frame 3\n"
	for _, tc := range []struct {
		name, text string
		max        int
		want       string
	}{
		{"short", "You have hit your limit\n  at frame 1\n", 4096, "You have hit your limit\n  at frame 1"},
		{"cut in a line", "first line\nsecond\nthird\n", 10, "third"},
		{"cut at a line's start", "first line\nsecond\nthird\n", 12, "second\nthird"},
		{"long", long, 20, "frame\nat frame 3"},
		{"one long line", strings.Repeat("x", 30), 10, strings.Repeat("x", 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastBytes(tc.text, tc.max); got != tc.want {
				t.Errorf("lastBytes(%q, %d) = %q, want %q", tc.text, tc.max, got, tc.want)
			}
		})
	}
}
