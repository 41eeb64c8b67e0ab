package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/internal/spell"
)

// commandLine reads the command line before urfave/cli does, and puts it
// in the order urfave reads: the global flags, the command (and its
// subcommand), the command's flags, then "--" and the arguments.
//
// urfave reads a command's flags only up to its first argument, knows the
// global flags (-C) only before the command, and takes an unknown flag
// after an argument for an argument (`parley roll --bogus 1d20` would roll
// "--bogus"). People put flags anywhere, so flags are moved wherever they
// are, and what urfave would misread is refused here with a usage error
// that names it: an unknown flag, an unknown command, a missing
// subcommand, a flag without its value. Everything after "--" stays an
// argument; so does a negative number (`-3`), and for roll anything that
// reads as a dice expression (`-7/2`, `-d4`).
func commandLine(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	globals := []string{args[0]}
	rest := args[1:]

	// Global flags before the command.
	for len(rest) > 0 && dashed(rest[0]) && rest[0] != "--" {
		if isHelpFlag(rest[0]) {
			return args, nil // urfave prints the help
		}
		f := findFlag(app.Flags, rest[0])
		if f == nil {
			return nil, usagef("unknown flag %s (before a command, parley takes %s)", flagWord(rest[0]), flagList(app.Flags))
		}
		n, err := flagWords(f, rest, "")
		if err != nil {
			return nil, err
		}
		globals = append(globals, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) == 0 || rest[0] == "--" {
		return args, nil
	}

	name := rest[0]
	cmd := app.Command(name)
	if cmd == nil {
		if isHelpCommand(name) && len(rest) > 2 {
			// urfave's help reads one word: `parley help skills show`
			// is `parley skills show --help`.
			line := append(slices.Clone(globals), rest[1:]...)
			return commandLine(app, append(line, "--help"))
		}
		if isHelpCommand(name) {
			return args, nil
		}
		return nil, unknownCommand(app.Commands, name)
	}
	path := []string{name}
	rest = rest[1:]
	if cmd.SkipFlagParsing {
		return append(append(globals, path...), rest...), nil
	}

	// A group (campaign, skills, ...): its subcommand, with global flags
	// and --help allowed before it.
	for len(cmd.Subcommands) > 0 {
		for len(rest) > 0 && dashed(rest[0]) && rest[0] != "--" {
			if isHelpFlag(rest[0]) {
				return append(append(globals, path...), rest...), nil
			}
			g := globalFlag(app, rest[0])
			if g == nil {
				return nil, usagef("%s: unknown flag %s (name a command first: %s)", strings.Join(path, " "), flagWord(rest[0]), commandList(cmd.Subcommands, ", "))
			}
			n, err := flagWords(g, rest, "")
			if err != nil {
				return nil, err
			}
			globals = append(globals, rest[:n]...)
			rest = rest[n:]
		}
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		group := strings.Join(path, " ")
		if len(rest) == 0 {
			return nil, usageError{
				err:  fmt.Errorf("%s needs a command: %s", group, commandList(cmd.Subcommands, ", ")),
				hint: fmt.Sprintf("`parley help %s` says what each does", group),
			}
		}
		if isHelpCommand(rest[0]) {
			return append(append(globals, path...), rest...), nil
		}
		sub := cmd.Command(rest[0])
		if sub == nil {
			return nil, usagef("%s: unknown command %q (its commands: %s)", group, rest[0], commandList(cmd.Subcommands, ", "))
		}
		path = append(path, rest[0])
		rest = rest[1:]
		cmd = sub
	}

	// The command's own flags, global flags, and its arguments.
	full := strings.Join(path, " ")
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case !dashed(a):
			positional = append(positional, a)
		case findFlag(cmd.Flags, a) != nil:
			n, err := flagWords(findFlag(cmd.Flags, a), rest[i:], full)
			if err != nil {
				return nil, err
			}
			flags = append(flags, rest[i:i+n]...)
			i += n - 1
		case isHelpFlag(a):
			flags = append(flags, a)
		case globalFlag(app, a) != nil:
			n, err := flagWords(globalFlag(app, a), rest[i:], "")
			if err != nil {
				return nil, err
			}
			globals = append(globals, rest[i:i+n]...)
			i += n - 1
		case argumentLike(full, a):
			positional = append(positional, a)
		default:
			return nil, usagef("%s: unknown flag %s (%s)", full, flagWord(a), flagsOf(cmd))
		}
	}
	out := append(append(globals, path...), flags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out, nil
}

