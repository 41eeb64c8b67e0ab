package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/mcpserver"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

func mcpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		UsageText: "parley mcp --agent AGENT   (run by the MCP client, which talks to it on stdio)",
		Usage:     "serve an agent's mailbox to an MCP client on stdio: send (checked as the router checks), inbox, read, reply, done, wait, protocol",
		Description: "An MCP client (Claude Code, Codex, an editor) started with this command acts\n" +
			"as the agent: what it sends goes through the same check as parley send, and\n" +
			"a refusal comes back as a tool error with its reason. The runner (parley run)\n" +
			"routes what it sends, as it routes any outbox.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "the `AGENT` the client acts as (required)"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			agent := c.String("agent")
			if agent == "" {
				return usagef("say which agent the client acts as: --agent AGENT")
			}
			if err := ws.CheckAgent(agent); err != nil {
				return usagef("--agent: %v", err)
			}
			if a, _ := ws.Agent(agent); a.Remote != "" {
				// Its mailbox here holds only what waits to be forwarded
				// to it: every send would fail as the router's own.
				return usagef("--agent: %s lives in workspace %s (remote: %s in %s): run parley mcp --agent %s in that workspace", agent, a.Remote, a.Remote, workspace.ConfigFile, agent)
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			t := mcpserver.NewStdio(os.Stdin, os.Stdout)
			// An interrupt (Ctrl-C, or the SIGTERM a client stops its
			// server with) stops in good order: no line more is read,
			// every call read is answered (a wait in progress at once),
			// then parley mcp exits 0. A second interrupt ends it at
			// once. The end of the client's input ends a wait in
			// progress too.
			ending, done := make(chan struct{}), make(chan struct{})
			defer close(done)
			go func() {
				defer close(ending)
				select {
				case <-ctx.Done():
					stop()
					t.Stop()
				case <-t.Ended():
				case <-done:
				}
			}()
			warnings, release := mcpWarnings(ws, agent)
			defer release()
			for _, w := range warnings {
				fmt.Fprintf(e.stderr, "parley: warning: %s\n", w)
			}
			exTo, exType := mcpExamples(ws, agent)
			s := mcpserver.New(newMCPMailbox(ws, agent), mcpserver.Options{Agent: agent, Version: buildVersion().Version, Extra: gmTools(ws, agent), Stop: ending, Warnings: warnings, ExampleTo: exTo, ExampleType: exType})
			return serveMCP(c.Context, s, t)
		},
	}
}

// mcpWarnings says what a session for agent is to be warned of as it
// starts: that another session acts as agent already (both are given
// the same messages, and each answers them), and that a program drives
// agent (the runner gives it agent's messages first). It marks the
// session as running until release is called (HoldMCPSession).
func mcpWarnings(ws *workspace.Workspace, agent string) (warnings []string, release func()) {
	release = func() {}
	others, rel, err := ws.HoldMCPSession(agent)
	if err == nil {
		release = rel
	}
	if others {
		warnings = append(warnings, fmt.Sprintf("another parley mcp session acts as %s already: both are given the same messages, and each may answer them; stop one of them", agent))
	}
	if a, _ := ws.Agent(agent); a.Driven() {
		what := "a program (driver: " + a.Driver + ")"
		if a.Driver == workspace.DriverBuiltin {
			what = "parley's built-in handler " + a.Handler
		}
		warnings = append(warnings, fmt.Sprintf("%s drives %s: the runner gives it %s's messages first, so wait and inbox here see only what it leaves, and a reply here is a second answer; to act as %s through MCP, take its driver out of %s", what, agent, agent, agent, workspace.ConfigFile))
	}
	return warnings, release
}

// serveMCP serves s on t until the client goes (or t is stopped) or ctx
// ends; an end of ctx is a clean stop. A connection that fails, such as
// stdin that cannot be read, is said as such. (A line that is not
// JSON-RPC is answered with an error by mcpserver.Stdio, and the session
// goes on.)
func serveMCP(ctx context.Context, s *mcp.Server, t mcp.Transport) error {
	err := s.Run(ctx, t)
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		return fmt.Errorf("mcp: talking with the client on stdio: %w", err)
	}
	return nil
}

