package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/runner"
)

// campaignFlag names the campaign a command works on.
var campaignFlag = &cli.StringFlag{Name: "campaign", Usage: "the campaign `NAME` (default: campaign: in parley.yaml, or the workspace's only campaign)"}

// openCampaign opens the campaign named by --campaign (or by name, when
// given), else the workspace's default.
func openCampaign(c *cli.Context, ws *runner.Workspace, name string) (*campaigns.Campaign, error) {
	if name == "" {
		name = c.String("campaign")
	}
	if name == "" {
		name = ws.Config.Campaign
	}
	return campaigns.Find(ws.Root, name)
}

func campaignCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "campaign",
		Usage: "make, list, check D&D campaigns (campaigns/NAME/), and apply the GM's state deltas",
		Subcommands: []*cli.Command{
			{
				Name:      "new",
				Usage:     "make a campaign: every file of the layout with the sections the tools expect, and the directories",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "the campaign's NAME (lower-case words joined by -)"); err != nil {
						return err
					}
					ws, err := workspace(c)
					if err != nil {
						return err
					}
					camp, err := campaigns.New(ws.Root, c.Args().First())
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "made campaign %s in %s\n", camp.Name, rel(ws, camp.Root))
					fmt.Fprintf(e.stdout, "next: put the character sheets in %s/party/, then `parley campaign check %s`\n", rel(ws, camp.Root), camp.Name)
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list the workspace's campaigns",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					ws, err := workspace(c)
					if err != nil {
						return err
					}
					names, err := campaigns.List(ws.Root)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						if names == nil {
							names = []string{}
						}
						return e.printJSON(names)
					}
					for _, n := range names {
						mark := ""
						if n == ws.Config.Campaign {
							mark = "  (campaign: in parley.yaml)"
						}
						fmt.Fprintf(e.stdout, "%s%s\n", n, mark)
					}
					return nil
				},
			},
		},
	}
}

// rel returns path relative to the workspace root, for messages.
func rel(ws *runner.Workspace, path string) string {
	if r, err := filepath.Rel(ws.Root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}
