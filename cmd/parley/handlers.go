package main

import (
	"context"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/roller"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
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
func handlers() runner.Handlers {
	return runner.Handlers{
		// dice answers a roll request with a [DICE_RESULT].
		"dice": adapt(roller.New(dice.Random())),
	}
}