// mcpMailbox does what an MCP client asks, as the agent, through the
// commands' own paths: runSend (the one check), markDone, runReply. It
// acts on the workspace as it is on disk at each call (workspace.Live):
// an agent added to parley.yaml while the session runs can be sent to,
// and an agent removed can no longer send.
type mcpMailbox struct {
	live  *workspace.Live
	agent string

	mu      sync.Mutex
	summary map[string]mcpserver.Summary // of the inbox's messages, by id: a message there does not change
}

// newMCPMailbox returns the mailbox of agent in ws, kept as ws is on
// disk.
func newMCPMailbox(ws *workspace.Workspace, agent string) *mcpMailbox {
	return &mcpMailbox{live: workspace.NewLive(ws, nil), agent: agent, summary: map[string]mcpserver.Summary{}}
}

// ws returns the workspace as it is on disk now: as it was read last
// when parley.yaml, changed since, does not load (the runner too routes
// with the configuration it loaded before).
func (b *mcpMailbox) ws(ctx context.Context) *workspace.Workspace {
	ws, _ := b.live.Current(ctx)
	return ws
}

// sender returns the workspace as it is now for a message the agent
// sends: an error when parley.yaml no longer names the agent (removed
// while the session runs), whose outbox no runner routes.
func (b *mcpMailbox) sender(ctx context.Context) (*workspace.Workspace, error) {
	ws := b.ws(ctx)
	if _, ok := ws.Agent(b.agent); !ok {
		return nil, fmt.Errorf("%s is no longer an agent of this workspace (%s names %s): it was removed while this session ran, and nothing it sends would be routed; nothing was sent", b.agent, workspace.ConfigFile, strings.Join(ws.AgentNames(), ", "))
	}
	return ws, nil
}

// options turns a tool's message into send options. A field given by
// a dotted name (security_findings.critical, as protocol lists it) is
// set inside the field it names (security_findings: {critical: ...}). A
// NUL byte, which no message may hold, is refused here, named as the
// client gave it (body, fields.KEY): the check would name a file the
// client never sees.
func (b *mcpMailbox) options(m mcpserver.Outgoing) (sendOptions, error) {
	if i := strings.IndexByte(m.Body, 0); i >= 0 {
		return sendOptions{}, fmt.Errorf("body: a NUL byte at offset %d: a message is text, and may hold none", i)
	}
	fields, err := nestFields(m.Fields)
	if err != nil {
		return sendOptions{}, err
	}
	body := withNewline(m.Body)
	opts := sendOptions{From: b.agent, To: m.To, CC: m.CC, Type: m.Type, Signal: m.Signal, Body: &body, Tool: true, HandledNote: "answered through MCP (parley mcp)"}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fields[k]
		if err := noNUL("fields."+k, v); err != nil {
			return opts, err
		}
		if s, ok := v.(string); ok {
			opts.Fields = append(opts.Fields, k+"="+yamlString(s))
			continue
		}
		j, err := json.Marshal(v) // JSON is YAML, written on one line
		if err != nil {
			return opts, fmt.Errorf("fields.%s: %v", k, err)
		}
		opts.Fields = append(opts.Fields, k+"="+string(j))
	}
	return opts, nil
}

// nestFields returns fields with each one given by a dotted name
// (a.b.c) set inside the fields it names (a: {b: {c: ...}}), beside
// what is given there by the name itself as an object.
func nestFields(fields map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(fields))
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // "a" before "a.b": the object given, then what goes in it
	for _, k := range keys {
		v := fields[k]
		if !strings.Contains(k, ".") {
			if _, ok := out[k]; ok {
				return nil, fmt.Errorf("fields.%s: given twice (by its name and inside it by a dotted name)", k)
			}
			out[k] = v
			continue
		}
		parts := strings.Split(k, ".")
		at := out
		for i, p := range parts {
			if p == "" {
				return nil, fmt.Errorf("fields: %q is no field name: a dotted name names a field inside another, as security_findings.critical", k)
			}
			if i == len(parts)-1 {
				if _, ok := at[p]; ok {
					return nil, fmt.Errorf("fields.%s: given twice", k)
				}
				at[p] = v
				break
			}
			switch inner := at[p].(type) {
			case nil:
				next := map[string]any{}
				at[p] = next
				at = next
			case map[string]any:
				// A copy: the client's own object is not written into.
				next := maps.Clone(inner)
				at[p] = next
				at = next
			default:
				return nil, fmt.Errorf("fields.%s: fields.%s is given as a value, not an object: give the field inside it there, or by its dotted name alone", k, strings.Join(parts[:i+1], "."))
			}
		}
	}
	return out, nil
}

