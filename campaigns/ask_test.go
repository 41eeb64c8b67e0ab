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

func TestRelayOptions(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"items", "## Decision Needed\n\nFight or flee?\n\n## Suggested Options\n\n- Fight\n* Flee\n3. Parley\n4) Hide\n\n## Context\n\n- not an option\n", []string{"Fight", "Flee", "Parley", "Hide"}},
		{"heading in any case", "## suggested options\n- Fight\n", []string{"Fight"}},
		// The seat shows the body trimmed; the options it numbers are
		// the ones a number picks, the first line's heading included.
		{"heading on an indented first line", "  ## Suggested Options\n- Fight\n", []string{"Fight"}},
		{"none", "## Decision Needed\n\nWhat now?\n", nil},
		{"empty items", "## Suggested Options\n- \n-\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RelayOptions(tt.body)); diff != "" {
				t.Errorf("RelayOptions(%q) mismatch (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

func TestRelayLines(t *testing.T) {
	got := RelayLines("\n## Suggested Options\n- Fight\nOr else.\n- Flee\n")
	want := []RelayLine{
		{Heading: "Suggested Options", Text: "## Suggested Options"},
		{Option: 1, Text: "Fight"},
		{Text: "Or else."},
		{Option: 2, Text: "Flee"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RelayLines() mismatch (-want +got):\n%s", diff)
	}
}

// TestSeatAnswerer: what waits for the person at a seat, and as whom they
// answer it, for parley play, parley answer and the web Seat page alike.
func TestSeatAnswerer(t *testing.T) {
	for _, c := range []struct {
		typ, person, prompted string
		holders               []string
		want                  string
	}{
		{AskPlayerType, "tor", "", []string{"tor"}, "tor"},
		{RelayToHumanType, "tor", "aria", []string{"aria", "tor"}, "tor"}, // answered as the person
		{AskPlayerType, "tor", "aria", []string{"aria"}, "aria"},          // to the character's agent only
		{GMToPlayerType, "tor", "aria", []string{"tor", "aria"}, "aria"},  // as the character's agent
		{GMToPlayerType, "tor", "aria", []string{"tor"}, ""},              // another's character: read, not answered
		{GMToPlayerType, "tor", "", []string{"tor"}, ""},                  // a program plays the character
		{"NARRATIVE", "tor", "aria", []string{"tor"}, ""},                 // asks nothing
		{AskPlayerType, "", "", []string{"tor"}, ""},                      // nobody seated
		{AskPlayerType, "tor", "", nil, ""},                               // held nowhere
	} {
		if got := SeatAnswerer(c.typ, c.holders, c.person, c.prompted); got != c.want {
			t.Errorf("SeatAnswerer(%s, %v, %q, %q) = %q, want %q", c.typ, c.holders, c.person, c.prompted, got, c.want)
		}
	}
}
