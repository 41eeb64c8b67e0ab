package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/delta"
	"github.com/parley-dev/parley/runner/workspace"
)

// campaignFlag names the campaign a command works on.
var campaignFlag = &cli.StringFlag{Name: "campaign", Usage: "the campaign `NAME` (default: campaign: in parley.yaml, or the workspace's only campaign)"}

// openCampaign opens the workspace, and in it the campaign name, else the
// one --campaign names, else campaign: in parley.yaml, else the only one.
func openCampaign(c *cli.Context, name string) (*campaigns.Campaign, *workspace.Workspace, error) {
	ws, err := openWorkspace(c)
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		name = c.String("campaign")
	}
	fromConfig := name == "" && ws.Config.Campaign != ""
	if name == "" {
		name = ws.Config.Campaign
	}
	camp, err := campaigns.Find(ws.Root, name)
	if fromConfig && errors.Is(err, campaigns.ErrNotFound) {
		err = ws.CampaignConfigError(err)
	}
	return camp, ws, err
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
					ws, err := openWorkspace(c)
					if err != nil {
						return err
					}
					camp, err := campaigns.New(ws.Root, c.Args().First())
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "made campaign %s in %s\n", camp.Name, ws.Short(camp.Root))
					fmt.Fprintf(e.stdout, "next: put the character sheets in %s/party/, then `parley campaign check %s`\n", ws.Short(camp.Root), camp.Name)
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
					ws, err := openWorkspace(c)
					if err != nil {
						return err
					}
					names, err := campaigns.List(ws.Root)
					if err != nil {
						return err
					}
					for _, n := range campaigns.Strays(ws.Root) {
						fmt.Fprintf(e.stderr, "parley: %s/%s is not a campaign: its name is not kebab-case (rename it, like %s)\n", campaigns.Dir, n, campaigns.Kebab(n))
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
			{
				Name:      "check",
				Usage:     "say what of the campaign's layout is present, missing or malformed; parses every sheet (exit 1 when a required file is missing or a file is malformed)",
				ArgsUsage: "[CAMPAIGN]",
				Flags:     []cli.Flag{campaignFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					camp, ws, err := campaignArg(c)
					if err != nil {
						return err
					}
					rep, err := camp.Check()
					if err != nil {
						return err
					}
					addUnknownCharacters(ws, camp, rep)
					if c.Bool("json") {
						if err := e.printJSON(rep); err != nil {
							return err
						}
					} else {
						printCheck(e, ws, rep)
					}
					if !rep.OK() {
						return errSilent
					}
					return nil
				},
			},
			{
				Name:      "fill",
				Usage:     "write the files of the campaign's layout it lacks (a story-state.md removed, say), with their sections; a file that is there is never touched",
				ArgsUsage: "[CAMPAIGN]",
				Flags:     []cli.Flag{campaignFlag},
				Action: func(c *cli.Context) error {
					camp, ws, err := campaignArg(c)
					if err != nil {
						return err
					}
					wrote, err := camp.Fill()
					for _, w := range wrote {
						fmt.Fprintf(e.stdout, "wrote %s\n", printable(ws.Short(camp.Path(w))))
					}
					if err != nil {
						return err
					}
					if len(wrote) == 0 {
						fmt.Fprintf(e.stdout, "campaign %s has every file of its layout: nothing written\n", printable(camp.Name))
					}
					return nil
				},
			},
			{
				Name:      "apply",
				Usage:     "apply the GM's deltas: tmp/gm-state-delta.md to story-state.md, tmp/party-knowledge-delta.md to party-knowledge.md (lines that cannot go in stay in the delta; exit 1 then)",
				ArgsUsage: "[CAMPAIGN]",
				Flags: []cli.Flag{campaignFlag, jsonFlag,
					&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would change; write nothing"},
				},
				Action: func(c *cli.Context) error {
					camp, _, err := campaignArg(c)
					if err != nil {
						return err
					}
					party, err := camp.Party()
					if err != nil {
						return err
					}
					rep, applyErr := delta.Apply(c.Context, camp.Root, delta.Options{DryRun: c.Bool("dry-run"), Party: party})
					if applyErr != nil && len(rep.Files) == 0 && !c.Bool("json") {
						return applyErr // nothing done to report
					}
					if c.Bool("json") {
						if err := e.printJSON(applyJSON(camp, rep, applyErr)); err != nil {
							return err
						}
					} else {
						printApply(e, camp, rep, c.Bool("dry-run"))
					}
					if applyErr != nil {
						if c.Bool("json") {
							return errSilent
						}
						return applyErr
					}
					for _, f := range rep.Files {
						if len(f.Kept) > 0 {
							return errSilent
						}
					}
					return nil
				},
			},
		},
	}
}

// campaignArg opens the campaign named by the argument or --campaign.
func campaignArg(c *cli.Context) (*campaigns.Campaign, *workspace.Workspace, error) {
	if c.NArg() > 1 {
		return nil, nil, argsError(c, "%s takes at most one CAMPAIGN (got an extra argument %q)", commandName(c), c.Args().Get(1))
	}
	return openCampaign(c, c.Args().First())
}

