package runner

import (
	"bytes"
	"strings"
	"sync"
)

// The lines parley session writes on its stderr of what the program it
// runs says in its stream-json events, which the session driver reads
// from there (sessionLines); the agent's stderr log keeps them as any
// line:
//   - "parley: session: PROGRAM: retrying its API: WHAT", when the
//     program retries a call of its API (Claude Code's event
//     {"type":"system","subtype":"api_retry",...}: rate limited,
//     overloaded): parley status says the agent's program is at work
//     but waiting on its API;
//   - "parley: session: PROGRAM: permissions denied: WHAT", when its
//     result lists permission_denials (tools it was not allowed to
//     use): the journal's line of the message handled says so.
const (
	apiRetryStart = "parley: session: "
	apiRetryMark  = ": retrying its API: "
	deniedMark    = ": permissions denied: "
)

// APIRetryLine is the line parley session writes on its stderr when
// program says it retries its API; what says the attempt, the wait and
// the error ("attempt 1 of 10, in 1s (429 rate_limit)").
func APIRetryLine(program, what string) string {
	return apiRetryStart + program + apiRetryMark + what
}

// DeniedLine is the line parley session writes on its stderr when the
// result of program's turn lists permissions it was denied; what names
// them ("Bash (go test ./...)").
func DeniedLine(program, what string) string {
	return apiRetryStart + program + deniedMark + what
}

// sessionLine returns what a line written by parley session with mark
// (apiRetryMark, deniedMark) says, and whether it is such a line.
func sessionLine(line, mark string) (string, bool) {
	rest, ok := strings.CutPrefix(line, apiRetryStart)
	if !ok {
		return "", false
	}
	_, what, ok := strings.Cut(rest, mark)
	return what, ok && what != ""
}

// DeniedNote starts the note of the journal's line of a message handled
// by a session whose program was denied permissions meanwhile.
const DeniedNote = "its program was denied permissions: "

// APIRetryNote starts the note parley status gives an agent whose
// session's program retries its API while it works on a message.
const APIRetryNote = "its program is retrying its API: "

// maxRetryLine bounds the line read for an API retry: a longer one is
// no line of parley session's.
const maxRetryLine = 1024

// sessionLines reads what a session writes on stderr for parley
// session's lines (see APIRetryLine, DeniedLine). While the session
// works on a message (between begin and end), a line that says its
// program retries its API gives the agent the note that says so in
// parley status: the agent is working, and waiting on its API rather
// than hung; end takes the note back. The permissions denied are kept
// for the message's journal line (end returns them). A nil
// *sessionLines notes nothing.
type sessionLines struct {
	agent string
	state *stateBook

	mu     sync.Mutex
	line   []byte   // the line being written
	long   bool     // the line being written is past maxRetryLine
	active bool     // the session works on a message
	note   string   // the note given, "" when none
	denied []string // what the lines of permissions denied said
}

// Write reads p for whole lines; it always returns len(p), nil.
func (n *sessionLines) Write(p []byte) (int, error) {
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
func (n *sessionLines) lineDone(line string) {
	if !n.active {
		return
	}
	if what, ok := sessionLine(line, deniedMark); ok {
		n.denied = append(n.denied, what)
		return
	}
	what, ok := sessionLine(line, apiRetryMark)
	if !ok || n.state == nil {
		return
	}
	note := APIRetryNote + what
	n.state.noteOver(n.agent, note, n.note)
	n.note = note
}

// begin says the session is given a message: what it writes from now
// on is noted.
func (n *sessionLines) begin() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.active, n.denied = true, nil
}

// end says the session is done with its message (answered, failed or
// killed): the note given is taken back, unless another replaced it. It
// returns the note for the message's journal line: the permissions its
// program was denied, "" when none.
func (n *sessionLines) end() string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.active = false
	if n.note != "" && n.state != nil {
		n.state.noteOver(n.agent, "", n.note)
	}
	n.note = ""
	denied := n.denied
	n.denied = nil
	if len(denied) == 0 {
		return ""
	}
	return DeniedNote + strings.Join(denied, "; ")
}
