package runner

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// What an agent's driver is doing, as `parley status` shows it.
const (
	StateIdle     = "idle"     // nothing to do
	StateWorking  = "working"  // handling a message
	StateRetrying = "retrying" // a message failed; it is tried again soon
	StateFailed   = "failed"   // gave up the last message (it is in dead/)
	StateStopped  = "stopped"  // shut down: messages wait in its inbox
	StateWaiting  = "waiting"  // a human agent with messages to read
	// StateUnresponsive marks an agent that did not answer in time, even
	// after a nudge (timeouts: in parley.yaml).
	StateUnresponsive = "unresponsive"
)

// AgentRun is what the runner last knew of an agent's driver.
type AgentRun struct {
	State   string    `json:"state"`
	Message string    `json:"message,omitempty"` // the message being handled
	Since   time.Time `json:"since"`
	// Stopped is set once the agent approved a shutdown request: its
	// driver does not run again in this run; messages wait in its inbox.
	Stopped bool `json:"stopped,omitempty"`
	// Note is the last thing to know: a shutdown refused, and why; an
	// agent that did not answer in time.
	Note string `json:"note,omitempty"`
}

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

	mu     sync.Mutex
	agents map[string]AgentRun
	closed bool          // no change is written any more
	kick   chan struct{} // a change waits for the writer
	done   chan struct{} // closed when the writer has stopped
}

func statePath(root string) string { return filepath.Join(root, StateDir, "agents.json") }

func loadStateBook(root string, now func() time.Time) *stateBook {
	s := &stateBook{path: statePath(root), now: now, agents: map[string]AgentRun{}, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if data, err := os.ReadFile(s.path); err == nil {
		_ = json.Unmarshal(data, &s.agents) // a damaged file is rewritten from scratch
	}
	// A new runner starts every agent afresh: a stop lasts for the run.
	s.agents = map[string]AgentRun{}
	s.write()
	go s.writer()
	return s
}

func (s *stateBook) set(agent, state, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	if a.State == state && a.Message == message {
		return
	}
	a.State, a.Message, a.Since = state, message, s.now().UTC()
	if a.Stopped && state != StateStopped {
		a.State = StateStopped
	}
	s.agents[agent] = a
	s.changedLocked()
}

func (s *stateBook) setStopped(agent string, stopped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	a.Stopped = stopped
	a.State, a.Since = StateIdle, s.now().UTC()
	if stopped {
		a.State = StateStopped
	}
	s.agents[agent] = a
	s.changedLocked()
}

func (s *stateBook) note(agent, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[agent]
	a.Note = note
	if a.State == "" {
		a.State, a.Since = StateIdle, s.now().UTC()
	}
	s.agents[agent] = a
	s.changedLocked()
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
	select {
	case s.kick <- struct{}{}:
	default: // a write is pending already: it takes this change too
	}
}

func (s *stateBook) writer() {
	defer close(s.done)
	for range s.kick {
		s.write()
	}
}

// close writes the last change, if it is not written yet, and stops the
// writer. The runner changes nothing after.
func (s *stateBook) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.kick)
	}
	s.mu.Unlock()
	<-s.done
}

// write replaces the file with the book. Only the writer calls it (and
// loadStateBook, before the writer starts).
func (s *stateBook) write() {
	s.mu.Lock()
	data, err := json.MarshalIndent(s.agents, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return
	}
	tmp := s.path + ".tmp"
	if os.WriteFile(tmp, append(data, '\n'), 0o644) == nil {
		_ = os.Rename(tmp, s.path) // runtime state: a lost write is rewritten at the next change
	}
}

// AgentRuns reads what the runner last wrote about each agent's driver.
func (w *Workspace) AgentRuns() (map[string]AgentRun, error) {
	data, err := os.ReadFile(statePath(w.Root))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]AgentRun{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]AgentRun{}
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]AgentRun{}, nil
	}
	return out, nil
}
