package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMETools: the README's "The GM's tools" console block is run as
// written by testdata/tools_readme.txtar, in the table the README's "A
// table of your own" lays out: every command of the block is a command
// of the script (a pipe, through sh -c), the script lays the table out
// with the README's own parley init, and every line of output the block
// shows is one the script's stdout patterns match. The block's
// update_inventory took a handaxe the template's sheet does not have,
// and no test ran it.
func TestREADMETools(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	console := func(heading string) string {
		t.Helper()
		_, section, ok := strings.Cut(readme, "\n"+heading+"\n")
		if !ok {
			t.Fatalf("the README has no %s section", heading)
		}
		_, rest, ok := strings.Cut(section, "\n```console\n")
		if !ok {
			t.Fatalf("the README's %s section has no console block", heading)
		}
		block, _, _ := strings.Cut(rest, "\n```\n")
		return block
	}
	data, err = os.ReadFile(testdataPath("tools_readme.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	script := "\n" + string(data)
	runs := func(cmd string) bool {
		sh := "exec sh -c '" + strings.ReplaceAll(cmd, "'", "''") + "'"
		for _, form := range []string{cmd, "exec " + cmd, sh} {
			if strings.Contains(script, "\n"+form+"\n") || strings.Contains(script, "\n! "+form+"\n") {
				return true
			}
		}
		return false
	}
	var patterns []*regexp.Regexp
	for _, l := range strings.Split(script, "\n") {
		if p, ok := strings.CutPrefix(l, "stdout '"); ok {
			p = strings.ReplaceAll(strings.TrimSuffix(p, "'"), "''", "'")
			patterns = append(patterns, regexp.MustCompile(p))
		}
	}
	table := console("### A table of your own")
	init, _, _ := strings.Cut(table, "\n")
	init = strings.TrimPrefix(init, "$ ")
	if !strings.HasPrefix(init, "parley init --template dnd") || !runs(init) {
		t.Errorf("testdata/tools_readme.txtar does not lay out the README's table with %q", init)
	}
	commands := 0
	for _, l := range strings.Split(console("### The GM's tools"), "\n") {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			commands++
			if !runs(cmd) {
				t.Errorf("testdata/tools_readme.txtar does not run the README's %q as written", cmd)
			}
			continue
		}
		if !strings.ContainsAny(l, "abcdefghijklmnopqrstuvwxyz0123456789") {
			continue // {, }, ...
		}
		matched := false
		for _, p := range patterns {
			matched = matched || p.MatchString(l)
		}
		if !matched {
			t.Errorf("testdata/tools_readme.txtar does not check the README's output line %q", l)
		}
	}
	if commands < 2 {
		t.Errorf("found %d commands in the README's GM's tools block, want its several", commands)
	}
}
