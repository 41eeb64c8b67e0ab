package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/mcpserver"
	"github.com/parley-dev/parley/runner/workspace"
)

// mcpClient is an MCP SDK client session on a server for agent in ws.
type mcpClient struct {
	t   *testing.T
	ctx context.Context
	cs  *mcp.ClientSession
	ws  *workspace.Workspace
}

func newMCPClient(t *testing.T, ws *workspace.Workspace, agent string, opts mcpserver.Options, copts *mcp.ClientOptions) *mcpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	opts.Agent = agent
	if opts.Poll == 0 {
		opts.Poll = 10 * time.Millisecond
	}
	server := mcpserver.New(newMCPMailbox(ws, agent), opts)
	st, ct := mcp.NewInMemoryTransports()
	go server.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{t: t, ctx: ctx, cs: cs, ws: ws}
}

// call calls a tool and returns its text, and whether it is an error.
func (c *mcpClient) call(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	res, err := c.cs.CallTool(c.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// post sends body from one agent to another, and routes it.
func (c *mcpClient) post(from, to, body string) string {
	c.t.Helper()
	m := mailbox.New([]byte(body + "\n"))
	m.Set("to", to)
	id, _, err := c.ws.Mailbox(from).Post(m)
	if err != nil {
		c.t.Fatal(err)
	}
	routeOnce(c.t, c.ws)
	return id
}

// routeOnce routes ws until it is idle.
func routeOnce(t *testing.T, ws *workspace.Workspace) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := runner.Open(ws, withUntilIdle(runnerOptions(&env{}, ws, quiet)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestMCPWaitReturnsUnshown guards the tryout's wait loop (repro-1): a
// client that waits, handles the message for a while, and waits again
// missed a message that came in while it handled the first: the second
// wait looked only for messages not in the inbox when it began, and said
// none came while it sat there. wait returns at once the oldest message
// the session has not been shown (by wait, inbox or read).
func TestMCPWaitReturnsUnshown(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "agents:\n  - you\n  - architect\n")
	c := newMCPClient(t, ws, "architect", mcpserver.Options{}, nil)
	c.post("you", "architect", "first")
	c.post("you", "architect", "second")
	if out, _ := c.call("wait", map[string]any{"seconds": 5}); !strings.Contains(out, "first") {
		t.Fatalf("wait = %q, want the first message", out)
	}
	// Came in while the first was handled: returned at once.
	if out, _ := c.call("wait", map[string]any{"seconds": 5}); !strings.Contains(out, "second") {
		t.Fatalf("second wait = %q, want the second message, in the inbox since", out)
	}
	// Shown by inbox, or by read: not returned by wait.
	c.post("you", "architect", "third")
	if out, _ := c.call("inbox", nil); !strings.Contains(out, "third") {
		t.Fatalf("inbox = %q", out)
	}
	id := c.post("you", "architect", "fourth")
	if out, _ := c.call("read", map[string]any{"id": mailbox.IDSuffix(id)}); !strings.Contains(out, "fourth") {
		t.Fatalf("read = %q", out)
	}
	want := "no message came in 1 second; the inbox holds 4 messages shown before, not yet handled (reply or done marks one handled)"
	if out, isErr := c.call("wait", map[string]any{"seconds": 1}); isErr || out != want {
		t.Errorf("wait with every message shown = %q (error %v), want %q", out, isErr, want)
	}
	// Another session has been shown nothing: its wait returns the oldest.
	c2 := newMCPClient(t, ws, "architect", mcpserver.Options{}, nil)
	if out, _ := c2.call("wait", map[string]any{"seconds": 5}); !strings.Contains(out, "first") {
		t.Errorf("a new session's wait = %q, want the oldest message", out)
	}
}

// TestMCPWorkspaceAsOnDisk guards repro-6: parley mcp read parley.yaml
// only as it started, so an agent added since was refused as unknown,
// and an agent removed since could still send: "sent", though no runner
// routes its outbox. Each call acts on parley.yaml as it is on disk.
func TestMCPWorkspaceAsOnDisk(t *testing.T) {
	dir := t.TempDir()
	ws := newWorkspace(t, dir, "agents:\n  - you\n  - a\n  - b\n")
	a := newMCPClient(t, ws, "a", mcpserver.Options{}, nil)
	b := newMCPClient(t, ws, "b", mcpserver.Options{}, nil)
	if err := os.WriteFile(filepath.Join(dir, workspace.ConfigFile), []byte("agents:\n  - you\n  - a\n  - c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, isErr := a.call("send", map[string]any{"to": []string{"c"}, "body": "to new agent c"})
	if isErr || !strings.HasPrefix(out, "sent ") {
		t.Errorf("send to an agent added = %q (error %v), want it sent", out, isErr)
	}
	// No runner routes: said (it said nothing).
	if !strings.Contains(out, "\nno runner is running here: 1 message waits in outboxes until `parley run`") {
		t.Errorf("send with no runner = %q, want that no runner routes it", out)
	}
	want := "b is no longer an agent of this workspace (parley.yaml names you, a, c): it was removed while this session ran, and nothing it sends would be routed; nothing was sent"
	if out, isErr := b.call("send", map[string]any{"to": []string{"a"}, "body": "from removed agent b"}); !isErr || out != want {
		t.Errorf("send from an agent removed = %q (error %v), want the tool error %q", out, isErr, want)
	}
	if n, _ := ws.Mailbox("b").Count(mailbox.Outbox); n != 0 {
		t.Errorf("b's outbox holds %d messages, want none", n)
	}
	// A parley.yaml that does not load leaves the one read before.
	if err := os.WriteFile(filepath.Join(dir, workspace.ConfigFile), []byte("agents: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, isErr := a.call("send", map[string]any{"to": []string{"c"}, "body": "still"}); isErr || !strings.HasPrefix(out, "sent ") {
		t.Errorf("send while parley.yaml does not load = %q (error %v), want it sent as before", out, isErr)
	}
}

// TestMCPWarnings guards repro-8 and repro-5: a second session for one
// agent, and a session for an agent a program drives, started with no
// word, though both are given the agent's messages. Each is warned as
// it starts: in the instructions and as a log message (stderr too, in
// parley mcp: see mcp.txtar).
func TestMCPWarnings(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "agents:\n  - you\n  - a\n  - {name: w, driver: command, run: [sh, -c, 'echo hi']}\n")
	first, release := mcpWarnings(ws, "a")
	defer release()
	if len(first) != 0 {
		t.Errorf("the first session for a is warned %q, want nothing", first)
	}
	second, release2 := mcpWarnings(ws, "a")
	want := "another parley mcp session acts as a already: both are given the same messages, and each may answer them; stop one of them"
	if len(second) != 1 || second[0] != want {
		t.Errorf("a second session for a is warned %q, want %q", second, want)
	}
	release2()
	release()
	if again, rel := mcpWarnings(ws, "a"); len(again) != 0 {
		t.Errorf("a session after the others ended is warned %q, want nothing", again)
		rel()
	} else {
		rel()
	}
	warned, rel := mcpWarnings(ws, "w")
	defer rel()
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "a program (driver: command) drives w: the runner gives it w's messages first") {
		t.Fatalf("a session for w, which a command drives, is warned %q", warned)
	}
	logged := make(chan string, 4)
	c := newMCPClient(t, ws, "w", mcpserver.Options{Warnings: warned}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			logged <- fmt.Sprintf("%s: %v", req.Params.Level, req.Params.Data)
		}})
	if got := c.cs.InitializeResult().Instructions; got != "Warning: "+warned[0] {
		t.Errorf("instructions = %q, want the warning", got)
	}
	if err := c.cs.SetLoggingLevel(c.ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-logged:
		if got != "warning: "+warned[0] {
			t.Errorf("logged %q, want the warning", got)
		}
	case <-c.ctx.Done():
		t.Fatal("no log message")
	}
}

// TestMCPReplyAnsweredAlready guards repro-8: a second reply of an agent
// to a message it answered already (another session for it, say) was
// sent with no word. It is sent (a second answer may be meant), and the
// result says the message was answered already.
func TestMCPReplyAnsweredAlready(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "agents:\n  - you\n  - a\n")
	c1 := newMCPClient(t, ws, "a", mcpserver.Options{}, nil)
	c2 := newMCPClient(t, ws, "a", mcpserver.Options{}, nil)
	id := c1.post("you", "a", "question")
	out, isErr := c1.call("reply", map[string]any{"id": id, "body": "answer from session 1"})
	if isErr || strings.Contains(out, "answered already") {
		t.Fatalf("first reply = %q (error %v)", out, isErr)
	}
	first := strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "sent ")
	out, isErr = c2.call("reply", map[string]any{"id": id, "body": "answer from session 2"})
	want := fmt.Sprintf("%s was answered already by a (%s): this is a second answer", id, first)
	if isErr || !strings.HasPrefix(out, "sent ") || !strings.Contains(out, want) {
		t.Errorf("second reply = %q (error %v), want it sent, saying %q", out, isErr, want)
	}
	if n, _ := ws.Mailbox("a").Count(mailbox.Outbox); n != 2 {
		t.Errorf("a's outbox holds %d answers, want 2", n)
	}
	// The journal says how it was marked handled: it said "answered with
	// parley reply".
	if j, err := os.ReadFile(ws.JournalPath()); err != nil || !strings.Contains(string(j), "answered through MCP (parley mcp)") || strings.Contains(string(j), "parley reply") {
		t.Errorf("the journal (%v) does not say the message was answered through MCP:\n%s", err, j)
	}
	// The same answer again is a retry: sent once, said as such.
	out, _ = c2.call("reply", map[string]any{"id": id, "body": "answer from session 2"})
	if strings.Contains(out, "this is a second answer") || !strings.Contains(out, "not sent twice") {
		t.Errorf("a retried reply = %q, want it said as a retry", out)
	}
}

