package main

import (
	"encoding/json"
	"os"
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
		},
		Commands: []*cli.Command{
			initCommand(e),
			sendCommand(e),
			runCommand(e),
			statusCommand(e),
			inboxCommand(e),
			readCommand(e),
			logCommand(e),
			skillsCommand(e),
			validateCommand(e),
			composeCommand(e),
			rollCommand(e),
			campaignCommand(e),
			journalCommand(e),
			checkpointCommand(e),
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
			demoCommand(e),
			benchCommand(e),
		},
		// main decides exit codes and prints errors, in one place.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
		CommandNotFound: func(c *cli.Context, name string) {
			e.usage = usagef("unknown command %q", name)
		},
		// --field values and --body text may hold commas; the commands
		// that take lists split them themselves.
		DisableSliceFlagSeparator: true,
	}
	var usage func([]*cli.Command)
	usage = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.OnUsageError = app.OnUsageError
			usage(cmd.Subcommands)
		}
	}
	usage(app.Commands)
	return app
}

// workspace opens the workspace named by -C, or the one holding the
// current directory.
func openWorkspace(c *cli.Context) (*workspace.Workspace, error) {
	dir := c.String("workspace")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	root, err := workspace.Find(dir)
	if err != nil {
		return nil, err
	}
	return workspace.Open(root)
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
		return usagef("%s takes no arguments (got %q)", c.Command.Name, c.Args().First())
	}
	return nil
}

// exactArgs requires n positional arguments.
func exactArgs(c *cli.Context, n int, what string) error {
	if c.NArg() != n {
		return usagef("%s needs %s", c.Command.Name, what)
	}
	return nil
}

// printJSONLine writes v as one line of JSON.
func (e *env) printJSONLine(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// flagsFirst lets flags follow arguments (`parley init DIR --agent gm`), as
// people type them: urfave/cli stops reading flags at the first argument,
// so the flags of the command being run are moved before its arguments.
// Everything after "--" stays an argument.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags, up to the command name.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) {
			if i+1 < len(args) {
				out = append(out, args[i+1])
			}
			i++
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	cmd := app.Command(args[i])
	out = append(out, args[i])
	i++
	for cmd != nil && len(cmd.Subcommands) > 0 {
		if i >= len(args) {
			return out
		}
		sub := cmd.Command(args[i])
		if sub == nil {
			return append(out, args[i:]...)
		}
		out = append(out, args[i])
		i++
		cmd = sub
	}
	if cmd == nil {
		return append(out, args[i:]...)
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-" && isFlag(cmd.Flags, a):
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// flagName returns the name in "--name=value", "--name" or "-n".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func findFlag(flags []cli.Flag, arg string) cli.Flag {
	name := flagName(arg)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	if name == "help" || name == "h" {
		return &cli.BoolFlag{Name: name}
	}
	return nil
}

func isFlag(flags []cli.Flag, arg string) bool { return findFlag(flags, arg) != nil }

// takesValue reports whether a flag reads the next argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	f := findFlag(flags, arg)
	if f == nil {
		return false
	}
	if _, ok := f.(*cli.BoolFlag); ok {
		return false
	}
	return true
}
