package runner

import (
	"fmt"
	"slices"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// observe acts on a message just delivered: an approved shutdown stops the
// agent that approved it, a refused one is noted with its reason, and a
// type the workspace stops on ends the run. It returns a note for the
// journal, if any.
func (r *Runner) observe(sender string, m *mailbox.Message) string {
	typ := workspace.TypeOf(m)
	id, _ := m.Header().Get("id")
	note := ""
	if typ == workspace.ShutdownResponse {
		reason, _ := m.Payload().Get("reason")
		switch {
		case approvesShutdown(m) && !r.ws().IsProgram(sender):
			// A person (or an agent of another workspace): no driver
			// of this runner's to stop, no run to start it again;
			// what it is sent waits for it as ever, and its unread
			// mail is no work a stopped agent left undone.
			note = fmt.Sprintf("%s approved its shutdown: no program plays it here, so nothing is stopped; messages to it wait in its inbox, as ever", sender)
			r.state.note(sender, "approved a shutdown request (no program plays it here: nothing is stopped)")
		case approvesShutdown(m):
			r.shutDown(sender)
			note = fmt.Sprintf("%s approved its shutdown: its driver is stopped, messages to it wait in its inbox", sender)
			r.state.note(sender, "shut down: it approved a shutdown request")
		default:
			note = fmt.Sprintf("%s refused to shut down: %s", sender, dash(reason))
			r.state.note(sender, "refused to shut down: "+dash(reason))
		}
	}
	if about, ok := r.nudges[id]; ok {
		delete(r.nudges, id)
		note = about
	}
	for _, t := range r.ws().Config.StopOn {
		if t == typ {
			r.sessionOver = fmt.Sprintf("%s from %s ends the session (stop_on in %s)", typ, sender, workspace.ConfigFile)
			note = r.sessionOver
		}
	}
	return note
}

// approvesShutdown reports whether a message is a shutdown_response that
// approves.
func approvesShutdown(m *mailbox.Message) bool {
	typ := workspace.TypeOf(m)
	approve, _ := m.Payload().Get("approve")
	return typ == workspace.ShutdownResponse && (approve == "true" || approve == "yes")
}

// shutDown stops an agent that approved a shutdown request for the rest
// of the run, and lists it in the run's figures.
func (r *Runner) shutDown(agent string) {
	r.stopForRun(StoppedAgent{Agent: agent, Reason: "it approved a shutdown request", ShutDown: true},
		agent+" approved a shutdown request: its driver takes no more messages in this run; messages to it wait in its inbox")
}

// stopForRun stops an agent for the rest of the run (stopAgent, why the
// journal's note) and lists it in the run's figures, once: a shutdown it
// approved, a budget used up, a write it could not make. It reports
// whether it was not stopped already.
func (r *Runner) stopForRun(a StoppedAgent, why string) bool {
	if !r.stopAgent(a.Agent, why) {
		return false
	}
	r.statsMu.Lock()
	r.stats.Stopped = append(r.stats.Stopped, a)
	r.statsMu.Unlock()
	return true
}

// stopAgent stops an agent's driver for the rest of the run; why is the
// journal's note. It reports whether the agent was not stopped already.
func (r *Runner) stopAgent(agent, why string) bool {
	if !r.state.setStopped(agent, true) {
		return false // stopped already
	}
	r.recordStopped(agent, why)
	// Called from a worker's goroutine too (a budget used up, a write
	// it cannot make, a shutdown it approved), while the router may be
	// reloading parley.yaml.
	r.workersMu.RLock()
	w, ok := r.workers[agent]
	r.workersMu.RUnlock()
	if ok {
		select {
		case w.wake <- struct{}{}: // it notices, and closes a session
		default:
		}
	}
	r.log.Info("agent stopped", "agent", agent)
	return true
}

// resume lifts the stop of an agent whose driver parley.yaml, reloaded,
// made anew (a budget raised, another model or key_env): what stopped it
// may be mended, and its new driver takes up the message it was
// handling, in cur/, then those in its inbox; if it is not mended, the
// driver stops it again, saying so. An agent that approved its shutdown
// stays stopped: no driver of its stopped it. It reports whether the
// agent was resumed.
func (r *Runner) resume(agent string) bool {
	r.statsMu.Lock()
	i := slices.IndexFunc(r.stats.Stopped, func(a StoppedAgent) bool { return a.Agent == agent })
	if i < 0 || r.stats.Stopped[i].ShutDown {
		r.statsMu.Unlock()
		return false
	}
	r.stats.Stopped = slices.Delete(r.stats.Stopped, i, i+1)
	r.statsMu.Unlock()
	r.state.resume(agent)
	r.log.Info("agent resumed: "+workspace.ConfigFile+" changed its driver", "agent", agent)
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
