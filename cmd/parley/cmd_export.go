package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner/web"
)

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a self-contained static copy of the session (timeline with every message, lanes, the story) into a directory, to open without a server",
		UsageText: "parley export --html DIR [--spectator]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "html", Usage: "write the pages into `DIR` (made if missing): index.html (the newest 1,000 messages; timeline-N.html the older ones), lanes.html, story.html, style.css"},
			&cli.BoolFlag{Name: "spectator", Usage: "write only what a spectator may see: the story without the game master's story state, the secret parts of the party's files or the notes for the game master (story.html), and no timeline or lanes, which hold every message; never into a directory holding a full copy, nor a full copy into one holding this"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			dir := c.String("html")
			if dir == "" {
				return usagef("say where to write the copy: --html DIR")
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			if err := web.Export(ctx, ws, dir, web.ExportOptions{Spectator: c.Bool("spectator")}); err != nil {
				return err
			}
			page := "index.html"
			if c.Bool("spectator") {
				page = "story.html"
			}
			fmt.Fprintln(e.stdout, filepath.Join(dir, page))
			return nil
		},
	}
}
