package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
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
	data, err := mailbox.ReadFile(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return err
	}
	m, err := mailbox.Parse(data)
	if err != nil {
		var pe *mailbox.ParseError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return err
	}
	if from == "" {
		if agent, _, ok := mailboxOf(ws, path); ok {
			from = agent
		} else if f, ok := m.Header().Get("from"); ok {
			from = f
		} else {
			return usagef("say who sends it: --from AGENT (the file is in no outbox and has no from:)")
		}
	}
	if err := ws.CheckAgent(from); err != nil {
		return usagef("--from: %v", err)
	}
	a, err := ws.Explain(path, from, m)
	if err != nil {
		return err // the router would refuse it, for this reason
	}
	if asJSON {
		return e.printJSON(a)
	}
	typ, _ := m.Header().Get("type")
	fmt.Fprintf(e.stdout, "%s: from %s, type %s\n", path, from, dash(typ))
	if len(a.Named) > 0 {
		fmt.Fprintf(e.stdout, "  named in to:/cc:    %s\n", strings.Join(a.Named, ", "))
	}
	if len(a.DefaultRoles) > 0 {
		fmt.Fprintf(e.stdout, "  by the protocol:    %s (the type goes to %s)\n", dash(strings.Join(a.Default, ", ")), strings.Join(a.DefaultRoles, " or "))
	}
	for _, r := range a.Routes {
		fmt.Fprintf(e.stdout, "  by %s (%s:%d): %s\n", r.Key, workspace.ConfigFile, r.Line, dash(strings.Join(r.Agents, ", ")))
	}
	fmt.Fprintf(e.stdout, "  goes to:            %s\n", strings.Join(a.Recipients, ", "))
	return nil
}
