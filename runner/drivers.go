package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/parley-dev/parley/internal/pipe"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Delivery is a message handed to an agent's driver.
type Delivery struct {
	Agent     string
	ID        string
	Path      string // the message file, in the agent's cur/
	Data      []byte
	Message   *mailbox.Message
	Workspace string // the workspace root
	// Loaded is the workspace as the runner has it loaded when it hands
	// the message over: parley.yaml as it routes by now (it may have
	// been reloaded since the driver was made). A driver that checks
	// what its agent says checks it against this, as the router will.
	Loaded  *workspace.Workspace
	Outbox  string // where the handler may write messages to send
	Attempt int    // 1 for the first try
	// Context are the messages the agent did not accept (its accepts:
	// in parley.yaml) that arrived since its last call, oldest first:
	// filed in its done/ without waking it, and given now as context.
	Context []Kept
	// ContextFile, for a command or session agent, is the file that says
	// what the agent needs beside the message (see ContextFile): its
	// PARLEY_CONTEXT.
	ContextFile string
	// Note, set by a built-in handler, is what the journal's line of the
	// message handled says of it (parley log): what the handler did, or
	// did not do, and why, where it sends nothing that would say so (the
	// scene file the scribe filed a narrative in; a [SESSION_END] the
	// team lead took for a repeat). "" for nothing.
	Note string
}

// Kept is a message kept as context for an agent's next call.
type Kept struct {
	Path    string // the message file, in the agent's done/
	Message *mailbox.Message
}

// Handler is a built-in agent: Go code that answers the messages
// delivered to it with messages to send. Packages such as campaigns and
// plans provide handlers; cmd/parley registers them.
type Handler interface {
	Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error)
}

// NoticeHandler is a Handler that is handed some of parley's own notices
// (from workspace.Runner): those whose type it says it handles. The
// runner tells a built-in agent whose handler handles
// workspace.GivenUpNotice of its messages given up (see GiveUps); a
// handler that does not implement it is told nothing, and a notice that
// reaches it anyway is filed in its done/ without calling it.
type NoticeHandler interface {
	Handler
	HandlesNotice(typ string) bool
}

// AnswerWaiter is a NoticeHandler that handles workspace.UnansweredNotice
// and says which of the messages it sends wait for an answer: it is told
// only of those left unanswered (see Unanswered). One that does not
// implement it is told of every message of its left unanswered.
type AnswerWaiter interface {
	AwaitsAnswer(typ string) bool
}

// Noter is a Handler with something to say of its agent in parley
// status (a budget it cannot keep): after each message the runner notes
// what Note returns, unless it is "".
type Noter interface {
	Handler
	Note() string
}

// HandlerFunc makes a function a Handler.
type HandlerFunc func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	return f(ctx, d)
}

// Handlers maps the names agents give in "handler:" to built-in handlers.
type Handlers map[string]Handler

// Names returns the registered handler names, sorted.
func (h Handlers) Names() []string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DriverFunc makes the handler of an agent whose driver is provided from
// outside the runner (Options.Drivers). It is called again when
// parley.yaml changes the agent.
type DriverFunc func(a workspace.Agent, ws *workspace.Workspace) (Handler, error)

// driver runs an agent: it handles one delivery and returns what the agent
// said, as message texts.
type driver interface {
	handle(ctx context.Context, d *Delivery) ([][]byte, error)
	close() error
}

// HandleError says why a driver failed a message: the exit code and the
// end of what the program wrote to stderr, when it is a program.
type HandleError struct {
	Err      error
	ExitCode int    // -1 when the program did not exit by itself
	Stderr   string // the last lines it wrote to stderr
	// Stdout is the last lines it wrote to stdout, when it failed and
	// wrote nothing on stderr: a CLI that says why there ("You've hit
	// your limit", then stack frames) is quoted by its last line only.
	Stdout    string
	Permanent bool // trying again cannot help (the program is missing)
	// Detail is what a handler adds to the reason in dead/: a model's
	// transcript.
	Detail string
}

func (e *HandleError) Error() string {
	s := e.Err.Error()
	if e.ExitCode > 0 {
		s = fmt.Sprintf("exit code %d: %s", e.ExitCode, s)
	}
	return s
}

func (e *HandleError) Unwrap() error { return e.Err }

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	n   int64 // bytes written to it in all
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	return strings.TrimSpace(t.raw())
}

