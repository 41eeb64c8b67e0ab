package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/parley-dev/parley/mailbox"
)

// LockPath returns the path of the lock file a runner holds while it
// routes the workspace.
func (w *Workspace) LockPath() string { return filepath.Join(w.Root, StateDir, "lock") }

// LockHolder returns the pid written in a lock file, or 0.
func LockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// RunnerPID returns the pid of the runner holding the workspace, or 0 when
// no runner is running. It asks the lock itself, an flock on the
// workspace directory, with a shared lock it takes and gives back at once
// (a pid left by a killed runner may belong to another process by now);
// the pid is read from .parley/lock, else from .parley/runner.json, and
// is -1 when neither names it (a runner that has not written it yet, or
// whose files a person removed).
func (w *Workspace) RunnerPID() int {
	dir, err := os.Open(w.Root)
	if err != nil {
		return 0
	}
	if err := unix.Flock(int(dir.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Nobody holds it. Given back at once, for all who share the
		// open directory (see mailbox.Unlock).
		mailbox.Unlock(dir)
		return 0
	}
	dir.Close()
	if pid := LockHolder(w.LockPath()); pid > 0 {
		return pid
	}
	if info, ok := readRunnerInfo(w.Root); ok && info.PID > 0 {
		return info.PID
	}
	return -1
}
