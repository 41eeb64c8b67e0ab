package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

func validateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check message files, or whole mailboxes, against the protocol; one line per problem (file:line: field: reason), exit 1 on any",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "skill", Usage: "check against this skill `NAME` (default: the skills parley.yaml names)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("validate needs message files or mailbox directories")
			}
			ws, err := openWorkspace(c)
			if err != nil && !errors.Is(err, workspace.ErrNoWorkspace) {
				return err
			}
			var set *skills.Set
			if names := c.StringSlice("skill"); len(names) > 0 {
				lib, _, err := library(c)
				if err != nil {
					return err
				}
				if set, err = lib.Set(splitNames(names)); err != nil {
					return err
				}
			} else if ws != nil {
				if set, err = ws.Protocol(); err != nil {
					return err
				}
			}
			return runValidate(e, ws, set, c.Args().Slice())
		},
	}
}

func splitNames(values []string) []string {
	var out []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// runValidate checks every message file under paths. ws and set may be
// nil: without a workspace, names are not checked; without skills, only
// the files' form is.
func runValidate(e *env, ws *workspace.Workspace, set *skills.Set, paths []string) error {
	files, problems := 0, 0
	report := func(path string, line int, field, reason string) {
		problems++
		loc := path
		if line > 0 {
			loc = fmt.Sprintf("%s:%d", path, line)
		}
		if field != "" {
			reason = field + ": " + reason
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", loc, reason)
	}
	maxSize := int64(workspace.DefaultMaxMessageSize)
	if ws != nil {
		maxSize = ws.Config.Router.MaxMessageSize
	}
	check := func(path string) {
		files++
		data, err := mailbox.ReadFile(path, maxSize)
		if err != nil {
			report(path, 0, "", err.Error())
			return
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			var pe *mailbox.ParseError
			if errors.As(err, &pe) {
				report(path, pe.Line, pe.Field, pe.Err.Error())
			} else {
				report(path, 0, "", err.Error())
			}
			return
		}
		env, bad := envelopeOf(ws, path, m)
		for _, b := range bad {
			report(path, b.Line, b.Field, b.Reason)
		}
		if set == nil {
			return
		}
		_, vs := set.Check(m, env)
		for _, v := range vs {
			if v.Warning {
				fmt.Fprintf(e.stdout, "%s:%d: warning: %s\n", path, v.Line, v.Error())
				continue
			}
			report(path, v.Line, v.Field, v.Reason)
		}
	}
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			report(p, 0, "", err.Error())
			continue
		}
		if !info.IsDir() {
			check(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				report(path, 0, "", err.Error())
				return nil
			}
			name := d.Name()
			if d.IsDir() {
				if name == mailbox.Tmp {
					return filepath.SkipDir // half-written files
				}
				return nil
			}
			if mailbox.IsScratch(name) || strings.HasSuffix(name, mailbox.ReasonSuffix) {
				return nil
			}
			check(path)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if problems > 0 {
		return errSilent
	}
	fmt.Fprintf(e.stdout, "%d %s: no problems\n", files, plural(files, "file", "files"))
	return nil
}

// envelopeOf works out who sent a message and to whom, for checking it:
// the sender is the owner of the outbox (or sent/, rejected/) it is in, or
// its from: field; the recipients are its to: and cc:. With a workspace,
// unknown names are problems.
func envelopeOf(ws *workspace.Workspace, path string, m *mailbox.Message) (skills.Envelope, []skills.Violation) {
	var env skills.Envelope
	var bad []skills.Violation
	roles := func(name string) []string {
		if ws == nil || name == "" {
			return nil // who it is is not known: its role is not checked
		}
		return ws.Roles(name)
	}
	sender, _ := m.Header().Get("from")
	if agent, state, ok := mailboxOf(ws, path); ok && (state == mailbox.Outbox || state == mailbox.Sent || state == mailbox.Rejected) {
		if sender != "" && sender != agent {
			bad = append(bad, skills.Violation{Field: "from", Line: m.Header().Line("from"), Reason: fmt.Sprintf("%q, but the file is in the mailbox of %q", sender, agent)})
		}
		sender = agent
	}
	env.Sender = skills.Party{Name: sender, Roles: roles(sender)}
	if ws != nil {
		env.Phase, env.Strict = ws.Config.Phase, ws.Config.Strict
	}
	for _, field := range []string{"to", "cc"} {
		names, err := m.Header().Names(field)
		if err != nil {
			bad = append(bad, skills.Violation{Field: field, Line: m.Header().Line(field), Reason: err.Error()})
			continue
		}
		for _, n := range names {
			if n == "*" {
				env.Broadcast = true
				if ws != nil {
					for _, a := range ws.AgentNames() {
						if a != sender {
							env.Recipients = append(env.Recipients, skills.Party{Name: a, Roles: roles(a)})
						}
					}
				}
				continue
			}
			if ws != nil {
				if err := ws.CheckAgent(n); err != nil {
					bad = append(bad, skills.Violation{Field: field, Line: m.Header().Line(field), Reason: err.Error()})
					continue
				}
			}
			env.Recipients = append(env.Recipients, skills.Party{Name: n, Roles: roles(n)})
		}
	}
	return env, bad
}

// mailboxOf tells whose mailbox, and which state, a path is in.
func mailboxOf(ws *workspace.Workspace, path string) (agent, state string, ok bool) {
	if ws == nil {
		return "", "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", false
	}
	rel, err := filepath.Rel(filepath.Join(ws.Root, workspace.MailboxesDir), abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", "", false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 3 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
