package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a workspace: parley.yaml, a mailbox per agent, .gitignore",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Aliases: []string{"a"}, Usage: "an agent `NAME` (repeat, or separate with commas); at least one"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("init takes one directory, got %d arguments", c.NArg())
			}
			dir := c.Args().First()
			if dir == "" {
				dir = "."
			}
			var agents []string
			for _, a := range c.StringSlice("agent") {
				for _, n := range strings.Split(a, ",") {
					if n = strings.TrimSpace(n); n != "" {
						agents = append(agents, n)
					}
				}
			}
			if len(agents) == 0 {
				return usagef("name the agents: parley init [DIR] --agent NAME --agent NAME...")
			}
			return runInit(e, dir, agents)
		},
	}
}

func runInit(e *env, dir string, agents []string) error {
	ws, err := runner.InitWorkspace(dir, agents)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(ws.Root)
	fmt.Fprintf(e.stdout, "created workspace %s with %d agents: mailboxes/{%s}\n", abs, len(agents), strings.Join(ws.AgentNames(), ","))
	return nil
}