// addUnknownCharacters adds to the check of the campaign the workspace's
// agents play in a sheet missing for each character: in parley.yaml that
// names none of its party (workspace.UnknownCharacters), after the
// party's findings: the session would start with that character, and it
// fails the check.
func addUnknownCharacters(ws *workspace.Workspace, camp *campaigns.Campaign, rep *campaigns.Report) {
	played, err := campaigns.Find(ws.Root, ws.Config.Campaign)
	if err != nil || played.Root != camp.Root {
		return
	}
	at := len(rep.Findings)
	for i, f := range rep.Findings {
		if strings.HasPrefix(f.Path, campaigns.PartyDir+"/") {
			at = i + 1
		}
	}
	var add []campaigns.Finding
	for _, u := range ws.UnknownCharacters() {
		add = append(add, campaigns.Finding{Path: campaigns.PartyDir + "/" + u.Character + ".md", Status: campaigns.Missing, Required: true, Detail: u.String()})
	}
	rep.Findings = slices.Insert(rep.Findings, at, add...)
}

func printCheck(e *env, ws *workspace.Workspace, rep *campaigns.Report) {
	w := e.stdout
	fmt.Fprintf(w, "campaign %s (%s)\n", rep.Campaign, ws.Short(rep.Dir))
	width := 0
	for _, f := range rep.Findings {
		width = max(width, len(f.Path))
	}
	failed := 0
	for _, f := range rep.Findings {
		detail := f.Detail
		if f.Status == campaigns.Missing && !f.Required {
			detail = strings.TrimSuffix("(optional) "+detail, " ")
		}
		if f.Failed() {
			failed++
		}
		fmt.Fprintf(w, "  %-9s  %-*s  %s\n", f.Status, width, f.Path, detail)
	}
	if failed == 0 {
		fmt.Fprintf(w, "ok: parley can read and change this campaign\n")
		return
	}
	// Counted by file: a sheet may say several problems on its line.
	fmt.Fprintf(w, "%d %s missing or malformed: see the lines above\n", failed, map[bool]string{true: "file is", false: "files are"}[failed == 1])
}

func printApply(e *env, camp *campaigns.Campaign, rep *delta.Report, dryRun bool) {
	w := e.stdout
	if len(rep.Files) == 0 {
		fmt.Fprintf(w, "%s: no deltas waiting in tmp/\n", camp.Name)
		return
	}
	for _, f := range rep.Files {
		verb := string(f.Outcome)
		if dryRun {
			verb = "would be " + verb
		}
		fmt.Fprintf(w, "%s -> %s: %s\n", f.Delta, f.Target, verb)
		for _, ch := range f.Applied {
			fmt.Fprintf(w, "  %s\n", ch)
		}
		for _, k := range f.Kept {
			fmt.Fprintf(w, "  kept in the delta: %v\n", k)
		}
		for _, k := range f.Warnings {
			fmt.Fprintf(w, "  note: %v (written all the same; check the sheet)\n", k)
		}
	}
}

// applyJSON is the report of campaign apply --json.
func applyJSON(camp *campaigns.Campaign, rep *delta.Report, err error) any {
	type kept struct {
		Line    int    `json:"line"`
		Keyword string `json:"keyword"`
		Text    string `json:"text"`
		Reason  string `json:"reason"`
	}
	type change struct {
		Line    int    `json:"line"`
		Keyword string `json:"keyword"`
		Entity  string `json:"entity,omitempty"`
		Section string `json:"section"`
		Action  string `json:"action"`
		Created bool   `json:"created,omitempty"`
		Note    string `json:"note,omitempty"`
	}
	type file struct {
		Delta    string   `json:"delta"`
		Target   string   `json:"target"`
		Outcome  string   `json:"outcome"`
		Applied  []change `json:"applied"`
		Kept     []kept   `json:"kept"`
		Warnings []kept   `json:"warnings,omitempty"`
	}
	out := struct {
		Campaign string `json:"campaign"`
		Files    []file `json:"files"`
		Error    string `json:"error,omitempty"`
	}{Campaign: camp.Name, Files: []file{}}
	for _, f := range rep.Files {
		ff := file{Delta: f.Delta, Target: f.Target, Outcome: string(f.Outcome), Applied: []change{}, Kept: []kept{}}
		for _, c := range f.Applied {
			ff.Applied = append(ff.Applied, change{c.Line, string(c.Keyword), c.Entity, c.Section, string(c.Action), c.Created, c.Note})
		}
		for _, k := range f.Kept {
			ff.Kept = append(ff.Kept, kept{Line: k.Line, Keyword: k.Keyword, Text: k.Text, Reason: errors.Unwrap(k).Error()})
		}
		for _, k := range f.Warnings {
			ff.Warnings = append(ff.Warnings, kept{Line: k.Line, Keyword: k.Keyword, Text: k.Text, Reason: errors.Unwrap(k).Error()})
		}
		out.Files = append(out.Files, ff)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}
