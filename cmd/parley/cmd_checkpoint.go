package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/runner/workspace"
)

func checkpointCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "save the story in git: commit the campaign and plan files, and nothing else",
		Description: "Commits what changed under campaigns/ and plans/ — never a campaign's tmp/,\n" +
			"the mailboxes, .parley/, or anything else you have staged — as one new commit\n" +
			"on the current branch. History is never rewritten. The default message names\n" +
			"the campaign, its current scene, and the files.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the commit `MESSAGE`"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			res, err := checkpoint.Save(c.Context, ws.Root, checkpoint.Options{
				Message:  c.String("message"),
				Describe: func(changed []string) string { return describeSave(ws, changed) },
			})
			if errors.Is(err, checkpoint.ErrNothing) {
				if c.Bool("json") {
					return e.printJSON(map[string]any{"commit": "", "files": []string{}})
				}
				fmt.Fprintln(e.stdout, "nothing to save: no campaign or plan file changed since the last checkpoint")
				return nil
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return e.printJSON(res)
			}
			first, _, _ := strings.Cut(res.Message, "\n")
			count := fmt.Sprintf("(%d %s)", len(res.Files), plural(len(res.Files), "file", "files"))
			if !strings.HasSuffix(first, count) { // the default message says it already
				first += " " + count
			}
			fmt.Fprintf(e.stdout, "saved %s: %s\n", res.Commit[:min(12, len(res.Commit))], first)
			return nil
		},
	}
}

// describeSave names what a checkpoint saves: each campaign changed, with
// its current scene, and plans.
func describeSave(ws *workspace.Workspace, changed []string) string {
	touched := map[string]bool{}
	plans := false
	for _, f := range changed {
		parts := strings.Split(f, "/")
		switch {
		case len(parts) > 2 && parts[0] == campaigns.Dir:
			touched[parts[1]] = true
		case parts[0] == "plans":
			plans = true
		}
	}
	var what []string
	names := make([]string, 0, len(touched))
	for n := range touched {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := n
		if s, ok, _ := scenes.Current(filepath.Join(ws.Root, campaigns.Dir, n, campaigns.ScenesDir)); ok {
			d += fmt.Sprintf(", scene %03d %s", s.Number, s.Slug)
		}
		what = append(what, d)
	}
	if plans {
		what = append(what, "plans")
	}
	return fmt.Sprintf("checkpoint: %s (%d %s)", strings.Join(what, "; "), len(changed), plural(len(changed), "file", "files"))
}
