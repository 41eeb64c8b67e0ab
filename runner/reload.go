package runner

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Reloading: a watching runner notices when parley.yaml, or a skill in
// skills/, is written, added, removed or replaced (a file event in the
// workspace's directory or in skills/, or a changed stamp at a rescan),
// waits until the files have been left alone for the settle time, and
// reads them again. Routing waits meanwhile, so that a message sent just
// after parley.yaml was saved is checked against what was saved; for up
// to workspace.MaxHold, past which files that go on changing (an editor
// saving every few hundred milliseconds) hold routing no longer
// (workspace.Settling decides, as for parley mcp and the web view). A
// seat's run until idle (Options.Seat: a script's seat, whose run lasts
// the session) reads them again too, before it routes what was sent
// after they were saved.
//
// A configuration that cannot be loaded (a YAML or key error, an unknown
// skill or handler, a lint error) changes nothing: the runner goes on
// with the one it has, logs why, and keeps the reason in .parley/runner.json
// for `parley status` and `parley send`. One that loads replaces the old
// at once for routing, routes, timeouts, skills and limits; agents added
// get their mailbox and their driver, and the built-in agents are told of
// them (Joiner: the D&D team lead catches them up); agents removed are no longer routed
// to or from (their mailboxes stay on disk); an agent whose driver changed
// (driver, run, handler, timeout, retries, or max_output for a program)
// finishes the message it is handling with its old driver, then starts
// with the new one; an agent its driver stopped for the run (a budget
// used up, a key refused) is resumed with it (see Runner.resume). A
// reply already awaited keeps the timeout it was given; concurrency is
// taken when the runner starts.

// configWatch is what the runner knows of its configuration's files.
type configWatch struct {
	settling *workspace.Settling // the files last loaded, or tried; when to load them again
	dirty    bool                // a file event says they may have changed
	loaded   time.Time
	err      error // why the files as they are were not loaded
	errAt    time.Time
	started  time.Time
}

// LogNotReloaded is the message of the runner's log record for a
// configuration that does not load as saved (at level error, with the
// reason, err): the runner goes on with the one it loaded before, and
// .parley/runner.json keeps why (RunnerInfo.ConfigError). A person's
// seat tells it from there, in words of its own, once, and once again
// when it is mended; it leaves the record out.
const LogNotReloaded = workspace.ConfigFile + " not reloaded; routing goes on with the configuration loaded before"

// retiring is a worker told to stop after the message it is handling,
// and the one to start for its agent once it has.
type retiring struct {
	old  *worker
	next *worker // nil when the agent was removed
}

// configEvent reports whether a file event concerns the configuration:
// parley.yaml, or anything in skills/ (or skills/ itself).
func (r *Runner) configEvent(name string) bool {
	root := r.ws().Root
	skills := filepath.Join(root, "skills")
	return name == filepath.Join(root, workspace.ConfigFile) || name == skills || filepath.Dir(name) == skills
}

// checkConfig reloads the configuration when its files changed. It
// returns, while they changed too recently to be read, when to look
// again, and whether routing waits until then: workspace.Settling
// decides (for up to workspace.MaxHold).
//
// Besides file events and rescans, it looks before every routing pass: a
// file event about parley.yaml may still be queued behind the listing
// that found a message sent after it was saved. That costs a stat per
// file, against the fsync of every batch.
func (r *Runner) checkConfig(ctx context.Context) (again time.Time, hold bool) {
	if !r.config.dirty && len(r.pending) == 0 {
		return time.Time{}, false
	}
	root := r.ws().Root
	if r.watcher != nil && !r.noEvents {
		_ = r.watcher.Add(filepath.Join(root, "skills")) // made since, perhaps
	}
	now := r.opts.Now()
	read, again, hold := r.config.settling.Look(root, now, r.ws().Config.Router.Settle)
	if !read {
		if again.IsZero() {
			r.config.dirty = false // unchanged
		}
		return again, hold
	}
	r.config.dirty = false
	if err := r.reload(ctx); err != nil {
		r.config.err, r.config.errAt = err, now
		if errors.As(err, new(*workspace.MissingConfigError)) {
			r.log.Error(workspace.ConfigFile+" was removed; routing goes on with the configuration loaded before ("+workspace.PutBack(workspace.InGit(root))+")", "dir", root)
		} else {
			r.log.Error(LogNotReloaded, "err", err)
		}
	} else {
		r.config.err = nil
	}
	r.writeRunnerInfo()
	return time.Time{}, false
}

