package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// A tool that changes the campaign (ReadOnly false) is run for a message
// at most once: the model, asked anew about a message it already had a
// sheet changed for, could well make the change again (HP 10, 7, then 4).
// So, before such a tool runs, the agent writes down, durably, that it
// is about to change the campaign for the message (changeRecord). An
// attempt that then does not end with an answer sent — a failed call, the
// agent's timeout, a budget used up, the runner stopped or killed — does
// not lead to the model being asked anew: the next attempt, in this run
// or the next, finds the record and gives the message up, with the
// transcript so far, as a failed call after a change is given up at once
// (ChangedError). A person who wants it asked anew says so with parley
// retry: giving the message up removes the record.

// changeRecord says that a tool changed (or was about to change) the
// campaign for a message: .parley/changed-<agent>.json.
type changeRecord struct {
	ID         string `json:"id"`   // the message being answered
	Tool       string `json:"tool"` // the first tool that changed the campaign for it
	Time       string `json:"time"`
	Transcript string `json:"transcript"` // the exchange up to that tool call
}

func changedPath(ws *workspace.Workspace, agent string) string {
	return filepath.Join(ws.Root, workspace.StateDir, "changed-"+agent+".json")
}

// readChange returns the record of the agent's last change, if any. A
// record that cannot be read is no record: it says nothing reliable.
func (a *Agent) readChange() (changeRecord, bool) {
	var rec changeRecord
	data, err := os.ReadFile(a.changed)
	if err != nil || json.Unmarshal(data, &rec) != nil || rec.ID == "" {
		return changeRecord{}, false
	}
	return rec, true
}

// writeChange records, durably, that tool is about to change the campaign
// for the message inID.
func (a *Agent) writeChange(inID, tool string, tr *transcript) error {
	rec := changeRecord{ID: inID, Tool: tool, Time: a.opts.Now().UTC().Format(mailbox.TimeFormat), Transcript: tr.String()}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(a.changed), 0o755); err != nil {
		return err
	}
	return mailbox.WriteFileAtomic(a.changed, append(data, '\n'))
}

// dropChange removes the record of a change; a missing one is fine.
func (a *Agent) dropChange() {
	if err := os.Remove(a.changed); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.opts.Logger.Error("removing the record of a change", "agent", a.agent.Name, "file", a.changed, "err", err)
	}
}

// ChangedError is a message not handed to the model again because a tool
// already changed the campaign for it, in an attempt that did not end
// with an answer sent. It is not temporary: the message is given up
// (parley retry asks the model anew).
type ChangedError struct {
	Agent string
	Tool  string // the tool that changed the campaign
	// Err is why the attempt that ran the tool did not end with an
	// answer sent, when it is known (the same attempt); nil when an
	// earlier attempt or run left the record.
	Err error
}

func (e *ChangedError) Error() string {
	// The cause first: parley status shows a reason's start.
	const then = "; not asked again (asked anew, the model could make the change twice; parley retry asks it anew)"
	if e.Err != nil {
		return fmt.Sprintf("%s changed the campaign for this message, then %v"+then, e.Tool, e.Err)
	}
	return fmt.Sprintf("%s changed the campaign for this message in an earlier attempt that did not end with an answer sent (a failed call, a timeout, a budget used up, a runner stopped)"+then, e.Tool)
}

func (e *ChangedError) Unwrap() error { return e.Err }

// Temporary reports false: trying again is what must not happen.
func (e *ChangedError) Temporary() bool { return false }
