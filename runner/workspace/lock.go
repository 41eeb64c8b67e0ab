package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
// no runner is running. It asks the lock itself, with a shared lock it
// takes and gives back at once (a pid left by a killed runner may belong to
// another process by now).
func (w *Workspace) RunnerPID() int {
	path := w.LockPath()
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		return 0 // nobody holds it
	}
	if pid := LockHolder(path); pid > 0 {
		return pid
	}
	return -1 // held, by a runner that has not written its pid yet
}
