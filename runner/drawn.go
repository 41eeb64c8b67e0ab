package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// The ids drawn for files written by hand. Such a file is never rewritten
// to carry its id (see idFor): the id is drawn from the file's time, name
// and content, and drawn alike after a crash. But a file whose time
// changed in between — put away and back by `git stash` and `git stash
// pop` after a runner was killed with some of its copies delivered —
// would draw another id, and the recipients that had it would get it a
// second time. So each id drawn is written down, in .parley/drawn.jsonl,
// before any copy named by it is delivered, and made durable with those
// copies (the batch's sync). A file of the same sender, name and content
// (the id's last six hex digits) whose message is not in sent/ gets that
// id again.
//
// An id is forgotten when its message is in sent/, and when its file left
// the outbox without being routed (deleted, or rejected after an edit)
// before any copy named by it was delivered (see abandoned): a file of
// that name and content that comes back then draws another id, and no
// recipient holds the first. One whose copies were delivered is kept
// while its file is away: it may be put back (git stash pop).

// drawnFile is the record's name in the state directory.
const drawnFile = "drawn.jsonl"

// drawnOutcome is the outcome of a line of the record: not a journal
// outcome (the record is a file of its own).
const drawnOutcome = "id drawn"

// compactDrawnAfter is how many lines are written to the record before it
// is written again with only the ids still in use (see drawnIDs.compact).
const compactDrawnAfter = 4096

// drawnIDs is the record, read when the first id is drawn or looked for.
type drawnIDs struct {
	path string
	log  *journal
	// live holds the ids whose messages are not in sent/ yet: sender ->
	// file name -> ids, oldest first.
	live map[string]map[string][]string
	n    int // live ids
	// written counts the lines written since the record was last written
	// whole.
	written int
}

// drawnRecord returns the runner's record of drawn ids, reading it the
// first time.
func (r *Runner) drawnRecord() (*drawnIDs, error) {
	if r.drawn != nil {
		return r.drawn, nil
	}
	d := &drawnIDs{path: filepath.Join(r.ws().Root, workspace.StateDir, drawnFile), live: make(map[string]map[string][]string)}
	lines, err := readDrawn(d.path)
	if err != nil {
		return nil, err
	}
	for _, e := range lines {
		box, ok := r.agents[e.From]
		if !ok || !mailbox.IsID(e.ID) || box.IsSent(e.ID) {
			continue // routed since, or of an agent that is gone
		}
		if r.abandoned(e.From, e.File, e.ID) {
			// No copy of it is being delivered: every batch reads the
			// record before it delivers (writeDrawn).
			continue
		}
		d.add(e.From, e.File, e.ID)
	}
	if d.n < len(lines) {
		// Only what is still in use is kept.
		if err := d.rewrite(r); err != nil {
			return nil, err
		}
	}
	if d.log, err = openJournal(d.path); err != nil {
		return nil, err
	}
	d.log.now = r.opts.Now
	r.drawn = d
	return d, nil
}

