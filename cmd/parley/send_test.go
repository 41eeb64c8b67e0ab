package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// untouchable is a stdin that fails the test when read.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Errorf("the body was read before the arguments and the message were checked")
	return 0, nil
}

// TestSendChecksBeforeReading: send refuses wrong arguments and a message
// the router would refuse without reading the body from stdin, so a
// person typing a body is not made to type it for nothing.
func TestSendChecksBeforeReading(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("gm", "aria"), []string{"dnd-team"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--from", "zed", "--to", "aria"},
		{"--from", "gm", "--to", "zed"},
		{"--from", "gm", "--to", "aria", "--field", "bad key=1"},
		{"--from", "aria", "--type", "NARRATIVE"},
		{"--from", "gm", "--to", "aria", "--type", "GM_TO_PLAYER"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"parley", "-C", ws.Root, "send"}, args...), untouchable{t}, &out, &errOut)
		if code == exitOK {
			t.Errorf("parley send %s = exit 0, want a refusal", strings.Join(args, " "))
		}
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"parley", "-C", ws.Root, "send", "--from", "gm", "--to", "aria"}, strings.NewReader("Hello.\n"), &out, &errOut)
	if code != exitOK || strings.Contains(errOut.String(), "terminal") {
		t.Errorf("parley send with a body on stdin = exit %d, stderr %q; want 0 and no notice about a terminal", code, errOut.String())
	}
}

// TestSendBeforeReload: a message to an agent added to parley.yaml that
// the running runner has not loaded yet is sent, with a warning saying
// so (reload.txtar: once the runner has tried and failed to load it, it is
// refused).
func TestSendBeforeReload(t *testing.T) {
	ws, err := workspace.Init(t.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Open(ws, runner.Options{}) // holds the workspace, routes nothing
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.WriteFile(filepath.Join(ws.Root, workspace.ConfigFile), []byte("agents: [alice, bob, carol]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"parley", "-C", ws.Root, "send", "--from", "alice", "--to", "carol", "--body", "hi"}, nil, &out, &errOut)
	want := "parley: warning: the running runner (pid " + strconv.Itoa(os.Getpid()) + ") has not loaded agent carol yet; it reloads parley.yaml before it routes this message\n"
	if code != exitOK || errOut.String() != want {
		t.Errorf("send to carol = exit %d, stderr %q; want 0 and %q", code, errOut.String(), want)
	}
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"parley", "-C", ws.Root, "send", "--from", "alice", "--to", "bob", "--body", "hi"}, nil, &out, &errOut)
	if code != exitOK || errOut.Len() != 0 {
		t.Errorf("send to bob = exit %d, stderr %q; want 0 and nothing", code, errOut.String())
	}
}
