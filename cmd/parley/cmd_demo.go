package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/examples"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "show parley at work: a D&D session played to its end by scripted agents and a scripted you at parley play (or, with teams, a team of scripts; with pipeline, the dev pipeline)",
		ArgsUsage: "[dnd|teams|pipeline] [DIR]",
		Description: "The first argument names the demo:\n" +
			"   dnd    examples/dnd, a D&D table: the game master, the narrator and three\n" +
			"          AI players are shell scripts, the team lead is built in, and you\n" +
			"          are played by a script at parley play; a whole session, from the\n" +
			"          start to the end, then what it left on disk (the default)\n" +
			"   teams  examples/teams: a lead, a researcher and a writer, each a shell\n" +
			"          script, exercising direct messages, a broadcast, a route by signal,\n" +
			"          a timeout nudge, the shutdown handshake and stop_on\n" +
			"   pipeline  examples/pipeline: the dev pipeline's built-in orchestrator\n" +
			"          with a scripted architect, researchers, workers, reviewer and\n" +
			"          auditor: a plan of three waves, a step revised twice, one that\n" +
			"          reaches the iteration limit and is decided by you\n\n" +
			"Without --dir (or DIR) the workspace is made in a temporary directory and\n" +
			"removed afterwards; with it, it is made there and kept, to look around in.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "make the workspace in `DIR` and keep it"},
			&cli.StringFlag{Name: "protocol", Value: "v2", Usage: "the dnd demo's protocol `VERSION`: v2 (players talk to the gm) or v1 (phase 1: the team lead asks the AI players)"},
		},
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			example, dir := "dnd", c.String("dir")
			if len(args) > 0 {
				example = args[0]
			}
			if demos[example] == nil {
				if near := spell.Nearest(example, demoNames(), 2); near != "" {
					return argsError(c, "unknown demo %q (demos: %s): did you mean %s?", example, strings.Join(demoNames(), ", "), near)
				}
				return argsError(c, "unknown demo %q (demos: %s); to keep the demo in a directory: parley demo --dir %s", example, strings.Join(demoNames(), ", "), example)
			}
			if len(args) > 2 {
				return argsError(c, "demo takes a demo name and a directory (got an extra argument %q)", args[2])
			}
			if len(args) == 2 {
				if dir != "" {
					return usagef("name the directory once: --dir %s or %s", dir, args[1])
				}
				dir = args[1]
			}
			protocol := c.String("protocol")
			if _, ok := demoScripts[protocol]; !ok {
				return usagef("--protocol %q: want v2 or v1", protocol)
			}
			if example != "dnd" && c.IsSet("protocol") {
				return usagef("--protocol is for the dnd demo")
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			return demos[example](ctx, e, dir, protocol)
		},
	}
}

// demos are the examples `parley demo` runs, by name.
var demos = map[string]func(ctx context.Context, e *env, dir, protocol string) error{
	"dnd":      runDemo,
	"teams":    runTeamsDemo,
	"pipeline": runPipelineDemo,
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

// demoPlace says where a demo's workspace is: root, when it is kept, or
// that it is a temporary directory, which is gone by the time a person
// reads its name.
func demoPlace(root string, keep bool) string {
	if keep {
		return root
	}
	return "a temporary directory, removed when the demo ends"
}

// The scripts the person's seat is played by in the demo: the lines a
// person would type at `parley play`, one read whenever the table waits
// for them (see the seat's script rule).
var demoScripts = map[string]string{"v2": "human.txt", "v1": "human-v1.txt"}

// demoSeed makes the person's dice in the demo roll the same every time.
const demoSeed = "7"

// runDemo plays a D&D session of examples/dnd to its end: a game master,
// a narrator and three AI players that are shell scripts, the built-in
// team lead, and the person's seat, `parley play`, played by a script. It
// prints what the person saw, then what the session left on disk.
func runDemo(ctx context.Context, e *env, dir, protocol string) error {
	keep := dir != ""
	dir, cleanup, err := demoDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := copyExample(examples.DnD, "dnd", dir); err != nil {
		return err
	}
	if protocol == "v1" {
		// The same table in phase 1: the gm asks the AI players through
		// the team lead ([AWAIT_PLAYERS]).
		path := filepath.Join(dir, workspace.ConfigFile)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, bytes.Replace(data, []byte("\nphase: 2\n"), []byte("\nphase: 1\n"), 1), 0o644); err != nil {
			return err
		}
	}
	git := gitInit(ctx, dir)
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	if err := ws.MakeMailboxes(); err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "== The Sunken Bell: a D&D session, protocol %s, played to its end in %s\n", protocol, demoPlace(ws.Root, keep))
	fmt.Fprintln(out, "   gm, narrator and the AI players tor, wren and sel are shell scripts (agents/); lead is")
	fmt.Fprintln(out, "   parley's built-in team lead; you play Mira at `parley play`, typing what "+demoScripts[protocol]+" says.")
	fmt.Fprintln(out)
	fmt.Fprintf(out, "== parley play --until-idle --seed %s < %s   (what you see at the table)\n\n", demoSeed, demoScripts[protocol])
	if err := demoSeat(ctx, e, ws, demoScripts[protocol]); err != nil {
		return err
	}
	return demoAfterwards(ctx, e, ws, git, keep)
}

