package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/internal/pipe"
	"github.com/parley-dev/parley/runner"
)

func sessionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "session",
		Usage:     "run a stream-json program (claude -p --input-format stream-json) as a session agent: each message one turn",
		ArgsUsage: "[--prompt FILE] -- PROGRAM [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prompt", Usage: "a `FILE` (the role's prompt) put before the first turn the program is given"},
		},
		Description: "For `driver: session`: run: [parley, session, --, claude, -p, --input-format, stream-json,\n" +
			"--output-format, stream-json, --verbose]. Each message parley gives the session\n" +
			"goes to the program as one user turn ({\"type\":\"user\",...} on a line): the\n" +
			"agent's context file ($PARLEY_CONTEXT), then the message; --prompt puts a\n" +
			"file before the first. The text of the\n" +
			"program's {\"type\":\"result\"} event is the agent's answer; a result that is an\n" +
			"error ends parley session, so that parley starts it again for the message.\n" +
			"A line of its output that is no JSON event is skipped and said on stderr, with\n" +
			"its number; a program that then ends before its result is an error naming it.\n" +
			"Its api_retry events (rate limited, overloaded) and a result's permission_denials\n" +
			"are said on stderr, one line each: parley status and parley log show them.\n" +
			"The program dies with parley session (on Linux, even by kill -9), and what it\n" +
			"left in its process group is killed when parley session returns.",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return usagef("name the program to run: parley session -- claude -p --input-format stream-json --output-format stream-json --verbose")
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			opts := sessionOptions{Program: args, Context: e.getenv("PARLEY_CONTEXT")}
			if p := c.String("prompt"); p != "" {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				opts.Prompt = string(data)
			}
			return runSession(ctx, opts, e.stdin, e.stdout, e.stderr)
		},
	}
}

// sessionOptions are what parley session runs: the program, the agent's
// context file (empty: none), and the text put before the first turn.
type sessionOptions struct {
	Program []string
	Context string
	Prompt  string
}

