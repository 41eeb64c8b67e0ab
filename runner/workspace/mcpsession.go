package workspace

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/parley-dev/parley/mailbox"
)

// MCPSessionPath returns the file every `parley mcp` session for agent
// holds a shared flock on while it runs (HoldMCPSession).
func (w *Workspace) MCPSessionPath(agent string) string {
	return filepath.Join(w.Root, StateDir, "mcp", agent+".lock")
}

// HoldMCPSession marks an MCP session for agent as running until
// release is called, and reports whether another was running already:
// two clients acting as one agent (two editor windows on one project)
// each get the same messages, and each answer them. Each session holds a
// shared flock on MCPSessionPath; one that finds it cannot take it
// exclusively, even for a moment, knows another holds it. A lock given
// back by a session that was killed is no longer held.
func (w *Workspace) HoldMCPSession(agent string) (others bool, release func(), err error) {
	path := w.MCPSessionPath(agent)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, nil, err
	}
	err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		others = true
	case err != nil:
		f.Close()
		return false, nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	// Shared from now on, so that the next session finds this one (a
	// conversion of the exclusive lock held, or a shared lock beside the
	// other sessions').
	if err := flock(f, unix.LOCK_SH); err != nil {
		f.Close()
		return false, nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return others, func() { mailbox.Unlock(f) }, nil
}

// flock takes how on f, again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		if err := unix.Flock(int(f.Fd()), how); err != unix.EINTR {
			return err
		}
	}
}
