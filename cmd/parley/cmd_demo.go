package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "show parley at work: a small team of agents exchange messages, are routed, and the log and status are printed",
		ArgsUsage: "[dnd|teams [DIR]]",
		Description: "The first argument names the demo:\n" +
			"   dnd    a D&D table checked against the dnd-team protocol: messages sent,\n" +
			"          written by hand, two refused (the default)\n" +
			"   teams  examples/teams: a lead, a researcher and a writer, each a shell\n" +
			"          script, exercising direct messages, a broadcast, a route by signal,\n" +
			"          a timeout nudge, the shutdown handshake and stop_on\n\n" +
			"Without DIR the workspace is made in a temporary directory and removed\n" +
			"afterwards; with DIR it is made there and kept, to look around in. DIR\n" +
			"always comes second, so `parley demo dnd teams` makes the D&D demo in a\n" +
			"directory named teams.",
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			example, dir := "dnd", ""
			if len(args) > 0 {
				example = args[0]
			}
			if demos[example] == nil {
				return argsError(c, "unknown demo %q (demos: %s); to keep the D&D demo in a directory, name both: parley demo dnd %s", example, strings.Join(demoNames(), ", "), example)
			}
			if len(args) > 2 {
				return argsError(c, "demo takes a demo name and a directory (got an extra argument %q)", args[2])
			}
			if len(args) == 2 {
				dir = args[1]
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			return demos[example](ctx, e, dir)
		},
	}
}

// demos are the examples `parley demo` runs, by name.
var demos = map[string]func(ctx context.Context, e *env, dir string) error{
	"dnd":   runDemo,
	"teams": runTeamsDemo,
}

// demoNames returns the names of the demos, sorted.
func demoNames() []string {
	return slices.Sorted(maps.Keys(demos))
}

// demoDir returns the directory to make a demo workspace in: dir, or a
// temporary one, with the function that removes it.
func demoDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "parley-demo-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// Messages written by hand, tag-first, the way the D&D protocol writes
// them; parley delivers them under a frontmatter envelope.
const (
	demoAction = `[PLAYER_TO_GM]
type: ACTION
character: aria

Aria raises her mug to the stranger and nods, slowly.
`
	demoNote = `[NARRATOR_NOTE]
from: bram
note: Linger on the stranger's lamp: it burns green.
`
	// A player may not narrate: the protocol's sender rule refuses it.
	demoOverreach = `[NARRATIVE]

And then the dragon appears!
`
	// To an agent that does not exist: refused, with the reason.
	demoUnknown = `---
to: zed
---
Is anyone there?
`
)

func runDemo(ctx context.Context, e *env, dir string) error {
	keep := dir != ""
	dir, cleanup, err := demoDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
	agents := []workspace.Agent{{Name: "gm"}, {Name: "narrator"}, {Name: "aria", Roles: []string{"player"}}, {Name: "bram", Roles: []string{"player"}}}
	ws, err := workspace.Init(dir, agents, []string{"dnd-team"})
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "== a D&D table: gm, narrator, and two players, aria and bram (%s)\n", ws.Root)
	fmt.Fprintln(out, "   messages are checked against the dnd-team protocol (skills/dnd-team.md)")
	fmt.Fprintln(out)

	sends := []sendOptions{
		{From: "gm", Type: "NARRATIVE", Body: text("Rain hammers the roof of the Drowned Lantern. A stranger's lamp gutters by the door.\n")},
		{From: "gm", To: []string{"aria"}, Type: "GM_TO_PLAYER", Fields: []string{"request_type=QUICK_REACTION", "scene_number=001", "scene_slug=the-drowned-lantern"}, Body: text("The stranger's eyes find yours. What do you do?\n")},
	}
	for _, s := range sends {
		if err := runSend(e.quiet(), ws, s); err != nil {
			return err
		}
		to := "(no --to: the protocol sends it to everyone)"
		if len(s.To) > 0 {
			to = "--to " + joinFlag(s.To)
		}
		fmt.Fprintf(out, "parley send --from %s --type %s %s\n", s.From, s.Type, to)
	}
	for _, f := range []struct{ agent, name, text, what string }{
		{"aria", "mug.md", demoAction, "tag-first, no to: the protocol sends it to the gm"},
		{"bram", "lamp.md", demoNote, "tag-first, goes to the narrator"},
		{"bram", "dragon.md", demoOverreach, "a player narrating: refused by the protocol"},
		{"bram", "hello.md", demoUnknown, "to an agent that does not exist: refused"},
	} {
		if err := os.WriteFile(ws.Mailbox(f.agent).Path(mailbox.Outbox, f.name), []byte(f.text), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "written by hand: mailboxes/%s/outbox/%s  (%s)\n", f.agent, f.name, f.what)
	}

	if err := showRun(ctx, e, ws); err != nil {
		return err
	}
	entries, err := ws.Mailbox("aria").List(mailbox.Inbox)
	if err == nil && len(entries) > 0 {
		last := entries[len(entries)-1]
		rel, _ := filepath.Rel(ws.Root, last.Path)
		fmt.Fprintf(out, "\n== cat %s\n", rel)
		data, err := os.ReadFile(last.Path)
		if err != nil {
			return err
		}
		out.Write(data)
	}
	if keep {
		fmt.Fprintf(out, "\nThe workspace is in %s: try `parley -C %s status`.\n", ws.Root, dir)
	} else {
		fmt.Fprintln(out, "\nRun `parley demo dnd DIR` to keep the workspace and look around.")
	}
	return nil
}

// showRun runs a demo workspace until it is idle, built-in agents
// included, and shows the run's figures, the log and the status, as the
// commands print them.
func showRun(ctx context.Context, e *env, ws *workspace.Workspace) error {
	out := e.stdout
	fmt.Fprintln(out, "\n== parley run --until-idle")
	r, err := runner.Open(ws, runner.Options{UntilIdle: true, Handlers: handlers(ws, slog.New(slog.NewTextHandler(io.Discard, nil))), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	fmt.Fprintln(out, statsLine(stats))

	fmt.Fprintln(out, "\n== parley log")
	if err := runLog(ctx, e, ws, logOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== parley status")
	if err := runStatus(e, ws, statusOptions{}, time.Now()); err != nil {
		return err
	}
	return nil
}

func joinFlag(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ","
		}
		if n == "*" {
			n = "'*'"
		}
		s += n
	}
	return s
}
