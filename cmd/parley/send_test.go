package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
