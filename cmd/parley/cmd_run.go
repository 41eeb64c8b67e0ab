package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sync/errgroup"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/bridge"
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
			&cli.BoolFlag{Name: "no-bridge", Usage: "do not start the bridge parley.yaml's bridge: section describes"},
			serveFlag, listenFlag,
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
			level := logLevel(c)
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runRun(ctx, e, ws, runOptions{UntilIdle: c.Bool("until-idle"), Level: level, JSON: c.Bool("json"),
				NoBridge: c.Bool("no-bridge"), Serve: c.Bool("serve"), Listen: c.String("listen")})
		},
	}
}

type runOptions struct {
	UntilIdle bool
	Level     slog.Level
	JSON      bool
	// NoBridge leaves the bridge of a bridge: section alone; Serve runs
	// a NATS server in the process too, listening on Listen.
	NoBridge bool
	Serve    bool
	Listen   string
}

func runRun(ctx context.Context, e *env, ws *workspace.Workspace, opts runOptions) error {
	log := e.logger(opts.Level)
	ropts := runnerOptions(e, ws, log)
	ropts.UntilIdle = opts.UntilIdle
	if err := checkListen(opts.Serve, opts.Listen); err != nil {
		return err
	}
	bridged := ws.Config.Bridge != nil && !opts.NoBridge && !opts.UntilIdle
	if opts.Serve && !bridged {
		return usageError{err: fmt.Errorf("--serve runs a NATS server beside the bridge: it needs a bridge: section in %s, and no --until-idle or --no-bridge", workspace.ConfigFile),
			hint: "to watch the session in a browser, run `parley serve` beside `parley run`"}
	}
	if ws.Config.Bridge != nil && opts.UntilIdle && !opts.NoBridge {
		log.Info("the bridge does not run with --until-idle: `parley bridge --until-idle` forwards and takes what waits")
	}
	r, err := runner.Open(ws, ropts)
	if le := (*runner.LockedError)(nil); errors.As(err, &le) && le.Seat {
		// A person's seat routes the table (parley play): it hands it
		// over, and plays beside this run.
		log.Info("a seat (parley play) routes this table: asking it to hand the table over", "pid", le.PID, "wait", runner.HandoverWait)
		r, err = runner.OpenHandedOver(ctx, ws, ropts, runner.HandoverWait)
		if err == nil {
			log.Info("this run routes the table now (the seat let it go, or stopped): it goes on with the session", "seat", le.PID)
		}
	}
	if err != nil {
		return err
	}
	var stats runner.Stats
	var bstats *bridge.Stats
	if bridged {
		stats, bstats, err = runBridged(ctx, e, r, ws, opts, log)
	} else {
		stats, err = r.Run(ctx)
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if !opts.JSON && opts.UntilIdle {
			// What was routed before the run failed, then why it failed.
			fmt.Fprintln(e.stdout, statsLine(stats))
		}
		return err
	}
	// What waits for a person when the run ends: the exit code does not
	// say it (nothing was refused), so the summary does.
	waiting := escalationsWaiting(ws)
	if opts.JSON {
		err = e.printJSON(runReport{Stats: stats, Escalations: waiting})
	} else {
		line := statsLine(stats)
		if bstats != nil {
			line += fmt.Sprintf("\nbridged: forwarded %d, received %d, refused %d", bstats.Forwarded, bstats.Received, bstats.Bounced)
		}
		if w := waitingText(waiting); w != "" {
			line += "\npipeline: " + w
		}
		if ws.Config.Bridge != nil {
			// What this run delivered to agents of other workspaces waits
			// for a bridge (none ran, or it could not forward it all).
			out, _ := ws.Outgoing()
			if n, w := outgoingText(out); n > 0 {
				line += fmt.Sprintf("\nbridge: %s: parley bridge --until-idle forwards %s", w, plural(n, "it", "them"))
			}
		}
		_, err = fmt.Fprintln(e.stdout, line)
	}
	if err != nil {
		return err
	}
	// A run that ended by itself says whether all went through; one
	// stopped by a signal is a clean stop, whatever happened before.
	if (opts.UntilIdle || stats.Ended != "") && ctx.Err() == nil && (stats.Undelivered() || stats.Unhandled() || len(stats.NotStarted) > 0) {
		return &refusedError{stats: stats, pipeline: hasOrchestrator(ws)}
	}
	return nil
}

// runReport is what parley run --json prints: the run's figures, and the
// escalations waiting for a person's decision when it ended (as parley
// status --json names them).
type runReport struct {
	runner.Stats
	Escalations []escalation `json:"escalations_waiting,omitempty"`
}

