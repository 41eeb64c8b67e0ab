package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/delta"
	"github.com/parley-dev/parley/campaigns/sheet"
)

// The campaign tools: `parley bench --campaign`.

type campaignBenchOptions struct {
	Dir  string
	Runs int
	JSON bool
}

// campaignBenchReport is what `parley bench --campaign` measured, in
// milliseconds per run.
type campaignBenchReport struct {
	Runs int `json:"runs"`
	// Roll is `parley roll` with 100 typical expressions, as a whole
	// process (fork, exec, Go's start, the rolls, the output, exit).
	RollP50 float64 `json:"roll_100_p50_ms"`
	RollP99 float64 `json:"roll_100_p99_ms"`
	// Sheet is one change to a character sheet in-process: parse the text
	// read, take a hit point, render; SheetSave adds reading the file and
	// the atomic save (fsync of the file and its directory).
	SheetP50     float64 `json:"sheet_update_p50_ms"`
	SheetSaveP50 float64 `json:"sheet_update_saved_p50_ms"`
	// Delta is a delta of 50 lines applied in-process to story-state.md;
	// DeltaFiles the whole `campaign apply` of it, with the writes.
	DeltaP50      float64        `json:"delta_50_p50_ms"`
	DeltaFilesP50 float64        `json:"delta_50_files_p50_ms"`
	Targets       []targetResult `json:"targets"`
}

// benchExpressions are the typical rolls of a session.
var benchExpressions = []string{"1d20+5", "2d20kh1+3", "2d20kl1-1", "d20", "1d8+3", "2d6+4", "8d6", "4d6dl1", "1d12+1d6+2", "4dF+2"}

// benchSheet is a character sheet in the layout people write.
const benchSheet = `# Mira Voss

*Half-elf rogue, once a dock-runner in the Lower City.*

| | |
|---|---|
| **Class** | Rogue |
| **Level** | 3 |
| **Hit Points** | 21/21 |
| **Armor Class** | 14 |

## Ability Scores

| STR | DEX | CON | INT | WIS | CHA |
|:---:|:---:|:---:|:---:|:---:|:---:|
| 8 | 16 | 12 | 13 | 10 | 14 |
| -1 | +3 | +1 | +1 | +0 | +2 |

## Equipment

### Worn/Carried
- Leather armor
- Two daggers
- Shortbow (x1)
- 20 arrows
- Thieves' tools

### Pack Contents
- Burglar's pack (backpack, bag of 1,000 ball bearings, 10 ft string, bell, 5 candles, crowbar, hammer, 10 pitons, hooded lantern, 2 flasks of oil, 5 days rations, tinderbox, waterskin)
- 3 torches
- Healing potion (heals 2d4+2)
- A letter she has not opened

### Currency
15 gp, 4 sp, 20 cp

## Backstory

She owes money to the wrong people, and the wrong people have started to
ask about it. She keeps a list of every door in the Lower City that opens
from the outside.
`

// benchDelta returns a delta of n lines using every keyword of
// story-state.md.
func benchDelta(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 7 {
		case 0:
			fmt.Fprintf(&b, "- NPC: Person %d - a face in the crowd who saw too much\n", i)
		case 1:
			fmt.Fprintf(&b, "- QUEST: Errand %d - take the parcel to the docks\n", i)
		case 2:
			fmt.Fprintf(&b, "- LOCATION: Alley %d - narrow, wet, watched\n", i)
		case 3:
			fmt.Fprintf(&b, "- SITUATION: Scene %d: the party waits at the sewer grate.\n", i)
		case 4:
			fmt.Fprintf(&b, "- SECRET: Secret %d - the fence sells to the cult\n", i)
		case 5:
			fmt.Fprintf(&b, "- UPCOMING: Event %d - the cult moves at midnight\n", i)
		case 6:
			fmt.Fprintf(&b, "- Party HP: mira-voss %d/21\n", 1+i%21)
		}
	}
	return b.String()
}

