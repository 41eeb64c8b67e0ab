package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

func skillsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "skills",
		Usage: "list, show and check the protocol skills messages are checked against",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the skills: shipped ones and the workspace's skills/ files",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					lib, ws, err := library(c)
					if err != nil {
						return err
					}
					return runSkillsList(e, lib, ws, c.Bool("json"))
				},
			},
			{
				Name:      "show",
				Usage:     "show what parley read from a skill: its message types, who sends them where, fields, values, rules",
				ArgsUsage: "SKILL|FILE",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "a SKILL (its name) or a skill FILE"); err != nil {
						return err
					}
					s, err := findSkill(c, c.Args().First())
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return e.printJSON(s)
					}
					describeSkill(e.stdout, s)
					return nil
				},
			},
			{
				Name:      "check",
				Usage:     "read a skill (a file, or a skill by its name) and say what was understood and what was not (exit 1 on errors)",
				ArgsUsage: "FILE|SKILL",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 1, "a skill FILE or a SKILL (its name)"); err != nil {
						return err
					}
					ws, err := openWorkspace(c)
					if err != nil && !errors.Is(err, workspace.ErrNoWorkspace) {
						return err
					}
					arg := c.Args().First()
					if _, err := os.Stat(arg); err != nil && !strings.HasSuffix(arg, ".md") && !strings.ContainsRune(arg, os.PathSeparator) {
						// A name, as skills show takes one: the skill of
						// that name, from the file it was read from.
						s, err := findSkill(c, arg)
						if err != nil {
							return err
						}
						shown := s.Source
						if ws != nil && !strings.HasPrefix(shown, "builtin:") {
							shown = ws.Short(shown)
						}
						return reportSkillCheck(e, ws, shown, s, c.Bool("json"))
					}
					return runSkillsCheck(e, ws, arg, c.Bool("json"))
				},
			},
		},
	}
}

// library returns the skills of the workspace, or the shipped ones when
// there is no workspace.
func library(c *cli.Context) (*skills.Library, *workspace.Workspace, error) {
	ws, err := openWorkspace(c)
	if errors.Is(err, workspace.ErrNoWorkspace) {
		lib, err := skills.LoadLibrary("")
		return lib, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	lib, err := ws.Skills()
	return lib, ws, err
}

// findSkill returns a skill by name, or reads the file at arg.
func findSkill(c *cli.Context, arg string) (*skills.Skill, error) {
	if strings.HasSuffix(arg, ".md") || strings.ContainsRune(arg, os.PathSeparator) {
		if data, err := os.ReadFile(arg); err == nil {
			return skills.Parse(arg, data), nil
		}
	}
	lib, _, err := library(c)
	if err != nil {
		return nil, err
	}
	s, ok := lib.Get(arg)
	if files, clash := lib.SameName()[arg]; clash && !ok {
		return nil, fmt.Errorf("several files call themselves %q (%s): name the one you mean by its file", arg, strings.Join(files, ", "))
	}
	if !ok {
		var names []string
		for _, s := range lib.List() {
			names = append(names, s.Name)
		}
		if near := spell.Nearest(arg, names, 2); near != "" {
			return nil, fmt.Errorf("%w %q (did you mean %s?)", skills.ErrUnknownSkill, arg, near)
		}
		return nil, fmt.Errorf("%w %q (skills: %s)", skills.ErrUnknownSkill, arg, strings.Join(names, ", "))
	}
	return s, nil
}

type listedSkill struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description"`
	Source      string `json:"source"`
	Types       int    `json:"types"`
	Used        bool   `json:"used"`
	Errors      int    `json:"errors"`
	Warnings    int    `json:"warnings"`
}

func runSkillsList(e *env, lib *skills.Library, ws *workspace.Workspace, asJSON bool) error {
	var used []string
	if ws != nil {
		used = ws.Config.Skills
	}
	sameName := lib.SameName()
	var out []listedSkill
	for _, s := range lib.List() {
		l := listedSkill{Name: s.Name, Version: s.Version, Description: s.Description, Source: s.Source, Types: len(s.Types)}
		for _, u := range used {
			// The skill parley.yaml's name gives, as run loads it: none
			// for a name several files give themselves.
			if _, clash := sameName[u]; !clash {
				got, ok := lib.Get(u)
				l.Used = l.Used || ok && got == s
			}
		}
		l.Errors = len(s.Errors())
		l.Warnings = len(s.Problems) - l.Errors
		out = append(out, l)
	}
	if asJSON {
		return e.printJSON(out)
	}
	width := len("SKILL")
	for _, l := range out {
		width = max(width, len(l.Name))
	}
	fmt.Fprintf(e.stdout, "%-*s  USED  TYPES  VERSION  SOURCE\n", width, "SKILL")
	for _, l := range out {
		mark := ""
		if l.Used {
			mark = "yes"
		}
		src := l.Source
		if l.Errors > 0 {
			src += fmt.Sprintf("  (%d %s: parley skills check %s)", l.Errors, plural(l.Errors, "error", "errors"), l.Source)
		}
		fmt.Fprintf(e.stdout, "%-*s  %-4s  %5d  %-7s  %s\n", width, l.Name, mark, l.Types, dash(l.Version), src)
	}
	for _, w := range sameNameWarnings(lib, ws, "") {
		fmt.Fprintf(e.stderr, "parley: warning: %s\n", w)
	}
	return nil
}

