package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/urfave/cli/v2"
)

// mergeDriver is the name of parley's git merge driver for the markdown
// files it only appends to, and mergeDriverCommand what git runs: parley
// merge-file, or git's union merge where parley cannot be run (not on the
// PATH of a git GUI, say).
const (
	mergeDriver        = "parley-append"
	mergeDriverCommand = "parley merge-file %O %A %B || git merge-file --union %A %O %B"
)

// mergeDriverFiles are the files the driver merges: what the
// .gitattributes parley writes merges with union (the routing journal,
// whose lines are each unique, stays with union).
var mergeDriverFiles = []string{"campaigns/*/party/*-journal.md", "campaigns/*/decision-log.md"}

func mergeFileCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "merge-file",
		Usage:     "git's merge driver for the journals parley appends to: both sides' new entries kept whole (see the README, Two people, one campaign)",
		ArgsUsage: "BASE OURS THEIRS",
		Description: "Run by git (merge.parley-append.driver, which `parley init DIR` sets in a\n" +
			"git clone): when both OURS and THEIRS are BASE with entries added at its end,\n" +
			"OURS becomes OURS then what THEIRS added, each entry whole; otherwise (an\n" +
			"earlier entry edited) git's union merge (git merge-file --union).",
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 3, "BASE OURS THEIRS (git's %O %A %B)"); err != nil {
				return err
			}
			return runMergeFile(c.Args().Get(0), c.Args().Get(1), c.Args().Get(2))
		},
	}
}

// runMergeFile merges theirs into ours (written in place) from base, as
// git asks a merge driver to.
func runMergeFile(base, ours, theirs string) error {
	var data [3][]byte
	for i, p := range []string{base, ours, theirs} {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data[i] = b
	}
	if merged, ok := textfile.MergeAppended(data[0], data[1], data[2]); ok {
		if bytes.Equal(merged, data[1]) {
			return nil
		}
		return mailbox.WriteFileAtomic(ours, merged)
	}
	cmd := exec.Command("git", "merge-file", "--union", ours, base, theirs)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git merge-file --union: %w", err)
	}
	return nil
}

// configureMergeDriver sets parley's merge driver up in the git clone
// that holds the workspace at root, if it is in one: the driver in the
// clone's config, and the files it merges in its info/attributes, which
// take precedence over the committed .gitattributes (merge=union), so
// that a clone without it merges them with union still (git merges a
// file whose driver it does not know as text, a conflict at every pull).
// It reports false, with no error, when root is in no git clone or git
// is not installed.
func configureMergeDriver(root string) (bool, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return false, nil
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--show-prefix", "--git-path", "info/attributes").Output()
	if err != nil {
		return false, nil // not in a git clone
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 {
		return false, fmt.Errorf("git rev-parse: unexpected answer %q", out)
	}
	prefix, attrs := lines[0], lines[1]
	if !filepath.IsAbs(attrs) {
		attrs = filepath.Join(root, attrs)
	}
	for _, kv := range [][2]string{
		{"merge." + mergeDriver + ".name", "parley: both sides' appended entries kept whole"},
		{"merge." + mergeDriver + ".driver", mergeDriverCommand},
	} {
		if out, err := exec.Command("git", "-C", root, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			return false, fmt.Errorf("git config %s: %w: %s", kv[0], err, bytes.TrimSpace(out))
		}
	}
	old, err := os.ReadFile(attrs)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	var add strings.Builder
	for _, f := range mergeDriverFiles {
		line := prefix + f + " merge=" + mergeDriver
		if !bytes.Contains(old, []byte(line+"\n")) {
			add.WriteString(line + "\n")
		}
	}
	if add.Len() == 0 {
		return true, nil
	}
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		return false, err
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("# parley: its merge driver for the files it appends to (see parley's README, git)\n")
	b.WriteString(add.String())
	return true, mailbox.WriteFileAtomic(attrs, b.Bytes())
}

// mergeDriverMissing reports whether the workspace at root is in a git
// clone without parley's merge driver while its campaigns have journals
// or a decision log to merge: a clone made with `git clone` (parley init
// sets the driver up only in the clone it runs in). Git not installed,
// or no clone, is no driver missing.
func mergeDriverMissing(root string) bool {
	var merged []string
	for _, f := range mergeDriverFiles {
		m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(f)))
		merged = append(merged, m...)
	}
	if len(merged) == 0 {
		return false
	}
	if _, err := exec.LookPath("git"); err != nil {
		return false
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		return false
	}
	return exec.Command("git", "-C", root, "config", "--get", "merge."+mergeDriver+".driver").Run() != nil
}