// TestMCPSendArgumentTerms guards repro-3 and repro-2. A NUL byte in body
// was refused against a file the client never sees ("…-a-969fa2.md:7:
// not a text file: NUL byte at offset 102"); it is said as the client
// gave it, as is one in a field's value. A nested field listed by
// protocol as security_findings.critical was refused by that name: a
// dotted name is set inside the field it names.
func TestMCPSendArgumentTerms(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "skills: [dev-pipeline]\nagents:\n  - {name: you, role: human}\n  - {name: orch, role: orchestrator}\n  - auditor\n")
	c := newMCPClient(t, ws, "auditor", mcpserver.Options{}, nil)
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"to": []string{"you"}, "body": "nul \x00 here"}, "body: a NUL byte at offset 4: a message is text, and may hold none"},
		{map[string]any{"to": []string{"you"}, "fields": map[string]any{"note": "nul \x00 in a field"}, "body": "fine"}, "fields.note: a NUL byte at offset 4: a message is text, and may hold none"},
		{map[string]any{"to": []string{"you"}, "fields": map[string]any{"a": map[string]any{"b": []any{"x", "\x00"}}}, "body": "fine"}, "fields.a.b[1]: a NUL byte at offset 0: a message is text, and may hold none"},
		{map[string]any{"to": []string{"you"}, "fields": map[string]any{"a": 1, "a.b": 2}, "body": "x"}, "fields.a.b: fields.a is given as a value, not an object: give the field inside it there, or by its dotted name alone"},
	} {
		if out, isErr := c.call("send", tt.args); !isErr || out != tt.want {
			t.Errorf("send %q = %q (error %v), want the tool error %q", tt.args, out, isErr, tt.want)
		}
	}
	if n, _ := ws.Mailbox("auditor").Count(mailbox.Outbox); n != 0 {
		t.Errorf("a refused message was written into the outbox")
	}
	out, isErr := c.call("send", map[string]any{"to": []string{"orch"}, "type": "audit_verdict", "signal": "pass",
		"fields": map[string]any{"security_findings.critical": 0, "security_findings.high": 0, "security_findings.medium": 0, "security_findings.low": 0, "build_status": "pass", "test_status": "pass"}, "body": "ok"})
	if isErr || !strings.HasPrefix(out, "sent ") {
		t.Fatalf("send with dotted field names = %q (error %v), want it sent", out, isErr)
	}
	path := ws.Mailbox("auditor").Path(mailbox.Outbox, mailbox.FileName(strings.Fields(out)[1]))
	m, err := mailbox.ReadMessage(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Payload().Value("security_findings"); !strings.Contains(fmt.Sprint(v), "critical:0") {
		t.Errorf("security_findings = %v, want an object holding critical", v)
	}
}

