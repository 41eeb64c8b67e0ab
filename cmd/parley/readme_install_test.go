package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestREADMEInstallPath: the README's line that puts the parley of `go
// install` on the PATH puts Go's bin directory first. It appended it
// (export PATH="$PATH:..."), so a parley installed before elsewhere on
// the PATH still ran after go install (a new user's tryout). The line is
// run by sh as written, with a stand-in go and an older parley on the
// PATH: the parley that runs after it is the one go install wrote.
func TestREADMEInstallPath(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(export PATH=[^`]*go env GOPATH[^`]*)`").FindSubmatch(data)
	if m == nil {
		t.Fatal("the README has no `export PATH=...$(go env GOPATH)...` line")
	}
	line := string(m[1])
	dir := t.TempDir()
	gopath := filepath.Join(dir, "gopath")
	write := func(path, script string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(gopath, "bin", "parley"), "echo installed\n")
	write(filepath.Join(dir, "old", "parley"), "echo older\n")
	write(filepath.Join(dir, "tools", "go"), `[ "$1 $2" = "env GOPATH" ] && echo '`+gopath+`'`+"\n")
	cmd := exec.Command("/bin/sh", "-c", line+"\nparley")
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "old") + ":" + filepath.Join(dir, "tools") + ":/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", line, err, out)
	}
	if got := string(out); got != "installed\n" {
		t.Errorf("after the README's %s, parley ran %q, want the one go install wrote (installed)", line, got)
	}
}
