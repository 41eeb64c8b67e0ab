package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/runner/workspace"
	"github.com/urfave/cli/v2"
)

// newApp builds the command line.
func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:      "parley",
		Usage:     "run agent workflows that talk through message files",
		UsageText: "parley [-C DIR] COMMAND [flags] [args]",
		Description: "Agents exchange messages as markdown files in per-agent mailboxes\n" +
			"(mailboxes/<agent>/outbox/ -> inbox/). `parley run` routes them.\n" +
			"Flags may come before or after arguments; after -- everything is an argument.",
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "workspace",
				Aliases: []string{"C"},
				Usage:   "the workspace `DIR` (default: the nearest directory with a parley.yaml, from here up)",
				EnvVars: []string{"PARLEY_WORKSPACE"},
			},
			// Not cli.App.Version: urfave's own flag has a -v alias.
			&cli.BoolFlag{Name: "version", Usage: "print parley's version, as the version command does"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				return runVersion(e, buildVersion(), false)
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			initCommand(e),
			sendCommand(e),
			runCommand(e),
			statusCommand(e),
			usageCommand(e),
			inboxCommand(e),
			readCommand(e),
			logCommand(e),
			serveCommand(e),
			exportCommand(e),
			skillsCommand(e),
			validateCommand(e),
			composeCommand(e),
			rollCommand(e),
			campaignCommand(e),
			journalCommand(e),
			planCommand(e),
			pipelineCommand(e),
			checkpointCommand(e),
			mergeFileCommand(e),
			characterCommand(e),
			inventoryCommand(e),
			toolCommand(e),
			routesCommand(e),
			stopCommand(e),
			answerCommand(e, "approve", true),
			answerCommand(e, "reject", false),
			doneCommand(e),
			replyCommand(e),
			retryCommand(e),
			playCommand(e),
			mcpCommand(e),
			sessionCommand(e),
			bridgeCommand(e),
			answerCommandSeat(e),
			demoCommand(e),
			benchCommand(e),
			versionCommand(e),
			completionCommand(e),
			completeCommand(e),
		},
		// main decides exit codes and prints errors, in one place.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError{err: flagValueError(c, err)}
		},
		CommandNotFound: func(c *cli.Context, name string) {
			e.usage = unknownCommand(c.App.Commands, name)
		},
		// --field values and --body text may hold commas; the commands
		// that take lists split them themselves.
		DisableSliceFlagSeparator: true,
	}
	var usage func([]*cli.Command)
	usage = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.OnUsageError = app.OnUsageError
			if action := cmd.Action; action != nil {
				cmd.Action = func(c *cli.Context) error {
					if e.parsed != nil {
						e.parsed()
					}
					if err := emptyNameFlag(c); err != nil {
						return err
					}
					return action(c)
				}
			}
			if len(cmd.Subcommands) > 0 {
				cmd.UsageText = "parley " + cmd.Name + " COMMAND [flags] [args]"
				cmd.CustomHelpTemplate = groupHelp
			} else {
				// urfave gives every command a "help" (alias "h")
				// subcommand, which took a first argument of that name
				// (`parley inbox h`, the inbox of agent h; `parley init
				// help`) and printed the help instead; --help stays.
				cmd.HideHelpCommand = true
			}
			usage(cmd.Subcommands)
		}
	}
	usage(app.Commands)
	return app
}

// mayBeEmpty are the string flags an empty value means something for:
// text (an empty body, note, reason, ...) and a message's type or signal
// (none). Every other flag names something (an agent, a file, a time, an
// address): given empty, as `--as "$ME"` gives it with ME unset, it fell
// back to its default without a word (serve --as "" showed no seat, log
// --agent "" every agent's lines). A flag added later is checked unless
// it is added here.
var mayBeEmpty = map[string]bool{
	"body": true, "note": true, "reason": true, "feedback": true, "message": true,
	"title": true, "happened": true, "did": true, "learned": true, "feel": true,
	"type": true, "signal": true,
}

