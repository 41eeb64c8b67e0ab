package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/llm"
)

func TestConversationRoundTrip(t *testing.T) {
	c := &llm.Conversation{Agent: "gm", Dropped: 3, DroppedTokens: 120, Turns: []llm.Turn{
		{Role: llm.RoleUser, Text: "---\nfrom: ann\n---\nI look.\n"},
		{Role: llm.RoleAssistant, Text: "A fence inside:\n```\ncode\n````\n"},
		{Role: llm.RoleUser, Text: ""},
	}}
	data := c.Bytes()
	got, err := llm.ParseConversation("c.md", data)
	if err != nil {
		t.Fatalf("ParseConversation(%q) = %v", data, err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("ParseConversation(Bytes()) = %+v, want %+v\n%s", got, c, data)
	}
}

func TestConversationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"no title", "## user\n", 1, "# conversation"},
		{"stray text", "# conversation: gm\n\nhello\n", 3, "## user or ## assistant"},
		{"no fence", "# conversation: gm\n\n## user\n\ntext\n", 5, "fenced block"},
		{"unclosed", "# conversation: gm\n\n## assistant\n\n```\ntext\n", 5, "not closed"},
		{"no text", "# conversation: gm\n\n## user\n", 3, "no text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.ParseConversation("c.md", []byte(tc.text))
			var ce *llm.ConversationError
			if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseConversation = %v, want line %d saying %q", err, tc.line, tc.want)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	c := &llm.Conversation{Agent: "gm"}
	for range 10 {
		c.Turns = append(c.Turns, llm.Turn{Role: llm.RoleUser, Text: strings.Repeat("x", 400)}) // 100 tokens
	}
	c.Trim(350)
	if len(c.Turns) != 3 || c.Dropped != 7 || c.DroppedTokens != 700 {
		t.Errorf("Trim(350) left %d turns, dropped %d (%d tokens); want 3, 7 (700)", len(c.Turns), c.Dropped, c.DroppedTokens)
	}
	c.Trim(10)
	if len(c.Turns) != 1 {
		t.Errorf("Trim(10) left %d turns, want the newest kept", len(c.Turns))
	}
}

// FuzzConversation checks that any file either is refused or reads back
// the same once parley writes it again: nothing is lost nor changed by a
// save.
func FuzzConversation(f *testing.F) {
	f.Add([]byte((&llm.Conversation{Agent: "gm", Dropped: 1, DroppedTokens: 5, Turns: []llm.Turn{{Role: "user", Text: "hi\n"}, {Role: "assistant", Text: "```\nx\n```\n"}}}).Bytes()))
	f.Add([]byte("# conversation: gm\n"))
	f.Add([]byte("# conversation: gm\r\n\r\n## user\r\n\r\n```\r\na\r\n```\r\n"))
	f.Add([]byte("# conversation: gm\n\ndropped: 0 turns, about 9 tokens\n\n## assistant\n\n````  \n```\n````\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := llm.ParseConversation("c.md", data)
		if err != nil {
			return
		}
		again, err := llm.ParseConversation("c.md", c.Bytes())
		if err != nil {
			t.Fatalf("parley's own file does not read back: %v\n%q", err, c.Bytes())
		}
		if c.Agent == "" && len(c.Turns) == 0 && c.Dropped == 0 {
			return
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("read back %+v, want %+v\n%q", again, c, c.Bytes())
		}
	})
}
