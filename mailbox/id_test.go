package mailbox

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock returns the times it is given, one per call, then the last one
// again.
func fakeClock(times ...time.Time) func() time.Time {
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := times[0]
		if len(times) > 1 {
			times = times[1:]
		}
		return t
	}
}

func TestIDsNewFormat(t *testing.T) {
	at := time.Date(2026, 11, 21, 11, 15, 0, 123456789, time.FixedZone("CET", 3600))
	g := &IDs{Now: fakeClock(at)}
	id := g.New("team-lead")
	const prefix = "20261121-101500.123456Z-team-lead-"
	if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+6 || !IsID(id) {
		t.Fatalf("New(team-lead) at %v = %q, want %q and six hex digits", at, id, prefix)
	}
	sent, from, err := ParseID(id)
	if err != nil {
		t.Fatalf("ParseID(%q) = %v", id, err)
	}
	if want := at.Truncate(time.Microsecond); !sent.Equal(want) || from != "team-lead" {
		t.Errorf("ParseID(%q) = %v, %q, want %v, team-lead", id, sent, from, want)
	}
	if sent.Location() != time.UTC {
		t.Errorf("ParseID(%q) time zone = %v, want UTC", id, sent.Location())
	}
}

func TestIDsNewIncreasing(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)
	tests := []struct {
		name  string
		times []time.Time
	}{
		{"clock stands still", []time.Time{t0, t0, t0, t0}},
		{"clock steps back", []time.Time{t0, t0.Add(-time.Hour), t0.Add(-time.Second), t0.Add(-time.Microsecond)}},
		{"same microsecond", []time.Time{t0, t0.Add(100 * time.Nanosecond), t0.Add(999 * time.Nanosecond)}},
		{"clock moves on", []time.Time{t0, t0.Add(time.Microsecond), t0.Add(time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &IDs{Now: fakeClock(tt.times...)}
			var prev string
			var prevTime time.Time
			for i := range tt.times {
				id := g.New("alice")
				sent, _, err := ParseID(id)
				if err != nil {
					t.Fatalf("ParseID(New(alice)) = %v", err)
				}
				if i > 0 && (id <= prev || !sent.After(prevTime)) {
					t.Errorf("New(alice) #%d = %q after %q, want a later id", i, id, prev)
				}
				prev, prevTime = id, sent
			}
		})
	}
}

func TestIDsNewUnique(t *testing.T) {
	// Several goroutines share one generator and a clock that stands still.
	g := &IDs{Now: fakeClock(time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC))}
	const workers, each = 4, 2000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], g.New("alice"))
			}
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	times := make(map[time.Time]bool, workers*each)
	for _, list := range ids {
		for i, id := range list {
			if seen[id] {
				t.Fatalf("New(alice) returned %q twice", id)
			}
			seen[id] = true
			sent, _, err := ParseID(id)
			if err != nil {
				t.Fatalf("ParseID(%q) = %v", id, err)
			}
			times[sent] = true
			if i > 0 && id <= list[i-1] {
				t.Fatalf("New(alice) = %q after %q in one goroutine, want a later id", id, list[i-1])
			}
		}
	}
	if len(times) != workers*each {
		t.Errorf("%d ids carry %d distinct times, want every time distinct", workers*each, len(times))
	}
}

func TestIDsZeroValue(t *testing.T) {
	var g IDs
	before := time.Now().UTC().Truncate(time.Microsecond)
	id := g.New("bob")
	sent, from, err := ParseID(id)
	if err != nil || from != "bob" {
		t.Fatalf("ParseID(%q) = %v, %q, %v, want bob and no error", id, sent, from, err)
	}
	if sent.Before(before) || sent.After(time.Now().Add(time.Second)) {
		t.Errorf("zero IDs.New(bob) time = %v, want about %v", sent, before)
	}
}

func TestParseIDRejects(t *testing.T) {
	tests := []struct {
		id    string
		shape bool // IsID checks only the shape of an id
	}{
		{"", false},
		{"hello", false},
		{"20261121-101500.123456Z-Alice-3fa9c2", false},   // upper-case sender
		{"20261121-101500.123456Z-alice-3FA9C2", false},   // upper-case hex
		{"20261121-101500.123456Z-alice-3fa9c", false},    // short suffix
		{"20261121-101500.123456Z-alice-3fa9c2a", false},  // long suffix
		{"20261121-101500.123456Z--3fa9c2", false},        // no sender
		{"20261121-101500.123456Z-al--ice-3fa9c2", false}, // double hyphen
		{"20261121-101500.123456-alice-3fa9c2", false},    // no Z
		{"20261121-101500Z-alice-3fa9c2", false},          // no microseconds
		{"20261121-101500.123456Z-alice-3fa9c2.md", false},
		{"../20261121-101500.123456Z-alice-3fa9c2", false},
		{" 20261121-101500.123456Z-alice-3fa9c2", false},
		{"20261321-101500.123456Z-alice-3fa9c2", true}, // month 13
		{"20261121-251500.123456Z-alice-3fa9c2", true}, // hour 25
	}
	for _, tt := range tests {
		if sent, from, err := ParseID(tt.id); err == nil {
			t.Errorf("ParseID(%q) = %v, %q, nil, want an error", tt.id, sent, from)
		}
		if got := IsID(tt.id); got != tt.shape {
			t.Errorf("IsID(%q) = %v, want %v", tt.id, got, tt.shape)
		}
	}
}

