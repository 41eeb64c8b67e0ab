package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMEPlans keeps the README's Plans section as testdata/plan.txtar
// runs it: its plan is the script's log-limit.md byte for byte, every
// command of its console block is run by the script, and every line of
// output it shows is one the script checks (a line of a file the script
// compares stdout with, or a line its stdout patterns match).
func TestREADMEPlans(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Plans\n")
	if !ok {
		t.Fatal("the README has no ## Plans section")
	}
	// The blocks are the first of their kind after the heading (the plan
	// itself has ## headings, so the section is not cut at the next one).
	block := func(lang string) string {
		_, rest, ok := strings.Cut(section, "\n```"+lang+"\n")
		if !ok {
			t.Fatalf("the README's Plans section has no %s block", lang)
		}
		b, _, _ := strings.Cut(rest, "\n```\n")
		return b + "\n"
	}
	ar, err := txtar.ParseFile(testdataPath("plan.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var golden strings.Builder
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		golden.Write(f.Data)
	}
	if got, want := block("markdown"), files["log-limit.md"]; got != want {
		t.Errorf("the README's plan is not testdata/plan.txtar's log-limit.md:\n%s", got)
	}
	script := string(ar.Comment)
	var patterns []*regexp.Regexp
	for _, l := range strings.Split(script, "\n") {
		if p, ok := strings.CutPrefix(l, "stdout '"); ok {
			p = strings.ReplaceAll(strings.TrimSuffix(p, "'"), "''", "'")
			patterns = append(patterns, regexp.MustCompile(p))
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(block("console")), "\n") {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			cmd, _, _ = strings.Cut(cmd, "  ")
			if !strings.Contains(script, "\nexec "+cmd+"\n") && !strings.Contains(script, "\n"+cmd+"\n") {
				t.Errorf("testdata/plan.txtar does not run the README's %q", cmd)
			}
			continue
		}
		matched := strings.Contains(golden.String(), l+"\n")
		for _, p := range patterns {
			matched = matched || p.MatchString(l)
		}
		if !matched {
			t.Errorf("testdata/plan.txtar does not check the README's output line %q", l)
		}
	}
}
