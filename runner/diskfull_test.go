package runner

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// The tests of this file stand in for a full disk (a workspace on a
// small tmpfs that fills for a few seconds) with the worker's
// writeFault: a write of a message's own fails with ENOSPC a number of
// times, then goes through, as when room is made.

// faults makes a writeFault that fails each write named in left with
// err as many times as left says, then lets it through; seen, when set,
// is called at each failure.
func faults(err error, left map[string]int, seen func(what string)) func(string) error {
	var mu sync.Mutex
	return func(what string) error {
		mu.Lock()
		defer mu.Unlock()
		if left[what] == 0 {
			return nil
		}
		left[what]--
		if seen != nil {
			seen(what)
		}
		return &fs.PathError{Op: "write", Path: what, Err: err}
	}
}

// openDiskFull opens a runner until idle whose workers wait a
// millisecond, not a second, before a write that failed for want of room
// is made again.
func openDiskFull(t *testing.T, ws *workspace.Workspace, opts Options) *Runner {
	t.Helper()
	opts.UntilIdle = true
	r, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.diskPause = time.Millisecond
	return r
}

func runDiskFull(t *testing.T, r *Runner) (Stats, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stats, err := r.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("the run did not end within 60 s")
	}
	return stats, err
}

// TestDiskFullWaitedOut: writes of the worker's own that fail for want
// of room (the context file, the stage of the answers, their publishing,
// the claim) are waited out and made again once there is room; they are
// no attempt of the agent's, and the message is handled, not given up.
// It was given up at once ("gave up after 1 attempt: writing its context
// file"), and, dead/ being full too, left in cur/ for good.
func TestDiskFullWaitedOut(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, "boss")
			script(t, ws, "echo.sh", "cat >/dev/null; echo heard\n")
			ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: echo, driver: command, run: [./echo.sh], retries: 0}\n")
			id := send(t, ws, "boss", "echo", "hello")
			var mu sync.Mutex
			var attempts []int
			var states []string
			r := openDiskFull(t, ws, Options{OnHandled: func(h Handled) {
				mu.Lock()
				attempts = append(attempts, h.Attempt)
				mu.Unlock()
			}})
			r.workers["echo"].writeFault = faults(errno, map[string]int{"claim": 1, "context": 2, "commit": 1, "publish": 2}, func(string) {
				states = append(states, r.state.run("echo").State)
			})
			stats, err := runDiskFull(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(stats.Stopped) != 0 || stats.Dead != 0 {
				t.Errorf("stats = %+v, want nothing stopped or given up", stats)
			}
			if got := names(t, ws, "echo", mailbox.Done); len(got) != 1 || got[0] != id+".md" {
				t.Errorf("echo's done/ = %v, want the message handled", got)
			}
			if got := names(t, ws, "echo", mailbox.Dead); len(got) != 0 {
				t.Errorf("echo's dead/ = %v, want nothing given up", got)
			}
			if d := cmp.Diff([]string{"heard"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
				t.Errorf("boss's inbox (-want +got):\n%s", d)
			}
			// The program ran again once its answers could be staged:
			// still its first attempt.
			if d := cmp.Diff([]int{1, 1}, attempts); d != "" {
				t.Errorf("attempts (-want +got):\n%s", d)
			}
			for _, s := range states[1:] { // the first is before any write failed
				if s == workspace.StateFailed {
					t.Errorf("states while the disk was full = %v, want none failed", states)
					break
				}
			}
			if a := r.state.run("echo"); a.State != workspace.StateIdle || a.Note != "" {
				t.Errorf("echo's state = %+v, want idle with no note once the disk has room", a)
			}
		})
	}
}

// TestDiskFullHandlerWaitedOut: a built-in handler whose own write
// fails for want of room (the orchestrator writing a plan) is run again
// once there is room, not counted among its retries: with retries: 0 it
// gave the message up at the first full disk, and the pipeline stalled.
func TestDiskFullHandlerWaitedOut(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: planner, driver: builtin, handler: planner, retries: 0}\n")
	tries := 0
	handlers := Handlers{"planner": HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
		if tries++; tries <= 3 {
			return nil, fmt.Errorf("writing the plan: %w", &fs.PathError{Op: "write", Path: "plans/x.md", Err: syscall.ENOSPC})
		}
		return nil, nil
	})}
	send(t, ws, "boss", "planner", "plan")
	r := openDiskFull(t, ws, Options{Handlers: handlers})
	if _, err := runDiskFull(t, r); err != nil {
		t.Fatal(err)
	}
	if tries != 4 {
		t.Errorf("the handler ran %d times, want 4 (three while the disk was full)", tries)
	}
	if d := cmp.Diff([]string{"plan"}, bodies(t, ws, "planner", mailbox.Done)); d != "" {
		t.Errorf("planner's done/ (-want +got):\n%s", d)
	}
	if got := names(t, ws, "planner", mailbox.Dead); len(got) != 0 {
		t.Errorf("planner's dead/ = %v, want nothing given up", got)
	}
}

