package runner

import (
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
)

// stateBook keeps .parley/agents.json: what each agent's driver is doing,
// for `parley status`, and which agents are stopped, across restarts. It
// is runtime state: written atomically, not synced, and off the path of
// the messages: a goroutine of its own writes the book after a change,
// once for changes that come faster than it writes. (Written by the
// worker, the two changes of every message, working then idle again,
// each replaced a file on the message's path, which on a busy disk cost
// about as much as the fsyncs that make the message durable.) close
// writes the last change.
type stateBook struct {
	path string
	now  func() time.Time
	// log says as it happens that an agent did not answer in time:
	// late while its program is still at work on the message, then
	// unresponsive once the program is done without an answer (the
	// change this book makes, as the worker says the program is done).
	log *slog.Logger

	wmu    sync.Mutex // held while the file is written
	mu     sync.Mutex
	agents map[string]workspace.AgentRun
	// silent holds, for an agent marked unresponsive, the message it did
	// not answer: it stays unresponsive, whatever else it handles, until
	// it sends something (spoke).
	silent map[string]string
	// late holds, for an agent noted late (its program still at work on
	// the message it did not answer in time), what the log says of it
	// when it turns unresponsive: once its program is done without an
	// answer. Forgotten when it speaks, or the message is given up.
	late map[string]silence
	// turned holds the agents late until their program was done, to be
	// logged unresponsive (turnedUnresponsive) once nothing their
	// program said waits to be routed: an answer routed takes it back.
	turned map[string]silence
	closed bool // no change is written any more
	// previous is the book the runner before this one left.
	previous map[string]workspace.AgentRun
	// failed is, of each agent the runner before left at work on a
	// message (working or retrying), that message and how many attempts
	// at it had failed: a restart goes on counting them (failedBefore).
	failed map[string]workspace.AgentRun
	// changes counts the changes made, written those the file holds:
	// the writer may have taken a change's kick and not written it yet.
	changes, written int64
	// abandoned: the workspace is another's now (see Runner.Close):
	// nothing more is written to its path.
	abandoned bool
	kick      chan struct{} // a change waits for the writer
	stop      chan struct{} // closed by close: no more pauses between writes
	done      chan struct{} // closed when the writer has stopped
	writes    atomic.Int64  // how often the file was written
}

