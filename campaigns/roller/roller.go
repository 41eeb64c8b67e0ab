// Package roller is the dice agent: a built-in handler that rolls what a
// message asks for and answers the sender with a [DICE_RESULT] in the D&D
// protocol's notation ("1d20+5 = [8]+5 = 13").
//
// A roll request names the dice in a `dice:` or `roll:` field, or, sent to
// the dice agent itself rather than broadcast, on the first line of its
// body (after the fields of a tag-first message). A broadcast without a
// dice field — a [NARRATIVE] — is not a request, and is not answered. `dc:` judges the total (success, failure, and on a d20
// check critical_success or critical_failure). With `character:` and
// `check:` the answer is a [DICE_RESULT], as the D&D protocol writes one;
// without them it is an informal answer with the same roll, dc and result
// fields (a [DICE_RESULT] requires both). A request that cannot be rolled
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
	expr, asked := request(in)
	if !asked {
		return nil, nil // not a roll request: nothing to answer
	}
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
	character, _ := in.Payload().Get("character")
	check, _ := in.Payload().Get("check")
	if character != "" && check != "" {
		out.Set("type", ResultType)
	}
	for _, f := range [][2]string{{"character", character}, {"check", check}} {
		if f[1] != "" {
			out.Set(f[0], f[1])
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

// request returns the dice a message asks for, and whether it is a roll
// request at all: one with a dice: or roll: field, or one sent to the
// dice agent rather than broadcast, whose body's first line holds the
// dice.
func request(m *mailbox.Message) (expr string, asked bool) {
	for _, k := range []string{"dice", "roll"} {
		if v, ok := m.Payload().Get(k); ok {
			return strings.TrimSpace(v), true
		}
	}
	if to, _ := m.Header().Get("to"); to == "*" {
		return "", false
	}
	for _, line := range strings.Split(string(m.Body), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line, true
		}
	}
	return "", true
}
