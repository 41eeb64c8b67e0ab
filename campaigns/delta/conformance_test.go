package delta_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/delta"
)

// The campaign the conformance tests run on: a real one, read where the
// shared fixtures are checked out (MIT licensed; not copied here).
var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures", "campaigns", "the-rot-beneath")

// fixtureCampaign copies the fixture's story-state.md and
// party-knowledge.md into a new campaign directory, with deltas, and
// returns it and the two files' original text. It skips the test when the
// fixtures are absent.
func fixtureCampaign(t *testing.T, storyDelta, partyDelta string) (dir, story, party string) {
	t.Helper()
	s, err := os.ReadFile(filepath.Join(fixtureDir, "story-state.md"))
	if err != nil {
		t.Skipf("no fixture campaign: %v", err)
	}
	p, err := os.ReadFile(filepath.Join(fixtureDir, "party-knowledge.md"))
	if err != nil {
		t.Skipf("no fixture campaign: %v", err)
	}
	dir = campaign(t, map[string]string{
		delta.StoryFile: string(s), delta.PartyFile: string(p),
		delta.StoryDelta: storyDelta, delta.PartyDelta: partyDelta,
	})
	return dir, string(s), string(p)
}

// section is a "## " section of a file, heading line included; the part
// before the first has the title "".
type section struct{ Title, Text string }

func sections(s string) []section {
	out := []section{{}}
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "## ") {
			out = append(out, section{Title: strings.TrimSpace(l[3:])})
		}
		out[len(out)-1].Text += l
	}
	return out
}

// expect returns the sections of orig with the changes: a section named
// in edits has its text edited (old, new, old, new...), and a section in
// added comes after the section named by its key.
func expect(t *testing.T, orig string, edits map[string][]string, added map[string]section) []section {
	t.Helper()
	var out []section
	for _, s := range sections(orig) {
		if e, ok := edits[s.Title]; ok {
			s.Text = edit(t, s.Text, e...)
			delete(edits, s.Title)
		}
		out = append(out, s)
		if a, ok := added[s.Title]; ok {
			out = append(out, a)
		}
	}
	if len(edits) > 0 {
		t.Fatalf("expect: no sections %v", edits)
	}
	return out
}

const conformanceStoryDelta = `# Delta after scene 4: the sewer grate
- NPC: Wiven Mirsk - a nervous fence who owes the Guild
- QUEST: Find Tomlin Greer - Lysara's missing worker, last seen near the sewer grate
- LOCATION: The Sewers - dank tunnels under the Lower City
- SITUATION:
  **Location**: The sewer grate behind the Blushing Mermaid
  **Time**: Near midnight, rain
  **Immediate Context**: The party took Lysara's job and followed Wiven to the grate.
- SECRET: Wiven Mirsk sells what he hears to the Hollow Congregation
- UPCOMING: The cult moves the hollow charm out of the warehouse at midnight
- Party HP: tilda-brannock 8/12
- Party HP: Corwin Voss: 9/10

- npc: Wiven Mirsk - turned informant for the party
- MONSTER: a half-hollowed ghoul waits in the cistern
`

const conformancePartyDelta = `- SITUATION: We stand at the sewer grate behind the Blushing Mermaid, lanterns lit, rain falling.
- NPC: Wiven Mirsk - a fence who says he knows where Tomlin went
- QUEST: Find Tomlin Greer - Lysara's missing worker
- LOCATION: The Sewers
  - **What it is**: Dank tunnels under the Lower City
  - **What we found/did there**: Tomlin's boot, and a charm of bone
- LOCATION: The Blushing Mermaid - Lysara offered us the job here: 50gp now, 200gp each when it's done
- LEARNED: Wiven Mirsk owes the Guild money
The Watch will not go into the sewers.
`

