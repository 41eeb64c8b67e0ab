package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockedError is the error when another runner holds the workspace.
type LockedError struct {
	Path string // the lock file
	PID  int    // the process holding it, 0 when unknown
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("workspace is locked by another runner (pid %d holds %s)", e.PID, e.Path)
	}
	return fmt.Sprintf("workspace is locked by another runner (%s)", e.Path)
}

// lockWorkspace takes the workspace's runner lock: an exclusive flock(2) on
// .parley/lock, which the kernel releases when the holder exits, however it
// exits. The holder's pid is written into the file for the next one to read.
func lockWorkspace(root string) (*os.File, error) {
	path := filepath.Join(root, StateDir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := 0
			if b, rerr := os.ReadFile(path); rerr == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // the pid is a courtesy for the next runner; the flock is the lock
	}
	return f, nil
}

// unlockWorkspace releases the lock taken by lockWorkspace.
func unlockWorkspace(f *os.File) error {
	_ = f.Truncate(0)
	return f.Close() // closing the file releases the flock
}

// RunnerPID returns the pid of the runner holding the workspace, or 0 when
// no runner is running. It only looks: it never takes the lock.
func (w *Workspace) RunnerPID() int {
	b, err := os.ReadFile(filepath.Join(w.Root, StateDir, "lock"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	// A runner that was killed leaves its pid behind; check it is alive.
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return 0
	}
	return pid
}
