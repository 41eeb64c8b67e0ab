package orchestrator

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// index keeps what the orchestrator's histories take of the message
// files of the mailbox states they read, so that a message handled costs
// what changed since the last, not the whole history. A state directory
// is listed once; after that, where the system tells of the changes in a
// directory (inotify, on Linux), only the files it names are looked at
// again, each stat'ed and read again; elsewhere, or when the system lost
// count (an overflow of its queue), a kept index lists the directory
// again at each look (its modification time, on a filesystem whose clock
// ticks in seconds or an NFS client's cached attributes, may not show a
// file added since) and one made for one look when it changed (its
// inode, modification or change time); of a listing only the names not
// seen before are read. What is kept of a message is
// its header fields as text (an entry), not its body nor its parsed form:
// a record reads the file again when a decision needs more (record.msg).
// Safe for concurrent use.
//
// Without the system's word, a file rewritten in place keeps its name:
// its header as first read is kept (read again by the next runner), and
// its body is read as it is now whenever a decision reads it.
type index struct {
	mu   sync.Mutex
	dirs map[string]*dirIndex // directory -> what was listed of it
	w    *watcher             // nil until a kept index looks at a directory a second time
	// kept: the index serves a runner's orchestrator, message after
	// message (Handle sets it), and asks the system to tell it what
	// changes; an orchestrator made for one look (a command's) does not
	// hold an inotify instance.
	kept bool
	// epochs counts the directories listed afresh (see dirIndex.epoch).
	epochs int
	// look, when set, is called with the path of each file or directory
	// the index stats or reads (a test counts them).
	look func(path string)
}

// dirStamp is what a listing notes of its directory, to tell at a later
// look whether the directory may have changed since: its identity, its
// modification and change times, and whether it was listed so soon after
// them that a change in the same tick of the filesystem's clock could
// hide (racy: list it again). The one place the orchestrator's listings
// (index, marks) decide it.
type dirStamp struct {
	id           mailbox.FileID
	mtime, ctime time.Time
	racy         bool
}

// stampDir returns the stamp of a directory that Lstat gave info, listed
// at listed (after the Lstat).
func stampDir(info os.FileInfo, listed time.Time) dirStamp {
	mtime, ctime := info.ModTime(), mailbox.ChangeTime(info)
	return dirStamp{id: mailbox.FileIDOf(info), mtime: mtime, ctime: ctime,
		racy: listed.Sub(mtime) < racyWithin(mtime) || listed.Sub(ctime) < racyWithin(ctime)}
}

