package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
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
// programs (run, checkpoint and demo start agents, git, parley itself;
// compose and send start an editor as the program would), serve or wait
// for input (serve, play, mcp, session, bridge), or time things (bench).
var inProcessCommands = []string{
	"answer", "approve", "campaign", "character", "compose", "completion",
	"__complete", "done", "export", "inbox", "init", "inventory",
	"journal", "log", "pipeline", "plan", "read", "reject", "reply", "retry",
	"roll", "routes", "send", "skills", "status", "stop", "tool", "usage",
	"validate", "version",
}

// inProcessEnv are the environment variables parley reads from the
// process, not through its commands' env (which, in-process, reads the
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

// inProcessOK reports whether parley's command line args, in script ts,
// runs in-process.
func inProcessOK(ts *testscript.TestScript, args []string) bool {
	for _, k := range inProcessEnv {
		if ts.Getenv(k) != os.Getenv(k) {
			return false
		}
	}
	// The command: the first argument that is no global flag.
	cmd := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-C" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-C") && len(a) > 2 {
			continue
		}
		if a == "--version" || a == "-v" {
			return true
		}
		cmd = a
		break
	}
	if !slices.Contains(inProcessCommands, cmd) {
		return false
	}
	for _, a := range args {
		switch a {
		case "--follow", "-f", "--":
			return false
		case "help", "--help", "-h":
			// urfave/cli's help command is one value it changes as it
			// sets up an app: a second app in the process shows other
			// help.
			return false
		}
	}
	return true
}

// runScriptParley runs parley's command line args for script ts: in
// this process when inProcessOK, else as a program (ts.Exec). In-process
// it returns what the command printed; as a program, ts keeps that. The
// exit code is 0 or the program's; a program that could not be run is an
// error.
func runScriptParley(ts *testscript.TestScript, args []string) (code int, stdout, stderr string, inProcess bool, err error) {
	if !inProcessOK(ts, args) {
		var ee *exec.ExitError
		if err := ts.Exec("parley", args...); errors.As(err, &ee) {
			return ee.ExitCode(), "", "", false, nil
		} else if err != nil {
			return 0, "", "", false, err
		}
		return 0, "", "", false, nil
	}
	var out, errOut strings.Builder
	code, err = runInDir(ts.MkAbs("."), ts.Getenv, append([]string{"parley"}, args...), &out, &errOut)
	return code, out.String(), errOut.String(), true, err
}

// runInDir runs a command line in this process with dir as the working
// directory and vars as its environment variables, as `cd dir && parley
// ...` would: in-process commands are run one at a time (inProcess), and
// the working directory is this process's own for their time. A panic is
// returned as an error.
func runInDir(dir string, vars func(string) string, args []string, stdout, stderr *strings.Builder) (code int, err error) {
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
	return runWith(context.Background(), &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, vars: vars}, args), nil
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
			code, err := runInDir(dir, os.Getenv, append([]string{"parley"}, args...), &out, &errOut)
			if err != nil {
				t.Fatal(err)
			}
			if got := norm(code, out.String(), errOut.String()); got != want[i] {
				t.Errorf("round %d: parley %s in-process: exit %d\n%s%s\nas a program: exit %d\n%s%s", round, strings.Join(args, " "), got.code, got.out, got.errOut, want[i].code, want[i].out, want[i].errOut)
			}
		}
	}
}
