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

// SeatPath returns the path of the file a runner that hands the
// workspace over when asked (a person's seat, parley play) writes its pid
// in while it holds the lock, beside .parley/lock: that file holds the
// pid alone, as every parley reads it.
func (w *Workspace) SeatPath() string { return filepath.Join(w.Root, StateDir, "seat") }

// HandoverPath returns the path of the file a `parley run` writes its pid
// in to ask the seat holding the workspace to hand it over.
func (w *Workspace) HandoverPath() string { return filepath.Join(w.Root, StateDir, "handover") }

// SeatHolds reports whether the runner whose pid .parley/lock names is a
// seat's, which hands the workspace over when asked: .parley/seat names
// the same pid. A pid left in .parley/seat by a seat that was killed
// names no holder after it.
func (w *Workspace) SeatHolds() bool {
	pid := LockHolder(w.LockPath())
	return pid > 0 && LockHolder(w.SeatPath()) == pid
}
