package delta_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/campaigns/delta"
)

// entry is what a test says of a parsed entry.
type entry struct {
	Line    int
	Keyword delta.Keyword
	Word    string
	Text    string
	More    []string
	Err     error // the reason, a sentinel
}

func entries(d *delta.Delta) []entry {
	var out []entry
	for _, e := range d.Entries {
		got := entry{Line: e.Line, Keyword: e.Keyword, Word: e.Word, Text: e.Text, More: e.More}
		var le *delta.LineError
		if errors.As(e.Err, &le) {
			got.Err = le.Err
		} else if e.Err != nil {
			got.Err = e.Err
		}
		out = append(out, got)
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []entry
	}{
		{"every keyword", "- NPC: Wiven Mirsk - a fence\n- QUEST: Find Tomlin\n- LOCATION: The Sewers\n- SITUATION: At the grate.\n" +
			"- SECRET: Wiven lies\n- UPCOMING: A raid\n- LEARNED: The rot spreads\n- Party HP: tilda-brannock 8/12\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "Wiven Mirsk - a fence"},
			{Line: 2, Keyword: delta.Quest, Word: "QUEST", Text: "Find Tomlin"},
			{Line: 3, Keyword: delta.Location, Word: "LOCATION", Text: "The Sewers"},
			{Line: 4, Keyword: delta.Situation, Word: "SITUATION", Text: "At the grate."},
			{Line: 5, Keyword: delta.Secret, Word: "SECRET", Text: "Wiven lies"},
			{Line: 6, Keyword: delta.Upcoming, Word: "UPCOMING", Text: "A raid"},
			{Line: 7, Keyword: delta.Learned, Word: "LEARNED", Text: "The rot spreads"},
			{Line: 8, Keyword: delta.PartyHP, Word: "Party HP", Text: "tilda-brannock 8/12"},
		}},
		{"bullets, case and bold", "* npc: A\n+ Quest: B\nLocation: C\n1. **SECRET**: D\n2) **Upcoming:** E\n- __learned__: F\n- PARTY_HP: g 1/2\n- NPCs: H\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "npc", Text: "A"},
			{Line: 2, Keyword: delta.Quest, Word: "Quest", Text: "B"},
			{Line: 3, Keyword: delta.Location, Word: "Location", Text: "C"},
			{Line: 4, Keyword: delta.Secret, Word: "SECRET", Text: "D"},
			{Line: 5, Keyword: delta.Upcoming, Word: "Upcoming", Text: "E"},
			{Line: 6, Keyword: delta.Learned, Word: "learned", Text: "F"},
			{Line: 7, Keyword: delta.PartyHP, Word: "PARTY_HP", Text: "g 1/2"},
			{Line: 8, Keyword: delta.NPC, Word: "NPCs", Text: "H"},
		}},
		{"ignored lines", "# Delta for session 3\n\n## NPCs\n<!-- written by the GM -->\n<!--\n- NPC: inside a comment\n-->\n---\n-\n- NPC: A\n", []entry{
			{Line: 10, Keyword: delta.NPC, Word: "NPC", Text: "A"},
		}},
		{"continuation lines", "- SITUATION: At the grate.\n  **Time**: Midnight\n\n  Rain falls.\n- NPC: Wiven Mirsk\n    - owes the Guild\n      - a lot\n- Party HP:\n  - Tilda Brannock: 8/12\n  - corwin-voss 9/9\n", []entry{
			{Line: 1, Keyword: delta.Situation, Word: "SITUATION", Text: "At the grate.", More: []string{"**Time**: Midnight", "", "Rain falls."}},
			{Line: 5, Keyword: delta.NPC, Word: "NPC", Text: "Wiven Mirsk", More: []string{"- owes the Guild", "  - a lot"}},
			{Line: 8, Keyword: delta.PartyHP, Word: "Party HP", Text: "", More: []string{"- Tilda Brannock: 8/12", "- corwin-voss 9/9"}},
		}},
		{"text on the next line", "- SECRET:\n  Wiven lies\n  to everyone\n", []entry{
			{Line: 1, Keyword: delta.Secret, Word: "SECRET", Text: "Wiven lies", More: []string{"to everyone"}},
		}},
		{"a heading ends an entry", "- NPC: A\n## More\n  - NPC: B\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "A"},
			{Line: 3, Keyword: delta.NPC, Word: "NPC", Text: "B"},
		}},
		{"indented throughout", "  - NPC: A\n  - NPC: B\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "A"},
			{Line: 2, Keyword: delta.NPC, Word: "NPC", Text: "B"},
		}},
		{"lines without keyword", "The Watch will not help.\n- Note: Lysara lied\n- **Tilda Brannock**: 8/12\n- Corwin Voss: 9/9 (poisoned)\n- **Bold text** and more\n", []entry{
			{Line: 1, Keyword: delta.Learned, Text: "The Watch will not help."},
			{Line: 2, Keyword: delta.Learned, Text: "Note: Lysara lied"},
			{Line: 3, Keyword: delta.PartyHP, Text: "**Tilda Brannock**: 8/12"},
			{Line: 4, Keyword: delta.PartyHP, Text: "Corwin Voss: 9/9 (poisoned)"},
			{Line: 5, Keyword: delta.Learned, Text: "**Bold text** and more"},
		}},
		{"unknown keywords", "- MONSTER: a ghoul\n- **Weather**: rain\n- TODO: fix\n", []entry{
			{Line: 1, Word: "MONSTER", Text: "a ghoul", Err: delta.ErrUnknownKeyword},
			{Line: 2, Word: "Weather", Text: "rain", Err: delta.ErrUnknownKeyword},
			{Line: 3, Word: "TODO", Text: "fix", Err: delta.ErrUnknownKeyword},
		}},
		{"lines naming nothing", "- NPC:\n- QUEST: - no name\n- SECRET:\n- SITUATION:\n- Party HP:\n- Party HP: Tilda\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Err: delta.ErrEmpty},
			{Line: 2, Keyword: delta.Quest, Word: "QUEST", Text: "- no name", Err: delta.ErrEmpty},
			{Line: 3, Keyword: delta.Secret, Word: "SECRET", Err: delta.ErrEmpty},
			{Line: 4, Keyword: delta.Situation, Word: "SITUATION", Err: delta.ErrEmpty},
			{Line: 5, Keyword: delta.PartyHP, Word: "Party HP", Err: delta.ErrEmpty},
			{Line: 6, Keyword: delta.PartyHP, Word: "Party HP", Text: "Tilda", Err: delta.ErrHP},
		}},
		{"structure", "- NPC: A\n  ## Not a section\n- SITUATION: ```\n- SECRET: s\n  ~~~\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "A", More: []string{"## Not a section"}, Err: delta.ErrStructure},
			{Line: 3, Keyword: delta.Situation, Word: "SITUATION", Text: "```", Err: delta.ErrStructure},
			{Line: 4, Keyword: delta.Secret, Word: "SECRET", Text: "s", More: []string{"~~~"}, Err: delta.ErrStructure},
		}},
		{"crlf and bom", "\ufeff- NPC: A\r\n  - more\r\n\r\n- QUEST: B\r\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "A", More: []string{"- more"}},
			{Line: 4, Keyword: delta.Quest, Word: "QUEST", Text: "B"},
		}},
		{"tabs", "-\tNPC:\tA\n\t- more\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "A", More: []string{"- more"}},
		}},
		// Bug: an indented keyword line was a continuation line of the
		// entry above, so a SECRET under a LEARNED reached the players.
		{"indented keyword lines are entries", "- LOCATION: The Sewers - dark\n  - SECRET: the cult meets here\n- LEARNED: Tomlin is alive\n  SECRET: Thane is blackmailed\n", []entry{
			{Line: 1, Keyword: delta.Location, Word: "LOCATION", Text: "The Sewers - dark"},
			{Line: 2, Keyword: delta.Secret, Word: "SECRET", Text: "the cult meets here"},
			{Line: 3, Keyword: delta.Learned, Word: "LEARNED", Text: "Tomlin is alive"},
			{Line: 4, Keyword: delta.Secret, Word: "SECRET", Text: "Thane is blackmailed"},
		}},
		{"lines after an indented entry", "- NPC: Wiven\n  - **Secret**: he lies\n    to everyone\n\n  - owes the Guild\n    [upcoming] the Guild collects\n  - and fears it\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "Wiven", More: []string{"- owes the Guild", "- and fears it"}},
			{Line: 2, Keyword: delta.Secret, Word: "Secret", Text: "he lies", More: []string{"to everyone"}},
			{Line: 6, Keyword: delta.Upcoming, Word: "upcoming", Text: "the Guild collects"},
		}},
		{"indented lines that are not entries", "- Party HP:\n  - Tilda Brannock: 8/12\n  Corwin: 9/9\n  - UPCOMING: a raid\n- SITUATION:\n  **Location**: The grate\n  **Time**: Midnight\n  - NPC: Wiven - waiting\n", []entry{
			{Line: 1, Keyword: delta.PartyHP, Word: "Party HP", More: []string{"- Tilda Brannock: 8/12", "Corwin: 9/9"}},
			{Line: 4, Keyword: delta.Upcoming, Word: "UPCOMING", Text: "a raid"},
			{Line: 5, Keyword: delta.Situation, Word: "SITUATION", More: []string{"**Location**: The grate", "**Time**: Midnight"}},
			{Line: 8, Keyword: delta.NPC, Word: "NPC", Text: "Wiven - waiting"},
		}},
		{"a bold keyword under an entry is its field", "- NPC: Wiven - a fence\n  - **Location**: the docks\n  - **Quest**: none\n  - **Secret**: works for the cult\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "Wiven - a fence", More: []string{"- **Location**: the docks", "- **Quest**: none"}},
			{Line: 4, Keyword: delta.Secret, Word: "Secret", Text: "works for the cult"},
		}},
		// Bug: these spellings were lines without keyword, LEARNED.
		{"keyword spellings", "- SECRET - a\n- [SECRET] b\n- **SECRET** c\n- Secret — d\n- upcoming – e\n- [Party HP]: tilda 1/2\n- **Quest -** f\n- NPC\t-\tTab Tom\n- [ ] SECRET: g\n" +
			"- Secret-keeper Ilse - a woman\n- MONSTER - ghoul\n- The Sewers — dark\n- Secret passages run under the docks\n", []entry{
			{Line: 1, Keyword: delta.Secret, Word: "SECRET", Text: "a"},
			{Line: 2, Keyword: delta.Secret, Word: "SECRET", Text: "b"},
			{Line: 3, Keyword: delta.Secret, Word: "SECRET", Text: "c"},
			{Line: 4, Keyword: delta.Secret, Word: "Secret", Text: "d"},
			{Line: 5, Keyword: delta.Upcoming, Word: "upcoming", Text: "e"},
			{Line: 6, Keyword: delta.PartyHP, Word: "Party HP", Text: "tilda 1/2"},
			{Line: 7, Keyword: delta.Quest, Word: "Quest", Text: "f"},
			{Line: 8, Keyword: delta.NPC, Word: "NPC", Text: "Tab Tom"},
			{Line: 9, Keyword: delta.Learned, Text: "[ ] SECRET: g"}, // ApplyParty refuses it
			{Line: 10, Keyword: delta.Learned, Text: "Secret-keeper Ilse - a woman"},
			{Line: 11, Keyword: delta.Learned, Text: "MONSTER - ghoul"},
			{Line: 12, Keyword: delta.Learned, Text: "The Sewers — dark"},
			{Line: 13, Keyword: delta.Learned, Text: "Secret passages run under the docks"},
		}},
		{"keyword spellings naming nothing", "- [SECRET]\n- NPC -\n- **Upcoming** —\n", []entry{
			{Line: 1, Keyword: delta.Secret, Word: "SECRET", Err: delta.ErrEmpty},
			{Line: 2, Keyword: delta.NPC, Word: "NPC", Err: delta.ErrEmpty},
			{Line: 3, Keyword: delta.Upcoming, Word: "Upcoming", Err: delta.ErrEmpty},
		}},
		// Bug: the name was not split at a tab-separated "-".
		{"tab-separated name", "- NPC:\tTab Tom\t-\tdesc\n- QUEST: -\tnothing\n", []entry{
			{Line: 1, Keyword: delta.NPC, Word: "NPC", Text: "Tab Tom\t-\tdesc"},
			{Line: 2, Keyword: delta.Quest, Word: "QUEST", Text: "-\tnothing", Err: delta.ErrEmpty},
		}},
		{"empty", "", nil},
		{"comments only", "# nothing today\n\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := delta.Parse("tmp/gm-state-delta.md", []byte(tc.text))
			if d == nil {
				t.Fatalf("Parse(%q) = nil, %v", tc.text, err)
			}
			if diff := cmp.Diff(tc.want, entries(d), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse(%q) entries (-want +got):\n%s", tc.text, diff)
			}
			var wantErrs int
			for _, e := range tc.want {
				if e.Err != nil {
					wantErrs++
				}
			}
			if (err != nil) != (wantErrs > 0) {
				t.Errorf("Parse(%q) error = %v, want one for each of %d bad entries", tc.text, err, wantErrs)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	text := "# delta\n- NPC: Wiven Mirsk\n\n- MONSTER: ghoul\n- NPC:\nthe watch lies\n"
	d, err := delta.Parse("tmp/gm-state-delta.md", []byte(text))
	want := `tmp/gm-state-delta.md:4: keyword "MONSTER": unknown (known: NPC, QUEST, LOCATION, SITUATION, SECRET, UPCOMING, LEARNED, Party HP)` + "\n" +
		`tmp/gm-state-delta.md:5: keyword "NPC": names nothing`
	if err == nil || err.Error() != want {
		t.Fatalf("Parse error = %v, want\n%s", err, want)
	}
	if !errors.Is(err, delta.ErrUnknownKeyword) || !errors.Is(err, delta.ErrEmpty) {
		t.Errorf("Parse error %v: errors.Is ErrUnknownKeyword, ErrEmpty = false, want true", err)
	}
	var le *delta.LineError
	if !errors.As(d.Entries[1].Err, &le) || le.Line != 4 || le.Keyword != "MONSTER" || le.Text != "ghoul" || le.File != "tmp/gm-state-delta.md" {
		t.Errorf("entry 2 Err = %#v, want a *LineError for line 4, MONSTER, ghoul", d.Entries[1].Err)
	}
	if len(d.Entries) != 4 {
		t.Errorf("Parse gave %d entries, want all 4 (the bad ones too)", len(d.Entries))
	}
	le = &delta.LineError{File: "tmp/x.md", Line: 6, Text: "the watch lies", Err: delta.ErrMisplaced}
	if got, want := le.Error(), `tmp/x.md:6: "the watch lies": not for this file`; got != want {
		t.Errorf("LineError.Error() = %q, want %q", got, want)
	}
}
