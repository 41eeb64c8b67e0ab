package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/mcpserver"
	"github.com/parley-dev/parley/runner/workspace"
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
			s := mcpserver.New(&mcpMailbox{ws: ws, agent: agent}, mcpserver.Options{Agent: agent, Version: buildVersion().Version, Extra: gmTools(ws, agent), Stop: ending})
			return serveMCP(c.Context, s, t)
		},
	}
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
// commands' own paths: runSend (the one check), markDone, runReply.
type mcpMailbox struct {
	ws    *workspace.Workspace
	agent string
}

// options turns a tool's message into send options.
func (b *mcpMailbox) options(m mcpserver.Outgoing) (sendOptions, error) {
	body := withNewline(m.Body)
	opts := sendOptions{From: b.agent, To: m.To, CC: m.CC, Type: m.Type, Signal: m.Signal, Body: &body, Tool: true}
	keys := make([]string, 0, len(m.Fields))
	for k := range m.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m.Fields[k]
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

// captured runs a command's action with its output kept, and returns the
// output (a sent message's id).
func captured(fn func(e *env) error) (string, error) {
	var out, errs bytes.Buffer
	err := fn(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errs})
	return strings.TrimSpace(out.String()), err
}

func (b *mcpMailbox) Send(ctx context.Context, m mcpserver.Outgoing) (string, error) {
	opts, err := b.options(m)
	if err != nil {
		return "", err
	}
	return captured(func(e *env) error { return runSend(e, b.ws, opts) })
}

func (b *mcpMailbox) Inbox(ctx context.Context) ([]mcpserver.Summary, error) {
	entries, err := b.ws.Mailbox(b.agent).List(mailbox.Inbox)
	if err != nil {
		return nil, err
	}
	out := []mcpserver.Summary{}
	for _, en := range entries {
		s := mcpserver.Summary{ID: en.ID}
		if data, err := mailbox.ReadFile(en.Path, b.ws.Config.Router.MaxMessageSize); err == nil {
			if m, err := mailbox.Parse(data); err == nil {
				s.From, _ = m.Header().Get("from")
				s.Type = workspace.TypeOf(m)
				s.Summary = summaryOf(m)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// held returns the id of a message the agent holds in the given states,
// by its id or a short id of it, and the copy the agent holds. The client
// acts as the agent: a short id is looked for among the agent's own
// messages, and no error names a message of another mailbox, nor where
// one lies (workspace.ResolveOwnID, workspace.Held); parley read, for a
// person at the workspace, looks everywhere.
func (b *mcpMailbox) held(arg string, states ...string) (string, workspace.Copy, error) {
	id, err := b.ws.ResolveOwnID(arg, b.agent, states...)
	if err != nil {
		return "", workspace.Copy{}, err
	}
	c, err := b.ws.Held(id, b.agent, states...)
	return id, c, err
}

// handling runs fn, a reply or a done, with the full id of the message
// it acts on, one the agent holds in its inbox/, cur/ or done/ (held). A
// message gone from there meanwhile is said not held, as held says it,
// not where its other copies are.
func (b *mcpMailbox) handling(arg string, fn func(id string) error) error {
	states := []string{mailbox.Inbox, mailbox.Cur, mailbox.Done}
	id, _, err := b.held(arg, states...)
	if err != nil {
		return err
	}
	err = fn(id)
	if errors.Is(err, workspace.ErrMessageNotFound) {
		if _, _, herr := b.held(id, states...); herr != nil {
			return herr
		}
	}
	return err
}

func (b *mcpMailbox) Read(ctx context.Context, arg string) (string, error) {
	_, c, err := b.held(arg, mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead, mailbox.Sent, mailbox.Outbox)
	if err != nil {
		return "", err
	}
	data, err := mailbox.ReadFile(c.Path, b.ws.Config.Router.MaxMessageSize)
	return string(data), err
}

func (b *mcpMailbox) Reply(ctx context.Context, arg string, m mcpserver.Outgoing) (string, error) {
	opts, err := b.options(m)
	if err != nil {
		return "", err
	}
	opts.Once = true // a client that calls again answers once
	var note string
	var out string
	err = b.handling(arg, func(id string) error {
		var err error
		out, err = captured(func(e *env) error {
			var err error
			note, err = runReply(e, b.ws, id, b.agent, false, opts)
			return err
		})
		return err
	})
	if note != "" {
		out += "\n" + note
	}
	return out, err
}

func (b *mcpMailbox) Done(ctx context.Context, arg string) error {
	return b.handling(arg, func(id string) error {
		_, err := captured(func(e *env) error {
			return markDone(e, b.ws, b.agent, []string{id}, "marked handled through MCP (parley mcp)")
		})
		return err
	})
}

func (b *mcpMailbox) Protocol(ctx context.Context) (string, error) {
	return protocolText(b.ws, b.agent)
}

// protocolText is what an agent is told of the protocol it speaks: its
// roles, and the message types of the workspace's skills with their
// fields (as parley skills show prints them). An MCP client reads it
// with the protocol tool; an openai agent's model is given it in its
// prompt.
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
