package runner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// LockedError is the error when another runner holds the workspace.
type LockedError struct {
	Path string // the workspace
	PID  int    // the process holding it, 0 when unknown
	// Seat says the holder is a person's seat (parley play, whose
	// runner has Options.Seat): it hands the workspace over when a
	// `parley run` asks (OpenHandedOver). A `parley run` never does.
	Seat bool
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("workspace is locked by another runner (pid %d holds %s)", e.PID, e.Path)
	}
	return fmt.Sprintf("workspace is locked by another runner (%s)", e.Path)
}

// workspaceLock is a runner's hold on its workspace.
type workspaceLock struct {
	dir      *os.File // the workspace directory, flocked
	pidFile  string   // .parley/lock, naming the holder's pid
	seatFile string   // .parley/seat, when the holder is a seat's runner
}

// lockWorkspace takes the workspace's runner lock: an exclusive flock(2)
// on the workspace directory itself, which the kernel releases when the
// holder exits, however it exits, and which no `rm .parley/lock`, `git
// clean` or `rm -rf .parley` can take away (the directory is the
// workspace). The holder's pid is written into .parley/lock for people
// and for the next runner to read; that file is not the lock.
//
// A seat's runner (seat) also writes its pid into .parley/seat, which
// says the holder hands the workspace over when asked; any other runner
// removes that file, left by a seat that was killed, before it writes its
// pid.
func lockWorkspace(ws *workspace.Workspace, seat bool) (*workspaceLock, error) {
	dir, err := os.Open(ws.Root)
	if err != nil {
		return nil, err
	}
	err = unix.Flock(int(dir.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	// `parley status` takes a shared lock for an instant to see whether a
	// runner holds the workspace: give it that instant.
	for try := 0; errors.Is(err, unix.EWOULDBLOCK) && try < 10; try++ {
		time.Sleep(10 * time.Millisecond)
		err = unix.Flock(int(dir.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		dir.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Path: ws.LockPath(), PID: ws.RunnerPID(), Seat: ws.SeatHolds()}
		}
		return nil, fmt.Errorf("lock %s: %w", ws.Root, err)
	}
	l := &workspaceLock{dir: dir, pidFile: ws.LockPath()}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if seat {
		l.seatFile = ws.SeatPath()
		_ = os.WriteFile(l.seatFile, pid, 0o644)
	} else {
		_ = os.Remove(ws.SeatPath())
	}
	// The pid is a courtesy for people and the next runner; the flock is
	// the lock.
	_ = os.WriteFile(l.pidFile, pid, 0o644)
	return l, nil
}

// ErrWorkspaceReplaced is the error of a runner whose workspace path no
// longer names the directory it locked: the workspace was moved or
// removed, and maybe another put in its place, which a second runner may
// lock and route. The runner stops rather than route it too.
var ErrWorkspaceReplaced = errors.New("the workspace directory was moved or removed while the runner ran; stopping, so that no two runners route the same files")

// held reports an error when the workspace's path no longer names the
// directory the lock is on (one stat: the runner asks before it routes).
func (l *workspaceLock) held(root string) error {
	var locked, now unix.Stat_t
	if err := unix.Fstat(int(l.dir.Fd()), &locked); err != nil {
		return fmt.Errorf("lock %s: %w", root, err)
	}
	err := unix.Stat(root, &now)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || err == nil && (now.Dev != locked.Dev || now.Ino != locked.Ino) {
		return fmt.Errorf("%w (%s)", ErrWorkspaceReplaced, root)
	}
	return nil // the same directory, or one it cannot tell (EACCES, EIO): not stopped for that
}

// unlock releases the lock taken by lockWorkspace.
func (l *workspaceLock) unlock() error {
	if pid := workspace.LockHolder(l.pidFile); pid == os.Getpid() {
		_ = os.Truncate(l.pidFile, 0)
	}
	// After .parley/lock is left empty: a `parley run` waiting for the
	// seat to hand over never reads the seat's pid there without
	// .parley/seat naming it too.
	if l.seatFile != "" && workspace.LockHolder(l.seatFile) == os.Getpid() {
		_ = os.Remove(l.seatFile)
	}
	// Given back for every process sharing the open directory, not
	// only closed (see mailbox.Unlock).
	return mailbox.Unlock(l.dir)
}