// runSession runs a program that speaks stream-json (one JSON event a
// line) for a session agent, which speaks parley's frames: each message
// read from in, up to its FrameEnd line, is written to the program as a
// user turn; the program's events are read up to its result, whose text
// is written to out as the answer, then the empty frame that says the
// session is done with the message. It returns when in ends (the
// program's stdin is closed and it is waited for), or with an error when
// the program fails or ends before its result.
func runSession(ctx context.Context, opts sessionOptions, in io.Reader, out, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, opts.Program[0], opts.Program[1:]...)
	// Its stdin is a pipe of our own, so that what it left unread there
	// is known once it has ended (pipe.Unread): a turn it died before
	// it read.
	fromUs, toProg, err := os.Pipe()
	if err != nil {
		return err
	}
	defer toProg.Close()
	cmd.Stdin = fromUs
	// Its stdout is a pipe of our own, not cmd's, so that reading it
	// is not cut short by Wait; once the program has exited, what it
	// printed is read up to a deadline: a process it started that keeps
	// the pipe open does not keep parley session waiting.
	fromProg, toUs, err := os.Pipe()
	if err != nil {
		fromUs.Close()
		return err
	}
	defer fromProg.Close()
	cmd.Stdout = toUs
	cmd.WaitDelay = exitGrace
	// Its stderr is passed on, its last line of the turn kept, said
	// when it ends before its result. It is read from a pipe of our
	// own, caught up with at each answer and before each turn, so that
	// a line it wrote before one answer is never said as the last line
	// of the next turn.
	progErr := &lastLine{w: stderr}
	errFrom, errTo, err := os.Pipe()
	if err != nil {
		fromUs.Close()
		toUs.Close()
		return err
	}
	defer errFrom.Close()
	cmd.Stderr = errTo
	var pipes sync.WaitGroup
	defer pipes.Wait()
	errPipe := pipe.Read(&pipes, errFrom, progErr)
	// The program runs in a process group of its own, which is ended
	// when parley session returns, however it returns: what the program
	// started and left behind goes with it. On Linux the kernel kills the
	// program when parley session dies, however it dies (kill -9 of
	// parley session, or of the runner, which kills parley session so):
	// before, claude ran on, orphaned, until a next runner found it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	runner.DieWithParent(cmd.SysProcAttr)
	// The program is started, and waited for, from one goroutine locked
	// to its OS thread, as the runner starts its programs: the kernel
	// sends the parent-death signal when the thread that started the
	// program ends, not the process, and the Go runtime ends a thread
	// that a goroutine leaves locked; locked from before the start until
	// the program is reaped, the thread is no other goroutine's to end.
	started := make(chan error, 1)
	exited := make(chan struct{})
	var werr error
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		werr = cmd.Wait()
		// Exited: a turn being written waits no more, though a process
		// it started may hold its stdin open and read nothing (the
		// pipe stays open: what was left unread in it is asked later).
		toProg.SetWriteDeadline(time.Now())
		deadline := time.Now().Add(exitGrace)
		fromProg.SetReadDeadline(deadline)
		errPipe.StopAt(deadline)
		close(exited)
	}()
	err = <-started
	fromUs.Close()
	toUs.Close()
	errTo.Close()
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer endGroup(cmd.Process.Pid)
	sc := bufio.NewScanner(fromProg)
	sc.Buffer(nil, 64<<20)
	events := &eventReader{sc: sc, program: opts.Program[0], stderr: ownLines{progErr}}
	frames := bufio.NewReader(in)
	fail := func(err error) error {
		toProg.Close()
		cmd.Process.Kill()
		<-exited
		return err
	}
	// ended is the error of a program whose output ended before its
	// result (err, from events.result): once it has exited (given
	// exitGrace, then killed), with how it ended and its last line on
	// stderr, which say why far better than what it printed.
	sent := 0 // the bytes of the turn written to it
	ended := func(err error) error {
		if n, ok := pipe.Unread(toProg); ok && sent > 0 && n >= sent {
			progErr.died() // the turn waits unread: it died before
		}
		toProg.Close()
		select {
		case <-exited:
		case <-time.After(exitGrace):
			cmd.Process.Kill()
			<-exited
		}
		var ee *endedError
		if !errors.As(err, &ee) {
			return fmt.Errorf("session: %s: %w", opts.Program[0], err)
		}
		var why []string
		var xe *exec.ExitError
		if errors.As(werr, &xe) {
			if xe.Exited() {
				why = append(why, fmt.Sprintf("exit code %d", xe.ExitCode()))
			} else {
				why = append(why, xe.String()) // signal: killed
			}
		}
		pipes.Wait() // its stderr, read to its end
		if l := progErr.last(); l != "" {
			why = append(why, fmt.Sprintf("its last line on stderr: %q", l))
		}
		msg := "it ended before its result"
		if len(why) > 0 {
			msg += " (" + strings.Join(why, "; ") + ")"
		}
		if ee.strays != "" {
			msg += "; " + ee.strays
		}
		return fmt.Errorf("session: %s: %s", opts.Program[0], msg)
	}
	for {
		msg, err := readFrame(frames)
		if errors.Is(err, io.EOF) {
			toProg.Close()
			if <-exited; werr != nil {
				return fmt.Errorf("session: %s: %w", opts.Program[0], werr)
			}
			return nil
		}
		if err != nil {
			return fail(err)
		}
		// "Its last line on stderr" is no line it wrote before its
		// answer to the turn before (a warning, said as the cause of a
		// program that exited silently in this turn), but one it wrote
		// since, or, once it has died meanwhile, since it was given
		// the turn before: it said why as it died (fatal: OAuth token
		// expired; exiting), maybe before its answer was read.
		errPipe.CatchUp()
		select {
		case <-exited:
		default:
			progErr.begin()
		}
		var content strings.Builder
		if opts.Prompt != "" {
			content.WriteString(strings.TrimRight(opts.Prompt, "\n") + "\n\n")
			opts.Prompt = "" // the program keeps its conversation
		}
		if opts.Context != "" {
			if data, err := os.ReadFile(opts.Context); err == nil {
				content.Write(data)
				content.WriteString("\n# The message to answer\n\n")
			}
		}
		content.WriteString(msg)
		turn := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content.String()}}
		line, err := json.Marshal(turn)
		if err != nil {
			return fail(err)
		}
		sent = len(line) + 1
		if _, err := toProg.Write(append(line, '\n')); err != nil {
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded) {
				// It ended before it read the turn (or exited, a process
				// it started holding its stdin): said as any end
				// before the result is, with what it printed, and all
				// it wrote on stderr since it was given the turn
				// before.
				progErr.died()
				if _, rerr := events.result(); rerr != nil {
					return ended(rerr)
				}
			}
			return fail(fmt.Errorf("session: writing to %s: %w", opts.Program[0], err))
		}
		answer, err := events.result()
		if errors.As(err, new(*endedError)) {
			return ended(err)
		}
		if err != nil {
			return fail(fmt.Errorf("session: %s: %w", opts.Program[0], err))
		}
		// What it wrote on stderr in the turn is passed on before its
		// answer, so that the runner reads it as of this message; what
		// it writes from here on is written after its answer.
		errPipe.CatchUp()
		progErr.mark()
		answer = strings.TrimRight(answer, "\n")
		var b strings.Builder
		if answer != "" {
			b.WriteString(answer + "\n" + runner.FrameEnd + "\n")
		}
		b.WriteString(runner.FrameEnd + "\n")
		if _, err := io.WriteString(out, b.String()); err != nil {
			return fail(err)
		}
	}
}

