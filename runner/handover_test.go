package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestHandover: a runner of a seat's (Options.Seat) is asked for the
// workspace by OpenHandedOver, closes, and the asker opens it, taking
// over the session (Options.TakeOver); the request is gone after.
func TestHandover(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice")
	seat, err := Open(ws, Options{Seat: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := seat.HandoverAsked(); got != 0 {
		t.Fatalf("HandoverAsked() before any request = %d, want 0", got)
	}
	_, err = Open(ws, Options{})
	var le *LockedError
	if !errors.As(err, &le) || !le.Seat {
		t.Fatalf("Open beside a seat's runner = %#v, want a LockedError with Seat", err)
	}
	type opened struct {
		r   *Runner
		err error
	}
	done := make(chan opened, 1)
	go func() {
		r, err := OpenHandedOver(context.Background(), ws, Options{}, 10*time.Second)
		done <- opened{r, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	pid := 0
	for pid = seat.HandoverAsked(); pid == 0; pid = seat.HandoverAsked() {
		if time.Now().After(deadline) {
			t.Fatal("no request within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if pid != os.Getpid() {
		t.Errorf("HandoverAsked() = %d, want %d", pid, os.Getpid())
	}
	if err := seat.Close(); err != nil {
		t.Fatal(err)
	}
	if !WaitHandedOver(context.Background(), ws, pid, 10*time.Second) {
		t.Fatal("WaitHandedOver = false, want true")
	}
	got := <-done
	if got.err != nil {
		t.Fatalf("OpenHandedOver: %v", got.err)
	}
	defer got.r.Close()
	if !got.r.opts.TakeOver {
		t.Error("the runner handed the workspace is not TakeOver: it would start a session anew")
	}
	if ws.SeatHolds() {
		t.Error("SeatHolds() = true with a `parley run` holding the workspace")
	}
	if _, err := os.Stat(ws.HandoverPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the request is left: %v", err)
	}
}

// TestHandoverNotFromRun: a runner that is not a seat's is never asked:
// OpenHandedOver gives up at once, not after its wait.
func TestHandoverNotFromRun(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "alice")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	_, err = OpenHandedOver(context.Background(), ws, Options{}, 10*time.Second)
	var le *LockedError
	if !errors.As(err, &le) || le.Seat {
		t.Fatalf("OpenHandedOver beside a run = %v, want a LockedError without Seat", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("OpenHandedOver beside a run took %v, want at once", d)
	}
	if got := r.HandoverAsked(); got != 0 {
		t.Errorf("HandoverAsked() of a run = %d, want 0", got)
	}
}

// TestHandoverStale: a request whose process is gone is no request, and
// is removed.
func TestHandoverStale(t *testing.T) {
	t.Parallel()
	ws, seat := seatRunner(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(ws.HandoverPath(), []byte(strconv.Itoa(gone.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := seat.HandoverAsked(); got != 0 {
		t.Errorf("HandoverAsked() with a request of a process gone = %d, want 0", got)
	}
	if _, err := os.Stat(ws.HandoverPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale request is left: %v", err)
	}
}

// sleeper starts a process that lives for the test: a live pid that is
// not this one.
func sleeper(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

// TestHandoverRefusals: a second run asking while one asks is refused at
// once, not put in its place; a request the seat could not meet
// (WaitHandedOver false: the run that asked is stopped, Ctrl-Z, or hung)
// is removed, not met again and again; and one older than HandoverWait
// is stale, its pid perhaps another process's now.
func TestHandoverRefusals(t *testing.T) {
	t.Parallel()
	ws, seat := seatRunner(t)
	other := sleeper(t)
	if err := os.WriteFile(ws.HandoverPath(), []byte(strconv.Itoa(other)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := OpenHandedOver(context.Background(), ws, Options{}, 10*time.Second)
	var le *LockedError
	if !errors.As(err, &le) || time.Since(start) > 5*time.Second {
		t.Fatalf("OpenHandedOver while pid %d asks = %v after %v, want a LockedError at once", other, err, time.Since(start))
	}
	if got := seat.HandoverAsked(); got != other {
		t.Fatalf("HandoverAsked() = %d, want the first asker, %d", got, other)
	}
	// The asker never takes the workspace: the seat gives up waiting and
	// removes the request.
	if WaitHandedOver(context.Background(), ws, other, 50*time.Millisecond) {
		t.Fatal("WaitHandedOver = true for a run that never took the workspace")
	}
	if got := seat.HandoverAsked(); got != 0 {
		t.Errorf("HandoverAsked() after a hand-over that failed = %d, want 0 (the request refused)", got)
	}
	// A request older than the wait is stale, whatever its pid.
	if err := os.WriteFile(ws.HandoverPath(), []byte(strconv.Itoa(other)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-HandoverWait - time.Minute)
	if err := os.Chtimes(ws.HandoverPath(), old, old); err != nil {
		t.Fatal(err)
	}
	if got := seat.HandoverAsked(); got != 0 {
		t.Errorf("HandoverAsked() with a request older than HandoverWait = %d, want 0", got)
	}
	if _, err := os.Stat(ws.HandoverPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale request is left: %v", err)
	}
}

// seatRunner opens a workspace with a seat's runner (Options.Seat) on it,
// closed when the test ends.
func seatRunner(t *testing.T) (*workspace.Workspace, *Runner) {
	t.Helper()
	ws := newWorkspace(t, "alice")
	seat, err := Open(ws, Options{Seat: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seat.Close() })
	return ws, seat
}