// TestMCPWaitProgress guards repro-7: a wait longer than a minute failed
// in clients of the TypeScript SDK (a request timeout of 60 seconds,
// which a progress notification resets) because the server sent none.
// A client that gives a progressToken is sent one every Options.Progress
// while it waits; one that gives none is sent none.
func TestMCPWaitProgress(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "agents:\n  - you\n  - a\n")
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	c := newMCPClient(t, ws, "a", mcpserver.Options{Progress: 100 * time.Millisecond}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		}})
	params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"seconds": 1}}
	if _, err := c.cs.CallTool(c.ctx, params); err != nil {
		t.Fatal(err)
	}
	if n := len(progress); n != 0 {
		t.Errorf("%d progress notifications to a call with no progressToken, want none", n)
	}
	// Without a progressToken, a wait longer than BareWait is cut to it,
	// saying so (the client would have failed the call).
	b := newMCPClient(t, ws, "a", mcpserver.Options{BareWait: time.Second}, nil)
	begun := time.Now()
	out, _ := b.call("wait", map[string]any{"seconds": 30})
	if want := "no message came in 1 second (of the 30 asked: a wait is cut to 1 second for a client that gives no progressToken, as many give up on a call after 60; call wait again)"; out != want || time.Since(begun) > 10*time.Second {
		t.Errorf("wait 30 s with no progressToken = %q after %v, want %q", out, time.Since(begun), want)
	}
	params.SetProgressToken("w1")
	if _, err := c.cs.CallTool(c.ctx, params); err != nil {
		t.Fatal(err)
	}
	if n := len(progress); n < 3 {
		t.Fatalf("%d progress notifications in a wait of 1 s, one every 100 ms: want several", n)
	}
	p := <-progress
	if p.ProgressToken != "w1" || p.Total != 1 || !strings.HasPrefix(p.Message, "waiting for a message: ") {
		t.Errorf("progress = %+v, want token w1, total 1, and what it waits for", p)
	}
}