// readFrame reads one message of a session's input: the lines up to one
// that holds only FrameEnd. io.EOF when the input ends first with
// nothing read.
func readFrame(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSuffix(line, "\n") == runner.FrameEnd {
			return b.String(), nil
		}
		b.WriteString(line)
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}

// exitGrace is how long parley session goes on reading a program's
// output, and waiting for its stderr to close, once the program has
// exited: what it printed is read at once; only a process it started
// that keeps the pipes open is waited for, this long.
const exitGrace = time.Second

// eventReader reads a stream-json program's output: one JSON event a line.
type eventReader struct {
	sc      *bufio.Scanner
	program string    // the program's name, for what is said of a line
	stderr  io.Writer // where a line that is no event is told of, whole lines each write
	n       int       // lines read so far
	strays  int       // lines that are no event
	first   int       // the number of the first of them
	line    string    // that line, cut at maxQuoted
}

// maxQuoted is how much of a line that is no event is quoted.
const maxQuoted = 200

// result reads the program's events up to its result, and returns the
// result's text. A line that is no JSON event is skipped, and said on
// stderr (its number and the line, quoted); when the output then ends
// (the program exited), the error says so, naming the first such line,
// the likely cause: a result event printed across two lines.
func (ev *eventReader) result() (string, error) {
	for ev.sc.Scan() {
		ev.n++
		var e struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			IsError bool   `json:"is_error"`
			Result  string `json:"result"`
			// Denied are the tools the program was not allowed to
			// use in the turn.
			Denied []struct {
				Tool  string         `json:"tool_name"`
				Input map[string]any `json:"tool_input"`
			} `json:"permission_denials"`
		}
		if err := json.Unmarshal(ev.sc.Bytes(), &e); err != nil {
			line := ev.sc.Text()
			if len(line) > maxQuoted {
				line = line[:maxQuoted] + "..."
			}
			fmt.Fprintf(ev.stderr, "parley: warning: session: %s: line %d of its output is no JSON event, skipped: %q (%v)\n", ev.program, ev.n, line, err)
			if ev.strays++; ev.strays == 1 {
				ev.first, ev.line = ev.n, line
			}
			continue
		}
		if e.Type == "system" && e.Subtype == "api_retry" {
			// Its API refused a call for now (rate limited,
			// overloaded) and it tries again: said on stderr, which the
			// agent's stderr log keeps and from which parley status
			// says the agent waits on its API.
			fmt.Fprintln(ev.stderr, runner.APIRetryLine(ev.program, retrying(ev.sc.Bytes())))
			continue
		}
		if e.Type != "result" {
			continue
		}
		if len(e.Denied) > 0 {
			// Said on stderr, from which the journal's line of the
			// message handled says so (parley log): an answer asking
			// for a permission is no answer a pipeline can use.
			var what []string
			for _, d := range e.Denied {
				what = append(what, denial(d.Tool, d.Input))
			}
			fmt.Fprintln(ev.stderr, runner.DeniedLine(ev.program, strings.Join(what, ", ")))
		}
		if e.IsError || e.Subtype != "success" {
			// Claude Code says an API error (overloaded, rate
			// limited) with is_error and the subtype "success": the
			// subtype is said only when it says more than that.
			if e.Subtype == "success" || e.Subtype == "" {
				return "", fmt.Errorf("its result is an error: %s", e.Result)
			}
			return "", fmt.Errorf("its result is an error (%s): %s", e.Subtype, e.Result)
		}
		if strings.TrimSpace(e.Result) == "" {
			// Said here, where the session's stderr is kept; the run's
			// log and the journal say the message had no answer.
			fmt.Fprintf(ev.stderr, "parley: warning: session: %s: its result has no text: an empty answer (nothing is sent)\n", ev.program)
		}
		return e.Result, nil
	}
	// Its output ended (EOF), or the program exited and what it printed
	// before was read (the deadline set then).
	if err := ev.sc.Err(); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return "", err
	}
	switch {
	case ev.strays == 1:
		return "", &endedError{strays: fmt.Sprintf("line %d of its output is no JSON event: %q", ev.first, ev.line)}
	case ev.strays > 1:
		return "", &endedError{strays: fmt.Sprintf("%d lines of its output are no JSON event, the first line %d: %q", ev.strays, ev.first, ev.line)}
	}
	return "", &endedError{}
}

// denial names a tool the program was denied, with what it would have
// run or touched, when its input says (a command, a file, a URL):
// "Bash (go test ./...)".
func denial(tool string, input map[string]any) string {
	if tool == "" {
		tool = "a tool"
	}
	for _, k := range []string{"command", "file_path", "path", "url", "pattern"} {
		if v, ok := input[k].(string); ok && v != "" {
			return tool + " (" + oneLine(v, 80) + ")"
		}
	}
	return oneLine(tool, 80)
}

