package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/runner/workspace"
)

// asFlag names who makes a change to a campaign at the command line, for
// the journal's line of it.
var asFlag = &cli.StringFlag{Name: "as", Usage: "who does it, for its line in parley log: the `AGENT` (default: the workspace's gm)"}

// changer returns the agent a change made at the command line is
// journaled as: --as, else the agent whose program runs the command
// ($PARLEY_AGENT, set by its driver), else the workspace's gm (the first
// agent with the role gm), else "" (nobody known). ws is nil outside a
// workspace, where --as is refused: there is no journal to name anyone
// in.
func changer(e *env, c *cli.Context, ws *workspace.Workspace) (string, error) {
	as := c.String("as")
	if as != "" {
		if ws == nil {
			return "", usagef("--as: not in a parley workspace: there is no journal to say who did it in")
		}
		if err := ws.CheckAgent(as); err != nil {
			return "", usagef("--as: %v", err)
		}
		return as, nil
	}
	if ws == nil {
		return "", nil
	}
	if a := e.getenv("PARLEY_AGENT"); a != "" && ws.CheckAgent(a) == nil {
		return a, nil
	}
	for _, a := range ws.AgentNames() {
		if ws.HasRole(a, "gm") {
			return a, nil
		}
	}
	return "", nil
}

// journalTool journals a change a person made to a campaign at the
// command line as the model's tool call that makes it is journaled
// (workspace.ToolCall: outcome tool, the tool's name, its arguments as
// the tool takes them, the result as tools.Journaled keeps it), so that
// parley log tells the fight whoever ran it. args and result are written as JSON (a string or
// json.RawMessage as it is). What was done is done: a journal that
// cannot be written is a warning (journalLine). Nothing is journaled
// outside a workspace (ws nil).
func journalTool(e *env, ws *workspace.Workspace, agent, tool string, args, result any, err error) {
	if ws == nil {
		return
	}
	journalLine(e, ws, workspace.ToolCall(agent, "", tool, asJSON(args), tools.Journaled(tool, asJSON(result)), err))
}

// asJSON writes v as one line of JSON; a string or json.RawMessage
// holding JSON is compacted, one that does not is written as it is.
func asJSON(v any) string {
	var raw []byte
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		raw = []byte(v)
	case json.RawMessage:
		raw = v
	default:
		// As a person reads it: "HP 14 -> 7", not "-\u003e".
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Sprint(v)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// changed is the result journaled for a change made at the command
// line: what the command said of it, as a tool answers
// ({"success": true, "message": ...}).
func changed(said string) any {
	return struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}{true, said}
}

// openAsChanger opens the workspace of a command that changes a campaign
// at the command line, and says who makes the change (changer).
func openAsChanger(e *env, c *cli.Context) (*workspace.Workspace, string, error) {
	ws, err := openWorkspace(c)
	if err != nil {
		return nil, "", err
	}
	who, err := changer(e, c, ws)
	if err != nil {
		return nil, "", err
	}
	return ws, who, nil
}
