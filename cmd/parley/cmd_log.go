package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func logCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "print the routing journal, oldest first: one line per message routed or rejected",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines as messages are routed (until interrupted)"},
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
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runLog(ctx, e, ws, c.Bool("follow"), c.Bool("json"))
		},
	}
}

func runLog(ctx context.Context, e *env, ws *workspace.Workspace, follow, asJSON bool) error {
	print := func(en workspace.Entry) error {
		if asJSON {
			return e.printJSONLine(en)
		}
		_, err := fmt.Fprintln(e.stdout, formatEntry(en))
		return err
	}
	var err error
	if follow {
		err = workspace.FollowJournal(ctx, ws.JournalPath(), print)
	} else {
		err = workspace.ReadJournal(ws.JournalPath(), print)
	}
	var je *workspace.JournalError
	if errors.As(err, &je) {
		// Unreadable lines (cut short by a crash) are reported, not fatal.
		fmt.Fprintf(e.stderr, "parley: %s: skipped unreadable lines: %v\n", ws.JournalPath(), err)
		return nil
	}
	return err
}

// formatEntry renders a journal entry for a terminal:
//
//	2026-11-21 10:15:00.123  delivered  gm -> alice, bob  NARRATIVE  20261121-...-gm-3fa9c2
func formatEntry(en workspace.Entry) string {
	when := en.Time
	if t, err := time.Parse(mailbox.TimeFormat, en.Time); err == nil {
		when = t.Local().Format("2006-01-02 15:04:05.000")
	}
	kind := en.Type
	if en.Signal != "" {
		kind += "/" + en.Signal
	}
	to := strings.Join(en.To, ", ")
	if to == "" {
		to = "-"
	}
	line := fmt.Sprintf("%s  %-9s  %s -> %s  %s  %s", when, en.Outcome, en.From, to, dash(kind), dash(en.ID))
	if en.Outcome == workspace.Refused {
		line = fmt.Sprintf("%s  %-9s  %s  %s", when, en.Outcome, en.From, en.Reason)
	}
	if len(en.Already) > 0 {
		line += fmt.Sprintf("  (already held by %s)", strings.Join(en.Already, ", "))
	}
	for _, w := range en.Warnings {
		line += "\n    warning: " + w
	}
	if en.Note != "" {
		line += "\n    note: " + en.Note
	}
	return line
}
