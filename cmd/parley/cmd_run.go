package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

func runCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "route messages from outboxes to inboxes until interrupted (or, with --until-idle, until none are left)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "until-idle", Usage: "route everything pending, then exit (for scripts and tests)"},
			&cli.BoolFlag{Name: "verbose", Usage: "log every delivery"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log only errors"},
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
			level := slog.LevelInfo
			switch {
			case c.Bool("verbose"):
				level = slog.LevelDebug
			case c.Bool("quiet"):
				level = slog.LevelError
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runRun(ctx, e, ws, runOptions{UntilIdle: c.Bool("until-idle"), Level: level, JSON: c.Bool("json")})
		},
	}
}

type runOptions struct {
	UntilIdle bool
	Level     slog.Level
	JSON      bool
}

func runRun(ctx context.Context, e *env, ws *workspace.Workspace, opts runOptions) error {
	r, err := runner.Open(ws, runner.Options{Logger: e.logger(opts.Level), UntilIdle: opts.UntilIdle, Handlers: handlers(ws)})
	if err != nil {
		return err
	}
	stats, err := r.Run(ctx)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return e.printJSON(stats)
	}
	fmt.Fprintln(e.stdout, statsLine(stats))
	return nil
}

// statsLine says what a run did, in one line.
func statsLine(s runner.Stats) string {
	line := fmt.Sprintf("routed %d %s (%d %s), rejected %d",
		s.Routed, plural(s.Routed, "message", "messages"),
		s.Deliveries, plural(s.Deliveries, "delivery", "deliveries"), s.Rejected)
	if s.Loops > 0 {
		line += fmt.Sprintf(", stopped %d %s", s.Loops, plural(s.Loops, "loop", "loops"))
	}
	if s.Recovered > 0 {
		line += fmt.Sprintf(", %d already delivered before a restart", s.Recovered)
	}
	if s.Ended != "" {
		line += "\nsession over: " + s.Ended
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