// readDrawn reads the record's lines; a line that does not parse (one cut
// short by a crash) is passed over. A record that does not exist has
// none.
func readDrawn(path string) ([]workspace.Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []workspace.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var e workspace.Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Outcome == drawnOutcome {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func (d *drawnIDs) add(from, file, id string) {
	if d.live[from] == nil {
		d.live[from] = make(map[string][]string)
	}
	if !slices.Contains(d.live[from][file], id) {
		d.live[from][file] = append(d.live[from][file], id)
		d.n++
	}
}

// sent forgets an id whose message is in sent/.
func (d *drawnIDs) sent(from, file, id string) {
	ids := d.live[from][file]
	if i := slices.Index(ids, id); i >= 0 {
		d.live[from][file] = slices.Delete(ids, i, i+1)
		d.n--
		if len(d.live[from][file]) == 0 {
			delete(d.live[from], file)
		}
	}
}

// has reports whether the record holds this id for a file of this
// sender and name.
func (d *drawnIDs) has(from, file, id string) bool {
	return slices.Contains(d.live[from][file], id)
}

// find returns an id drawn for a file of this sender, name and content
// whose message is not in sent/, newest first; "" when there is none.
func (d *drawnIDs) find(box mailbox.Dir, from, file string, data []byte) string {
	ids := d.live[from][file]
	if len(ids) == 0 {
		return "" // most files: no hash of the content needed
	}
	suffix := mailbox.ContentSuffix(file, data)
	for i := len(ids) - 1; i >= 0; i-- {
		if mailbox.IDSuffix(ids[i]) == suffix && !box.IsSent(ids[i]) {
			return ids[i]
		}
	}
	return ""
}

// write writes down ids drawn for a batch, before any of their copies is
// delivered; they are durable once the syncer's next Sync returns, with
// the copies.
func (d *drawnIDs) write(r *Runner, lines []workspace.Entry) error {
	if err := d.log.append(lines, r.syncer); err != nil {
		return err
	}
	for _, e := range lines {
		d.add(e.From, e.File, e.ID)
	}
	d.written += len(lines)
	if d.written >= compactDrawnAfter && d.written > 2*d.n {
		// Mostly ids routed since: written again, with those in use. The
		// ids just written are, whatever became of their files: their
		// copies are about to be delivered.
		d.forgetAbandoned(r, lines)
		if err := d.rewrite(r); err != nil {
			r.log.Warn("cannot write the record of drawn ids anew; it goes on growing", "path", d.path, "err", err)
		}
	}
	return nil
}

// forgetAbandoned forgets the ids whose files left the outbox unrouted
// before any copy was delivered (see abandoned), except those of lines.
func (d *drawnIDs) forgetAbandoned(r *Runner, lines []workspace.Entry) {
	type drawn struct{ from, file, id string }
	var gone []drawn
	for from, files := range d.live {
		for file, ids := range files {
			for _, id := range ids {
				just := slices.ContainsFunc(lines, func(e workspace.Entry) bool { return e.ID == id && e.From == from && e.File == file })
				if !just && r.abandoned(from, file, id) {
					gone = append(gone, drawn{from, file, id})
				}
			}
		}
	}
	for _, g := range gone {
		d.sent(g.from, g.file, g.id)
	}
}

// abandoned reports whether an id drawn for a file of a sender can be
// forgotten: the file is not in the sender's outbox, its message is not
// in sent/ (the file left unrouted: deleted, or rejected after an edit),
// and no mailbox holds a copy named by the id. A file of that name and
// content put back later draws another id, and delivers nothing twice:
// nobody holds the first. While its copies are being delivered, none may
// be there yet: the caller keeps the ids of the batch being delivered.
//
// The outbox is looked at before sent/, which the file is moved to with
// a rename, and the copies last, which are delivered before that move: a
// file on its way to sent/ is found in one or the other, and when it was
// routed, its copies are found. What cannot be looked at is kept.
func (r *Runner) abandoned(from, file, id string) bool {
	box, ok := r.agents[from]
	if !ok {
		return false // gone since it was read (a reload): the next read drops it
	}
	if _, err := os.Lstat(box.Path(mailbox.Outbox, file)); !isGone(err) {
		return false
	}
	if box.IsSent(id) {
		return false
	}
	for _, to := range r.agents {
		if held, err := to.Holds(id); held || err != nil {
			return false
		}
	}
	return true
}

// rewrite replaces the record with the ids still in use, durably.
func (d *drawnIDs) rewrite(r *Runner) error {
	var lines []workspace.Entry
	stamp := journalTime(r.opts.Now())
	for from, files := range d.live {
		for file, ids := range files {
			for _, id := range ids {
				lines = append(lines, workspace.Entry{Time: stamp, ID: id, From: from, File: file, Outcome: drawnOutcome})
			}
		}
	}
	slices.SortFunc(lines, func(a, b workspace.Entry) int { return strings.Compare(a.ID, b.ID) })
	data, err := encode(lines)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
		return err
	}
	if err := mailbox.WriteFileAtomic(d.path, data); err != nil {
		return err
	}
	d.written = 0
	return nil
}

// close closes the record's file, if it was opened.
func (d *drawnIDs) close() error {
	if d == nil || d.log == nil {
		return nil
	}
	return d.log.close()
}
