package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// journal appends entries to the journal file. The router and the
// agents' workers write to it at once: each append is one write of whole
// lines, under a lock. The lines are stamped with the time under that
// lock too, so the runner's lines are in the order of their times: a
// router that stamped its batch, then wrote it after a worker's line,
// made lines milliseconds out of order, and every reader of the journal
// in time order then had to sort (see workspace.ReadInTimeOrder).
//
// It follows its file: before each write it checks that the path still
// names the file it has open, and when git (a checkout, a stash) or a
// person replaced or removed it, it opens what the path names now. A
// write cut short (a full disk) is taken back, so no line is ever left
// half written with the next one glued to it.
//
// When it follows, it notes the file it had open and the one that
// replaced it; settle compares them later, outside the lock the writers
// take: the lines the file it had open held that the new one lacks (a
// stash rewound it) are missing, until a file that holds them is put
// back (see lost). Only a hash of each line is kept, and only the ends
// of the files are read (see compareOld). A journal removed or emptied
// (by a person) lacks nothing: it was their act, and settle reports it,
// once.
type journal struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	info    os.FileInfo // of f: the path names another file when it differs
	retired []*os.File  // files replaced under the path, closed with the journal
	broken  bool        // a write cut short could not be taken back: end its line first
	// backlog holds lines of record that could not be written: they are
	// written before any later line, at the next append or flush.
	backlog  []byte
	failedAt time.Time // when writing the backlog last failed
	// swaps are the replacements of the file not compared yet, in the
	// order they were found (see settle).
	swaps []swap
	// missing counts, by the hash of a line (seed), the lines of the
	// journal the file at the path lacks since it was replaced; lostAt
	// is when it first lacked some. Empty when it lacks none. Changed
	// by settle only, under mu and settling.
	missing map[uint64]int
	lostAt  time.Time
	seed    maphash.Seed
	// settling makes settles take turns: each compares in order.
	settling sync.Mutex
	// reading, when set (by tests), is called by settle as it starts
	// reading a file.
	reading func()
	// write writes to the file; tests make it fail.
	write func(f *os.File, b []byte) (int, error)
	now   func() time.Time
	// arrived are the copies the lines written since the journal was
	// opened put into inboxes (Entry.Arrived): what this runner
	// delivered, looked for by noteGone; the last maxArrivals at most.
	arrived []arrival
	// last is the time of the last lines stamped (see stamp).
	last string
}

// swap is a replacement of the journal's file, found by follow: old, of
// oldSize bytes, by now, of nowSize bytes; gone when the path named no
// file (a person removed it) or an empty one.
type swap struct {
	old, now         *os.File
	oldSize, nowSize int64
	gone             bool
}

// How much of the files settle reads: the end of the file replaced,
// where the lines a rewind took are (a stash takes the session's last
// lines), and more of the file that replaced it, which may hold more
// lines after them (a checkout of a later commit). Lines lost before
// the end read are not counted; the lines of a journal of a long
// session hold a few hundred bytes each, so that is tens of thousands
// of lines back.
const (
	compareOld = 8 << 20
	compareNew = 64 << 20
)

// journalRetry is how soon lines that could not be written (a full disk)
// are tried again: well under the rescan interval.
const journalRetry = time.Second

// errJournal marks the errors of writing the journal.
var errJournal = errors.New("writing the journal")

// openJournal opens the journal for appending. A last line cut short by a
// crash is ended, so the next entry starts on a line of its own.
func openJournal(path string) (*journal, error) {
	j := &journal{path: path, write: (*os.File).Write, now: time.Now, seed: maphash.MakeSeed()}
	f, info, err := openJournalFile(path)
	if err != nil {
		return nil, err
	}
	j.f, j.info = f, info
	return j, nil
}

