package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
)

// TestMCPInspector drives `parley mcp` with a real MCP client of its own
// kind: the MCP Inspector's command-line mode (npm package
// @modelcontextprotocol/inspector, which .ci/run installs). It lists the
// tools, sends a message that the router then delivers, and gets a
// refusal back as a tool error.
func TestMCPInspector(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if _, err := exec.LookPath("mcp-inspector"); err != nil {
		t.Skipf("the MCP Inspector is not installed (.ci/run installs it: npm install -g @modelcontextprotocol/inspector): %v", err)
	}
	if out, err := exec.Command("node", "--version").Output(); err != nil {
		t.Skipf("node is not installed: %v", err)
	} else if major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0], "v")); major < 20 {
		t.Skipf("the MCP Inspector needs node 20 or later, this is %s", strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	bin := parleyProgram(t)
	root := filepath.Join(dir, "table")
	cfg := "skills: [dnd-team]\nagents:\n  - gm\n  - narrator\n  - {name: aria, role: player, character: tilda-brannock}\n"
	ws := newWorkspace(t, root, cfg)
	inspect := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		argv := append([]string{"--cli", "--cwd", root, bin, "mcp", "--agent", "aria"}, args...)
		out, err := exec.CommandContext(ctx, "mcp-inspector", argv...).CombinedOutput()
		return string(out), err
	}
	out, err := inspect("--method", "tools/list")
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	for _, tool := range []string{`"send"`, `"inbox"`, `"read"`, `"reply"`, `"done"`, `"wait"`, `"protocol"`} {
		if !strings.Contains(out, tool) {
			t.Errorf("tools/list lacks %s:\n%s", tool, out)
		}
	}
	out, err = inspect("--method", "tools/call", "--tool-name", "send", "--tool-arg", `to=["gm"]`, "--tool-arg", "body=Hello from an MCP client.")
	if err != nil || !strings.Contains(out, `"text": "sent `) {
		t.Fatalf("send: %v\n%s", err, out)
	}
	out, _ = inspect("--method", "tools/call", "--tool-name", "send", "--tool-arg", "type=NARRATIVE", "--tool-arg", "body=A dragon.")
	if !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "may not send [NARRATIVE]") {
		t.Errorf("a player narrating: want a tool error with the reason:\n%s", out)
	}
	routeOnce(t, ws)
	if n, _ := ws.Mailbox("gm").Count(mailbox.Inbox); n != 1 {
		t.Errorf("the gm's inbox holds %d messages, want the one the client sent", n)
	}
}
