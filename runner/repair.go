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
// A mailbox, or a state directory of it, replaced by a symbolic link is
// never used: routing from a linked outbox would take the files of the
// folder it points to, delivering into a linked inbox would write outside
// the workspace. The router checks a sender's and a recipient's
// directories (lstat, never following a link) once per batch, the outbox
// at every listing and a worker its inbox before each message; the
// mailbox is then reported in `parley status` until a directory is put
// back.
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
		was := r.troubles[agent]
		err := r.checkMailbox(agent)
		if err != nil {
			r.troubles[agent] = err.Error()
		} else {
			delete(r.troubles, agent)
		}
		mended := err == nil && was != ""
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
		if gone || mended || r.unwatched[agent] {
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

// checkMailbox makes an agent's missing mailbox directories and returns
// why the mailbox cannot be used, if it cannot: a directory that cannot be
// made, or a file or symbolic link where a directory should be.
func (r *Runner) checkMailbox(agent string) error {
	err := r.agents[agent].Remake()
	var nd *mailbox.NotDirError
	if errors.As(err, &nd) {
		return r.notDir(nd)
	}
	if err != nil {
		return fmt.Errorf("cannot make its mailbox: %w", err)
	}
	return nil
}

// notDir says what is wrong with a mailbox directory, its path relative
// to the workspace.
func (r *Runner) notDir(nd *mailbox.NotDirError) error {
	short := *nd
	short.Path = r.ws().Short(nd.Path)
	if nd.Mode&fs.ModeSymlink == 0 {
		return fmt.Errorf("cannot make its mailbox: %w", &short)
	}
	return &short
}

// usable returns why an agent's mailbox cannot be used now, checking its
// directories once per batch (see checked); nil when it can. A problem
// found asks for a repair, which reports it.
func (r *Runner) usable(agent string, checked map[string]error) error {
	if err, ok := checked[agent]; ok {
		return err
	}
	var err error
	if t := r.troubles[agent]; t != "" {
		err = fmt.Errorf("its mailbox cannot be used: %s", t)
	} else if cerr := r.agents[agent].CheckDirs(); cerr != nil {
		var nd *mailbox.NotDirError
		if errors.As(cerr, &nd) {
			cerr = r.notDir(nd)
		}
		err = cerr
	}
	if err != nil && r.repairAt.IsZero() {
		// Reported, or looked at again: a person may have mended it.
		r.repairAt = r.opts.Now()
	}
	checked[agent] = err
	return err
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

// inboxPoll is how often a watching runner looks whether a message was
// put into an agent's inbox by something other than its router: parley
// retry, the web view's retry, a person's mv, git checkout. It has no
// file events for inboxes (its own deliveries would flood them), and the
// rescan is 30 seconds away.
const inboxPoll = time.Second

// lookAtInboxes wakes the worker of each agent whose inbox changed since
// it last looked (its modification time), or changed less than
// inboxPoll ago: a second change within the file system's clock tick
// leaves the time as it was. Each look is a stat per agent.
func (r *Runner) lookAtInboxes(now time.Time) {
	r.inboxesAt = now.Add(inboxPoll)
	if r.inboxTimes == nil {
		r.inboxTimes = make(map[string]time.Time, len(r.workers))
	}
	for name := range r.workers {
		fi, err := os.Stat(filepath.Join(string(r.agents[name]), mailbox.Inbox))
		if err != nil {
			continue // missing: the repair makes it again
		}
		mt := fi.ModTime()
		if seen, ok := r.inboxTimes[name]; ok && seen.Equal(mt) && now.Sub(mt) > inboxPoll {
			continue
		}
		r.inboxTimes[name] = mt
		r.notify(name)
	}
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
