// Command parley runs file-based agent workflows: agents exchange messages
// as markdown files in per-agent mailboxes, and `parley run` routes them.
// This package owns everything a user sees: flags, output, exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/bridge"
	"github.com/parley-dev/parley/runner/workspace"
)

// Exit codes. They are part of parley's interface: scripts branch on them.
const (
	exitOK          = 0
	exitFailure     = 1 // the command failed, or found problems (validate, a bad message)
	exitUsage       = 2 // wrong flags or arguments
	exitLocked      = 3 // another runner holds the workspace
	exitNoWorkspace = 4 // no parley.yaml here or above, or -C names no directory
	exitRefused     = 5 // parley run (or bridge) --until-idle: a file was refused or a message given up during the run, or an agent stopped
)

func main() {
	os.Exit(parleyMain())
}

// parleyMain runs the command line and returns the exit code.
func parleyMain() int {
	return run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)
}

// interruptible returns a context that ends on SIGINT or SIGTERM, for the
// commands that run until interrupted (run, log --follow, demo, bench) and
// end cleanly then. Other commands keep the default: a signal stops them.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// run is parley's main with its inputs and outputs passed in, so tests can
// drive it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// runWith is run with the commands' environment given.
func runWith(ctx context.Context, env *env, args []string) int {
	stderr := env.stderr
	app := newApp(env)
	args, err := commandLine(app, args)
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if env.usage != nil && err == nil {
		err = env.usage
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if !errors.Is(err, errSilent) {
		// An error may name a file or quote what a person or a program
		// wrote: escaped, line by line, like everything parley prints.
		// An error of several lines (every problem of a file) reads
		// as one: the lines after the first indented under it.
		fmt.Fprintf(stderr, "parley: %s\n", indentLines(printableLines(err.Error())))
		if h := hint(err); h != "" {
			fmt.Fprintf(stderr, "parley: hint: %s\n", indentLines(printableLines(h)))
		}
	}
	return code
}

// env carries the process's streams and environment variables to the
// commands.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	vars           []string // the environment, KEY=VALUE (the last of a key counts); nil: the process's (os.Environ)
	usage          error    // set when the command line was wrong
	// parsed, when set, is called as a command starts, its command line
	// parsed: a test running command lines in this process holds a lock
	// while urfave/cli parses one (it writes to flags shared by every
	// command line), and lets the next one go then.
	parsed func()
}

// quiet returns the environment with standard output discarded, for a
// command run on another's behalf (the demos send as `parley send` does).
func (e *env) quiet() *env {
	return &env{stdin: e.stdin, stdout: io.Discard, stderr: e.stderr, vars: e.vars}
}

// silent is e with neither stdout nor stderr: a demo's scripted person
// runs commands whose errors it returns, and whose notes for a person at
// a shell (no runner yet: the demo starts it next) would mislead.
func (e *env) silent() *env {
	return &env{stdin: e.stdin, stdout: io.Discard, stderr: io.Discard, vars: e.vars}
}

