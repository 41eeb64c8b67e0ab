package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// newSyncer returns a Syncer for the filesystem holding dir.
func newSyncer(t *testing.T, dir string) *mailbox.Syncer {
	t.Helper()
	s, err := mailbox.NewSyncer(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFollowJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	s := newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if err := j.append([]workspace.Entry{{ID: "first", Outcome: workspace.Delivered}}, s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan error)
	go func() {
		done <- workspace.FollowJournal(ctx, path, func(e workspace.Entry) error { got <- e.ID; return nil })
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case id := <-got:
			if id != want {
				t.Errorf("followed entry %q, want %q", id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("entry %q never arrived", want)
		}
	}
	expect("first")
	// A line written in two parts is read once it is whole.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"sec`)
	f.Close()
	if err := j.append([]workspace.Entry{{ID: "third"}}, s); err != nil {
		t.Fatal(err)
	}
	// The half line and "third" were joined into one bad line: skipped.
	if err := j.append([]workspace.Entry{{ID: "fourth"}}, s); err != nil {
		t.Fatal(err)
	}
	expect("fourth")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("FollowJournal = %v, want nil when cancelled", err)
	}
}

func TestOpenJournalEndsCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a"}`+"\n"+`{"id":"b`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.append([]workspace.Entry{{ID: "c"}}, s); err != nil {
		t.Fatal(err)
	}
	j.close()
	var ids []string
	err = workspace.ReadJournal(path, func(e workspace.Entry) error { ids = append(ids, e.ID); return nil })
	if len(ids) != 2 || ids[0] != "a" || ids[1] != "c" {
		t.Errorf("entries after a cut line = %v, want [a c]", ids)
	}
	if err == nil {
		t.Errorf("ReadJournal did not report the cut line")
	}
}

// journalLines reads a journal file's lines, each of which must be a
// whole entry, and returns their ids.
func journalLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		var e workspace.Entry
		if !strings.HasSuffix(l, "\n") || json.Unmarshal([]byte(l), &e) != nil {
			t.Fatalf("journal line %q is not a whole entry; journal:\n%s", l, data)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

func entry(id string) []workspace.Entry {
	return []workspace.Entry{{ID: id, Outcome: workspace.Delivered}}
}

// newJournal opens a journal in a new workspace's .parley/, with a
// syncer for its writes; the caller closes it.
func newJournal(t *testing.T) (path string, s *mailbox.Syncer, j *journal) {
	t.Helper()
	path = filepath.Join(t.TempDir(), ".parley", "journal.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	s = newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, s, j
}

// TestJournalFollowsItsFile: a journal replaced under the runner (git
// checkout) or removed gets the next lines, not the file the runner had
// open (issue 11, item 8).
func TestJournalFollowsItsFile(t *testing.T) {
	path, s, j := newJournal(t)
	defer j.close()
	if err := j.append(entry("a"), s); err != nil {
		t.Fatal(err)
	}
	// git checkout: a new file renamed over the path, its last line
	// not ended.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(`{"id":"from-git","outcome":"delivered"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := j.append(entry("b"), s); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"from-git", "b"}, journalLines(t, path)); d != "" {
		t.Errorf("journal after it was replaced (-want +got):\n%s", d)
	}
	// rm -rf .parley
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if err := j.append(entry("c"), s); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c"}, journalLines(t, path)); d != "" {
		t.Errorf("journal after it was removed (-want +got):\n%s", d)
	}
	if err := s.Sync(); err != nil {
		t.Errorf("Sync() after the journal was replaced = %v", err)
	}
}

// TestJournalCutShort: a write cut short by a full disk leaves no half
// line for the next one to be glued to; the lines of record are kept and
// written once the disk has room (issue 11, item 8).
func TestJournalCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	s := newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if err := j.append(entry("a"), s); err != nil {
		t.Fatal(err)
	}
	full := true
	j.write = func(f *os.File, b []byte) (int, error) {
		if !full {
			return f.Write(b)
		}
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	if err := j.append(entry("routed"), s); !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, errJournal) {
		t.Fatalf("append() on a full disk = %v, want ENOSPC", err)
	}
	if d := cmp.Diff([]string{"a"}, journalLines(t, path)); d != "" {
		t.Errorf("journal after a write cut short (-want +got):\n%s", d)
	}
	if err := j.record(entry("handled"), s); err == nil {
		t.Fatal("record() on a full disk = nil, want an error")
	}
	if j.retryAt().IsZero() {
		t.Error("retryAt() = zero with a line kept")
	}
	full = false
	if err := j.append(entry("routed"), s); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "handled", "routed"}, journalLines(t, path)); d != "" {
		t.Errorf("journal once the disk has room (-want +got):\n%s", d)
	}
	if !j.retryAt().IsZero() {
		t.Error("retryAt() is set with nothing kept")
	}
}

