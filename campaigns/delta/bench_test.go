package delta_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns/delta"
)

// benchStoryDelta is a 50-line delta for story-state.md using every
// keyword it takes: new and known NPCs, quests and places, a multi-line
// SITUATION, secrets, upcoming events and hit points.
const benchStoryDelta = `# Delta after session 5: the crossroads
- SITUATION: The caravan is camped at the crossroads, wagons in a ring.
  **Time**: Dusk, the fourth day of the thaw
  **Immediate Context**: The rider from Harrowgate has not come.
  Brann stands watch on the third wagon.
- NPC: Odo the toll-keeper - fled the bridge at dawn
  - left his ledger behind
- NPC: Mother Ilse - sends word by raven: hurry
- NPC: Pell - rides with the caravan now
- NPC: Sister Varra - a Tithe preacher on the road
- NPC: Hobb Ferrin - a tinker who sells maps
- NPC: The Druid of the Wolds - seen, never named
- NPC: Captain Desk - Harrowgate's gate warden
- NPC: Marla Tun - innkeeper at the crossroads
- QUEST: Find out who paid the toll-keeper - it was the Grey Tithe
- QUEST: Bring the Salt to Harrowgate - two days out
- QUEST: Learn what the brand on Pell's mule means
- QUEST: Find the missing rider from Harrowgate
- QUEST: Return Odo's ledger to the Salters' Guild
- LOCATION: Marrow Ford - the toll bridge, now unguarded
- LOCATION: The Crossroads Inn - three roads, one well
- LOCATION: The Wolds - moorland where the wolves run
- LOCATION: Harrowgate - walled market town
- LOCATION: The Shepherd's Hut - where the mule turned up
- SECRET: The rider was taken by the Tithe at the crossroads
- SECRET: Marla Tun reports to Sister Varra
- SECRET: Hobb's maps mark the Tithe's safe houses, unknowingly
- SECRET: The reliquary holds a finger bone of the Salt Saint
- SECRET: The druid wants the reliquary destroyed, not taken
- UPCOMING: Sister Varra preaches at the inn tonight
- UPCOMING: Wolves test the ring of wagons after midnight
- UPCOMING: Captain Desk closes Harrowgate's gate at the first sign of plague
- UPCOMING: The Tithe offers to buy the third wagon
- Party HP: ash-morrow 11/22
- Party HP: Brann Oakhelm: 24/30 (bitten)
- Party HP:
  - Quill: 16/16
  - Ash Morrow: 12/22
- HP: Brann 25/30, quill 15/16
- NPC: Hobb Ferrin - a tinker who sells maps, and lies about them
- QUEST: Find the missing rider from Harrowgate - last seen on the east road
- LOCATION: The Crossroads Inn - three roads, one well, no rider
- SECRET: Odo's ledger names every caravan the Tithe has slowed
- UPCOMING: A second rider comes at dawn
- NPC: Old Sedge - a shepherd who found the mule
- NPC: Corra - Marla's daughter, frightened of the preacher
- QUEST: Keep the reliquary from the Tithe
- LOCATION: The East Road - rutted, empty, quiet
- SITUATION: The caravan is camped at the crossroads, wagons in a ring.
  Night falls; the inn's lights go out one by one.
`

// benchPartyDelta is a 50-line delta for party-knowledge.md using every
// keyword it takes, and lines without one.
const benchPartyDelta = `# Delta after session 5: what the party knows
- SITUATION: Camped at the crossroads, wagons in a ring.
  **Time**: Dusk, the fourth day of the thaw
  **What's happening**: Waiting for a rider who has not come.
- NPC: Odo the toll-keeper - the toll-keeper at Marrow Ford; fled at dawn
- NPC: Mother Ilse - sends word by raven: hurry
- NPC: Pell - rides with the caravan now
- NPC: Sister Varra - a preacher of the Grey Tithe
- NPC: Hobb Ferrin - a tinker who sells maps
- NPC: Captain Desk - Harrowgate's gate warden, by reputation
- NPC: Marla Tun - innkeeper at the crossroads
- NPC: Old Sedge - a shepherd who found Pell's mule
- QUEST: Bring the Salt to Harrowgate - two days out
- QUEST: Find the missing rider
  - **Objective**: Learn what became of Harrowgate's rider
  - **Given by**: Ourselves
- QUEST: Who paid the toll-keeper? - we think the Grey Tithe
- QUEST: Return Odo's ledger - to the Salters' Guild
- QUEST: The brand on the mule - a circle cut by a line
- LOCATION: Marrow Ford - the toll bridge, unguarded now
- LOCATION: The Crossroads Inn
  - **What it is**: An inn where three roads meet
  - **What we found/did there**: Waited for the rider
- LOCATION: The Wolds - moorland, wolves
- LOCATION: The East Road - the rider's road
- LEARNED: Odo kept a ledger of every caravan he slowed
- LEARNED: The Grey Tithe preaches along the salt road
- LEARNED: The third wagon does not hold salt
- LEARNED: Wolves follow the caravan and never attack
- The brand on Pell's mule is a circle cut by a line
- Marla Tun serves the preacher for free
- Harrowgate closes its gate at any rumour of plague
- Hobb Ferrin's maps mark houses with the same circle
- The rider from Harrowgate was expected yesterday
- LEARNED: Sister Varra asked after the third wagon by name
- LEARNED: Corra, Marla's daughter, is afraid of the preacher
- Old Sedge says the wolves answer to someone on the Wolds
- The toll at Marrow Ford was doubled for Salters' caravans only
- NPC: Corra - Marla's daughter
- NPC: Hobb Ferrin - a tinker whose maps mark the Tithe's houses
- QUEST: Find the missing rider - last seen on the east road
- LOCATION: The Wolds - moorland where wolves run at night
- LEARNED: A second rider is due at dawn
- The inn's well water tastes of salt
- Brann will not sleep near the third wagon
- LEARNED: Quill's pack was searched while we ate
- The preacher's followers wear grey cords at the wrist
- Pell's mule will not go near the third wagon either
- LEARNED: Captain Desk owes Mother Ilse a favour
- The east road is the shortest way to Harrowgate
`