// raw is what it keeps, as written.
func (t *tail) raw() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// mark is where what is written next begins, for keepSince.
func (t *tail) mark() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// keepSince forgets what was written before mark m, and returns it.
func (t *tail) keepSince(m int64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := t.n - m
	if keep >= int64(len(t.buf)) {
		return ""
	}
	cut := len(t.buf) - int(keep)
	dropped := string(t.buf[:cut])
	t.buf = append(t.buf[:0], t.buf[cut:]...)
	return dropped
}

// capped is a writer that fails once more than max bytes were written,
// and calls over then, once.
type capped struct {
	w    io.Writer
	n    int64
	max  int64
	over func()
	once sync.Once
}

func (c *capped) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.n > c.max {
		c.once.Do(c.over)
		return 0, errOutputTooLarge
	}
	return c.w.Write(p)
}

// commandDriver runs a program for each message: the message on stdin,
// what it prints on stdout sent as the agent.
type commandDriver struct {
	agent     workspace.Agent
	root      string
	environ   []string // the environment its program starts with (Options.Environ)
	maxOutput int64
	confine   *Confinement // what its program is confined to; nil: nothing
	cgroups   *cgroups     // where each run gets a cgroup of its own, if anywhere
	records   *records     // where each run is written down while it runs
	stderrLog *stderrLog   // where what its program writes to stderr is kept
}

func (c *commandDriver) handle(ctx context.Context, d *Delivery) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.agent.Timeout)
	defer cancel()
	p, err := startProgram(c.agent.Run[0], c.agent.Run[1:], c.root, append(slices.Clip(c.environ), driverEnv(d)...), c.confine, c.cgroups, c.records)
	if err != nil {
		return nil, startError(c.agent.Run[0], err)
	}
	defer p.close()
	c.stderrLog.begin(fmt.Sprintf("message %s, attempt %d", d.ID, d.Attempt))
	defer c.stderrLog.end()
	var stdout bytes.Buffer
	stderr := &tail{max: 4096}
	var tooMuch atomic.Bool
	var pipes sync.WaitGroup
	pipes.Go(func() { p.feed(d.Data) })
	pipes.Go(func() {
		drain(&capped{w: &stdout, max: c.maxOutput, over: func() { tooMuch.Store(true); p.killGroup() }}, p.stdout)
	})
	pipes.Go(func() { drain(io.MultiWriter(stderr, c.stderrLog), p.stderr) })
	select {
	case <-p.exited:
	case <-ctx.Done():
		p.killGroup()
		<-p.exited
	}
	werr := p.err
	// The program has exited: what it started goes with it (a child that
	// keeps its stdout open, a daemon in a session of its own), and what
	// it printed is read to the end.
	p.end()
	pipes.Wait()
	exitedOK := werr == nil
	switch {
	case tooMuch.Load():
		return nil, &HandleError{Err: outputTooLarge(c.maxOutput), ExitCode: -1, Stderr: stderr.String()}
	case exitedOK:
		// Exited 0, even if its time ran out just as it did: its answer
		// counts.
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, &HandleError{Err: fmt.Errorf("timed out after %v: killed", c.agent.Timeout), ExitCode: -1, Stderr: stderr.String()}
	case ctx.Err() != nil:
		return nil, &HandleError{Err: ctx.Err(), ExitCode: -1, Stderr: stderr.String()} // shutting down
	default:
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			// The last line it wrote on stderr is most often the cause
			// (sh: cannot open agents/fixr.sh): the run's log, parley
			// status and the run's summary show it, not only dead/.
			// A program that wrote nothing there may have said why on
			// stdout (`claude -p` at its usage limit prints "You've
			// hit your limit · resets 3am" there, and exits 1): its
			// last line then.
			why := errors.New("the program failed")
			var out string
			if last := lastLine(stderr.String()); last != "" {
				why = fmt.Errorf("%s (the last line of its stderr)", last)
			} else if last := lastLine(stdout.String()); last != "" {
				why = fmt.Errorf("%s (the last line of its stdout; it wrote nothing on stderr)", last)
				out = lastBytes(stdout.String(), stdoutKept)
			}
			return nil, &HandleError{Err: why, ExitCode: ee.ExitCode(), Stderr: stderr.String(), Stdout: out}
		}
		return nil, &HandleError{Err: werr, ExitCode: -1, Stderr: stderr.String()}
	}
	return d.Loaded.Opens(d.Agent).SplitAnswer(stdout.Bytes()), nil
}

// stdoutKept is how much of a failed program's stdout its reason in
// dead/ keeps, when it wrote nothing on stderr: as much as of stderr.
const stdoutKept = 4096