// listDir lists the names in dir, that Lstat gave info just before, and
// stamps it as listed now.
func listDir(dir string, info os.FileInfo) ([]string, dirStamp, error) {
	listed := time.Now()
	f, err := os.Open(dir)
	if err != nil {
		return nil, dirStamp{}, err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	return all, stampDir(info, listed), err
}

// same reports whether the directory, that Lstat gives info now, is as
// it was when stamped s.
func (s dirStamp) same(info os.FileInfo) bool {
	return !s.racy && s.id == mailbox.FileIDOf(info) && s.mtime.Equal(info.ModTime()) && s.ctime.Equal(mailbox.ChangeTime(info))
}

// racyWithin is how close to a listing a directory's time t may be and
// still hide a change made after it: racyWindow, or two seconds where t
// has no part of a second (a filesystem whose clock ticks in seconds or
// two: HFS+, FAT, some network filesystems), where a file added in the
// same tick leaves the time as it was.
func racyWithin(t time.Time) time.Duration {
	if t.Nanosecond() == 0 {
		return 2 * time.Second
	}
	return racyWindow
}

// dirIndex is one state directory as last listed.
type dirIndex struct {
	dirStamp
	files   map[string]*entry
	snap    *listing // of files, sorted by name, made when asked (nil: not yet); replaced, never changed
	lists   int      // times listed
	watched bool     // the watcher tells its changes
	changed map[string]bool
	// The names that changed, as listings came (see since): epoch is
	// this directory's series of listings, gen the last listing's,
	// log the names each changed since floor.
	epoch, gen, floor int
	log               []change
}

// change is a name of a directory that changed at listing gen.
type change struct {
	gen  int
	name string
}

// maxLog is how many changes a directory's log keeps.
const maxLog = 4096

// listing is the entries of a directory, by name.
type listing struct {
	names []string
	ents  []*entry
}

// logged notes that names changed, in a new listing of d.
func (d *dirIndex) logged(names []string) {
	d.gen++
	for _, n := range names {
		d.log = append(d.log, change{d.gen, n})
	}
	if len(d.log) > maxLog {
		cut := len(d.log) - maxLog/2
		d.floor = d.log[cut-1].gen
		d.log = slices.Delete(d.log, 0, cut)
	}
}

// since returns the names of dir that changed between its listings
// gen and now of epoch (see stamp); ok is false when that is not known
// (listed afresh since, or more changes than the log keeps), and the
// reader reads the directory whole.
func (x *index) since(dir string, epoch, gen, now int) (names []string, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d := x.dirs[dir]
	if d == nil || d.epoch != epoch || gen < d.floor || now > d.gen {
		return nil, false
	}
	for _, c := range d.log {
		if c.gen > gen && c.gen <= now {
			names = append(names, c.name)
		}
	}
	return names, true
}

// entry is what a history keeps of a message file: where it is and its
// header fields, each as get reads it.
type entry struct {
	path   string
	max    int64    // the size read at most
	fields []string // key, value, key, value...: a few each, as small as kept
	to     []string
}

// field is the value of the field key ("" when none).
func (e *entry) field(key string) string {
	for i := 0; i+1 < len(e.fields); i += 2 {
		if e.fields[i] == key {
			return e.fields[i+1]
		}
	}
	return ""
}

// racyWindow is how close to a listing a directory's modification time
// may be and still hide a change made after it in the same tick of the
// filesystem's clock.
const racyWindow = 50 * time.Millisecond

// headerKeys are the fields kept of every message beside those its header
// lists.
var headerKeys = []string{"id", "from", "to", "type", "signal", "thread", "reply_to"}

// stamp brings dir's entries up to date, as list does, and returns where
// they are in its series (see since); ok is false when dir cannot be
// read.
func (x *index) stamp(dir string, max int64) (epoch, gen int, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d := x.refresh(dir, max)
	if d == nil {
		return 0, 0, false
	}
	return d.epoch, d.gen, true
}

// entry is the entry of dir's file name as last brought up to date; nil
// when none.
func (x *index) entry(dir, name string) *entry {
	x.mu.Lock()
	defer x.mu.Unlock()
	if d := x.dirs[dir]; d != nil {
		return d.files[name]
	}
	return nil
}

// list returns the entries of the message files named by their ids in
// dir, sorted by name, as they are now, looking only at what changed
// since the last call. A file that cannot be read as a message is left
// out (and tried again when it changes, or at the next listing). Nil
// when dir cannot be read.
func (x *index) list(dir string, max int64) *listing {
	x.mu.Lock()
	defer x.mu.Unlock()
	d := x.refresh(dir, max)
	if d == nil {
		return nil
	}
	if d.snap == nil {
		d.snap = snapshot(d.files)
	}
	return d.snap
}

// refresh brings the entries of dir up to date (x.mu held): the files
// the watcher told changed are read again, or, unwatched, dir is listed
// again when it changed. Nil when dir cannot be read.
func (x *index) refresh(dir string, max int64) *dirIndex {
	x.seen(dir)
	info, err := os.Lstat(dir)
	if err != nil {
		delete(x.dirs, dir)
		return nil
	}
	id := mailbox.FileIDOf(info)
	d := x.dirs[dir]
	if d != nil && d.id == id && d.watched && x.w.drain(x) && d.watched {
		x.update(dir, d, max)
		return d
	}
	watched := false
	if d != nil && x.kept {
		// Looked at again: this index is kept (a runner's
		// orchestrator), and the system may tell it what changes in
		// dir; once it does, dir is listed once more, for what changed
		// before.
		if x.w == nil {
			x.w = newWatcher(x)
		}
		if watched = x.w.add(dir); watched {
			x.w.drain(x)
		}
	}
	if !watched && !x.kept && d != nil && d.same(info) {
		return d
	}
	all, stamp, err := listDir(dir, info)
	if err != nil {
		return nil
	}
	nd := &dirIndex{dirStamp: stamp, files: make(map[string]*entry, len(all)),
		watched: watched, changed: map[string]bool{}}
	if d != nil {
		nd.lists = d.lists
		nd.epoch, nd.gen, nd.floor, nd.log = d.epoch, d.gen, d.floor, d.log
	} else {
		x.epochs++
		nd.epoch = x.epochs
	}
	nd.lists++
	for _, name := range all {
		if _, ok := mailbox.IDFromName(name); !ok {
			continue
		}
		if d != nil {
			if e := d.files[name]; e != nil && e.max == max && !d.changed[name] {
				nd.files[name] = e
				continue
			}
		}
		if e := x.read(filepath.Join(dir, name), max); e != nil {
			nd.files[name] = e
		}
	}
	if d != nil {
		var diff []string
		for name, e := range nd.files {
			if d.files[name] != e {
				diff = append(diff, name)
			}
		}
		for name := range d.files {
			if nd.files[name] == nil {
				diff = append(diff, name)
			}
		}
		if len(diff) > 0 || d.snap == nil {
			nd.logged(diff)
		}
	}
	if d != nil && nd.gen == d.gen {
		nd.snap = d.snap // nothing changed: the same listing
	}
	if x.dirs == nil {
		x.dirs = map[string]*dirIndex{}
	}
	x.dirs[dir] = nd
	return nd
}

// update looks again at the files of d the watcher told changed.
func (x *index) update(dir string, d *dirIndex, max int64) {
	if len(d.changed) == 0 {
		return
	}
	for name := range d.changed {
		delete(d.files, name)
		if _, ok := mailbox.IDFromName(name); !ok {
			continue
		}
		if e := x.read(filepath.Join(dir, name), max); e != nil {
			d.files[name] = e
		}
	}
	d.logged(slices.Collect(maps.Keys(d.changed)))
	clear(d.changed)
	d.snap = nil
}

// told notes that the watcher told of a change to name in dir ("": the
// directory itself, or the count was lost: list it again).
func (x *index) told(dir, name string) {
	d := x.dirs[dir]
	if d == nil {
		return
	}
	if name == "" {
		d.watched = false
		d.racy = true
		return
	}
	d.changed[name] = true
}

// lost notes that the watcher lost count: every directory is listed
// again.
func (x *index) lost() {
	for _, d := range x.dirs {
		d.watched = false
		d.racy = true
	}
}

// snapshot is the listing of files.
func snapshot(files map[string]*entry) *listing {
	l := &listing{names: make([]string, 0, len(files))}
	for name := range files {
		l.names = append(l.names, name)
	}
	slices.Sort(l.names)
	l.ents = make([]*entry, len(l.names))
	for i, name := range l.names {
		l.ents[i] = files[name]
	}
	return l
}

// seen calls look, if set, with path.
func (x *index) seen(path string) {
	if x.look != nil {
		x.look(path)
	}
}

// read reads the message file at path as an entry; nil when it is no
// message.
func (x *index) read(path string, max int64) *entry {
	m, err := x.readMessage(path, max)
	if err != nil {
		return nil
	}
	e := &entry{path: path, max: max}
	for _, k := range append(m.Header().Keys(), headerKeys...) {
		if v := get(m, k); v != "" && e.field(k) == "" {
			e.fields = append(e.fields, k, v)
		}
	}
	e.fields = slices.Clip(e.fields)
	e.to, _ = m.Header().Names("to")
	return e
}

// readMessage reads and parses the message file at path.
func (x *index) readMessage(path string, max int64) (*mailbox.Message, error) {
	x.seen(path)
	snap, err := mailbox.ReadSnapshot(path, max)
	if err != nil {
		return nil, err
	}
	snap.Close()
	return mailbox.Parse(snap.Data)
}

// message is the message of e as its file holds it now; when the file is
// gone or no message any more, one of the fields e kept, with no body.
func (x *index) message(e *entry) *mailbox.Message {
	if m, err := x.readMessage(e.path, e.max); err == nil {
		return m
	}
	if state := filepath.Base(filepath.Dir(e.path)); state == mailbox.Outbox {
		// Routed since it was listed: the router moves it to sent/ as
		// it is.
		if m, err := x.readMessage(filepath.Join(filepath.Dir(filepath.Dir(e.path)), mailbox.Sent, filepath.Base(e.path)), e.max); err == nil {
			return m
		}
	}
	m := mailbox.New(nil)
	for i := 0; i+1 < len(e.fields); i += 2 {
		if k := e.fields[i]; k != "to" {
			m.Set(k, e.fields[i+1])
		}
	}
	if len(e.to) > 0 {
		m.SetNames("to", e.to)
	}
	return m
}

// len is how many entries the index holds.
func (x *index) len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, d := range x.dirs {
		n += len(d.files)
	}
	return n
}