func loadStateBook(ws *workspace.Workspace, now func() time.Time, log *slog.Logger) *stateBook {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &stateBook{path: ws.AgentsPath(), now: now, log: log, agents: map[string]workspace.AgentRun{}, silent: map[string]string{}, late: map[string]silence{}, turned: map[string]silence{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if data, err := os.ReadFile(s.path); err == nil {
		_ = json.Unmarshal(data, &s.previous) // a damaged file is rewritten from scratch
	}
	s.failed = map[string]workspace.AgentRun{}
	for agent, a := range s.previous {
		switch {
		case a.Message == "" || a.Attempt <= 0:
		case a.State == workspace.StateRetrying:
			s.failed[agent] = a // its attempt failed
		case a.State == workspace.StateWorking && a.Attempt > 1:
			// Cut short by the runner's end: made again under its
			// number; those before it failed.
			a.Attempt--
			s.failed[agent] = a
		}
	}
	// A new runner starts every agent afresh: a stop lasts for the run.
	// What the runner before awaited, and who did not answer it, it
	// takes up (Runner.takeUpWaits), which then writes the book.
	go s.writer()
	return s
}

// failedBefore returns how many attempts of agent at the message id
// failed in the runner before this one (0 when none, or when it was at
// work on another message), and why the last of them failed ("" when
// that runner did not say), once: a message whose program fails is given
// up after its retries whether the runner restarts between them or not
// (each restart began again at attempt 1, and a restarted runner tried
// it for ever). An attempt cut short by the runner's end is no failure.
func (s *stateBook) failedBefore(agent, id string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.failed[agent]
	if !ok || a.Message != id {
		return 0, ""
	}
	delete(s.failed, agent)
	return a.Attempt, a.Failed
}

func (s *stateBook) set(agent, state, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(agent, state, message, 0)
}

// setAttempt sets an agent's state on a message with the attempt at it:
// the one being made (working) or the one that failed (retrying).
func (s *stateBook) setAttempt(agent, state, message string, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(agent, state, message, attempt)
}

// retrying sets an agent retrying message after its attempt failed,
// and why.
func (s *stateBook) retrying(agent, message string, attempt int, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(agent, workspace.StateRetrying, message, attempt)
	if a := s.agents[agent]; a.Failed != why {
		a.Failed = why
		s.agents[agent] = a
		s.changedLocked()
	}
}

// holding sets an agent retrying message while it waits, through no
// fault of the message's (its endpoint is down, the disk full): the
// attempts that failed at it before stay counted, across a restart
// too (failedBefore), as does why the last failed.
func (s *stateBook) holding(agent, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	failed := 0
	if a := s.agents[agent]; a.Message == message {
		switch a.State {
		case workspace.StateRetrying:
			failed = a.Attempt
		case workspace.StateWorking:
			failed = max(a.Attempt-1, 0) // the attempt made is none
		}
	}
	s.setLocked(agent, workspace.StateRetrying, message, failed)
}

// setNoted sets an agent's state with the note that says why, in one
// change: agents.json never shows the state without it (a seat reading
// it between the two told the person less).
func (s *stateBook) setNoted(agent, state, message, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setNotedLocked(agent, state, message, note)
}

// setNotedLocked is setNoted. s.mu is held.
func (s *stateBook) setNotedLocked(agent, state, message, note string) {
	a := s.agents[agent]
	if a.Note != note {
		a.Note = note
		s.agents[agent] = a
		s.changedLocked()
	}
	s.setLocked(agent, state, message, 0)
}

// setLocked is setAttempt. s.mu is held.
func (s *stateBook) setLocked(agent, state, message string, attempt int) {
	a := s.agents[agent]
	busy := a.State == workspace.StateWorking || a.State == workspace.StateRetrying
	switch {
	case state == workspace.StateUnresponsive && busy && a.Message == message:
		// Its program is still at work on the message it did not
		// answer in time (or is tried again on it): it stays working,
		// so parley status says for how long and when its timeout:
		// ends it, beside the note that says it is late, and Late
		// names the message; unresponsive once it is done, unless it
		// answered.
		s.silent[agent] = message
		if a.Late != message {
			a.Late = message
			s.agents[agent] = a
			s.changedLocked()
		}
		return
	case state == workspace.StateUnresponsive:
		s.silent[agent] = message
	case state == workspace.StateIdle && s.silent[agent] != "":
		state, message, attempt = workspace.StateUnresponsive, s.silent[agent], 0
		if x, ok := s.late[agent]; ok {
			// Late until now: its program is done. Logged unresponsive
			// once what it said, if anything, is routed and was no
			// answer (turned).
			delete(s.late, agent)
			s.turned[agent] = x
		}
	case state == workspace.StateFailed && s.silent[agent] == message:
		// The message it was late on is given up, and parley says so
		// (dead/, a notice to its sender): nothing waits for its answer.
		delete(s.silent, agent)
		delete(s.late, agent)
		delete(s.turned, agent)
	}
	late := a.Late
	if (state != workspace.StateWorking && state != workspace.StateRetrying) || message != a.Late {
		late = "" // no longer at work on the message it is late on
	}
	failed := a.Failed
	if (state != workspace.StateWorking && state != workspace.StateRetrying) || message != a.Message {
		failed = "" // no longer at work on the message that failed
	}
	if a.State == state && a.Message == message && a.Attempt == attempt && a.Late == late && a.Failed == failed {
		return
	}
	a.State, a.Message, a.Attempt, a.Since, a.Late, a.Failed = state, message, attempt, s.now().UTC(), late, failed
	if a.Stopped && state != workspace.StateStopped {
		a.State = workspace.StateStopped
	}
	s.agents[agent] = a
	s.changedLocked()
}

// spoke notes that an agent sent a message: it is alive, and no longer
// unresponsive.
func (s *stateBook) spoke(agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	message, ok := s.silent[agent]
	if !ok {
		return
	}
	delete(s.silent, agent)
	delete(s.late, agent)
	delete(s.turned, agent)
	a := s.agents[agent]
	if strings.HasPrefix(a.Note, lateNote(message)+" ") || a.Late != "" {
		// It answered, late: the note that it did not is taken back.
		if strings.HasPrefix(a.Note, lateNote(message)+" ") {
			a.Note = ""
		}
		a.Late = ""
		s.agents[agent] = a
		s.changedLocked()
	}
	if a.State == workspace.StateUnresponsive {
		a.State, a.Message, a.Attempt, a.Failed, a.Since = workspace.StateIdle, "", 0, "", s.now().UTC()
		s.agents[agent] = a
		s.changedLocked()
	}
}

// turnedUnresponsive logs unresponsive each agent that was late until
// its program was done (turned) and has no answer of its program's
// waiting to be routed (routing reports whether what the agent's
// program said waits for the router): one that answered, late, is no
// longer silent (spoke), and is never logged unresponsive. Called by
// the router, which routes those answers.
func (s *stateBook) turnedUnresponsive(routing func(agent string) bool) {
	s.mu.Lock()
	agents := make([]string, 0, len(s.turned))
	for agent := range s.turned {
		agents = append(agents, agent)
	}
	s.mu.Unlock()
	for _, agent := range agents {
		if routing(agent) {
			continue
		}
		s.mu.Lock()
		x, ok := s.turned[agent]
		delete(s.turned, agent)
		s.mu.Unlock()
		if ok {
			s.log.Warn(LogUnresponsive, x.attrs()...)
		}
	}
}

// silence is an agent marked unresponsive: the message it did not
// answer, the rule of timeouts: that awaited the answer (as the log
// names it), and the note that says so.
type silence struct{ agent, message, policy, note string }

// attrs are what the log says of a silence.
func (x silence) attrs() []any {
	return []any{"agent", x.agent, "message", x.message, "policy", x.policy, "note", x.note}
}

// setAwaited notes the replies the runner awaits (of every agent; none
// for an agent not among them), and the agents marked unresponsive as
// their waits ended (see setNoted), in one change. It logs each: an
// agent whose program is still at work on the message is late (it stays
// working), and is logged unresponsive once its program is done
// without an answer.
func (s *stateBook) setAwaited(awaited []workspace.Awaited, silent ...silence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range silent {
		s.setNotedLocked(x.agent, workspace.StateUnresponsive, x.message, x.note)
		if s.agents[x.agent].Late == x.message {
			s.late[x.agent] = x
			s.log.Warn(LogLate, x.attrs()...)
		} else {
			s.log.Warn(LogUnresponsive, x.attrs()...)
		}
	}
	by := map[string][]workspace.Awaited{}
	for _, a := range awaited {
		by[a.Agent] = append(by[a.Agent], a)
	}
	for agent, a := range s.agents {
		if len(a.Awaited) > 0 && len(by[agent]) == 0 {
			a.Awaited = nil
			s.agents[agent] = a
			s.changedLocked()
		}
	}
	for agent, as := range by {
		a := s.agents[agent]
		if slices.Equal(a.Awaited, as) {
			continue
		}
		a.Awaited = as
		s.putLocked(agent, a)
	}
}

// keepSilent takes up that an agent did not answer message in the run
// before this one (it was unresponsive, or late while its program was at
// work on it): it stays so, with the note that says it, until it speaks.
func (s *stateBook) keepSilent(agent string, before workspace.AgentRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	message := before.Silent()
	if message == "" {
		return
	}
	s.silent[agent] = message
	a := s.agents[agent]
	a.Note = before.Note
	s.agents[agent] = a
	s.setLocked(agent, workspace.StateUnresponsive, message, 0)
	s.changedLocked()
}

// setStopped marks an agent stopped or not, and reports whether that
// changed anything.
func (s *stateBook) setStopped(agent string, stopped bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	if a.Stopped == stopped {
		return false
	}
	a.Stopped = stopped
	a.State, a.Since = workspace.StateIdle, s.now().UTC()
	if stopped {
		a.State = workspace.StateStopped
	}
	s.agents[agent] = a
	s.changedLocked()
	return true
}

// resume marks an agent stopped for the run no longer stopped (see
// Runner.resume), and takes back the note that said why it was.
func (s *stateBook) resume(agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	if !a.Stopped {
		return
	}
	a.Stopped = false
	a.State, a.Since = workspace.StateIdle, s.now().UTC()
	if strings.HasPrefix(a.Note, stoppedNote(agent)) {
		a.Note = ""
	}
	s.agents[agent] = a
	s.changedLocked()
}

// stoppedNote starts the note of an agent its driver stopped for the
// run (a budget used up, a key refused).
func stoppedNote(agent string) string { return agent + " stopped for this run: " }

func (s *stateBook) note(agent, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	a.Note = note
	s.putLocked(agent, a)
}

// noteOver sets an agent's note to note when it has none, or has the
// note old (the one the same writer gave before): a note another gave
// (that it did not answer in time) stays.
func (s *stateBook) noteOver(agent, note, old string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	if a.Note == note || a.Note != "" && a.Note != old {
		return
	}
	a.Note = note
	s.putLocked(agent, a)
}

// putLocked puts what is known of an agent in the book, idle when no
// state was known of it. s.mu is held.
func (s *stateBook) putLocked(agent string, a workspace.AgentRun) {
	if a.State == "" {
		a.State, a.Since = workspace.StateIdle, s.now().UTC()
	}
	s.agents[agent] = a
	s.changedLocked()
}

// run is what an agent's driver is doing now.
func (s *stateBook) run(agent string) workspace.AgentRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[agent]
}

func (s *stateBook) stopped(agent string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[agent].Stopped
}

// changedLocked has the writer write the book. s.mu is held.
func (s *stateBook) changedLocked() {
	if s.closed {
		return
	}
	s.changes++
	select {
	case s.kick <- struct{}{}:
	default: // a write is pending already: it takes this change too
	}
}

func (s *stateBook) writer() {
	defer close(s.done)
	var retry <-chan time.Time
	for {
		select {
		case _, ok := <-s.kick:
			if !ok {
				return
			}
		case <-retry:
		}
		retry = nil
		if !s.write() {
			// A full disk: the book is written again, as it is then,
			// whether or not anything changes meanwhile (status would
			// show a state long past).
			retry = time.After(stateRetry)
		}
		// Changes within stateEvery of a write are written together
		// after it: an agent at work changes twice a message, and each
		// write replaces the file with a rename, which on ext4 starts
		// writing it to the disk at once — writes the next flush of the
		// filesystem (a driver's commit, a batch of the router) waits
		// for.
		pause := time.NewTimer(stateEvery)
		select {
		case <-pause.C:
		case <-s.stop:
			pause.Stop()
		}
	}
}

// stateEvery is the least time between two writes of the state book,
// and stateRetry the pause before a write that failed is made again.
const (
	stateEvery = 100 * time.Millisecond
	stateRetry = time.Second
)

// abandon has the book write nothing more: the file at its path is
// another runner's now.
func (s *stateBook) abandon() {
	s.mu.Lock()
	s.abandoned = true
	s.mu.Unlock()
}

// close writes the last change, if it is not written yet, and stops the
// writer. The runner changes nothing after.
func (s *stateBook) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
		close(s.kick)
	}
	s.mu.Unlock()
	<-s.done
}