// noNUL refuses a NUL byte in a field's value v, which name names.
func noNUL(name string, v any) error {
	switch t := v.(type) {
	case string:
		if i := strings.IndexByte(t, 0); i >= 0 {
			return fmt.Errorf("%s: a NUL byte at offset %d: a message is text, and may hold none", name, i)
		}
	case map[string]any:
		for k, x := range t {
			if strings.IndexByte(k, 0) >= 0 {
				return fmt.Errorf("%s: a NUL byte in the name %q: a message is text, and may hold none", name, k)
			}
			if err := noNUL(name+"."+k, x); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := noNUL(fmt.Sprintf("%s[%d]", name, i), x); err != nil {
				return err
			}
		}
	}
	return nil
}

// captured runs a command's action with its output kept, and returns the
// output (a sent message's id) and, after it, what the action said on
// stderr (as a note beside the result: that no runner routes, say),
// without parley's prefix.
func captured(fn func(e *env) error) (string, error) {
	var out, errs bytes.Buffer
	err := fn(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errs})
	said := strings.TrimSpace(out.String())
	for _, line := range strings.Split(strings.TrimSpace(errs.String()), "\n") {
		if line = strings.TrimPrefix(line, "parley: "); line != "" {
			said += "\n" + line
		}
	}
	return said, err
}

func (b *mcpMailbox) Send(ctx context.Context, m mcpserver.Outgoing) (string, error) {
	ws, err := b.sender(ctx)
	if err != nil {
		return "", err
	}
	opts, err := b.options(m)
	if err != nil {
		return "", err
	}
	return captured(func(e *env) error {
		if err := runSend(e, ws, opts); err != nil {
			return err
		}
		// A model that sends is told when nothing will route it (parley
		// send leaves this to parley inbox: a person starts parley run
		// next).
		noteUnrouted(e, ws)
		return nil
	})
}

// Inbox lists the inbox, each message read once while it is there: a
// wait looks at it ten times a second, and an inbox may hold thousands.
func (b *mcpMailbox) Inbox(ctx context.Context) ([]mcpserver.Summary, error) {
	ws := b.ws(ctx)
	entries, err := ws.Mailbox(b.agent).List(mailbox.Inbox)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []mcpserver.Summary{}
	there := make(map[string]bool, len(entries))
	for _, en := range entries {
		there[en.ID] = true
		s, ok := b.summary[en.ID]
		if !ok {
			s = mcpserver.Summary{ID: en.ID}
			if m, err := mailbox.ReadMessage(en.Path, ws.Config.Router.MaxMessageSize); err == nil {
				s.From, _ = m.Header().Get("from")
				s.Type = workspace.TypeOf(m)
				s.Summary = summaryOf(m)
				b.summary[en.ID] = s
			}
		}
		out = append(out, s)
	}
	for id := range b.summary {
		if !there[id] {
			delete(b.summary, id)
		}
	}
	return out, nil
}

// held returns the id of a message the agent holds in the given states,
// by its id or a short id of it, and the copy the agent holds. The client
// acts as the agent: a short id is looked for among the agent's own
// messages, and no error names a message of another mailbox, nor where
// one lies (workspace.ResolveOwnID, workspace.Held); parley read, for a
// person at the workspace, looks everywhere.
func (b *mcpMailbox) held(ws *workspace.Workspace, arg string, states ...string) (string, workspace.Copy, error) {
	id, err := ws.ResolveOwnID(arg, b.agent, states...)
	if err != nil {
		return "", workspace.Copy{}, err
	}
	c, err := ws.Held(id, b.agent, states...)
	return id, c, err
}

// handling runs fn, a reply or a done, with the full id of the message
// it acts on, one the agent holds in its inbox/, cur/ or done/ (held). A
// message gone from there meanwhile is said not held, as held says it,
// not where its other copies are.
func (b *mcpMailbox) handling(ws *workspace.Workspace, arg string, fn func(id string) error) error {
	states := []string{mailbox.Inbox, mailbox.Cur, mailbox.Done}
	id, _, err := b.held(ws, arg, states...)
	if err != nil {
		return err
	}
	err = fn(id)
	if errors.Is(err, workspace.ErrMessageNotFound) {
		if _, _, herr := b.held(ws, id, states...); herr != nil {
			return herr
		}
	}
	return err
}

