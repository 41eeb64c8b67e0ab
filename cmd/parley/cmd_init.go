package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/campaigns"
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
			"current one.\n\n" +
			"--template dnd lays out a D&D table instead: a parley.yaml with a game master,\n" +
			"a narrator, the built-in team lead, your seat (parley play), one agent per\n" +
			"character and the built-in scribe, journal and tools; a campaign with a sheet\n" +
			"for each character (--human yours, --ai the AI players'), and preferences.md\n" +
			"naming yours. Without DIR it lays the table out here only when here is empty\n" +
			"(dot files aside): name the directory, or . for this one.",
		ArgsUsage: "[DIR]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Aliases: []string{"a"}, Usage: "an agent `NAME`, or NAME:ROLE (aria:player; several roles joined by +); repeat, or separate with commas; at least one"},
			&cli.StringSliceFlag{Name: "skill", Usage: "check messages against the skill `NAME` (parley skills list); repeat"},
			&cli.StringFlag{Name: "template", Usage: "lay out a `KIND` of workspace: dnd (a D&D table)"},
			&cli.StringFlag{Name: "campaign", Value: "my-campaign", Usage: "with --template dnd: the campaign's `NAME`"},
			&cli.StringFlag{Name: "human", Usage: "with --template dnd: the `CHARACTER` you play (tilda-brannock)"},
			&cli.StringSliceFlag{Name: "ai", Usage: "with --template dnd: a `CHARACTER` an AI player plays; repeat"},
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
			named := dir != ""
			if dir == "" {
				dir = "."
			}
			switch c.String("template") {
			case "":
			case "dnd":
				if len(c.StringSlice("agent")) > 0 || len(c.StringSlice("skill")) > 0 {
					return usagef("--template dnd lays out its own agents and skills: leave out --agent and --skill")
				}
				if !named {
					if err := tableHere(c); err != nil {
						return err
					}
				}
				return runInitTable(e, dir, dndTable{Campaign: c.String("campaign"), Human: c.String("human"), AI: splitList(c.StringSlice("ai"))})
			default:
				return usagef("--template %q: the templates are: dnd", c.String("template"))
			}
			if c.IsSet("campaign") || c.IsSet("human") || c.IsSet("ai") {
				return usagef("--campaign, --human and --ai go with --template dnd")
			}
			var agents []workspace.Agent
			for _, spec := range splitList(c.StringSlice("agent")) {
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
			return runInit(e, dir, agents, splitList(c.StringSlice("skill")))
		},
	}
}

func runInit(e *env, dir string, agents []workspace.Agent, skillNames []string) error {
	ws, err := workspace.Init(dir, agents, skillNames)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(ws.Root)
	fmt.Fprintf(e.stdout, "created workspace %s with %d %s: mailboxes/{%s}\n", abs, len(agents), plural(len(agents), "agent", "agents"), strings.Join(ws.AgentNames(), ","))
	if len(skillNames) > 0 {
		fmt.Fprintf(e.stdout, "messages are checked against: %s (skills/)\n", strings.Join(skillNames, ", "))
	}
	sayMergeDriver(e, ws.Root)
	return nil
}

// sayMergeDriver sets parley's merge driver up in the git clone that
// holds the workspace at root, if any (configureMergeDriver), and says
// so; one it cannot set up is warned of: the workspace is made all the
// same, and its journals are merged with union.
func sayMergeDriver(e *env, root string) {
	ok, err := configureMergeDriver(root)
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "parley: warning: git: cannot set up parley's merge driver (journals are merged with union, which may cut an entry short): %v\n", err)
	case ok:
		fmt.Fprintf(e.stdout, "git: this clone merges the journals and the decision log with parley merge-file (merge.%s in its config and info/attributes)\n", mergeDriver)
	}
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
	sayMergeDriver(e, ws.Root)
	return nil
}

// runInitTable lays out a D&D table in dir: its parley.yaml, its campaign
// with a sheet per character, and preferences.md naming the human's.
func runInitTable(e *env, dir string, t dndTable) error {
	if err := t.check(); err != nil {
		return err
	}
	ws, err := workspace.InitConfig(dir, t.config())
	if err != nil {
		return err
	}
	camp, err := campaigns.New(ws.Root, t.Campaign)
	if err != nil {
		return err
	}
	for _, c := range append([]string{t.Human}, t.AI...) {
		if c == "" {
			continue
		}
		if _, err := camp.NewSheet(c, campaigns.LayoutMarkdown); err != nil {
			return err
		}
	}
	if t.Human != "" {
		if err := camp.WritePrefs(t.Human, "", ""); err != nil {
			return err
		}
	}
	abs, _ := filepath.Abs(ws.Root)
	fmt.Fprintf(e.stdout, "created a D&D table in %s: agents %s\n", abs, strings.Join(ws.AgentNames(), ", "))
	fmt.Fprintf(e.stdout, "campaign %s: fill in campaigns/%s/ (the sheets in party/, story-state.md, world-primer.md)\n", t.Campaign, t.Campaign)
	if t.Human == "" {
		fmt.Fprintln(e.stdout, "your character: none yet (--human NAME names yours): `parley character new NAME` writes a sheet; `parley play` asks which one you play of those no AI agent plays, and writes preferences.md")
	}
	sayMergeDriver(e, ws.Root)
	fmt.Fprintln(e.stdout, "next: give gm, narrator and the players programs in parley.yaml (driver: command, run: [...]), `git init`, then `parley play`")
	return nil
}

// tableHere refuses to lay out a D&D table in the current directory, DIR
// unnamed, when the directory holds files of its own (dot files such as
// .git aside) and no parley.yaml: a table is a tree of its own (campaign,
// mailboxes, skills), and a flag that takes a value easily eats the DIR
// meant for it (`--human mytable` names your character mytable), which
// once spilled a table into /tmp. `parley init --template dnd ... .`
// names the current directory, and lays the table out there.
func tableHere(c *cli.Context) error {
	if _, err := os.Stat(workspace.ConfigFile); err == nil {
		return nil // a workspace already: init says so
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		return err
	}
	var own []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			own = append(own, e.Name())
		}
	}
	if len(own) == 0 {
		return nil
	}
	here, _ := os.Getwd()
	line := "parley init --template dnd"
	for _, f := range []string{"campaign", "human"} {
		if c.IsSet(f) {
			line += " --" + f + " " + c.String(f)
		}
	}
	for _, ai := range c.StringSlice("ai") {
		line += " --ai " + ai
	}
	hint := ""
	if c.IsSet("human") {
		hint = fmt.Sprintf("; --human takes the character you play, here %q", c.String("human"))
	}
	return usagef("no directory named, and the current directory %s holds files (%s) and no %s: nothing was written; a table is laid out in a directory of its own: `%s DIR`, or `%s .` to lay it out here%s",
		here, listSome(own, 3), workspace.ConfigFile, line, line, hint)
}

// listSome joins the first n names, saying how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