// lastBytes is the last max bytes of text, from the start of a line
// where one begins in them, trimmed.
func lastBytes(text string, max int) string {
	text = strings.TrimSpace(text)
	if len(text) <= max {
		return text
	}
	cut := len(text) - max
	whole := text[cut-1] == '\n' // the cut falls at a line's start
	text = text[cut:]
	if i := strings.IndexByte(text, '\n'); !whole && i >= 0 && i < len(text)-1 {
		text = text[i+1:]
	}
	return strings.TrimSpace(text)
}

// notStartable reports whether a program could not be started for good:
// it is missing, or not executable.
func notStartable(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

func (c *commandDriver) close() error { return nil }

// driverEnv is what a program learns of the message it handles.
func driverEnv(d *Delivery) []string {
	from, _ := d.Message.Header().Get("from")
	typ, _ := d.Message.Header().Get("type")
	return []string{
		"PARLEY_WORKSPACE=" + d.Workspace,
		"PARLEY_AGENT=" + d.Agent,
		"PARLEY_MESSAGE=" + d.Path,
		"PARLEY_MESSAGE_ID=" + d.ID,
		"PARLEY_FROM=" + from,
		"PARLEY_TYPE=" + typ,
		"PARLEY_OUTBOX=" + d.Outbox,
		fmt.Sprintf("PARLEY_ATTEMPT=%d", d.Attempt),
		"PARLEY_CONTEXT=" + d.ContextFile,
	}
}

// sessionDriver keeps one program running for an agent and feeds it the
// agent's messages one after another on stdin, each ended by a FrameEnd
// line; it reads the program's messages from stdout, up to the empty frame
// that says the program is done with the message. A program that dies is
// started again for the next attempt.
type sessionDriver struct {
	agent     workspace.Agent
	root      string
	environ   []string // the environment its program starts with (Options.Environ)
	maxOutput int64
	log       *slog.Logger
	confine   *Confinement // what its program is confined to; nil: nothing
	cgroups   *cgroups     // where each run gets a cgroup of its own, if anywhere
	records   *records     // where each run is written down while it runs
	stderrLog *stderrLog   // where what its program writes to stderr is kept

	proc   *program
	frames *frameReader
	// stderr is what it wrote on stderr for the message it is given:
	// since its answer to the message before (answered), or since the
	// message before was given when it died before this one; since it
	// started, for its first.
	stderr   *tail
	answered int64  // the mark in stderr of its last answer
	sent     int    // the bytes of the message written to it
	earlier  string // what it wrote before answered, forgotten for this message
	// errPipe reads its stderr into stderr, stderrLog and lines.
	errPipe *pipe.Reader
	// lines reads parley session's lines on its stderr: its program's
	// API retries, for parley status, and the permissions it was
	// denied, for the journal (denied, of the message handled last).
	lines  *sessionLines
	denied string
	exited chan struct{}  // closed once the program has exited
	pipes  sync.WaitGroup // the reader of its stderr
}

func (s *sessionDriver) start(d *Delivery) error {
	// A session outlives each message, so its PARLEY_OUTBOX is the
	// agent's real outbox: files it writes there are routed like files
	// written by hand.
	outbox := filepath.Join(s.root, workspace.MailboxesDir, d.Agent, mailbox.Outbox)
	// Its PARLEY_CONTEXT is the same file for every message, written
	// again before each is written to the program.
	env := append(slices.Clip(s.environ), "PARLEY_WORKSPACE="+d.Workspace, "PARLEY_AGENT="+d.Agent, "PARLEY_OUTBOX="+outbox, "PARLEY_CONTEXT="+d.ContextFile)
	p, err := startProgram(s.agent.Run[0], s.agent.Run[1:], s.root, env, s.confine, s.cgroups, s.records)
	if err != nil {
		return startError(s.agent.Run[0], err)
	}
	s.proc = p
	s.stderr = &tail{max: 4096}
	s.answered, s.earlier = 0, ""
	s.stderrLog.begin(fmt.Sprintf("session started (pid %d)", p.cmd.Process.Pid))
	s.errPipe = pipe.Read(&s.pipes, p.stderr, io.MultiWriter(s.stderr, s.stderrLog, s.lines))
	s.frames = &frameReader{r: bufio.NewReaderSize(p.stdout, 64<<10), max: s.maxOutput}
	s.exited = p.exited
	return nil
}

func (s *sessionDriver) handle(ctx context.Context, d *Delivery) ([][]byte, error) {
	if s.proc == nil {
		if err := s.start(d); err != nil {
			return nil, err
		}
	} else {
		// The reason this message fails for quotes no line the session
		// wrote before its answer to the one before (a warning, which
		// the reason of a session hung silently on this one quoted as
		// its cause), but what it wrote since, and all it wrote since
		// it was given the one before once it has died meanwhile: it
		// said why as it died (fatal: OAuth token expired; exiting),
		// maybe before its answer was read. A session started for it
		// keeps what it wrote as it started.
		s.errPipe.CatchUp()
		s.earlier = ""
		select {
		case <-s.exited:
		default:
			s.earlier = s.stderr.keepSince(s.answered)
		}
	}
	type result struct {
		frames [][]byte
		err    error
	}
	// What it writes from now on is read as of this message, most
	// likely: its log says which message the session is given.
	s.stderrLog.mark(fmt.Sprintf("message %s, attempt %d", d.ID, d.Attempt))
	s.denied = ""
	s.lines.begin()
	defer s.lines.end() // when it failed: nothing is kept for the journal
	if n := s.frames.stray(); n > 0 && s.log != nil {
		s.log.Warn("dropped what a session printed after it was done with its message", "agent", s.agent.Name, "bytes", n)
	}
	got := make(chan result, 1)
	p, frames := s.proc, s.frames
	s.sent = len(d.Data)
	go func() {
		if err := writeFrame(p.stdin, d.Data); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Its program exited (startIn stops the write then)
				// before it read the message, which a process it
				// started, holding its stdin, does not read either.
				err = fmt.Errorf("its program exited before it read the message (a process it started holds its stdin): %w", errSessionEnded)
			}
			got <- result{err: fmt.Errorf("writing to the session: %w", err)}
			return
		}
		f, err := frames.next()
		got <- result{f, err}
	}()
	timer := time.NewTimer(s.agent.Timeout)
	defer timer.Stop()
	fail := func(err error) ([][]byte, error) {
		s.kill()
		<-got // the reader ends once the program is killed
		stderr := s.stderr.String()
		if ctx.Err() == nil {
			// Timed out: what it said last, given this message, may
			// say why (parley session's line of output that is no JSON
			// event).
			if last := lastLine(stderr); last != "" {
				err = fmt.Errorf("%w; the last line of its stderr: %s", err, last)
			} else {
				err = fmt.Errorf("%w; it wrote nothing on stderr for this message", err)
			}
		}
		return nil, &HandleError{Err: err, ExitCode: -1, Stderr: stderr}
	}
	select {
	case r := <-got:
		if errors.Is(r.err, errOutputTooLarge) {
			// Said as a command's is: the limit, and where it is set.
			r.err = outputTooLarge(s.maxOutput)
		}
		if r.err != nil {
			return nil, s.ended(ctx, r.err)
		}
		// What it wrote on stderr for this message, read: the
		// permissions its program was denied for the journal (parley
		// session writes them before the answer); what it writes from
		// here on is written after its answer (see above).
		s.errPipe.CatchUp()
		s.answered = s.stderr.mark()
		s.denied = s.lines.end()
		return splitAnswers(d.Loaded.Opens(d.Agent), r.frames), nil
	case <-timer.C:
		if d.Attempt > s.agent.Retries {
			// Its last attempt: nothing starts it again for this
			// message (the next message starts a new session).
			return fail(fmt.Errorf("timed out after %v: the session was killed", s.agent.Timeout))
		}
		return fail(fmt.Errorf("timed out after %v: the session was killed and will be started again", s.agent.Timeout))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
}

