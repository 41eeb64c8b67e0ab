package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts run parley some 1,700 times. Started as a process, each
// costs 50-100 ms of CPU before it does anything (loading a 75 MB test
// binary, some 1,500 page faults, the packages' init): most of the time
// `go test` took. So `parley ARGS` in a script (the parley command below)
// runs the command line in this process when that gives the same result
// as running the program, and starts the program otherwise. `exec parley
// ARGS` always starts the program: the scripts keep it where the program
// is what is tested (a standard input from `stdin`, a command in the
// background, an agent's or a terminal's view).

// inProcessCommands are the commands that run in-process in a script:
// ones that read and write files and print, and end. Not those that start
// programs (checkpoint and demo start agents, git, parley itself; compose
// and send start an editor as the program would), serve or wait for input
// (serve, play, mcp, session, bridge), or time things (bench). `run
// --until-idle` runs in-process too, though it starts programs, and so
// does `bridge --until-idle` (inWorkspace).
var inProcessCommands = []string{
	"answer", "approve", "campaign", "character", "compose", "completion",
	"__complete", "done", "export", "inbox", "init", "inventory",
	"journal", "log", "pipeline", "plan", "read", "reject", "reply", "retry",
	"roll", "routes", "send", "skills", "status", "stop", "tool", "usage",
	"validate", "version",
}

// inProcessEnv are the environment variables parley reads from the
// process, not through its commands' env (which, in-process, holds the
// script's): TZ, read once as the process starts, and the variables of
// flags, which urfave/cli reads. A command line runs in-process only when
// the script gives each the value this process has (TestMain sets TZ=UTC,
// as the scripts do).
var inProcessEnv = []string{"TZ", "PARLEY_WORKSPACE", "PARLEY_TOKEN"}

// scriptDir is this package's directory: tests that run beside the
// scripts read testdata through it, not through the working directory,
// which a script's in-process command changes while it runs. (In a
// process started as parley it is not used, and may be "": its working
// directory may be gone.)
var scriptDir, _ = os.Getwd()

// testdataPath is a path under this package's testdata/.
func testdataPath(elem ...string) string {
	return filepath.Join(append([]string{scriptDir, "testdata"}, elem...)...)
}

// scriptEnviron returns script ts's environment as the programs it
// starts get it: testscript keeps it in the script's unexported env
// field, read here through reflect. It returns nil when the field is not
// there (another version of testscript): the script's parley commands
// are then run as programs (TestScriptEnviron fails).
func scriptEnviron(ts *testscript.TestScript) []string {
	v := reflect.ValueOf(ts).Elem().FieldByName("env")
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.String {
		return nil
	}
	environ := make([]string, v.Len())
	for i := range environ {
		environ[i] = v.Index(i).String()
	}
	return environ
}

// An inProcessWay is how a command line runs in this process, if it does.
type inProcessWay int

const (
	asProgram   inProcessWay = iota // started as a program
	inDir                           // in-process, in the script's directory (runInDir)
	inWorkspace                     // in-process, given its workspace as -C (runInWorkspace)
)

// howInProcess says how parley's command line args, run in directory dir
// with variables getenv, runs in this process. For inWorkspace, it also
// returns the command line with the workspace given as an absolute -C.
func howInProcess(dir string, getenv func(string) string, args []string) (inProcessWay, []string) {
	for _, k := range inProcessEnv {
		if getenv(k) != os.Getenv(k) {
			return asProgram, nil
		}
	}
	// The command: the first argument that is no global flag.
	cmd, at, workspace := "", 0, ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-C" || a == "--workspace" {
			if i+1 < len(args) {
				workspace = args[i+1]
			}
			i++
			continue
		}
		if w, ok := strings.CutPrefix(a, "-C"); ok && len(w) > 0 {
			workspace = strings.TrimPrefix(w, "=")
			continue
		}
		if w, ok := strings.CutPrefix(a, "--workspace="); ok {
			workspace = w
			continue
		}
		if a == "--version" || a == "-v" {
			return inDir, nil
		}
		cmd, at = a, i
		break
	}
	for _, a := range args {
		switch a {
		case "--follow", "-f", "--":
			return asProgram, nil
		case "help", "--help", "-h":
			// urfave/cli's help command is one value it changes as it
			// sets up an app: a second app in the process shows other
			// help.
			return asProgram, nil
		}
	}
	if cmd == "run" || cmd == "bridge" {
		// `run --until-idle` routes and ends (`bridge --until-idle`
		// forwards and takes what waits). It starts its agents'
		// programs with the script's environment (runner.Options.
		// Environ), and opens its workspace by the absolute path: the
		// working directory is not its to change, as it runs beside
		// other command lines once it has parsed its own.
		rest := args[at+1:]
		if !slices.Contains(rest, "--until-idle") || slices.ContainsFunc(rest, func(a string) bool {
			return a == "-C" || strings.HasPrefix(a, "--workspace") || strings.HasPrefix(a, "--serve") || strings.HasPrefix(a, "--listen")
		}) {
			return asProgram, nil
		}
		root := filepath.Join(dir, workspace)
		if filepath.IsAbs(workspace) {
			root = workspace
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return asProgram, nil // its error names the -C as given
		}
		return inWorkspace, append([]string{"-C", root}, args[at:]...)
	}
	if !slices.Contains(inProcessCommands, cmd) {
		return asProgram, nil
	}
	return inDir, nil
}