// TestJournalRetry: files whose routing failed on writing the journal are
// tried again within journalRetry, however often it failed, not after the
// rescan interval (issue 11, item 8).
func TestJournalRetry(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	drop(t, ws, "alice", "hello.md", "---\nto: bob\n---\nHi.\n")
	clock := time.Now()
	r := clockRunner(t, ws, &clock)
	fails := 0
	r.journal.write = func(f *os.File, b []byte) (int, error) {
		if fails < 8 {
			fails++
			return 0, syscall.ENOSPC
		}
		return f.Write(b)
	}
	settle := ws.Config.Router.Settle
	last := clock
	for seen := 0; fails < 8; {
		r.scan()
		next, err := r.routePending(context.Background())
		if fails > seen {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("routing with a full disk = %v, want ENOSPC", err)
			}
			if gap := clock.Sub(last); gap > journalRetry+settle {
				t.Fatalf("failed journal write %d came %v after the one before, want at most %v", fails, gap, journalRetry+settle)
			}
			seen, last = fails, clock
			next = r.pending[fileKey{"alice", "hello.md"}].get().retryAt
		}
		if !next.After(clock) {
			t.Fatalf("next look at %v, not after now", next)
		}
		clock = next
	}
	clock = clock.Add(journalRetry + settle)
	look(t, r)
	if got := names(t, ws, "alice", mailbox.Sent); len(got) != 1 {
		t.Errorf("alice's sent/ = %v once the journal could be written, want the message", got)
	}
	if ids := journalLines(t, ws.JournalPath()); len(ids) != 1 {
		t.Errorf("journal = %v, want one line", ids)
	}
}

