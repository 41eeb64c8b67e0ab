package runner

import (
	"context"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
)

// Starter is a built-in handler with something to do when the runner
// starts, before it routes anything: the D&D team lead starts the session,
// or, after a restart, refreshes every agent's context. What it sends it
// writes into the agent's outbox itself, like a person would; the router
// takes it from there. An error is logged, and the agent is failed in
// parley status, with the reason: it still handles its messages.
type Starter interface {
	Start(ctx context.Context, agent string) error
}

// Resumer is a Starter with something else to do when the runner takes
// over from a runner that stopped (Options.TakeOver): what the run before
// began goes on, and nothing is begun anew (the D&D team lead refreshes
// the table's context, and starts no session).
type Resumer interface {
	Resume(ctx context.Context, agent string) error
}

// Stopper is a built-in handler with something to do when the run ends,
// once every driver has stopped: the D&D team lead commits what the
// players wrote after the session's end. An error is logged.
type Stopper interface {
	Stop(ctx context.Context, agent string) error
}

// Timer is a built-in handler that keeps deadlines of its own, such as a
// team lead that waits for the players' answers so long and then sends
// what it has. Due returns when it next wants Tick to be called (the zero
// time: never); the runner calls Tick at or after that time, from the
// router's goroutine, so Tick must be quick. What Tick sends it writes into
// the agent's outbox itself. Tick is never called while the agent's worker
// handles a message (from the handler's call to its answers' publishing),
// nor a message handled while Tick runs: what one sends, the other sees.
// A deadline come while the agent works is ticked once it is done. A run
// until idle waits for a deadline that is due, as it waits for an answer
// it expects.
type Timer interface {
	Due(agent string) time.Time
	Tick(ctx context.Context, agent string, now time.Time) error
}

// Reloader is a built-in handler that reads parley.yaml as it handles
// messages (the agents at the table, their roles): the runner gives it
// the workspace as loaded again each time parley.yaml changes, before it
// routes anything by the new configuration. Reload must be quick, and
// safe while the handler handles a message.
type Reloader interface {
	Reload(ws *workspace.Workspace)
}

// Joiner is a built-in handler with something to do when agents join
// the workspace while the runner runs (parley.yaml reloaded with agents
// it did not have: new ones, or ones put back after being left out): the
// D&D team lead gives them the catch-up a restart gives, a
// [CONTEXT_REFRESH] each. Joined is called from the router's goroutine,
// once the new configuration is in place and before anything is routed
// by it; what it sends it writes into the agent's outbox itself. An
// error is logged.
type Joiner interface {
	Joined(ctx context.Context, agent string, joined []string) error
}

// joinBuiltins tells each built-in handler that is a Joiner of the agents
// that joined.
func (r *Runner) joinBuiltins(ctx context.Context, joined []string) {
	if len(joined) == 0 {
		return
	}
	for name, w := range r.workers {
		b, ok := w.driver.(*builtinDriver)
		if !ok {
			continue
		}
		if j, ok := b.handler.(Joiner); ok {
			if err := j.Joined(ctx, name, joined); err != nil {
				r.log.Error("telling a built-in agent of the agents that joined", "agent", name, "joined", joined, "err", err)
			}
		}
	}
}

// reloadBuiltins gives each built-in handler that is a Reloader the
// workspace as loaded again.
func (r *Runner) reloadBuiltins(ws *workspace.Workspace) {
	for _, h := range r.opts.Handlers {
		if rl, ok := h.(Reloader); ok {
			rl.Reload(ws)
		}
	}
}

// startBuiltins gives each built-in handler that is a Starter its start.
func (r *Runner) startBuiltins(ctx context.Context) {
	for name, w := range r.workers {
		b, ok := w.driver.(*builtinDriver)
		if !ok {
			continue
		}
		s, ok := b.handler.(Starter)
		if !ok {
			continue
		}
		start := s.Start
		if s, ok := b.handler.(Resumer); ok && r.opts.TakeOver {
			start = s.Resume
		}
		if err := start(ctx, name); err != nil {
			r.log.Error("starting a built-in agent", "agent", name, "err", err)
			// parley status says so, not idle: failed until it
			// handles a message, and the reason for the run. Only
			// its start failed: it handles what it is sent (before,
			// the note said it did not start, and a person took it
			// for an agent that answers nothing).
			r.state.setNoted(name, workspace.StateFailed, "", startFailedNote(err))
			r.statsMu.Lock()
			r.stats.NotStarted = append(r.stats.NotStarted, workspace.Problem{Agent: name, Reason: err.Error()})
			r.statsMu.Unlock()
		}
	}
}

// startFailedNote is the note in parley status of a built-in agent whose
// start failed with err.
func startFailedNote(err error) string {
	return "start failed: " + err.Error() + " (it still handles what it is sent; mend that and restart parley run)"
}

// nextTick returns the earliest deadline of the built-in handlers that
// keep some; zero when none does. A deadline come of an agent at work is
// left out: the worker wakes the router when it is done (see
// tickBuiltins).
func (r *Runner) nextTick() time.Time {
	var next time.Time
	now := r.opts.Now()
	for name, w := range r.workers {
		b, ok := w.driver.(*builtinDriver)
		if !ok {
			continue
		}
		if t, ok := b.handler.(Timer); ok {
			d := t.Due(name)
			if d.IsZero() || (!now.Before(d) && w.handling()) {
				continue
			}
			if next.IsZero() || d.Before(next) {
				next = d
			}
		}
	}
	return next
}

// tickBuiltins calls Tick on the built-in handlers whose deadline has
// come, but not on one whose worker handles a message now: it is ticked
// when the router next looks, once the worker is done.
func (r *Runner) tickBuiltins(ctx context.Context) {
	now := r.opts.Now()
	for name, w := range r.workers {
		b, ok := w.driver.(*builtinDriver)
		if !ok {
			continue
		}
		t, ok := b.handler.(Timer)
		if !ok {
			continue
		}
		if d := t.Due(name); d.IsZero() || now.Before(d) {
			continue
		}
		if !w.turn.TryLock() {
			continue // handling a message: ticked once it is done
		}
		err := t.Tick(ctx, name, now)
		w.turn.Unlock()
		if err != nil {
			r.log.Error("a built-in agent's deadline", "agent", name, "err", err)
		}
	}
}

// stopBuiltins gives each built-in handler that is a Stopper its end.
func (r *Runner) stopBuiltins(ctx context.Context) {
	for name, w := range r.workers {
		b, ok := w.driver.(*builtinDriver)
		if !ok {
			continue
		}
		if s, ok := b.handler.(Stopper); ok {
			if err := s.Stop(ctx, name); err != nil {
				r.log.Error("stopping a built-in agent", "agent", name, "err", err)
			}
		}
	}
}
