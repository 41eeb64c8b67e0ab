package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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

// TestReadInTimeOrderAsSorted: journals with lines moved near and far
// from their place, blank and broken lines among them, read in time
// order hand on what sorting the whole journal by time (stably) would.
// (Written with the merging of runs: a run that held a broken line lost
// the entries still in its window.)
func TestReadInTimeOrderAsSorted(t *testing.T) {
	orders := map[journalOrder]int{}
	for seed := uint64(1); seed <= 24; seed++ {
		rnd := rand.New(rand.NewPCG(seed, seed))
		n := 3000 + rnd.IntN(3000)
		times := make([]int, n)
		for i := 1; i < n; i++ {
			times[i] = times[i-1] + rnd.IntN(2) // some times repeat
		}
		// Seeds by four: lines in order; moved near their place; blocks
		// moved far (runs); lines moved far all over.
		moves, near, most := 0, seed%4 == 2, 1500
		switch seed % 4 {
		case 2:
			moves, most = 1+rnd.IntN(100), 20
		case 3:
			moves = 1 + rnd.IntN(12)
		case 0:
			moves, most = 200, 1
		}
		for ; moves > 0; moves-- {
			from, size := rnd.IntN(n), 1+rnd.IntN(most)
			if from+size > n {
				size = n - from
			}
			to := rnd.IntN(n)
			if near {
				to = from + rnd.IntN(2*OrderWindow/3) - OrderWindow/3
			} else if seed%4 == 0 {
				from, to = rnd.IntN(n/4), n/2+rnd.IntN(n/2) // far later
			}
			block := slices.Clone(times[from : from+size])
			times = slices.Delete(times, from, from+size)
			to = max(0, min(to, len(times)))
			times = slices.Insert(times, to, block...)
		}
		var b strings.Builder
		type line struct {
			time int
			id   string
		}
		var lines []line
		for i, tm := range times {
			id := fmt.Sprint("l", i)
			fmt.Fprintf(&b, `{"time":"2026-11-29T10:00:00.%06dZ","id":%q,"outcome":"delivered"}`+"\n", tm, id)
			lines = append(lines, line{tm, id})
			switch rnd.IntN(500) {
			case 0:
				b.WriteString("\n")
			case 1:
				b.WriteString(`{"time":"2026-11-29T10:00:00.0` + "\n") // cut short
			}
		}
		slices.SortStableFunc(lines, func(a, b line) int { return a.time - b.time })
		var want []string
		for _, l := range lines {
			want = append(want, l.id)
		}
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var got []string
		var all JournalFilter
		var st orderStats
		_, err := all.compile().readInTimeOrder(path, func(e Entry, _ []byte) error {
			got = append(got, e.ID)
			return nil
		}, &st)
		orders[st.order]++
		var je *JournalError
		if err != nil && !errors.As(err, &je) {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("seed %d: ReadInTimeOrder read %d entries, not in the order sorting gives (%d)", seed, len(got), len(want))
		}
	}
	if orders[inOrder] == 0 || orders[nearOrder] == 0 || orders[mergedOrder] == 0 {
		t.Errorf("journals read in order, near it, merged: %v; want some of each", orders)
	}
}
