package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// Mailboxes people and git remove: `rm -rf mailboxes/c`, `git clean
// -fdX` (which removes every tmp/), a checkout that drops an empty
// directory. The runner makes again the directories it needs, and
// watches a remade outbox at once: when a watched outbox goes away (a
// file event), when a delivery or a worker finds a directory missing, and
// at every rescan. What it cannot make is reported in `parley status`.
//
// Outboxes it cannot watch (the kernel's inotify watches are used up:
// fs.inotify.max_user_watches) are listed every pollInterval instead; it
// says so once, in the log and in `parley status`.

// pollInterval is how often outboxes without file events are listed.
const pollInterval = time.Second

// askRepair asks the router, from any goroutine, to make missing mailbox
// directories again.
func (r *Runner) askRepair() {
	r.repairAsked.Store(true)
	r.kickRouter()
}

// repair makes again every agent's missing mailbox directories, watches
// the outboxes made again, and notes the mailboxes that cannot be used.
func (r *Runner) repair() {
	r.repairAt = time.Time{}
	r.repairAsked.Store(false)
	changed := false
	for agent, box := range r.agents {
		outbox := filepath.Join(string(box), mailbox.Outbox)
		_, statErr := os.Lstat(outbox)
		gone := errors.Is(statErr, fs.ErrNotExist)
		err := box.Init()
		if info, lerr := os.Lstat(string(box)); err != nil && lerr == nil && !info.IsDir() {
			what := "a file"
			if info.Mode()&fs.ModeSymlink != 0 {
				what = "a symbolic link"
			}
			err = fmt.Errorf("%s is %s, not a directory", r.ws().Short(string(box)), what)
		}
		was := r.troubles[agent]
		if err != nil {
			r.troubles[agent] = "cannot make its mailbox: " + err.Error()
		} else {
			delete(r.troubles, agent)
		}
		if r.troubles[agent] != was {
			changed = true
			if err != nil {
				r.log.Error("a mailbox cannot be used", "agent", agent, "err", err)
			} else {
				r.log.Info("a mailbox can be used again", "agent", agent)
			}
		}
		if err != nil {
			continue
		}
		r.notify(agent) // a worker that found a directory missing looks again
		if gone {
			r.log.Warn("made again the mailbox directories that were removed", "agent", agent)
		}
		if gone || r.unwatched[agent] {
			if r.watchOutbox(agent) {
				changed = true
			}
			r.scanAgent(agent)
		}
	}
	if changed {
		r.writeRunnerInfo()
	}
}

// watchOutbox starts watching an agent's outbox for file events, again
// when it was made again. An outbox that cannot be watched is listed
// every pollInterval. It reports whether that changed.
func (r *Runner) watchOutbox(agent string) (changed bool) {
	if r.outboxes == nil {
		return false // not watching: an --until-idle run lists every outbox
	}
	dir := filepath.Join(string(r.agents[agent]), mailbox.Outbox)
	r.outboxes[dir] = agent
	if r.noEvents {
		return false
	}
	var err error
	if r.watcher == nil {
		err = r.watcherErr
	} else {
		err = r.addWatch(dir)
	}
	if err == nil {
		changed = r.unwatched[agent]
		delete(r.unwatched, agent)
		return changed
	}
	if errors.Is(err, fs.ErrNotExist) {
		// Removed since it was made: made again, and watched then.
		r.repairSoon()
		return false
	}
	if !r.unwatched[agent] {
		r.unwatched[agent] = true
		changed = true
	}
	if !r.saidUnwatched {
		r.saidUnwatched = true
		r.log.Warn("cannot watch an outbox for file events; it is listed every second instead (on Linux, raise fs.inotify.max_user_watches and max_user_instances)", "agent", agent, "err", err)
	}
	return changed
}

// addWatch adds a directory to the watcher; tests replace it.
func (r *Runner) addWatch(dir string) error {
	if r.watchHook != nil {
		if err := r.watchHook(dir); err != nil {
			return err
		}
	}
	return r.watcher.Add(dir)
}

// pollUnwatched lists the outboxes that have no file events.
func (r *Runner) pollUnwatched() {
	r.polledAt = r.opts.Now()
	for agent := range r.unwatched {
		r.scanAgent(agent)
	}
}

// nextPoll returns when the outboxes without file events are to be
// listed again; zero when every outbox is watched.
func (r *Runner) nextPoll() time.Time {
	if len(r.unwatched) == 0 {
		return time.Time{}
	}
	return r.polledAt.Add(pollInterval)
}

// repairSoon has missing mailbox directories made again once the settle
// time has passed: a person's rm -rf under way is not raced by the
// directories it removes coming back.
func (r *Runner) repairSoon() {
	if r.repairAt.IsZero() {
		r.repairAt = r.opts.Now().Add(r.ws().Config.Router.Settle)
	}
}

// outboxGone notes that a watched outbox was removed or moved away: its
// watch went with it. It is made again once the settle time has passed,
// so that an `rm -rf` under way is not raced.
func (r *Runner) outboxGone(agent string) {
	if !r.unwatched[agent] {
		r.unwatched[agent] = true
	}
	r.repairAt = r.opts.Now().Add(r.ws().Config.Router.Settle)
}

// unwatchedAgents lists the agents whose outbox has no file events.
func (r *Runner) unwatchedAgents() []string {
	var out []string
	for a := range r.unwatched {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
