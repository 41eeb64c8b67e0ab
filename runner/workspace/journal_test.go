package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// journalLines are lines as parley writes them, and as people and other
// tools might.
var journalLines = []string{
	`{"time":"2026-11-21T10:15:00.412345Z","id":"20261121-101500.398761Z-gm-7d1e04","from":"gm","to":["narrator","aria","bram"],"type":"NARRATIVE","outcome":"delivered","file":"20261121-101500.398761Z-gm-7d1e04.md"}`,
	`{"time":"2026-11-21T10:15:00.603000Z","from":"bram","outcome":"rejected","reason":"hello.md:2: to: unknown agent \"zed\"\n\ttab","line":2,"field":"to","file":"hello.md","path":"mailboxes/bram/rejected/20261121-101500.000000Z-hello.md"}`,
	`{"time":"2026-11-21T10:15:01.000000Z","id":"x","from":"gm","type":"ASK","outcome":"dead","agent":"aria","reason":"aria: gave up after 3 attempts: exit code 3","file":"x.md","path":"p","attempts":3,"already":[],"warnings":["w1","w2"],"note":"ünïcödé","signal":"s","sent":"y"}`,
	`{"time":"2026-11-21T10:15:02.000000Z","from":"a","outcome":"rejected","reason":"esc \u001b[31m red","file":"\u00e9.md"}`,
	`{ "time" : "2026-11-21T10:15:03.000000Z" , "from" : "a" , "outcome" : "handled" , "file" : "f" , "line" : -0 }`,
	`{"Time":"2026-11-21T10:15:04.000000Z","from":"a","outcome":"handled","file":"f","extra":{"k":[1,2]}}`,
	`{"time":"2026-11-21T10:15:05.000000Z","from":null,"outcome":"handled","file":"f","line":1.0}`,
	`{"time":"2026-11-21T10:15:05.000000Z","from":"a","from":"b","to":["x"],"to":[],"file":"f\/g"}`,
	"{\"time\":\"2026-11-21T10:15:06.000000Z\",\"from\":\"\xff\",\"file\":\"f\"}", // invalid UTF-8
	`{"time":"2026-11-21T10:15:06.000000Z","from":"a","file":"f"} trailing`,
	`{"time":"2026-11-21T10:15:06.0`,
	`{"time":"2026-11-21T10:15:07.000000Z","outcome":"model","interrupted":true,"note":"n"}`,
	`{"time":"2026-11-21T10:15:07.000000Z","outcome":"model","interrupted": false}`,
	`{"time":"2026-11-21T10:15:07.000000Z","outcome":"model","interrupted":truex}`,
	`{"time":"2026-11-21T10:15:07.000000Z","outcome":"model","interrupted":null}`,
	`[]`,
	`{}`,
}

// FuzzDecodeEntry: the fast decoder reads a line the way encoding/json
// does, or leaves it to encoding/json.
func FuzzDecodeEntry(f *testing.F) {
	for _, l := range journalLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast Entry
		if !decodeEntry(line, &fast) {
			return
		}
		var slow Entry
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("decodeEntry(%q) succeeded; encoding/json: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("decodeEntry(%q) = %+v, encoding/json = %+v", line, fast, slow)
		}
	})
}

// TestDecodeEntryFastPath: parley's own lines take the fast path.
func TestDecodeEntryFastPath(t *testing.T) {
	for _, l := range journalLines[:5] {
		var e Entry
		if !decodeEntry([]byte(l+"\n"), &e) && !strings.Contains(l, `\u`) {
			t.Errorf("decodeEntry(%s) = false, want the fast path", l)
		}
	}
	// Every field of an Entry, written by encoding/json.
	full := Entry{Time: "t", ID: "i", From: "f", To: []string{"a", "b"}, Type: "T", Signal: "s", Skill: "k@1", Outcome: "o", Agent: "g",
		Reason: "r\n\"q\"\\", Line: 7, Field: "d", File: "x.md", Path: "p/x.md", Was: "w/x.md", Attempts: 2, Sent: "n", Already: []string{"a"},
		Warnings: []string{"w"}, Note: "<&>", Model: "m", Session: "s1", TokensIn: 12, TokensOut: 3, Interrupted: true, FailedCalls: 4, Tool: "roll_dice", Args: `{"dice":"1d20"}`, Result: `{"total":7}`, Workspace: "w"}
	for i, v := 0, reflect.ValueOf(full); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Errorf("the Entry of every field leaves %s out: give it a value, and decodeEntry a case", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))) // as SetEscapeHTML(false) writes
	var got Entry
	if !decodeEntry(b, &got) {
		t.Fatalf("decodeEntry(%s) = false", b)
	}
	if d := cmp.Diff(full, got); d != "" {
		t.Errorf("decodeEntry (-want +got):\n%s", d)
	}
}

