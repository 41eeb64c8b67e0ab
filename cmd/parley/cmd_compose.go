package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

func composeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compose",
		Usage:     "write a message of a type from a template with every field (required first, allowed values in comments); opens $VISUAL or $EDITOR, checks what you wrote and sends it, or prints the template",
		ArgsUsage: "TYPE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the sending `AGENT`"},
			&cli.StringSliceFlag{Name: "to", Usage: "a recipient `AGENT` (repeat, or separate with commas)"},
			&cli.StringFlag{Name: "skill", Usage: "take the type from this skill `NAME` (default: the workspace's skills, else any skill)"},
			&cli.BoolFlag{Name: "print", Usage: "print the template even when $VISUAL or $EDITOR is set"},
			&cli.BoolFlag{Name: "edit", Usage: "open the editor even when stdin is not a terminal"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check what was written and say where it would go; send nothing"},
			&cli.BoolFlag{Name: "no-check", Usage: "send it even if the router would refuse it (the refusal is then on record in rejected/)"},
			jsonFlag,
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
			to := splitList(c.StringSlice("to"))
			from := c.String("from")
			if ws != nil && from != "" {
				if err := ws.CheckAgent(from); err != nil {
					return usagef("--from: %v", err)
				}
			}
			tmpl := template(t, from, to)
			editor := editorOf(e)
			if editor == "" || c.Bool("print") || !isTerminal(e.stdin) && !c.Bool("edit") {
				_, err := fmt.Fprint(e.stdout, tmpl.text)
				return err
			}
			if ws == nil {
				return errors.New("compose sends from a workspace: run it in one, or use --print")
			}
			if from == "" {
				return usagef("say who sends it: --from AGENT")
			}
			// What is written is checked against the workspace's skills:
			// when they cannot be loaded, say so before the editor opens,
			// not after the message is written.
			if _, err := ws.Protocol(); err != nil {
				return fmt.Errorf("not composed: %w", err)
			}
			return editAndSend(e, ws, editor, tmpl, composeOptions{From: from, DryRun: c.Bool("dry-run"), NoCheck: c.Bool("no-check"), JSON: c.Bool("json")})
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
			if _, clash := lib.SameName()[n]; clash {
				_, err := lib.Set([]string{n}) // the error naming the files
				return nil, err
			}
			if s, ok := lib.Get(n); ok {
				candidates = append(candidates, s)
			}
		}
	default:
		candidates = lib.List()
	}
	var found []*skills.Type
	var where []string
	var from []*skills.Skill
	for _, s := range candidates {
		if t, ok := s.Type(name); ok {
			found = append(found, t)
			where = append(where, s.Name)
			from = append(from, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no skill defines the type %q (see parley skills show NAME)", name)
	case 1:
		// A skill with errors is read in part: its template would lack
		// what could not be read (a field whose Required is "maybe"),
		// and what is written from it would be refused when sent.
		if err := from[0].Err(); err != nil {
			return nil, fmt.Errorf("no template of %s: %w", found[0].Name, err)
		}
		return found[0], nil
	}
	return nil, usagef("%q is defined by several skills (%s): choose one with --skill", name, strings.Join(where, ", "))
}

// composed is a template: its text, and the help it holds (comments at
// the end of field lines, the line standing for the body), which is taken
// out again before the message is sent.
type composed struct {
	text     string
	comments []string // "  # required; ..." at the end of a line
	optional []string // fields that may be left empty, and are then left out
	body     string   // the line that stands for the body
	// typeLine is the line that gives the template's type ([NARRATIVE],
	// type: review_verdict): a field of that type left empty is left
	// out only while the draft is still of that type.
	typeLine string
}

// template writes a message of type t with every field: required ones
// first, then optional ones, with what each means and its allowed values
// in comments. A tag-first type gets a tag-first message.
func template(t *skills.Type, from string, to []string) composed {
	var c composed
	var b strings.Builder
	line := func(key, comment string) {
		if comment != "" {
			c.comments = append(c.comments, "# "+comment)
			comment = "  # " + comment
		}
		fmt.Fprintf(&b, "%s:%s\n", key, comment)
	}
	if t.Tagged {
		c.typeLine = fmt.Sprintf("[%s]", t.Name)
		fmt.Fprintf(&b, "[%s]\n", t.Name)
	} else {
		c.typeLine = "type: " + t.Name
		b.WriteString("---\n")
		if from != "" {
			fmt.Fprintf(&b, "from: %s\n", from)
		}
	}
	// One to: line addresses the message, and is the protocol's own to:
	// when it has one; a from: the protocol asks for may be left empty,
	// and is then the sender.
	c.optional = append(c.optional, "to", "cc", "from")
	switch {
	case len(to) > 0:
		fmt.Fprintf(&b, "to: %s\n", strings.Join(to, ", "))
	case t.IsBroadcast():
		line("to", "left empty, it goes to everyone (a broadcast)")
	case slices.Contains(t.Recipients, "any") || slices.Contains(t.Recipients, "*"):
		line("to", "any agent (or the character it plays)")
	case len(t.Recipients) > 0:
		line("to", fmt.Sprintf("an agent with the role %s (or the character it plays); left empty, parley picks it if only one has it", strings.Join(t.Recipients, " or ")))
	default:
		line("to", "the recipient")
	}
	if !t.Tagged {
		fmt.Fprintf(&b, "type: %s\n", t.Name)
	}
	for _, pass := range []bool{true, false} {
		for _, f := range t.Fields {
			top := !strings.ContainsAny(f.Name, ".[")
			if !top || (f.Name == "type" && !t.Tagged) || f.Name == "to" || f.Name == "cc" || f.Required != pass {
				continue
			}
			help := fieldHelp(t, f)
			switch {
			case f.Name == "from":
				if !t.Tagged {
					continue // in a frontmatter header, from: is the sender's
				}
				help = "who speaks: you, or the character you play; left empty, you"
			case !f.Required:
				c.optional = append(c.optional, f.Name)
			}
			line(f.Name, help)
		}
	}
	if t.Tagged {
		b.WriteString("\n")
	} else {
		b.WriteString("---\n")
	}
	c.body = "<!-- the message"
	if t.Description != "" {
		c.body += ": " + t.Description
	}
	c.body += " -->"
	b.WriteString(c.body + "\n")
	c.text = b.String()
	return c
}

// fieldHelp says what a field of a template is for and what it may hold.
func fieldHelp(t *skills.Type, f *skills.Field) string {
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
	// What the check allows, unless the description says all of it
	// already (a description may list only some of the values).
	unsaid := func(v string) bool { return !strings.Contains(f.Description, v) }
	if slices.ContainsFunc(f.Enum, unsaid) {
		notes = append(notes, "allowed: "+strings.Join(f.Enum, ", "))
	}
	var subs []string
	for _, g := range t.Fields {
		if p, k, ok := strings.Cut(g.Name, "."); ok && strings.TrimSuffix(p, "[]") == f.Name && k != "*" {
			subs = append(subs, k)
		}
	}
	if len(subs) > 0 {
		notes = append(notes, "each with "+strings.Join(subs, ", "))
	}
	return strings.Join(notes, "; ")
}

// strip takes the template's help out of what was written: its comments,
// the optional fields and the to: left empty, the line standing for the
// body.
func (c composed) strip(written []byte) []byte {
	lines := strings.SplitAfter(string(written), "\n")
	// A draft whose type was changed (the tag of a [NARRATIVE] made
	// [GM_TO_PLAYER]) keeps a field left empty that the template's type
	// has as optional: it may be one the new type requires, refused as
	// empty, as validate says.
	same := slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == c.typeLine })
	out := lines[:0]
	for _, l := range lines {
		text := strings.TrimRight(l, "\r\n")
		for _, comment := range c.comments {
			// The note, wherever the value was typed: before it, or
			// after it on the same line.
			if i := strings.Index(text, comment); i >= 0 && strings.HasSuffix(text, comment) {
				text = strings.TrimRight(text[:i], " \t")
			}
		}
		if text == c.body {
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		if ok && strings.TrimSpace(value) == "" && slices.Contains(c.optional, key) && (same || key == "to" || key == "cc" || key == "from") {
			continue
		}
		out = append(out, text+l[len(strings.TrimRight(l, "\r\n")):])
	}
	return []byte(strings.Join(out, ""))
}

