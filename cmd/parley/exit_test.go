package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestExitCodes checks the exit codes scripts branch on.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"ok", []string{"-C", ws.Root, "status"}, exitOK},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"unknown flag", []string{"-C", ws.Root, "status", "--bogus"}, exitUsage},
		{"missing --from", []string{"-C", ws.Root, "send", "--to", "bob", "--body", "x"}, exitUsage},
		{"unknown sender", []string{"-C", ws.Root, "send", "--from", "zed", "--to", "bob", "--body", "x"}, exitUsage},
		{"refused: unknown recipient", []string{"-C", ws.Root, "send", "--from", "alice", "--to", "zed", "--body", "x"}, exitFailure},
		{"extra argument", []string{"-C", ws.Root, "status", "now"}, exitUsage},
		{"no workspace", []string{"-C", empty, "status"}, exitNoWorkspace},
		{"failure", []string{"read", "/nonexistent/message.md"}, exitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := runInProcess(context.Background(), append([]string{"parley"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if got != tt.want {
				t.Errorf("parley %s = exit %d, want %d; stderr:\n%s", strings.Join(tt.args, " "), got, tt.want, errOut.String())
			}
			if got != exitOK && !strings.HasPrefix(errOut.String(), "parley: ") {
				t.Errorf("stderr = %q, want a line starting with \"parley: \"", errOut.String())
			}
		})
	}

	t.Run("refused during a run", func(t *testing.T) {
		ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
		if err != nil {
			t.Fatal(err)
		}
		bad := ws.Mailbox("alice").Path(mailbox.Outbox, "bad.md")
		if err := os.WriteFile(bad, []byte("---\nto: zed\n---\nhi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if got := runInProcess(context.Background(), []string{"parley", "-C", ws.Root, "run", "--until-idle", "--quiet"}, strings.NewReader(""), &out, &errOut); got != exitRefused {
			t.Errorf("a run that refused a file = exit %d, want %d; stderr:\n%s", got, exitRefused, errOut.String())
		}
		if !strings.HasPrefix(errOut.String(), "parley: 1 file rejected during this run:\n") {
			t.Errorf("stderr = %q, want it to name the rejection", errOut.String())
		}
	})

	// A watching run stopped by a signal is a clean stop: 0, whatever it
	// refused before.
	t.Run("refused, then interrupted", func(t *testing.T) {
		ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ws.Mailbox("alice").Path(mailbox.Outbox, "bad.md"), []byte("---\nto: zed\n---\nhi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		code := make(chan int, 1)
		go func() {
			var out, errOut bytes.Buffer
			code <- runInProcess(ctx, []string{"parley", "-C", ws.Root, "run", "--quiet"}, strings.NewReader(""), &out, &errOut)
		}()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n, _ := ws.Mailbox("alice").Count(mailbox.Rejected); n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the runner did not reject the file within 30s")
			}
		}
		cancel()
		if got := <-code; got != exitOK {
			t.Errorf("an interrupted run = exit %d, want %d", got, exitOK)
		}
	})

	t.Run("locked", func(t *testing.T) {
		r, err := runner.Open(ws, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out, errOut bytes.Buffer
		if got := runInProcess(context.Background(), []string{"parley", "-C", ws.Root, "run", "--until-idle"}, strings.NewReader(""), &out, &errOut); got != exitLocked {
			t.Errorf("run on a locked workspace = exit %d, want %d; stderr:\n%s", got, exitLocked, errOut.String())
		}
	})
}

// TestCommandLine checks how the command line is put in urfave's order:
// flags anywhere, global flags before the command, arguments after "--".
func TestCommandLine(t *testing.T) {
	app := newApp(&env{})
	tests := []struct {
		in, want string
	}{
		{"parley init table --agent gm -a aria", "parley init --agent gm -a aria -- table"},
		{"parley -C dir init table --agent=gm", "parley -C dir init --agent=gm -- table"},
		{"parley send --from gm --to aria --body hi", "parley send --from gm --to aria --body hi"},
		{"parley read --raw ID", "parley read --raw -- ID"},
		{"parley read ID --json", "parley read --json -- ID"},
		{"parley read -- --json", "parley read -- --json"},
		{"parley inbox bob --state done", "parley inbox --state done -- bob"},
		{"parley status -C dir", "parley -C dir status"},
		{"parley inbox bob --workspace=dir --json", "parley --workspace=dir inbox --json -- bob"},
		{"parley campaign -C dir list --json", "parley -C dir campaign list --json"},
		{"parley skills show dnd-team -C dir", "parley -C dir skills show -- dnd-team"},
		{"parley roll -7/2 --seed 1 -d4", "parley roll --seed 1 -- -7/2 -d4"},
		{"parley character damage aria -3", "parley character damage -- aria -3"},
		{"parley send --body -x --from gm", "parley send --body -x --from gm"},
		{"parley status --help", "parley status --help"},
		{"parley campaign --help", "parley campaign --help"},
		{"parley help campaign", "parley help campaign"},
		{"parley help skills show", "parley skills show --help"},
		{"parley -C dir help campaign new", "parley -C dir campaign new --help"},
		{"parley campaign help list", "parley campaign help list"},
		{"parley __complete send --fr", "parley __complete send --fr"},
		{"parley --version", "parley --version"},
		{"parley", "parley"},
	}
	for _, tt := range tests {
		out, err := commandLine(app, strings.Fields(tt.in))
		if err != nil {
			t.Errorf("commandLine(%q) = %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, strings.Join(out, " ")); d != "" {
			t.Errorf("commandLine(%q) (-want +got):\n%s", tt.in, d)
		}
	}

	refused := []struct {
		in, want string
	}{
		{"parley inbox me --bogus", "inbox: unknown flag --bogus (its flags: --state, --limit/-n, --all, --follow/-f, --json)"},
		{"parley roll --bogus 1d20", "roll: unknown flag --bogus (its flags: --seed, --dc, --as, --json)"},
		{"parley status --json=true --bogus=1", "status: unknown flag --bogus (its flags: --all, --json)"},
		{"parley status now --version", "status: unknown flag --version (its flags: --all, --json)"},
		{"parley -x status", "unknown flag -x (before a command, parley takes --workspace/-C, --version)"},
		{"parley nosuch --x y", `unknown command "nosuch"`},
		{"parley campaign", "campaign needs a command: new, list, check, fill, apply"},
		{"parley campaign -C dir", "campaign needs a command: new, list, check, fill, apply"},
		{"parley campaign nosuch", `campaign: unknown command "nosuch" (its commands: new, list, check, fill, apply)`},
		{"parley campaign --json list", "campaign: unknown flag --json (name a command first: new, list, check, fill, apply)"},
		{"parley inbox me --state", "inbox: --state needs a value: --state STATE"},
		{"parley status -C", "-C needs a value: -C DIR"},
		{"parley -C", "-C needs a value: -C DIR"},
	}
	for _, tt := range refused {
		_, err := commandLine(app, strings.Fields(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("commandLine(%q) = %v, want %q", tt.in, err, tt.want)
		}
		if exitCode(err) != exitUsage {
			t.Errorf("commandLine(%q): exit %d, want %d", tt.in, exitCode(err), exitUsage)
		}
	}
}

// TestUsageOfEveryCommand runs every command, as newApp defines it, with
// an unknown flag, one argument more than its ArgsUsage allows, and none
// when it needs some: each is a usage error (exit 2) told in one line on
// stderr, starting "parley: ". A command added later is walked too, so its
// ArgsUsage has to say what it takes.
func TestUsageOfEveryCommand(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws.Root)
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			if cmd.Hidden {
				continue
			}
			p := append(slices.Clone(path), cmd.Name)
			if len(cmd.Subcommands) > 0 {
				walk(p, cmd.Subcommands)
				continue
			}
			var required, max int
			for _, w := range strings.Fields(cmd.ArgsUsage) {
				if strings.Contains(w, "...") {
					max = -1
				}
				if !strings.HasPrefix(w, "[") {
					required++
				}
				if max >= 0 {
					max++
				}
			}
			lines := [][]string{append(slices.Clone(p), "--no-such-flag")}
			if max >= 0 {
				extra := slices.Clone(p)
				for range max + 1 {
					extra = append(extra, "x")
				}
				lines = append(lines, extra)
			}
			if required > 0 {
				lines = append(lines, p)
			}
			for _, args := range lines {
				var out, errOut bytes.Buffer
				got := run(context.Background(), append([]string{"parley"}, args...), strings.NewReader(""), &out, &errOut)
				first, _, _ := strings.Cut(errOut.String(), "\n")
				if got != exitUsage || !strings.HasPrefix(first, "parley: ") || strings.HasPrefix(first, "parley: hint:") {
					t.Errorf("parley %s = exit %d, stderr:\n%s\nwant exit %d and one line \"parley: ...\" (then a hint, perhaps)", strings.Join(args, " "), got, errOut.String(), exitUsage)
				}
				for _, l := range strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")[1:] {
					if !strings.HasPrefix(l, "parley: hint: ") {
						t.Errorf("parley %s: stderr has more than the error and a hint:\n%s", strings.Join(args, " "), errOut.String())
						break
					}
				}
			}
		}
	}
	walk(nil, newApp(&env{}).Commands)
}
