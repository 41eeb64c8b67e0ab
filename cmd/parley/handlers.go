package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/roller"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// messageHandler is what the built-in agents of other packages provide:
// they answer a message with messages, and know nothing of the runner.
type messageHandler interface {
	Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error)
}

// adapt makes a runner handler of a message handler.
func adapt(h messageHandler) runner.Handler {
	return runner.HandlerFunc(func(ctx context.Context, d *runner.Delivery) ([]*mailbox.Message, error) {
		return h.Handle(ctx, d.Message)
	})
}

// teamLead makes the D&D team lead a runner handler: it needs the name of
// the agent it is (its state is in that agent's mailbox), starts the
// session when the runner starts, and keeps the deadlines of its joins.
type teamLead struct{ *agents.TeamLead }

func (t teamLead) Handle(ctx context.Context, d *runner.Delivery) ([]*mailbox.Message, error) {
	out, note, err := t.TeamLead.HandleNoted(ctx, d.Agent, d.Message)
	d.Note = note
	return out, err
}

// pipeline makes the dev pipeline's orchestrator a runner handler: its
// state is in the mailbox of the agent it is.
type pipeline struct{ *orchestrator.Orchestrator }

func (p pipeline) Handle(ctx context.Context, d *runner.Delivery) ([]*mailbox.Message, error) {
	return p.Orchestrator.Handle(ctx, d.Agent, d.Message)
}

// planCheckpoint is the orchestrator's git checkpoint with `git: auto`:
// the plan files (and campaigns) committed; nothing to commit is no
// error. Without `git: auto` there is none.
func planCheckpoint(ws *workspace.Workspace, log *slog.Logger, environ []string) func(context.Context, string) error {
	if ws.Config.Git != workspace.GitAuto {
		return nil
	}
	return func(ctx context.Context, message string) error {
		res, err := checkpoint.Save(ctx, ws.Root, checkpoint.Options{Message: message, Environ: environ})
		if errors.Is(err, checkpoint.ErrNothing) {
			return nil
		}
		if err == nil {
			log.Info("git checkpoint", "commit", res.Commit, "files", len(res.Files))
		}
		return err
	}
}

// joinWait is how long the team lead waits for the players' answers to an
// [AWAIT_PLAYERS]: as long as the timeouts of parley.yaml wait for an
// answer to a [GM_TO_PLAYER] (after:, then again after the nudge), else
// agents.DefaultJoinWait.
func joinWait(ws *workspace.Workspace) time.Duration {
	for _, t := range ws.Config.Timeouts {
		if slices.Contains(t.Type, agents.GMToPlayerType) && t.After > 0 {
			return 2 * t.After
		}
	}
	return agents.DefaultJoinWait
}

// handlers are the built-in agents parley.yaml can name with
// `driver: builtin` and `handler: NAME`. log receives what they do on
// their own (the team lead's start and deadlines).
func handlers(ws *workspace.Workspace, log *slog.Logger, environ []string) runner.Handlers {
	return runner.Handlers{
		// dice answers a roll request with a [DICE_RESULT].
		"dice": adapt(roller.New(dice.Random())),
		// scribe appends every [NARRATIVE], and the narrators' prose, to
		// the campaign's scene files.
		"scribe": remake(ws, func(ws *workspace.Workspace) messageHandler {
			return &agents.Scribe{Campaigns: campaignsOf(ws), Narrators: narratorsOf(ws)}
		}),
		// journal adds a [JOURNAL_ENTRY] to its character's journal.
		"journal": remake(ws, func(ws *workspace.Workspace) messageHandler {
			return &agents.Journaler{Campaigns: campaignsOf(ws), Players: playersOf(ws)}
		}),
		// state applies the gm's delta files on a [STATE_UPDATED].
		"state": remake(ws, func(ws *workspace.Workspace) messageHandler {
			return &agents.StateWriter{Campaigns: campaignsOf(ws)}
		}),
		// tools runs the gm's tools (roll_dice, update_inventory, ...)
		// for a message with a tool field, answering the result as JSON.
		"tools": remake(ws, func(ws *workspace.Workspace) messageHandler {
			return &agents.Toolbox{Campaigns: campaignsOf(ws), Players: playersOf(ws), Dice: dice.Random(), People: ws.Undriven()}
		}),
		// team-lead starts the session, fans an [AWAIT_PLAYERS] out to
		// the players and joins their answers, applies the deltas of a
		// [STATE_UPDATED], and closes the session on [SESSION_END].
		// orchestrator drives the dev pipeline: triage, research, plan,
		// waves of tasks, reviews, approvals and revisions, escalations
		// to the person, deciding from each message's signal and fields.
		"orchestrator": pipeline{&orchestrator.Orchestrator{Workspace: ws, Log: log, Checkpoint: planCheckpoint(ws, log, environ)}},
		"team-lead":    teamLead{newTeamLead(ws, log, environ)},
	}
}

