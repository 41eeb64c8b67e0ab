package runner

import (
	"log/slog"
	"path/filepath"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// The journal's lines for what becomes of a message after it is routed:
// handled, given up, nudged, an agent stopped. The router writes its own
// lines a batch at a time (see batch.finish); these are one line each,
// written as it happens, by the worker or the router that did it.

// maxListed caps Stats.RejectedFiles, Stats.RefusedInPlaceFiles and
// Stats.DeadFiles.
const maxListed = 1000

// record writes one journal line, stamped as it is written (see
// journal.stamp). It is one write and no
// sync: the next sync of the runner (a batch routed, a stage committed)
// makes it durable with everything else, so a handled message costs its
// worker one system call more. A runner killed before that sync loses
// nothing (the line is in the kernel's hands); a power cut may lose the
// line, never the message: the mailboxes are the truth.
func (r *Runner) record(e workspace.Entry) {
	if err := r.journal.record([]workspace.Entry{e}, r.syncer); err != nil {
		// The line is kept, and written before the next one (see
		// journal.record), at the latest a journalRetry from now.
		r.log.Error("writing the journal; the line is kept and tried again", "outcome", e.Outcome, "agent", e.Agent, "id", e.ID, "err", err)
	}
}

// recordHandled notes that the worker's driver finished a message: it is
// in done/.
func (w *worker) recordHandled(id string, m *mailbox.Message, attempts int, note string) {
	e := workspace.Entry{Outcome: workspace.Handled, Agent: w.agent.Name, ID: id, File: mailbox.FileName(id),
		Path: mailboxPath(w.agent.Name, mailbox.Done, mailbox.FileName(id)), Attempts: attempts, Note: note}
	describe(&e, m)
	w.r.record(e)
	w.r.finish(w.agent.Name, id, mailbox.Done)
	w.r.statsMu.Lock()
	w.r.stats.Handled++
	w.r.statsMu.Unlock()
}

// recordRefused notes what an agent said, answering the message id, that
// was moved to its rejected/ instead of being sent.
func (w *worker) recordRefused(id string, refusals []mailbox.Refusal) {
	for _, f := range refusals {
		path := mailboxPath(w.agent.Name, mailbox.Rejected, f.Name)
		w.r.record(workspace.Entry{Outcome: workspace.Refused, From: w.agent.Name, Agent: w.agent.Name, Reason: f.Reason,
			File: f.Name, Path: path, Note: "an answer to " + id + " that cannot be sent"})
		w.r.statsMu.Lock()
		w.r.stats.Rejected++
		w.r.statsMu.Unlock()
		w.r.noteRejected(w.agent.Name, path, f.Reason)
	}
}

// recordGivenUp notes that a message (m, as read from dead/; nil when it
// cannot be read) was moved to dead/, and why.
func (w *worker) recordGivenUp(id string, m *mailbox.Message, reason string, attempts int) {
	name := mailbox.FileName(id)
	path := mailboxPath(w.agent.Name, mailbox.Dead, name)
	e := workspace.Entry{Outcome: workspace.GivenUp, Agent: w.agent.Name, ID: id, File: name, Path: path, Attempts: attempts, Reason: reason}
	describe(&e, m)
	w.r.record(e)
	w.r.finish(w.agent.Name, id, mailbox.Dead)
	w.r.statsMu.Lock()
	w.r.stats.Dead++
	if len(w.r.stats.DeadFiles) < maxListed {
		w.r.stats.DeadFiles = append(w.r.stats.DeadFiles, workspace.Problem{Agent: w.agent.Name, Path: path, Reason: reason})
	}
	w.r.statsMu.Unlock()
}

// read returns a message of the worker's mailbox, or nil when it cannot
// be read: the journal then goes without its sender and type.
func (w *worker) read(state, id string) *mailbox.Message {
	return readFrom(w.box, state, id, w.r.ws().Config.Router.MaxMessageSize)
}

// readFrom reads the message id in a state of a mailbox; nil when it
// cannot be read as one.
func readFrom(box mailbox.Dir, state, id string, limit int64) *mailbox.Message {
	m, err := mailbox.ReadMessage(box.Path(state, mailbox.FileName(id)), limit)
	if err != nil {
		return nil
	}
	return m
}

// listedLevel is the level of the log line of a file refused: a run
// until idle lists the files it refused in its Stats, which its caller
// sums up when it ends, so the line is for a verbose log only; a runner
// that watches says it when it happens.
func (r *Runner) listedLevel() slog.Level {
	if r.opts.UntilIdle {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// noteRejected lists a file refused during the run.
func (r *Runner) noteRejected(agent, path, reason string) {
	r.statsMu.Lock()
	if len(r.stats.RejectedFiles) < maxListed {
		r.stats.RejectedFiles = append(r.stats.RejectedFiles, workspace.Problem{Agent: agent, Path: path, Reason: reason})
	}
	r.statsMu.Unlock()
}

// recordNudge notes that a silent agent was sent a nudge (its id: sent).
func (r *Runner) recordNudge(e *expectation, sent string) {
	r.record(workspace.Entry{Outcome: workspace.Nudged, Agent: e.agent, ID: e.message, From: e.waiting,
		Type: typeOf(e.asked), File: mailbox.FileName(e.message), Sent: sent, Note: r.nudges[sent]})
}

// recordStopped notes that an agent approved its shutdown.
func (r *Runner) recordStopped(agent, why string) {
	r.record(workspace.Entry{Outcome: workspace.Stopped, Agent: agent, Note: why})
}

// describe fills in what an entry says of its message.
func describe(e *workspace.Entry, m *mailbox.Message) {
	if m == nil {
		return
	}
	e.From, _ = m.Header().Get("from")
	e.Type, _ = m.Header().Get("type")
	e.Signal, _ = m.Header().Get("signal")
}

// mailboxPath is the path of a file in a mailbox state, relative to the
// workspace root, as the journal and the stats name it.
func mailboxPath(agent, state, name string) string {
	return filepath.Join(workspace.MailboxesDir, agent, state, name)
}

// typeOf returns a message's type as the journal writes it.
func typeOf(m *mailbox.Message) string {
	t, _ := m.Header().Get("type")
	return t
}
