package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/mcpserver"
)

// TestMCP drives `parley mcp`'s server with the MCP SDK's own client, as
// an MCP client acting as a player would: it lists the tools, sends a
// message the router then delivers, gets a refusal back as a tool error
// with its reason, reads, replies to and waits for messages.
func TestMCP(t *testing.T) {
	dir := t.TempDir()
	cfg := "skills: [dnd-team]\nagents:\n  - gm\n  - narrator\n  - {name: lead, role: team-lead}\n  - {name: aria, role: player, character: tilda-brannock}\n"
	ws := newWorkspace(t, dir, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := mcpserver.New(newMCPMailbox(ws, "aria"), mcpserver.Options{Agent: "aria", Poll: 10 * time.Millisecond})
	st, ct := mcp.NewInMemoryTransports()
	go server.Run(ctx, st)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "done inbox protocol read reply send wait" {
		t.Errorf("tools = %v", names)
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	route := func() {
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		r, err := runner.Open(ws, withUntilIdle(runnerOptions(&env{}, ws, quiet)))
		if err != nil {
			t.Error(err)
			return
		}
		defer r.Close()
		if _, err := r.Run(ctx); err != nil {
			t.Error(err)
		}
	}

	// A checked message, routed.
	out, isErr := call("send", map[string]any{"type": "PLAYER_TO_GM", "fields": map[string]any{"type": "ACTION", "character": "tilda-brannock"}, "body": "Tilda draws her sword."})
	if isErr || !strings.HasPrefix(out, "sent ") {
		t.Fatalf("send = %q (error %v)", out, isErr)
	}
	route()
	if n, _ := ws.Mailbox("gm").Count(mailbox.Inbox); n != 1 {
		t.Errorf("the gm's inbox holds %d messages, want the one sent", n)
	}
	// A refusal is a tool error with the reason; nothing is written.
	out, isErr = call("send", map[string]any{"type": "NARRATIVE", "body": "And then a dragon."})
	if !isErr || !strings.Contains(out, "may not send [NARRATIVE]") {
		t.Errorf("a player narrating: %q (error %v), want a tool error with the reason", out, isErr)
	}
	if n, _ := ws.Mailbox("aria").Count(mailbox.Outbox); n != 0 {
		t.Errorf("a refused message was written into the outbox")
	}
	// A field parley sets, or one with its own argument, is named as the
	// client wrote it: fields.id, not the command line's --field id.
	for _, tt := range []struct {
		fields map[string]any
		want   string
	}{
		{map[string]any{"id": "x"}, "fields.id: parley sets id itself"},
		{map[string]any{"to": "gm"}, "fields.to: use to"},
		{map[string]any{"a b": 1}, `fields: "a b" is no field name`},
	} {
		out, isErr = call("send", map[string]any{"to": []string{"gm"}, "fields": tt.fields, "body": "x"})
		if !isErr || !strings.HasPrefix(out, tt.want) || strings.Contains(out, "--") {
			t.Errorf("send with fields %v = %q (error %v), want a tool error starting %q", tt.fields, out, isErr, tt.want)
		}
	}

	// An argument of the wrong kind is said in the arguments' words, not
	// as a schema dump or Go's; one recipient alone, as a string, is
	// taken (a model asked for a list often writes one name).
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send", map[string]any{"to": 5, "body": "x"}, `bad arguments: to: want a list of agent names, got 5`},
		{"send", map[string]any{"to": []string{"gm"}, "fields": "x"}, `bad arguments: fields: want an object, got "x"`},
		{"wait", map[string]any{"seconds": "ten"}, `bad arguments: seconds: want a whole number, got "ten"`},
	} {
		if out, isErr := call(tt.tool, tt.args); !isErr || out != tt.want {
			t.Errorf("%s %v = %q (error %v), want the tool error %q", tt.tool, tt.args, out, isErr, tt.want)
		}
	}
	if out, isErr := call("send", map[string]any{"to": "gm", "body": "One name alone."}); isErr || !strings.HasPrefix(out, "sent ") {
		t.Errorf(`send to "gm" = %q (error %v), want it sent`, out, isErr)
	}
	route()

	// The inbox, a message read, answered, handled.
	m := mailbox.New([]byte("What do you do?\n"))
	m.Set("to", "aria")
	id, _, err := ws.Mailbox("gm").Post(m)
	if err != nil {
		t.Fatal(err)
	}
	route()
	if out, _ := call("inbox", nil); !strings.Contains(out, id) || !strings.Contains(out, "What do you do?") {
		t.Errorf("inbox = %q", out)
	}
	if out, _ := call("read", map[string]any{"id": mailbox.IDSuffix(id)}); !strings.Contains(out, "What do you do?") {
		t.Errorf("read = %q", out)
	}
	if out, isErr := call("reply", map[string]any{"id": id, "body": "I wait."}); isErr || !strings.HasPrefix(out, "sent ") {
		t.Errorf("reply = %q (error %v)", out, isErr)
	}
	if n, _ := ws.Mailbox("aria").Count(mailbox.Done); n != 1 {
		t.Errorf("the answered message is not handled")
	}
	// A client that calls again (its call timed out) answers once.
	out, isErr = call("reply", map[string]any{"id": id, "body": "I wait."})
	if isErr || !strings.Contains(out, "the same answer is not sent twice") {
		t.Errorf("reply again = %q (error %v), want the answer sent before", out, isErr)
	}
	if n, _ := ws.Mailbox("aria").Count(mailbox.Outbox); n != 1 {
		t.Errorf("aria's outbox holds %d answers after a retried reply, want 1", n)
	}

	// A wait of no time, or longer than 300 s, is refused at once: 0 was
	// taken for the default 30 s, and 400 for 300, saying nothing.
	for _, tc := range []struct {
		secs int
		want string
	}{
		{-5, "seconds: -5 is no time to wait: give 1 to 300 (left out: 30)"},
		{0, "seconds: 0 is no time to wait: give 1 to 300 (left out: 30)"},
		{400, "seconds: 400 is longer than a wait may be: give 1 to 300 (left out: 30)"},
	} {
		if out, isErr := call("wait", map[string]any{"seconds": tc.secs}); !isErr || out != tc.want {
			t.Errorf("wait %d s = %q (error %v), want the tool error %q", tc.secs, out, isErr, tc.want)
		}
	}

	// Waiting: a message that arrives meanwhile is returned.
	routed := make(chan struct{})
	go func() {
		defer close(routed)
		time.Sleep(50 * time.Millisecond)
		m := mailbox.New([]byte("The door opens.\n"))
		m.Set("to", "aria")
		ws.Mailbox("gm").Post(m)
		route()
	}()
	if out, _ := call("wait", map[string]any{"seconds": 20}); !strings.Contains(out, "The door opens.") {
		t.Errorf("wait = %q", out)
	}
	// The runner goes on (the journal, the move to sent/) after the copy
	// is in the inbox: it ends before the workspace is removed.
	<-routed
	if out, _ := call("protocol", nil); !strings.Contains(out, "PLAYER_TO_GM") {
		t.Errorf("protocol = %q", out)
	}
}

// TestMCPGameMasterTools: the game master's client also gets the five
// campaign tools; a tool's error comes back as a tool error.
func TestMCPGameMasterTools(t *testing.T) {
	dir := t.TempDir()
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: aria, role: player, character: tilda-brannock}\n"
	ws := newWorkspace(t, dir, cfg)
	camp, err := campaigns.New(dir, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := camp.NewSheet("tilda-brannock", ""); err != nil {
		t.Fatal(err)
	}
	if len(gmTools(ws, "aria")) != 0 {
		t.Error("a player got the game master's tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := mcpserver.New(newMCPMailbox(ws, "gm"), mcpserver.Options{Agent: "gm", Extra: gmTools(ws, "gm")})
	st, ct := mcp.NewInMemoryTransports()
	go server.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	for _, name := range []string{"roll_dice", "add_inventory", "update_inventory", "update_character", "get_character_stats"} {
		if !have[name] {
			t.Errorf("no %s tool", name)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_character", Arguments: map[string]any{"character": "tilda-brannock", "damage": 3}})
	if err != nil || res.IsError {
		t.Fatalf("update_character: %v %+v", err, res)
	}
	d, err := sheet.Read(camp.SheetPath("tilda-brannock"))
	if err != nil || d.HP != 5 {
		t.Errorf("after 3 damage the sheet says HP %d (%v), want 5", d.HP, err)
	}
	// A game master's model grants temporary hit points as a person does
	// with `parley character set temp_hp=N` (a tryout: the tool had no
	// argument for them).
	for _, tl := range tools.Tools {
		if tl.Name == "update_character" && !strings.Contains(tl.Description, "tempHp") {
			t.Errorf("update_character's description does not speak of tempHp: %q", tl.Description)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_character", Arguments: map[string]any{"character": "tilda-brannock", "tempHp": 4}})
	if err != nil || res.IsError {
		t.Fatalf("update_character tempHp: %v %+v", err, res)
	}
	d, err = sheet.Read(camp.SheetPath("tilda-brannock"))
	if err != nil || d.HP != 5 || d.TempHP != 4 {
		t.Errorf("after tempHp 4 the sheet says HP %d temp %d (%v), want 5 temp 4", d.HP, d.TempHP, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_character", Arguments: map[string]any{"character": "tilda-brannock", "hp": "eight"}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != `bad arguments: hp: want a whole number, got "eight"` {
		t.Errorf("hp eight: %v %+v, want a tool error saying hp wants a whole number", err, res.Content)
	}
	// A wrong field inside an update is named where it is, beside the
	// fields an update has: it was said as a wrong argument, with the
	// arguments' own names.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_inventory", Arguments: map[string]any{"character": "tilda-brannock", "updates": []any{map[string]any{"slug": "rope", "quantity": -1}}}})
	if want := `bad arguments: updates[0].quantity: unknown field (did you mean quantityChange? fields: slug, in, quantityChange)`; err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("update_inventory quantity: %v %+v, want the tool error %q", err, res.Content, want)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_character_stats", Arguments: map[string]any{"character": "nobody-here"}})
	if err != nil || !res.IsError {
		t.Errorf("stats of nobody: %v %+v, want a tool error", err, res)
	}
}

// TestMCPGameMasterToolsSheetUnchanged: a call of the game master's
// client that a hand-broken sheet keeps from changing it tells the people
// with the notice the tools agent sends (tryout F, 4: none was sent).
func TestMCPGameMasterToolsSheetUnchanged(t *testing.T) {
	dir := t.TempDir()
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: you, role: human}\n"
	ws := newWorkspace(t, dir, cfg)
	camp, err := campaigns.New(dir, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	path, err := camp.NewSheet("tilda-brannock", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	broken := regexp.MustCompile(`\| \*\*Hit Points\*\* \| [^|]*\|`).ReplaceAll(b, []byte("| **Hit Points** | eight/8 |"))
	if bytes.Equal(broken, b) {
		t.Fatalf("no Hit Points row in %s", b)
	}
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tl := range gmTools(ws, "gm") {
		if tl.Name != "update_character" {
			continue
		}
		if _, err := tl.Call(context.Background(), json.RawMessage(`{"character": "tilda-brannock", "damage": 3}`)); err == nil {
			t.Fatal("update_character on a malformed sheet succeeded")
		}
	}
	sent, err := filepath.Glob(filepath.Join(dir, "mailboxes", "gm", "outbox", "*.md"))
	if err != nil || len(sent) != 1 {
		t.Fatalf("gm's outbox holds %v (%v), want one notice", sent, err)
	}
	m, err := os.ReadFile(sent[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nto: you\n", "\nnotice: sheet_unchanged\n", "gm's update_character changed nothing: party/tilda-brannock.md:"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("the notice %s has no %q:\n%s", sent[0], want, m)
		}
	}
}

// TestServeMCPInterrupted: parley mcp stopped by a signal (its context
// ended) stops cleanly, exit 0 and nothing said; it said "context
// canceled" and exited 1.
func TestServeMCPInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	server := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	st, _ := mcp.NewInMemoryTransports()
	cancel()
	if err := serveMCP(ctx, server, st); err != nil {
		t.Errorf("serveMCP(interrupted) = %v, want nil", err)
	}
}

// TestMCPStopAnswers: parley mcp stopped by SIGTERM (as an MCP client
// stops its server) answers every call it has taken before it exits 0: a
// wait in progress says the session is ending, and a send is answered if
// and only if its message was written (a client that got no answer
// would send it again). The SDK's stop closed the connection at once and
// dropped the answers in flight.
func TestMCPStopAnswers(t *testing.T) {
	t.Parallel()
	bin := parleyProgram(t)
	root := t.TempDir()
	cfg := "skills: [dnd-team]\nagents:\n  - gm\n  - {name: aria, role: player, character: tilda-brannock}\n"
	ws := newWorkspace(t, root, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-C", root, "mcp", "--agent", "aria")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v (stderr %q)", lines.Err(), stderr.String())
		}
		return lines.Text()
	}
	send := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send","arguments":{"to":["gm"],"body":"Call %d."}}}`, id, id)
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":`) {
		t.Fatalf("initialize = %s", got)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A wait, then a send whose answer says both were taken: the wait is
	// in progress.
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"seconds":300}}}`)
	write(send(3))
	if got := next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"sent `) {
		t.Fatalf("send = %s", got)
	}
	// Sends written just before the stop: each taken or not, as it
	// happens.
	for id := 4; id <= 11; id++ {
		write(send(id))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for lines.Scan() {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("a line not JSON: %s", lines.Text())
		}
		answers[string(m.ID)] = lines.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("parley mcp stopped by SIGTERM: %v (stderr %q), want exit 0", err, stderr.String())
	}
	if got := answers["2"]; !strings.Contains(got, "no message came: the session is ending") {
		t.Errorf("the wait in progress was answered %q, want that the session is ending", got)
	}
	n, err := ws.Mailbox("aria").Count(mailbox.Outbox)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for id, a := range answers {
		switch {
		case strings.Contains(a, `"text":"sent `):
			sent++
		case id != "2":
			t.Errorf("answer %s, want a message sent", a)
		}
	}
	if n != sent+1 {
		t.Errorf("the outbox holds %d messages, and %d sends were answered after the stop; want an answer for each message sent", n, sent)
	}
}

// TestMCPReplyRacingDone guards a bug: reply and done of one message,
// called at once (an MCP client's two lines, handled concurrently),
// could have reply say "handled already" after its answer was written to
// the outbox, and a client that retried sent the answer twice. A reply
// whose answer is written succeeds, saying the message was marked
// handled meanwhile if it was; a reply that fails wrote nothing.
func TestMCPReplyRacingDone(t *testing.T) {
	dir := t.TempDir()
	ws := newWorkspace(t, dir, "agents:\n  - gm\n  - aria\n")
	box := newMCPMailbox(ws, "aria")
	ctx := context.Background()
	route := func() { routeOnce(t, ws) }
	const rounds = 100
	var ids []string
	for i := 0; i < rounds; i++ {
		m := mailbox.New([]byte(fmt.Sprintf("Question %d?\n", i)))
		m.Set("to", "aria")
		id, _, err := ws.Mailbox("gm").Post(m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	route()
	for _, id := range ids {
		before, _ := ws.Mailbox("aria").Count(mailbox.Outbox)
		var (
			out     string
			err     error
			replied = make(chan struct{})
		)
		go func() {
			defer close(replied)
			out, err = box.Reply(ctx, id, mcpserver.Outgoing{Body: "r1"})
		}()
		box.Done(ctx, id)
		<-replied
		after, _ := ws.Mailbox("aria").Count(mailbox.Outbox)
		switch {
		case err != nil && after != before:
			t.Fatalf("reply %s = error %q, but its answer is in the outbox: a retry sends it twice", id, err)
		case err == nil && after != before+1:
			t.Fatalf("reply %s = %q, but the outbox holds %d answers more, want 1", id, out, after-before)
		}
		if n, _ := ws.Mailbox("aria").Count(mailbox.Inbox); n != rounds-1-slices.Index(ids, id) {
			t.Fatalf("after reply and done of %s the inbox holds %d messages", id, n)
		}
	}
}