// dashed reports whether a word is written like a flag.
func dashed(a string) bool { return len(a) > 1 && a[0] == '-' }

func isHelpFlag(a string) bool {
	switch flagName(a) {
	case "help", "h":
		return !strings.Contains(a, "=")
	}
	return false
}

func isHelpCommand(a string) bool { return a == "help" || a == "h" }

// negative is a negative number: -3, -0.5.
var negative = regexp.MustCompile(`^-[0-9.]`)

// argumentLike reports whether a word that starts with "-" but is no flag
// of the command is one of its arguments: a negative number, or for roll a
// dice expression.
func argumentLike(command, a string) bool {
	if command == "roll" {
		_, err := dice.Parse(a)
		return err == nil
	}
	return negative.MatchString(a)
}

// globalFlag returns the global flag a word names, if it is one that may
// come anywhere on the line (-C; not --version, which is a command of its
// own).
func globalFlag(app *cli.App, a string) cli.Flag {
	f := findFlag(app.Flags, a)
	if f == nil || slices.Contains(f.Names(), "version") {
		return nil
	}
	return f
}

// flagWords returns how many words a flag takes from the line: 1, or 2
// when its value is the next word. A flag whose value is missing is a
// usage error.
func flagWords(f cli.Flag, words []string, command string) (int, error) {
	if !needsValue(f, words[0]) {
		return 1, nil
	}
	if len(words) < 2 {
		where := ""
		if command != "" {
			where = command + ": "
		}
		return 0, usagef("%s%s needs a value: %s %s", where, flagWord(words[0]), flagWord(words[0]), placeholder(f))
	}
	return 2, nil
}

// needsValue reports whether a flag reads the next word as its value.
func needsValue(f cli.Flag, word string) bool {
	if strings.Contains(word, "=") {
		return false
	}
	df, ok := f.(cli.DocGenerationFlag)
	return !ok || df.TakesValue()
}

// flagWord is a flag as the user wrote it, without its value.
func flagWord(a string) string {
	w, _, _ := strings.Cut(a, "=")
	return w
}

// placeholder is what a flag's value stands for: the `WORD` quoted in its
// usage, else VALUE.
func placeholder(f cli.Flag) string {
	if df, ok := f.(cli.DocGenerationFlag); ok {
		_, quoted, ok := strings.Cut(df.GetUsage(), "`")
		if name, _, ok2 := strings.Cut(quoted, "`"); ok && ok2 && name != "" {
			return name
		}
	}
	return "VALUE"
}

// dashName writes a flag's name as it is typed: -C, --json.
func dashName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagList lists visible flags with their aliases: "--workspace/-C,
// --version". The help flag goes without saying.
func flagList(flags []cli.Flag) string {
	var list []string
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() || slices.Contains(f.Names(), "help") {
			continue
		}
		var names []string
		for _, n := range f.Names() {
			names = append(names, dashName(n))
		}
		list = append(list, strings.Join(names, "/"))
	}
	return strings.Join(list, ", ")
}

// flagsOf says which flags a command takes, for an unknown flag's error.
func flagsOf(cmd *cli.Command) string {
	if l := flagList(cmd.Flags); l != "" {
		return "its flags: " + l
	}
	return "it takes no flags"
}

// commandList lists the visible commands by name.
func commandList(cmds []*cli.Command, sep string) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && !isHelpCommand(c.Name) {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, sep)
}

// unknownCommand is the usage error for a command parley does not have,
// with the nearest name when one is close (a typo).
func unknownCommand(cmds []*cli.Command, name string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	ue := usageError{err: fmt.Errorf("unknown command %q", name), hint: "`parley help` lists the commands"}
	if best := spell.Nearest(name, names, 2); best != "" {
		ue.hint = fmt.Sprintf("did you mean `parley %s`?", best)
	}
	return ue
}

// flagName returns the name in "--name=value", "--name" or "-n".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

// findFlag returns the flag of flags a word names, or nil.
func findFlag(flags []cli.Flag, arg string) cli.Flag {
	name := flagName(arg)
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