// openJournalFile opens (or creates) the journal file for appending and
// ends its last line if it was cut short.
func openJournalFile(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		// .parley/ was removed: made again, as mailboxes are.
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = endLine(f, info.Size())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// endLine writes a newline at the end of a file of size bytes unless it
// is empty or ends with one.
func endLine(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil || last[0] == '\n' {
		return err
	}
	_, err := f.Write([]byte("\n"))
	return err
}

// encode renders entries as journal lines (workspace.EncodeJournal).
func encode(entries []workspace.Entry) ([]byte, error) {
	var b bytes.Buffer
	if err := workspace.EncodeJournal(&b, entries...); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// append writes entries, one JSON line each, in one write (after the
// backlog, if any), each stamped with the time it is written (the
// entries' Time is set); they are durable once s.Sync returns. When the write
// fails, nothing of it is left in the file and the entries are not kept:
// the router routes the files again, and journals them then.
func (j *journal) append(entries []workspace.Entry, s *mailbox.Syncer) error {
	return j.add(entries, s, false)
}

// record writes entries as append does; when the write fails, they are
// kept and written before any later line (see flush).
func (j *journal) record(entries []workspace.Entry, s *mailbox.Syncer) error {
	return j.add(entries, s, true)
}

func (j *journal) add(entries []workspace.Entry, s *mailbox.Syncer, keep bool) error {
	if len(entries) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	stamp := j.stamp()
	for i := range entries {
		entries[i].Time = stamp
	}
	b, err := encode(entries)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Arrived() && e.ID != "" {
			for _, to := range e.To {
				if len(j.arrived) == maxArrivals {
					// The oldest go: a reset takes what was written
					// since the last commit, the newest.
					j.arrived = append(j.arrived[:0], j.arrived[maxArrivals/2:]...)
				}
				j.arrived = append(j.arrived, arrival{agent: to, id: e.ID})
			}
		}
	}
	n := len(j.backlog)
	j.backlog = append(j.backlog, b...)
	if err := j.writeBacklog(s); err != nil {
		if !keep {
			j.backlog = j.backlog[:n]
		}
		return err
	}
	return nil
}

// stamp returns the time of the lines written now: the clock's, or the
// last line's when the clock went back (a clock set back, a
// virtual machine resumed), so that the lines are in the order of their
// times. j.mu is held.
func (j *journal) stamp() string {
	t := journalTime(j.now())
	if t < j.last {
		return j.last
	}
	j.last = t
	return t
}

// flush writes the lines kept from failed writes, if any.
func (j *journal) flush(s *mailbox.Syncer) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.backlog) == 0 {
		return nil
	}
	return j.writeBacklog(s)
}

// retryAt returns when lines kept from a failed write are to be tried
// again; zero when none are kept.
func (j *journal) retryAt() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.backlog) == 0 {
		return time.Time{}
	}
	return j.failedAt.Add(journalRetry)
}

// writeBacklog writes the backlog in one write. j.mu is held.
func (j *journal) writeBacklog(s *mailbox.Syncer) error {
	err := j.writeLines(j.backlog)
	if err != nil {
		j.failedAt = j.now()
		return fmt.Errorf("%w %s: %w", errJournal, j.path, err)
	}
	s.Wrote(j.f)
	j.backlog = j.backlog[:0]
	return nil
}

// writeLines writes whole lines at the end of the file the path names,
// or nothing. j.mu is held.
func (j *journal) writeLines(b []byte) error {
	if err := j.follow(); err != nil {
		return err
	}
	info, err := j.f.Stat()
	if err != nil {
		return err
	}
	if j.broken {
		if err := endLine(j.f, info.Size()); err != nil {
			return err
		}
		j.broken = false
		if info, err = j.f.Stat(); err != nil {
			return err
		}
	}
	start := info.Size()
	n, err := j.write(j.f, b)
	if err != nil && n > 0 {
		// Cut short: take it back, unless another writer (a parley
		// command) appended since; then the next write ends the line
		// first, and `parley log` skips the broken one, saying so.
		if now, serr := j.f.Stat(); serr != nil || now.Size() != start+int64(n) || j.f.Truncate(start) != nil {
			j.broken = true
		}
	}
	return err
}

