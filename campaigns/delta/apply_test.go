package delta_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/delta"
)

// story is a small story-state.md in the shape the GM's files have.
const story = `# Story State: Test

> **Last Updated**: Session 2

## Current Situation

**Location**: The docks
**Time**: Dusk

## Active Quests

- Find the ledger - Lysara wants it back

## Party Status

**Hit Points**:
- Tilda Brannock: 12/12
- **Corwin Voss**: 9/9

**Conditions/Effects**:
- None

## NPC Relationships

| NPC | Disposition |
|-----|-------------|
| Lysara Vendrath | Friendly |

---

## GM Notes (Secret)

### Hidden Information
- The ledger is forged

### Upcoming Planned Events
- The Fist raids the docks
`

// party is a small party-knowledge.md.
const party = `# Party Knowledge

**Last Updated**: Session 2

## Current Situation

**Location**: The docks

## Active Quests

### The Ledger (Pending)
- **Objective**: Find the ledger

## NPCs We've Met

| NPC | Who They Are |
|-----|--------------|
| Lysara Vendrath | Our employer |

## Locations We've Visited

### The Docks
- **What it is**: Piers and warehouses

## Important Information Learned

- The ledger was stolen
`

// edit returns s with each old string of pairs replaced by the new one
// after it; each must be there, once.
func edit(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("edit: %q is in the text %d times, want once", pairs[i], n)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func parse(t *testing.T, text string) *delta.Delta {
	t.Helper()
	d, _ := delta.Parse("tmp/delta.md", []byte(text))
	return d
}

func changes(res *delta.Result) []string {
	var out []string
	for _, c := range res.Applied {
		out = append(out, c.String())
	}
	return out
}

func kept(res *delta.Result) []string {
	var out []string
	for _, k := range res.Kept {
		out = append(out, k.Error())
	}
	return out
}

type applyCase struct {
	name  string
	doc   string
	delta string
	want  string   // the document after
	did   []string // the changes, as Change.String gives them
	kept  []string // the kept lines' errors
	// redo: the delta changes an entity twice, so applying it again
	// changes it twice again (to the same end).
	redo bool
}

func runApply(t *testing.T, apply func([]byte, *delta.Delta) ([]byte, *delta.Result), cases []applyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, res := apply([]byte(tc.doc), parse(t, tc.delta))
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Errorf("document (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.did, changes(res)); d != "" {
				t.Errorf("applied (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.kept, kept(res)); d != "" {
				t.Errorf("kept (-want +got):\n%s", d)
			}
			// A delta applied twice changes nothing the second time.
			again, res2 := apply(out, parse(t, tc.delta))
			if string(again) != string(out) {
				t.Errorf("applied twice (-once +twice):\n%s", cmp.Diff(string(out), string(again)))
			}
			for _, c := range res2.Applied {
				if c.Action != delta.Unchanged && !tc.redo {
					t.Errorf("applied twice: %s, want unchanged", c)
				}
			}
		})
	}
}

