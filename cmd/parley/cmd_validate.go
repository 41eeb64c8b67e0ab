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
		Usage:     "check message files, or whole mailboxes, as the router would; one line per problem (file:line: field: reason), exit 1 on any",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the sending `AGENT` of files that are in no outbox and have no from:"},
			&cli.StringSliceFlag{Name: "skill", Usage: "check against this skill `NAME` (default: the skills parley.yaml names)"},
			&cli.StringSliceFlag{Name: "against", Usage: "check against the skill in this `FILE`, any version of it (git show REV:skills/x.md > old.md): a finished session against the protocol it ran under"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return argsError(c, "validate needs message files or mailbox directories")
			}
			ws, err := openWorkspace(c)
			if err != nil && !errors.Is(err, workspace.ErrNoWorkspace) {
				return err
			}
			names := splitList(c.StringSlice("skill"))
			against, err := skillFiles(c.StringSlice("against"))
			if err != nil {
				return err
			}
			if against != nil && len(names) > 0 {
				return usagef("--skill and --against: give one or the other")
			}
			if ws == nil && against != nil {
				return runValidateForm(e, against, c.Args().Slice(), c.Bool("json"))
			}
			// The skills named are looked up here, once: a name that is
			// none is a mistake in --skill, not in parley.yaml.
			var set *skills.Set
			if len(names) > 0 {
				lib, _, err := library(c)
				if err != nil {
					return err
				}
				if set, err = lib.Set(names); errors.Is(err, skills.ErrUnknownSkill) {
					return usagef("--skill: %v", err)
				} else if err != nil {
					return fmt.Errorf("--skill: %w", err)
				}
			}
			if ws == nil {
				// Without a workspace there are no agents to route to:
				// only the files' form, and their fields against a skill.
				return runValidateForm(e, set, c.Args().Slice(), c.Bool("json"))
			}
			if len(names) > 0 {
				ws = ws.WithSkills(names)
			}
			if against != nil {
				ws = ws.WithProtocol(against)
			}
			if from := c.String("from"); from != "" {
				if err := ws.CheckAgent(from); err != nil {
					return usagef("--from: %v", err)
				}
			}
			return runValidate(e, ws, c.String("from"), c.Args().Slice(), c.Bool("json"))
		},
	}
}

// skillFiles reads skill files given by path into a set; nil for none.
// A file that is no usable skill is an error naming it.
func skillFiles(paths []string) (*skills.Set, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var list []*skills.Skill
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sk := skills.Parse(path, data)
		if err := sk.Err(); err != nil {
			return nil, err
		}
		list = append(list, sk)
	}
	return skills.NewSet(list...)
}

// runValidate checks every message file under paths as the router would
// (workspace.CheckFile): what it says of a file is what the router would
// journal for it.
func runValidate(e *env, ws *workspace.Workspace, from string, paths []string, asJSON bool) error {
	rep := &report{e: e, asJSON: asJSON}
	// The router refuses a second file of one outbox with an id the first
	// had: so does validate, for the files it was given.
	seen := map[[2]string]bool{}
	sent := func(sender, id string) bool { return seen[[2]string{sender, id}] }
	err := eachMessageFile(paths, func(path string, err error) error {
		var v *workspace.Verdict
		if err == nil {
			v, err = ws.CheckFile(path, workspace.FileCheck{Sender: from, Sent: sent})
		}
		if v != nil && v.Accepted() && v.ID != "" {
			if _, state, ok := ws.Locate(path); !ok || state == mailbox.Outbox || state == mailbox.Tmp {
				seen[[2]string{v.From, v.ID}] = true
			}
		}
		switch {
		case errors.Is(err, workspace.ErrNoSender):
			v = &workspace.Verdict{File: path, Refusal: &workspace.Refusal{File: path, Field: "from", Reason: "missing: the file is in no outbox and says nobody sent it: give --from AGENT"}}
		case err != nil:
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				return err // the skills cannot be read
			}
			v = &workspace.Verdict{File: path, Refusal: &workspace.Refusal{File: path, Reason: pe.Err.Error()}}
		}
		rep.add(v)
		return nil
	})
	if err != nil {
		return err
	}
	return rep.finish("no problems")
}

// runValidateForm checks message files outside a workspace: their form,
// and, with a skill, their fields against it. There are no agents, so
// nothing of who sends a message or where it goes.
func runValidateForm(e *env, set *skills.Set, paths []string, asJSON bool) error {
	rep := &report{e: e, asJSON: asJSON}
	err := eachMessageFile(paths, func(path string, err error) error {
		v := &workspace.Verdict{File: path}
		var m *mailbox.Message
		if err == nil {
			var data []byte
			if data, err = mailbox.ReadFile(path, workspace.DefaultMaxMessageSize); err == nil {
				m, err = mailbox.Parse(data)
			}
		}
		if err != nil {
			v.Refusal = workspace.RefusalOf(path, err)
		} else if set != nil {
			v.Type, _ = m.Header().Get("type")
			_, vs := set.Check(m, skills.Envelope{})
			for _, vi := range vs {
				switch {
				case vi.Warning:
					v.Warnings = append(v.Warnings, vi.Error())
				case v.Refusal == nil:
					v.Refusal = &workspace.Refusal{File: path, Line: vi.Line, Field: vi.Field, Reason: vi.Reason}
				default:
					v.Refusal.More = append(v.Refusal.More, &workspace.Refusal{File: path, Line: vi.Line, Field: vi.Field, Reason: vi.Reason})
				}
			}
		}
		rep.add(v)
		return nil
	})
	if err != nil {
		return err
	}
	if set == nil {
		return rep.finish("readable messages (outside a workspace and without --skill, neither their senders nor a protocol were checked)")
	}
	return rep.finish("no problems")
}

// report is what validate says of the files it checks: a line for each
// refusal and warning, then a line when all passed; or, with JSON, every
// verdict at the end.
type report struct {
	e               *env
	asJSON          bool
	verdicts        []verdictJSON
	files, problems int
}

func (r *report) add(v *workspace.Verdict) {
	r.files++
	if !v.Accepted() {
		r.problems++
	}
	if r.asJSON {
		r.verdicts = append(r.verdicts, jsonVerdict(v))
		return
	}
	if !v.Accepted() {
		fmt.Fprintln(r.e.stdout, v.Refusal.Error())
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(r.e.stdout, "%s: warning: %s\n", v.File, w)
	}
}

// finish prints the verdicts (JSON) or, when every file passed, ok; it
// returns the error that exits 1 when one did not.
func (r *report) finish(ok string) error {
	switch {
	case r.asJSON:
		if r.verdicts == nil {
			r.verdicts = []verdictJSON{}
		}
		if err := r.e.printJSON(r.verdicts); err != nil {
			return err
		}
	case r.problems == 0:
		fmt.Fprintf(r.e.stdout, "%d %s: %s\n", r.files, plural(r.files, "file", "files"), ok)
	}
	if r.problems > 0 {
		return errSilent
	}
	return nil
}

// eachMessageFile calls fn for every message file among paths: a file
// itself, or every file in a directory tree, leaving out staging (tmp/),
// reason files and editors' scratch files. A path that cannot be read is
// given to fn with its error.
func eachMessageFile(paths []string, fn func(path string, err error) error) error {
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil || !info.IsDir() {
			if err := fn(p, err); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fn(path, err)
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
			return fn(path, nil)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