// runCampaignBench measures the campaign tools against their targets.
func runCampaignBench(ctx context.Context, e *env, opts campaignBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	rep := campaignBenchReport{Runs: opts.Runs}
	camp, err := campaigns.New(base, "the-bench")
	if err != nil {
		return err
	}

	say("parley roll with 100 expressions: %d runs ...", opts.Runs)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"roll", "--seed", "1"}
	for i := range 100 {
		args = append(args, benchExpressions[i%len(benchExpressions)])
	}
	var rolls []float64
	for range opts.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("parley roll: %w", err)
		}
		rolls = append(rolls, float64(time.Since(start))/float64(time.Millisecond))
	}
	rep.RollP50, rep.RollP99 = percentile(rolls, 0.5), percentile(rolls, 0.99)

	say("sheet updates: %d runs ...", opts.Runs)
	path := camp.SheetPath("mira-voss")
	if err := os.WriteFile(path, []byte(benchSheet), 0o644); err != nil {
		return err
	}
	var inMemory, saved []float64
	for i := range opts.Runs {
		start := time.Now()
		d, err := sheet.Parse(path, []byte(benchSheet))
		if err == nil {
			_, _, err = d.Damage(1)
		}
		if err != nil {
			return fmt.Errorf("sheet: %w", err)
		}
		_ = d.Bytes()
		inMemory = append(inMemory, float64(time.Since(start))/float64(time.Millisecond))

		start = time.Now()
		d, err = sheet.Read(path)
		if err == nil {
			if i%2 == 0 {
				_, _, err = d.Damage(1)
			} else {
				_, _, err = d.Heal(1)
			}
		}
		if err == nil {
			err = d.Save()
		}
		if err != nil {
			return fmt.Errorf("sheet: %w", err)
		}
		saved = append(saved, float64(time.Since(start))/float64(time.Millisecond))
	}
	rep.SheetP50, rep.SheetSaveP50 = percentile(inMemory, 0.5), percentile(saved, 0.5)

	say("deltas of 50 lines: %d runs ...", opts.Runs)
	story, err := os.ReadFile(camp.Path(campaigns.StoryState))
	if err != nil {
		return err
	}
	text := []byte(benchDelta(50))
	var applied, files []float64
	for range opts.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		d, err := delta.Parse(delta.StoryDelta, text)
		if err != nil {
			return fmt.Errorf("delta: %w", err)
		}
		if _, res := delta.ApplyStory(story, d); len(res.Kept) > 0 {
			return fmt.Errorf("delta: %v", res.Kept[0])
		}
		applied = append(applied, float64(time.Since(start))/float64(time.Millisecond))

		if err := os.WriteFile(camp.Path(campaigns.StoryState), story, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(camp.Path(filepath.FromSlash(delta.StoryDelta)), text, 0o644); err != nil {
			return err
		}
		start = time.Now()
		if _, err := delta.Apply(ctx, camp.Root, delta.Options{}); err != nil {
			return fmt.Errorf("delta: %w", err)
		}
		files = append(files, float64(time.Since(start))/float64(time.Millisecond))
	}
	rep.DeltaP50, rep.DeltaFilesP50 = percentile(applied, 0.5), percentile(files, 0.5)

	add := func(name string, got float64, limit float64) {
		rep.Targets = append(rep.Targets, targetResult{Name: name, Got: ms(got), Want: fmt.Sprintf("< %g ms", limit), Met: got < limit})
	}
	add("parley roll, 100 expressions, p50", rep.RollP50, 50)
	add("sheet update in-process, p50", rep.SheetP50, 2)
	add("delta of 50 lines applied, p50", rep.DeltaP50, 10)
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --campaign (%d runs each)\n\n", rep.Runs)
		fmt.Fprintf(w, "%-40s p50 %s, p99 %s\n", "parley roll, 100 expressions (process)", ms(rep.RollP50), ms(rep.RollP99))
		fmt.Fprintf(w, "%-40s p50 %s; read and saved atomically: p50 %s\n", "sheet update (parse, damage, render)", ms(rep.SheetP50), ms(rep.SheetSaveP50))
		fmt.Fprintf(w, "%-40s p50 %s; campaign apply with the writes: p50 %s\n", "delta of 50 lines (parse, apply)", ms(rep.DeltaP50), ms(rep.DeltaFilesP50))
		printTargets(w, rep.Targets)
	})
}
