package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestExitCodes checks the exit codes scripts branch on.
func TestExitCodes(t *testing.T) {
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
			got := run(context.Background(), append([]string{"parley"}, tt.args...), strings.NewReader(""), &out, &errOut)
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
		if got := run(context.Background(), []string{"parley", "-C", ws.Root, "run", "--until-idle", "--quiet"}, strings.NewReader(""), &out, &errOut); got != exitRefused {
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
			code <- run(ctx, []string{"parley", "-C", ws.Root, "run", "--quiet"}, strings.NewReader(""), &out, &errOut)
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
		if got := run(context.Background(), []string{"parley", "-C", ws.Root, "run", "--until-idle"}, strings.NewReader(""), &out, &errOut); got != exitLocked {
			t.Errorf("run on a locked workspace = exit %d, want %d; stderr:\n%s", got, exitLocked, errOut.String())
		}
	})
}

func TestFlagsFirst(t *testing.T) {
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
		{"parley nosuch --x y", "parley nosuch --x y"},
		{"parley", "parley"},
	}
	for _, tt := range tests {
		got := strings.Join(flagsFirst(app, strings.Fields(tt.in)), " ")
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("flagsFirst(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}
