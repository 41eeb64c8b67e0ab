// Package agents holds the D&D table's built-in agents: Go handlers that
// answer messages by changing campaign files — the scribe that keeps the
// scenes, the journal keeper, the state writer that applies the GM's
// deltas, and the game master's tools. Each handles one message at a time
// and knows nothing of the runner: cmd/parley registers them.
package agents

import (
	"os"
	"strings"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
)

// Campaigns finds the campaign a message is about: the one its campaign
// field names, else Default, else the workspace's only campaign.
type Campaigns struct {
	Workspace string // the workspace root
	Default   string // campaign: in parley.yaml; may be empty
}

// For returns the campaign of a message.
func (c Campaigns) For(m *mailbox.Message) (*campaigns.Campaign, error) {
	name, _ := m.Payload().Get("campaign")
	if name == "" {
		name = c.Default
	}
	return campaigns.Find(c.Workspace, strings.TrimSpace(name))
}

// typeOf returns a message's type without the brackets of its tag.
func typeOf(m *mailbox.Message) string {
	t, _ := m.Header().Get("type")
	return strings.Trim(t, "[] ")
}

// field returns a protocol field, trimmed.
func field(m *mailbox.Message, key string) string {
	v, _ := m.Payload().Get(key)
	return strings.TrimSpace(v)
}

// direct reports whether a message was sent to one agent by name (to:
// with one name, not "*"): a message its handler should answer even when
// it has nothing to do with it, where a broadcast is passed over quietly.
func direct(m *mailbox.Message) bool {
	to, err := m.Header().Names("to")
	return err == nil && len(to) == 1 && to[0] != "*"
}

// playerOf returns the character the sender of a message plays: the one
// players maps it to, else the character whose sheet is named after the
// sender (an agent named tilda-brannock plays Tilda), else "".
func playerOf(in *mailbox.Message, players map[string]string, camp *campaigns.Campaign) string {
	from, _ := in.Header().Get("from")
	if c := players[from]; c != "" {
		return c
	}
	if campaigns.ValidName(from) == nil {
		if _, err := os.Stat(camp.SheetPath(from)); err == nil {
			return from
		}
	}
	return ""
}
