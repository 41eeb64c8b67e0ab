package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/parley-dev/parley/mailbox"
)

// Options configure a Runner.
type Options struct {
	// Logger receives the runner's logs; nil discards them.
	Logger *slog.Logger
	// UntilIdle makes Run return once every outbox is empty (or holds only
	// files still being written, which it waits for), instead of watching
	// until the context ends.
	UntilIdle bool
	// BatchSize caps how many messages are made durable together. Default
	// 256.
	BatchSize int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Stats counts what a Run did.
type Stats struct {
	Routed     int `json:"routed"`     // messages delivered
	Deliveries int `json:"deliveries"` // copies written into inboxes
	Rejected   int `json:"rejected"`   // files moved to rejected/
	Recovered  int `json:"recovered"`  // copies found already delivered (a re-route after a crash)
}

// Runner routes the messages of one workspace. Only one Runner may hold a
// workspace at a time.
type Runner struct {
	ws      *Workspace
	opts    Options
	log     *slog.Logger
	lock    *os.File
	journal *journal
	syncer  *mailbox.Syncer
	agents  map[string]mailbox.Dir

	pending map[fileKey]*pending // outbox files seen and not yet routed
	stats   Stats

	// noEvents makes Run watch no directory, as on a filesystem that
	// reports no file events (NFS, SMB, FUSE); set by tests.
	noEvents bool
}

// fileKey names a file in an agent's outbox.
type fileKey struct{ agent, name string }

// pending is what the runner knows of an outbox file it has not routed.
type pending struct {
	size     int64
	modified time.Time
	since    time.Time // when the runner first saw this size and mtime
}

// Open takes the workspace's lock, creates missing mailboxes and finishes
// what a runner that was killed left half-done: deliveries staged in tmp/
// are removed, and a journal line cut short is ended. Messages still in the
// outboxes are routed again by Run, each delivery being a no-op where it
// was already made. A workspace held by another runner gives *LockedError.
func Open(ws *Workspace, opts Options) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := ws.initDirs(); err != nil {
		return nil, err
	}
	lock, err := lockWorkspace(ws.Root)
	if err != nil {
		return nil, err
	}
	r := &Runner{
		ws:      ws,
		opts:    opts,
		log:     opts.Logger,
		lock:    lock,
		agents:  make(map[string]mailbox.Dir),
		pending: make(map[fileKey]*pending),
	}
	for _, a := range ws.Config.Agents {
		box := ws.Mailbox(a.Name)
		r.agents[a.Name] = box
		if err := box.CleanTmp(); err != nil {
			r.Close()
			return nil, err
		}
	}
	if r.journal, err = openJournal(ws.JournalPath()); err != nil {
		r.Close()
		return nil, err
	}
	if r.syncer, err = mailbox.NewSyncer(ws.Root); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close releases the workspace.
func (r *Runner) Close() error {
	var errs []error
	if r.syncer != nil {
		errs = append(errs, r.syncer.Sync(), r.syncer.Close())
	}
	if r.journal != nil {
		errs = append(errs, r.journal.close())
	}
	if r.lock != nil {
		errs = append(errs, unlockWorkspace(r.lock))
	}
	return errors.Join(errs...)
}

// Run routes messages until ctx is done, or, with Options.UntilIdle, until
// nothing is left to route. It lists every outbox at start, on a watcher
// overflow and every rescan interval, and reacts to file events in between;
// events are hints, the listings are the truth. Bad files never stop it:
// they are rejected. It returns an error only when it cannot go on (the
// watcher or the disk fails).
func (r *Runner) Run(ctx context.Context) (Stats, error) {
	if r.opts.UntilIdle {
		return r.stats, r.runUntilIdle(ctx)
	}
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return r.stats, err
	}
	defer w.Close()
	outboxes := make(map[string]string, len(r.agents)) // outbox dir -> agent
	for name, box := range r.agents {
		dir := filepath.Join(string(box), mailbox.Outbox)
		outboxes[dir] = name
		if r.noEvents {
			continue
		}
		if err := w.Add(dir); err != nil {
			return r.stats, fmt.Errorf("watch %s: %w", dir, err)
		}
	}
	r.log.Info("routing", "workspace", r.ws.Root, "agents", len(r.agents))
	r.scan()
	rescan := time.NewTicker(r.ws.Config.Router.RescanInterval)
	defer rescan.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	for {
		next, err := r.routePending(ctx)
		if err != nil {
			r.log.Error("routing", "err", err)
		}
		if !next.IsZero() {
			settle.Reset(max(time.Until(next), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return r.stats, nil
		case ev, ok := <-w.Events:
			if !ok {
				return r.stats, errors.New("file watcher stopped")
			}
			r.event(outboxes, ev)
			// Take every event already queued, so that a burst is
			// routed, and synced, as one batch.
			for drained := false; !drained; {
				select {
				case ev := <-w.Events:
					r.event(outboxes, ev)
				default:
					drained = true
				}
			}
		case err, ok := <-w.Errors:
			if !ok {
				return r.stats, errors.New("file watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.log.Warn("file events overflowed; listing every outbox again")
				r.scan()
				continue
			}
			return r.stats, fmt.Errorf("watching outboxes: %w", err)
		case <-rescan.C:
			r.scan()
		case <-settle.C:
		}
	}
}

// runUntilIdle routes until a listing of every outbox finds nothing to do.
func (r *Runner) runUntilIdle(ctx context.Context) error {
	for {
		r.scan()
		if len(r.pending) == 0 {
			return nil
		}
		for len(r.pending) > 0 {
			next, err := r.routePending(ctx)
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
			if len(r.pending) == 0 {
				break
			}
			// Files still being written: wait for them to settle.
			t := time.NewTimer(max(time.Until(next), time.Millisecond))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// event notes an outbox file named by a file event.
func (r *Runner) event(outboxes map[string]string, ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
		return
	}
	agent, ok := outboxes[filepath.Dir(ev.Name)]
	if !ok {
		return
	}
	name := filepath.Base(ev.Name)
	if mailbox.IsScratch(name) {
		return
	}
	k := fileKey{agent, name}
	if p := r.pending[k]; p != nil && ev.Has(fsnotify.Write) {
		p.since = r.opts.Now() // still being written
		return
	}
	if _, ok := r.pending[k]; !ok {
		r.pending[k] = nil
	}
}

// scan lists every outbox and notes the files it holds.
func (r *Runner) scan() {
	for agent, box := range r.agents {
		dir := filepath.Join(string(box), mailbox.Outbox)
		des, err := os.ReadDir(dir)
		if err != nil {
			r.log.Error("listing outbox", "agent", agent, "err", err)
			continue
		}
		for _, de := range des {
			if mailbox.IsScratch(de.Name()) {
				continue
			}
			k := fileKey{agent, de.Name()}
			if _, ok := r.pending[k]; !ok {
				r.pending[k] = nil
			}
		}
	}
}

// candidate is an outbox file that is ready to be routed or rejected.
type candidate struct {
	fileKey
	info    fs.FileInfo
	sent    time.Time // see sendTime
	refusal *refusal  // set when the file is refused without being read
}

// routePending looks at every pending file, routes those that are ready in
// batches, and returns when the earliest file still being written should be
// looked at again (zero when none is).
func (r *Runner) routePending(ctx context.Context) (next time.Time, err error) {
	if len(r.pending) == 0 {
		return time.Time{}, nil
	}
	now := r.opts.Now()
	settle := r.ws.Config.Router.Settle
	maxSize := r.ws.Config.Router.MaxMessageSize
	var ready []candidate
	for k, p := range r.pending {
		info, err := os.Lstat(r.agents[k.agent].Path(mailbox.Outbox, k.name))
		if err != nil {
			delete(r.pending, k) // gone: routed, or taken back by its writer
			continue
		}
		c := candidate{fileKey: k, info: info}
		c.sent = sendTime(c)
		if err := mailbox.CheckFile(info, maxSize); err != nil {
			c.refusal = &refusal{Reason: err.Error()}
			ready = append(ready, c)
			continue
		}
		if !settled(p, info, now, settle) && !idNamed(k.name) {
			if p == nil || p.size != info.Size() || !p.modified.Equal(info.ModTime()) {
				r.pending[k] = &pending{size: info.Size(), modified: info.ModTime(), since: now}
				p = r.pending[k]
			}
			at := p.since.Add(settle)
			if m := info.ModTime().Add(settle); m.After(at) && !info.ModTime().After(now) {
				at = m
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		ready = append(ready, c)
	}
	// Route in sending order: by modification time, then name (ids sort by
	// time, and file times are only as fine as the kernel's clock tick).
	sort.Slice(ready, func(i, j int) bool {
		a, b := ready[i], ready[j]
		if ta, tb := a.sent, b.sent; !ta.Equal(tb) {
			return ta.Before(tb)
		}
		if a.agent != b.agent {
			return a.agent < b.agent
		}
		return a.name < b.name
	})
	for len(ready) > 0 {
		if ctx.Err() != nil {
			return next, nil
		}
		n := min(len(ready), r.opts.BatchSize)
		wait, err := r.routeBatch(ready[:n], now, settle)
		if err != nil {
			return next, err
		}
		if !wait.IsZero() && (next.IsZero() || wait.Before(next)) {
			next = wait
		}
		ready = ready[n:]
	}
	return next, nil
}

// sendTime is when a file was sent, as far as the router can tell: the
// time in its name for a file named by its id (to the microsecond), else
// its modification time.
func sendTime(c candidate) time.Time {
	if stem, ok := strings.CutSuffix(c.name, ".md"); ok {
		if t, _, err := mailbox.ParseID(stem); err == nil {
			return t
		}
	}
	return c.info.ModTime()
}

// settled reports whether a file has stopped changing: unchanged since the
// runner first saw it and untouched for the settle time.
func settled(p *pending, info fs.FileInfo, now time.Time, settle time.Duration) bool {
	mod := info.ModTime()
	if p == nil {
		// First sight: an old file (a rescan at start) is complete.
		return !mod.After(now) && now.Sub(mod) >= settle
	}
	if p.size != info.Size() || !p.modified.Equal(mod) {
		return false
	}
	return now.Sub(p.since) >= settle && (mod.After(now) || now.Sub(mod) >= settle)
}

// idNamed reports whether a file is named "<id>.md". Such files are
// written the Maildir way (in tmp/, then renamed), so one whose header
// carries the same id is complete as soon as it appears.
func idNamed(name string) bool {
	stem, ok := strings.CutSuffix(name, ".md")
	return ok && mailbox.IsID(stem)
}
