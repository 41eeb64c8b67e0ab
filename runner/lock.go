package runner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
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
func lockWorkspace(ws *workspace.Workspace) (*os.File, error) {
	path := ws.LockPath()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	// `parley status` takes a shared lock for an instant to see whether a
	// runner holds the workspace: give it that instant.
	for try := 0; errors.Is(err, unix.EWOULDBLOCK) && try < 10; try++ {
		time.Sleep(10 * time.Millisecond)
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, PID: workspace.LockHolder(path)}
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
