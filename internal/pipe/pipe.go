// Package pipe reads a program's output pipe as the program writes it,
// and can catch up with what the program wrote so far: a program's
// stderr, read by a goroutine of its own, reaches that goroutine when
// the scheduler says, often after what the program wrote next on its
// stdout; what it wrote about one message is told from what it writes
// about the next only once the reader has caught up.
package pipe

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// Reader reads a pipe from a program to its end into a writer, as
// io.Copy does, and can be asked to catch up (see CatchUp).
type Reader struct {
	f    *os.File
	w    io.Writer
	ask  chan catchUp  // a catch-up asked for
	done chan struct{} // closed once the pipe is read to its end

	mu     sync.Mutex
	stopAt time.Time // when reading stops (StopAt); zero: at the pipe's end
}

// catchUp is a catch-up asked for: done is closed once it is made;
// budget is how much it reads at most, what waited in the pipe when it
// was asked.
type catchUp struct {
	done   chan struct{}
	budget int
}

// maxCatchUp is what a catch-up reads at most where the system does not
// say what waits in a pipe: more than a pipe holds (64 KiB by default on
// Linux, 1 MiB at most).
const maxCatchUp = 1 << 20

// Read starts reading f into w, from a goroutine of its own that
// wg waits for.
func Read(wg *sync.WaitGroup, f *os.File, w io.Writer) *Reader {
	r := &Reader{f: f, w: w, ask: make(chan catchUp, 1), done: make(chan struct{})}
	wg.Go(r.run)
	return r
}

func (r *Reader) run() {
	defer close(r.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.f.Read(buf)
		if n > 0 {
			r.w.Write(buf[:n])
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			select {
			case c := <-r.ask:
				r.mu.Lock()
				r.f.SetReadDeadline(r.stopAt)
				r.mu.Unlock()
				r.readWaiting(buf, c.budget)
				close(c.done)
				continue
			default:
			}
		}
		// Its end, or the caller's deadline: what follows an error is
		// dropped, so that no writer blocks on a full pipe.
		if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
			io.Copy(io.Discard, r.f)
		}
		return
	}
}

// StopAt stops reading the pipe at t, when it has not ended by then: a
// program has exited, and what it started and holds its pipe open is
// not waited for. It stays so across a CatchUp.
func (r *Reader) StopAt(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopAt = t
	r.f.SetReadDeadline(t)
}

// readWaiting reads what waits in the pipe, without waiting for more,
// budget bytes at most: a program that writes faster than the writer
// takes it never leaves the pipe empty, and a catch-up that read until
// it was kept its caller waiting as long as the program wrote.
func (r *Reader) readWaiting(buf []byte, budget int) {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return
	}
	for budget > 0 {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), buf[:min(len(buf), budget)])
			return true // never wait: what is not there yet is not waited for
		}); err != nil || rerr != nil || n <= 0 {
			return
		}
		r.w.Write(buf[:n])
		budget -= n
	}
}

// CatchUp returns once what the program wrote to the pipe before it was
// called is written to the writer (a session's stderr is caught up with
// before it is given its next message, so that what it wrote about the
// message before is not taken for what it writes about the next). The
// reader's wait on the pipe is cut short (a deadline), what waits in the
// pipe is read, and the reader goes on. A deadline the caller sets on
// the pipe itself ends the reading, unless a CatchUp runs meanwhile,
// which would lift it: StopAt stays. What it reads is what waited in
// the pipe when it was called (where the system does not say, as much
// as a pipe holds): a program that goes on writing does not keep it
// waiting.
//
// CatchUp is for one caller at a time: the program's driver, between
// its messages.
func (r *Reader) CatchUp() {
	budget := maxCatchUp
	if n, ok := Unread(r.f); ok {
		budget = n
	}
	caught := make(chan struct{})
	r.ask <- catchUp{done: caught, budget: budget}
	if err := r.f.SetReadDeadline(time.Now()); err != nil {
		// A file with no deadlines (not a pipe the runtime polls):
		// no catching up, rather than a wait for the program's next
		// write.
		select {
		case <-r.ask:
			return
		case <-caught: // taken meanwhile
			return
		}
	}
	select {
	case <-caught:
	case <-r.done:
		// Read to its end: nothing more comes. The ask is taken back
		// for no one to answer.
		select {
		case <-r.ask:
		default:
		}
	}
}
