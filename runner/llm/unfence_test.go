package llm

import (
	"strings"
	"testing"
)

func TestUnfence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"---\nto: ann\n---\nHi.\n", "---\nto: ann\n---\nHi.\n"},
		{"```markdown\n---\nto: ann\n---\nHi.\n```", "---\nto: ann\n---\nHi.\n"},
		{"```\n[NARRATIVE]\n\nRain.\n```\n", "[NARRATIVE]\n\nRain.\n"},
		{"```go\nx := 1\n``` and more", "```go\nx := 1\n``` and more"},
		{"``` two words\nx\n```", "``` two words\nx\n```"},
	} {
		if got := unfence(tc.in); got != tc.want {
			t.Errorf("unfence(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzUnfence: what the model wrote is taken out of its fence, never
// changed: the message parley parses is a part of the answer as written.
func FuzzUnfence(f *testing.F) {
	for _, s := range []string{"```\nx\n```", "```md\n---\nto: a\n---\nb\n```\n", "plain", "```", "```\n```", "\n```\n\n```\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := unfence(s); !strings.Contains(s, got) {
			t.Fatalf("unfence(%q) = %q, not a part of it", s, got)
		}
	})
}