func writeJournal(t *testing.T, entries ...Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := AppendJournal(path, entries...); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestJournalFilter(t *testing.T) {
	path := writeJournal(t,
		Entry{Time: "2026-11-21T10:00:00.000000Z", ID: "1", From: "gm", To: []string{"aria", "bram"}, Type: "NARRATIVE", Outcome: Delivered},
		Entry{Time: "2026-11-21T10:05:00.000000Z", From: "bram", Outcome: Refused, Reason: "to: unknown agent \"aria\""},
		Entry{Time: "2026-11-21T10:10:00.000000Z", ID: "1", From: "gm", Type: "NARRATIVE", Outcome: Handled, Agent: "aria"},
		Entry{Time: "2026-11-21T10:15:00.000000Z", ID: "2", From: "aria", To: []string{"gm"}, Type: "PLAYER_TO_GM", Signal: "pass", Outcome: Delivered},
		Entry{Time: "2026-11-21T10:20:00.000000Z", ID: "3", From: "gm", Type: "GM_TO_PLAYER", Outcome: GivenUp, Agent: "narrator", Reason: "aria"},
	)
	// An entry written by hand, with a \u escape: never skipped unread.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"time":"2026-11-21T10:25:00.000000Z","id":"4","from":"\u0061ria","outcome":"delivered","file":"x"}`)
	f.Close()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name   string
		filter JournalFilter
		want   string // the selected entries' outcome:id, in order
	}{
		{"all", JournalFilter{}, "delivered:1 rejected: handled:1 delivered:2 dead:3 delivered:4"},
		// aria is a recipient, a handler, a sender, and named in reasons
		// only (not selected).
		{"agent", JournalFilter{Agents: []string{"aria"}}, "delivered:1 handled:1 delivered:2 delivered:4"},
		{"agents", JournalFilter{Agents: []string{"bram", "narrator"}}, "delivered:1 rejected: dead:3"},
		{"type", JournalFilter{Types: []string{"NARRATIVE"}}, "delivered:1 handled:1"},
		{"outcome", JournalFilter{Outcomes: []string{Refused, GivenUp}}, "rejected: dead:3"},
		{"since", JournalFilter{Since: at("2026-11-21T10:10:00Z")}, "handled:1 delivered:2 dead:3 delivered:4"},
		{"since, in another zone", JournalFilter{Since: at("2026-11-21T11:15:00+01:00")}, "delivered:2 dead:3 delivered:4"},
		{"all of them", JournalFilter{Agents: []string{"gm"}, Outcomes: []string{Delivered}, Since: at("2026-11-21T10:01:00Z")}, "delivered:2"},
		{"signal", JournalFilter{Signals: []string{"pass"}}, "delivered:2"},
		{"id", JournalFilter{IDs: []string{"1", "4"}}, "delivered:1 handled:1 delivered:4"},
		{"id and outcome", JournalFilter{IDs: []string{"1"}, Outcomes: []string{Handled}}, "handled:1"},
		{"none", JournalFilter{Types: []string{"nothing"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := c.filter.Read(path, func(e Entry, line []byte) error {
				var again Entry
				if err := json.Unmarshal(line, &again); err != nil || again.ID != e.ID {
					t.Errorf("line %q does not hold entry %+v", line, e)
				}
				got = append(got, e.Outcome+":"+e.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("selected %q, want %q", g, c.want)
			}
		})
	}
}

// TestFollowJournalFilter: a filter applies to what is appended later, and
// caughtUp is called once the journal is read to its end.
func TestFollowJournalFilter(t *testing.T) {
	path := writeJournal(t, Entry{Time: "2026-11-21T10:00:00.000000Z", ID: "1", From: "gm", Outcome: Delivered})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	caught := make(chan bool, 10)
	done := make(chan error)
	filter := JournalFilter{Outcomes: []string{Refused}}
	go func() {
		done <- filter.Follow(ctx, path, func(e Entry, _ []byte) error { got <- e.ID; return nil },
			func() error { caught <- true; return nil })
	}()
	<-caught
	if err := AppendJournal(path, Entry{ID: "2", Outcome: Delivered}, Entry{ID: "3", Outcome: Refused}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "3" {
			t.Errorf("followed %q, want only the rejected entry 3", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rejected entry never arrived")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow = %v, want nil when cancelled", err)
	}
}

// TestAppendJournalConcurrent: lines appended at once by several writers,
// each with its own file descriptor as a command and a runner have, come
// out whole: short lines, and lines longer than PIPE_BUF.
func TestAppendJournalConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	const writers, lines = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				note := strings.Repeat(string(rune('a'+w)), 10+(i%3)*3000) // up to 6 KiB
				if err := AppendJournal(path, Entry{ID: fmt.Sprintf("%d-%d", w, i), Outcome: Answered, Note: note}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	err := ReadJournal(path, func(e Entry) error {
		if strings.Trim(e.Note, string(e.ID[0]-'0'+'a')) != "" {
			t.Errorf("entry %s holds another writer's bytes", e.ID)
		}
		seen[e.ID] = true
		return nil
	})
	if err != nil {
		t.Fatalf("ReadJournal: %v (lines were mixed)", err)
	}
	if len(seen) != writers*lines {
		t.Errorf("read %d entries, want %d", len(seen), writers*lines)
	}
}

// TestAppendJournalEndsCutLine: a line cut short by a crash is ended
// before the next entry.
func TestAppendJournalEndsCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a"}`+"\n"+`{"id":"b`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendJournal(path, Entry{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	err := ReadJournal(path, func(e Entry) error { ids = append(ids, e.ID); return nil })
	if d := cmp.Diff([]string{"a", "c"}, ids); d != "" {
		t.Errorf("entries after a cut line (-want +got):\n%s", d)
	}
	if err == nil {
		t.Errorf("ReadJournal did not report the cut line")
	}
}

// TestReadJournalLongLines: lines longer than the reader's buffer, and
// many of them, read whole.
func TestReadJournalLongLines(t *testing.T) {
	var entries []Entry
	for i := range 300 {
		entries = append(entries, Entry{ID: fmt.Sprint(i), Outcome: ToolCalled, Args: strings.Repeat("n", i*i*3)}) // up to 268 KB: a tool's arguments are not cut
	}
	path := writeJournal(t, entries...)
	i := 0
	err := ReadJournal(path, func(e Entry) error {
		if e.ID != fmt.Sprint(i) || len(e.Args) != i*i*3 {
			t.Fatalf("entry %d = id %s, args of %d bytes", i, e.ID, len(e.Args))
		}
		i++
		return nil
	})
	if err != nil || i != len(entries) {
		t.Errorf("read %d entries, %v; want %d", i, err, len(entries))
	}
}

// TestJournalReadFrom: ReadFrom reads only what was appended after the
// position it is given, and a journal replaced by a shorter one from its
// start.
func TestJournalReadFrom(t *testing.T) {
	path := writeJournal(t, Entry{ID: "1", From: "gm", Outcome: Delivered}, Entry{ID: "2", From: "gm", Outcome: Delivered})
	var f JournalFilter
	var got []string
	collect := func(e Entry, _ []byte) error { got = append(got, e.ID); return nil }
	pos, err := f.ReadFrom(path, JournalPosition{}, collect)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendJournal(path, Entry{ID: "3", From: "gm", Outcome: Delivered}); err != nil {
		t.Fatal(err)
	}
	if pos, err = f.ReadFrom(path, pos, collect); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"1", "2", "3"}, got); d != "" || pos.Lines != 3 {
		t.Errorf("ReadFrom, then ReadFrom again after an append: ids (-want +got):\n%s, at line %d, want 3", d, pos.Lines)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := AppendJournal(path, Entry{ID: "4", From: "gm", Outcome: Delivered}); err != nil {
		t.Fatal(err)
	}
	got = nil
	if pos, err = f.ReadFrom(path, pos, collect); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"4"}, got); d != "" || pos.Lines != 1 {
		t.Errorf("ReadFrom of a journal replaced by a shorter one: ids (-want +got):\n%s, at line %d, want 1", d, pos.Lines)
	}
}

// TestEntryInPlace: a rejected line whose path is in the outbox is a link
// refused where it is, as the router has always written it; one in
// rejected/, or any other outcome, is not.
func TestEntryInPlace(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"time":"2026-11-27T13:00:00.000000Z","from":"alice","outcome":"rejected","reason":"third.md: a hard link","file":"third.md","path":"mailboxes/alice/outbox/third.md"}`, true},
		{`{"time":"2026-11-27T13:00:00.000000Z","from":"alice","outcome":"rejected","reason":"hello.md:2: to: unknown agent","file":"hello.md","path":"mailboxes/alice/rejected/20261127-130000.000000Z-hello.md"}`, false},
		{`{"time":"2026-11-27T13:00:00.000000Z","from":"alice","outcome":"rejected","reason":"x"}`, false},
		{`{"time":"2026-11-27T13:00:00.000000Z","agent":"alice","outcome":"retried","path":"mailboxes/alice/outbox/hello.md"}`, false},
	} {
		var e Entry
		if err := json.Unmarshal([]byte(tc.line), &e); err != nil {
			t.Fatal(err)
		}
		if got := e.InPlace(); got != tc.want {
			t.Errorf("InPlace(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestJournalCapped: what the journal copies from a message is cut to a
// bound, so that a message (refused or not) cannot make a line of a
// megabyte. Bug: a type of 900 KB, in messages under the size limit, made
// a journal of 54 MB and a timeline page of 162 MB.
func TestJournalCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	long := strings.Repeat("A", 900000)
	wide := strings.Repeat("é", MaxWordLen) // two bytes each: cut on a character's boundary
	in := Entry{Time: "t", ID: long, From: "gm", Type: "T" + long, Signal: wide, Field: long, Outcome: Refused, Reason: "type: " + long, Note: long, Warnings: []string{"short", long}, File: "m.md"}
	short := Entry{Time: "t", From: "gm", Type: "NARRATIVE", Outcome: Delivered, Reason: strings.Repeat("r", MaxTextLen), Warnings: []string{"w"}}
	if err := AppendJournal(path, in, short); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() > 4*MaxTextLen+5*MaxWordLen+1024 {
		t.Fatalf("the journal is %v bytes (%v), want a few KB: the bounds and no more", info.Size(), err)
	}
	var got []Entry
	if err := ReadJournal(path, func(e Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d entries, want 2", len(got))
	}
	e := got[0]
	for _, f := range []struct {
		name, got string
		max       int
	}{{"id", e.ID, MaxWordLen}, {"type", e.Type, MaxWordLen}, {"signal", e.Signal, MaxWordLen}, {"field", e.Field, MaxWordLen}, {"reason", e.Reason, MaxTextLen}, {"note", e.Note, MaxTextLen}, {"warning", e.Warnings[1], MaxTextLen}} {
		if len(f.got) > f.max || !strings.HasSuffix(f.got, "…") || !utf8.ValidString(f.got) {
			t.Errorf("%s: %d bytes ending %q, want at most %d, valid UTF-8, ending in …", f.name, len(f.got), f.got[max(0, len(f.got)-8):], f.max)
		}
	}
	if !strings.HasPrefix(e.Type, "TAAA") || !strings.HasPrefix(e.Reason, "type: AAA") || e.Warnings[0] != "short" || in.Type != "T"+long || in.Warnings[1] != long {
		t.Errorf("cut wrong, or the caller's entry changed: type %.10q, reason %.10q, warnings[0] %q", e.Type, e.Reason, e.Warnings[0])
	}
	if d := cmp.Diff(short, got[1]); d != "" {
		t.Errorf("an entry within the bounds changed (-want +got):\n%s", d)
	}
}

// TestReadInTimeOrder: parley log reads a journal in the order of its
// times: one in order, or with lines near their place (as commands
// append them), or holding a line that does not begin with its time, as
// it goes; one git merged with its union driver (one clone's lines, then
// the other's) as runs merged; one scrambled all over, whole; the
// entries of one time as they were read.
func TestReadInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	line := func(sec int, id string) string {
		return fmt.Sprintf(`{"time":"2026-11-29T10:00:%02d.000000Z","id":%q,"outcome":"delivered"}`+"\n", sec, id)
	}
	far := line(50, "late")
	for i := 0; i < OrderWindow; i++ {
		far += line(51, fmt.Sprint("f", i))
	}
	far += line(1, "early") // OrderWindow+1 lines from its place
	farWant := []string{"early", "late"}
	for i := 0; i < OrderWindow; i++ {
		farWant = append(farWant, fmt.Sprint("f", i))
	}
	// Lines moved by hand all over: more runs than are merged, each
	// earlier than the one before.
	var scrambled strings.Builder
	var scrambledWant []string
	for i := maxRuns; i >= 0; i-- {
		for j := 0; j <= OrderWindow; j++ {
			scrambledWant = append(scrambledWant, fmt.Sprintf("s%d-%d", i, j))
		}
	}
	for i := 0; i <= maxRuns; i++ {
		for j := 0; j <= OrderWindow; j++ {
			fmt.Fprintf(&scrambled, `{"time":"2026-11-29T10:00:00.%06dZ","id":"s%d-%d","outcome":"delivered"}`+"\n", 999999-i, i, j)
		}
	}
	// OrderWindow lines from its place, after more lines in order than
	// the window holds: sorted as the journal streams.
	edge, edgeWant := "", []string{}
	for i := 0; i < 10; i++ {
		edge += line(0, fmt.Sprint("e", i))
		edgeWant = append(edgeWant, fmt.Sprint("e", i))
	}
	edgeWant = append(edgeWant, "early")
	for i := 0; i < OrderWindow; i++ {
		edge += line(51, fmt.Sprint("f", i))
		edgeWant = append(edgeWant, fmt.Sprint("f", i))
	}
	edge += line(1, "early")
	for _, c := range []struct {
		name, text string
		order      journalOrder
		want       []string
	}{
		{"missing", "", inOrder, nil},
		{"in order", line(0, "a") + line(0, "b") + "\n" + line(1, "c"), inOrder, []string{"a", "b", "c"}},
		{"near", line(0, "a") + line(2, "c") + line(3, "d") + line(1, "b") + line(2, "c2"), nearOrder, []string{"a", "b", "c", "c2", "d"}},
		{"merged", line(0, "a") + line(5, "ours") + line(6, "ours2") + line(1, "theirs") + line(7, "after"), nearOrder, []string{"a", "theirs", "ours", "ours2", "after"}},
		{"by hand", line(2, "b") + `{"outcome":"delivered","id":"a","time":"2026-11-29T10:00:01.000000Z"}` + "\n", nearOrder, []string{"a", "b"}},
		{"cut short", line(2, "b") + `{"time":"2026-11-29T10:00:01.0` + "\n" + line(3, "c"), inOrder, []string{"b", "c"}},
		{"window's edge", edge, nearOrder, edgeWant},
		{"far", far, mergedOrder, farWant},
		{"scrambled", scrambled.String(), outOfOrder, scrambledWant},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".jsonl")
			if c.text != "" {
				if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			var stats orderStats
			var all JournalFilter
			at, err := all.compile().readInTimeOrder(path, func(e Entry, _ []byte) error {
				got = append(got, e.ID)
				return nil
			}, &stats)
			var je *JournalError
			if err != nil && !errors.As(err, &je) {
				t.Fatal(err)
			}
			if stats.order != c.order {
				t.Errorf("order = %v, want %v", stats.order, c.order)
			}
			if at.Offset != int64(len(c.text)) {
				t.Errorf("position = %+v, want offset %d", at, len(c.text))
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("read (-want +got):\n%s", d)
			}
		})
	}
}

// TestReadInTimeOrderStreams: a journal of 100,000 lines whose lines are
// a few from their place (as a dev-pipeline run wrote 41 of 91,000) is
// read in time order holding at most OrderWindow entries, and its first
// entry comes out after OrderWindow lines are decoded, not the whole
// file (the tryout: parley log held 91,000 entries, 250 MB, and printed
// its first line after 0.65 s).
func TestReadInTimeOrderStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	const n = 100000
	if err := os.WriteFile(path, nearJournal(n), 0o644); err != nil {
		t.Fatal(err)
	}
	var stats orderStats
	var all JournalFilter
	last, count := "", 0
	if _, err := all.compile().readInTimeOrder(path, func(e Entry, _ []byte) error {
		if e.Time < last {
			t.Fatalf("entry %d at %s after one at %s", count, e.Time, last)
		}
		last = e.Time
		count++
		return nil
	}, &stats); err != nil {
		t.Fatal(err)
	}
	if count != n || stats.order != nearOrder {
		t.Errorf("read %d entries, order %v; want %d, %v", count, stats.order, n, nearOrder)
	}
	if stats.held > OrderWindow+1 || stats.decodedAtFirst > OrderWindow+1 {
		t.Errorf("held at most %d entries, first came out after %d decoded; want at most %d", stats.held, stats.decodedAtFirst, OrderWindow+1)
	}
}

// TestReadInTimeOrderMerged: a journal git merged from two clones (the
// lines both had, then one clone's, then the other's, then what was
// appended after the merge) is read in time order as the sort of it
// would be, holding the windows of two runs at most, not the whole
// journal.
func TestReadInTimeOrderMerged(t *testing.T) {
	line := func(i int) string {
		return fmt.Sprintf(`{"time":"2026-11-29T10:%02d:%02d.%06dZ","id":"m%d","outcome":"delivered"}`+"\n", i/60000%60, i/1000%60, i%1000, i)
	}
	var b strings.Builder
	var want []string
	for i := 0; i < 3000; i++ {
		b.WriteString(line(i))
	}
	for _, clone := range []int{0, 1} { // each took every other line
		for i := 3000 + clone; i < 7000; i += 2 {
			b.WriteString(line(i))
		}
	}
	for i := 7000; i < 8000; i++ {
		b.WriteString(line(i))
	}
	for i := 0; i < 8000; i++ {
		want = append(want, fmt.Sprint("m", i))
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	var stats orderStats
	var all JournalFilter
	if _, err := all.compile().readInTimeOrder(path, func(e Entry, _ []byte) error {
		got = append(got, e.ID)
		return nil
	}, &stats); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("read (-want +got):\n%s", d)
	}
	if stats.order != mergedOrder || stats.held > 2*(OrderWindow+1) {
		t.Errorf("order %v, held at most %d entries; want %v, at most %d", stats.order, stats.held, mergedOrder, 2*(OrderWindow+1))
	}
}

// TestFollowMergedInTimeOrder: Follow reads what a journal git merged
// holds when it starts in time order, as ReadInTimeOrder does (it read it
// in file order, where parley log reads it in time order), then what is
// appended, as it is appended.
func TestFollowMergedInTimeOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	merged := `{"time":"2026-11-29T10:00:00.000000Z","id":"a","outcome":"delivered"}` + "\n" +
		`{"time":"2026-11-29T10:00:02.000000Z","id":"c","outcome":"delivered"}` + "\n" +
		`{"time":"2026-11-29T10:00:01.000000Z","id":"b","outcome":"delivered"}` + "\n"
	if err := os.WriteFile(path, []byte(merged), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	var all JournalFilter
	err := all.Follow(ctx, path, func(e Entry, _ []byte) error {
		got = append(got, e.ID)
		return nil
	}, func() error {
		if len(got) == 3 {
			// Caught up: one line appended, earlier in time than the
			// last, comes as it is appended.
			return AppendJournal(path, Entry{Time: "2026-11-29T09:00:00.000000Z", ID: "d", Outcome: Delivered})
		}
		cancel()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c", "d"}, got); d != "" {
		t.Errorf("Follow read (-want +got):\n%s", d)
	}
}
