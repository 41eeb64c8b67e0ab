package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/mailbox"
)

// table makes a workspace with one campaign and a character sheet.
func table(t *testing.T) (string, *campaigns.Campaign) {
	t.Helper()
	ws := t.TempDir()
	camp, err := campaigns.New(ws, "the-test")
	if err != nil {
		t.Fatal(err)
	}
	sheet := "# Tilda Brannock\n\n| | |\n|---|---|\n| **Level** | 1 |\n| **Hit Points** | 12/12 |\n"
	if err := os.WriteFile(camp.SheetPath("tilda-brannock"), []byte(sheet), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, camp
}

func msg(t *testing.T, text string) *mailbox.Message {
	t.Helper()
	m, err := mailbox.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScribe(t *testing.T) {
	ws, camp := table(t)
	s := &Scribe{Campaigns: Campaigns{Workspace: ws}, Narrators: []string{"narrator"}}
	for _, text := range []string{
		"---\nid: 20261121-101500.000000Z-gm-000001\nfrom: gm\ntype: NARRATIVE\n---\n[NARRATIVE]\n\nRain on the roof. Tilda rolls 1d20+5 = [8]+5 = 13.\n",
		"---\nid: 20261121-101501.000000Z-gm-000002\nfrom: gm\ntype: GM_TO_PLAYER\n---\nWhat do you do?\n", // not story
		"---\nid: 20261121-101502.000000Z-narrator-000003\nfrom: narrator\ntype: SCENE_PROSE\nscene_number: \"002\"\nscene_slug: the-docks\nlocation: The docks\n---\nGulls wheel overhead.\n",
		"---\nid: 20261121-101503.000000Z-narrator-000004\nfrom: narrator\ntype: NARRATOR_REQUEST\n---\nWhat happened at the gate?\n", // a question
		"---\nid: 20261121-101504.000000Z-aria-000005\nfrom: aria\ntype: PLAYER_TO_GM\n---\nI draw my sword.\n",
	} {
		if out, err := s.Handle(context.Background(), msg(t, text)); err != nil || out != nil {
			t.Fatalf("Handle = %v, %v", out, err)
		}
	}
	one, _ := os.ReadFile(filepath.Join(camp.Path("scenes"), "001-opening.md"))
	if !strings.HasSuffix(string(one), "<!-- message 20261121-101500.000000Z-gm-000001 -->\nRain on the roof. Tilda rolls.\n") {
		t.Errorf("scene 1:\n%s", one)
	}
	two, _ := os.ReadFile(filepath.Join(camp.Path("scenes"), "002-the-docks.md"))
	if !strings.Contains(string(two), "location: The docks\n") || !strings.HasSuffix(string(two), "Gulls wheel overhead.\n") {
		t.Errorf("scene 2:\n%s", two)
	}
	if all, _ := os.ReadDir(camp.Path("scenes")); len(all) != 3 { // and .gitkeep
		t.Errorf("scenes/ holds %d files", len(all))
	}
}

func TestJournaler(t *testing.T) {
	ws, camp := table(t)
	j := &Journaler{Campaigns: Campaigns{Workspace: ws}, Players: map[string]string{"aria": "tilda-brannock"}, Now: func() time.Time { return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) }}
	in := msg(t, "---\nid: 20261121-101500.000000Z-aria-000001\nfrom: aria\ntype: JOURNAL_ENTRY\ntitle: The Mermaid\nfeel: Uneasy.\n---\nWe met Lysara.\nWhat I learned: She pays well.\n")
	for range 2 { // handled twice after a crash: written once
		if _, err := j.Handle(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(camp.JournalPath("tilda-brannock"))
	want := "\n## 2026-11-21 — The Mermaid\n<!-- message 20261121-101500.000000Z-aria-000001 -->\n\n**What happened:** We met Lysara.\n\n**What I learned:** She pays well.\n\n**How I feel:** Uneasy.\n"
	if !strings.HasSuffix(string(got), want) || strings.Count(string(got), "## 2026") != 1 {
		t.Errorf("journal:\n%s", got)
	}
	// A sender who plays no one, naming no one: the error says why.
	_, err := j.Handle(context.Background(), msg(t, "---\nfrom: gm\ntype: JOURNAL_ENTRY\n---\nx\n"))
	if err == nil || !strings.Contains(err.Error(), "gm plays none") {
		t.Errorf("Handle = %v", err)
	}
	// The tag heading the body of a frontmatter message; a sender named
	// after its character.
	if _, err := j.Handle(context.Background(), msg(t, "---\nid: 20261121-101501.000000Z-tilda-brannock-000002\nfrom: tilda-brannock\nto: journal\n---\n[JOURNAL_ENTRY]\nTitle: The docks\nWe waited.\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(camp.JournalPath("tilda-brannock")); !strings.Contains(string(got), "— The docks\n") || !strings.Contains(string(got), "**What happened:** We waited.\n") {
		t.Errorf("journal:\n%s", got)
	}
	// Anything else sent to it is answered, not silently dropped.
	out, err := j.Handle(context.Background(), msg(t, "---\nfrom: aria\nto: journal\n---\nDear diary\n"))
	if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), "[JOURNAL_ENTRY]") {
		t.Errorf("Handle = %v, %v", out, err)
	}
	_, err = j.Handle(context.Background(), msg(t, "---\nfrom: gm\ntype: JOURNAL_ENTRY\ncharacter: nobody-here\n---\nx\n"))
	if err == nil || !strings.Contains(err.Error(), `no such character "nobody-here"`) {
		t.Errorf("Handle = %v", err)
	}
}

func TestStateWriter(t *testing.T) {
	ws, camp := table(t)
	s := &StateWriter{Campaigns: Campaigns{Workspace: ws}}
	write := func(rel, text string) {
		t.Helper()
		if err := os.WriteFile(camp.Path(rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := msg(t, "---\nid: 20261121-101500.000000Z-gm-000001\nfrom: gm\ntype: STATE_UPDATED\n---\n[STATE_UPDATED]\n")

	// Every line applied: the deltas are gone and nobody is bothered.
	write("tmp/gm-state-delta.md", "- NPC: Wiven Mirsk - a fence\n")
	write("tmp/party-knowledge-delta.md", "- LEARNED: The rot spreads from below\n")
	out, err := s.Handle(context.Background(), in)
	if err != nil || out != nil {
		t.Fatalf("Handle = %v, %v", out, err)
	}
	story, _ := os.ReadFile(camp.Path(campaigns.StoryState))
	if !strings.Contains(string(story), "\n- Wiven Mirsk - a fence\n") {
		t.Errorf("story-state.md:\n%s", story)
	}
	if _, err := os.Stat(camp.Path("tmp/gm-state-delta.md")); err == nil {
		t.Error("the applied delta is still there")
	}

	// A line that cannot go in: kept in the delta, and the gm is told.
	write("tmp/gm-state-delta.md", "- MONSTER: a rat king\n- QUEST: Find Tomlin\n")
	out, err = s.Handle(context.Background(), in)
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle = %v, %v", out, err)
	}
	if to, _ := out[0].Header().Get("to"); to != "gm" {
		t.Errorf("reply to %q", to)
	}
	if re, _ := out[0].Header().Get("reply_to"); re != "20261121-101500.000000Z-gm-000001" {
		t.Errorf("reply_to %q", re)
	}
	if th, _ := out[0].Header().Get("thread"); th != "20261121-101500.000000Z-gm-000001" {
		t.Errorf("thread %q, want the id of the message answered (it started the thread)", th)
	}
	if !strings.Contains(string(out[0].Body), `tmp/gm-state-delta.md:1: keyword "MONSTER": unknown`) {
		t.Errorf("reply:\n%s", out[0].Body)
	}
	kept, _ := os.ReadFile(camp.Path("tmp/gm-state-delta.md"))
	if !strings.Contains(string(kept), "- MONSTER: a rat king") || strings.Contains(string(kept), "Tomlin") {
		t.Errorf("delta now:\n%s", kept)
	}

	// Other messages are not its business.
	if out, err := s.Handle(context.Background(), msg(t, "---\nfrom: gm\ntype: NARRATIVE\n---\nx\n")); err != nil || out != nil {
		t.Errorf("Handle(NARRATIVE) = %v, %v", out, err)
	}
}

func TestToolbox(t *testing.T) {
	ws, camp := table(t)
	tb := &Toolbox{Campaigns: Campaigns{Workspace: ws}, Players: map[string]string{"aria": "tilda-brannock"}, Dice: dice.Seeded(1)}
	call := msg(t, "---\nid: 20261121-101500.000000Z-aria-000001\nfrom: aria\ntool: update_character\narguments: {damage: 5}\n---\n")
	var first string
	for i := range 2 { // delivered twice after a crash: the damage is done once
		out, err := tb.Handle(context.Background(), call)
		if err != nil || len(out) != 1 {
			t.Fatalf("Handle = %v, %v", out, err)
		}
		if ok, _ := out[0].Payload().Get("success"); ok != "true" {
			t.Fatalf("success: %q\n%s", ok, out[0].Body)
		}
		if i == 0 {
			first = string(out[0].Body)
		} else if string(out[0].Body) != first {
			t.Errorf("the second answer differs:\n%s\nfirst:\n%s", out[0].Body, first)
		}
	}
	sheetText, _ := os.ReadFile(camp.SheetPath("tilda-brannock"))
	if !strings.Contains(string(sheetText), "| **Hit Points** | 7/12 |") {
		t.Errorf("sheet:\n%s", sheetText)
	}
	if !strings.Contains(first, `"hp": 7`) {
		t.Errorf("result:\n%s", first)
	}

	// A failed call: an error result, the sheet as it was.
	out, err := tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101501.000000Z-gm-000002\nfrom: gm\ntool: update_character\n---\n{\"character\": \"tilda-brannock\", \"hp\": 40}\n"))
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle = %v, %v", out, err)
	}
	if ok, _ := out[0].Payload().Get("success"); ok != "false" {
		t.Errorf("success: %q", ok)
	}
	if !strings.Contains(string(out[0].Body), `"Error: party/tilda-brannock.md:`) {
		t.Errorf("result:\n%s", out[0].Body)
	}
	after, _ := os.ReadFile(camp.SheetPath("tilda-brannock"))
	if string(after) != string(sheetText) {
		t.Errorf("a failed call changed the sheet:\n%s", after)
	}

	// No tool named: the sender is told how to call one.
	out, err = tb.Handle(context.Background(), msg(t, "---\nfrom: gm\nto: tools\n---\nroll for me\n"))
	if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), "Which tool?") {
		t.Errorf("Handle = %v, %v", out, err)
	}
	// A broadcast is not a call: no answer.
	out, err = tb.Handle(context.Background(), msg(t, "---\nfrom: gm\nto: '*'\ntype: NARRATIVE\n---\nRain.\n"))
	if err != nil || out != nil {
		t.Errorf("Handle(broadcast) = %v, %v", out, err)
	}

	// A player's agent changes only its own sheet, even when it names
	// another character.
	if err := os.WriteFile(camp.SheetPath("corwin-voss"), []byte("| **Hit Points** | 8/8 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101502.000000Z-aria-000003\nfrom: aria\ntool: update_character\n---\n{\"character\": \"corwin-voss\", \"damage\": 8}\n"))
	if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), "not your character") {
		t.Errorf("Handle = %v, %v", out, err)
	}
	// An agent named after its character plays it.
	out, err = tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101503.000000Z-corwin-voss-000004\nfrom: corwin-voss\ntool: update_character\narguments: {damage: 3}\n---\n"))
	if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), `"hp": 5`) {
		t.Errorf("Handle = %v, %v", out, err)
	}
}

