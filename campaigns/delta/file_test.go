package delta_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns/delta"
)

// lineErrors compares *LineErrors field by field, and their reasons by
// the sentinel they wrap.
var lineErrors = cmp.Transformer("LineError", func(e *delta.LineError) lineErr {
	le := lineErr{File: e.File, Line: e.Line, Keyword: e.Keyword, Text: e.Text, Err: e.Err.Error()}
	for _, s := range []error{delta.ErrUnknownKeyword, delta.ErrEmpty, delta.ErrHP, delta.ErrStructure, delta.ErrRefused, delta.ErrMisplaced} {
		if errors.Is(e.Err, s) {
			le.Err = s.Error()
		}
	}
	return le
})

// lineErr is a *LineError that is not an error, for cmp.
type lineErr struct {
	File, Keyword, Text, Err string
	Line                     int
}

// campaign makes a campaign directory holding files (slash-separated
// names relative to it).
func campaign(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "campaign")
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// read returns a campaign's file, or "<missing>".
func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcomes sums a report up: "delta: outcome, applied, kept".
func outcomes(r *delta.Report) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Delta+" -> "+f.Target+": "+string(f.Outcome))
	}
	return out
}

func TestApplyFiles(t *testing.T) {
	dir := campaign(t, map[string]string{
		delta.StoryFile:  story,
		delta.PartyFile:  party,
		delta.StoryDelta: "# session 3\n- NPC: Wiven - a fence\n- Party HP: tilda-brannock 8/12\n",
		delta.PartyDelta: "- LEARNED: The rot spreads\n- SECRET: Wiven lies\n  to everyone\n\n  - MONSTER: a ghoul\n- MONSTER: ghoul\n    - in the cistern\n",
	})
	rep, err := delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}
	want := &delta.Report{Files: []delta.FileReport{{
		Delta: delta.StoryDelta, Target: delta.StoryFile, Outcome: delta.Done,
		Applied: []delta.Change{
			{Line: 2, Keyword: delta.NPC, Entity: "Wiven", Section: "NPC Relationships", Action: delta.Inserted},
			{Line: 3, Keyword: delta.PartyHP, Entity: "Tilda Brannock", Section: "Party Status > Hit Points", Action: delta.Replaced},
		},
	}, {
		Delta: delta.PartyDelta, Target: delta.PartyFile, Outcome: delta.Partial,
		Applied: []delta.Change{
			{Line: 1, Keyword: delta.Learned, Section: "Important Information Learned", Action: delta.Inserted},
		},
		Kept: []*delta.LineError{
			{File: delta.PartyDelta, Line: 2, Keyword: "SECRET", Text: "Wiven lies", Err: delta.ErrRefused},
			{File: delta.PartyDelta, Line: 6, Keyword: "MONSTER", Text: "ghoul", Err: delta.ErrUnknownKeyword},
		},
	}}}
	if d := cmp.Diff(want, rep, lineErrors); d != "" {
		t.Errorf("Apply report (-want +got):\n%s", d)
	}
	wantStory := edit(t, story,
		"| Lysara Vendrath | Friendly |\n", "| Lysara Vendrath | Friendly |\n\n- Wiven - a fence\n",
		"- Tilda Brannock: 12/12\n", "- Tilda Brannock: 8/12\n")
	if d := cmp.Diff(wantStory, read(t, dir, delta.StoryFile)); d != "" {
		t.Errorf("story-state.md (-want +got):\n%s", d)
	}
	if d := cmp.Diff(edit(t, party, "- The ledger was stolen\n", "- The ledger was stolen\n- The rot spreads\n"), read(t, dir, delta.PartyFile)); d != "" {
		t.Errorf("party-knowledge.md (-want +got):\n%s", d)
	}
	if got := read(t, dir, delta.StoryDelta); got != "<missing>" {
		t.Errorf("the applied story delta is still there:\n%s", got)
	}
	wantKept := "# parley: not applied to party-knowledge.md: SECRET: refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:); MONSTER: unknown keyword\n" +
		"- SECRET: Wiven lies\n  to everyone\n\n  - MONSTER: a ghoul\n- MONSTER: ghoul\n    - in the cistern\n"
	if d := cmp.Diff(wantKept, read(t, dir, delta.PartyDelta)); d != "" {
		t.Errorf("kept party delta (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp", "party-knowledge-delta.md.tmp")); err == nil {
		t.Error("a temporary file was left behind")
	}

	// Applied again, the kept lines are kept again, and nothing is written.
	rep, err = delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil || len(rep.Files) != 1 || rep.Files[0].Outcome != delta.NotApplied || len(rep.Files[0].Kept) != 2 {
		t.Fatalf("Apply again = %v, %+v; want the party delta not applied, 2 lines kept", err, rep)
	}
	if got := read(t, dir, delta.PartyDelta); got != wantKept {
		t.Errorf("Apply again rewrote the delta:\n%s", got)
	}

	// The GM fixes the delta: it is applied, and removed.
	fixed := strings.Replace(strings.Replace(wantKept, "- SECRET:", "- LEARNED:", 1), "- MONSTER: ghoul\n    - in the cistern\n", "", 1)
	os.WriteFile(filepath.Join(dir, "tmp", "party-knowledge-delta.md"), []byte(fixed), 0o644)
	rep, err = delta.Apply(context.Background(), dir, delta.Options{})
	if err != nil || len(rep.Files) != 1 || rep.Files[0].Outcome != delta.Done {
		t.Fatalf("Apply of the fixed delta = %v, %+v; want it applied", err, outcomes(rep))
	}
	if got := read(t, dir, delta.PartyDelta); got != "<missing>" {
		t.Errorf("the fixed delta is still there:\n%s", got)
	}
	if got := read(t, dir, delta.PartyFile); !strings.Contains(got, "- The rot spreads\n- Wiven lies\n  to everyone\n\n  - MONSTER: a ghoul\n") {
		t.Errorf("party-knowledge.md lacks the fixed lines:\n%s", got)
	}
}