func (b *mcpMailbox) Read(ctx context.Context, arg string) (string, error) {
	ws := b.ws(ctx)
	_, c, err := b.held(ws, arg, mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead, mailbox.Sent, mailbox.Outbox)
	if err != nil {
		return "", err
	}
	data, err := mailbox.ReadFile(c.Path, ws.Config.Router.MaxMessageSize)
	return string(data), err
}

func (b *mcpMailbox) Reply(ctx context.Context, arg string, m mcpserver.Outgoing) (string, error) {
	ws, err := b.sender(ctx)
	if err != nil {
		return "", err
	}
	opts, err := b.options(m)
	if err != nil {
		return "", err
	}
	opts.Once = true // a client that calls again answers once
	var note, out string
	err = b.handling(ws, arg, func(id string) error {
		// An answer this agent sent already (another session for it, or
		// this one before): said beside the result, not refused, as a
		// second answer may be meant. The answers before, in id order
		// (a directory lists them in any order).
		var before []string
		for r := range ws.Replies(id, b.agent) {
			before = append(before, r.ID)
		}
		slices.Sort(before)
		var err error
		out, err = captured(func(e *env) error {
			var err error
			note, err = runReply(e, ws, id, b.agent, false, opts)
			return err
		})
		// A retry (the answer found sent before) was told so when it
		// was sent; a new answer beside earlier ones is told now.
		sent, _, _ := strings.Cut(strings.TrimPrefix(out, "sent "), "\n")
		if err == nil && len(before) > 0 && !slices.Contains(before, sent) {
			note = strings.TrimPrefix(note+"\n"+fmt.Sprintf("%s was answered already by %s (%s): this is a second answer", id, b.agent, before[0]), "\n")
		}
		return err
	})
	if note != "" {
		out += "\n" + note
	}
	return out, err
}

func (b *mcpMailbox) Done(ctx context.Context, arg string) error {
	ws := b.ws(ctx)
	return b.handling(ws, arg, func(id string) error {
		_, err := captured(func(e *env) error {
			return markDone(e, ws, b.agent, []string{id}, "marked handled through MCP (parley mcp)")
		})
		return err
	})
}

// Unrouted says what noteUnrouted says of the messages waiting in
// outboxes when no runner routes them, without parley's prefix.
func (b *mcpMailbox) Unrouted(ctx context.Context) string {
	said, _ := captured(func(e *env) error {
		noteUnrouted(e, b.ws(ctx))
		return nil
	})
	return strings.TrimSpace(said)
}

func (b *mcpMailbox) Protocol(ctx context.Context) (string, error) {
	return toolProtocolText(b.ws(ctx), b.agent)
}

// mayPost returns the message types of the workspace's skills agent may
// send, as the check decides it (skills.Type.SenderRefusal), by skill,
// and the names of those it may not.
func mayPost(ws *workspace.Workspace, agent string) (may map[*skills.Skill][]*skills.Type, mayNot []string, err error) {
	set, err := ws.Protocol()
	if err != nil || set == nil {
		return nil, nil, err
	}
	party := ws.Party(agent)
	may = map[*skills.Skill][]*skills.Type{}
	for _, s := range set.Skills {
		for _, t := range s.Types {
			if t.SenderRefusal(party) == "" {
				may[s] = append(may[s], t)
			} else {
				mayNot = append(mayNot, t.Name)
			}
		}
	}
	return may, mayNot, nil
}

// mcpExamples returns an agent agent may write to and a message type it
// may send, for the examples of the send and reply tools: the first type
// it may send and an agent of a role that type goes to, else another
// agent of the workspace; "" where there is none.
func mcpExamples(ws *workspace.Workspace, agent string) (to, typ string) {
	may, _, _ := mayPost(ws, agent)
	var roles []string
	if set, _ := ws.Protocol(); set != nil {
		for _, s := range set.Skills {
			if len(may[s]) > 0 {
				typ, roles = may[s][0].Name, may[s][0].Recipients
				break
			}
		}
	}
	for _, a := range ws.Config.Agents {
		if a.Name == agent {
			continue
		}
		if len(roles) > 0 && ws.HasRole(a.Name, roles...) {
			return a.Name, typ
		}
		if to == "" {
			to = a.Name
		}
	}
	return to, typ
}