func TestConformance(t *testing.T) {
	dir, story, party := fixtureCampaign(t, conformanceStoryDelta, conformancePartyDelta)
	rep, err := delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}

	wantStory := expect(t, story, map[string][]string{
		"Current Situation": {
			"**Location**: The Blushing Mermaid, Lower City, Baldur's Gate\n**Time**: Late evening, a damp autumn night\n**Immediate Context**: The party has been summoned by Lysara Vendrath's assistant to meet at the Blushing Mermaid for a job offer. They've received word that the pay is good and discretion is expected. Most have worked for Vendrath Holdings before in some capacity.\n",
			"**Location**: The sewer grate behind the Blushing Mermaid\n**Time**: Near midnight, rain\n**Immediate Context**: The party took Lysara's job and followed Wiven to the grate.\n",
		},
		"Active Quests": {
			"- [ ] None yet - campaign not started\n",
			"- [ ] Find Tomlin Greer - Lysara's missing worker, last seen near the sewer grate\n",
		},
		"Party Status": {
			"- Party not yet established\n",
			"- Tilda Brannock: 8/12\n- Corwin Voss: 9/10\n",
		},
		"NPC Relationships": {
			"| Flaming Fist | Indifferent | Refused to investigate |\n\n---\n\n",
			"| Flaming Fist | Indifferent | Refused to investigate |\n\n- Wiven Mirsk - turned informant for the party\n\n",
		},
		"GM Notes (Secret)": {
			"and is looking for allies\n", "and is looking for allies\n- Wiven Mirsk sells what he hears to the Hollow Congregation\n",
			"- The Guild will make contact if the party enters sewer territory\n", "- The Guild will make contact if the party enters sewer territory\n- The cult moves the hollow charm out of the warehouse at midnight\n",
		},
	}, map[string]section{
		"NPC Relationships": {"Locations", "## Locations\n\n- The Sewers - dank tunnels under the Lower City\n\n---\n\n"},
	})
	if d := cmp.Diff(wantStory, sections(read(t, dir, delta.StoryFile))); d != "" {
		t.Errorf("story-state.md by section (-want +got):\n%s", d)
	}

	wantParty := expect(t, party, map[string][]string{
		"Current Situation": {
			"**Location**: The Blushing Mermaid, Lower City, Baldur's Gate\n**Time**: Late evening, a damp autumn night\n**What's happening**: The party has been summoned to the Blushing Mermaid's back booth by Lysara Vendrath's assistant. They've received word of a job offer - good pay, discretion expected. Most have worked for Vendrath Holdings before in some capacity.\n",
			"We stand at the sewer grate behind the Blushing Mermaid, lanterns lit, rain falling.\n",
		},
		"Active Quests": {
			"- **Current progress**: About to receive full job details\n",
			"- **Current progress**: About to receive full job details\n\n### Find Tomlin Greer\n- Lysara's missing worker\n",
		},
		"NPCs We've Met": {
			"| Summoned us for a job through her assistant |\n",
			"| Summoned us for a job through her assistant |\n\n- Wiven Mirsk - a fence who says he knows where Tomlin went\n",
		},
		"Locations We've Visited": {
			"- **What we found/did there**: Current meeting location for job discussion\n",
			"- **What we found/did there**: Current meeting location for job discussion\n- Lysara offered us the job here: 50gp now, 200gp each when it's done\n",
			"where the rot first began to spread.\n",
			"where the rot first began to spread.\n\n### The Sewers\n- **What it is**: Dank tunnels under the Lower City\n- **What we found/did there**: Tomlin's boot, and a charm of bone\n",
		},
		"Important Information Learned": {
			"- The Watch says nothing at all\n",
			"- The Watch says nothing at all\n- Wiven Mirsk owes the Guild money\n- The Watch will not go into the sewers.\n",
		},
	}, nil)
	if d := cmp.Diff(wantParty, sections(read(t, dir, delta.PartyFile))); d != "" {
		t.Errorf("party-knowledge.md by section (-want +got):\n%s", d)
	}

	wantKept := "# parley: not applied to story-state.md: MONSTER: unknown keyword\n- MONSTER: a half-hollowed ghoul waits in the cistern\n"
	if got := read(t, dir, delta.StoryDelta); got != wantKept {
		t.Errorf("story delta after Apply = %q, want only the unknown line: %q", got, wantKept)
	}
	if got := read(t, dir, delta.PartyDelta); got != "<missing>" {
		t.Errorf("party delta after Apply = %q, want it removed", got)
	}

	wantReport := &delta.Report{Files: []delta.FileReport{{
		Delta: delta.StoryDelta, Target: delta.StoryFile, Outcome: delta.Partial,
		Applied: []delta.Change{
			{Line: 2, Keyword: delta.NPC, Entity: "Wiven Mirsk", Section: "NPC Relationships", Action: delta.Inserted},
			{Line: 3, Keyword: delta.Quest, Entity: "Find Tomlin Greer", Section: "Active Quests > Secondary Quests", Action: delta.Inserted,
				Note: `placeholder "[ ] None yet - campaign not started" replaced`},
			{Line: 4, Keyword: delta.Location, Entity: "The Sewers", Section: "Locations", Action: delta.Inserted, Created: true},
			{Line: 5, Keyword: delta.Situation, Section: "Current Situation", Action: delta.Replaced},
			{Line: 9, Keyword: delta.Secret, Section: "GM Notes (Secret) > Hidden Information", Action: delta.Inserted},
			{Line: 10, Keyword: delta.Upcoming, Section: "GM Notes (Secret) > Upcoming Planned Events", Action: delta.Inserted},
			{Line: 11, Keyword: delta.PartyHP, Entity: "Tilda Brannock", Section: "Party Status > Hit Points", Action: delta.Inserted,
				Note: `placeholder "Party not yet established" replaced`},
			{Line: 12, Keyword: delta.PartyHP, Entity: "Corwin Voss", Section: "Party Status > Hit Points", Action: delta.Inserted},
			{Line: 14, Keyword: delta.NPC, Entity: "Wiven Mirsk", Section: "NPC Relationships", Action: delta.Replaced},
		},
		Kept: []*delta.LineError{
			{File: delta.StoryDelta, Line: 15, Keyword: "MONSTER", Text: "a half-hollowed ghoul waits in the cistern", Err: delta.ErrUnknownKeyword},
		},
	}, {
		Delta: delta.PartyDelta, Target: delta.PartyFile, Outcome: delta.Done,
		Applied: []delta.Change{
			{Line: 1, Keyword: delta.Situation, Section: "Current Situation", Action: delta.Replaced},
			{Line: 2, Keyword: delta.NPC, Entity: "Wiven Mirsk", Section: "NPCs We've Met", Action: delta.Inserted},
			{Line: 3, Keyword: delta.Quest, Entity: "Find Tomlin Greer", Section: "Active Quests > Find Tomlin Greer", Action: delta.Inserted, Created: true},
			{Line: 4, Keyword: delta.Location, Entity: "The Sewers", Section: "Locations We've Visited > The Sewers", Action: delta.Inserted, Created: true},
			{Line: 7, Keyword: delta.Location, Entity: "The Blushing Mermaid", Section: "Locations We've Visited > The Blushing Mermaid", Action: delta.Inserted},
			{Line: 8, Keyword: delta.Learned, Section: "Important Information Learned", Action: delta.Inserted},
			{Line: 9, Keyword: delta.Learned, Section: "Important Information Learned", Action: delta.Inserted},
		},
	}}}
	if d := cmp.Diff(wantReport, rep, lineErrors); d != "" {
		t.Errorf("Apply report (-want +got):\n%s", d)
	}

	// The same deltas again change nothing: a delta applied twice (a crash
	// between writing the file and removing the delta) is harmless.
	storyAfter, partyAfter := read(t, dir, delta.StoryFile), read(t, dir, delta.PartyFile)
	for name, d := range map[string]string{delta.StoryDelta: conformanceStoryDelta, delta.PartyDelta: conformancePartyDelta} {
		os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(d), 0o644)
	}
	if _, err := delta.Apply(context.Background(), dir, delta.Options{}); err != nil {
		t.Fatalf("Apply again = %v", err)
	}
	if got := read(t, dir, delta.StoryFile); got != storyAfter {
		t.Errorf("story-state.md changed when applied again:\n%s", cmp.Diff(storyAfter, got))
	}
	if got := read(t, dir, delta.PartyFile); got != partyAfter {
		t.Errorf("party-knowledge.md changed when applied again:\n%s", cmp.Diff(partyAfter, got))
	}
}

