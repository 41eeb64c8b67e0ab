package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
)

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "show parley at work: a small table of agents exchange messages, are routed, and the log and status are printed",
		ArgsUsage: "[DIR]",
		Description: "Without DIR the workspace is made in a temporary directory and removed\n" +
			"afterwards; with DIR it is made there and kept, to look around in.",
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("demo takes at most one directory")
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runDemo(ctx, e, c.Args().First())
		},
	}
}

// demoHandWritten is a message written by hand, tag-first, the way the D&D
// protocol writes them; parley normalises it to a frontmatter header.
const demoHandWritten = `[PLAYER_TO_GM]
to: gm
character: bram
action: I light a torch and look for tracks.

Bram kneels by the door, torch in one hand, and studies the mud.
`

// demoRefused is addressed to an agent that does not exist: the router
// refuses it and says why.
const demoRefused = `---
to: zed
type: PLAYER_TO_GM
---
Is anyone there?
`

func runDemo(ctx context.Context, e *env, dir string) error {
	keep := dir != ""
	if !keep {
		tmp, err := os.MkdirTemp("", "parley-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	ws, err := runner.InitWorkspace(dir, []string{"gm", "narrator", "aria", "bram"})
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "== a workspace with four agents: gm, narrator, aria, bram (%s)\n\n", ws.Root)

	ids := &mailbox.IDs{Now: time.Now}
	sends := []sendOptions{
		{From: "gm", To: []string{"*"}, Type: "NARRATIVE", Body: "Rain hammers the roof of the Drowned Lantern. A stranger's lamp gutters by the door.\n"},
		{From: "gm", To: []string{"aria"}, CC: []string{"narrator"}, Type: "GM_TO_PLAYER", Fields: []string{"request_type=QUICK_REACTION"}, Body: "The stranger's eyes find yours. What do you do?\n"},
		{From: "aria", To: []string{"gm"}, Type: "PLAYER_TO_GM", Body: "Aria raises her mug and nods, slowly.\n"},
	}
	for _, s := range sends {
		m, err := buildMessage(ws, s, ids)
		if err != nil {
			return err
		}
		if _, err := ws.Mailbox(s.From).Send(m); err != nil {
			return err
		}
		fmt.Fprintf(out, "parley send --from %s --to %s%s --type %s   (%s)\n", s.From, joinFlag(s.To), ccFlag(s.CC), s.Type, kindOf(s))
	}
	for name, text := range map[string]string{"torch.md": demoHandWritten, "hello.md": demoRefused} {
		if err := os.WriteFile(ws.Mailbox("bram").Path(mailbox.Outbox, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "hand-written: mailboxes/bram/outbox/torch.md  (tag-first, the way the D&D protocol writes them)")
	fmt.Fprintln(out, "hand-written: mailboxes/bram/outbox/hello.md  (to an agent that does not exist: refused)")

	fmt.Fprintln(out, "\n== parley run --until-idle")
	r, err := runner.Open(ws, runner.Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	if err := runLog(ctx, e, ws, false, false); err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== parley status")
	if err := runStatus(e, ws, false, time.Now()); err != nil {
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
		fmt.Fprintln(out, "\nRun `parley demo DIR` to keep the workspace and look around.")
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

func ccFlag(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " --cc " + joinFlag(names)
}

func kindOf(s sendOptions) string {
	switch {
	case len(s.To) == 1 && s.To[0] == "*":
		return "broadcast"
	case len(s.CC) > 0:
		return "direct, with a copy"
	}
	return "direct"
}
