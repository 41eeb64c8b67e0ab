package scenes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Rain on the roof.", "Rain on the roof."},
		{"Corwin makes a DC 15 Perception check and spots the wire.", "Corwin makes a Perception check and spots the wire."},
		{"The lock gives (DC 12).", "The lock gives."},
		{"Tilda swings (1d20+5 = [8]+5 = 13) and misses.", "Tilda swings and misses."},
		{"She takes 2d6 damage.", "She takes damage."},
		{"With advantage she rolls 2d20kh1+3 = [4, 17]+3 = 20 and hits.", "With advantage she rolls and hits."},
		{"Fire washes over him (2d6 fire, half on a save).", "Fire washes over him."},
		{"The door opens.\nSECRET: the cult watches from the roof.\nWind howls.", "The door opens.\nWind howls."},
		{"- **GM note:** Korvus is blackmailed.\nThe sergeant nods.", "The sergeant nods."},
		{"The sergeant nods [secret: he is lying] and leaves.", "The sergeant nods and leaves."},
		{"A shadow moves.<!-- the assassin, Veris -->", "A shadow moves."},
		{"First.\n\n\n\nSecond.", "First.\n\nSecond."},
		{"Washington DC is far away; the dragon's den is not.", "Washington DC is far away; the dragon's den is not."},
		{"SECRET: only this", ""},
		{"Hidden — behind the altar, a door.", "Hidden — behind the altar, a door."},
		{"Secret-keepers of the Congregation wait.", "Secret-keepers of the Congregation wait."},
		{"Hidden: the door is trapped.\nDust.", "Dust."},
		{"Secret — the duke lies.\nDust.", "Dust."},
		{"[Hidden] the door is trapped.\nDust.", "Dust."},
		{"A d20-shaped idol stares back; the d20's face is worn.", "A d20-shaped idol stares back; the d20's face is worn."},
		{"Tilda rolls 1d20+4 vs DC 15 and shoulders the door.", "Tilda rolls and shoulders the door."},
		{`"DC 10 forever!" the old sergeant shouts, rolling d20 after d20.`, `"DC 10 forever!" the old sergeant shouts, rolling after.`},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWithoutNotes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"| Longsword | 1d8+2 slashing |", "| Longsword | 1d8+2 slashing |"},
		{"- Bond: my sister\n- SECRET: I burned the mill.\n- Flaw: greed", "- Bond: my sister\n- Flaw: greed"},
		{"Owes a debt (GM: to the river guild) to someone.", "Owes a debt to someone."},
		{"Rolls a DC 15 check.<!-- GM only -->\r\nNext.", "Rolls a DC 15 check.\nNext."},
	} {
		if got := WithoutNotes(tc.in); got != tc.want {
			t.Errorf("WithoutNotes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scenes")
	// The first narrative, with no scene named, opens scene 1.
	p, ok, err := Append(dir, Entry{Text: "The tavern is loud."})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if filepath.Base(p) != "001-opening.md" {
		t.Errorf("first scene = %s", p)
	}
	// A named scene starts a new file, numbered as asked.
	p, _, err = Append(dir, Entry{Number: 5, Slug: "the-warehouse-heist", Location: "Vendrath Warehouse", Text: "Crates rot in the dark (DC 14 to notice).", ID: "20261121-101500.000000Z-gm-000001"})
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nscene: 5\nslug: the-warehouse-heist\nlocation: Vendrath Warehouse\n---\n# Scene 5: The Warehouse Heist\n\n<!-- message 20261121-101500.000000Z-gm-000001 -->\nCrates rot in the dark.\n"
	if d := cmp.Diff(want, read(t, p)); d != "" {
		t.Fatalf("new scene (-want +got):\n%s", d)
	}
	// More of the same scene, once even if delivered twice; the time
	// becomes known.
	for range 2 {
		if _, _, err := Append(dir, Entry{Text: "A rat squeaks.", Time: "Midnight", ID: "20261121-101600.000000Z-gm-000002"}); err != nil {
			t.Fatal(err)
		}
	}
	want = "---\nscene: 5\nslug: the-warehouse-heist\nlocation: Vendrath Warehouse\ntime: Midnight\n---\n# Scene 5: The Warehouse Heist\n\n<!-- message 20261121-101500.000000Z-gm-000001 -->\nCrates rot in the dark.\n\n<!-- message 20261121-101600.000000Z-gm-000002 -->\nA rat squeaks.\n"
	if d := cmp.Diff(want, read(t, p)); d != "" {
		t.Errorf("appended (-want +got):\n%s", d)
	}
	// A new slug without a number is the next scene.
	p, _, _ = Append(dir, Entry{Slug: "the-sewers", Text: "Water drips."})
	if filepath.Base(p) != "006-the-sewers.md" {
		t.Errorf("next scene = %s", p)
	}
	// Asking for a taken number with another slug numbers from the top.
	p, _, _ = Append(dir, Entry{Number: 5, Slug: "a-flashback", Text: "Years ago."})
	if filepath.Base(p) != "007-a-flashback.md" {
		t.Errorf("scene with a taken number = %s", p)
	}
	all, _ := List(dir)
	var names []string
	for _, s := range all {
		names = append(names, filepath.Base(s.Path))
	}
	if d := cmp.Diff([]string{"001-opening.md", "005-the-warehouse-heist.md", "006-the-sewers.md", "007-a-flashback.md"}, names); d != "" {
		t.Errorf("scenes (-want +got):\n%s", d)
	}
}

// TestAppendBackToEarlierScene: the story goes back to an earlier scene
// (1, 2, then 1 again); what names no scene (a narrator's aside) goes to
// the scene being told, 001, not to the highest-numbered file (a tryout's
// scribe filed it in 002).
func TestAppendBackToEarlierScene(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scenes")
	for _, e := range []Entry{
		{Number: 1, Slug: "the-chapel", Text: "Scene one, first visit.", ID: "20261121-100000.000000Z-gm-000001"},
		{Number: 2, Slug: "the-cellar", Text: "Scene two.", ID: "20261121-100100.000000Z-gm-000002"},
		{Number: 1, Slug: "the-chapel", Text: "Back in the chapel.", ID: "20261121-100200.000000Z-gm-000003"},
	} {
		if _, _, err := Append(dir, e); err != nil {
			t.Fatal(err)
		}
	}
	if s, ok, err := Current(dir); err != nil || !ok || s.Number != 1 {
		t.Errorf("Current = %+v, %v, %v, want scene 1", s, ok, err)
	}
	p, _, err := Append(dir, Entry{Text: "An aside, spoken in the chapel.", ID: "20261121-100300.000000Z-narrator-000004"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "001-the-chapel.md" {
		t.Errorf("the aside went to %s, want 001-the-chapel.md", filepath.Base(p))
	}
	// A scene a person starts by hand, above the one told last, is the
	// one being told.
	if err := os.WriteFile(filepath.Join(dir, "003-the-crypt.md"), []byte("# Scene 3: The Crypt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := Current(dir); s.Number != 3 {
		t.Errorf("Current with a scene started by hand = %d, want 3", s.Number)
	}
}

// TestHandEdited: a person's edits survive; a frontmatter they broke stops
// the scribe with the file's name, and the file is untouched.
func TestHandEdited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "003-the-docks.md")
	kept := "# The docks\n\nWritten by hand, no frontmatter.\n"
	os.WriteFile(path, []byte(kept), 0o644)
	if _, _, err := Append(dir, Entry{Location: "Docks", Text: "Gulls."}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != kept+"\nGulls.\n" {
		t.Errorf("hand-made scene = %q", got)
	}
	broken := "---\nscene: 3\nlocation: [unclosed\n---\n# The docks\n"
	os.WriteFile(path, []byte(broken), 0o644)
	_, _, err := Append(dir, Entry{Location: "Docks", Text: "Gulls."})
	// The line is the file's (the header's second line is the file's third).
	if err == nil || !strings.HasSuffix(err.Error(), "003-the-docks.md:3: frontmatter: did not find expected ',' or ']'") {
		t.Errorf("Append to a broken frontmatter = %v, want it at the file's line 3", err)
	}
	if got := read(t, path); got != broken {
		t.Errorf("the broken file was changed: %q", got)
	}
	os.WriteFile(path, []byte("---\nscene: 3\n# never closed\n"), 0o644)
	if _, _, err := Append(dir, Entry{Text: "x"}); err == nil || !strings.Contains(err.Error(), "no closing ---") {
		t.Errorf("Append to an unclosed frontmatter = %v", err)
	}
}

func TestAppendNothing(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Append(dir, Entry{Text: "SECRET: all of it"}); !errors.Is(err, ErrNothingToTell) {
		t.Errorf("Append of a secret = %v", err)
	}
	if _, _, err := Append(dir, Entry{Slug: "Bad Slug", Text: "x"}); err == nil {
		t.Error("a bad slug was accepted")
	}
	if all, _ := List(dir); len(all) != 0 {
		t.Errorf("files were made: %v", all)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"Tilda swings (1d20+5 = [8]+5 = 13).", "DC 15", "SECRET: x\ny", "<!-- a -->b", "[gm: x] y", "d20 d% dF 4d6dl1 2d20kh1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		if commentRE.MatchString(out) {
			t.Errorf("Clean(%q) = %q keeps a comment", s, out)
		}
		// Removing one may join text into another: cleaning again must
		// then find nothing more (dice inside words, DCs inside quotes
		// are prose).
		if again := Clean(out); removeDice(again) != again || outsideQuotes(again, func(s string) string { return dcRE.ReplaceAllString(s, "") }) != again {
			t.Errorf("Clean(%q) = %q keeps dice or a DC", s, again)
		}
	})
}
