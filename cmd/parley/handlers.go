package main

import (
	"context"
	"slices"

	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/roller"
	"github.com/parley-dev/parley/mailbox"
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

// handlers are the built-in agents parley.yaml can name with
// `driver: builtin` and `handler: NAME`.
func handlers(ws *workspace.Workspace) runner.Handlers {
	camps := agents.Campaigns{Workspace: ws.Root, Default: ws.Config.Campaign}
	var narrators []string
	players := map[string]string{}
	for _, a := range ws.Config.Agents {
		if slices.Contains(ws.Roles(a.Name), "narrator") {
			narrators = append(narrators, a.Name)
		}
		if a.Character != "" {
			players[a.Name] = a.Character
		}
	}
	return runner.Handlers{
		// dice answers a roll request with a [DICE_RESULT].
		"dice": adapt(roller.New(dice.Random())),
		// scribe appends every [NARRATIVE], and the narrators' prose, to
		// the campaign's scene files.
		"scribe": adapt(&agents.Scribe{Campaigns: camps, Narrators: narrators}),
		// journal adds a [JOURNAL_ENTRY] to its character's journal.
		"journal": adapt(&agents.Journaler{Campaigns: camps, Players: players}),
		// state applies the gm's delta files on a [STATE_UPDATED].
		"state": adapt(&agents.StateWriter{Campaigns: camps}),
		// tools runs the gm's tools (roll_dice, update_inventory, ...)
		// for a message with a tool field, answering the result as JSON.
		"tools": adapt(&agents.Toolbox{Campaigns: camps, Players: players, Dice: dice.Random()}),
	}
}