// demoSeat runs the person's seat, `parley play`, as its own process fed
// the demo's script, as a person would run it: it routes the session
// while it shows it.
func demoSeat(ctx context.Context, e *env, ws *workspace.Workspace, script string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(filepath.Join(ws.Root, script))
	if err != nil {
		return err
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-C", ws.Root, "play", "--until-idle", "--seed", demoSeed)
	// What the seat warns of (a save git refused, a file refused) is
	// said as it comes.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the seat (parley play) stopped: %w", err)
	}
	return nil
}

// sentCount returns how many messages the workspace's agents have sent:
// the files in their sent/ directories.
func sentCount(ws *workspace.Workspace) (int, error) {
	n := 0
	for _, a := range ws.AgentNames() {
		c, err := ws.Mailbox(a).Count(mailbox.Sent)
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// gitInit makes dir a git repository with one commit, the table before the
// session, so that the team lead's saves are commits of their own. It
// reports whether git is there to do it.
func gitInit(ctx context.Context, dir string) bool {
	steps := [][]string{
		{"init", "-q"},
		{"config", "user.name", "parley demo"},
		{"config", "user.email", "demo@parley.invalid"},
		{"add", "-A"},
		{"commit", "-q", "-m", "the table before the session"},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			return false
		}
	}
	return true
}

// demoAfterwards shows what the session left: the files people read, the
// git history of the saves, and how much the journal holds.
func demoAfterwards(ctx context.Context, e *env, ws *workspace.Workspace, git, keep bool) error {
	out := e.stdout
	camp := filepath.Join(campaigns.Dir, ws.Config.Campaign)
	fmt.Fprintf(out, "\n== what the session left in %s\n", demoPlace(ws.Root, keep))
	for _, pattern := range []string{"scenes/*.md", "party/*-journal.md"} {
		files, _ := filepath.Glob(filepath.Join(ws.Root, camp, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(ws.Root, f)
			fmt.Fprintf(out, "  %-58s %d lines\n", rel, bytes.Count(data, []byte("\n")))
		}
	}
	for _, f := range []string{campaigns.StoryState, campaigns.PartyKnowledge, campaigns.DecisionLog} {
		fmt.Fprintf(out, "  %-58s updated\n", filepath.Join(camp, f))
	}
	sent, err := sentCount(ws)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %-58s %d messages sent, each with what became of it\n", ".parley/journal.jsonl", sent)
	if git {
		cmd := exec.CommandContext(ctx, "git", "log", "--format=  %h %s")
		cmd.Dir = ws.Root
		log, err := cmd.Output()
		if err == nil {
			fmt.Fprintf(out, "\n== git log (the team lead saves with git: auto)\n%s", log)
		}
	}
	if keep {
		fmt.Fprintf(out, "\nLook around: `cd %s`, then `parley log`, `parley status`, `cat %s/scenes/*.md`.\n", ws.Root, camp)
	} else {
		fmt.Fprintln(out, "\nRun `parley demo --dir DIR` to keep the table and look around; to play it yourself, copy examples/dnd and run `parley play` there.")
	}
	return nil
}

// showRun runs a demo workspace until it is idle, built-in agents
// included, and shows the run's figures, the log and the status, as the
// commands print them.
func showRun(ctx context.Context, e *env, ws *workspace.Workspace) error {
	out := e.stdout
	if err := runQuiet(ctx, e, ws); err != nil {
		return err
	}

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

// runQuiet runs the workspace until it is idle and prints what was
// routed, as `parley run --until-idle` does.
func runQuiet(ctx context.Context, e *env, ws *workspace.Workspace) error {
	fmt.Fprintln(e.stdout, "\n== parley run --until-idle")
	r, err := runner.Open(ws, withUntilIdle(runnerOptions(e, ws, slog.New(slog.DiscardHandler))))
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
	fmt.Fprintln(e.stdout, statsLine(stats))
	return nil
}