// TestCommitPipelined: a batch is journaled and moved to sent/ while the
// next ones are delivered and synced. When the journal cannot be written
// in the middle of a flood, the batches behind it, delivered already, are
// routed again with the rest: every message reaches its recipient once,
// is journaled once, and one sender's messages keep their order, in the
// inbox and in the journal.
func TestCommitPipelined(t *testing.T) {
	ws := newWorkspace(t, "ann", "bo", "cy")
	const each = 12
	for i := range each {
		for _, from := range []string{"ann", "bo"} {
			drop(t, ws, from, fmt.Sprintf("note-%02d.md", i), fmt.Sprintf("---\nto: cy\n---\n%s %02d\n", from, i))
		}
	}
	clock := time.Now()
	r, err := Open(ws, Options{BatchSize: 3, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writes := 0
	r.journal.write = func(f *os.File, b []byte) (int, error) {
		if writes++; writes == 3 {
			return 0, syscall.ENOSPC // the third batch's journal
		}
		return f.Write(b)
	}
	r.scan()
	if _, err := r.routePending(context.Background()); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("routing with the journal failing = %v, want ENOSPC", err)
	}
	for range 4 {
		clock = clock.Add(time.Minute) // past every retry pause
		look(t, r)
	}
	for _, from := range []string{"ann", "bo"} {
		if got := names(t, ws, from, mailbox.Outbox); len(got) != 0 {
			t.Errorf("%s's outbox = %v, want every file routed", from, got)
		}
		if got := names(t, ws, from, mailbox.Sent); len(got) != each {
			t.Errorf("%s's sent/ holds %d files, want %d", from, len(got), each)
		}
	}
	// cy's inbox, in the order of the ids: each sender's messages in the
	// order they were written, each once.
	var bodies []string
	ids := map[string]bool{}
	for _, n := range names(t, ws, "cy", mailbox.Inbox) {
		m := readMessage(t, ws.Mailbox("cy").Path(mailbox.Inbox, n))
		bodies = append(bodies, strings.TrimSpace(string(m.Body)))
		id, _ := m.Header().Get("id")
		ids[id] = true
	}
	for _, from := range []string{"ann", "bo"} {
		var got []string
		for _, b := range bodies {
			if strings.HasPrefix(b, from+" ") {
				got = append(got, b)
			}
		}
		var want []string
		for i := range each {
			want = append(want, fmt.Sprintf("%s %02d", from, i))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s's messages in cy's inbox (-want +got):\n%s", from, d)
		}
	}
	journaled := journalLines(t, ws.JournalPath())
	seen := map[string]bool{}
	for _, id := range journaled {
		if seen[id] {
			t.Errorf("%s is journaled twice", id)
		}
		seen[id] = true
		if !ids[id] {
			t.Errorf("journal line for %s, which is not in cy's inbox", id)
		}
	}
	if len(journaled) != 2*each {
		t.Errorf("journal has %d lines, want %d", len(journaled), 2*each)
	}
	if !slices.IsSorted(journaled) {
		t.Errorf("journal lines are not in the order messages were routed: %v", journaled)
	}
}

// TestJournalRewound: a journal replaced by a file that lacks lines it
// held (git stash rewound it to the last commit) counts them, until a
// file that holds them again is put back (git stash pop); a file that
// holds them all and more (a checkout of a later commit) lacks none.
// (A tryout: a stash mid-session, and parley log and parley usage lost
// lines without a word.)
func TestJournalRewound(t *testing.T) {
	path, s, j := newJournal(t)
	defer j.close()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	j.now = func() time.Time { return at }
	put := func(name string, data []byte) { // as git does: a new file renamed over the path
		t.Helper()
		if err := os.WriteFile(path+".new", data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	lost := func(when string, want int) {
		t.Helper()
		if err := j.look(); err != nil {
			t.Fatal(err)
		}
		if j.settle() {
			t.Errorf("%s: settle() = true, want the journal not taken for removed", when)
		}
		n, since := j.lost()
		if n != want || (n > 0) != since.Equal(at) {
			t.Errorf("%s: lost() = %d since %v, want %d", when, n, since, want)
		}
	}
	for _, id := range []string{"a", "b"} {
		if err := j.append(entry(id), s); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c", "d", "e"} {
		if err := j.append(entry(id), s); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lost("before any replacement", 0)

	put("stash", committed)
	lost("after a stash", 3)
	if err := j.append(entry("f"), s); err != nil {
		t.Fatal(err)
	}
	lost("after a line written since", 3)
	put("pop", whole)
	lost("with the stashed file back, without the line written since", 1)
	all := append(append([]byte{}, whole...), `{"time":"2026-11-29T10:00:00.000000Z","id":"f","outcome":"delivered"}`+"\n"...)
	put("both", all)
	lost("with every line back", 0)

	put("forward", append(all, `{"id":"g","outcome":"delivered"}`+"\n"...))
	lost("after a checkout of a later commit", 0)
}

// TestJournalRemoved: a journal a person removed (rm, mv) or replaced by
// an empty file is their act: settle says so once, and nothing is
// counted missing. Every line the removed file held was counted lost, in
// parley status, for the rest of the run.
func TestJournalRemoved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(path string) error
	}{
		{"rm", os.Remove},
		{"mv", func(path string) error { return os.Rename(path, path+".old") }},
		{"an empty file put in its place", func(path string) error {
			if err := os.WriteFile(path+".new", nil, 0o644); err != nil {
				return err
			}
			return os.Rename(path+".new", path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, s, j := newJournal(t)
			defer j.close()
			for _, id := range []string{"a", "b", "c"} {
				if err := j.append(entry(id), s); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.remove(path); err != nil {
				t.Fatal(err)
			}
			if err := j.append(entry("d"), s); err != nil { // into a new file
				t.Fatal(err)
			}
			if !j.settle() {
				t.Errorf("settle() = false, want the removal found")
			}
			if n, _ := j.lost(); n != 0 {
				t.Errorf("lost() = %d, want 0: a journal removed by a person is no standing problem", n)
			}
			if j.settle() {
				t.Errorf("second settle() = true, want the removal said once")
			}
		})
	}
}

// TestJournalSettleUnlocked: the files are compared without the lock
// the writers take: a line is written while settle reads them. settle
// read both whole files under it, and every worker's journal line
// waited.
func TestJournalSettleUnlocked(t *testing.T) {
	path, s, j := newJournal(t)
	defer j.close()
	if err := j.append(entry("a"), s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if err := j.look(); err != nil {
		t.Fatal(err)
	}
	in, goOn := make(chan struct{}), make(chan struct{})
	var once bool
	j.reading = func() {
		if !once {
			once = true
			close(in)
			<-goOn
		}
	}
	settled := make(chan bool)
	go func() { settled <- j.settle() }()
	<-in
	if err := j.append(entry("b"), s); err != nil { // waited for settle: the test never ends
		t.Fatal(err)
	}
	close(goOn)
	<-settled
	if n, _ := j.lost(); n != 1 {
		t.Errorf("lost() = %d, want 1 (the line a)", n)
	}
}

// TestJournalEachLine: of a file's end, only whole lines are hashed (a
// line cut by where the reading starts, or left unended, is passed over),
// and a line longer than the reader's buffer is one line.
func TestJournalEachLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	data := "one\n" + long + "\ntwo\nthree\ncut"
	f, err := os.Create(filepath.Join(t.TempDir(), "j"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	j := &journal{seed: maphash.MakeSeed()}
	hash := func(l string) uint64 {
		var got []uint64
		j.eachLine(mustFile(t, l+"\n"), int64(len(l)+1), 1<<30, func(h uint64) { got = append(got, h) })
		return got[0]
	}
	for _, tc := range []struct {
		most int64
		want []string
	}{
		{1 << 30, []string{"one", long, "two", "three"}},
		{int64(len("wo\nthree\ncut")), []string{"three"}},
		{int64(len("\ntwo\nthree\ncut")), []string{"two", "three"}},
	} {
		var got, want []uint64
		if err := j.eachLine(f, int64(len(data)), tc.most, func(h uint64) { got = append(got, h) }); err != nil {
			t.Fatal(err)
		}
		for _, l := range tc.want {
			want = append(want, hash(l))
		}
		if !slices.Equal(got, want) {
			t.Errorf("eachLine(the last %d bytes) = %d lines, want %d", tc.most, len(got), len(want))
		}
	}
}

func mustFile(t *testing.T, data string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "line"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestJournalArrivalsBounded: the copies a runner remembers delivering,
// for noteGone, are the last maxArrivals at most: a runner that routes
// for months does not grow with every copy it made; the newest are kept.
func TestJournalArrivalsBounded(t *testing.T) {
	_, s, j := newJournal(t)
	defer j.close()
	batch := make([]workspace.Entry, 1000)
	total := maxArrivals + 2*len(batch) // a multiple of the batch
	for n := 0; n < total; n += len(batch) {
		for i := range batch {
			batch[i] = workspace.Entry{ID: fmt.Sprintf("id-%d", n+i), Outcome: workspace.Delivered, To: []string{"bob"}}
		}
		if err := j.add(batch, s, false); err != nil {
			t.Fatal(err)
		}
	}
	got := j.arrivals()
	if len(got) > maxArrivals {
		t.Fatalf("remembers %d copies, want at most %d", len(got), maxArrivals)
	}
	if last := got[len(got)-1]; last.id != fmt.Sprintf("id-%d", total-1) {
		t.Errorf("the newest copy remembered is %v, want id-%d", last, total-1)
	}
}

// TestJournalStampsAsWritten: the journal stamps each line with the time
// it is written, under its lock, so its lines are in the order of their
// times: the router stamped a batch, then wrote it after a worker's line
// stamped later (a dev-pipeline run: 41 lines of 91,000 out of order, and
// parley log held the whole journal to sort it). A clock set back does
// not put a line before the one written last.
func TestJournalStampsAsWritten(t *testing.T) {
	path, s, j := newJournal(t)
	defer j.close()
	clock := []time.Time{
		time.Date(2026, 11, 29, 10, 0, 1, 0, time.UTC),
		time.Date(2026, 11, 29, 10, 0, 2, 0, time.UTC),
		time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), // set back
		time.Date(2026, 11, 29, 10, 0, 3, 0, time.UTC),
	}
	j.now = func() time.Time { t := clock[0]; clock = clock[1:]; return t }
	stale := workspace.Entry{Time: "2026-11-29T10:00:00.500000Z", ID: "routed", Outcome: workspace.Delivered} // stamped before the worker's line
	for _, es := range [][]workspace.Entry{
		{{ID: "handled", Outcome: workspace.Handled}},
		{stale},
		{{ID: "after the clock went back", Outcome: workspace.Handled}},
		{{ID: "later", Outcome: workspace.Handled}},
	} {
		if err := j.record(es, s); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := workspace.ReadJournal(path, func(e workspace.Entry) error {
		got = append(got, e.Time+" "+e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2026-11-29T10:00:01.000000Z handled",
		"2026-11-29T10:00:02.000000Z routed",
		"2026-11-29T10:00:02.000000Z after the clock went back",
		"2026-11-29T10:00:03.000000Z later",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("journal (-want +got):\n%s", d)
	}
}