// newTeamLead returns the D&D team lead of ws: the built-in agent's
// handler, and what a seat saves the session's last journal entries with
// (seat.saveAfterEnd), as it commits the session's saves.
func newTeamLead(ws *workspace.Workspace, log *slog.Logger, environ []string) *agents.TeamLead {
	return &agents.TeamLead{Campaigns: campaignsOf(ws), Workspace: ws, Wait: joinWait(ws), Git: ws.Config.Git == workspace.GitAuto, GitEnviron: environ, Log: log}
}

// campaignsOf returns the campaigns of a workspace, its campaign: the
// default.
func campaignsOf(ws *workspace.Workspace) agents.Campaigns {
	return agents.Campaigns{Workspace: ws.Root, Default: ws.Config.Campaign}
}

// narratorsOf returns the agents with the role narrator.
func narratorsOf(ws *workspace.Workspace) []string {
	var narrators []string
	for _, a := range ws.Config.Agents {
		if slices.Contains(ws.Roles(a.Name), "narrator") {
			narrators = append(narrators, a.Name)
		}
	}
	return narrators
}

// playersOf returns the character each agent that plays one plays.
func playersOf(ws *workspace.Workspace) map[string]string {
	players := map[string]string{}
	for _, a := range ws.Config.Agents {
		if a.Character != "" {
			players[a.Name] = a.Character
		}
	}
	return players
}

// remade is a built-in handler made from parley.yaml (its campaign, the
// narrators, the players' characters): made again from the workspace
// as the runner loads it again (runner.Reloader), so that an agent
// added, removed or given another character counts at once.
type remade struct {
	make func(*workspace.Workspace) messageHandler
	cur  atomic.Value // holds a handlerBox
	// mu holds one call at a time, across the handlers made: each
	// serialises its own calls (the toolbox reads, changes and saves a
	// sheet), and one made again mid-call must not run beside it.
	mu sync.Mutex
}

// handlerBox holds a messageHandler for atomic.Value, which needs one
// concrete type.
type handlerBox struct{ messageHandler }

func remake(ws *workspace.Workspace, make func(*workspace.Workspace) messageHandler) *remade {
	r := &remade{make: make}
	r.Reload(ws)
	return r
}

func (r *remade) Reload(ws *workspace.Workspace) { r.cur.Store(handlerBox{r.make(ws)}) }

func (r *remade) Handle(ctx context.Context, d *runner.Delivery) ([]*mailbox.Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.cur.Load().(handlerBox).messageHandler
	if n, ok := h.(notingHandler); ok {
		msgs, note, err := n.HandleNoted(ctx, d.Message)
		d.Note = note
		return msgs, err
	}
	return h.Handle(ctx, d.Message)
}

// notingHandler is a messageHandler with something to say of a message
// it handled, for the journal's line of it (the scribe: the scene file a
// narrative went to, and why).
type notingHandler interface {
	HandleNoted(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, string, error)
}

// runnerOptions are the options of every runner parley starts: its log, the
// built-in agents, the openai driver, the players' programs confined to what their
// characters may know, and what a program agent's context file says.
func runnerOptions(e *env, ws *workspace.Workspace, log *slog.Logger) runner.Options {
	environ := e.environ()
	return runner.Options{Logger: log, Handlers: handlers(ws, log, environ), Drivers: outsideDrivers(log, e.getenv), Confine: confiner(log, e.getenv), Brief: brief, Environ: environ, Getenv: e.getenv}
}

// brief is what a command or session agent's context file gives beside
// its messages: the protocol as parley mcp's protocol tool and an openai
// agent's prompt give it, and the files its role may see, as an openai
// agent's model is shown them (roleFiles).
func brief(ws *workspace.Workspace, agent string) (runner.Briefing, error) {
	protocol, err := protocolText(ws, agent)
	if err != nil {
		return runner.Briefing{}, err
	}
	return runner.Briefing{Protocol: protocol, Files: roleFiles(ws, agent)}, nil
}

// withUntilIdle returns the options with UntilIdle set.
func withUntilIdle(o runner.Options) runner.Options {
	o.UntilIdle = true
	return o
}
