// Package roller is the dice agent: a built-in handler that rolls what a
// message asks for and answers the sender with a [DICE_RESULT] in the D&D
// protocol's notation ("1d20+5 = [8]+5 = 13").
//
// The request names the dice in a `dice:` or `roll:` field, or on the
// first line of its body; `dc:` judges the total (success, failure, and
// on a d20 check critical_success or critical_failure); `character:` and
// `check:` are carried into the answer. A request that cannot be rolled
// is answered with the reason, as text, so that the one who asked can fix
// it.
package roller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/mailbox"
)

// ResultType is the type of the answer.
const ResultType = "DICE_RESULT"

// Roller is the handler. It is safe for use by several agents at once.
type Roller struct {
	mu  sync.Mutex
	src dice.Source
}

// New returns a roller that rolls with src (dice.Random() for play,
// dice.Seeded(n) for rolls that can be repeated).
func New(src dice.Source) *Roller { return &Roller{src: src} }

// Handle answers one request, delivered to the dice agent.
func (r *Roller) Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error) {
	expr := request(in)
	var body strings.Builder
	out := mailbox.Reply(in, nil)
	if expr == "" {
		fmt.Fprintf(&body, "Nothing to roll: name the dice in a dice: field (dice: 1d20+5).\n")
		out.Body = []byte(body.String())
		return []*mailbox.Message{out}, nil
	}
	var dc *int64
	if v, ok := in.Payload().Get("dc"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			fmt.Fprintf(&body, "Cannot judge against dc %q: not a whole number.\n", v)
			out.Body = []byte(body.String())
			return []*mailbox.Message{out}, nil
		}
		dc = &n
	}
	r.mu.Lock()
	res, err := dice.Roll(expr, r.src)
	r.mu.Unlock()
	if err != nil {
		fmt.Fprintf(&body, "Cannot roll %q: %v\n", expr, err)
		out.Body = []byte(body.String())
		return []*mailbox.Message{out}, nil
	}
	out.Set("type", ResultType)
	for _, k := range []string{"character", "check"} {
		if v, ok := in.Payload().Get(k); ok {
			out.Set(k, v)
		}
	}
	out.Set("roll", res.Roll)
	line := res.Roll
	if dc != nil {
		outcome := res.Against(*dc)
		out.SetValue("dc", strconv.FormatInt(*dc, 10))
		out.Set("result", string(outcome))
		line += fmt.Sprintf(" vs DC %d: %s", *dc, outcome)
	}
	fmt.Fprintf(&body, "%s\n", line)
	out.Body = []byte(body.String())
	return []*mailbox.Message{out}, nil
}

// request returns the dice a message asks for.
func request(m *mailbox.Message) string {
	for _, k := range []string{"dice", "roll"} {
		if v, ok := m.Payload().Get(k); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	for _, line := range strings.Split(string(m.Body), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