func TestApplyStory(t *testing.T) {
	runApply(t, delta.ApplyStory, []applyCase{{
		name:  "situation",
		doc:   story,
		delta: "- SITUATION: At the grate.\n  **Time**: Midnight\n\n  Rain.\n",
		want:  edit(t, story, "**Location**: The docks\n**Time**: Dusk\n", "At the grate.\n**Time**: Midnight\n\nRain.\n"),
		did:   []string{"line 1: SITUATION: replaced in Current Situation"},
	}, {
		name:  "npc after a table",
		doc:   story,
		delta: "- NPC: Wiven Mirsk - a fence\n",
		want:  edit(t, story, "| Lysara Vendrath | Friendly |\n", "| Lysara Vendrath | Friendly |\n\n- Wiven Mirsk - a fence\n"),
		did:   []string{`line 1: NPC "Wiven Mirsk": inserted in NPC Relationships`},
	}, {
		name:  "npc named in the table",
		doc:   story,
		delta: "- NPC: lysara vendrath - angry now\n",
		want:  edit(t, story, "| Lysara Vendrath | Friendly |\n", "| Lysara Vendrath | Friendly |\n\n- lysara vendrath - angry now\n"),
		did:   []string{`line 1: NPC "lysara vendrath": inserted in NPC Relationships; the table row for "Lysara Vendrath" is left as it is`},
	}, {
		name:  "npc inserted then upserted",
		doc:   story,
		delta: "- NPC: Wiven Mirsk - a fence\n- npc: WIVEN MIRSK: an informant\n",
		want:  edit(t, story, "| Lysara Vendrath | Friendly |\n", "| Lysara Vendrath | Friendly |\n\n- Wiven Mirsk: an informant\n"), // the file's spelling stays
		redo:  true,
		did: []string{
			`line 1: NPC "Wiven Mirsk": inserted in NPC Relationships`,
			`line 2: NPC "WIVEN MIRSK": replaced in NPC Relationships`,
		},
	}, {
		name:  "quest upserted by name",
		doc:   story,
		delta: "- QUEST: find the LEDGER - found, it is forged\n",
		want:  edit(t, story, "- Find the ledger - Lysara wants it back\n", "- Find the ledger - found, it is forged\n"),
		did:   []string{`line 1: QUEST "find the LEDGER": replaced in Active Quests`},
	}, {
		name:  "quest added",
		doc:   story,
		delta: "- QUEST: Find Tomlin - missing worker\n",
		want:  edit(t, story, "- Find the ledger - Lysara wants it back\n", "- Find the ledger - Lysara wants it back\n- Find Tomlin - missing worker\n"),
		did:   []string{`line 1: QUEST "Find Tomlin": inserted in Active Quests`},
	}, {
		name:  "location: a new section before the secret part",
		doc:   story,
		delta: "- LOCATION: The Sewers - dank\n",
		want:  edit(t, story, "| Lysara Vendrath | Friendly |\n\n---\n", "| Lysara Vendrath | Friendly |\n\n## Locations\n\n- The Sewers - dank\n\n---\n"),
		did:   []string{`line 1: LOCATION "The Sewers": inserted in Locations (new)`},
	}, {
		name:  "secret",
		doc:   story,
		delta: "- SECRET: Wiven works for the cult\n",
		want:  edit(t, story, "- The ledger is forged\n", "- The ledger is forged\n- Wiven works for the cult\n"),
		did:   []string{"line 1: SECRET: inserted in GM Notes (Secret) > Hidden Information"},
	}, {
		name:  "upcoming",
		doc:   story,
		delta: "- UPCOMING: A storm\n",
		want:  story + "- A storm\n",
		did:   []string{"line 1: UPCOMING: inserted in GM Notes (Secret) > Upcoming Planned Events"},
	}, {
		name:  "party hp",
		doc:   story,
		delta: "- Party HP: tilda-brannock 8/12\n- Party HP: Corwin Voss: 3/9 (poisoned, prone)\n- Party HP: seraphine-duskhollow 7/7\n",
		want: edit(t, story, "- Tilda Brannock: 12/12\n- **Corwin Voss**: 9/9\n",
			"- Tilda Brannock: 8/12\n- **Corwin Voss**: 3/9 (poisoned, prone)\n- Seraphine Duskhollow: 7/7\n"),
		did: []string{
			`line 1: Party HP "Tilda Brannock": replaced in Party Status > Hit Points`,
			`line 2: Party HP "Corwin Voss": replaced in Party Status > Hit Points`,
			`line 3: Party HP "Seraphine Duskhollow": inserted in Party Status > Hit Points`,
		},
	}, {
		name:  "party hp: a note a person wrote beside the numbers stays",
		doc:   strings.Replace(story, "- Tilda Brannock: 12/12\n", "- Tilda Brannock: 12/12 (blessed until dawn)\n", 1),
		delta: "- Party HP: tilda-brannock 8/12\n",
		want:  strings.Replace(story, "- Tilda Brannock: 12/12\n", "- Tilda Brannock: 8/12 (blessed until dawn)\n", 1),
		did:   []string{`line 1: Party HP "Tilda Brannock": replaced in Party Status > Hit Points`},
	}, {
		name:  "party hp: several on a line, a block, a line without keyword",
		doc:   story,
		delta: "- HP: Tilda 5/12, corwin-voss 1/9\n- Party HP:\n  - Gideon: 4/8\nSeraphine: 7/7\n",
		want: edit(t, story, "- Tilda Brannock: 12/12\n- **Corwin Voss**: 9/9\n",
			"- Tilda Brannock: 5/12\n- **Corwin Voss**: 1/9\n- Gideon: 4/8\n- Seraphine: 7/7\n"),
		did: []string{
			`line 1: Party HP "Tilda": replaced in Party Status > Hit Points`,
			`line 1: Party HP "Corwin Voss": replaced in Party Status > Hit Points`,
			`line 2: Party HP "Gideon": inserted in Party Status > Hit Points`,
			`line 4: Party HP "Seraphine": inserted in Party Status > Hit Points`,
		},
	}, {
		// Bug: an indented SECRET went under Locations with its parent.
		name:  "an indented secret goes to the GM notes",
		doc:   story,
		delta: "- LOCATION: The Sewers - dark\n  - SECRET: the cult meets here\n- NPC: Wiven\n  UPCOMING: Wiven runs\n",
		want: edit(t, story,
			"| Lysara Vendrath | Friendly |\n\n---\n", "| Lysara Vendrath | Friendly |\n\n- Wiven\n\n## Locations\n\n- The Sewers - dark\n\n---\n",
			"- The ledger is forged\n", "- The ledger is forged\n- the cult meets here\n",
			"- The Fist raids the docks\n", "- The Fist raids the docks\n- Wiven runs\n"),
		did: []string{
			`line 1: LOCATION "The Sewers": inserted in Locations (new)`,
			"line 2: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			`line 3: NPC "Wiven": inserted in NPC Relationships`,
			"line 4: UPCOMING: inserted in GM Notes (Secret) > Upcoming Planned Events",
		},
	}, {
		// Bug: these spellings were LEARNED, not secrets.
		name:  "secrets in other spellings",
		doc:   story,
		delta: "- SECRET - a\n- [SECRET] b\n- **Secret** c\n- secret — d\n- Secrets – e\n- UPCOMING - f\n",
		want: edit(t, story,
			"- The ledger is forged\n", "- The ledger is forged\n- a\n- b\n- c\n- d\n- e\n",
			"- The Fist raids the docks\n", "- The Fist raids the docks\n- f\n"),
		did: []string{
			"line 1: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			"line 2: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			"line 3: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			"line 4: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			"line 5: SECRET: inserted in GM Notes (Secret) > Hidden Information",
			"line 6: UPCOMING: inserted in GM Notes (Secret) > Upcoming Planned Events",
		},
	}, {
		name:  "kept: learned, no keyword, unknown",
		doc:   story,
		delta: "- LEARNED: x\nThe watch lies.\n- MONSTER: ghoul\n",
		want:  story,
		kept: []string{
			`tmp/delta.md:1: keyword "LEARNED": not for this file (put it in tmp/party-knowledge-delta.md)`,
			`tmp/delta.md:2: "The watch lies.": not for this file (put it in tmp/party-knowledge-delta.md)`,
			`tmp/delta.md:3: keyword "MONSTER": unknown (known: NPC, QUEST, LOCATION, SITUATION, SECRET, UPCOMING, LEARNED, Party HP)`,
		},
	}, {
		// Bug (a GM's tryout): a keyword without its colon was a line
		// without a keyword, "not for this file (put it in
		// tmp/party-knowledge-delta.md)": the advice sent the GM's
		// secret to the players' file.
		name:  "kept: a keyword without its colon",
		doc:   story,
		delta: "- NPC Oswin Crane - the miller who poisoned the well\n- secret the well\n- Party HP tilda 9/14\n- LEARNED the well\n",
		want:  story,
		kept: []string{
			`tmp/delta.md:1: keyword "NPC": missing its colon (did you mean "NPC: Oswin Crane - the miller who poisoned the well"?)`,
			`tmp/delta.md:2: keyword "secret": missing its colon (did you mean "SECRET: the well"?)`,
			`tmp/delta.md:3: keyword "Party HP": missing its colon (did you mean "Party HP: tilda 9/14"?)`,
			`tmp/delta.md:4: keyword "LEARNED": missing its colon (did you mean "LEARNED: the well"?); not for this file (put it in tmp/party-knowledge-delta.md)`,
		},
	}, {
		name:  "kept: names nothing",
		doc:   story,
		delta: "- NPC:\n- NPC: Wiven\n",
		want:  edit(t, story, "| Lysara Vendrath | Friendly |\n", "| Lysara Vendrath | Friendly |\n\n- Wiven\n"),
		did:   []string{`line 2: NPC "Wiven": inserted in NPC Relationships`},
		kept:  []string{`tmp/delta.md:1: keyword "NPC": names nothing`},
	}})
}

