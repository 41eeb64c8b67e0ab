package runner

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// stderrLogMax is the size past which an agent's stderr log is rotated:
// the file is moved to AGENT.log.1, over the generation before it, and
// a new one started. An agent's logs take at most twice this.
const stderrLogMax = 1 << 20

// stderrLog is the log of what an agent's program writes to stderr,
// kept at workspace.StderrLogPath so that a person can read it, or
// tail -f it, while the program runs and after it succeeded: a header
// line when a run starts (begin), then the program's bytes as it writes
// them, unbuffered. It is bounded: rotated once it passes max, and a
// single write larger than max keeps only its end.
//
// Writing it never fails nor blocks what the program's stderr is read
// for (the tail kept for dead/): Write always reports success. A log
// that cannot be written is warned about once and skipped until the
// next run begins, which tries again. A nil *stderrLog logs nothing.
type stderrLog struct {
	path  string
	agent string
	max   int64
	now   func() time.Time
	log   *slog.Logger

	mu      sync.Mutex
	f       *os.File // nil when not open, or when it failed
	size    int64    // of the file open
	midLine bool     // the last byte written was not a newline
	warned  bool
}

// begin opens the log, if it is not open, for a run of the agent's
// program, and writes the run's header: its time and what, which says
// what the run is ("message ID, attempt N", "session started").
func (l *stderrLog) begin(what string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if err := l.open(); err != nil {
			l.fail(err)
			return
		}
	}
	l.header(what)
}

// end closes the log; the next run's begin opens it again, so that a
// log removed or moved by a person between runs is started anew.
func (l *stderrLog) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// Write appends p to the log, rotating it first when p would take it
// past max. It always returns len(p), nil.
func (l *stderrLog) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return len(p), nil // skipped until the next run
	}
	q := p
	if int64(len(q)) > l.max {
		q = q[int64(len(q))-l.max:]
	}
	if l.size > 0 && l.size+int64(len(q)) > l.max {
		if err := l.rotate(); err != nil {
			l.fail(err)
			return len(p), nil
		}
	}
	l.write(q)
	return len(p), nil
}

// open opens the log for appending, making its directory.
func (l *stderrLog) open() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size, l.midLine = f, fi.Size(), false
	if l.size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, l.size-1); err == nil {
			l.midLine = last[0] != '\n'
		}
	}
	return nil
}

// rotate moves the log to its .1, over the one there, and starts a new
// one, headed by where the lines before it are.
func (l *stderrLog) rotate() error {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return err
	}
	if err := l.open(); err != nil {
		return err
	}
	// A line cut by the rotation goes on after the header.
	l.header(fmt.Sprintf("continued (the lines before are in %s.1)", filepath.Base(l.path)))
	return nil
}

// header writes a header line, on a line of its own.
func (l *stderrLog) header(what string) {
	s := fmt.Sprintf("--- %s %s ---\n", l.now().Format(time.RFC3339), what)
	if l.midLine {
		s = "\n" + s
	}
	l.write([]byte(s))
}

func (l *stderrLog) write(p []byte) {
	if len(p) == 0 {
		return
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if err != nil {
		l.fail(err)
		return
	}
	l.midLine = p[len(p)-1] != '\n'
}

// fail closes the log, skipped until the next run begins, and warns
// of it the first time.
func (l *stderrLog) fail(err error) {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if l.warned || l.log == nil {
		return
	}
	l.warned = true
	l.log.Warn("cannot write the log of what the agent's program writes to stderr; it is skipped", "agent", l.agent, "path", l.path, "err", err)
}