// emptyNameFlag is a usage error for a flag of the command, or of
// parley itself (-C), given an empty value where it must name something
// (see mayBeEmpty), or a list flag given an empty item (--to "").
// A value read from an environment variable set empty counts as unset.
func emptyNameFlag(c *cli.Context) error {
	flags := slices.Concat(c.Command.Flags, c.App.Flags)
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if mayBeEmpty[f.Name] || !c.IsSet(f.Name) || c.String(f.Name) != "" || envSetEmpty(f.EnvVars) {
				continue
			}
			return usagef("%s is empty: give it a value (%s)", writtenFlag(f.Name, f.Aliases), flagValueName(f.Usage))
		case *cli.StringSliceFlag:
			if !c.IsSet(f.Name) {
				continue
			}
			// A list of names, the commands split at commas too
			// (splitList): "$A,$B" with B unset gives "aria,", whose
			// empty item was dropped without a word. A field
			// (KEY=VALUE: YAML, [a, b]) or a file is no such list.
			kind := flagValueName(f.Usage)
			for _, v := range c.StringSlice(f.Name) {
				items := []string{v}
				if kind != "KEY=VALUE" && kind != "FILE" {
					items = strings.Split(v, ",")
				}
				for _, item := range items {
					if strings.TrimSpace(item) == "" {
						return usagef("%s %q has an empty item: give each a value (%s)", writtenFlag(f.Name, f.Aliases), v, kind)
					}
				}
			}
		}
	}
	return nil
}

// writtenFlag is how a flag is written: --name, or -C/--workspace for one
// with a one-letter alias.
func writtenFlag(name string, aliases []string) string {
	for _, a := range aliases {
		if len(a) == 1 {
			return "-" + a + "/--" + name
		}
	}
	return "--" + name
}

// envSetEmpty reports whether one of vars is set, to "": a flag read
// from it was not given empty on the command line.
func envSetEmpty(vars []string) bool {
	for _, v := range vars {
		if val, ok := os.LookupEnv(v); ok && val == "" {
			return true
		}
	}
	return false
}

// flagValueName is what a flag's value is, as its help (usage) names
// it (`AGENT`), else VALUE.
func flagValueName(usage string) string {
	_, rest, ok := strings.Cut(usage, "`")
	if name, _, ok2 := strings.Cut(rest, "`"); ok && ok2 && name != "" {
		return name
	}
	return "VALUE"
}

// groupHelp is the help of a command with subcommands (campaign, skills,
// ...). urfave's own template lists the subcommands only once the group
// has run (`parley campaign --help`), not for `parley help campaign`.
var groupHelp = strings.Replace(cli.SubcommandHelpTemplate,
	`{{template "visibleCommandCategoryTemplate" .}}`, `{{template "visibleCommandTemplate" .}}`, 1)

// openWorkspace opens the workspace named by -C, or the one holding the
// current directory. Either is found by walking up, as git does; a -C that
// names no directory is an error of its own, so that the walk never starts
// from a parent the user did not name.
func openWorkspace(c *cli.Context) (*workspace.Workspace, error) {
	return openWorkspaceWith(c, workspace.LoadOptions{})
}

// openWorkspaceToRead opens the workspace as openWorkspace does, for a
// command that only reads (status, inbox, read, log, pipeline, usage): a key parley.yaml
// may not hold (a typo, a key of a newer parley) is skipped, and said
// once on stderr as a warning, instead of keeping a person from their
// messages; so is an entry it leaves without a key it needs: an agent
// kept without a driver (its mailbox can be read), a route, a timeout,
// the bridge or a nameless agent left out. Any other problem in parley.yaml is an error, as it is for
// every command.
func (e *env) openWorkspaceToRead(c *cli.Context) (*workspace.Workspace, error) {
	ws, err := openWorkspaceWith(c, workspace.LoadOptions{SkipUnknown: true})
	if err != nil {
		return nil, err
	}
	for _, k := range ws.Config.Skipped {
		what := "; skipped"
		if errors.Is(k, workspace.ErrMissing) {
			what = "" // an entry left out or kept without a driver: the error says which
		}
		fmt.Fprintf(e.stderr, "parley: warning: %s%s (parley run refuses it)\n", printable(k.Error()), what)
	}
	return ws, nil
}

// findRoot finds the root of the workspace -C names, or the current
// directory is in (workspace.Find).
func findRoot(c *cli.Context) (string, error) {
	dir := c.String("workspace")
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", noDirError(dir)
		}
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	return workspace.Find(dir)
}

func openWorkspaceWith(c *cli.Context, opts workspace.LoadOptions) (*workspace.Workspace, error) {
	root, err := findRoot(c)
	if err != nil {
		if note := workspace.RunnerKeeps(root); root != "" && note != "" {
			return nil, fmt.Errorf("%w%s", err, note)
		}
		return nil, err
	}
	ws, err := workspace.OpenWith(root, opts)
	if err != nil {
		if note := workspace.RunnerKeeps(root); note != "" {
			return nil, fmt.Errorf("%w%s", err, note)
		}
		return nil, err
	}
	return ws, nil
}

