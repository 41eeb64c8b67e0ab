package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/internal/memtmp"
	"github.com/parley-dev/parley/internal/standin"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/sandbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// This binary, started as parley (from the directory parleyOnPath
	// puts on PATH), is parley. testscript.Main would do the same for a
	// command it is given, but would also make `parley` in a script
	// always start the program, and the scripts' parley command runs in
	// this process where it can (inprocess_test.go).
	if filepath.Base(os.Args[0]) == "parley" {
		os.Exit(parleyMain())
	}
	raceExitAtOnce()
	runMoreAtOnce()
	testscript.Main(withParley{m}, map[string]func(){
		"claude": func() { os.Exit(claudeStandin()) },
		"codex":  func() { os.Exit(codexStandin()) },
	})
}

// parleyOnPath puts this binary on PATH as parley, for `exec parley` in
// the scripts, the programs they run and the tests that start parley:
// a hard link (or a copy) named parley, in a new directory put first on
// PATH, so that os.Executable names parley too (the demo and the benches
// start it again). It returns the directory, to remove at the end.
func parleyOnPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "parley-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "parley")
	if err := os.Link(self, bin); err != nil {
		data, err := os.ReadFile(self)
		if err != nil {
			return dir, err
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			return dir, err
		}
	}
	parleyBin = bin
	return dir, os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// parleyProgram is parley as a program, for the tests that run what a
// user runs (in a terminal, a pipe, an MCP client): this binary, started
// under the name parley (parleyOnPath), is parley's main and nothing else.
func parleyProgram(t *testing.T) string {
	t.Helper()
	if parleyBin == "" {
		t.Fatal("parley is not on PATH: TestMain did not run")
	}
	return parleyBin
}

// parleyBin is the parley parleyOnPath made.
var parleyBin string

// withParley runs the tests with parley on PATH (parleyOnPath), and
// removes it at the end.
type withParley struct{ m *testing.M }

func (r withParley) Run() int {
	// The scripts run with TZ=UTC; so do the tests, for the command lines
	// the scripts run in-process (inProcessOK). (Run is not called in the
	// processes testscript starts as parley: they keep the script's TZ.)
	os.Setenv("TZ", "UTC")
	dir, err := parleyOnPath()
	if dir != "" {
		defer os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "putting parley on PATH:", err)
		return 1
	}
	// The workspaces the tests make, in memory where it can (a hard link
	// of this binary cannot go there: parleyOnPath comes first).
	defer memtmp.Use()()
	return r.m.Run()
}

// inProcess is held while a test runs a command line in this process
// (runInProcess). urfave/cli writes to flags that live in package
// variables each time it parses a command line (its HelpFlag, and our
// jsonFlag and the like), so two command lines parsed at once by tests
// running in parallel would race; a process of parley's own runs one.
var inProcess sync.Mutex

// runInProcess is run, for tests that may run in parallel with others that
// run command lines in-process too.
func runInProcess(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runInProcessWith(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// runInProcessWith is runWith, for tests that may run in parallel with
// others that run command lines in-process too.
func runInProcessWith(ctx context.Context, e *env, args []string) int {
	inProcess.Lock()
	defer inProcess.Unlock()
	return runWith(ctx, e, args)
}

// examplesDir is the repository's examples/, for scripts that run one as
// it is.
var examplesDir, _ = filepath.Abs(filepath.Join("..", "..", "examples"))

// fixtures is where the shared conformance fixtures are, when they are.
var fixtures, _ = filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures"))

// TestScripts runs the command-line scripts in testdata/*.txtar. Each is
// headed by the behaviour it guards.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: testdataPath(),
		Setup: func(e *testscript.Env) error {
			e.Setenv("TZ", "UTC")
			e.Setenv("FIXTURES", fixtures)
			e.Setenv("EXAMPLES", examplesDir)
			return nil
		},
		// [fixtures]: the shared fixtures are checked out beside the
		// repository (in CI; not in a user's clone). [tz:NAME]: this
		// system knows the time zone NAME. [landlock]: the kernel offers
		// Landlock. [long]: the long end-to-end scripts run
		// (longtest.Enabled).
		Condition: func(cond string) (bool, error) {
			if zone, ok := strings.CutPrefix(cond, "tz:"); ok {
				_, err := time.LoadLocation(zone)
				return err == nil, nil
			}
			if cond == "long" {
				return longtest.Enabled(), nil
			}
			if cond == "landlock" {
				_, ok := sandbox.Available()
				return ok, nil
			}
			if cond != "fixtures" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := os.Stat(filepath.Join(fixtures, "campaigns", "the-rot-beneath"))
			return err == nil, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkfifo":     cmdMkfifo,
			"garbage":    cmdGarbage,
			"waitrunner": cmdWaitRunner,
			"waitfor":    cmdWaitFor,
			"count":      cmdCount,
			"exits":      cmdExits,
			"parley":     cmdParley,
			"standin":    cmdStandin,
			"freeport":   cmdFreePort,
		},
	})
}

