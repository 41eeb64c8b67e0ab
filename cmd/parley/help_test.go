package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpUsageLines: the USAGE lines of a command's help line up. The
// help template indents every line of UsageText; a line written with its
// own indent stood three columns right of the first (parley send, retry,
// reply, roll).
func TestHelpUsageLines(t *testing.T) {
	var visit func(path string, cmds []*cli.Command)
	visit = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			for i, l := range strings.Split(c.UsageText, "\n") {
				if i > 0 && strings.HasPrefix(l, " ") {
					t.Errorf("parley %s: usage line %d %q starts with a space: the help indents it already", name, i+1, l)
				}
			}
			visit(name, c.Subcommands)
		}
	}
	visit("", newApp(&env{}).Commands)
}
