package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// feed is the journal as read so far, and the pages waiting for more.
// Entries are numbered from 0 in journal order; a page asks for those
// after the last it has.
type feed struct {
	path string

	mu      sync.Mutex
	entries []workspace.Entry
	pos     workspace.JournalPosition // where load stopped reading
	subs    map[chan struct{}]bool
	puts    puts
}

// puts tells, from the journal alone, which refusals and dead letters
// were put back by parley retry since: a later "retried" line names the
// file back in its outbox (a refused file's name less the stamp
// rejected/ gave it) or the message back in its inbox (its id). The
// timeline offers retry only for what is still waiting, without looking
// at a file per row.
type puts struct {
	open    map[string][]int // a refusal or dead letter not put back yet, by key: its entry numbers
	back    map[int]bool     // the entries put back
	settles map[int]int      // a retried entry: the entry it put back
}

// putKey returns the key that matches a refusal or a dead letter to the
// retried line that puts it back: the agent, where it goes back to and
// the file's name there; "" for any other entry.
func putKey(e *workspace.Entry) string {
	agent, state, name, _ := workspace.SplitMailboxPath(e.Path)
	switch {
	case e.Outcome == workspace.Refused && state == mailbox.Rejected:
		return agent + "/outbox/" + mailbox.UnrejectedName(name)
	case e.Outcome == workspace.GivenUp && e.Agent != "" && e.ID != "":
		return e.Agent + "/inbox/" + mailbox.FileName(e.ID)
	case e.Outcome == workspace.Retried && (state == mailbox.Outbox || state == mailbox.Inbox):
		return agent + "/" + state + "/" + name
	}
	return ""
}

// add indexes entry n. A retried line puts back the newest refusal or
// dead letter of its key not put back yet.
func (p *puts) add(n int, e *workspace.Entry) {
	key := putKey(e)
	if key == "" {
		return
	}
	if p.open == nil {
		p.open, p.back, p.settles = map[string][]int{}, map[int]bool{}, map[int]int{}
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

// load reads the journal as it is now. Unreadable lines (cut short by a
// crash) are skipped.
func (f *feed) load() error {
	var all []workspace.Entry
	var every workspace.JournalFilter
	at, err := every.ReadPosition(f.path, func(e workspace.Entry, _ []byte) error {
		all = append(all, e)
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
		if _, err := os.Stat(filepath.Dir(f.path)); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	f.mu.Lock()
	at := f.pos
	f.mu.Unlock()
	var batch []workspace.Entry
	var every workspace.JournalFilter
	err := every.FollowFrom(ctx, f.path, at, func(e workspace.Entry, _ []byte) error {
		batch = append(batch, e)
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
