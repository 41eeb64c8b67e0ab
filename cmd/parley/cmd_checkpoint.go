package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func checkpointCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "checkpoint",
		Usage: "save the story in git: commit the campaign and plan files, and nothing else",
		Description: "Commits what changed under campaigns/ and plans/ — never a campaign's tmp/,\n" +
			"the mailboxes, .parley/, an editor's scratch file (swap, autosave, ~ backup),\n" +
			"a file that may hold secrets (.env, .env.* but .env.example, .env.sample and\n" +
			".env.template, *.pem, *.key, *.creds), or anything else you have staged — as\n" +
			"one new commit on the current branch, and says what\n" +
			"it left out. History is never rewritten. The default message names the\n" +
			"campaign, its current scene, and the files.",
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
				var leftOut []checkpoint.Skipped
				if res != nil {
					leftOut = res.LeftOut
				}
				if c.Bool("json") {
					return e.printJSON(map[string]any{"commit": "", "files": []string{}, "left_out": leftOut})
				}
				fmt.Fprintln(e.stdout, "nothing to save: no campaign or plan file changed since the last checkpoint")
				printLeftOut(e, leftOut)
				printWaiting(e, ws)
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
			printLeftOut(e, res.LeftOut)
			printWaiting(e, ws)
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

// printLeftOut says which changed files a checkpoint did not save, and why.
func printLeftOut(e *env, leftOut []checkpoint.Skipped) {
	if len(leftOut) == 0 {
		return
	}
	what := make([]string, len(leftOut))
	for i, s := range leftOut {
		what[i] = fmt.Sprintf("%s (%s)", s.Path, s.Reason)
	}
	fmt.Fprintf(e.stdout, "checkpoint: left out %d %s: %s\n", len(leftOut), plural(len(leftOut), "file", "files"), strings.Join(what, ", "))
}

// printWaiting says, after a checkpoint, how many messages wait to be
// routed (in an outbox) or handled by an agent parley drives (in its
// inbox/ or cur/): the checkpoint commits none of them, but mailboxes a
// person commits with them are routed and handled again in every clone
// that runs (see the README, Two people, one campaign). A person's own
// inbox is not counted: what waits there waits for them.
func printWaiting(e *env, ws *workspace.Workspace) {
	unrouted, unhandled := 0, 0
	for _, a := range ws.Config.Agents {
		box := ws.Mailbox(a.Name)
		unrouted += countMessages(box.Path(mailbox.Outbox, ""))
		if a.Driven() {
			unhandled += countMessages(box.Path(mailbox.Inbox, "")) + countMessages(box.Path(mailbox.Cur, ""))
		}
	}
	if unrouted+unhandled == 0 {
		return
	}
	var what []string
	if unrouted > 0 {
		what = append(what, fmt.Sprintf("%d in an outbox (not routed)", unrouted))
	}
	if unhandled > 0 {
		what = append(what, fmt.Sprintf("%d in an agent's inbox or cur/ (not handled)", unhandled))
	}
	fmt.Fprintf(e.stdout, "checkpoint: messages still wait: %s; commit mailboxes/ only once `parley run --until-idle` has routed and handled them: committed now, every clone that runs routes and handles them again\n", strings.Join(what, ", "))
}

// countMessages counts the message files in a mailbox directory: the
// files a router or a worker takes (not dot files, nor scratch names).
func countMessages(dir string) int {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, de := range des {
		if de.Type().IsRegular() && !mailbox.IsScratch(de.Name()) && !strings.HasSuffix(de.Name(), mailbox.ReasonSuffix) {
			n++
		}
	}
	return n
}