// TestConformanceBoth sends every keyword to both files: each takes what
// it may, and no secret reaches the players.
func TestConformanceBoth(t *testing.T) {
	all := conformanceStoryDelta + "- LEARNED: Wiven Mirsk owes the Guild money\nThe Watch will not go into the sewers.\n"
	dir, _, _ := fixtureCampaign(t, all, all)
	rep, err := delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}
	var got [][]string
	for _, f := range rep.Files {
		var ks []string
		for _, k := range f.Kept {
			ks = append(ks, k.Error())
		}
		got = append(got, ks)
	}
	want := [][]string{{
		`tmp/gm-state-delta.md:15: keyword "MONSTER": unknown (known: NPC, QUEST, LOCATION, SITUATION, SECRET, UPCOMING, LEARNED, Party HP)`,
		`tmp/gm-state-delta.md:16: keyword "LEARNED": not for this file (put it in tmp/party-knowledge-delta.md)`,
		`tmp/gm-state-delta.md:17: "The Watch will not go into the sewers.": not for this file (put it in tmp/party-knowledge-delta.md)`,
	}, {
		`tmp/party-knowledge-delta.md:9: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		`tmp/party-knowledge-delta.md:10: keyword "UPCOMING": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		`tmp/party-knowledge-delta.md:11: keyword "Party HP": not for this file (put it in tmp/gm-state-delta.md)`,
		`tmp/party-knowledge-delta.md:12: keyword "Party HP": not for this file (put it in tmp/gm-state-delta.md)`,
		`tmp/party-knowledge-delta.md:15: keyword "MONSTER": unknown (known: NPC, QUEST, LOCATION, SITUATION, SECRET, UPCOMING, LEARNED, Party HP)`,
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("kept lines (-want +got):\n%s", d)
	}
	pk := read(t, dir, delta.PartyFile)
	for _, secret := range []string{"Hollow Congregation\n", "hollow charm", "8/12"} {
		if strings.Contains(pk, secret) {
			t.Errorf("party-knowledge.md holds %q", secret)
		}
	}
	wantKept := "# parley: not applied to party-knowledge.md: SECRET, UPCOMING: refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:); Party HP: not for this file (put it in tmp/gm-state-delta.md); MONSTER: unknown keyword\n" +
		"- SECRET: Wiven Mirsk sells what he hears to the Hollow Congregation\n" +
		"- UPCOMING: The cult moves the hollow charm out of the warehouse at midnight\n" +
		"- Party HP: tilda-brannock 8/12\n" +
		"- Party HP: Corwin Voss: 9/10\n" +
		"- MONSTER: a half-hollowed ghoul waits in the cistern\n"
	if d := cmp.Diff(wantKept, read(t, dir, delta.PartyDelta)); d != "" {
		t.Errorf("party delta after Apply (-want +got):\n%s", d)
	}
}
