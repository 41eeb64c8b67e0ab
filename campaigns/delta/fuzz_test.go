package delta

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/internal/markdown"
)

// fuzzDeltas seed both fuzz targets: the forms a GM or an agent writes,
// and some they should not.
var fuzzDeltas = []string{
	"- NPC: Wiven Mirsk - a fence\n- QUEST: Find Tomlin - missing\n- LOCATION: The Sewers\n- SITUATION: At the grate.\n" +
		"- SECRET: Wiven lies\n- UPCOMING: A raid\n- LEARNED: The rot spreads\n- Party HP: tilda-brannock 8/12\nThe Watch lies.\n- MONSTER: ghoul\n",
	"* npc: odo the toll-keeper - bribed\n+ **Quest**: find out who paid the toll-keeper - it was the Tithe\n1. location: marrow ford\n",
	"- SITUATION:\n  **Location**: The crossroads\n\n  **Time**: Noon\n- Party HP:\n  - Ash Morrow: 3/22\n  - quill 16/16\n- HP: Brann 1/30, Ash 2/22\n",
	"- NPC: Mother Ilse\n    - worried\n      - very\n- NPC: mother ilse - furious\n  - sends a rider\n",
	"- QUEST: None yet\n- QUEST: x\n- NPC:\n- QUEST: - nothing\n- Party HP: Quill\n- SITUATION: ## heading\n- NPC: a\n  ```\n",
	"# comment\n<!-- a\n- NPC: hidden\n-->\n---\n-\n\n  - NPC: indented\n\tTabbed: 1/2\n",
	"\ufeff- NPC: A\r\n  more\r\n\r\n- **Weather**: rain\r\n__learned__: x\r\n",
	"- LOCATION: Primary Quest: Bring the Salt to Harrowgate - with news\n- QUEST: bring the salt to harrowgate - late\n- SECRET: [ ] a box\n",
	"",
	"- NPC: |a|b|\n- NPC: **bold** - x\n- SECRET: the wolves belong to a druid who watches the road for the tithe\n",
	// An indented keyword line is an entry of its own.
	"- LOCATION: The Sewers - dark\n  - SECRET: the cult meets here\n- LEARNED: Tomlin is alive\n  SECRET: Thane is blackmailed\n",
	"- NPC: Wiven\n  - **Secret**: he lies\n    to everyone\n\n  - owes the Guild\n    [upcoming] the Guild collects\n  - and fears it\n" +
		"- Party HP:\n  - Tilda Brannock: 8/12\n  - UPCOMING: a raid\n- SITUATION:\n  **Location**: The grate\n  - NPC: Wiven - waiting\n",
	// Keyword spellings, and lines labelled secret.
	"- SECRET - a\n- [SECRET] b\n- **SECRET** c\n- Secret — d\n- upcoming – e\n- **Quest -** f\n- [ ] SECRET: g\n- Secret-keeper Ilse - a woman\n" +
		"- LEARNED: *Secret*: h\n- NPC: Wiven - a fence\n  Secret (GM only): i\n- LOCATION: The Docks - secret: j\n",
	// Tabs around an entity's separator.
	"- NPC:\tTab Tom\t-\tdesc\twith a tab\n- NPC: tab tom\t—\tlater\n- QUEST:\tThe Ledger:\tfind it\n- NPC\t-\tOld Ann\n",
}

// fuzzDocs are the documents FuzzApply applies deltas to.
func fuzzDocs(t testing.TB) []string {
	sample, err := os.ReadFile("testdata/story-state.md")
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		string(sample),
		strings.ReplaceAll(string(sample), "\n", "\r\n"),
		"",
		"# S\n\nNo sections, no final newline",
		"## Current Situation\n\n## Active Quests\n\n## Party Status\n\n**Hit Points**:\n\n## NPC Relationships\n\n---\n\n## GM Notes (Secret)\n\n### Hidden Information\n",
		"## GM Notes (Secret)\n- top secret\n## NPCs\n```\n## in code\n- Wiven\n",
		"# Party Knowledge\n\n## Current Situation\n\nHere.\n\n## Active Quests\n\n### The Salt (Pending)\n- **Objective**: Harrowgate\n\n## NPCs We've Met\n\n| NPC | Who |\n|-----|-----|\n| Ilse | boss |\n\n## Locations We've Visited\n\n### Marrow Ford\n- a bridge\n\n## Important Information Learned\n\n- None yet\n",
	}
}

// FuzzParse checks that Parse never panics; that its entries point at
// their lines, in order, with errors that name the file and the line; and
// that the delta Apply writes back for kept entries parses to the same
// entries.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzDeltas {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const path = "tmp/gm-state-delta.md"
		d, err := Parse(path, []byte(text))
		if d == nil || d.Path != path {
			t.Fatalf("Parse(%q) = %+v, want a Delta for %s", text, d, path)
		}
		lines := strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n")
		var bad []error
		var kept []*LineError
		last := 0
		for _, e := range d.Entries {
			if e.Line <= last || e.Line > len(lines) {
				t.Fatalf("Parse(%q): entry at line %d after line %d, of %d", text, e.Line, last, len(lines))
			}
			last = e.Line
			if got, want := e.Source[0], strings.TrimRight(lines[e.Line-1], "\r"); got != want {
				t.Fatalf("Parse(%q): entry at line %d has source %q, want %q", text, e.Line, got, want)
			}
			le := &LineError{File: path, Line: e.Line, Keyword: e.Word, Text: e.Text, Err: ErrMisplaced}
			if e.Err != nil {
				bad = append(bad, e.Err)
				if !errors.As(e.Err, &le) || le.File != path || le.Line != e.Line {
					t.Fatalf("Parse(%q): entry at line %d has error %v, want a *LineError for it", text, e.Line, e.Err)
				}
			}
			kept = append(kept, le)
		}
		if (err == nil) != (len(bad) == 0) {
			t.Fatalf("Parse(%q) error = %v, with %d bad entries", text, err, len(bad))
		}

		// Kept, every entry reads back the same.
		again, _ := Parse(path, keptDelta(StoryFile, d, kept))
		if diff := cmp.Diff(shape(d), shape(again), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Parse(%q), kept and parsed again (-first +again):\n%s", text, diff)
		}
	})
}