// sameNameWarnings says which files of the workspace give themselves the
// same name (only, when name is not "", that name), and what becomes of
// them: a name parley.yaml uses is refused by run.
func sameNameWarnings(lib *skills.Library, ws *workspace.Workspace, name string) []string {
	sameName := lib.SameName()
	names := make([]string, 0, len(sameName))
	for n := range sameName {
		if name == "" || n == name {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		files := sameName[n]
		// The files parley.yaml names by their file name (skills:
		// [triage-v2]), by what it names them.
		byFile := map[string]string{}
		if ws != nil {
			for _, entry := range ws.Config.Skills {
				if entry == n {
					continue
				}
				if sk, ok := lib.Get(entry); ok {
					for _, f := range files {
						if sameFile(sk.Source, f) {
							byFile[f] = entry
						}
					}
				}
			}
		}
		var chosen, unused []string
		for i, f := range files {
			shown := f
			if ws != nil {
				shown = ws.Short(f)
			}
			if entry, ok := byFile[f]; ok {
				chosen = append(chosen, fmt.Sprintf("%s (skills: [%s])", shown, entry))
			} else {
				unused = append(unused, shown)
			}
			files[i] = shown
		}
		w := fmt.Sprintf("%s all call themselves %q", strings.Join(files, ", "), n)
		if len(files) == 2 {
			w = fmt.Sprintf("%s and %s both call themselves %q", files[0], files[1], n)
		}
		used := false
		if ws != nil {
			used = slices.Contains(ws.Config.Skills, n)
		}
		switch {
		case used:
			w += fmt.Sprintf(": %s names the skill %s, which could be either, and run refuses it; give each file its own name:", workspace.ConfigFile, n)
		case len(chosen) > 0:
			// Named by its file name, as the hint below says: which
			// file is used is no question; the other's edits do
			// nothing.
			w += fmt.Sprintf(": %s uses %s", workspace.ConfigFile, strings.Join(chosen, " and "))
			if len(unused) > 0 {
				w += fmt.Sprintf("; %s %s not used (edits to %s do nothing)", strings.Join(unused, ", "),
					plural(len(unused), "is", "are"), plural(len(unused), "it", "them"))
			}
		default:
			w += ": name the one you mean by its file name, or give each its own name:"
		}
		out = append(out, w)
	}
	return out
}

// sameFile reports whether the paths a and b name one file.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}

// describeSkill writes what parley read from a skill, for a person.
func describeSkill(w io.Writer, s *skills.Skill) {
	fmt.Fprintf(w, "%s", s.Name)
	if s.Version != "" {
		fmt.Fprintf(w, " (version %s)", s.Version)
	}
	fmt.Fprintf(w, "  %s\n", s.Source)
	if s.Description != "" {
		fmt.Fprintf(w, "%s\n", s.Description)
	}
	for _, t := range s.Types {
		describeType(w, t, false)
	}
	if len(s.Signals) > 0 {
		fmt.Fprintln(w, "\nsignals:")
		for _, sg := range s.Signals {
			who := ""
			if len(sg.Senders) > 0 {
				who = "from " + strings.Join(sg.Senders, ", ")
			}
			if len(sg.Recipients) > 0 {
				who = "to " + strings.Join(sg.Recipients, ", ")
			}
			fmt.Fprintf(w, "  %-18s %s (%s)\n", sg.Name, sg.Meaning, who)
		}
	}
	if len(s.Problems) > 0 {
		fmt.Fprintln(w, "\nnot understood:")
		for _, p := range s.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

// describeType writes what parley read of a message type t, for a
// person; asArgs says that type and signal are given as arguments of
// their own (parley mcp's send tool), not as fields, and how a field of a
// dotted name is given.
func describeType(w io.Writer, t *skills.Type, asArgs bool) {
	name := t.Name
	if t.Tagged {
		name = "[" + t.Name + "]"
	}
	fmt.Fprintf(w, "\n%s  (line %d", name, t.Line)
	if t.Section != "" {
		fmt.Fprintf(w, ", %s", t.Section)
	}
	fmt.Fprintln(w, ")")
	from, to := strings.Join(t.Senders, " or "), strings.Join(t.Recipients, " or ")
	if to == "*" {
		to = "everyone"
	} else if t.AllRecipients {
		to = "every " + to
	}
	line := fmt.Sprintf("  from %s to %s, %s", dash(from), dash(to), t.Transport)
	if t.NoBroadcast {
		line += ", never broadcast"
	}
	if t.Phase != "" {
		line += ", phase " + t.Phase
	}
	fmt.Fprintln(w, line)
	if d := t.Deprecated; d != nil {
		fmt.Fprintf(w, "  deprecated since %s: %s\n", d.Deprecated, d.Replacement)
	}
	if asArgs && t.Tagged {
		fmt.Fprintf(w, "  type: %s (the argument type); its fields go in fields:\n", t.Name)
	}
	dotted := ""
	for _, f := range t.Fields {
		req := "optional"
		if f.Required {
			req = "required"
		}
		if f.When != nil {
			req += " when " + f.When.String()
		}
		name := f.Name
		if asArgs && !t.Tagged && (name == "type" || name == "signal") {
			// A header key send takes as an argument of its own.
			if name == "type" {
				fmt.Fprintf(w, "  type: %s (the argument type)\n", t.Name)
				continue
			}
			req += ", as the argument signal"
		}
		if dotted == "" && strings.Contains(f.Name, ".") && !strings.ContainsAny(f.Name, "*[") {
			dotted = f.Name
		}
		fmt.Fprintf(w, "  %-28s %s", name, req)
		if len(f.Enum) > 0 {
			fmt.Fprintf(w, "; one of %s", strings.Join(f.Enum, ", "))
		}
		fmt.Fprintln(w)
	}
	if asArgs && dotted != "" {
		outer, inner, _ := strings.Cut(dotted, ".")
		fmt.Fprintf(w, "  (a dotted name is a field inside another: give %s as fields {\"%s\": {\"%s\": ...}}, or by its dotted name)\n", dotted, outer, inner)
	}
	for _, r := range t.Rules {
		fmt.Fprintf(w, "  rule: %s\n", strings.ReplaceAll(r.Text, "`", ""))
	}
}

// runSkillsCheck says what parley read in a skill file and what it could
// not; in a workspace (ws not nil), also the roles it names that no agent
// has.
func runSkillsCheck(e *env, ws *workspace.Workspace, path string, asJSON bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return reportSkillCheck(e, ws, path, skills.Parse(path, data), asJSON)
}

// reportSkillCheck says what parley read in the skill s, read from path.
func reportSkillCheck(e *env, ws *workspace.Workspace, path string, s *skills.Skill, asJSON bool) error {
	refused := false // a name parley.yaml uses that several files give themselves
	if asJSON {
		if err := e.printJSON(s); err != nil {
			return err
		}
	} else {
		said := false // a warning about the workspace's roles (an agent's unknown role)
		fields, rules := 0, 0
		for _, t := range s.Types {
			fields += len(t.Fields)
			rules += len(t.Rules)
		}
		fmt.Fprintf(e.stdout, "%s: skill %q: %d message %s, %d %s, %d hard %s, %d %s\n", path, s.Name,
			len(s.Types), plural(len(s.Types), "type", "types"), fields, plural(fields, "field", "fields"),
			rules, plural(rules, "rule", "rules"), len(s.Signals), plural(len(s.Signals), "signal", "signals"))
		if roles := s.Roles(); len(roles) > 0 {
			fmt.Fprintf(e.stdout, "roles: %s\n", strings.Join(roles, ", "))
			if ws != nil {
				var unheld []string
				for _, r := range roles {
					if !ws.RoleHeld(r) {
						unheld = append(unheld, r)
					}
				}
				if len(unheld) > 0 {
					fmt.Fprintf(e.stdout, "no agent in %s has: %s\n", workspace.ConfigFile, strings.Join(unheld, ", "))
				}
			}
		}
		for _, p := range s.Problems {
			kind := "error"
			if p.Warning {
				kind = "warning"
			}
			where := ""
			if p.Section != "" {
				where = " (" + p.Section + ")"
			}
			fmt.Fprintf(e.stdout, "%s:%d: %s%s: %s\n", path, p.Line, kind, where, p.Message)
		}
		if ws != nil && inSameName(ws, s) {
			kind := "warning"
			if slices.Contains(ws.Config.Skills, s.Name) {
				kind, refused = "error", true
			}
			if lib, err := ws.Skills(); err == nil {
				for _, w := range sameNameWarnings(lib, ws, s.Name) {
					fmt.Fprintf(e.stdout, "%s: %s\n", kind, w)
					said = true
				}
			}
		}
		if ws != nil {
			// The workspace's roles as run and status warn about them:
			// a role no skill, no route and parley itself knows.
			if protocol, err := ws.Protocol(); err == nil {
				for _, u := range ws.UnknownRoles(protocol) {
					fmt.Fprintf(e.stdout, "warning: %s\n", printable(u.String()))
					said = true
				}
			}
		}
		if len(s.Problems) == 0 && !said {
			fmt.Fprintln(e.stdout, "everything was understood")
		}
	}
	if len(s.Errors()) > 0 || refused {
		return errSilent
	}
	return nil
}

// inSameName reports whether the skill s was read from one of the files
// of the workspace that give themselves the same name.
func inSameName(ws *workspace.Workspace, s *skills.Skill) bool {
	lib, err := ws.Skills()
	if err != nil {
		return false
	}
	this, err := os.Stat(s.Source)
	if err != nil {
		return false
	}
	for _, f := range lib.SameName()[s.Name] {
		if fi, err := os.Stat(f); err == nil && os.SameFile(this, fi) {
			return true
		}
	}
	return false
}
