package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/internal/textfile"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Entry
	}{
		{"labels", "Title: The warehouse\nWhat happened: We broke in.\nThe door was rotten.\n**What I did:** Picked the lock.\nwhat i learned: The cult is real.\nHow I feel: Cold.\n",
			Entry{Title: "The warehouse", Happened: "We broke in.\nThe door was rotten.", Did: "Picked the lock.", Learned: "The cult is real.", Feel: "Cold."}},
		{"prose only", "We waited all night.\n\nNobody came.\n", Entry{Happened: "We waited all night.\n\nNobody came."}},
		{"a second title line is text", "Title: One\nTitle: Two\n", Entry{Title: "One", Happened: "Title: Two"}},
		{"crlf", "Title: A\r\nHow I feel: fine\r\n", Entry{Title: "A", Feel: "fine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Parse(tc.text)); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
}

func TestAdd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corwin-voss-journal.md")
	day := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	added, err := Add(path, "corwin-voss", Entry{Date: day, Title: "The Blushing Mermaid", Happened: "Met Lysara.", Feel: "Wary."})
	if err != nil || !added {
		t.Fatalf("Add = %v, %v", added, err)
	}
	want := "# Corwin Voss — Journal\n\n> Written in Corwin Voss's own voice, one entry per day of play, newest last.\n" +
		"\n## 2026-11-21 — The Blushing Mermaid\n\n**What happened:** Met Lysara.\n\n**How I feel:** Wary.\n"
	got, _ := os.ReadFile(path)
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Fatalf("journal (-want +got):\n%s", d)
	}

	// A person edits the file; the next entry keeps the edit, and a
	// message journaled twice is written once.
	edited := strings.Replace(string(got), "Met Lysara.", "Met Lysara. She lied.", 1)
	os.WriteFile(path, []byte(strings.TrimSuffix(edited, "\n")), 0o644)
	e := Entry{Date: day.Add(24 * time.Hour), Learned: "The rot spreads.", ID: "20261122-200000.000000Z-corwin-0a0b0c"}
	for i, wantAdded := range []bool{true, false} {
		added, err := Add(path, "corwin-voss", e)
		if err != nil || added != wantAdded {
			t.Fatalf("Add #%d = %v, %v; want %v", i+1, added, err, wantAdded)
		}
	}
	got, _ = os.ReadFile(path)
	wantEnd := "She lied.\n\n**How I feel:** Wary.\n\n## 2026-11-22\n<!-- message 20261122-200000.000000Z-corwin-0a0b0c -->\n\n**What I learned:** The rot spreads.\n"
	if !strings.HasSuffix(string(got), wantEnd) {
		t.Errorf("journal ends %q, want %q", got, wantEnd)
	}
	for _, tt := range []struct {
		path, id string
		want     bool
	}{
		{path, e.ID, true},
		{path, "20261122-200000.000000Z-corwin-ffffff", false},
		{path, "", false},
		{filepath.Join(t.TempDir(), "none.md"), e.ID, false},
	} {
		if got := Has(tt.path, tt.id); got != tt.want {
			t.Errorf("Has(%s, %q) = %v, want %v", filepath.Base(tt.path), tt.id, got, tt.want)
		}
	}
}

// Bug: a journal kept with CRLF line endings got LF entries appended,
// and so mixed endings. The entry follows the file's ending.
func TestAddLineEndings(t *testing.T) {
	day := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	e := Entry{Date: day, Title: "The bell", Happened: "It rang.\r\nTwice.", Feel: "Cold."}
	entry := "\n## 2026-11-21 — The bell\n\n**What happened:** It rang.\nTwice.\n\n**How I feel:** Cold.\n"
	for _, tc := range []struct {
		name, old, want string
	}{
		{"crlf", "# Tor\r\n\r\nI swore an oath.\r\n", "# Tor\r\n\r\nI swore an oath.\r\n" + strings.ReplaceAll(entry, "\n", "\r\n")},
		{"crlf without a last line ending", "# Tor\r\n\r\nI swore an oath.", "# Tor\r\n\r\nI swore an oath.\r\n" + strings.ReplaceAll(entry, "\n", "\r\n")},
		{"lf", "# Tor\n\nI swore an oath.\n", "# Tor\n\nI swore an oath.\n" + entry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tor-journal.md")
			if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Add(path, "tor", e); err != nil {
				t.Fatalf("Add: %v", err)
			}
			got, _ := os.ReadFile(path)
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("journal (-want +got):\n%s", d)
			}
		})
	}
}

func TestAddEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x-journal.md")
	if _, err := Add(path, "x", Entry{Happened: "  \n"}); err != ErrEmpty {
		t.Errorf("Add of an empty entry = %v, want ErrEmpty", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("an empty entry created the journal")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"Title: x\nWhat happened: y\n", "**How I feel:** ok", "What I did:", ":\n::", "title:\n", "learned: a\nfeel: b\nHow_I_feel: c\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e := Parse(text)
		// Whatever was said, but the labels, is kept somewhere.
		all := strings.ReplaceAll(e.Title+" "+e.Happened+" "+e.Did+" "+e.Learned+" "+e.Feel, "**", "")
		for _, line := range strings.Split(text, "\n") {
			bare := strings.TrimSpace(strings.ReplaceAll(line, "**", ""))
			if name, rest, ok := strings.Cut(bare, ":"); ok {
				for _, label := range []string{"Title", "What happened", "What I did", "What I learned", "How I feel", "happened", "did", "learned", "feel"} {
					if strings.EqualFold(strings.ReplaceAll(name, "_", " "), label) {
						bare = rest
						break
					}
				}
			}
			for _, w := range strings.Fields(bare) {
				if !strings.Contains(all, w) {
					t.Fatalf("word %q of %q is lost: %+v", w, text, e)
				}
			}
		}
	})
}

// A heading in an entry's text cannot start an entry of its own.
func TestFormatEscapesHeadings(t *testing.T) {
	got := Format(Entry{Date: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), Title: "Notes", Did: "Wrote this:\n## Not an entry\n  # nor this"})
	want := "\n## 2026-11-21 — Notes\n\n**What I did:** Wrote this:\n\\## Not an entry\n  \\# nor this\n"
	if got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// TestAddConcurrent: two writers of one runner (the journal agent, and
// the team lead taking a player's plain reply as its entry) adding to one
// journal at once each keep their entry; each read the file, then
// replaced it whole, and one entry was lost.
func TestAddConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tilda-brannock-journal.md")
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := Entry{Title: fmt.Sprintf("day %d", i), Happened: "Things happened.", ID: fmt.Sprintf("20261129-100000.%06dZ-tilda-000000", i)}
			if _, err := Add(path, "tilda-brannock", e); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !strings.Contains(string(data), fmt.Sprintf("— day %d\n", i)) {
			t.Errorf("the entry of day %d was lost", i)
		}
	}
}

// A person appends to the journal while an entry is written: their line
// lands between parley's fsync and its rename, and the rename used to
// put the journal as parley read it over their line. Add starts again
// from their save, and both are kept.
func TestAddKeepsHandEditBeforeRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corwin-voss-journal.md")
	if err := os.WriteFile(path, []byte("# Corwin Voss — Journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := false
	textfile.BeforeRename = func(p string) {
		if p != path || done {
			return
		}
		done = true
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString("\nA line written by hand.\n")
	}
	t.Cleanup(func() { textfile.BeforeRename = nil })
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	added, err := Add(path, "corwin-voss", Entry{Date: day, Title: "The docks", Happened: "We waited."})
	if err != nil || !added {
		t.Fatalf("Add = %v, %v", added, err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "A line written by hand.\n") || !strings.Contains(string(got), "**What happened:** We waited.") {
		t.Errorf("journal lost a write:\n%s", got)
	}
}