// runScriptParley runs parley's command line args for script ts: in
// this process when howInProcess says so, else as a program (ts.Exec).
// In-process it returns what the command printed; as a program, ts keeps
// that. The exit code is 0 or the program's; a program that could not be
// run is an error.
func runScriptParley(ts *testscript.TestScript, args []string) (code int, stdout, stderr string, inProcess bool, err error) {
	environ := scriptEnviron(ts)
	way, withRoot := asProgram, []string(nil)
	if environ != nil {
		way, withRoot = howInProcess(ts.MkAbs("."), ts.Getenv, args)
	}
	var out, errOut strings.Builder
	switch way {
	case inDir:
		code, err = runInDir(ts.MkAbs("."), environ, append([]string{"parley"}, args...), &out, &errOut)
	case inWorkspace:
		code, err = runInWorkspace(environ, append([]string{"parley"}, withRoot...), &out, &errOut)
	default:
		var ee *exec.ExitError
		if err := ts.Exec("parley", args...); errors.As(err, &ee) {
			return ee.ExitCode(), "", "", false, nil
		} else if err != nil {
			return 0, "", "", false, err
		}
		return 0, "", "", false, nil
	}
	return code, out.String(), errOut.String(), true, err
}

// runInDir runs a command line in this process with dir as the working
// directory and environ as its environment, as `cd dir && parley ...`
// would: in-process commands are run one at a time (inProcess), and the
// working directory is this process's own for their time. A panic is
// returned as an error.
func runInDir(dir string, environ []string, args []string, stdout, stderr *strings.Builder) (code int, err error) {
	inProcess.Lock()
	defer inProcess.Unlock()
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	if err := os.Chdir(dir); err != nil {
		return 0, err
	}
	defer func() {
		if cerr := os.Chdir(wd); cerr != nil && err == nil {
			err = cerr
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return runWith(context.Background(), &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, vars: environ}, args), nil
}

// runInWorkspace runs a command line that names its workspace by its
// absolute path (-C) and reads no other path relative to the working
// directory (howInProcess's inWorkspace) in this process, with environ
// as its environment. It holds inProcess only while urfave/cli parses
// the command line: the command then runs beside others. A panic is
// returned as an error.
func runInWorkspace(environ []string, args []string, stdout, stderr *strings.Builder) (code int, err error) {
	inProcess.Lock()
	parsed := sync.OnceFunc(inProcess.Unlock)
	defer parsed()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return runWith(context.Background(), &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, vars: environ, parsed: parsed}, args), nil
}

// parley ARGS: run parley, as `exec parley ARGS` does, in-process when
// that gives the same result (inProcessOK). With !, it must fail.
func cmdParley(ts *testscript.TestScript, neg bool, args []string) {
	code, stdout, stderr, inProcess, err := runScriptParley(ts, args)
	if err != nil {
		ts.Fatalf("parley: %v", err)
	}
	if inProcess {
		fmt.Fprint(ts.Stdout(), stdout)
		fmt.Fprint(ts.Stderr(), stderr)
	}
	switch {
	case code == 0 && neg:
		ts.Fatalf("unexpected command success")
	case code != 0 && !neg:
		ts.Fatalf("unexpected command failure (exit %d)\n[stdout]\n%s[stderr]\n%s", code, stdout, stderr)
	}
}

