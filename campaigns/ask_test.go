package campaigns

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

func TestAskOptions(t *testing.T) {
	tests := []struct {
		name, msg string
		want      []Option
	}{
		{"mappings", "---\nfrom: gm\ntype: ASK_PLAYER\n---\n[ASK_PLAYER]\nquestion: Which way?\noptions:\n  - label: Left\n    description: The dark one\n  - label: Right\n", []Option{{"Left", "The dark one"}, {"Right", ""}}},
		{"strings", "---\nfrom: gm\ntype: ASK_PLAYER\n---\n[ASK_PLAYER]\nquestion: Which way?\noptions: [Left, Right]\n", []Option{{"Left", ""}, {"Right", ""}}},
		{"none", "---\nfrom: gm\ntype: ASK_PLAYER\n---\n[ASK_PLAYER]\nquestion: Well?\n", nil},
		{"not a list", "---\nfrom: gm\ntype: ASK_PLAYER\n---\n[ASK_PLAYER]\noptions: Left\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mailbox.Parse([]byte(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, AskOptions(m)); diff != "" {
				t.Errorf("AskOptions() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