// reload reads the configuration again and, when it is sound, puts it in
// place: see the comment at the top of this file.
func (r *Runner) reload(ctx context.Context) error {
	old := r.ws()
	ws, err := workspace.Open(old.Root)
	if err != nil {
		return err
	}
	if _, err := ws.Protocol(); err != nil {
		return err
	}
	warnings, err := ws.Lint()
	if err != nil {
		return err
	}
	// Every new driver is made before anything changes, so that an
	// unknown handler leaves the old configuration whole.
	fresh := map[string]*worker{}
	var added, removed, restarted []string
	for _, a := range ws.Config.Agents {
		before, had := old.Agent(a.Name)
		if !had {
			added = append(added, a.Name)
		}
		if had && !driverChanged(old, ws, before, a) {
			continue
		}
		if had {
			restarted = append(restarted, a.Name)
		}
		if r.opts.NoDrivers {
			continue
		}
		d, err := r.newDriver(a, ws)
		if err != nil {
			return err
		}
		if d != nil {
			fresh[a.Name] = newWorker(r, a, ws.Mailbox(a.Name), d)
		}
	}
	for _, a := range old.Config.Agents {
		if _, ok := ws.Agent(a.Name); !ok {
			removed = append(removed, a.Name)
		}
	}
	if err := ws.MakeDirs(); err != nil {
		return err
	}
	for _, name := range added {
		if err := ws.Mailbox(name).CleanTmp(); err != nil {
			return err
		}
	}
	for _, w := range warnings {
		r.log.Warn(w)
	}

	r.current.Store(ws)
	r.reloadBuiltins(ws)
	r.config.loaded = r.opts.Now()
	for _, name := range removed {
		r.forget(name)
	}
	for _, name := range added {
		r.agents[name] = ws.Mailbox(name)
		r.watchOutbox(name)
	}
	for _, name := range append(added, restarted...) {
		if w, ok := r.workers[name]; ok {
			r.retire(name, w)
			r.setWorker(name, nil)
		}
		if w, ok := fresh[name]; ok {
			r.resume(name) // the new driver takes up its messages
			r.setWorker(name, w)
			if x, waiting := r.retiring[name]; waiting {
				x.next = w // starts once the old one is done
			} else {
				r.startWorker(w)
			}
		}
	}
	if ws.Config.Router.RescanInterval != old.Config.Router.RescanInterval && r.rescan != nil {
		r.rescan.Reset(ws.Config.Router.RescanInterval)
	}
	if ws.Config.Concurrency != old.Config.Concurrency {
		r.log.Warn("concurrency changes when the runner starts again", "running with", cap(r.slots)) // 0: no cap
	}
	r.log.Info(workspace.ConfigFile+" reloaded", "agents", len(ws.Config.Agents), "added", added, "removed", removed, "restarted", restarted)
	if !workspace.SameBridge(old.Config.Bridge, ws.Config.Bridge) {
		// The bridge follows the agents and skills loaded again
		// (bridge.Options.Current), not its own section: its
		// connection, stream and name are made when it starts.
		r.log.Warn(workspace.ConfigFile + ": bridge: changed: the bridge goes on as it started (its name, server and stream) until it starts again: restart parley run (or parley bridge)")
	}
	if len(removed) > 0 {
		warnUnknownMailboxes(ws, r.log) // a renamed agent's answer waits in its old outbox
	}
	r.tellGivenUps() // a sender may be told of give-ups now that was not
	// An agent that joined missed what was told meanwhile (one put back
	// after being left out, as one new): caught up as after a restart.
	r.joinBuiltins(ctx, added)
	r.scan()
	return nil
}