func TestIDAt(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 15, 0, 123456789, time.FixedZone("X", 3600))
	id := IDAt("team-lead", at)
	sent, from, err := ParseID(id)
	if err != nil || from != "team-lead" || !sent.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("ParseID(IDAt(team-lead, %v)) = %v, %q, %v", at, sent, from, err)
	}
	if !strings.HasPrefix(id, "20261121-091500.123456Z-team-lead-") {
		t.Errorf("IDAt = %q, want the UTC time to the microsecond, then the sender", id)
	}
	if IDAt("team-lead", at) == id {
		t.Errorf("two ids for the same time and sender are equal: %q", id)
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alice", true},
		{"team-lead", true},
		{"gm2", true},
		{"corwin-voss-2", true},
		{"a", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"A", false},
		{"Alice", false},
		{"a--b", false},
		{"-a", false},
		{"a-", false},
		{"a b", false},
		{"a_b", false},
		{"a.md", false},
		{"*", false},
		{"é", false},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if tt.ok != (err == nil) {
			t.Errorf("CheckName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && len(tt.name) <= maxNameLen && !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want an error matching ErrBadName", tt.name, err)
		}
	}
}

func TestFileName(t *testing.T) {
	const id = "20261121-101500.123456Z-alice-3fa9c2"
	if got := FileName(id); got != id+".md" {
		t.Errorf("FileName(%q) = %q, want %q", id, got, id+".md")
	}
}

// TestIDFromName: the one reader of the "<id>.md" layout FileName writes.
func TestIDFromName(t *testing.T) {
	const id = "20261121-101500.123456Z-alice-3fa9c2"
	tests := []struct {
		name, id string
		ok       bool
	}{
		{FileName(id), id, true},
		{id + ".md", id, true},
		{id, "", false},                  // no extension
		{id + ".md.reason", "", false},   // the reason beside a message
		{id + ".md.delivery", "", false}, // a delivery staged by the router
		{id + ".md~", "", false},         // an editor's backup
		{"." + id + ".md", "", false},    // a dot file
		{id + ".MD", "", false},
		{"draft.md", "", false}, // a file a person named
		{".md", "", false},
		{"", "", false},
		{"20261121-101500.123456Z-Alice-3fa9c2.md", "", false}, // not an id
		{"compose-" + id + ".md", "", false},
	}
	for _, tt := range tests {
		id, ok := IDFromName(tt.name)
		if id != tt.id || ok != tt.ok {
			t.Errorf("IDFromName(%q) = %q, %v, want %q, %v", tt.name, id, ok, tt.id, tt.ok)
		}
	}
}

func TestIDOf(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 15, 0, 123456789, time.UTC)
	a := IDOf("alice", at, "hello.md", []byte("hi\n"))
	if !IsID(a) || !strings.HasPrefix(a, "20261121-101500.123456Z-alice-") {
		t.Fatalf("IDOf() = %q, want an id of alice at 10:15:00.123456", a)
	}
	if b := IDOf("alice", at.Add(time.Second), "hello.md", []byte("hi\n")); IDSuffix(b) != IDSuffix(a) {
		t.Errorf("IDOf() of one file at two times: suffixes %q and %q, want the same", IDSuffix(a), IDSuffix(b))
	}
	for _, other := range []string{IDOf("alice", at, "hello2.md", []byte("hi\n")), IDOf("alice", at, "hello.md", []byte("hi!\n"))} {
		if IDSuffix(other) == IDSuffix(a) {
			t.Errorf("IDOf() of another name or content ends like %q: %q", a, other)
		}
	}
}

func TestIDLen(t *testing.T) {
	for _, from := range []string{"a", "gm", "tilda-brannock"} {
		if got, want := IDLen(from), len(IDAt(from, time.Now())); got != want {
			t.Errorf("IDLen(%q) = %d, want %d", from, got, want)
		}
	}
}

// TestRejectedIDs: a file named by a message id that the router refused
// keeps that id in rejected/ (behind the time it was refused), for
// parley retry and read to find it by.
func TestRejectedIDs(t *testing.T) {
	d := Dir(t.TempDir())
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	const id = "20261129-020000.000000Z-aria-613a98"
	for _, n := range []string{"20261129-020159.843861Z-" + id + ".md", "20261129-020159.843861Z-" + id + ".md.reason", "20261129-020200.000000Z-hand.md"} {
		if err := os.WriteFile(d.Path(Rejected, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := d.IDs(Rejected)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("IDs(rejected) = %v, %v; want [%s]", ids, err, id)
	}
	if got := d.RejectedNames(id); len(got) != 1 || got[0] != "20261129-020159.843861Z-"+id+".md" {
		t.Errorf("RejectedNames = %v", got)
	}
}
