package main

import (
	"embed"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/tools"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

// The completion scripts. Each asks `parley __complete` for the candidates
// of the word being completed, so they stay small and every shell offers
// the same words.
//
//go:embed completions
var completionScripts embed.FS

// shells are the shells parley writes a completion script for.
var shells = []string{"bash", "zsh", "fish"}

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish: commands, flags, agents, message ids, skills",
		ArgsUsage: "bash|zsh|fish",
		Description: "Load it in the current shell, or install it where the shell looks:\n\n" +
			"   bash  source <(parley completion bash)      (in ~/.bashrc)\n" +
			"   zsh   source <(parley completion zsh)       (in ~/.zshrc, after compinit),\n" +
			"         or parley completion zsh > \"${fpath[1]}/_parley\"\n" +
			"   fish  parley completion fish > ~/.config/fish/completions/parley.fish\n\n" +
			"Agent names, message ids, skills, campaigns and characters come from the\n" +
			"workspace of the current directory, or the one -C names on the line.",
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "a shell: "+strings.Join(shells, ", ")); err != nil {
				return err
			}
			shell := c.Args().First()
			if !slices.Contains(shells, shell) {
				return usagef("completion: unknown shell %q (parley completes in %s)", shell, strings.Join(shells, ", "))
			}
			script, err := completionScripts.ReadFile("completions/parley." + shell)
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(script)
			return err
		},
	}
}

// completeCommand is the hidden command the completion scripts call:
//
//	parley __complete WORD... CURRENT
//
// with the words of the line after "parley", the last being the word
// being completed (empty when the cursor is after a space). It prints the
// candidates that start with it, one a line, each possibly followed by a
// tab and a description; a line ":files" or ":dirs" asks the shell to add
// its own file or directory names. It never fails: a line it cannot make
// sense of has no candidates.
func completeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		HideHelp:        true, // "help" and "--help" are words to complete
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) == 0 {
				words = []string{""}
			}
			for _, cand := range complete(c.App, words) {
				fmt.Fprintln(e.stdout, cand)
			}
			return nil
		},
	}
}

// Lines of __complete's output that stand for the shell's own names.
const (
	completeFiles = ":files"
	completeDirs  = ":dirs"
)

// complete returns the lines __complete prints for words.
func complete(app *cli.App, words []string) []string {
	cur := words[len(words)-1]
	before := words[:len(words)-1]

	// A flag's value written --flag=value. bash splits the word at "=":
	// the line ends [--from = al], or [--from =] right after the "=".
	var valueOf string // the flag whose value is being completed, as written
	prefix := ""       // what goes before each value
	switch n := len(before); {
	case cur == "=" && n > 0 && dashed(before[n-1]):
		valueOf, before, cur, prefix = before[n-1], before[:n-1], "", "="
	case n > 1 && before[n-1] == "=" && dashed(before[n-2]):
		valueOf, before = before[n-2], before[:n-2]
	case dashed(cur) && strings.Contains(cur, "="):
		name, val, _ := strings.Cut(cur, "=")
		valueOf, cur, prefix = name, val, name+"="
	}

	k := &completer{app: app}
	var cmd *cli.Command // nil: no command yet
	cmds := app.Commands // the commands cmd was found among
	var helpPath []string
	positional := 0
	dashes := false
	var pending cli.Flag
	for i := 0; i < len(before); i++ {
		w := before[i]
		switch {
		case pending != nil:
			k.remember(pending, w)
			pending = nil
		case !dashes && w == "--":
			dashes = true
		case !dashes && dashed(w):
			f := k.flag(cmd, w)
			if f != nil && needsValue(f, w) {
				pending = f
			} else if _, value, ok := strings.Cut(w, "="); ok && f != nil {
				k.remember(f, value)
			}
		case cmd == nil:
			if cmd = findCommand(cmds, w); cmd == nil {
				return nil
			}
		case len(cmd.Subcommands) > 0:
			cmds = cmd.Subcommands
			if isHelpCommand(w) {
				cmd = &cli.Command{Name: "help"} // a group's, added when it runs
			} else if cmd = findCommand(cmds, w); cmd == nil {
				return nil
			}
		default:
			positional++
			if cmd.Name == "help" {
				helpPath = append(helpPath, w)
			}
		}
	}
	if valueOf != "" {
		pending = k.flag(cmd, valueOf)
		if pending == nil {
			return nil
		}
	}

	var out []string
	add := func(value, desc string) {
		if strings.HasPrefix(value, cur) {
			if desc != "" {
				value += "\t" + desc
			}
			out = append(out, prefix+value)
		}
	}
	switch {
	case pending != nil:
		k.values([]int{flagKinds[pending.Names()[0]]}, cmd, add, &out)
	case !dashes && strings.HasPrefix(cur, "-"):
		flags := app.Flags
		if cmd != nil {
			flags = cmd.Flags
		}
		for _, f := range flags {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				add(dashName(n), describeFlag(f))
			}
		}
		if findFlag(flags, "--help") == nil {
			add("--help", "show help")
		}
	case cmd == nil:
		k.commands(app.Commands, add)
	case len(cmd.Subcommands) > 0:
		k.commands(cmd.Subcommands, add)
	case cmd.Name == "help":
		// `parley help campaign apply`, `parley campaign help apply`
		for _, w := range helpPath {
			if c := findCommand(cmds, w); c != nil {
				cmds = c.Subcommands
			} else {
				cmds = nil
			}
		}
		k.commands(cmds, add)
	default:
		kinds, literals := argValues(cmd.ArgsUsage, positional)
		for _, l := range literals {
			add(l, "")
		}
		k.values(kinds, cmd, add, &out)
	}
	return out
}