// mkfifo PATH: make a named pipe.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// garbage PATH N: write N random bytes.
func cmdGarbage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: garbage PATH N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	b := make([]byte, n)
	rand.Read(b)
	b[0] = 0xff // never valid UTF-8
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// waitrunner DIR [seat|run]: wait (up to 30s) until a runner holds the
// workspace and has started: it has written its runner.json, after it
// set its agents' state afresh (until then .parley/agents.json is the
// last run's). With seat, the runner is a seat's (parley play: it names
// itself in .parley/seat); with run, it is not.
func cmdWaitRunner(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 || len(args) == 2 && args[1] != "seat" && args[1] != "run" {
		ts.Fatalf("usage: waitrunner DIR [seat|run]")
	}
	root := ts.MkAbs(args[0])
	ws := &workspace.Workspace{Root: root}
	started := func() bool {
		info := workspace.ReadRunnerInfo(root)
		if info == nil || len(args) == 1 {
			return info != nil
		}
		return info.PID == ws.RunnerPID() && ws.SeatHolds() == (args[1] == "seat")
	}
	deadline := time.Now().Add(30 * time.Second)
	for !started() {
		if time.Now().After(deadline) {
			ts.Fatalf("no runner took the workspace within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitfor PATH [REGEXP]: wait (up to 30s) until PATH exists and, with
// REGEXP, its content matches it; for a directory, until the names of its
// files, one per line, match. For what a running runner does.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor PATH [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		var err error
		re, err = regexp.Compile(args[1])
		ts.Check(err)
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		var data []byte
		err := error(nil)
		if des, derr := os.ReadDir(path); derr == nil {
			for _, de := range des {
				data = append(data, de.Name()+"\n"...)
			}
		} else {
			data, err = os.ReadFile(path)
		}
		if err == nil && (re == nil || re.Match(data)) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: not there, or not matching %v, within 30s; last: %s", args[0], re, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// count DIR N: DIR holds exactly N files (not counting .reason files).
func cmdCount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: count DIR N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	des, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	got := 0
	var names []string
	for _, de := range des {
		if filepath.Ext(de.Name()) != ".reason" {
			got++
			names = append(names, de.Name())
		}
	}
	if (got == want) == neg {
		ts.Fatalf("%s holds %d files %v, want %s%d", args[0], got, names, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// exits CODE PROGRAM [ARGS...]: run a program as exec does (its stdout and
// stderr are there for the next commands) and check its exit code. When
// it is not 0, stderr must say why in one line, "parley: ...", which hint
// lines ("parley: hint: ...") may follow.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	stderr := ""
	if args[1] == "parley" {
		code, stdout, errOut, inProcess, err := runScriptParley(ts, args[2:])
		if err != nil {
			ts.Fatalf("parley: %v", err)
		}
		got, stderr = code, ts.ReadFile("stderr")
		if inProcess {
			fmt.Fprint(ts.Stdout(), stdout)
			fmt.Fprint(ts.Stderr(), errOut)
			stderr = errOut
		}
	} else {
		var ee *exec.ExitError
		if err := ts.Exec(args[1], args[2:]...); errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		stderr = ts.ReadFile("stderr")
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d\n[stderr]\n%s", strings.Join(args[1:], " "), got, want, stderr)
	}
	if want == 0 {
		return
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "parley: ") || strings.HasPrefix(lines[0], "parley: hint: ") {
		ts.Fatalf("stderr starts %q, want one line \"parley: ...\"", lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "parley: hint: ") {
			ts.Fatalf("stderr has %q after the error, want one line (and hints)", l)
		}
	}
}

// cmdStandin starts an OpenAI-compatible stand-in endpoint for the rest
// of the script (package standin), replaying SCRIPT (one step as JSON a
// line), and writes its base URL where the FILES say $STANDIN (a
// parley.yaml: scripts do not expand files), or what -replace says (an
// example's URL, kept as the README writes it). Every request it gets is
// appended to standin.log, one JSON line each, for grep.
func cmdStandin(ts *testscript.TestScript, neg bool, args []string) {
	old := "$STANDIN"
	if len(args) > 2 && args[0] == "-replace" {
		old, args = args[1], args[2:]
	}
	if neg || len(args) < 1 {
		ts.Fatalf("usage: standin [-replace TEXT] SCRIPT [FILE...]")
	}
	steps, err := standin.ParseScript([]byte(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	s := standin.New(steps...)
	s.Log = ts.MkAbs("standin.log")
	ts.Defer(s.Close)
	ts.Setenv("STANDIN", s.URL())
	for _, f := range args[1:] {
		path := ts.MkAbs(f)
		data := strings.ReplaceAll(ts.ReadFile(f), old, s.URL())
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			ts.Fatalf("%v", err)
		}
	}
}

// cmdFreePort picks a TCP port free on 127.0.0.1, sets $NAME to it for
// the rest of the script, and writes it where the FILES say $NAME (a
// parley.yaml: scripts do not expand files). The port is below the
// kernel's ephemeral range, from which it hands out port 0 and the local
// end of every connection: a port taken from that range (the kernel's
// choice for port 0, let go of at once) was taken again by something else
// running before the script listened on it, once in CI. None is handed
// out twice in one test process.
// The ports freeport picks from: below Linux's default ephemeral range
// (32768-60999), above the ports services are commonly given.
const freePortLow, freePortHigh = 20000, 32768

// freePorts are the ports freeport gave in this process.
var freePorts = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: freeport NAME [FILE...]")
	}
	port := ""
	for try := 0; try < 1000 && port == ""; try++ {
		p := freePortLow + mrand.IntN(freePortHigh-freePortLow)
		freePorts.Lock()
		taken := freePorts.given[p]
		freePorts.Unlock()
		if taken {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ts.Check(l.Close())
		freePorts.Lock()
		freePorts.given[p] = true
		freePorts.Unlock()
		port = strconv.Itoa(p)
	}
	if port == "" {
		ts.Fatalf("freeport: no free port between %d and %d", freePortLow, freePortHigh)
	}
	ts.Setenv(args[0], port)
	for _, f := range args[1:] {
		data := strings.ReplaceAll(ts.ReadFile(f), "$"+args[0], port)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(data), 0o644))
	}
}

// newWorkspace writes cfg as the parley.yaml of dir (made if need be),
// opens the workspace and makes its mailboxes, as parley init does.
func newWorkspace(tb testing.TB, dir, cfg string) *workspace.Workspace {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, workspace.ConfigFile), []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ws.MakeMailboxes(); err != nil {
		tb.Fatal(err)
	}
	return ws
}

// TestLockedHint: a run refused because a seat did not hand the table
// over in time is told so, not that another runner must be stopped.
func TestLockedHint(t *testing.T) {
	if h := hint(&runner.LockedError{PID: 42, Seat: true}); !strings.Contains(h, "it was not handed over") {
		t.Errorf("hint for a seat that kept the table = %q", h)
	}
	if h := hint(&runner.LockedError{PID: 42}); !strings.Contains(h, "one runner per workspace") {
		t.Errorf("hint for another runner = %q", h)
	}
}
