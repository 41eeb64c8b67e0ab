package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/parley-dev/parley/mailbox"
)

// SeenPath returns the path of the file that says, for each agent, the
// newest message of its inbox a person was shown (.parley/seen.json):
// runtime state, so that `parley inbox` can say what is new.
func (w *Workspace) SeenPath() string { return filepath.Join(w.Root, StateDir, "seen.json") }

// Seen returns the id of the newest message of an agent's inbox that was
// shown to a person, or "" when none was. Ids sort in the order messages
// were sent, so every id after it is new.
func (w *Workspace) Seen(agent string) string {
	return w.seen()[agent]
}

func (w *Workspace) seen() map[string]string {
	out := map[string]string{}
	if data, err := os.ReadFile(w.SeenPath()); err == nil {
		_ = json.Unmarshal(data, &out) // a damaged file: nothing was seen
	}
	return out
}

// MarkSeen records that a person was shown an agent's inbox up to the
// message id. An id older than the one recorded changes nothing.
func (w *Workspace) MarkSeen(agent, id string) error {
	seen := w.seen()
	if id <= seen[agent] {
		return nil
	}
	seen[agent] = id
	data, err := json.MarshalIndent(seen, "", "  ")
	if err != nil {
		return err
	}
	err = mailbox.WriteFileAtomic(w.SeenPath(), append(data, '\n'))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a workspace without .parley/: nothing to remember in
	}
	return err
}
