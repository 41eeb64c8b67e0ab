package llm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/llm"
)

// TestKeptAsContext: messages the agent did not accept reach the model
// before the message to answer, each marked as context, and stay in its
// conversation file.
func TestKeptAsContext(t *testing.T) {
	s := newStandin(t, step{Content: "Noted."})
	ws := table(t, s.URL(), "")
	a := agent(t, ws)
	kept := incoming(t, "The bridge is out.")
	if _, err := a.Handle(context.Background(), incoming(t, "What now?"), kept); err != nil {
		t.Fatal(err)
	}
	msgs := messages(s.request(t, 0))
	if len(msgs) != 3 {
		t.Fatalf("request messages = %v, want system, the kept message, the message", msgs)
	}
	if got := msgs[1]["content"].(string); msgs[1]["role"] != "user" || !strings.HasPrefix(got, llm.KeptPrefix) || !strings.Contains(got, "The bridge is out.") {
		t.Errorf("kept message = %v %q, want a user turn marked as context", msgs[1]["role"], got)
	}
	if got := msgs[2]["content"].(string); !strings.Contains(got, "What now?") {
		t.Errorf("last message = %q, want the message to answer", got)
	}
	data, err := os.ReadFile(filepath.Join(ws.Root, "mailboxes", "gm", llm.ConversationFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.ParseConversation("conversation.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 3 || !strings.Contains(c.Turns[0].Text, "The bridge is out.") {
		t.Errorf("conversation = %+v, want the kept message, the message, the answer", c.Turns)
	}
}