// flush writes a change not written yet now, not after the writer's
// pause: what reads agents.json next (a seat's /status, once the table
// is idle) sees the state as it is.
func (s *stateBook) flush() {
	s.wmu.Lock() // a write under way is waited for: it may hold an older book
	defer s.wmu.Unlock()
	s.mu.Lock()
	unwritten := s.written < s.changes && !s.closed
	s.mu.Unlock()
	if unwritten {
		s.writeLocked()
	}
}

// write replaces the file with the book, and reports whether it did (or
// had nothing to write). The writer calls it, flush, and loadStateBook
// before the writer starts; one at a time, each with the book as it is
// then, so the last written is the newest. A write that fails leaves the
// book unwritten: the writer, or the next flush, writes it again.
func (s *stateBook) write() bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked()
}

// writeLocked is write. s.wmu is held.
func (s *stateBook) writeLocked() bool {
	s.mu.Lock()
	if s.abandoned {
		s.mu.Unlock()
		return true
	}
	data, err := json.MarshalIndent(s.agents, "", "  ")
	changes := s.changes
	s.mu.Unlock()
	if err != nil {
		return true
	}
	s.writes.Add(1)
	tmp := s.path + ".tmp"
	err = os.WriteFile(tmp, append(data, '\n'), 0o644)
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		os.Remove(tmp) // a full disk: what it holds makes no room
		return false
	}
	s.mu.Lock()
	s.written = max(s.written, changes)
	s.mu.Unlock()
	return true
}