// TestDiskFullGiveUpMade: a message given up while dead/ cannot be
// written is moved there once it can; until then the agent shows
// retrying, with a note that says why, not failed, and the log says
// nothing was given up. It said "gave up a message" and "failed" with
// the message still in cur/, never taken up again by the running runner.
func TestDiskFullGiveUpMade(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "fail.sh", "cat >/dev/null; exit 3\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: failer, driver: command, run: [./fail.sh], retries: 0}\n")
	id := send(t, ws, "boss", "failer", "work")
	log := &lockedLog{}
	r := openDiskFull(t, ws, Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	var during []workspace.AgentRun
	var deadThen [][]string
	r.workers["failer"].writeFault = faults(syscall.ENOSPC, map[string]int{"dead": 3}, func(string) {
		during = append(during, r.state.run("failer"))
		deadThen = append(deadThen, names(t, ws, "failer", mailbox.Dead))
	})
	stats, err := runDiskFull(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "failer", mailbox.Dead); len(got) != 1 || got[0] != id+".md" {
		t.Errorf("failer's dead/ = %v, want the message given up", got)
	}
	if got := names(t, ws, "failer", mailbox.Cur); len(got) != 0 {
		t.Errorf("failer's cur/ = %v, want nothing left", got)
	}
	if stats.Dead != 1 {
		t.Errorf("stats.Dead = %d, want 1", stats.Dead)
	}
	for i, a := range during[1:] {
		if a.State != workspace.StateRetrying || !strings.Contains(a.Note, "cannot move it to dead/") || !strings.Contains(a.Note, "no space left on device") {
			t.Errorf("failer while dead/ could not be written (%d) = %+v, want retrying with a note of why", i+1, a)
		}
	}
	for _, d := range deadThen {
		if len(d) != 0 {
			t.Errorf("dead/ held %v while it could not be written", d)
		}
	}
	gaveUp := strings.Count(log.String(), LogGaveUp)
	if gaveUp != 1 {
		t.Errorf("the log says %q %d times, want once, when it is in dead/:\n%s", LogGaveUp, gaveUp, log.String())
	}
	if a := r.state.run("failer"); a.State != workspace.StateFailed || a.Note != "" {
		t.Errorf("failer's state = %+v, want failed, with no note left of the full disk", a)
	}
}

// TestDiskFullUntilIdleEnds: a run until idle does not wait for room for
// ever: after four tries it stops the agent for the run (exit 5, naming
// it and why) and the message waits in cur/ for the next run; nothing is
// given up.
func TestDiskFullUntilIdleEnds(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "echo.sh", "cat >/dev/null; echo heard\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: echo, driver: command, run: [./echo.sh]}\n")
	id := send(t, ws, "boss", "echo", "hello")
	r := openDiskFull(t, ws, Options{})
	r.workers["echo"].writeFault = faults(syscall.ENOSPC, map[string]int{"context": 1 << 30}, nil)
	stats, err := runDiskFull(t, r)
	if err != nil {
		t.Fatal(err)
	}
	cur := fmt.Sprintf("mailboxes/echo/cur/%s.md", id)
	if len(stats.Stopped) != 1 || stats.Stopped[0].Path != cur || !strings.Contains(stats.Stopped[0].Reason, "cannot write its context file") ||
		!strings.Contains(stats.Stopped[0].Reason, "no space left on device") {
		t.Errorf("stats.Stopped = %+v, want echo stopped, its message waiting in %s, for want of room", stats.Stopped, cur)
	}
	if got := names(t, ws, "echo", mailbox.Cur); len(got) != 1 {
		t.Errorf("echo's cur/ = %v, want the message waiting for the next run", got)
	}
	if got := names(t, ws, "echo", mailbox.Dead); len(got) != 0 {
		t.Errorf("echo's dead/ = %v, want nothing given up", got)
	}
}

// TestStateWrittenAgain: a write of .parley/agents.json that fails (a
// full disk) leaves the book unwritten, so it is written again; it was
// taken for written, and status showed a state long past (an agent
// working on a message in done/) until something else changed.
func TestStateWrittenAgain(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "a")
	s := loadStateBook(ws, time.Now, nil)
	defer s.close()
	blocker := ws.AgentsPath() + ".tmp"
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil { // the write fails
		t.Fatal(err)
	}
	s.set("a", workspace.StateWorking, "m1")
	s.flush()
	s.set("a", workspace.StateIdle, "")
	s.flush()
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	s.flush()
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if got := runs["a"].State; got != workspace.StateIdle {
		t.Errorf("agents.json says a is %q once it can be written, want idle", got)
	}
}