// follow opens the file the path names now, when it is no longer the one
// open: git replaced it (a checkout, a stash), or a person removed it.
// It notes the replacement for settle, which compares the files. j.mu is
// held.
func (j *journal) follow() error {
	info, err := os.Stat(j.path)
	if err == nil && os.SameFile(info, j.info) {
		return nil
	}
	f, info, err := openJournalFile(j.path)
	if err != nil {
		return err
	}
	sw := swap{old: j.f, now: f, nowSize: info.Size(), gone: info.Size() == 0}
	if old, err := j.f.Stat(); err == nil {
		sw.oldSize = old.Size()
	}
	j.swaps = append(j.swaps, sw)
	// The old file may be waiting for a sync (see mailbox.Syncer.Wrote):
	// it is closed with the journal. settle reads it meanwhile.
	j.retired = append(j.retired, j.f)
	j.f, j.info, j.broken = f, info, false
	return nil
}

// settle compares the files that replaced one another since it last
// ran (see follow), reading them without holding j.mu: writers are not
// kept waiting. A file that replaced the journal and lacks lines it held,
// or lines missing already, has them missing (see lost); one that holds
// them again ends it. It reports whether the journal was removed or
// emptied meanwhile: then nothing is missing (the person's act is said
// once, not kept as a standing problem).
func (j *journal) settle() (removed bool) {
	j.settling.Lock()
	defer j.settling.Unlock()
	j.mu.Lock()
	swaps := j.swaps
	j.swaps = nil
	j.mu.Unlock()
	for _, sw := range swaps {
		if sw.gone {
			removed = true
			j.setMissing(nil)
			continue
		}
		if missing, err := j.compare(sw); err == nil {
			j.setMissing(missing)
		}
	}
	return removed
}

// setMissing makes missing the lines the journal lacks. j.settling is
// held.
func (j *journal) setMissing(missing map[uint64]int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case len(missing) == 0:
		j.missing, j.lostAt = nil, time.Time{}
	case len(j.missing) == 0:
		j.missing, j.lostAt = missing, j.now()
	default:
		j.missing = missing
	}
}

// compare returns which lines of the journal the file that replaced
// another lacks (by hash, with how many of each): those the other held
// (at its end: compareOld), and those missing already (a file put back
// may hold them again). j.settling is held: j.missing is read without
// j.mu.
func (j *journal) compare(sw swap) (map[uint64]int, error) {
	want := make(map[uint64]int, len(j.missing))
	for h, n := range j.missing {
		want[h] += n
	}
	if err := j.eachLine(sw.old, sw.oldSize, compareOld, func(h uint64) { want[h]++ }); err != nil {
		return nil, err
	}
	err := j.eachLine(sw.now, sw.nowSize, compareNew, func(h uint64) {
		if n := want[h]; n > 1 {
			want[h] = n - 1
		} else if n == 1 {
			delete(want, h)
		}
	})
	if err != nil {
		return nil, err
	}
	return want, nil
}

// eachLine calls fn with the hash of each whole line of the last most
// bytes of f's first size (a line cut by the start of those bytes, or
// left unended at their end, is passed over).
func (j *journal) eachLine(f *os.File, size, most int64, fn func(uint64)) error {
	if j.reading != nil {
		j.reading()
	}
	start := max(0, size-most)
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, size-start), 64<<10)
	var h maphash.Hash
	h.SetSeed(j.seed)
	skip := start > 0 // in the middle of a line, perhaps: up to its end
	for {
		chunk, err := r.ReadSlice('\n')
		if !skip {
			h.Write(chunk)
		}
		switch {
		case err == nil:
			if !skip {
				fn(h.Sum64())
			}
			h.Reset()
			skip = false
		case errors.Is(err, bufio.ErrBufferFull):
			// A line longer than the buffer: hashed on.
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// look follows the file at the path, as a write does: a file replaced
// while nothing is written is noticed too (the runner looks at each
// rescan).
func (j *journal) look() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.follow()
}

// lost returns how many lines of the journal the file at the path lacks
// since git or a person replaced it (a stash that rewound it), and since
// when; 0 when it lacks none, or holds them again. It counts what settle
// found.
func (j *journal) lost() (int, time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, c := range j.missing {
		n += c
	}
	return n, j.lostAt
}

func (j *journal) close() error {
	j.settling.Lock() // settle reads the files
	defer j.settling.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	errs := []error{j.f.Close()}
	for _, f := range j.retired {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// journalTime formats a time for the journal.
func journalTime(t time.Time) string {
	return t.UTC().Format(mailbox.TimeFormat)
}
