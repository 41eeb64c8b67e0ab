package runner

import (
	"slices"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// KeptNote is the journal's note on a message an agent does not accept
// (its accepts: in parley.yaml): filed in its done/ without waking its
// driver, and given to its next call as context.
const KeptNote = "kept as context: not in its accepts; given to its next call"

// maxKept caps how many messages kept as context one call is given: the
// newest ones.
const maxKept = 50

// keptContext returns the messages kept as context for the agent's next
// call, oldest first: those in its done/ that its accepts leave out,
// newer than the last message it accepted (the last call it had). It is
// worked out from the files alone, so a runner killed between filing a
// message and the next call loses nothing: done/ is read from the newest
// message back, in the order of ids (the order the inbox hands messages
// in), up to one the agent accepts, or a notice of parley's that woke it
// (see handle), or maxKept, leaving out parley's other notices. The
// message being handled (id, in cur/) is not among them.
func (w *worker) keptContext(ws *workspace.Workspace, id string) []Kept {
	a, ok := ws.Agent(w.agent.Name)
	if !ok || a.Accepts == nil {
		return nil
	}
	ids, err := w.box.IDs(mailbox.Done)
	if err != nil {
		return nil
	}
	var kept []Kept
	for i := len(ids) - 1; i >= 0 && len(kept) < maxKept; i-- {
		if ids[i] == id {
			continue
		}
		m := w.read(mailbox.Done, ids[i])
		if m == nil {
			continue // unreadable: not context
		}
		if isNotice(m) {
			if w.takesNotice(m) {
				break // a notice that woke it: its last call
			}
			continue // parley's own notices are filed, not context
		}
		if a.Accepts.Wakes(m) {
			break // its last call
		}
		kept = append(kept, Kept{Path: w.box.Path(mailbox.Done, mailbox.FileName(ids[i])), Message: m})
	}
	slices.Reverse(kept)
	return kept
}
