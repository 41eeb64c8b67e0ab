package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-dev/parley/campaigns/delta"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
)

// StateType is the type of the message the game master sends once the
// delta files are on disk.
const StateType = "STATE_UPDATED"

// StateWriter folds the game master's deltas into the campaign on a
// [STATE_UPDATED]: tmp/gm-state-delta.md into story-state.md and
// tmp/party-knowledge-delta.md into party-knowledge.md (see
// delta.Apply). When every line went in it answers nothing; when a line
// was kept in its delta (an unknown keyword, a secret in the party's
// file) or a delta could not be applied, it tells the sender, in an
// informal message, what was kept and why, so the game master can fix
// it. The deltas stay on disk until they are applied, so nothing the
// game master wrote is lost either way.
type StateWriter struct {
	Campaigns
}

// Handle applies the deltas of one [STATE_UPDATED].
func (s *StateWriter) Handle(ctx context.Context, in *mailbox.Message) ([]*mailbox.Message, error) {
	if typeOf(in) != StateType {
		return nil, nil
	}
	camp, err := s.For(in)
	if err != nil {
		return nil, err
	}
	party, err := camp.Party()
	if err != nil {
		return nil, err
	}
	rep, err := delta.Apply(ctx, camp.Root, delta.Options{Party: party})
	var trouble []string
	if err != nil {
		if !errors.Is(err, delta.ErrMissingTarget) && !errors.Is(err, delta.ErrChanged) && !errors.Is(err, textfile.ErrConflict) {
			return nil, err // a disk problem: the runner tries again
		}
		trouble = append(trouble, camp.Short(err).Error())
	}
	for _, f := range rep.Files {
		for _, k := range f.Kept {
			trouble = append(trouble, fmt.Sprintf("%s: kept in %s: %v", f.Target, f.Delta, k))
		}
		for _, k := range f.Warnings {
			trouble = append(trouble, fmt.Sprintf("%s: %v (written all the same; check the sheet)", f.Target, k))
		}
	}
	if len(trouble) == 0 {
		return nil, nil
	}
	return []*mailbox.Message{mailbox.Reply(in, fmt.Appendf(nil,
		"Applied the deltas of campaign %s, but:\n\n- %s\n\nA line kept in a delta file stays in tmp/ until it is fixed; send [%s] again then.\n",
		camp.Name, strings.Join(trouble, "\n- "), StateType))}, nil
}