// toolProtocolText is what parley mcp's protocol tool tells the client:
// its roles, and the message types it may send (as the check decides),
// with their fields as its send tool takes them (type and signal are
// arguments of their own); the other types of the protocol by name.
func toolProtocolText(ws *workspace.Workspace, agent string) (string, error) {
	may, mayNot, err := mayPost(ws, agent)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s has the roles %s.\n", agent, strings.Join(ws.Roles(agent), ", "))
	if len(ws.Config.Skills) == 0 {
		out.WriteString("\nThis workspace checks messages against no protocol: any message with a recipient goes.\n")
		return out.String(), nil
	}
	set, _ := ws.Protocol()
	sent := false
	for _, s := range set.Skills {
		if len(may[s]) == 0 {
			continue
		}
		if !sent {
			fmt.Fprintf(&out, "\nThe message types %s may send (send's type argument), with where each goes and its fields:\n", agent)
			sent = true
		}
		fmt.Fprintf(&out, "\n%s", s.Name)
		if s.Version != "" {
			fmt.Fprintf(&out, " (version %s)", s.Version)
		}
		out.WriteString("\n")
		if s.Description != "" {
			fmt.Fprintf(&out, "%s\n", s.Description)
		}
		for _, t := range may[s] {
			describeType(&out, t, true)
		}
	}
	if !sent {
		fmt.Fprintf(&out, "\n%s may send no message type of this workspace's protocol: only informal messages (no type).\n", agent)
	}
	if len(mayNot) > 0 {
		fmt.Fprintf(&out, "\nTypes others send, which %s may not: %s.\n", agent, strings.Join(mayNot, ", "))
	}
	return out.String(), nil
}

// protocolText is what an agent is told of the protocol it speaks: its
// roles, and the message types of the workspace's skills with their
// fields (as parley skills show prints them). An openai agent's model is
// given it in its prompt, a program agent in its context file (an MCP
// client's protocol tool gives toolProtocolText: the types it may send,
// as its send tool takes them).
//
// The skills are the workspace's Protocol, read once per loaded
// parley.yaml: a program agent's context file asks for this text when its
// worker starts, and reading the skills again each time cost the other
// agents of a busy table their CPU.
func protocolText(ws *workspace.Workspace, agent string) (string, error) {
	set, err := ws.Protocol()
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s has the roles %s.\n\n", agent, strings.Join(ws.Roles(agent), ", "))
	if set != nil {
		for _, s := range set.Skills {
			describeSkill(&out, s)
			out.WriteString("\n")
		}
	}
	if len(ws.Config.Skills) == 0 {
		out.WriteString("This workspace checks messages against no protocol: any message with a recipient goes.\n")
	}
	return out.String(), nil
}

// gmTools are the game master's campaign tools (roll_dice,
// add_inventory, update_inventory, update_character,
// get_character_stats), for an agent with the role gm in a workspace with
// a campaign: none for any other. A call a malformed sheet kept from
// changing it tells the people, as the tools agent does
// (tellSheetUnchanged).
func gmTools(ws *workspace.Workspace, agent string) []mcpserver.Extra {
	if !ws.HasRole(agent, "gm") {
		return nil
	}
	camp, err := campaigns.Find(ws.Root, ws.Config.Campaign)
	if err != nil {
		return nil
	}
	box := tools.New(camp, dice.Random())
	var out []mcpserver.Extra
	for _, t := range tools.Tools() {
		out = append(out, mcpserver.Extra{Name: t.Name, Description: t.Description, Schema: t.Parameters,
			Call: func(ctx context.Context, args json.RawMessage) (string, error) {
				res, err := box.Call(ctx, t.Name, args)
				if err != nil {
					return "", tellSheetUnchanged(ws, camp, agent, t.Name, err)
				}
				b, err := json.MarshalIndent(res, "", "  ")
				return string(b), err
			}})
	}
	return out
}

// tellSheetUnchanged sends the people the notice that agent's call of
// tool, which failed with err, changed nothing because the sheet is
// malformed (agents.SheetUnchanged: the one the tools agent sends), from
// agent's outbox; it returns err, with why the notice could not be sent
// when it could not.
func tellSheetUnchanged(ws *workspace.Workspace, camp *campaigns.Campaign, agent, tool string, err error) error {
	m := agents.SheetUnchanged(camp, agent, tool, err, ws.Undriven())
	if m == nil {
		return err
	}
	if _, _, perr := ws.Mailbox(agent).Post(m); perr != nil {
		return fmt.Errorf("%w (and the notice to %s could not be sent: %v)", err, strings.Join(ws.Undriven(), ", "), perr)
	}
	return err
}