// oneLine is text on one line, its control characters escaped, cut at
// max characters.
func oneLine(text string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.Join(strings.Fields(text), " ") {
		if n == max {
			b.WriteString("...")
			break
		}
		n++
		if r == ' ' || unicode.IsGraphic(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// retrying says what an api_retry event says: the attempt, the wait
// before it and the error ("attempt 1 of 10, in 1s (429 rate_limit)"),
// as far as the event has them.
func retrying(event []byte) string {
	var e struct {
		Attempt     int             `json:"attempt"`
		MaxRetries  int             `json:"max_retries"`
		DelayMS     int64           `json:"retry_delay_ms"`
		ErrorStatus int             `json:"error_status"`
		Error       json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(event, &e) // read as an event already
	var b strings.Builder
	b.WriteString("attempt")
	if e.Attempt > 0 {
		fmt.Fprintf(&b, " %d", e.Attempt)
	}
	if e.MaxRetries > 0 {
		fmt.Fprintf(&b, " of %d", e.MaxRetries)
	}
	if e.DelayMS > 0 {
		fmt.Fprintf(&b, ", in %v", (time.Duration(e.DelayMS) * time.Millisecond).Round(time.Millisecond))
	}
	var why []string
	if e.ErrorStatus > 0 {
		why = append(why, strconv.Itoa(e.ErrorStatus))
	}
	var text string
	if json.Unmarshal(e.Error, &text) != nil && len(e.Error) > 0 && string(e.Error) != "null" {
		text = string(e.Error) // not a string: as it was written
	}
	// One line, its control characters escaped (\x1b[0m).
	if text = oneLine(text, maxQuoted); text != "" {
		why = append(why, text)
	}
	if len(why) > 0 {
		b.WriteString(" (" + strings.Join(why, " ") + ")")
	}
	return b.String()
}

// endedError is a program's output ending before its result; strays
// says what of it was no JSON event, if any (the likely cause: a result
// printed across two lines).
type endedError struct{ strays string }

func (e *endedError) Error() string {
	if e.strays == "" {
		return "it ended before its result"
	}
	return "it ended before its result; " + e.strays
}

// lastLine passes what a program writes to stderr on, keeping its last
// line that is not blank (cut at maxQuoted), for the error when the
// program ends early. It is read once the program has exited.
type lastLine struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte // the line being written
	done string // the last whole line of the turn that is not blank
	mid  bool   // what was written to w last ended mid-line
	// after is the last whole line since the mark (the program's last
	// answer), earlier the turn before's line, forgotten by begin.
	after, earlier string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.add(rest)
			break
		}
		l.add(rest[:i])
		l.end()
		rest = rest[i+1:]
	}
	if len(p) > 0 {
		l.mid = p[len(p)-1] != '\n'
	}
	return l.w.Write(p)
}

// ownLines writes parley session's own lines (lines of whole lines) on
// the stderr a lastLine passes the program's on, under its lock, and
// after a newline when the program's last write ended mid-line: a line
// of parley session's is never joined to one of the program's, and the
// runner, which reads the lines by their start (runner.DeniedLine,
// runner.APIRetryLine), misses none.
type ownLines struct{ l *lastLine }

func (o ownLines) Write(p []byte) (int, error) {
	o.l.mu.Lock()
	defer o.l.mu.Unlock()
	if o.l.mid {
		if _, err := io.WriteString(o.l.w, "\n"); err != nil {
			return 0, err
		}
		o.l.mid = false
	}
	return o.l.w.Write(p)
}

func (l *lastLine) add(b []byte) {
	if room := maxQuoted + 1 - len(l.line); room > 0 {
		l.line = append(l.line, b[:min(len(b), room)]...)
	}
}

func (l *lastLine) end() {
	if s := strings.TrimSpace(string(l.line)); s != "" {
		if len(s) > maxQuoted {
			s = s[:maxQuoted] + "..."
		}
		l.done, l.after = s, s
	}
	l.line = l.line[:0]
}

// mark says the program answered: begin forgets the lines written
// before.
func (l *lastLine) mark() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.after = ""
}

// begin begins a turn: the lines written before the mark are
// forgotten, died brings them back.
func (l *lastLine) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.earlier, l.done = l.done, l.after
}

// died says the program died before it read the turn: all it wrote
// since it was given the turn before is this turn's.
func (l *lastLine) died() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == "" {
		l.done = l.earlier
	}
}

// last returns the last line written that is not blank, an unfinished
// one included.
func (l *lastLine) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(strings.TrimSpace(string(l.line))) > 0 {
		l.end()
	}
	return l.done
}

// endGroup kills the process group of the program parley session ran,
// led by pid: what the program started and left running when it ended,
// or the program itself when parley session returns before it ended.
func endGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL) // it may be gone already
}
