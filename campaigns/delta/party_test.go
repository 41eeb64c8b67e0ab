package delta_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/delta"
)

// TestCheckParty: bug (a GM's tryout): Party HP lines were written
// without a look at the sheets: "tilda-branock 9/14" (a misspelt
// character) was written anyway, a stray line to delete by hand, and
// "30/14" (over the sheet's maximum) passed without a word. A character
// the party has no sheet of is kept, with the name that comes closest;
// hit points over the maximum are said.
func TestCheckParty(t *testing.T) {
	party := delta.Party{"tilda-brannock": 14, "grimjaw-ironforge": 20}
	for _, tc := range []struct {
		name, text string
		party      delta.Party
		kept, warn []string
	}{
		{name: "known names, in any spelling", party: party,
			text: "- Party HP: tilda-brannock 9/14\n- Party HP: Tilda Brannock: 9/14\n- HP: tilda 3/14, Grimjaw 20/20\n"},
		{name: "a misspelt name is kept, with the nearest", party: party,
			text: "- Party HP: tilda-branock 9/14\n- Party HP: Grimjw: 9/20\n",
			kept: []string{
				`tmp/gm-state-delta.md:1: keyword "Party HP": no sheet in party/ for "tilda-branock" (did you mean tilda-brannock?)`,
				`tmp/gm-state-delta.md:2: keyword "Party HP": no sheet in party/ for "Grimjw" (did you mean grimjaw-ironforge?)`,
			}},
		{name: "a stranger is kept, the party named", party: party,
			text: "- Party HP:\n  - tilda 9/14\n  - Mira Voss: 3/8\n",
			kept: []string{`tmp/gm-state-delta.md:1: keyword "Party HP": no sheet in party/ for "Mira Voss" (characters: grimjaw-ironforge, tilda-brannock)`}},
		{name: "over the maximum: said", party: party,
			text: "- Party HP: tilda-brannock 30/14\n- Party HP: grimjaw 12/10\n",
			warn: []string{
				`tmp/gm-state-delta.md:1: keyword "Party HP": tilda-brannock 30/14: hit points over the maximum, 14 on its sheet`,
				`tmp/gm-state-delta.md:2: keyword "Party HP": grimjaw-ironforge 12/10: hit points over the maximum, 10 as the line gives it`,
			}},
		{name: "no sheet at all: said, not kept", party: delta.Party{},
			text: "- Party HP: mira-voss 9/14\n",
			warn: []string{`tmp/gm-state-delta.md:1: keyword "Party HP": no sheet in party/ for "mira-voss" (no character has a sheet)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := delta.Parse(delta.StoryDelta, []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			var warn, kept []string
			for _, w := range d.CheckParty(tc.party) {
				if !errors.Is(w, delta.ErrOverMax) && !errors.Is(w, delta.ErrNoCharacter) {
					t.Errorf("warning %v wraps neither ErrOverMax nor ErrNoCharacter", w)
				}
				warn = append(warn, w.Error())
			}
			for _, le := range delta.Refused(delta.StoryDelta, d) {
				if !errors.Is(le, delta.ErrNoCharacter) {
					t.Errorf("kept %v: errors.Is ErrNoCharacter = false", le)
				}
				kept = append(kept, le.Error())
			}
			if diff := cmp.Diff(tc.kept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warn, warn); diff != "" {
				t.Errorf("CheckParty warnings (-want +got):\n%s", diff)
			}
		})
	}
}