// handledNote returns, once, what the journal's line of the message
// the session handled last says of it: the permissions its program was
// denied ("" when none).
func (s *sessionDriver) handledNote() string {
	n := s.denied
	s.denied = ""
	return n
}

// ended ends the session after its output failed with err, and says
// why: a session whose output ended is given a moment to exit, so that
// its exit code and all it wrote on stderr are known, and the last line
// of its stderr, most often the real cause (parley session's "its result
// is an error (...): API Error: 529 overloaded"), is added to the error,
// which the run's log, parley status and dead/ show, not only the end of
// stderr kept beside the message in dead/.
func (s *sessionDriver) ended(ctx context.Context, err error) error {
	code := -1
	// A session that exited before it read the message is one whose
	// output ended (a write to it fails with EPIPE, or the message is
	// written and its output ends, as the scheduler says).
	gone := errors.Is(err, errSessionEnded) || errors.Is(err, syscall.EPIPE)
	if gone {
		wait := time.NewTimer(endGrace)
		select {
		case <-s.exited:
			var ee *exec.ExitError
			if errors.As(s.proc.err, &ee) {
				code = ee.ExitCode()
			}
		case <-wait.C:
		case <-ctx.Done():
		}
		wait.Stop()
	}
	// It died before it read the message (the message waits unread in
	// its stdin): all it wrote since it was given the one before is
	// this message's, what it wrote as it died included.
	unread := errors.Is(err, syscall.EPIPE)
	if n, ok := pipe.Unread(s.proc.stdin); gone && ok && s.sent > 0 && n >= s.sent {
		unread = true
	}
	s.kill() // its stderr is read to the end
	stderr := s.stderr.String()
	if unread && s.earlier != "" {
		stderr = strings.TrimSpace(s.earlier + s.stderr.raw())
	}
	if last := lastLine(stderr); last != "" && gone {
		// The cause first: parley status shows the first 160 characters.
		err = fmt.Errorf("%s (the last line of its stderr; %w)", last, err)
	}
	return &HandleError{Err: err, ExitCode: code, Stderr: stderr}
}

