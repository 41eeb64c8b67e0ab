package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/runner/workspace"
	"github.com/urfave/cli/v2"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create a workspace: parley.yaml, a mailbox per agent, the shipped skills in skills/, .gitignore",
		Description: "With --agent, writes a new parley.yaml. Without, in a directory that has a\n" +
			"parley.yaml (written by hand, or edited to add agents), it makes the missing\n" +
			"mailboxes of the agents it lists. DIR defaults to -C's directory, else the\n" +
			"current one.",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Aliases: []string{"a"}, Usage: "an agent `NAME`, or NAME:ROLE (aria:player; several roles joined by +); repeat, or separate with commas; at least one"},
			&cli.StringSliceFlag{Name: "skill", Usage: "check messages against the skill `NAME` (parley skills list); repeat"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return argsError(c, "init takes one directory (got an extra argument %q)", c.Args().Get(1))
			}
			// The workspace is made in DIR, else where -C points, else here.
			dir := c.Args().First()
			if dir == "" {
				dir = c.String("workspace")
			}
			if dir == "" {
				dir = "."
			}
			var agents []workspace.Agent
			for _, spec := range splitNames(c.StringSlice("agent")) {
				name, roles, _ := strings.Cut(spec, ":")
				a := workspace.Agent{Name: name}
				if roles != "" {
					a.Roles = strings.Split(roles, "+")
				}
				agents = append(agents, a)
			}
			if len(agents) == 0 && len(c.StringSlice("skill")) == 0 {
				if _, err := os.Stat(filepath.Join(dir, workspace.ConfigFile)); err == nil {
					return runMakeMailboxes(e, dir)
				}
			}
			if len(agents) == 0 {
				return usagef("name the agents: parley init [DIR] --agent NAME --agent NAME:ROLE...")
			}
			return runInit(e, dir, agents, splitNames(c.StringSlice("skill")))
		},
	}
}

func runInit(e *env, dir string, agents []workspace.Agent, skillNames []string) error {
	ws, err := workspace.Init(dir, agents, skillNames)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(ws.Root)
	fmt.Fprintf(e.stdout, "created workspace %s with %d agents: mailboxes/{%s}\n", abs, len(agents), strings.Join(ws.AgentNames(), ","))
	if len(skillNames) > 0 {
		fmt.Fprintf(e.stdout, "messages are checked against: %s (skills/)\n", strings.Join(skillNames, ", "))
	}
	return nil
}

// runMakeMailboxes makes the mailboxes of an existing parley.yaml.
func runMakeMailboxes(e *env, dir string) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	if err := ws.MakeMailboxes(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "workspace %s: mailboxes/{%s} ready\n", ws.Root, strings.Join(ws.AgentNames(), ","))
	return nil
}