// getenv returns the value of the environment variable key, as the
// commands see it. (urfave/cli reads PARLEY_WORKSPACE and PARLEY_TOKEN,
// the variables of flags, from the process.)
func (e *env) getenv(key string) string {
	if e.vars == nil {
		return os.Getenv(key)
	}
	for i := len(e.vars) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.vars[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// environ returns the environment the programs parley starts get (the
// agents', git).
func (e *env) environ() []string {
	if e.vars == nil {
		return os.Environ()
	}
	return e.vars
}

// logger returns the logger for library code, writing to stderr: for
// a person when stderr is a terminal, in slog's text format otherwise.
func (e *env) logger(level slog.Level) *slog.Logger {
	if isTerminal(e.stderr) {
		return slog.New(newConsoleHandler(e.stderr, level))
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

// usageError marks an error in the command line.
type usageError struct {
	err  error
	hint string // what to do instead, when the error alone does not say
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{err: fmt.Errorf(format, args...)}
}

// hintedError is an error with advice for the person who typed the
// command; it exits as the error it wraps does.
type hintedError struct {
	err  error
	hint string
}

func (e hintedError) Error() string { return e.err.Error() }
func (e hintedError) Unwrap() error { return e.err }

// errSilent is returned by commands that have already said what went wrong
// (validate's list of problems) and only need the exit code.
var errSilent = errors.New("failed")

// exitCode maps an error to parley's exit code, in one place.
func exitCode(err error) int {
	var ue usageError
	var le *runner.LockedError
	var re *refusedError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &le), errors.Is(err, bridge.ErrLocked):
		return exitLocked
	case errors.Is(err, workspace.ErrNoWorkspace), errors.As(err, new(noDirError)), errors.As(err, new(*workspace.MissingConfigError)):
		return exitNoWorkspace
	case errors.As(err, &re), errors.As(err, new(*bridgeRefusedError)):
		return exitRefused
	}
	return exitFailure
}

// hint returns advice for errors a user can fix, where the error alone
// does not say what to do.
func hint(err error) string {
	var le *runner.LockedError
	var ue usageError
	var he hintedError
	switch {
	case errors.As(err, &he):
		return he.hint
	case errors.As(err, &le) && le.Seat:
		return "a `parley play` seat routes this table: `parley run` asks it for the table and waits 30s, and it was not handed over (its programs still answering, the wait stopped, or another run asking): try again, or leave the seat; `parley status` shows what the table does"
	case errors.As(err, &le):
		return "one runner per workspace (a `parley run`, or a `parley play` seat routing its table); stop the other one, or use `parley status` to watch it work"
	case errors.Is(err, bridge.ErrLocked):
		return "one bridge per workspace: `parley run` runs it when parley.yaml has bridge:; `parley status` shows it"
	case errors.Is(err, workspace.ErrNoWorkspace):
		return "create one with `parley init DIR --agent NAME...`, or point at one with -C DIR"
	case errors.As(err, new(*refusedError)):
		var re *refusedError
		errors.As(err, &re)
		if !re.stats.Refused() {
			// Each file left says why it waits, and what lets it go (an
			// editor's, a link, a mailbox of no agent); a built-in agent
			// that could not start says why in its note.
			var hints []string
			if len(re.stats.NotStarted) > 0 {
				hints = append(hints, "a built-in agent that could not start still handles what it is sent: mend what stopped it and run again")
			}
			if re.stats.Left > 0 {
				hints = append(hints, "each file left says why it waits, and what lets it go")
			}
			byDriver, shutDown := false, false
			for _, a := range re.stats.Stopped {
				byDriver = byDriver || !a.ShutDown
				shutDown = shutDown || a.ShutDown && a.Waiting > 0
			}
			if byDriver {
				hints = append(hints, "a stopped agent's messages wait for the next `parley run`: mend what stopped it (said above, and by `parley status`) first")
			}
			if shutDown {
				hints = append(hints, "an agent that approved its shutdown is started again by the next `parley run`, which hands it what waits in its inbox")
			}
			return strings.Join(append(hints, "`parley status` shows it all"), "; ")
		}
		hint := "`parley status` lists them; `parley log --outcome rejected,dead,loop` says when"
		if re.pipeline && re.stats.Dead > 0 {
			// The orchestrator asks a person about what it sent that
			// was given up: the escalation is where to decide.
			hint = "`parley pipeline` shows each message given up and the escalation about it, with the `parley reply ID --field decision=...` that answers it; " + hint
		}
		if re.stats.Rejected > 0 {
			// parley retry, not a move by hand: a file refused as
			// routed already (named as one sent) is refused again when
			// moved back; retry puts it back under a name of its own.
			hint += "; fix a rejected file, then `parley retry FILE` puts it back into its outbox"
		}
		if re.stats.RefusedInPlace > 0 {
			hint += "; put a copy of its own in place of a link (its NAME.reason gives the command) and parley routes it"
		}
		if re.stats.Dead > 0 {
			hint += "; `parley retry ID` hands a dead letter to its agent again"
		}
		return hint
	case errors.As(err, new(*bridgeRefusedError)):
		return "`parley status` shows what the bridge refused and where it is kept; `parley log --outcome bounced` says why"
	case errors.As(err, &ue):
		return ue.hint
	}
	return ""
}