// current_scene as people write it names the scene; one without a number
// is refused, not filed in the wrong scene.
func TestScribeCurrentScene(t *testing.T) {
	ws, camp := table(t)
	s := &Scribe{Campaigns: Campaigns{Workspace: ws}}
	for i, tt := range []struct{ scene, file string }{
		{"Scene 4: The Docks", "004-the-docks.md"},
		{"003 - The Sewers!", "003-the-sewers.md"},
		{"005 - the-warehouse-heist", "005-the-warehouse-heist.md"},
		{"#6 Lysara's Office", "006-lysaras-office.md"},
	} {
		in := msg(t, fmt.Sprintf("---\nid: 20261121-1015%02d.000000Z-gm-00000%d\nfrom: gm\ntype: NARRATIVE\ncurrent_scene: %q\n---\nThe tide turns.\n", i, i, tt.scene))
		if _, err := s.Handle(context.Background(), in); err != nil {
			t.Fatalf("%q: %v", tt.scene, err)
		}
		if _, err := os.Stat(filepath.Join(camp.Path("scenes"), tt.file)); err != nil {
			t.Errorf("%q: %v", tt.scene, err)
		}
	}
	_, err := s.Handle(context.Background(), msg(t, "---\nfrom: gm\ntype: NARRATIVE\ncurrent_scene: the next one\n---\nx\n"))
	if err == nil || !strings.Contains(err.Error(), `current_scene: "the next one" names no scene number`) {
		t.Errorf("Handle = %v", err)
	}
}

