package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// outsideDrivers are the drivers the runner gets from parley rather than
// having them itself: driver: openai (runner/llm), with the campaign
// tools for a game master. The agents of one runner share a session,
// whose budget they use together, and what is known of their endpoints
// (one down holds the messages of every agent that calls it).
func outsideDrivers(log *slog.Logger, getenv func(string) string) map[string]runner.DriverFunc {
	session := llm.NewSession(time.Now().UTC().Format(mailbox.TimeFormat))
	endpoints := llm.NewEndpoints()
	return map[string]runner.DriverFunc{
		workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (runner.Handler, error) {
			endpoints.Keep(filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile), time.Now())
			ag, err := openaiAgent(ws, a.Name, session, endpoints, log, getenv)
			if err != nil {
				return nil, err
			}
			return &openaiHandler{name: a.Name, session: session, endpoints: endpoints, log: log, getenv: getenv, ag: ag, made: ws}, nil
		},
	}
}

// openaiHandler hands an openai agent its messages. The agent checks its
// model's answers against parley.yaml as the runner has it loaded: when
// it was reloaded since (an agent added, a route changed), the agent is
// made again with it, so that it refuses what the router would.
type openaiHandler struct {
	name      string
	session   *llm.Session
	endpoints *llm.Endpoints
	log       *slog.Logger
	getenv    func(string) string

	mu   sync.Mutex
	ag   *llm.Agent
	made *workspace.Workspace
}

func (h *openaiHandler) Handle(ctx context.Context, d *runner.Delivery) ([]*mailbox.Message, error) {
	h.mu.Lock()
	if d.Loaded != nil && d.Loaded != h.made {
		again, err := openaiAgent(d.Loaded, h.name, h.session, h.endpoints, h.log, h.getenv)
		if err != nil {
			h.mu.Unlock()
			return nil, err
		}
		h.ag, h.made = again, d.Loaded
	}
	cur := h.ag
	h.mu.Unlock()
	kept := make([]*mailbox.Message, len(d.Context))
	for i, k := range d.Context {
		kept[i] = k.Message
	}
	return cur.Handle(ctx, d.Message, kept...)
}

// Note is what the agent has to say of itself in parley status (a budget
// it cannot keep).
func (h *openaiHandler) Note() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ag.Note()
}

// openaiAgent makes an openai agent: its prompt gets the protocol and
// the files its role may see, and a game master's model the campaign
// tools.
func openaiAgent(ws *workspace.Workspace, agent string, session *llm.Session, endpoints *llm.Endpoints, log *slog.Logger, getenv func(string) string) (*llm.Agent, error) {
	protocol, err := protocolText(ws, agent)
	if err != nil {
		return nil, err
	}
	var given []llm.Tool
	for _, t := range gmTools(ws, agent) {
		call := func(ctx context.Context, args json.RawMessage) (string, error) {
			res, err := t.Call(ctx, args)
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			if json.Compact(&b, []byte(res)) != nil {
				return res, nil
			}
			return b.String(), nil // a model pays for the spaces
		}
		journaled := func(result string) string { return tools.Journaled(t.Name, result) }
		given = append(given, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Schema, Call: call, ReadOnly: tools.ReadOnly(t.Name), Journaled: journaled})
	}
	return llm.New(llm.Options{Agent: agent, Workspace: ws, Protocol: protocol, Files: roleFiles(ws, agent), Tools: given, Session: session, Endpoints: endpoints, Logger: log, Getenv: getenv})
}

// roleFiles are the campaign files an agent's role may see, as its model
// is shown them: a player what its character may know (campaigns.View,
// the same view its program is confined to), a game master the
// campaign's story files. None without a campaign.
func roleFiles(ws *workspace.Workspace, agent string) []string {
	camp, err := campaigns.Find(ws.Root, ws.Config.Campaign)
	if err != nil {
		return nil
	}
	a, _ := ws.Agent(agent)
	var paths []string
	switch {
	case a.Character != "":
		v := camp.View(a.Character)
		paths = append(v.Read, v.Write...)
	case ws.HasRole(agent, "gm"):
		for _, f := range []string{campaigns.Overview, campaigns.WorldPrimer, campaigns.StoryState, campaigns.PartyKnowledge, campaigns.Preferences} {
			paths = append(paths, camp.Path(f))
		}
	}
	var files []string
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			continue // scenes/: too much for a prompt
		}
		files = append(files, p) // read at each call; left out while missing
	}
	return files
}