// TestMCPInboxLimitAndID: inbox lists at most limit messages (50 when
// left out; 2000 messages were 312 KB), saying how many more; read, done
// and reply with no id say the id is missing (read said `"": no mailbox
// holds this message`).
func TestMCPInboxLimitAndID(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "agents:\n  - you\n  - a\n")
	c := newMCPClient(t, ws, "a", mcpserver.Options{}, nil)
	for i := 0; i < 3; i++ {
		m := mailbox.New([]byte(fmt.Sprintf("message %d\n", i)))
		m.Set("to", "a")
		if _, _, err := ws.Mailbox("you").Post(m); err != nil {
			t.Fatal(err)
		}
	}
	routeOnce(t, ws)
	out, isErr := c.call("inbox", map[string]any{"limit": 2})
	if isErr || !strings.Contains(out, "message 1") || strings.Contains(out, "message 2") || !strings.HasSuffix(out, "and 1 message more, newer: handle these first (reply or done), or give a larger limit") {
		t.Errorf("inbox limit 2 = %q (error %v), want two messages and one more said", out, isErr)
	}
	// The one not listed is returned by wait: it was not shown.
	if out, _ := c.call("wait", map[string]any{"seconds": 1}); !strings.Contains(out, "message 2") {
		t.Errorf("wait after inbox limit 2 = %q, want the message not listed", out)
	}
	// With no runner, a wait that times out says what waits unrouted.
	if _, _, err := ws.Mailbox("you").Post(mailbox.New([]byte("unrouted\n"))); err != nil {
		t.Fatal(err)
	}
	if out, _ := c.call("wait", map[string]any{"seconds": 1}); !strings.HasSuffix(out, "\nno runner is running here: 1 message waits in outboxes until `parley run` (or `parley play`) routes them") {
		t.Errorf("wait with a message unrouted = %q, want that no runner routes it", out)
	}
	if out, isErr := c.call("inbox", map[string]any{"limit": 0}); !isErr || out != "limit: 0 lists nothing: give 1 or more (left out: 50)" {
		t.Errorf("inbox limit 0 = %q (error %v)", out, isErr)
	}
	for _, tool := range []string{"read", "done", "reply"} {
		if out, isErr := c.call(tool, map[string]any{}); !isErr || out != "id: missing: give the message's id (its last six hex digits are enough)" {
			t.Errorf("%s {} = %q (error %v), want that the id is missing", tool, out, isErr)
		}
	}
}