// runBridged runs the runner and, beside it, the workspace's bridge (and
// with --serve a NATS server); when one ends, so does the other.
func runBridged(ctx context.Context, e *env, r *runner.Runner, ws *workspace.Workspace, opts runOptions, log *slog.Logger) (runner.Stats, *bridge.Stats, error) {
	ns, err := serveIfAsked(e, ws, opts.Serve, opts.Listen, log)
	if err != nil {
		return runner.Stats{}, nil, err
	}
	if ns != nil {
		defer ns.Shutdown()
	}
	b, err := startBridge(e, ws, ns, log, r)
	if err != nil {
		return runner.Stats{}, nil, err
	}
	if b == nil {
		stats, err := r.Run(ctx)
		return stats, nil, err
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stats runner.Stats
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer cancel()
		s, err := r.Run(gctx)
		stats = s
		if err == nil && gctx.Err() == nil {
			// The session ended by itself (stop_on): what it delivered
			// to agents of other workspaces goes before the bridge stops.
			waitForwarded(gctx, ws, 10*time.Second)
		}
		return err
	})
	var bstats bridge.Stats
	g.Go(func() error {
		s, err := b.Run(gctx)
		bstats = s
		if err != nil {
			return fmt.Errorf("bridge: %w", err)
		}
		return nil
	})
	err = g.Wait()
	return stats, &bstats, err
}

// waitForwarded waits, at most limit, until nothing waits in the inboxes
// of agents that live in other workspaces: the bridge forwarded it all.
func waitForwarded(ctx context.Context, ws *workspace.Workspace, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if out, _ := ws.Outgoing(); len(out) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// outgoingText says how many messages wait here for the bridge to forward
// (workspace.Outgoing) and to which workspaces: "1 message waits to be
// forwarded to alpha"; n is 0 and the text "" when none does.
func outgoingText(out []workspace.Outgoing) (n int, text string) {
	count := map[string]int{}
	var remotes []string
	for _, o := range out {
		if count[o.Agent.Remote] == 0 {
			remotes = append(remotes, o.Agent.Remote)
		}
		count[o.Agent.Remote] += len(o.IDs)
		n += len(o.IDs)
	}
	if n == 0 {
		return 0, ""
	}
	to := printable(remotes[0])
	if len(remotes) > 1 {
		var parts []string
		for _, r := range remotes {
			parts = append(parts, fmt.Sprintf("%s (%d)", printable(r), count[r]))
		}
		to = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return n, fmt.Sprintf("%d %s to be forwarded to %s", n, plural(n, "message waits", "messages wait"), to)
}

// refusedError ends a run during which files were refused or messages
// given up, or that left files waiting in an outbox: exit code 5, with
// what and why on stderr.
type refusedError struct {
	stats runner.Stats
	// pipeline is set in a workspace with an orchestrator: parley
	// pipeline shows what was given up, with the escalation about it.
	pipeline bool
}

// maxNamed is how many refused files, and as many messages given up, a
// run names on stderr; --json lists them all (up to runner's cap).
const maxNamed = 20

func (e *refusedError) Error() string {
	s := e.stats
	var parts []string
	if s.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d %s rejected", s.Rejected, plural(s.Rejected, "file", "files")))
	}
	if s.RefusedInPlace > 0 {
		parts = append(parts, fmt.Sprintf("%d %s refused in place", s.RefusedInPlace, plural(s.RefusedInPlace, "link", "links")))
	}
	if s.Dead > 0 {
		parts = append(parts, fmt.Sprintf("%d %s given up", s.Dead, plural(s.Dead, "message", "messages")))
	}
	// Named in the summary, with where their messages wait.
	byDriver, waiting, waitedFor := 0, 0, 0
	for _, a := range s.Stopped {
		switch {
		case !a.ShutDown:
			byDriver++
		case a.Waiting > 0:
			waiting += a.Waiting
			waitedFor++
		}
	}
	if byDriver > 0 {
		parts = append(parts, fmt.Sprintf("%d %s stopped by %s", byDriver, plural(byDriver, "agent", "agents"), plural(byDriver, "its driver", "their drivers")))
	}
	if waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d %s waiting for %d %s stopped by %s", waiting, plural(waiting, "message", "messages"), waitedFor, plural(waitedFor, "agent", "agents"), plural(waitedFor, "its shutdown", "their shutdowns")))
	}
	if n := len(s.NotStarted); n > 0 {
		// Named in the summary, with why.
		parts = append(parts, fmt.Sprintf("%d built-in %s could not start", n, plural(n, "agent", "agents")))
	}
	var b strings.Builder
	if len(parts) > 0 {
		b.WriteString(strings.Join(parts, " and ") + " during this run")
	}
	if s.Left > 0 {
		if len(parts) > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d %s left in %s, not routed", s.Left, plural(s.Left, "file", "files"), plural(s.Left, "an outbox", "outboxes"))
	}
	if len(s.RejectedFiles)+len(s.RefusedInPlaceFiles)+len(s.DeadFiles)+len(s.LeftFiles) > 0 {
		b.WriteString(":")
	}
	for _, k := range []struct {
		what  string
		list  []workspace.Problem
		total int
	}{{"rejected", s.RejectedFiles, s.Rejected}, {"refused", s.RefusedInPlaceFiles, s.RefusedInPlace}, {"dead", s.DeadFiles, s.Dead}, {"left", s.LeftFiles, s.Left}} {
		for i, p := range k.list {
			if i == maxNamed {
				fmt.Fprintf(&b, "\n  ... and %d more %s (parley status --all)", k.total-maxNamed, k.what)
				break
			}
			fmt.Fprintf(&b, "\n  %-8s  %s  %s", k.what, printable(p.Agent), printable(p.Path))
			for _, l := range strings.Split(p.Reason, "\n") { // a refusal lists each problem on a line
				fmt.Fprintf(&b, "\n            %s", printable(l))
			}
			if k.what == "refused" {
				fmt.Fprintf(&b, "\n            left where it is: see %s", printable(p.Path+mailbox.ReasonSuffix))
			}
		}
	}
	return b.String()
}

