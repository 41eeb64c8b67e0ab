package campaigns

import (
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// The questions of a table that wait for the person at a seat.
const (
	AskPlayerType    = "ASK_PLAYER"     // the game master asks the person
	RelayToHumanType = "RELAY_TO_HUMAN" // a player's agent asks the person to decide for its character
	GMToPlayerType   = "GM_TO_PLAYER"   // the game master prompts a character
	// JournalCheckpointType is the team lead's call for journal entries:
	// the person's to write when no program plays their character.
	JournalCheckpointType = "JOURNAL_CHECKPOINT"
)

// What a person's character says at a seat (/say, /whisper).
const (
	PlayerToGMType     = "PLAYER_TO_GM"     // to the game master
	PlayerToPlayerType = "PLAYER_TO_PLAYER" // to another character
)

// SeatSaid decides, for parley play and the web Seat page alike, whether
// m, sent by the agent of the person's character, is something the
// character said that every seat of the person shows: a [PLAYER_TO_GM]
// or [PLAYER_TO_PLAYER] that answers nothing (an answer, reply_to:, is
// told with the question it answers).
func SeatSaid(m *mailbox.Message) bool {
	if m.Header().Has("reply_to") {
		return false
	}
	typ := strings.Trim(m.Header().Text("type"), "[] ") // as workspace.TypeOf reads it
	return typ == PlayerToGMType || typ == PlayerToPlayerType
}

// SeatAnswerer decides, for parley play, parley answer and the web Seat
// page alike, whether a message of type typ waits for the answer of the
// person at a seat, and as which agent they answer it. holders are the
// seat's inboxes that hold a copy: the person's own, and prompted's, the
// agent of the person's character when no program plays it ("" when a
// program does, or no character is known). A question or a relay waits,
// answered as the person when their inbox holds it; a prompt waits only
// in prompted's inbox (a prompt to another's character, copied to the
// person, is theirs to read, not to answer). It returns "" when the
// message asks nothing of the person, or no person is seated.
func SeatAnswerer(typ string, holders []string, person, prompted string) string {
	if person == "" || len(holders) == 0 {
		return ""
	}
	switch typ {
	case AskPlayerType, RelayToHumanType:
		if slices.Contains(holders, person) {
			return person
		}
		return holders[0]
	case GMToPlayerType:
		if prompted != "" && slices.Contains(holders, prompted) {
			return prompted
		}
	}
	return ""
}

// SeatJournals decides, for parley play and the web Seat page alike,
// whether a message of type typ asks the person at a seat for their
// character's journal entry (written with /journal ENTRY): a
// [JOURNAL_CHECKPOINT], when no program plays the character (prompted
// is its agent; "" when a program plays it, or no character is known).
func SeatJournals(typ, prompted string) bool {
	return typ == JournalCheckpointType && prompted != ""
}

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

// RelayOptionsHeading is the section of a [RELAY_TO_HUMAN] whose list
// items are options the person may pick by number.
const RelayOptionsHeading = "Suggested Options"

// RelayLine is one line of a [RELAY_TO_HUMAN]'s body, as a seat shows it.
type RelayLine struct {
	Heading string // the text of a "## " heading; "" on other lines
	Option  int    // the number (from 1) of a list item under ## Suggested Options; 0 on other lines
	Text    string // the option's text, or the line as it is
}

// RelayLines reads the body of a [RELAY_TO_HUMAN] line by line: its
// "## " headings, the list items under ## Suggested Options numbered
// from 1 (in any letter case of the heading), and every other line as
// it is. Leading and trailing blank lines are left out. It is the one
// rule of what a relay's options are: RelayOptions follows it.
func RelayLines(body string) []RelayLine {
	var out []RelayLine
	section, n := "", 0
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(h)
			out = append(out, RelayLine{Heading: section, Text: line})
			continue
		}
		if item, ok := listItem(line); ok && strings.EqualFold(section, RelayOptionsHeading) {
			n++
			out = append(out, RelayLine{Option: n, Text: item})
			continue
		}
		out = append(out, RelayLine{Text: line})
	}
	return out
}

// RelayOptions returns the options of a [RELAY_TO_HUMAN], in order: the
// list items under its ## Suggested Options, as RelayLines numbers them.
func RelayOptions(body string) []string {
	var out []string
	for _, l := range RelayLines(body) {
		if l.Option > 0 {
			out = append(out, l.Text)
		}
	}
	return out
}

// listItem returns the text of a markdown list item ("- x", "* x",
// "+ x", "1. x", "1) x").
func listItem(line string) (string, bool) {
	l := strings.TrimSpace(line)
	for _, p := range []string{"- ", "* ", "+ "} {
		if rest, ok := strings.CutPrefix(l, p); ok && strings.TrimSpace(rest) != "" {
			return strings.TrimSpace(rest), true
		}
	}
	if i := strings.IndexAny(l, ".)"); i > 0 && i+1 < len(l) && l[i+1] == ' ' {
		if _, err := strconv.Atoi(l[:i]); err == nil && strings.TrimSpace(l[i+1:]) != "" {
			return strings.TrimSpace(l[i+1:]), true
		}
	}
	return "", false
}
