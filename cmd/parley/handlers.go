package main

import (
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/roller"
	"github.com/parley-dev/parley/runner"
)

// handlers are the built-in agents parley.yaml can name with
// `driver: builtin` and `handler: NAME`.
func handlers() runner.Handlers {
	return runner.Handlers{
		// dice answers a roll request with a [DICE_RESULT].
		"dice": roller.New(dice.Random()),
	}
}