func TestApplyStoryPlaces(t *testing.T) {
	runApply(t, delta.ApplyStory, []applyCase{{
		name:  "fallback headings",
		doc:   "# S\n\n## Situation\n\nold\n\n## Quests\n\n## Key NPCs\n\n- Lysara - boss\n\n## Key Locations\n- The Docks\n",
		delta: "- SITUATION: new\n- QUEST: Q\n- NPC: lysara - ex-boss\n- LOCATION: The Sewers\n",
		want:  "# S\n\n## Situation\n\nnew\n\n## Quests\n\n- Q\n\n## Key NPCs\n\n- Lysara - ex-boss\n\n## Key Locations\n- The Docks\n- The Sewers\n",
		did: []string{
			"line 1: SITUATION: replaced in Situation",
			`line 2: QUEST "Q": inserted in Quests`,
			`line 3: NPC "lysara": replaced in Key NPCs`,
			`line 4: LOCATION "The Sewers": inserted in Key Locations`,
		},
	}, {
		name:  "headings in any case, odd spacing, a remark",
		doc:   "##   npc relationships  \n*   **Lysara Vendrath** - boss\n *  Wiven\n## ACTIVE QUESTS (2)\n1. One\n2. Two\n",
		delta: "- NPC: Lysara Vendrath - ex-boss\n- NPC: Tomlin\n- QUEST: Three\n",
		want:  "##   npc relationships  \n*   **Lysara Vendrath** - ex-boss\n *  Wiven\n * Tomlin\n## ACTIVE QUESTS (2)\n1. One\n2. Two\n3. Three\n",
		did: []string{
			`line 1: NPC "Lysara Vendrath": replaced in npc relationships`,
			`line 2: NPC "Tomlin": inserted in npc relationships`,
			`line 3: QUEST "Three": inserted in ACTIVE QUESTS (2)`,
		},
	}, {
		name:  "sections created in a file without secrets",
		doc:   "# S\n\nIntro.",
		delta: "- NPC: A\n- SITUATION: B\n- Party HP: c 1/2\n",
		want:  "# S\n\nIntro.\n\n## NPC Relationships\n\n- A\n\n## Current Situation\n\nB\n\n## Party Status\n\n**Hit Points**:\n- C: 1/2",
		did: []string{
			`line 1: NPC "A": inserted in NPC Relationships (new)`,
			"line 2: SITUATION: inserted in Current Situation (new)",
			`line 3: Party HP "C": inserted in Party Status > Hit Points (new)`,
		},
	}, {
		name:  "secret and upcoming in a file without GM notes",
		doc:   "# S\n\n## Current Situation\n\nHere.\n",
		delta: "- SECRET: s\n- UPCOMING: u\n- NPC: n\n",
		want:  "# S\n\n## Current Situation\n\nHere.\n\n## NPC Relationships\n\n- n\n\n---\n\n## GM Notes (Secret)\n\n### Hidden Information\n- s\n\n### Upcoming Planned Events\n- u\n",
		did: []string{
			"line 1: SECRET: inserted in GM Notes (Secret) > Hidden Information (new)",
			"line 2: UPCOMING: inserted in GM Notes (Secret) > Upcoming Planned Events (new)",
			`line 3: NPC "n": inserted in NPC Relationships (new)`,
		},
	}, {
		name:  "GM notes without subsections",
		doc:   "## GM Notes\n\nKeep it dark.\n",
		delta: "- SECRET: s\n- UPCOMING: u\n",
		want:  "## GM Notes\n\nKeep it dark.\n\n- s\n\n### Upcoming Planned Events\n- u\n",
		did: []string{
			"line 1: SECRET: inserted in GM Notes",
			"line 2: UPCOMING: inserted in GM Notes > Upcoming Planned Events (new)",
		},
	}, {
		name:  "empty sections of a new campaign",
		doc:   "## Current Situation\n\n## Active Quests\n\n## Party Status\n\n**Hit Points**:\n\n**Conditions/Effects**:\n- None\n\n## NPC Relationships\n\n---\n\n## GM Notes (Secret)\n\n### Hidden Information\n\n### Character Secrets\n",
		delta: "- SITUATION: s\n- QUEST: q\n- Party HP: t 1/1\n- NPC: n\n- SECRET: x\n",
		want:  "## Current Situation\n\ns\n\n## Active Quests\n\n- q\n\n## Party Status\n\n**Hit Points**:\n- T: 1/1\n\n**Conditions/Effects**:\n- None\n\n## NPC Relationships\n\n- n\n\n---\n\n## GM Notes (Secret)\n\n### Hidden Information\n\n- x\n\n### Character Secrets\n",
		did: []string{
			"line 1: SITUATION: inserted in Current Situation",
			`line 2: QUEST "q": inserted in Active Quests`,
			`line 3: Party HP "T": inserted in Party Status > Hit Points`,
			`line 4: NPC "n": inserted in NPC Relationships`,
			"line 5: SECRET: inserted in GM Notes (Secret) > Hidden Information",
		},
	}, {
		name:  "placeholders, checkboxes, a list subsection",
		doc:   "## Active Quests\n\n### Primary Quest: The Ledger\n- **Objective**: find it\n\n### Secondary Quests\n- [ ] None yet\n\n## Party Status\n\n**Hit Points**:\n- Party not yet established\n**Spell Slots**:\n- N/A\n",
		delta: "- QUEST: Tomlin - missing\n- QUEST: Rats\n- Party HP: tilda 1/2\n",
		want:  "## Active Quests\n\n### Primary Quest: The Ledger\n- **Objective**: find it\n\n### Secondary Quests\n- [ ] Tomlin - missing\n- [ ] Rats\n\n## Party Status\n\n**Hit Points**:\n- Tilda: 1/2\n**Spell Slots**:\n- N/A\n",
		did: []string{
			`line 1: QUEST "Tomlin": inserted in Active Quests > Secondary Quests; placeholder "[ ] None yet" replaced`,
			`line 2: QUEST "Rats": inserted in Active Quests > Secondary Quests`,
			`line 3: Party HP "Tilda": inserted in Party Status > Hit Points; placeholder "Party not yet established" replaced`,
		},
	}, {
		name:  "a quest with a subsection of its own",
		doc:   "## Active Quests\n\n### Primary Quest: The Ledger\n- **Objective**: find it\n\n### Secondary Quests\n- [ ] None yet\n",
		delta: "- QUEST: the ledger - it is forged\n- QUEST: The Ledger\n",
		want:  "## Active Quests\n\n### Primary Quest: The Ledger\n- **Objective**: find it\n- it is forged\n\n### Secondary Quests\n- [ ] None yet\n",
		did: []string{
			`line 1: QUEST "the ledger": inserted in Active Quests > Primary Quest: The Ledger`,
			`line 2: QUEST "The Ledger": unchanged in Active Quests > Primary Quest: The Ledger`,
		},
	}, {
		name:  "continuation lines: replaced when given, kept when not",
		doc:   "## NPCs\n\n- **Lysara** - boss\n  - owns ships\n- [x] Wiven - fence\n  - owes money\n\n## Next\n",
		delta: "- NPC: Lysara - ex-boss\n- NPC: wiven - informant\n  - paid off his debt\n  - fled\n",
		want:  "## NPCs\n\n- **Lysara** - ex-boss\n  - owns ships\n- [x] Wiven - informant\n  - paid off his debt\n  - fled\n\n## Next\n",
		did: []string{
			`line 1: NPC "Lysara": replaced in NPCs`,
			`line 2: NPC "wiven": replaced in NPCs`,
		},
	}, {
		name:  "a table then the next heading",
		doc:   "## NPCs\n| A | B |\n|---|---|\n| x | y |\n## Next\n",
		delta: "- NPC: z\n",
		want:  "## NPCs\n| A | B |\n|---|---|\n| x | y |\n\n- z\n\n## Next\n",
		did:   []string{`line 1: NPC "z": inserted in NPCs`},
	}, {
		name:  "a section after a paragraph, and headings in code",
		doc:   "## NPCs\nThe people we know:\n```\n## Not a heading\n- not an item\n```\n## Party Status\n**HP**:\n- tilda: 1/2\n",
		delta: "- NPC: not an item - now one\n- Party HP: Tilda 2/2\n",
		want:  "## NPCs\nThe people we know:\n```\n## Not a heading\n- not an item\n```\n\n- not an item - now one\n\n## Party Status\n**HP**:\n- tilda: 2/2\n",
		did: []string{
			`line 1: NPC "not an item": inserted in NPCs`,
			`line 2: Party HP "Tilda": replaced in Party Status > Hit Points`,
		},
	}, {
		name:  "party status without hit points",
		doc:   "## Party Status\n\n**Gold**: 10\n\n## Next\n",
		delta: "- Party HP: tilda 1/2\n",
		want:  "## Party Status\n\n**Gold**: 10\n\n**Hit Points**:\n- Tilda: 1/2\n\n## Next\n",
		did:   []string{`line 1: Party HP "Tilda": inserted in Party Status > Hit Points (new)`},
	}, {
		name:  "crlf and no final newline",
		doc:   "## NPCs\r\n\r\n- A\r\n\r\n## Current Situation\r\n\r\nold",
		delta: "- NPC: B\n- SITUATION: new\n  more\n",
		want:  "## NPCs\r\n\r\n- A\r\n- B\r\n\r\n## Current Situation\r\n\r\nnew\r\nmore",
		did:   []string{`line 1: NPC "B": inserted in NPCs`, "line 2: SITUATION: replaced in Current Situation"},
	}, {
		// Bug: the whole text was the name, so an update added a second
		// bullet.
		name:  "a tab-separated name",
		doc:   "## NPCs\n\n- Old Ann\t-\tbaker\n",
		delta: "- NPC:\tTab Tom\t-\tdesc\twith a tab\n- NPC: old ann - retired\n- NPC: tab tom\t—\tlater\n- QUEST:\tThe Ledger:\tfind it\n",
		want:  "## NPCs\n\n- Old Ann - retired\n- Tab Tom — later\n\n## Active Quests\n\n- The Ledger: find it\n",
		did: []string{
			`line 1: NPC "Tab Tom": inserted in NPCs`,
			`line 2: NPC "old ann": replaced in NPCs`,
			`line 3: NPC "tab tom": replaced in NPCs`,
			`line 4: QUEST "The Ledger": inserted in Active Quests (new)`,
		},
		redo: true,
	}, {
		name:  "an empty document",
		doc:   "",
		delta: "- SECRET: s\n",
		want:  "## GM Notes (Secret)\n\n### Hidden Information\n- s\n",
		did:   []string{"line 1: SECRET: inserted in GM Notes (Secret) > Hidden Information (new)"},
	}})
}