// lastLine is the last line of text that is not blank, trimmed, as a
// reason quotes it: its control characters escaped (a terminal's colours,
// \x1b[31m, a carriage return), as Go quotes them, and cut at
// maxLastLine characters.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSpace(text)
	var b strings.Builder
	n := 0
	for _, r := range text {
		if n == maxLastLine {
			b.WriteString("...")
			break
		}
		n++
		if r == ' ' || unicode.IsGraphic(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// maxLastLine is how many characters of a program's last line a reason
// quotes.
const maxLastLine = 200

// kill ends the session, with every process it started (see
// program.end); the next message starts it anew.
func (s *sessionDriver) kill() {
	if s.proc == nil {
		return
	}
	s.proc.end()
	<-s.exited
	s.pipes.Wait()
	s.stderrLog.end()
	s.proc.close()
	s.proc = nil
}

// close stops the session: its stdin is closed, and it is given a moment
// to exit before it is killed, with every process it started.
func (s *sessionDriver) close() error {
	if s.proc == nil {
		return nil
	}
	s.proc.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(3 * time.Second):
	}
	s.kill() // what it started goes with it
	return nil
}

// builtinDriver hands messages to a Go handler.
type builtinDriver struct {
	handler Handler
	timeout time.Duration
	handled string // the Note of the message handled last, until taken
}

// handledNote returns, once, the Note the handler gave the message it
// handled last ("" when none), for the journal's line of it.
func (b *builtinDriver) handledNote() string {
	n := b.handled
	b.handled = ""
	return n
}

func (b *builtinDriver) handle(ctx context.Context, d *Delivery) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	d.Note = ""
	msgs, err := b.handler.Handle(ctx, d)
	b.handled = d.Note
	if err != nil {
		he := &HandleError{Err: err, ExitCode: -1, Permanent: !mayPass(err)}
		var detailed interface{ Detail() string }
		if errors.As(err, &detailed) {
			he.Detail = detailed.Detail()
		}
		return nil, he
	}
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Bytes())
	}
	return out, nil
}

func (b *builtinDriver) close() error { return nil }

// note is what its handler has to say of the agent in parley status, if
// it is a Noter.
func (b *builtinDriver) note() string {
	if n, ok := b.handler.(Noter); ok {
		return n.Note()
	}
	return ""
}

// mayPass reports whether a built-in handler's error may pass on a later
// try: the disk or the system failing for now (out of space, an I/O
// error, a permission a person may fix, too many open files), or the
// handler's time running out, or an error that says it is temporary (an
// endpoint that does not answer). Any other error — a malformed field, a
// missing sheet — comes again with the same message, so the message goes
// to dead/ at once with it.
func mayPass(err error) bool {
	// An error may say itself (an endpoint that did not answer; a model
	// call cut short by the handler's time after a tool changed the
	// campaign, which must not be tried again), before the system's
	// error it wraps; syscall.Errno has a Temporary method too, but the
	// list below decides for it.
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) {
		if _, isErrno := temp.(syscall.Errno); !isErrno {
			return temp.Temporary()
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EIO, syscall.ENOSPC, syscall.EDQUOT, syscall.EAGAIN, syscall.EINTR, syscall.EBUSY,
		syscall.EMFILE, syscall.ENFILE, syscall.EACCES, syscall.EPERM, syscall.EROFS, syscall.ENOMEM:
		return true
	}
	return false
}
