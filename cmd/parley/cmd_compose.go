package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

func composeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compose",
		Usage:     "write a message of a type from a template with every field (required first, allowed values in comments); opens $EDITOR and sends it, or prints the template",
		ArgsUsage: "TYPE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the sending `AGENT`"},
			&cli.StringSliceFlag{Name: "to", Usage: "a recipient `AGENT` (repeat, or separate with commas)"},
			&cli.StringFlag{Name: "skill", Usage: "take the type from this skill `NAME` (default: the workspace's skills, else any skill)"},
			&cli.BoolFlag{Name: "print", Usage: "print the template even when $EDITOR is set"},
			&cli.BoolFlag{Name: "edit", Usage: "open $EDITOR even when stdin is not a terminal"},
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "a message TYPE (like GM_TO_PLAYER or review_verdict)"); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil && !errors.Is(err, workspace.ErrNoWorkspace) {
				return err
			}
			t, err := findType(c, ws, strings.Trim(c.Args().First(), "[]"))
			if err != nil {
				return err
			}
			to := splitNames(c.StringSlice("to"))
			from := c.String("from")
			if ws != nil && from != "" {
				if err := ws.CheckAgent(from); err != nil {
					return usagef("--from: %v", err)
				}
			}
			text := template(t, from, to)
			editor := os.Getenv("EDITOR")
			if editor == "" || c.Bool("print") || !isTerminal(e.stdin) && !c.Bool("edit") {
				_, err := fmt.Fprint(e.stdout, text)
				return err
			}
			if ws == nil {
				return errors.New("compose sends from a workspace: run it in one, or use --print")
			}
			if from == "" {
				return usagef("say who sends it: --from AGENT")
			}
			return editAndSend(e, ws, from, editor, text)
		},
	}
}

// findType looks a type up in the workspace's protocol, in the skill named
// by --skill, or in every skill parley knows.
func findType(c *cli.Context, ws *workspace.Workspace, name string) (*skills.Type, error) {
	lib, _, err := library(c)
	if err != nil {
		return nil, err
	}
	var candidates []*skills.Skill
	switch {
	case c.String("skill") != "":
		s, ok := lib.Get(c.String("skill"))
		if !ok {
			return nil, fmt.Errorf("%w %q", skills.ErrUnknownSkill, c.String("skill"))
		}
		candidates = []*skills.Skill{s}
	case ws != nil && len(ws.Config.Skills) > 0:
		for _, n := range ws.Config.Skills {
			if s, ok := lib.Get(n); ok {
				candidates = append(candidates, s)
			}
		}
	default:
		candidates = lib.List()
	}
	var found []*skills.Type
	var where []string
	for _, s := range candidates {
		if t, ok := s.Type(name); ok {
			found = append(found, t)
			where = append(where, s.Name)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no skill defines the type %q (see parley skills show NAME)", name)
	case 1:
		return found[0], nil
	}
	return nil, usagef("%q is defined by several skills (%s): choose one with --skill", name, strings.Join(where, ", "))
}

// template writes a message of type t with every field: required ones
// first, then optional ones, with what each means and its allowed values
// in comments. A tag-first type gets a tag-first message.
func template(t *skills.Type, from string, to []string) string {
	var b strings.Builder
	if t.Tagged {
		fmt.Fprintf(&b, "[%s]\n", t.Name)
	} else {
		b.WriteString("---\n")
		if from != "" {
			fmt.Fprintf(&b, "from: %s\n", from)
		}
	}
	switch {
	case len(to) > 0:
		fmt.Fprintf(&b, "to: %s\n", strings.Join(to, ", "))
	case t.IsBroadcast():
		b.WriteString("to:  # left empty, it goes to everyone (a broadcast)\n")
	case len(t.Recipients) > 0:
		fmt.Fprintf(&b, "to:  # an agent with the role %s; left empty, parley picks it if only one has it\n", strings.Join(t.Recipients, " or "))
	default:
		b.WriteString("to:  # the recipient\n")
	}
	if !t.Tagged {
		fmt.Fprintf(&b, "type: %s\n", t.Name)
	}
	top := func(f *skills.Field) bool { return !strings.ContainsAny(f.Name, ".[") }
	nested := func(parent string) []string {
		var subs []string
		for _, f := range t.Fields {
			if p, k, ok := strings.Cut(f.Name, "."); ok && strings.TrimSuffix(p, "[]") == parent {
				subs = append(subs, k)
			}
		}
		return subs
	}
	for _, pass := range []bool{true, false} {
		for _, f := range t.Fields {
			if !top(f) || f.Name == "type" || f.Required != pass {
				continue
			}
			var notes []string
			if f.Required {
				notes = append(notes, "required")
			} else {
				notes = append(notes, "optional")
			}
			if f.When != nil {
				notes[0] += " when " + f.When.String()
			}
			if f.Description != "" {
				notes = append(notes, f.Description)
			}
			if len(f.Enum) > 0 && !strings.Contains(strings.ToLower(f.Description), "one of") {
				notes = append(notes, "one of: "+strings.Join(f.Enum, ", "))
			}
			var subs []string
			for _, sub := range nested(f.Name) {
				if sub != "*" {
					subs = append(subs, sub)
				}
			}
			if len(subs) > 0 {
				notes = append(notes, "each with "+strings.Join(subs, ", "))
			}
			fmt.Fprintf(&b, "%s:  # %s\n", f.Name, strings.Join(notes, "; "))
		}
	}
	if t.Tagged {
		b.WriteString("\n")
	} else {
		b.WriteString("---\n")
	}
	if t.Description != "" {
		fmt.Fprintf(&b, "%s\n", t.Description)
	}
	return b.String()
}

// editAndSend opens the template in the editor, in the sender's tmp/, and
// sends what was written; an unchanged or emptied file is not sent.
func editAndSend(e *env, ws *workspace.Workspace, from, editor, text string) error {
	box := ws.Mailbox(from)
	id := (&mailbox.IDs{Now: time.Now}).New(from)
	path := box.Path(mailbox.Tmp, "compose-"+id+".md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	args := strings.Fields(editor)
	cmd := exec.Command(args[0], append(args[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (the draft is in %s)", editor, err, path)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Equal(written, []byte(text)) || len(bytes.TrimSpace(written)) == 0 {
		os.Remove(path)
		fmt.Fprintln(e.stderr, "parley: not sent: the template was left unchanged")
		return nil
	}
	if _, err := mailbox.Parse(written); err != nil {
		return fmt.Errorf("%s: %w (fix it and move it into %s)", path, err, box.Path(mailbox.Outbox, ""))
	}
	dst := box.Path(mailbox.Outbox, "compose-"+id+".md")
	if err := os.Rename(path, dst); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, dst)
	return nil
}

func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