// TestMCPProtocolForAgent guards repro-4: the protocol tool said "the
// message types AGENT may send" but listed every type, gave type and
// signal as fields though send takes them as arguments, and the send and
// reply schemas gave D&D examples (["gm"], PLAYER_TO_GM) in a pipeline
// workspace. It lists the types the check lets the agent send, and the
// examples are the workspace's own.
func TestMCPProtocolForAgent(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "skills: [dev-pipeline]\nagents:\n  - {name: you, role: human}\n  - {name: orch, role: orchestrator}\n  - architect\n")
	to, typ := mcpExamples(ws, "architect")
	if to != "orch" || typ != "triage_result" {
		t.Errorf("mcpExamples = %q, %q; want orch, triage_result", to, typ)
	}
	c := newMCPClient(t, ws, "architect", mcpserver.Options{ExampleTo: to, ExampleType: typ}, nil)
	out, isErr := c.call("protocol", nil)
	if isErr {
		t.Fatal(out)
	}
	for _, want := range []string{
		"The message types architect may send (send's type argument)",
		"\ntriage_result  (line ", "\nplan_result  (line ",
		"\n  type: plan_result (the argument type)\n",
		"\n  signal                       required, as the argument signal; one of plan_complete, blocked, escalate\n",
		"\nTypes others send, which architect may not: worker_submission, review_verdict, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("protocol has no %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"\nworker_submission  (line", "\n  type    ", "\n  signal (", "from orchestrator to worker"} {
		if strings.Contains(out, not) {
			t.Errorf("protocol has %q, a type architect may not send or a field send takes as an argument:\n%s", not, out)
		}
	}
	tools, err := c.cs.ListTools(c.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "send" && tl.Name != "reply" {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		for _, dnd := range []string{"gm", "PLAYER_TO_GM", "NARRATIVE", "corwin", "narrator"} {
			if strings.Contains(string(b), dnd) {
				t.Errorf("%s's schema speaks of %s in a pipeline workspace: %s", tl.Name, dnd, b)
			}
		}
		for _, want := range []string{`(e.g. [\"orch\"])`, "(e.g. triage_result)"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s's schema has no %s: %s", tl.Name, want, b)
			}
		}
	}
}

// TestMCPProtocolDotted: the protocol tool says how a field of a dotted
// name is given (repro-2).
func TestMCPProtocolDotted(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "skills: [dev-pipeline]\nagents:\n  - {name: orch, role: orchestrator}\n  - auditor\n")
	out, err := toolProtocolText(ws, "auditor")
	if want := `(a dotted name is a field inside another: give security_findings.critical as fields {"security_findings": {"critical": ...}}, or by its dotted name)`; err != nil || !strings.Contains(out, want) {
		t.Errorf("protocol (%v) has no %q:\n%s", err, want, out)
	}
}
