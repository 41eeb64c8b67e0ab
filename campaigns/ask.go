package campaigns

import "github.com/parley-dev/parley/mailbox"

// Option is one option of a game master's question ([ASK_PLAYER]).
type Option struct {
	Label       string
	Description string // "" when the option is a plain string
}

// AskOptions returns the options of an [ASK_PLAYER], in order: each item
// of its options field, a mapping with label and description or a plain
// string; an item of any other shape is left out.
func AskOptions(m *mailbox.Message) []Option {
	var out []Option
	items, _ := m.Payload().Value("options").([]any)
	for _, it := range items {
		switch o := it.(type) {
		case map[string]any:
			label, _ := o["label"].(string)
			desc, _ := o["description"].(string)
			out = append(out, Option{Label: label, Description: desc})
		case string:
			out = append(out, Option{Label: o})
		}
	}
	return out
}