// TestDiskFullCommitSync: the sync after the stage of the answers is
// moved to its ready directory fails for want of room (syncfs returns
// ENOSPC). The answers are past asking for again: only the sync is
// made again, the program runs once, and its answer is sent once. It was
// counted as a failed attempt: the program ran again, its new stage
// could not replace the ready one, the message went to dead/ and its
// sender was told it was given up, and the next run sent the first
// attempt's answer all the same.
func TestDiskFullCommitSync(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "echo.sh", "cat >/dev/null; echo heard\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: echo, driver: command, run: [./echo.sh], retries: 1}\n")
	id := send(t, ws, "boss", "echo", "hello")
	var mu sync.Mutex
	runs := 0
	r := openDiskFull(t, ws, Options{OnHandled: func(Handled) {
		mu.Lock()
		runs++
		mu.Unlock()
	}})
	left := 2
	r.syncer.CommitFault = func() error {
		mu.Lock()
		defer mu.Unlock()
		if left == 0 {
			return nil
		}
		left--
		return &fs.PathError{Op: "syncfs", Path: ws.Root, Err: syscall.ENOSPC}
	}
	stats, err := runDiskFull(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Errorf("the program ran %d times, want once", runs)
	}
	if len(stats.Stopped) != 0 || stats.Dead != 0 {
		t.Errorf("stats = %+v, want nothing stopped or given up", stats)
	}
	if got := names(t, ws, "echo", mailbox.Dead); len(got) != 0 {
		t.Errorf("echo's dead/ = %v, want nothing given up", got)
	}
	if got := names(t, ws, "echo", mailbox.Done); len(got) != 1 || got[0] != id+".md" {
		t.Errorf("echo's done/ = %v, want the message handled", got)
	}
	if d := cmp.Diff([]string{"heard"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	if a := r.state.run("echo"); a.State != workspace.StateIdle || a.Note != "" {
		t.Errorf("echo's state = %+v, want idle with no note once the sync went through", a)
	}
}

// TestDiskFullHandlerBounded: a built-in handler's own write that fails
// for want of room is waited out only for as long as the agent's
// timeout, then fails its attempt; one that fails on a read-only
// filesystem fails it at once. Both were waited out with no bound: a
// handler writing where it never may (a mount read-only by design) kept
// its message in cur/ and its agent's queue blocked for as long as the
// runner ran.
func TestDiskFullHandlerBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		errno syscall.Errno
		runs  int // the handler's, before the message is given up
	}{
		// Run once, then twice more while the clock passes the
		// timeout (2m, a minute a run).
		{syscall.ENOSPC, 3},
		{syscall.EDQUOT, 3},
		{syscall.EROFS, 1},
	} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			t.Parallel()
			ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: planner, driver: builtin, handler: planner, retries: 0, timeout: 2m}\n")
			var mu sync.Mutex
			clock := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
			now := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return clock
			}
			runs := 0
			handlers := Handlers{"planner": HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
				mu.Lock()
				runs++
				clock = clock.Add(time.Minute)
				mu.Unlock()
				return nil, fmt.Errorf("writing the plan: %w", &fs.PathError{Op: "write", Path: "plans/x.md", Err: tc.errno})
			})}
			id := send(t, ws, "boss", "planner", "plan")
			r := openDiskFull(t, ws, Options{Handlers: handlers, Now: now})
			stats, err := runDiskFull(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if runs != tc.runs {
				t.Errorf("the handler ran %d times, want %d", runs, tc.runs)
			}
			if len(stats.Stopped) != 0 {
				t.Errorf("stopped = %+v, want the agent not stopped: its message failed", stats.Stopped)
			}
			if got := names(t, ws, "planner", mailbox.Dead); len(got) != 1 || got[0] != id+".md" {
				t.Errorf("planner's dead/ = %v, want the message given up", got)
			}
			if tc.runs > 1 && (len(stats.DeadFiles) != 1 || !strings.Contains(stats.DeadFiles[0].Reason, "(still no room after 2m0s)")) {
				t.Errorf("given up = %+v, want its reason to say how long it waited for room", stats.DeadFiles)
			}
			if a := r.state.run("planner"); a.State != workspace.StateFailed || strings.Contains(a.Note, "cannot handle it") {
				t.Errorf("planner's state = %+v, want failed, with no note of a write waited out", a)
			}
		})
	}
}