// shape is what a delta says, without line numbers.
func shape(d *Delta) []shaped {
	var out []shaped
	for _, e := range d.Entries {
		sh := shaped{Keyword: e.Keyword, Word: e.Word, Text: e.Text, More: e.More}
		var le *LineError
		if errors.As(e.Err, &le) {
			sh.Err = le.Err.Error()
		}
		out = append(out, sh)
	}
	return out
}

type shaped struct {
	Keyword         Keyword
	Word, Text, Err string
	More            []string
}

// FuzzApply applies deltas to sample documents, as story-state.md and as
// party-knowledge.md, and checks that nothing panics; that every entry is
// applied or kept, once; that no secret reaches party-knowledge.md, nor a
// line labelled secret or written as a SECRET or UPCOMING line; that
// the headings stay, in order; and that every line of the document is
// still there, but bullets replaced (one per change that says so), the
// body of a replaced Current Situation, and blank and indented lines.
func FuzzApply(f *testing.F) {
	docs := fuzzDocs(f)
	for i, s := range fuzzDeltas {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		doc := docs[int(which)%len(docs)]
		d, _ := Parse("d.md", []byte(text))
		for _, story := range []bool{true, false} {
			var out []byte
			var res *Result
			if story {
				out, res = ApplyStory([]byte(doc), d)
			} else {
				out, res = ApplyParty([]byte(doc), d)
			}
			checkApply(t, story, doc, d, string(out), res)
		}
	})
}

func checkApply(t *testing.T, story bool, doc string, d *Delta, out string, res *Result) {
	t.Helper()
	if len(res.Applied) == 0 && out != doc {
		t.Fatalf("nothing applied, yet the document changed:\n%s", cmp.Diff(doc, out))
	}
	if !story {
		// No line the party did not have is labelled secret.
		had := make(map[string]int)
		for _, l := range strings.Split(doc, "\n") {
			had[strings.TrimRight(l, "\r")]++
		}
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimRight(l, "\r")
			if had[l] > 0 {
				had[l]--
				continue
			}
			if _, ok := secretLabel(l); ok {
				t.Fatalf("party-knowledge.md got the line %q, labelled secret:\n%s", l, out)
			}
			if word, _, ok := cutKnown(stripBullet(strings.TrimSpace(l))); ok {
				if k := keywords[normWord(word)]; k == Secret || k == Upcoming {
					t.Fatalf("party-knowledge.md got the line %q, a %s:\n%s", l, k, out)
				}
			}
		}
	}
	done := make(map[int]int)
	for _, c := range res.Applied {
		if !story && (c.Keyword == Secret || c.Keyword == Upcoming || c.Keyword == PartyHP) {
			t.Fatalf("party-knowledge.md got %s", c)
		}
		if done[c.Line] == 0 {
			done[c.Line] = 1
		}
	}
	for _, k := range res.Kept {
		done[k.Line]++
	}
	for _, e := range d.Entries {
		if done[e.Line] != 1 {
			t.Fatalf("entry at line %d applied or kept %d times, want once", e.Line, done[e.Line])
		}
	}

	before, after := parseDoc([]byte(doc)), parseDoc([]byte(out))
	i := 0
	for _, h := range before.heads {
		for i < len(after.heads) && after.heads[i].title != h.title {
			i++
		}
		if i == len(after.heads) {
			t.Fatalf("heading %q lost:\n%s", h.title, out)
		}
		i++
	}

	exempt := make(map[int]bool) // lines of doc that may go
	replaced := 0
	for _, c := range res.Applied {
		if c.Keyword == Situation && c.Action == Replaced {
			if k, from, to := before.section(situationTitles); k >= 0 {
				a, b := before.content(from, to)
				for j := a; j < b; j++ {
					exempt[j] = true
				}
			}
		}
		if c.Action == Replaced || strings.HasPrefix(c.Note, "placeholder") {
			replaced++
		}
	}
	have := make(map[string]int)
	for _, l := range after.lines {
		have[l.s]++
	}
	lostItems := 0
	for j, l := range before.lines {
		if exempt[j] || isBlank(l.s) || markdown.Indent(l.s) >= 2 {
			continue
		}
		if have[l.s] > 0 {
			have[l.s]--
			continue
		}
		if _, ok := before.item(j); ok {
			lostItems++
			continue
		}
		t.Fatalf("line %d %q lost:\n%s", j+1, l.s, out)
	}
	if lostItems > replaced {
		t.Fatalf("%d items lost, for %d replacements:\n%s", lostItems, replaced, out)
	}
}
