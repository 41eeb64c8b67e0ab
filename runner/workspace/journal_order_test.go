package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestReadInTimeOrderFirstEntryEarly: reading a journal of 100,000 lines
// a few of which are a little out of order hands on its first entry
// before it decoded and held the whole journal: what was allocated by
// then is about the file's size (its lines' times, read first), not the
// entries of every line (the tryout: parley log held 91,000 entries,
// 250 MB, and printed its first line after 0.65 s).
func TestReadInTimeOrderFirstEntryEarly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	data := nearJournal(100000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("first entry")
	var before, at runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var all JournalFilter
	err := all.ReadInTimeOrder(path, func(e Entry, _ []byte) error {
		runtime.ReadMemStats(&at)
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("ReadInTimeOrder = %v, want the first entry handed on", err)
	}
	if got, most := at.TotalAlloc-before.TotalAlloc, 2*uint64(len(data)); got > most {
		t.Errorf("allocated %d MB before the first entry, want at most %d MB (twice the journal's size)", got>>20, most>>20)
	}
}

// nearJournal returns a journal of n lines, every 2,000th line stamped
// a millisecond before the two before it (a worker's line written after
// the router's batch stamped later).
func nearJournal(n int) []byte {
	var b bytes.Buffer
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		at := base.Add(time.Duration(i) * time.Millisecond)
		if i%2000 == 1999 {
			at = at.Add(-3 * time.Millisecond)
		}
		id := fmt.Sprintf("%s-a-%06x", at.Format("20060102-150405.000000Z"), i)
		fmt.Fprintf(&b, `{"time":%q,"id":%q,"from":"a","to":["b"],"type":"BENCH","outcome":"delivered","file":"%s.md"}`+"\n",
			at.Format("2006-01-02T15:04:05.000000Z"), id, id)
	}
	return b.Bytes()
}

// BenchmarkReadInTimeOrder reads a journal of 100,000 lines a few of
// which are a little out of order, as parley log does.
func BenchmarkReadInTimeOrder(b *testing.B) {
	path := filepath.Join(b.TempDir(), "journal.jsonl")
	data := nearJournal(100000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var all JournalFilter
	for b.Loop() {
		n := 0
		if err := all.ReadInTimeOrder(path, func(Entry, []byte) error { n++; return nil }); err != nil || n != 100000 {
			b.Fatal(n, err)
		}
	}
}