// completer looks up the values the line can take in the workspace found
// from dir (the line's -C), PARLEY_WORKSPACE, or the current directory.
type completer struct {
	app      *cli.App
	dir      string // -C on the line
	campaign string // --campaign on the line
	ws       *workspace.Workspace
	opened   bool
}

// remember keeps the values of the flags that say where to look: -C,
// --campaign.
func (k *completer) remember(f cli.Flag, value string) {
	switch f.Names()[0] {
	case "workspace":
		k.dir = value
	case "campaign":
		k.campaign = value
	}
}

// flag returns the flag a word names: the command's, or a global one.
func (k *completer) flag(cmd *cli.Command, w string) cli.Flag {
	if cmd != nil {
		if f := findFlag(cmd.Flags, w); f != nil {
			return f
		}
	}
	return findFlag(k.app.Flags, w)
}

func (k *completer) workspace() *workspace.Workspace {
	if k.opened {
		return k.ws
	}
	k.opened = true
	dir := k.dir
	if dir == "" {
		dir = os.Getenv("PARLEY_WORKSPACE")
	}
	if dir == "" {
		dir = "."
	}
	if root, err := workspace.Find(dir); err == nil {
		k.ws, _ = workspace.Open(root)
	}
	return k.ws
}

func (k *completer) commands(cmds []*cli.Command, add func(value, desc string)) {
	for _, c := range cmds {
		if !c.Hidden && !isHelpCommand(c.Name) {
			add(c.Name, summary(c.Usage))
		}
	}
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// The kinds of values parley completes.
const (
	kindNone = iota
	kindAgent
	kindID
	kindFile
	kindDir
	kindSkill
	kindType
	kindState
	kindCampaign
	kindCharacter
	kindTool
)

// flagKinds are the values of flags, by the flag's name.
var flagKinds = map[string]int{
	"from": kindAgent, "to": kindAgent, "cc": kindAgent,
	"agent": kindAgent, "as": kindAgent, "lead": kindAgent,
	"skill": kindSkill, "type": kindType, "state": kindState,
	"campaign": kindCampaign, "character": kindCharacter,
	"file": kindFile, "dir": kindDir, "workspace": kindDir,
}

// argKinds are the values of arguments, by the word that stands for them
// in the command's ArgsUsage (what `parley help` prints).
var argKinds = map[string]int{
	"AGENT": kindAgent, "ID": kindID, "PATH": kindFile, "FILE": kindFile,
	"DIR": kindDir, "SKILL": kindSkill, "TYPE": kindType, "CAMPAIGN": kindCampaign,
	"CHARACTER": kindCharacter, "TOOL": kindTool,
}

// argValues returns what the argument at index n can be, read from a
// command's ArgsUsage: kinds of values for the upper-case words ("AGENT...",
// "ID|PATH", "CHARACTER KEY=VALUE..."), and lower-case choices as they are
// ("[dnd|teams [DIR]]", "bash|zsh|fish"). A word with "..." repeats.
func argValues(usage string, n int) (kinds []int, literals []string) {
	words := strings.Fields(usage)
	if len(words) == 0 {
		return nil, nil
	}
	w := words[min(n, len(words)-1)]
	if n >= len(words) && !strings.Contains(w, "...") {
		return nil, nil
	}
	alts := strings.Split(strings.Trim(w, "[]."), "|")
	for _, alt := range alts {
		if k, ok := argKinds[alt]; ok {
			kinds = append(kinds, k)
		} else if len(alts) > 1 && alt == strings.ToLower(alt) {
			literals = append(literals, alt)
		}
	}
	return kinds, literals
}

// values adds the values of the kinds: names and ids from the workspace,
// or a line asking the shell for file or directory names.
func (k *completer) values(kinds []int, cmd *cli.Command, add func(value, desc string), out *[]string) {
	for _, kind := range kinds {
		switch kind {
		case kindFile:
			*out = append(*out, completeFiles)
		case kindDir:
			*out = append(*out, completeDirs)
		case kindState:
			for _, s := range mailbox.States[1:] {
				add(s, "")
			}
		case kindTool:
			for _, t := range tools.Tools() {
				add(t.Name, summary(t.Description))
			}
		case kindSkill:
			for _, s := range k.skills() {
				add(s.Name, summary(s.Description))
			}
		case kindType:
			for _, s := range k.protocol() {
				for _, t := range s.Types {
					add(t.Name, s.Name)
				}
			}
		}
		ws := k.workspace()
		if ws == nil {
			continue
		}
		switch kind {
		case kindAgent:
			for _, a := range ws.AgentNames() {
				roles := ws.Roles(a)
				if slices.Equal(roles, []string{a}) {
					roles = nil // an agent named after its role
				}
				add(a, strings.Join(roles, ", "))
			}
		case kindID:
			requests := cmd != nil && (cmd.Name == "approve" || cmd.Name == "reject")
			k.ids(ws, requests, add)
		case kindCampaign:
			names, _ := campaigns.List(ws.Root)
			for _, n := range names {
				add(n, "")
			}
		case kindCharacter:
			name := k.campaign
			if name == "" {
				name = ws.Config.Campaign
			}
			camp, err := campaigns.Find(ws.Root, name)
			if err != nil {
				continue
			}
			names, _ := camp.Characters()
			for _, n := range names {
				add(n, "")
			}
		}
	}
}

// ids adds the id of every message in the workspace's mailboxes, with
// where it is; with requests, only the plan approval and shutdown
// requests waiting for an answer (what approve and reject take).
func (k *completer) ids(ws *workspace.Workspace, requests bool, add func(value, desc string)) {
	seen := map[string]bool{}
	states := []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead, mailbox.Sent, mailbox.Rejected, mailbox.Outbox}
	if requests {
		states = []string{mailbox.Inbox, mailbox.Cur}
	}
	for _, state := range states {
		for _, a := range ws.AgentNames() {
			entries, _ := ws.Mailbox(a).List(state)
			for _, en := range entries {
				if en.ID == "" || seen[en.ID] {
					continue
				}
				desc := a + "/" + state
				if requests {
					typ := requestType(ws, en.Path)
					if typ == "" {
						continue
					}
					desc += ", " + typ
				}
				seen[en.ID] = true
				add(en.ID, desc)
			}
		}
	}
}