// driverChanged reports whether an agent's driver must be made again.
func driverChanged(old, ws *workspace.Workspace, a, b workspace.Agent) bool {
	program := b.Driver == workspace.DriverCommand || b.Driver == workspace.DriverSession
	return a.Driver != b.Driver || !slices.Equal(a.Run, b.Run) || a.Handler != b.Handler ||
		a.Timeout != b.Timeout || a.Retries != b.Retries || a.Isolated() != b.Isolated() || a.Character != b.Character ||
		(program && old.Config.MaxOutput != ws.Config.MaxOutput) ||
		!reflect.DeepEqual(a.Model, b.Model) || a.Budget != b.Budget ||
		(b.Driver == workspace.DriverOpenAI && (old.Config.Budget != ws.Config.Budget || !reflect.DeepEqual(old.Config.Prices, ws.Config.Prices)))
}

// forget stops routing for an agent removed from parley.yaml: its outbox
// is no longer watched nor listed, its driver finishes what it is
// handling and stops, and no reply is awaited from it or for it. Its
// mailbox stays as it is.
func (r *Runner) forget(agent string) {
	if box, ok := r.agents[agent]; ok && r.outboxes != nil {
		dir := filepath.Join(string(box), mailbox.Outbox)
		if r.watcher != nil {
			_ = r.watcher.Remove(dir)
		}
		delete(r.outboxes, dir)
	}
	delete(r.agents, agent)
	delete(r.unwatched, agent)
	delete(r.troubles, agent)
	delete(r.edges, agent)
	for k := range r.pending {
		if k.agent == agent {
			delete(r.pending, k)
		}
	}
	kept := r.expected[:0]
	for _, e := range r.expected {
		if e.agent != agent && e.waiting != agent {
			kept = append(kept, e)
		}
	}
	r.expected = kept
	if w, ok := r.workers[agent]; ok {
		r.retire(agent, w)
		r.setWorker(agent, nil)
	}
}

// setWorker makes w agent's worker in the map of workers, or takes the
// agent's out of it for nil. Only the router's goroutine calls it.
func (r *Runner) setWorker(agent string, w *worker) {
	r.workersMu.Lock()
	defer r.workersMu.Unlock()
	if w == nil {
		delete(r.workers, agent)
		return
	}
	r.workers[agent] = w
}

// retire tells a worker to stop once the message it handles is done. A
// worker still waiting for its predecessor to stop is dropped instead.
func (r *Runner) retire(agent string, w *worker) {
	if x, ok := r.retiring[agent]; ok && x.next == w {
		x.next = nil // never started
		return
	}
	w.stop()
	r.retiring[agent] = &retiring{old: w}
}

// startRetired starts the workers that waited for their predecessor to
// stop.
func (r *Runner) startRetired() {
	for name, x := range r.retiring {
		select {
		case <-x.old.done:
		default:
			continue
		}
		delete(r.retiring, name)
		if x.next != nil {
			r.startWorker(x.next)
		}
	}
}

// writeRunnerInfo writes .parley/runner.json: what `parley status` and
// `parley send` read of the configuration this runner routes with. It is
// runtime state, replaced whole (not synced: a crash loses nothing a new
// runner would not write again).
func (r *Runner) writeRunnerInfo() {
	ws := r.ws()
	info := workspace.RunnerInfo{PID: os.Getpid(), Started: r.config.started, Loaded: r.config.loaded, Looked: r.looked, Agents: ws.AgentNames(), Files: r.config.settling.Stamp().String(),
		Unwatched: r.unwatchedAgents(), Mailboxes: maps.Clone(r.troubles), Failing: r.toldFailing}
	if r.config.err != nil {
		info.ConfigError, info.ConfigErrorAt = r.config.err.Error(), r.config.errAt
	}
	if r.journal != nil {
		info.JournalLost, info.JournalLostAt = r.journal.lost()
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return
	}
	path := workspace.RunnerInfoPath(ws.Root)
	tmp := path + ".tmp"
	err = os.WriteFile(tmp, append(data, '\n'), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp) // a full disk: what it holds makes no room
		if !r.infoUnwritten {
			r.log.Warn("cannot write the runner's state; it is written again every second until it can be", "path", path, "err", errors.Unwrap(err))
		}
	}
	r.infoUnwritten = err != nil
}