func TestApplyParty(t *testing.T) {
	runApply(t, delta.ApplyParty, []applyCase{{
		name:  "every keyword it takes",
		doc:   party,
		delta: "- SITUATION: In the sewers.\n- NPC: Wiven Mirsk - a fence\n- QUEST: Find Tomlin - missing worker\n- LOCATION: The Sewers\n  - **What it is**: Tunnels\n- LOCATION: the docks - Wiven lives here\n- LEARNED: The rot spreads\nThe Watch will not help.\n",
		want: edit(t, party,
			"**Location**: The docks\n", "In the sewers.\n",
			"- **Objective**: Find the ledger\n", "- **Objective**: Find the ledger\n\n### Find Tomlin\n- missing worker\n",
			"| Lysara Vendrath | Our employer |\n", "| Lysara Vendrath | Our employer |\n\n- Wiven Mirsk - a fence\n",
			"- **What it is**: Piers and warehouses\n", "- **What it is**: Piers and warehouses\n- Wiven lives here\n\n### The Sewers\n- **What it is**: Tunnels\n",
			"- The ledger was stolen\n", "- The ledger was stolen\n- The rot spreads\n- The Watch will not help.\n"),
		did: []string{
			"line 1: SITUATION: replaced in Current Situation",
			`line 2: NPC "Wiven Mirsk": inserted in NPCs We've Met`,
			`line 3: QUEST "Find Tomlin": inserted in Active Quests > Find Tomlin (new)`,
			`line 4: LOCATION "The Sewers": inserted in Locations We've Visited > The Sewers (new)`,
			`line 6: LOCATION "the docks": inserted in Locations We've Visited > The Docks`,
			"line 7: LEARNED: inserted in Important Information Learned",
			"line 8: LEARNED: inserted in Important Information Learned",
		},
	}, {
		name:  "secrets refused",
		doc:   party,
		delta: "- SECRET: the ledger is forged\n- UPCOMING: a raid\n- Party HP: tilda 1/2\n",
		want:  party,
		kept: []string{
			`tmp/delta.md:1: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:2: keyword "UPCOMING": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:3: keyword "Party HP": not for this file (put it in tmp/gm-state-delta.md)`,
		},
	}, {
		// Bug (a GM's tryout): a SECRET without its colon was a line the
		// party learned, written for the players to read; so was one
		// indented under another entry.
		name:  "keywords without their colon",
		doc:   party,
		delta: "- SECRET the ledger is forged\n- UPCOMING a raid\n- NPC Wiven - a fence\n- Party HP tilda 1/2\n- LEARNED: x\n  SECRET Thane is blackmailed\n",
		want:  party,
		kept: []string{
			`tmp/delta.md:1: keyword "SECRET": missing its colon (did you mean "SECRET: the ledger is forged"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:2: keyword "UPCOMING": missing its colon (did you mean "UPCOMING: a raid"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:3: keyword "NPC": missing its colon (did you mean "NPC: Wiven - a fence"?)`,
			`tmp/delta.md:4: keyword "Party HP": missing its colon (did you mean "Party HP: tilda 1/2"?); not for this file (put it in tmp/gm-state-delta.md)`,
			`tmp/delta.md:5: keyword "LEARNED": labelled "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		},
	}, {
		// Bug (review): "Secret the miller poisoned the well" (Title
		// case, no colon) was written for the players to read, while
		// the party's own lines that start with "NPCs", "npcs", "HP"
		// were refused, and "LEARNED the well" too. In the players'
		// file "secret" or "upcoming" in any case before text is a
		// label without its colon, kept back ("Secret passages ..."
		// too: "LEARNED: Secret passages ..." says it is no secret);
		// NPC and HP are keywords only in capitals, as a word of their
		// own, before what they need; LEARNED without its colon is a
		// LEARNED.
		name: "keywords without their colon, in the players' words",
		doc:  party,
		delta: "- Secret the miller poisoned the well\n- Upcoming ambush at the bridge\n- secrets of the docks\n- Secret passages run under the docks\n" +
			"- NPCs in the tavern whisper about the well\n- npcs say the mayor fled\n- HP potions cost 50 gold\n- LEARNED the well is poisoned\n" +
			"- NPC in the tavern whispers\n- HP tilda 1/2\n",
		want: edit(t, party, "- The ledger was stolen\n", "- The ledger was stolen\n- NPCs in the tavern whisper about the well\n- npcs say the mayor fled\n- HP potions cost 50 gold\n- the well is poisoned\n- NPC in the tavern whispers\n"),
		did: []string{
			"line 5: LEARNED: inserted in Important Information Learned",
			"line 6: LEARNED: inserted in Important Information Learned",
			"line 7: LEARNED: inserted in Important Information Learned",
			"line 8: LEARNED: inserted in Important Information Learned",
			"line 9: LEARNED: inserted in Important Information Learned",
		},
		kept: []string{
			`tmp/delta.md:1: keyword "Secret": missing its colon (did you mean "SECRET: the miller poisoned the well"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:2: keyword "Upcoming": missing its colon (did you mean "UPCOMING: ambush at the bridge"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:3: keyword "secrets": missing its colon (did you mean "SECRET: of the docks"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:4: keyword "Secret": missing its colon (did you mean "SECRET: passages run under the docks"?); refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:10: keyword "HP": missing its colon (did you mean "Party HP: tilda 1/2"?); not for this file (put it in tmp/gm-state-delta.md)`,
		},
	}, {
		// Bug: indented lines were the entry's above, so both secrets
		// were written for the players to read.
		name:  "indented secrets refused",
		doc:   party,
		delta: "- LOCATION: The Sewers - dark\n  - SECRET: the cult meets here\n- LEARNED: Tomlin is alive\n  SECRET: Thane is blackmailed\n",
		want: edit(t, party,
			"- **What it is**: Piers and warehouses\n", "- **What it is**: Piers and warehouses\n\n### The Sewers\n- dark\n",
			"- The ledger was stolen\n", "- The ledger was stolen\n- Tomlin is alive\n"),
		did: []string{
			`line 1: LOCATION "The Sewers": inserted in Locations We've Visited > The Sewers (new)`,
			"line 3: LEARNED: inserted in Important Information Learned",
		},
		kept: []string{
			`tmp/delta.md:2: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:4: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		},
	}, {
		// Bug: these spellings were LEARNED, written for the players.
		name:  "secrets in other spellings refused",
		doc:   party,
		delta: "- SECRET - a\n- [SECRET] b\n- **SECRET** c\n- Secret — d\n- upcoming – e\n- NPC: Wiven\n  [Upcoming]: f\n",
		want:  edit(t, party, "| Lysara Vendrath | Our employer |\n", "| Lysara Vendrath | Our employer |\n\n- Wiven\n"),
		did:   []string{`line 6: NPC "Wiven": inserted in NPCs We've Met`},
		kept: []string{
			`tmp/delta.md:1: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:2: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:3: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:4: keyword "Secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:5: keyword "upcoming": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:7: keyword "Upcoming": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		},
	}, {
		// Nothing labelled secret reaches the players, whatever its
		// keyword: in its text or on any of its lines.
		name: "lines labelled secret refused",
		doc:  party,
		delta: "- LEARNED: *Secret*: the ledger is forged\n- [ ] secret: Lysara lies\n- NPC: Wiven - a fence\n  - Secret (GM only): he works for the cult\n" +
			"- SITUATION: At the docks.\n  `UPCOMING` a raid\n- QUEST: Secrets - of the docks\n- LEARNED: Secret passages run under the docks\n- LEARNED: Ilse is the secret-keeper\n" +
			"- LOCATION: The Docks - secret: a tunnel to the sewers\n- LEARNED: > - [x] __secret__ the fence lies\n- LEARNED: x\n  #upcoming (soon) a raid\n",
		want: edit(t, party, "- The ledger was stolen\n", "- The ledger was stolen\n- Secret passages run under the docks\n- Ilse is the secret-keeper\n"),
		did: []string{
			"line 8: LEARNED: inserted in Important Information Learned",
			"line 9: LEARNED: inserted in Important Information Learned",
		},
		kept: []string{
			`tmp/delta.md:1: keyword "LEARNED": labelled "Secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:2: "[ ] secret: Lysara lies": labelled "secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:3: keyword "NPC": labelled "Secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:5: keyword "SITUATION": labelled "UPCOMING": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:7: keyword "QUEST": labelled "Secrets": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:10: keyword "LOCATION": labelled "secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:11: keyword "LEARNED": labelled "secret": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
			`tmp/delta.md:12: keyword "LEARNED": labelled "upcoming": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`,
		},
	}, {
		name:  "fallback headings and created sections",
		doc:   "# PK\n\n## What We Know\n* a\n\n## Known Information\n\n## NPCs\n",
		delta: "- LEARNED: b\n- LOCATION: c\n- NPC: d\n",
		want:  "# PK\n\n## What We Know\n* a\n* b\n\n## Known Information\n\n## NPCs\n\n- d\n\n## Locations We've Visited\n\n- c\n",
		did: []string{
			"line 1: LEARNED: inserted in What We Know",
			`line 2: LOCATION "c": inserted in Locations We've Visited (new)`,
			`line 3: NPC "d": inserted in NPCs`,
		},
	}, {
		name:  "learned twice",
		doc:   party,
		delta: "- LEARNED: the ledger WAS stolen\n",
		want:  party,
		did:   []string{"line 1: LEARNED: unchanged in Important Information Learned"},
	}})
}

func TestApplyNil(t *testing.T) {
	out, res := delta.ApplyStory([]byte(story), nil)
	if string(out) != story || len(res.Applied)+len(res.Kept) != 0 {
		t.Errorf("ApplyStory(doc, nil) = %q, %+v; want doc, nothing", out, res)
	}
}

// TestApplyHandMade applies entries a caller made without Parse.
func TestApplyHandMade(t *testing.T) {
	d := &delta.Delta{Path: "x.md", Entries: []delta.Entry{
		{Line: 1, Keyword: delta.NPC, Text: "Wiven"},
		{Line: 2, Keyword: delta.NPC},
		{Line: 3, Keyword: "WEATHER", Text: "rain"},
	}}
	_, res := delta.ApplyStory([]byte(story), d)
	if len(res.Applied) != 1 || len(res.Kept) != 2 ||
		!errors.Is(res.Kept[0], delta.ErrEmpty) || !errors.Is(res.Kept[1], delta.ErrUnknownKeyword) {
		t.Errorf("ApplyStory of hand-made entries = %v, kept %v; want 1 applied, 2 kept (empty, unknown)", changes(res), kept(res))
	}
}

// TestApplyIndentedSecret is the review's case end to end: Apply said
// "applied" and wrote both secrets into party-knowledge.md.
func TestApplyIndentedSecret(t *testing.T) {
	const partyDelta = "- LOCATION: The Sewers - dark\n  - SECRET: the cult meets here\n- LEARNED: Tomlin is alive\n  SECRET: Thane is blackmailed\n"
	dir := campaign(t, map[string]string{delta.PartyFile: party, delta.PartyDelta: partyDelta})
	rep, err := delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}
	if got, want := outcomes(rep), []string{delta.PartyDelta + " -> " + delta.PartyFile + ": partial"}; !cmp.Equal(got, want) {
		t.Errorf("Apply outcomes = %v, want %v", got, want)
	}
	pk := read(t, dir, delta.PartyFile)
	for _, secret := range []string{"cult", "blackmail"} {
		if strings.Contains(pk, secret) {
			t.Errorf("party-knowledge.md holds %q:\n%s", secret, pk)
		}
	}
	want := "# parley: not applied to party-knowledge.md: SECRET: refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)\n" +
		"- SECRET: the cult meets here\nSECRET: Thane is blackmailed\n" // as written, at the margin
	if got := read(t, dir, delta.PartyDelta); got != want {
		t.Errorf("party delta after Apply = %q, want %q", got, want)
	}
}