type composeOptions struct {
	From                  string
	DryRun, NoCheck, JSON bool
}

// editAndSend opens the template in the editor, in the sender's tmp/,
// and sends what was written, checked as the router checks it. An
// unchanged or emptied template is not sent; a draft that cannot be sent
// is kept, and the error says where.
func editAndSend(e *env, ws *workspace.Workspace, editor string, tmpl composed, opts composeOptions) error {
	box := ws.Mailbox(opts.From)
	id := (&mailbox.IDs{Now: time.Now}).New(opts.From)
	path := box.Path(mailbox.Tmp, "compose-"+id+".md")
	if err := os.WriteFile(path, []byte(tmpl.text), 0o644); err != nil {
		return err
	}
	if err := runEditor(e, editor, path); err != nil {
		return fmt.Errorf("not sent: %w (the draft is in %s)", err, path)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := tmpl.strip(written)
	switch {
	case bytes.Equal(written, []byte(tmpl.text)):
		os.Remove(path)
		return errors.New("not sent: the template was left unchanged")
	case len(bytes.TrimSpace(text)) == 0:
		os.Remove(path)
		return errors.New("not sent: the draft was emptied")
	}
	kept := func(err error) error {
		return hintedError{err: err, hint: fmt.Sprintf("the draft is kept in %s: mend it, then `parley send --from %s --file %s`", path, opts.From, path)}
	}
	// What is checked, and sent, is the draft without the template's
	// help, read as the router reads a file.
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return err
	}
	if opts.NoCheck {
		if opts.DryRun {
			return usagef("--dry-run checks the message: leave out --no-check")
		}
	} else {
		v, err := ws.CheckFile(path, workspace.FileCheck{Sender: opts.From, Sending: true})
		if err != nil {
			if opts.DryRun {
				os.Remove(path)
				return err
			}
			return kept(err)
		}
		if opts.DryRun {
			os.Remove(path)
		}
		if err := judged(e, ws, v, opts.DryRun, opts.JSON); err != nil {
			if opts.DryRun {
				return err
			}
			return kept(err)
		}
		if opts.DryRun {
			return nil
		}
	}
	data, err := mailbox.ReadFile(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return kept(err)
	}
	m, err := mailbox.Parse(data)
	if err != nil {
		return kept(workspace.RefusalOf(path, err))
	}
	if !m.Header().Has("id") {
		m.Set("id", id)
		sent, _, _ := mailbox.ParseID(id)
		m.Set("created", sent.Format(mailbox.TimeFormat))
	}
	if err := write(e, box, m, opts.JSON); err != nil {
		return kept(err)
	}
	return os.Remove(path)
}

// isTerminal reports whether r is a terminal: not merely a character
// device, as /dev/null is too.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
