package llm_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/llm"
)

// TestAnswerRead: the model's answer is read as a program's is
// (mailbox.ParseAnswer): a message in a fence is taken out of it; words
// before a header make plain text, which the log says, naming the line.
func TestAnswerRead(t *testing.T) {
	s := newStandin(t,
		step{Content: "```markdown\n---\nto: ann\nsummary: rain\n---\nRain falls.\n```"},
		step{Content: "Sure, here it is:\n\n---\nto: ann\n---\nThe door opens."},
		step{Content: "```go\nx := 1\n```"})
	ws := table(t, s.URL(), "")
	var logged bytes.Buffer
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Logger: slog.New(slog.NewTextHandler(&logged, nil)),
		Files: []string{filepath.Join(ws.Root, "gm-prompt.md")}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ summary, body string }{
		{"rain", "Rain falls.\n"},
		{"", "Sure, here it is:\n\n---\nto: ann\n---\nThe door opens."},
		{"", "```go\nx := 1\n```"}, // a fence holding no message is kept
	} {
		out, err := a.Handle(context.Background(), incoming(t, "Go on."))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 {
			t.Fatalf("answer %d: Handle = %d messages, want 1", i+1, len(out))
		}
		if got, _ := out[0].Header().Get("summary"); got != want.summary {
			t.Errorf("answer %d: summary = %q, want %q", i+1, got, want.summary)
		}
		if got := string(out[0].Body); got != want.body {
			t.Errorf("answer %d: body = %q, want %q", i+1, got, want.body)
		}
	}
	if got := logged.String(); strings.Count(got, "sent as plain text") != 1 || !strings.Contains(got, "a frontmatter header begins at line 3") {
		t.Errorf("log = %q, want one warning naming line 3", got)
	}
}