func TestApplyFilesEdges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		files    map[string]string
		opts     delta.Options
		err      error    // wrapped by Apply's error
		outcomes []string // the report
		after    map[string]string
	}{{
		name:  "no deltas",
		files: map[string]string{delta.StoryFile: story},
		after: map[string]string{delta.StoryFile: story},
	}, {
		name:     "empty delta",
		files:    map[string]string{delta.StoryDelta: "# nothing happened\n\n", delta.PartyDelta: ""},
		outcomes: []string{"tmp/gm-state-delta.md -> story-state.md: empty", "tmp/party-knowledge-delta.md -> party-knowledge.md: empty"},
		after:    map[string]string{delta.StoryDelta: "<missing>", delta.PartyDelta: "<missing>"},
	}, {
		name:     "missing target",
		files:    map[string]string{delta.StoryDelta: "- NPC: A\n", delta.PartyDelta: "- NPC: B\n", delta.PartyFile: party},
		err:      delta.ErrMissingTarget,
		outcomes: []string{"tmp/party-knowledge-delta.md -> party-knowledge.md: applied"},
		after:    map[string]string{delta.StoryDelta: "- NPC: A\n", delta.StoryFile: "<missing>", delta.PartyDelta: "<missing>"},
	}, {
		name:     "nothing applicable",
		files:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- MONSTER: ghoul\n- LEARNED: x\n"},
		outcomes: []string{"tmp/gm-state-delta.md -> story-state.md: not applied"},
		after: map[string]string{delta.StoryFile: story, delta.StoryDelta: "# parley: not applied to story-state.md: MONSTER: unknown keyword; " +
			"LEARNED: not for this file (put it in tmp/party-knowledge-delta.md)\n- MONSTER: ghoul\n- LEARNED: x\n"},
	}, {
		name:     "nothing applicable, dry run",
		files:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- MONSTER: ghoul\n"},
		opts:     delta.Options{DryRun: true},
		outcomes: []string{"tmp/gm-state-delta.md -> story-state.md: not applied"},
		after:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- MONSTER: ghoul\n"},
	}, {
		name:     "a lone secret in the party delta",
		files:    map[string]string{delta.PartyFile: party, delta.PartyDelta: "- SECRET: Cale is a spy.\n"},
		outcomes: []string{"tmp/party-knowledge-delta.md -> party-knowledge.md: not applied"},
		after: map[string]string{delta.PartyFile: party, delta.PartyDelta: "# parley: not applied to party-knowledge.md: SECRET: refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)\n" +
			"- SECRET: Cale is a spy.\n"},
	}, {
		name:     "dry run",
		files:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- NPC: A\n", delta.PartyFile: party, delta.PartyDelta: ""},
		opts:     delta.Options{DryRun: true},
		outcomes: []string{"tmp/gm-state-delta.md -> story-state.md: applied", "tmp/party-knowledge-delta.md -> party-knowledge.md: empty"},
		after:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- NPC: A\n", delta.PartyDelta: ""},
	}, {
		name:     "unchanged target",
		files:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "- SECRET: The ledger is forged\n"},
		outcomes: []string{"tmp/gm-state-delta.md -> story-state.md: applied"},
		after:    map[string]string{delta.StoryFile: story, delta.StoryDelta: "<missing>"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := campaign(t, tc.files)
			rep, err := delta.Apply(ctx, dir, tc.opts)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Errorf("Apply error = %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(tc.outcomes, outcomes(rep)); d != "" {
				t.Errorf("Apply report (-want +got):\n%s", d)
			}
			for name, want := range tc.after {
				if got := read(t, dir, name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestApplyMissingTargetMessage(t *testing.T) {
	dir := campaign(t, map[string]string{delta.StoryDelta: "- NPC: A\n"})
	_, err := delta.Apply(context.Background(), dir, delta.Options{})
	want := "tmp/gm-state-delta.md: target file missing: story-state.md (the delta is kept)"
	if err == nil || err.Error() != want {
		t.Errorf("Apply error = %v, want %q", err, want)
	}
}

func TestApplyNoCampaign(t *testing.T) {
	rep, err := delta.Apply(context.Background(), filepath.Join(t.TempDir(), "nope"), delta.Options{})
	if !errors.Is(err, fs.ErrNotExist) || rep == nil {
		t.Errorf("Apply of a missing directory = %v, %v; want a report and fs.ErrNotExist", rep, err)
	}
}

func TestApplyCancelled(t *testing.T) {
	dir := campaign(t, map[string]string{delta.StoryFile: story, delta.StoryDelta: "- NPC: A\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := delta.Apply(ctx, dir, delta.Options{})
	if !errors.Is(err, context.Canceled) || len(rep.Files) != 0 {
		t.Errorf("Apply with a cancelled context = %+v, %v; want nothing done, context.Canceled", rep, err)
	}
	if got := read(t, dir, delta.StoryDelta); got != "- NPC: A\n" {
		t.Errorf("the delta = %q after a cancelled Apply", got)
	}
}

// TestRefused checks that Refused keeps what Apply keeps, whatever the
// target holds: a lone SECRET in the party's delta, an unknown keyword.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{delta.PartyDelta, "- SECRET: Cale is a spy.\n- LEARNED: x\n", []string{`tmp/party-knowledge-delta.md:1: keyword "SECRET": refused: players read party-knowledge.md (put it in tmp/gm-state-delta.md; to reveal it, first move it out of story-state.md's secret part, then write it here, unlabelled, as LEARNED:)`}},
		{delta.StoryDelta, "- SECRET: Cale is a spy.\n- MONSTER: ghoul\n", []string{`tmp/gm-state-delta.md:2: keyword "MONSTER": ` + delta.ErrUnknownKeyword.Error()}},
		{delta.StoryDelta, "- NPC: Wiven\n", nil},
	} {
		d, _ := delta.Parse(tc.name, []byte(tc.data))
		var got []string
		for _, le := range delta.Refused(tc.name, d) {
			got = append(got, le.Error())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Refused(%s, %q) (-want +got):\n%s", tc.name, tc.data, diff)
		}
	}
}
