package runner

import (
	"bytes"
	"strings"
	"sync"
)

// The line parley session writes on its stderr when the program it runs
// says it retries a call of its API (Claude Code's stream-json event
// {"type":"system","subtype":"api_retry",...}: rate limited, overloaded):
// "parley: session: PROGRAM: retrying its API: WHAT". It is kept in the
// agent's stderr log as any line, and the session driver reads it from
// there to say, in parley status, that the agent's program is at work
// but waiting on its API (retryNotes).
const (
	apiRetryStart = "parley: session: "
	apiRetryMark  = ": retrying its API: "
)

// APIRetryLine is the line parley session writes on its stderr when
// program says it retries its API; what says the attempt, the wait and
// the error ("attempt 1 of 10, in 1s (429 rate_limit)").
func APIRetryLine(program, what string) string {
	return apiRetryStart + program + apiRetryMark + what
}

// apiRetry returns what a line written by APIRetryLine says, and
// whether it is such a line.
func apiRetry(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, apiRetryStart)
	if !ok {
		return "", false
	}
	_, what, ok := strings.Cut(rest, apiRetryMark)
	return what, ok && what != ""
}

// APIRetryNote starts the note parley status gives an agent whose
// session's program retries its API while it works on a message.
const APIRetryNote = "its program is retrying its API: "

// maxRetryLine bounds the line read for an API retry: a longer one is
// no line of parley session's.
const maxRetryLine = 1024

// retryNotes reads what a session writes on stderr for the lines that
// say its program retries its API (see APIRetryLine), and, while the
// session works on a message (between begin and end), gives the agent
// the note that says so in parley status: the agent is working, and
// waiting on its API rather than hung. end takes the note back. A nil
// *retryNotes notes nothing.
type retryNotes struct {
	agent string
	state *stateBook

	mu     sync.Mutex
	line   []byte // the line being written
	long   bool   // the line being written is past maxRetryLine
	active bool   // the session works on a message
	note   string // the note given, "" when none
}

// Write reads p for whole lines; it always returns len(p), nil.
func (n *retryNotes) Write(p []byte) (int, error) {
	if n == nil {
		return len(p), nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if !n.long && len(n.line)+len(chunk) <= maxRetryLine {
			n.line = append(n.line, chunk...)
		} else {
			n.long = true
		}
		if i < 0 {
			break
		}
		if !n.long {
			n.lineDone(strings.TrimRight(string(n.line), "\r"))
		}
		n.line, n.long = n.line[:0], false
		rest = rest[i+1:]
	}
	return len(p), nil
}

// lineDone notes a whole line. n.mu is held.
func (n *retryNotes) lineDone(line string) {
	what, ok := apiRetry(line)
	if !ok || !n.active || n.state == nil {
		return
	}
	note := APIRetryNote + what
	n.state.noteOver(n.agent, note, n.note)
	n.note = note
}

// begin says the session is given a message: what it writes from now
// on is noted.
func (n *retryNotes) begin() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.active = true
}

// end says the session is done with its message (answered, failed or
// killed): the note given is taken back, unless another replaced it.
func (n *retryNotes) end() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.active = false
	if n.note != "" && n.state != nil {
		n.state.noteOver(n.agent, "", n.note)
	}
	n.note = ""
}
