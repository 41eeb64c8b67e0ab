package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/dice"
)

func rollCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "roll",
		Usage:     "roll dice, one line per expression, in the D&D protocol's notation: 1d20+5 = [8]+5 = 13",
		ArgsUsage: "EXPR...",
		UsageText: "parley roll [--seed N] [--dc N] [--as AGENT] [--json] EXPR...\n" +
			"parley roll 1d20+5 '2d20kh1 + 3' 4d6dl1 --dc 15",
		Description: "Each argument is one expression; quote one that has spaces.\n\n" +
			"   NdS        N dice of S sides; N defaults to 1 (d20 = 1d20)\n" +
			"   d%  dF     a d100; a Fudge die (-1, 0 or +1)\n" +
			"   khN kN     keep the highest N dice (N defaults to 1)\n" +
			"   klN        keep the lowest N\n" +
			"   dlN dN     drop the lowest N\n" +
			"   dhN        drop the highest N\n" +
			"   !          explode: the highest face adds another die\n" +
			"   !>N        explode above N (also !>=N, !<N, !<=N, and !N: on N)\n" +
			"   !!         compound: the extra rolls add into the die\n" +
			"   !p         penetrating: each extra die counts 1 less\n" +
			"   rN r<N     reroll N (or below N) again and again (also r>N, r<=N, r>=N)\n" +
			"   roN        reroll once (ro1, ro<3)\n" +
			"   + - * / ( ) arithmetic; division rounds toward zero\n\n" +
			"Struck faces (~~2~~) do not count: dropped dice and rerolled faces. A \"!\"\n" +
			"marks a face that exploded. With --dc, a total of at least N is a success;\n" +
			"on a d20 check (d20, 2d20kh1, 2d20kl1) a natural 20 is critical_success and\n" +
			"a natural 1 critical_failure. A bad expression exits 1, naming the column.",
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "seed", Usage: "roll from the seed `N`: the same seed and expressions roll the same dice", DefaultText: "a random seed"},
			&cli.Int64Flag{Name: "dc", Usage: "judge each total against the difficulty class `N`: success, failure, critical_success, critical_failure", DefaultText: "none"},
			asFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return argsError(c, "roll needs a dice expression, such as 1d20+5")
			}
			opts := rollOptions{Exprs: c.Args().Slice(), JSON: c.Bool("json")}
			if c.IsSet("dc") {
				dc := c.Int64("dc")
				opts.DC = &dc
			}
			src := dice.Random()
			if c.IsSet("seed") {
				src = dice.Seeded(c.Uint64("seed"))
			}
			// In a workspace, each roll is journaled as a model's
			// roll_dice is; outside one, it is only printed.
			ws, err := openWorkspace(c)
			if err != nil {
				ws = nil
			}
			who, err := changer(e, c, ws)
			if err != nil {
				return err
			}
			opts.Rolled = func(l rollLine) {
				args := map[string]any{"dice": l.Expr} // as roll_dice takes them
				if l.DC != nil {
					args["dc"] = *l.DC
				}
				// The roll as the DICE_RESULT says it, not every die.
				res := struct {
					Roll    string       `json:"roll"`
					Total   int64        `json:"total"`
					DC      *int64       `json:"dc,omitempty"`
					Outcome dice.Outcome `json:"result,omitempty"`
				}{l.Roll, l.Total, l.DC, l.Outcome}
				journalTool(e, ws, who, "roll_dice", args, res, nil)
			}
			return runRoll(e, opts, src)
		},
	}
}

type rollOptions struct {
	Exprs []string
	DC    *int64 // nil: no DC
	JSON  bool
	// Rolled, when set, is called with each roll, once all are rolled
	// (for the journal).
	Rolled func(rollLine)
}

// rollLine is one expression's roll as --json prints it, one object a
// line. Its "roll", "dc" and "result" are the fields of the protocol's
// DICE_RESULT message.
type rollLine struct {
	*dice.Result
	DC      *int64       `json:"dc,omitempty"`
	Outcome dice.Outcome `json:"result,omitempty"`
}

// runRoll parses every expression, then rolls them in order from src,
// then prints them: a bad expression prints nothing but the error.
func runRoll(e *env, opts rollOptions, src dice.Source) error {
	exprs := make([]*dice.Expr, len(opts.Exprs))
	for i, s := range opts.Exprs {
		x, err := dice.Parse(s)
		if err != nil {
			return withSpacesHint(err, opts.Exprs)
		}
		exprs[i] = x
	}
	lines := make([]rollLine, len(exprs))
	for i, x := range exprs {
		r, err := x.Roll(src)
		if err != nil {
			return err
		}
		lines[i] = rollLine{Result: r}
		if opts.DC != nil {
			lines[i].DC, lines[i].Outcome = opts.DC, r.Against(*opts.DC)
		}
	}
	for _, l := range lines {
		if opts.Rolled != nil {
			opts.Rolled(l)
		}
		if l.Capped {
			fmt.Fprintf(e.stderr, "parley: %s: a die reached the limit of %d rerolls or %d explosions and stopped there\n", l.Expr, dice.MaxRerolls, dice.MaxExplosions)
		}
		if opts.JSON {
			if err := e.printJSONLine(l); err != nil {
				return err
			}
			continue
		}
		text := l.Roll
		if l.DC != nil {
			text += fmt.Sprintf(" vs DC %d: %s", *l.DC, l.Outcome)
		}
		if _, err := fmt.Fprintln(e.stdout, text); err != nil {
			return err
		}
	}
	return nil
}

// withSpacesHint adds a hint to a parse error when the arguments read as
// one expression the shell split at its spaces: `parley roll 1d20 + 5`.
func withSpacesHint(err error, args []string) error {
	var de *dice.Error
	if len(args) < 2 || !errors.As(err, &de) {
		return err
	}
	joined := strings.Join(args, " ")
	if _, jerr := dice.Parse(joined); jerr != nil {
		return err
	}
	return fmt.Errorf("%w\nhint: each argument is one expression; to roll %q, quote it: parley roll '%s'", err, joined, joined)
}
