package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// feed is the journal as read so far, and the pages waiting for more.
// Entries are numbered from 0 in the order the feed has them (load's,
// then follow's); a page asks for those after the last it has.
type feed struct {
	path string

	mu      sync.Mutex
	entries []workspace.Entry
	pos     workspace.JournalPosition // where load stopped reading
	subs    map[chan struct{}]bool
	puts    puts
}

// puts tells, from the journal alone, which refusals and dead letters
// were put back by parley retry since: a later "retried" line names,
// in Was, the file it put back, where it was (its full mailbox path:
// the agent, rejected/ or dead/, the file's name there). The timeline
// offers retry only for what is still waiting, without looking at a file
// per row.
type puts struct {
	open    map[waitingFile][]int // a refusal or dead letter not put back yet, by its file: its entry numbers
	back    map[int]bool          // the entries put back
	settles map[int]int           // a retried entry: the entry it put back
}

// waitingFile is a file in an agent's rejected/ or dead/.
type waitingFile struct{ agent, state, name string }

// waitingAt returns the file a journal path (workspace.SplitMailboxPath)
// names in rejected/ or dead/.
func waitingAt(path string) (waitingFile, bool) {
	agent, state, name, ok := workspace.SplitMailboxPath(path)
	if !ok || (state != mailbox.Rejected && state != mailbox.Dead) {
		return waitingFile{}, false
	}
	return waitingFile{agent, state, name}, true
}

// putKey returns the file in rejected/ or dead/ that a refusal or a dead
// letter left, or that a retried line put back; false for any other
// entry. A dead letter the journal gives no path for (the bridge's) is
// its agent's dead/ID.md, and so is what a retried line of a message id
// without Was (written before Was was) put back.
func putKey(e *workspace.Entry) (waitingFile, bool) {
	switch e.Outcome {
	case workspace.Refused:
		return waitingAt(e.Path)
	case workspace.GivenUp, workspace.Retried:
		if e.Outcome == workspace.Retried && e.Was != "" {
			return waitingAt(e.Was)
		}
		if e.Outcome == workspace.GivenUp && e.Path != "" {
			return waitingAt(e.Path)
		}
		if e.Agent != "" && e.ID != "" {
			return waitingFile{e.Agent, mailbox.Dead, mailbox.FileName(e.ID)}, true
		}
	}
	return waitingFile{}, false
}

// waits reports whether entry e is a refusal or a dead letter whose file
// waits in rejected/ or dead/ for parley retry (unless put back since):
// a file refused where it is, left in its outbox, does not.
func waits(e *workspace.Entry) bool {
	_, ok := putKey(e)
	return ok && (e.Outcome == workspace.Refused || e.Outcome == workspace.GivenUp)
}

// add indexes entry n. A retried line puts back the newest refusal or
// dead letter of its file not put back yet.
func (p *puts) add(n int, e *workspace.Entry) {
	key, ok := putKey(e)
	if !ok {
		return
	}
	if p.open == nil {
		p.open, p.back, p.settles = map[waitingFile][]int{}, map[int]bool{}, map[int]int{}
	}
	if e.Outcome != workspace.Retried {
		p.open[key] = append(p.open[key], n)
		return
	}
	waiting := p.open[key]
	if len(waiting) == 0 {
		return
	}
	last := waiting[len(waiting)-1]
	p.open[key] = waiting[:len(waiting)-1]
	p.back[last] = true
	p.settles[n] = last
}

func newFeed(path string) *feed {
	return &feed{path: path, subs: map[chan struct{}]bool{}}
}

// load reads the journal as it is now, in the order of its times, as
// parley log shows it (workspace.JournalFilter.ReadInTimeOrder decides:
// a journal git merged holds one clone's lines, then the other's); what
// follow adds after comes in the order it is appended. Unreadable lines
// (cut short by a crash) are skipped.
func (f *feed) load() error {
	var all []workspace.Entry
	var every workspace.JournalFilter
	at, err := every.ReadPositionInTimeOrder(f.path, func(e workspace.Entry, _ []byte) error {
		all = append(all, e.Capped()) // a journal of before the bounds may hold a type of a megabyte
		return nil
	})
	var je *workspace.JournalError
	if err != nil && !errors.As(err, &je) {
		return err
	}
	var p puts
	for i := range all {
		p.add(i, &all[i])
	}
	f.mu.Lock()
	f.entries, f.pos, f.puts = all, at, p
	f.mu.Unlock()
	return nil
}

// follow adds what is appended to the journal, waking every subscriber,
// until ctx is done. A workspace no runner has run in yet has no
// directory for the journal: it is waited for.
func (f *feed) follow(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		for {
			if _, err := os.Stat(filepath.Dir(f.path)); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		err := f.followFrom(ctx)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// The workspace went (rm -rf, a checkout of a branch without
		// it) as the journal was opened: waited for again, as the
		// pages say (Options.Vanished).
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// followFrom is follow, once the journal's directory is there.
func (f *feed) followFrom(ctx context.Context) error {
	f.mu.Lock()
	at := f.pos
	f.mu.Unlock()
	var batch []workspace.Entry
	var every workspace.JournalFilter
	err := every.FollowFrom(ctx, f.path, at, func(e workspace.Entry, _ []byte) error {
		batch = append(batch, e.Capped())
		return nil
	}, func() error {
		if len(batch) == 0 {
			return nil
		}
		f.mu.Lock()
		for i := range batch {
			f.puts.add(len(f.entries)+i, &batch[i])
		}
		f.entries = append(f.entries, batch...)
		for c := range f.subs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
		f.mu.Unlock()
		batch = batch[:0]
		return nil
	})
	if err != nil {
		return fmt.Errorf("following the journal %s: %w", f.path, err)
	}
	return nil
}

// len returns how many entries there are.
func (f *feed) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.entries)
}

// slice returns entries [from, to), clipped to what there is.
func (f *feed) slice(from, to int) []workspace.Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	from, to = max(0, from), min(to, len(f.entries))
	if from >= to {
		return nil
	}
	return f.entries[from:to:to]
}

// at returns entry n.
func (f *feed) at(n int) (workspace.Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 0 || n >= len(f.entries) {
		return workspace.Entry{}, false
	}
	return f.entries[n], true
}

// putBack reports whether entry n, a refusal or a dead letter, was put
// back since, and, for a retried entry, which entry it put back (-1:
// none).
func (f *feed) putBack(n int) (back bool, settles int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	settles, ok := f.puts.settles[n]
	if !ok {
		settles = -1
	}
	return f.puts.back[n], settles
}

// subscribe returns a channel that is signalled when entries arrive, and
// the function that ends the subscription.
func (f *feed) subscribe() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	f.mu.Lock()
	f.subs[c] = true
	f.mu.Unlock()
	return c, func() {
		f.mu.Lock()
		delete(f.subs, c)
		f.mu.Unlock()
	}
}