// noDirError is a -C (or PARLEY_WORKSPACE) that names no directory. It
// exits as no workspace does (4), but is not workspace.ErrNoWorkspace:
// commands that go on without a workspace (skills, validate) must not go
// on when the one named is not there.
type noDirError string

func (d noDirError) Error() string {
	from := "-C"
	if os.Getenv("PARLEY_WORKSPACE") == string(d) {
		from = "PARLEY_WORKSPACE"
	}
	return fmt.Sprintf("%s: no such directory: %s", from, string(d))
}

// jsonFlag is the --json flag of commands whose output is data.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}

// printJSON writes v as indented JSON.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// noArgs refuses positional arguments for commands that take none.
func noArgs(c *cli.Context) error {
	if c.Args().Present() {
		return argsError(c, "%s takes no arguments (got %q)", commandName(c), c.Args().First())
	}
	return nil
}

// exactArgs requires n positional arguments, named by what.
func exactArgs(c *cli.Context, n int, what string) error {
	return argCount(c, n, n, what)
}

// argCount requires from min to max positional arguments (max < 0: any
// number), named by what.
func argCount(c *cli.Context, min, max int, what string) error {
	switch {
	case c.NArg() < min:
		return argsError(c, "%s needs %s", commandName(c), what)
	case max >= 0 && c.NArg() > max:
		return argsError(c, "%s takes only %s (got an extra argument %q)", commandName(c), what, c.Args().Get(max))
	}
	return nil
}

// commandName is the command being run, as typed after "parley": "inbox",
// "skills show". (urfave's Command.FullName is the last word only.)
func commandName(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() { // the command's context, its parents', the app's
		if ctx.Command != nil && ctx.Command.Name != c.App.Name {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// argsError is a usage error in a command's arguments; its hint is the
// command's synopsis.
func argsError(c *cli.Context, format string, args ...any) error {
	return usageError{err: fmt.Errorf(format, args...), hint: "usage: " + synopsis(commandName(c), c.Command)}
}

// synopsis is a command's usage in one line: parley inbox [--state STATE]
// [--json] AGENT. A command with many flags has [flags] instead.
func synopsis(name string, cmd *cli.Command) string {
	parts := []string{"parley", name}
	var flags []string
	for _, f := range cmd.Flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() || isHelpFlag(dashName(f.Names()[0])) {
			continue
		}
		name := dashName(f.Names()[0])
		if needsValue(f, name) {
			name += " " + placeholder(f)
		}
		flags = append(flags, "["+name+"]")
	}
	if len(flags) > 4 {
		flags = []string{"[flags]"}
	}
	parts = append(parts, flags...)
	if cmd.ArgsUsage != "" {
		parts = append(parts, cmd.ArgsUsage)
	}
	return strings.Join(parts, " ")
}

// printJSONLine writes v as one line of JSON.
func (e *env) printJSONLine(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// flagValueRE matches the flag package's words for a value a flag cannot
// take: `invalid value "abc" for flag -dc: parse error`.
var flagValueRE = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -([^:]+): (.*)$`)

// flagValueError puts a flag value's parse error, as urfave/cli passes it
// on from the flag package (a single dash, "parse error"), in parley's
// words: the flag as it is typed and what it wants, `--dc: want a whole
// number, got "abc"`. Any other usage error is returned as it is.
func flagValueError(c *cli.Context, err error) error {
	m := flagValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		return err
	}
	name, reason := m[2], m[3]
	var flags []cli.Flag
	if c != nil && c.Command != nil {
		flags = c.Command.Flags
	}
	if c != nil && c.App != nil {
		flags = append(flags, c.App.Flags...)
	}
	want := ""
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			want = "a whole number"
		case *cli.Float64Flag:
			want = "a number"
		case *cli.DurationFlag:
			want = "a duration (30s, 5m, 1h30m)"
		}
	}
	dash := "--"
	if len(name) == 1 {
		dash = "-"
	}
	if want == "" {
		return fmt.Errorf("%s%s: cannot take %q: %s", dash, name, value, reason)
	}
	if strings.Contains(reason, "out of range") {
		return fmt.Errorf("%s%s: want %s, got %q: out of range", dash, name, want, value)
	}
	return fmt.Errorf("%s%s: want %s, got %q", dash, name, want, value)
}
