package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parley-dev/parley/runner/workspace"
)

// A `parley run` started while a person's seat (parley play) routes the
// table asks the seat to hand the workspace over: it writes its pid into
// .parley/handover and waits for the lock (OpenHandedOver). The seat's
// runner looks for that file once a turn, one stat (HandoverAsked); the
// seat stops its runner, releases the lock and waits until the run holds
// it (WaitHandedOver), then plays beside it. A runner that is not a
// seat's is never asked: .parley/seat names the seat holding the lock
// (LockedError.Seat).

// HandoverAsked returns the pid of the `parley run` that asks this
// runner, a seat's (Options.Seat), to hand the workspace over, or 0 when
// none does. It costs one stat when none asks. A request whose process
// is gone (killed while it waited) is removed, and not one.
//
// A request older than HandoverWait and a margin is stale too: its run
// gave up (and would have removed it), so the pid in it may be another
// process's now.
func (r *Runner) HandoverAsked() int {
	if !r.opts.Seat {
		return 0
	}
	path := r.ws().HandoverPath()
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	pid := workspace.LockHolder(path)
	if !alive(pid) || time.Since(fi.ModTime()) > HandoverWait+10*time.Second {
		_ = os.Remove(path)
		return 0
	}
	return pid
}

// HandoverWait is how long `parley run` waits for a seat to hand the
// table over (OpenHandedOver's limit).
const HandoverWait = 30 * time.Second

// OpenHandedOver opens a runner as Open does, in a workspace a seat's
// runner holds (Open said *LockedError with Seat): it asks the seat to
// hand the workspace over, and waits, at most limit, for the lock. The
// runner it opens takes over the session (Options.TakeOver: what the
// seat's runner began goes on, and no session is started). When the
// seat does not hand over within limit, or another runner that is not a
// seat's takes the workspace meanwhile, or ctx ends first (a person
// stopped the wait), or the seat refused (it removed the request: it
// could not hand over), it returns *LockedError. The request is removed
// either way. Another run asking already is not overridden: this one is
// refused at once.
func OpenHandedOver(ctx context.Context, ws *workspace.Workspace, opts Options, limit time.Duration) (*Runner, error) {
	req := ws.HandoverPath()
	me := os.Getpid()
	if other := workspace.LockHolder(req); other > 0 && other != me && alive(other) {
		return nil, fmt.Errorf("another parley run (pid %d) asks the seat for this table already: %w", other, &LockedError{Path: ws.LockPath(), PID: ws.RunnerPID(), Seat: ws.SeatHolds()})
	}
	if err := writePID(req, me); err != nil {
		return nil, fmt.Errorf("ask the seat to hand the workspace over: %w", err)
	}
	defer func() {
		if workspace.LockHolder(req) == me {
			_ = os.Remove(req)
		}
	}()
	opts.TakeOver = true
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		switch holder := ws.RunnerPID(); {
		case holder == 0:
			r, err := Open(ws, opts)
			var le *LockedError
			if !errors.As(err, &le) || !le.Seat {
				return r, err
			}
		case holder > 0 && !ws.SeatHolds():
			// A runner that hands nothing over holds it now: another
			// `parley run` asked too, and took it first. (-1: a runner
			// between taking the lock and naming itself, or the seat
			// between leaving .parley/lock empty and letting go.)
			return nil, &LockedError{Path: ws.LockPath(), PID: holder}
		}
		if time.Now().After(deadline) {
			return nil, &LockedError{Path: ws.LockPath(), PID: ws.RunnerPID(), Seat: ws.SeatHolds()}
		}
		if workspace.LockHolder(req) != me {
			// Removed by the seat, which could not hand over (see
			// WaitHandedOver), or taken by another run: refused.
			return nil, &LockedError{Path: ws.LockPath(), PID: ws.RunnerPID(), Seat: ws.SeatHolds()}
		}
		select {
		case <-ctx.Done():
			return nil, &LockedError{Path: ws.LockPath(), PID: ws.RunnerPID(), Seat: ws.SeatHolds()}
		case <-tick.C:
		}
	}
}

// WaitHandedOver waits, after a seat's runner that HandoverAsked named
// pid closed, until pid holds the workspace, and reports whether it
// does: false when that process gave up (its request is gone, or names
// another) or ended, or limit passed or ctx ended first.
func WaitHandedOver(ctx context.Context, ws *workspace.Workspace, pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if workspace.LockHolder(ws.LockPath()) == pid && ws.RunnerPID() == pid {
			return true
		}
		if workspace.LockHolder(ws.HandoverPath()) != pid || !alive(pid) || time.Now().After(deadline) {
			// One last look: it may have taken the lock, then removed
			// its request.
			if workspace.LockHolder(ws.LockPath()) == pid && ws.RunnerPID() == pid {
				return true
			}
			// Not taken: the request, if it is still there, is refused
			// (removed), not handed over again and again while the run
			// that wrote it is stopped (Ctrl-Z) or hung.
			if workspace.LockHolder(ws.HandoverPath()) == pid {
				_ = os.Remove(ws.HandoverPath())
			}
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// alive reports whether process pid runs (it may be another user's).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// writePID writes pid into path whole: a temporary file beside it,
// renamed over it, so that a reader never finds it empty.
func writePID(path string, pid int) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+strconv.Itoa(pid)+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