// requestType returns the type of the message at path when it is a
// structured request parley approve and reject answer, else "".
func requestType(ws *workspace.Workspace, path string) string {
	m, err := mailbox.ReadMessage(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return ""
	}
	typ, _ := m.Header().Get("type")
	if typ == workspace.PlanApprovalRequest || typ == workspace.ShutdownRequest {
		return typ
	}
	return ""
}

// skills returns the skills parley knows here: the workspace's and the
// shipped ones.
func (k *completer) skills() []*skills.Skill {
	dir := ""
	if ws := k.workspace(); ws != nil {
		dir = ws.SkillsDir()
	}
	lib, err := skills.LoadLibrary(dir)
	if err != nil {
		return nil
	}
	return lib.List()
}

// protocol returns the skills whose types compose offers: those the
// workspace names, else every one.
func (k *completer) protocol() []*skills.Skill {
	all := k.skills()
	ws := k.workspace()
	if ws == nil || len(ws.Config.Skills) == 0 {
		return all
	}
	var used []*skills.Skill
	for _, s := range all {
		if slices.Contains(ws.Config.Skills, s.Name) {
			used = append(used, s)
		}
	}
	return used
}

// describeFlag is a flag's usage, short, for a completion menu.
func describeFlag(f cli.Flag) string {
	if df, ok := f.(cli.DocGenerationFlag); ok {
		return summary(strings.ReplaceAll(df.GetUsage(), "`", ""))
	}
	return ""
}

// summary cuts a description to one short line for a completion menu:
// its first clause, at most 70 characters.
func summary(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.IndexAny(s, ":;("); i > 20 {
		s = strings.TrimSpace(s[:i])
	}
	return shorten(s, 70)
}