// Bug: a change a malformed sheet kept from being made ("twelve" hit
// points) was said to the caller alone; the story went on as if made.
// The people are told; a call refused for its own sake is not theirs.
func TestToolboxTellsPeopleOfMalformedSheet(t *testing.T) {
	ws, camp := table(t)
	tb := &Toolbox{Campaigns: Campaigns{Workspace: ws}, Dice: dice.Seeded(1), People: []string{"you"}}
	out, err := tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101501.000000Z-gm-000002\nfrom: gm\ntool: update_character\n---\n{\"character\": \"tilda-brannock\", \"hp\": 40}\n"))
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle(hp above the maximum) = %d messages, %v; want the answer alone", len(out), err)
	}
	path := camp.SheetPath("tilda-brannock")
	data, _ := os.ReadFile(path)
	bad := regexp.MustCompile(`\| \*\*Hit Points\*\* \| [^|]*\|`).ReplaceAll(data, []byte("| **Hit Points** | twelve |"))
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101502.000000Z-gm-000003\nfrom: gm\ntool: update_character\n---\n{\"character\": \"tilda-brannock\", \"damage\": 6}\n"))
	if err != nil || len(out) != 2 {
		t.Fatalf("Handle(damage to a malformed sheet) = %d messages, %v; want the answer and a notice", len(out), err)
	}
	n := out[1]
	to, _ := n.Header().Names("to")
	kind, _ := n.Payload().Get("notice")
	if len(to) != 1 || to[0] != "you" || kind != SheetNotice {
		t.Errorf("notice to %v, notice: %q; want [you], %q", to, kind, SheetNotice)
	}
	if want := `gm's update_character changed nothing: party/tilda-brannock.md:`; !strings.Contains(string(n.Body), want) {
		t.Errorf("notice body:\n%s\nwant it to hold %q", n.Body, want)
	}
}

