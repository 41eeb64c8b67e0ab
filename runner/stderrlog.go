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
// line when a run starts (begin), in a session one as each message is
// written to it (mark), then the program's bytes as it writes them,
// unbuffered. Headers wait for the program's first byte: a program that
// writes nothing to stderr leaves the log as it was, so that the headers
// of thousands of quiet runs do not push what one of them said out of
// it. It is bounded: rotated once it passes max, and a single write
// larger than max keeps only its end. A log removed or moved by a person
// while it is open (rm, git clean, mv: a session's stays open while the
// session lives) is noticed at the program's next write, which starts it
// anew: before, the rest of the session's stderr went into the file
// removed.
//
// Writing it never fails nor blocks what the program's stderr is read
// for (the tail kept for dead/): Write always reports success. A log
// that cannot be written is warned about once and skipped until the
// next run or message, which tries again. A nil *stderrLog logs
// nothing.
type stderrLog struct {
	path  string
	agent string
	max   int64
	now   func() time.Time
	log   *slog.Logger

	mu      sync.Mutex
	f       *os.File    // nil when not open
	info    os.FileInfo // of the file open, to tell whether the path still names it
	size    int64       // of the file open
	midLine bool        // the last byte written was not a newline
	run     string      // the header of the run begun, until the program writes
	message string      // the header of the message marked, until the program writes
	skipped bool        // it failed: skipped until the next begin or mark
	warned  bool
}

// begin starts a run of the agent's program: what says what the run
// is ("message ID, attempt N", "session started"). Its header, with the
// time, is written before what the program writes first.
func (l *stderrLog) begin(what string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.run, l.message, l.skipped = l.headerLine(what), "", false
}

// mark says which message a session is given now: its header, with the
// time, is written before what the session writes next, in place of an
// earlier message's header not written yet.
func (l *stderrLog) mark(what string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.message, l.skipped = l.headerLine(what), false
}

// end closes the log at the end of a run; the next run opens it again,
// so that a log removed or moved by a person between runs is started
// anew.
func (l *stderrLog) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.run, l.message = "", ""
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// Write appends p to the log, after the headers waiting, opening the log
// if it is not open and rotating it first when p would take it past
// max. It always returns len(p), nil.
func (l *stderrLog) Write(p []byte) (int, error) {
	if l == nil || len(p) == 0 {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.skipped {
		return len(p), nil
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			l.fail(err)
			return len(p), nil
		}
	} else if err := l.follow(); err != nil {
		l.fail(err)
		return len(p), nil
	}
	q := p
	if int64(len(q)) > l.max {
		q = q[int64(len(q))-l.max:]
	}
	if need := int64(len(l.run) + len(l.message) + 1 + len(q)); l.size > 0 && l.size+need > l.max {
		if err := l.rotate(); err != nil {
			l.fail(err)
			return len(p), nil
		}
	}
	for _, h := range []*string{&l.run, &l.message} {
		if *h != "" {
			l.header(*h)
			*h = ""
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
	l.f, l.info, l.size, l.midLine = f, fi, fi.Size(), false
	if l.size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, l.size-1); err == nil {
			l.midLine = last[0] != '\n'
		}
	}
	return nil
}

// follow opens the log anew when its path no longer names the file
// open: a person removed or moved it while it was open. A stat per write
// of the program's, not per byte: the copy that feeds Write reads what
// the program wrote in chunks.
func (l *stderrLog) follow() error {
	fi, err := os.Stat(l.path)
	if err == nil && os.SameFile(fi, l.info) {
		return nil
	}
	l.f.Close()
	l.f = nil
	if err := l.open(); err != nil {
		return err
	}
	if l.run == "" {
		// The run goes on, its header in the file removed.
		l.header(l.headerLine("continued (the log was removed or moved while the program ran)"))
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
	if l.run == "" {
		// The run goes on, a line cut by the rotation after the header.
		l.header(l.headerLine(fmt.Sprintf("continued (the lines before are in %s.1)", filepath.Base(l.path))))
	}
	return nil
}

// headerLine is the header line of what, at the time now.
func (l *stderrLog) headerLine(what string) string {
	return fmt.Sprintf("--- %s %s ---\n", l.now().Format(time.RFC3339), what)
}

// header writes a header line, on a line of its own.
func (l *stderrLog) header(line string) {
	if l.midLine {
		line = "\n" + line
	}
	l.write([]byte(line))
}

// write writes p to the log open, if it is.
func (l *stderrLog) write(p []byte) {
	if len(p) == 0 || l.f == nil {
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

// fail closes the log, skipped until the next begin or mark, and warns
// of it the first time.
func (l *stderrLog) fail(err error) {
	l.skipped = true
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