// TestInProcessAgrees runs command lines of each kind the scripts run
// in-process both ways, twice over in-process (what one command leaves
// in the process must not change the next), and wants the same exit
// code and output as the program gives.
func TestInProcessAgrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	program := func(args ...string) (int, string, string) {
		cmd := exec.Command("parley", args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader("")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		var ee *exec.ExitError
		code := 0
		if err := cmd.Run(); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := program("init", "ws", "--agent", "gm", "--agent", "aria:player", "--skill", "dnd-team"); code != 0 {
		t.Fatalf("parley init: %s", errOut)
	}
	if code, _, errOut := program("-C", "ws", "send", "--from", "gm", "--to", "aria", "--body", "The door creaks."); code != 0 {
		t.Fatalf("parley send: %s", errOut)
	}
	if code, _, errOut := program("-C", "ws", "run", "--until-idle"); code != 0 {
		t.Fatalf("parley run: %s", errOut)
	}
	lines := [][]string{
		{"-C", "ws", "status"},
		{"-C", "ws", "inbox", "aria", "--state", "all"},
		{"-C", "ws", "log"},
		{"-C", "ws", "validate", "--all"},
		{"-C", "ws", "send", "--from", "gm", "--to", "nobody", "--body", "x"},
		{"-C", "ws", "send", "--from", "gm", "--to", "aria", "--tpye", "x", "--body", "x"},
		{"-C", "ws", "skills", "list"},
		{"-C", "ws", "routes", "explain", "--from", "gm", "--to", "aria"},
		{"-C", "ws", "__complete", "send", "--to", ""},
		{"-C", "ws", "campaign", "list"},
		{"-C", "ws", "run", "--until-idle"},
		{"-C", "nowhere", "status"},
		{"roll", "1d1+2"},
		{"version"},
	}
	type result struct {
		code        int
		out, errOut string
	}
	// "just now" and "1s ago" are the same time, a second apart.
	ago := regexp.MustCompile(`\((just now|\d+s ago)\)`)
	norm := func(code int, out, errOut string) result {
		return result{code, ago.ReplaceAllString(out, "(ago)"), ago.ReplaceAllString(errOut, "(ago)")}
	}
	want := map[int]result{}
	for i, args := range lines {
		code, out, errOut := program(args...)
		want[i] = norm(code, out, errOut)
	}
	for round := 1; round <= 2; round++ {
		for i, args := range lines {
			var out, errOut strings.Builder
			var code int
			var err error
			switch way, withRoot := howInProcess(dir, os.Getenv, args); way {
			case inDir:
				code, err = runInDir(dir, os.Environ(), append([]string{"parley"}, args...), &out, &errOut)
			case inWorkspace:
				code, err = runInWorkspace(os.Environ(), append([]string{"parley"}, withRoot...), &out, &errOut)
			default:
				t.Fatalf("parley %s does not run in-process", strings.Join(args, " "))
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := norm(code, out.String(), errOut.String()); got != want[i] {
				t.Errorf("round %d: parley %s in-process: exit %d\n%s%s\nas a program: exit %d\n%s%s", round, strings.Join(args, " "), got.code, got.out, got.errOut, want[i].code, want[i].out, want[i].errOut)
			}
		}
	}
}

// TestScriptEnviron: scriptEnviron reads a script's environment, with
// what its env lines set, so that the command lines the scripts run
// in-process see what a program they started would (and do run
// in-process: without it, every one is started as a program).
func TestScriptEnviron(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "environ.txtar")
	if err := os.WriteFile(script, []byte("env ONLY_IN_SCRIPT=yes\nenv ONLY_IN_SCRIPT=twice\nenviron\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Files: []string{script},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"environ": func(ts *testscript.TestScript, neg bool, args []string) {
				environ := scriptEnviron(ts)
				if environ == nil {
					ts.Fatalf("scriptEnviron cannot read the script's environment: testscript keeps it elsewhere now")
				}
				got := (&env{vars: environ}).getenv
				if got("ONLY_IN_SCRIPT") != "twice" || got("WORK") != ts.Getenv("WORK") || got("HOME") != ts.Getenv("HOME") {
					ts.Fatalf("scriptEnviron = %q, want the script's variables", environ)
				}
			},
		},
	})
}
