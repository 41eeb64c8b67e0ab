package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner/workspace"
)

func routesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "routes",
		Usage: "see how messages are routed",
		Subcommands: []*cli.Command{{
			Name:      "explain",
			Usage:     "say where a message file would go, and which rule sent it there",
			ArgsUsage: "FILE",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "from", Usage: "the sending `AGENT` (default: the owner of the outbox the file is in, or its from: field)"},
				jsonFlag,
			},
			Action: func(c *cli.Context) error {
				if err := exactArgs(c, 1, "a message FILE"); err != nil {
					return err
				}
				ws, err := openWorkspace(c)
				if err != nil {
					return err
				}
				return runExplain(e, ws, c.Args().First(), c.String("from"), c.Bool("json"))
			},
		}},
	}
}

func runExplain(e *env, ws *workspace.Workspace, path, from string, asJSON bool) error {
	if from != "" {
		if err := ws.CheckAgent(from); err != nil {
			return usagef("--from: %v", err)
		}
	}
	v, err := ws.CheckFile(path, workspace.FileCheck{Sender: from})
	if errors.Is(err, workspace.ErrNoSender) {
		return usagef("%s: say who sends it: --from AGENT (the file is in no outbox and has no from:)", path)
	}
	if err != nil {
		return err
	}
	warnings, err := ws.Lint()
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "parley: warning: %s\n", w)
	}
	if asJSON {
		if err := e.printJSON(jsonVerdict(v)); err != nil {
			return err
		}
		if !v.Accepted() {
			return errSilent
		}
		return nil
	}
	if !v.Accepted() {
		return v.Refusal // the router would refuse it, for this reason
	}
	printVerdict(e.stdout, v)
	return nil
}