// Bug: a narrator's prose (no type, so unchecked by the protocol) with
// scene_number: [1, 2] and scene_slug: ../../../x was filed as scene 001
// (x), and the real scene 001 that followed went to 008. The scribe
// refuses it, naming the field, and writes nothing.
func TestScribeRefusesSceneFieldsNamingNoScene(t *testing.T) {
	ws, camp := table(t)
	s := &Scribe{Campaigns: Campaigns{Workspace: ws}, Narrators: []string{"narrator"}}
	for _, tt := range []struct{ fields, want string }{
		{"scene_number: [1, 2]\nscene_slug: x\n", "scene_number: a list is not a scene number"},
		{"scene_number: 1\nscene_slug: ../../../x\n", `scene_slug: "../../../x" is not a scene slug`},
		{"scene_number: 1\nscene_slug: \"-\"\n", `scene_slug: "-" is not a scene slug`},
		{"current_scene: {n: 1}\n", "current_scene: a list or a map is no scene"},
	} {
		in := msg(t, "---\nid: 20261121-101500.000000Z-narrator-000001\nfrom: narrator\n"+tt.fields+"---\nThe bell tolls.\n")
		_, err := s.Handle(context.Background(), in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Handle(%q) = %v, want an error holding %q", tt.fields, err, tt.want)
		}
	}
	if all, _ := scenes.List(camp.Path("scenes")); len(all) != 0 {
		t.Errorf("scenes/ holds %v, want no scene", all)
	}
}

// TestStateWriterParty: bug (a GM's tryout): a Party HP line naming a
// character with no sheet was written, and hit points over the maximum
// passed without a word. The gm is told of both: the first kept in its
// delta, the second written all the same.
func TestStateWriterParty(t *testing.T) {
	ws, camp := table(t)
	s := &StateWriter{Campaigns: Campaigns{Workspace: ws}}
	if err := os.WriteFile(camp.Path("tmp/gm-state-delta.md"), []byte("- Party HP: tilda-branock 3/12\n- Party HP: tilda 20/12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := s.Handle(context.Background(), msg(t, "---\nid: 20261121-101500.000000Z-gm-000001\nfrom: gm\ntype: STATE_UPDATED\n---\n[STATE_UPDATED]\n"))
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle = %v, %v; want one reply", out, err)
	}
	for _, want := range []string{
		`story-state.md: kept in tmp/gm-state-delta.md: tmp/gm-state-delta.md:1: keyword "Party HP": no sheet in party/ for "tilda-branock" (did you mean tilda-brannock?)`,
		`story-state.md: tmp/gm-state-delta.md:2: keyword "Party HP": tilda-brannock 20/12: hit points over the maximum, 12 on its sheet (written all the same; check the sheet)`,
	} {
		if !strings.Contains(string(out[0].Body), want) {
			t.Errorf("the reply lacks %q:\n%s", want, out[0].Body)
		}
	}
}