// benchParty is a party-knowledge.md in the shape of a real campaign's,
// for the same campaign as testdata/story-state.md.
const benchParty = `# Party Knowledge

**Campaign**: The Salt Road
**Last Updated**: Session 4

> What the whole party knows. Players read this file; the GM updates it
> at save points.

## Current Situation

**Location**: The toll bridge at Marrow Ford
**Time**: Dawn, the third day of the thaw
**What's happening**: The toll-keeper wants twice the usual fee.

## Active Quests

### Bring the Salt to Harrowgate (Active)
- **Objective**: Escort twelve wagons of salt to Harrowgate before the spring market
- **Given by**: Mother Ilse of the Salters' Guild
- **What we know**:
  - Two caravans on this road vanished last autumn
  - The wagons rattle more than salt should
- **Current progress**: Halfway, at the ford

### Secondary Quests
- [ ] Find out who paid the toll-keeper
- [x] Recover Pell's stolen mule

## NPCs We've Met

| NPC | Who They Are | Our Relationship | Last Interaction |
|-----|--------------|------------------|------------------|
| Mother Ilse | Head of the Salters' Guild in Saltmere | Employer | Hired us |
| Odo | Toll-keeper at Marrow Ford | Wary | Doubled the toll |
| Pell | A carter | Grateful | Got his mule back |

## Locations We've Visited

### Saltmere
- **What it is**: A salt town on the coast, home of the Salters' Guild
- **What we found/did there**: Took the job

### Marrow Ford
- **What it is**: A toll bridge over the Marrow
- **What we found/did there**: Paid half the toll

## Important Information Learned

- Two caravans vanished on this road last autumn
- Wolves circled the camp and did not attack
- Pell's mule came back with a new brand on its flank

## Party Resources

**Gold**: 212 gp shared

**Notable Items**:
- 2 potions of healing
- 1 flask of alchemist's fire

## Unresolved Questions

- Who branded Pell's mule, and what does the brand mean?
- Why did the wolves not attack?
- What rattles in the third wagon?
`

// benchDocs returns the story-state.md of testdata and benchParty, and
// checks that each delta is 50 lines.
func benchDocs(b *testing.B) (story, party []byte) {
	b.Helper()
	story, err := os.ReadFile(filepath.Join("testdata", "story-state.md"))
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []string{benchStoryDelta, benchPartyDelta} {
		if n := strings.Count(d, "\n"); n != 50 {
			b.Fatalf("a bench delta has %d lines, want 50", n)
		}
	}
	return story, []byte(benchParty)
}

// BenchmarkApply measures a 50-line delta, parsed and applied: to
// story-state.md and to party-knowledge.md in memory, and both deltas
// through Apply on a campaign directory, files read, written and removed
// (target: under 10 ms per delta).
func BenchmarkApply(b *testing.B) {
	story, party := benchDocs(b)
	for _, bc := range []struct {
		name  string
		doc   []byte
		delta string
		apply func([]byte, *delta.Delta) ([]byte, *delta.Result)
	}{
		{"story", story, benchStoryDelta, delta.ApplyStory},
		{"party", party, benchPartyDelta, delta.ApplyParty},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.doc) + len(bc.delta)))
			for b.Loop() {
				d, err := delta.Parse(delta.StoryDelta, []byte(bc.delta))
				if err != nil {
					b.Fatal(err)
				}
				_, res := bc.apply(bc.doc, d)
				if len(res.Kept) > 0 {
					b.Fatalf("kept %v, want every line applied", res.Kept)
				}
			}
		})
	}

	b.Run("files", func(b *testing.B) {
		dir := b.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
			b.Fatal(err)
		}
		files := map[string][]byte{
			delta.StoryFile:  story,
			delta.PartyFile:  party,
			delta.StoryDelta: []byte(benchStoryDelta),
			delta.PartyDelta: []byte(benchPartyDelta),
		}
		ctx := context.Background()
		for b.Loop() {
			b.StopTimer()
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			rep, err := delta.Apply(ctx, dir, delta.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if len(rep.Files) != 2 || rep.Files[0].Outcome != delta.Done || rep.Files[1].Outcome != delta.Done {
				b.Fatalf("Apply report = %+v, want both deltas applied", rep)
			}
		}
	})
}