// statsLine says what a run did, in one line.
func statsLine(s runner.Stats) string {
	line := fmt.Sprintf("routed %d %s (%d %s), rejected %d",
		s.Routed, plural(s.Routed, "message", "messages"),
		s.Deliveries, plural(s.Deliveries, "delivery", "deliveries"), s.Rejected)
	if s.RefusedInPlace > 0 {
		line += fmt.Sprintf(", refused in place %d", s.RefusedInPlace)
	}
	if s.Dead > 0 {
		line += fmt.Sprintf(", given up %d", s.Dead)
	}
	if s.Loops > 0 {
		line += fmt.Sprintf(", stopped %d %s", s.Loops, plural(s.Loops, "loop", "loops"))
	}
	if s.Left > 0 {
		line += fmt.Sprintf(", left waiting %d", s.Left)
	}
	if s.Recovered > 0 {
		line += fmt.Sprintf(", %d already delivered before a restart", s.Recovered)
	}
	if n := len(s.Stopped); n > 0 {
		line += fmt.Sprintf(", stopped %d %s", n, plural(n, "agent", "agents"))
	}
	var idle []string // shut down, nothing waiting: said once for them all
	for _, p := range s.Stopped {
		if p.ShutDown && p.Waiting == 0 && p.SetAside == 0 {
			idle = append(idle, printable(p.Agent))
			continue
		}
		line += "\nstopped: " + stoppedText(p)
	}
	if n := len(idle); n > 0 {
		line += fmt.Sprintf("\nstopped: %s: %s a shutdown request; nothing waits for %s; the next parley run starts %s again",
			strings.Join(idle, ", "), plural(n, "it approved", "they approved"), plural(n, "it", "them"), plural(n, "it", "them"))
	}
	for _, m := range s.Interrupted {
		line += fmt.Sprintf("\ninterrupted: %s: the message it was handling was cut off by the stop; it waits in %s, and the next parley run hands it to %s again", printable(m.Agent), printable(m.Path), printable(m.Agent))
	}
	for _, p := range s.NotStarted {
		line += fmt.Sprintf("\nnot started: %s: %s (what it does as a run starts was not done, as the team lead starting the session; it still handles what it is sent)", printable(p.Agent), printable(p.Reason))
	}
	if s.Ended != "" {
		line += "\nsession over: " + s.Ended
	}
	return line
}

// stoppedText says why an agent was stopped for the rest of a run, what
// waits for it and what starts it again.
func stoppedText(p runner.StoppedAgent) string {
	agent := printable(p.Agent)
	switch {
	case p.ShutDown && p.SetAside > 0:
		return fmt.Sprintf("%s: %s; %d %s in mailboxes/%s/cur/ (held for its model's endpoint, set aside for the request) and %d in mailboxes/%s/inbox, not handled, for the next parley run, which starts it again", agent, printable(p.Reason), p.SetAside, plural(p.SetAside, "message waits", "messages wait"), agent, p.Waiting, agent)
	case p.ShutDown:
		return fmt.Sprintf("%s: %s; %d %s in mailboxes/%s/inbox, not handled, for the next parley run, which starts it again", agent, printable(p.Reason), p.Waiting, plural(p.Waiting, "message waits", "messages wait"), agent)
	case p.Waiting > 0:
		return fmt.Sprintf("%s: %s (its message waits in %s, and %d more in mailboxes/%s/inbox, for the next run)", agent, printable(p.Reason), printable(p.Path), p.Waiting, agent)
	}
	return fmt.Sprintf("%s: %s (its message waits in %s for the next run)", agent, printable(p.Reason), printable(p.Path))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// logLevel is the level --verbose and --quiet ask for (run, bridge).
func logLevel(c *cli.Context) slog.Level {
	switch {
	case c.Bool("verbose"):
		return slog.LevelDebug
	case c.Bool("quiet"):
		return slog.LevelError
	}
	return slog.LevelInfo
}
