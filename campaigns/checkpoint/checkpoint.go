// Package checkpoint saves a workspace's story in git: it commits the
// campaign and plan files, and nothing else — not the campaigns' tmp/
// directories, not the mailboxes, not parley's runtime files under
// .parley/, not an editor's scratch files or files that may hold secrets
// left among them (see LeftOut), and not other changes a person has
// staged. It only ever adds
// a commit on top of the current branch: it never amends, resets or
// rewrites history.
package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// Paths are the workspace directories a checkpoint saves.
var Paths = []string{"campaigns", "plans"}

// Errors callers branch on.
var (
	ErrNotRepo   = errors.New("the workspace is not in a git repository: run `git init` first")
	ErrNothing   = errors.New("nothing changed since the last checkpoint")
	ErrNoGit     = errors.New("git is not installed")
	ErrDetached  = errors.New("git is on no branch (detached HEAD): check out a branch first")
	ErrConflicts = errors.New("the repository is in the middle of a merge or rebase: finish it first")
)

// Options say what to save and how to describe it.
type Options struct {
	// Message is the commit message; empty for one made from what
	// changed (see Describe). The files left out are listed under it,
	// as under the one made.
	Message string
	// Describe makes the first line of the default message from the
	// changed files (relative to the workspace); nil for a plain one.
	Describe func(changed []string) string
	// Environ is the environment git runs with; nil: the process's.
	Environ []string
}

// Result is a checkpoint made.
type Result struct {
	Commit  string    `json:"commit"`   // the new commit's hash
	Message string    `json:"message"`  // its message
	Files   []string  `json:"files"`    // what it changed, relative to the workspace
	LeftOut []Skipped `json:"left_out"` // changed files it did not save
}

// Skipped is a changed file a checkpoint left out, and why.
type Skipped struct {
	Path   string `json:"path"`   // relative to the workspace
	Reason string `json:"reason"` // as LeftOut says it
}

// The reasons LeftOut gives.
const (
	ReasonScratch = "an editor's scratch file"
	ReasonSecret  = "may hold secrets"
)

// LeftOut reports whether a checkpoint leaves out a file, and why: an
// editor's scratch file (mailbox.IsEditorScratch: swap files, autosaves,
// backups), or a file that may hold secrets (MayHoldSecrets). Only the
// file's name decides.
func LeftOut(path string) (reason string, ok bool) {
	name := filepath.Base(path)
	switch {
	case mailbox.IsEditorScratch(name):
		return ReasonScratch, true
	case MayHoldSecrets(name):
		return ReasonSecret, true
	}
	return "", false
}

// EnvExamples are the .env.* files people commit on purpose: a template
// of the variables, without their values. They hold no secrets.
var EnvExamples = []string{".env.example", ".env.sample", ".env.template"}

// MayHoldSecrets reports whether a file name is one that may hold
// secrets: .env and .env.* (but EnvExamples), *.pem, *.key, and
// credentials files (*.creds). It is the one list of such names: a
// checkpoint never saves them, and the .gitignore a workspace gets
// ignores the .env files among them (TestGitignoreSecrets in
// runner/workspace checks the two agree).
func MayHoldSecrets(name string) bool {
	switch {
	case slices.Contains(EnvExamples, name):
		return false
	case name == ".env" || strings.HasPrefix(name, ".env."),
		strings.HasSuffix(name, ".pem"), strings.HasSuffix(name, ".key"),
		strings.HasSuffix(name, ".creds"):
		return true
	}
	return false
}

// Save commits the changes to the campaign and plan files of the
// workspace at root. The files LeftOut names are never staged: the result
// lists those that had changes. When nothing else changed, Save returns
// ErrNothing with a result that only says what was left out.
func Save(ctx context.Context, root string, opts Options) (*Result, error) {
	g := &git{ctx: ctx, dir: root, environ: opts.Environ}
	top, err := g.run("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	top = strings.TrimSpace(top)
	if _, err := g.run("symbolic-ref", "-q", "HEAD"); err != nil {
		return nil, ErrDetached
	}
	if gitDir, err := g.run("rev-parse", "--git-dir"); err == nil {
		for _, f := range []string{"MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD"} {
			if exists(filepath.Join(root, strings.TrimSpace(gitDir), f)) {
				return nil, ErrConflicts
			}
		}
	}
	specs := pathspecs(root, top)
	if len(specs) == 0 {
		return nil, ErrNothing
	}
	specs, leftOut, err := leaveOut(g, root, top, specs)
	if err != nil {
		return nil, err
	}
	// Stage exactly the story: new, changed and removed files under the
	// saved directories, never the transient ones.
	if _, err := g.run(append([]string{"add", "--all", "--"}, specs...)...); err != nil {
		return nil, err
	}
	out, err := g.run(append([]string{"diff", "--cached", "--name-only", "-z", "--"}, specs...)...)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			continue
		}
		rel, err := filepath.Rel(root, filepath.Join(top, f))
		if err != nil {
			rel = f
		}
		changed = append(changed, filepath.ToSlash(rel))
	}
	sort.Strings(changed)
	if len(changed) == 0 {
		if len(leftOut) > 0 {
			return &Result{LeftOut: leftOut}, ErrNothing
		}
		return nil, ErrNothing
	}
	msg := opts.Message
	if msg == "" {
		msg = defaultMessage(changed, leftOut, opts.Describe)
	} else {
		// A message of one's own says what was left out too.
		msg = strings.TrimRight(msg, "\n") + leftOutText(leftOut)
	}
	// --only with the pathspecs: other changes the person staged stay
	// staged and out of this commit.
	args := []string{"commit", "--quiet", "--no-verify", "--only", "-m", msg, "--"}
	if _, err := g.commit(append(args, specs...)...); err != nil {
		return nil, err
	}
	hash, err := g.run("rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	return &Result{Commit: strings.TrimSpace(hash), Message: msg, Files: changed, LeftOut: leftOut}, nil
}

// leaveOut adds to specs an exclusion for every file under them that
// LeftOut names, tracked or not (git's own ignores aside), and returns the
// ones with changes to save: new, changed or staged.
func leaveOut(g *git, root, top string, specs []string) ([]string, []Skipped, error) {
	all, err := g.run(append([]string{"ls-files", "-z", "--full-name", "--cached", "--others", "--exclude-standard", "--"}, specs...)...)
	if err != nil {
		return nil, nil, err
	}
	reasons := map[string]string{}
	for _, f := range strings.Split(all, "\x00") {
		if f == "" {
			continue
		}
		if r, ok := LeftOut(f); ok && reasons[f] == "" {
			reasons[f] = r
			specs = append(specs, ":(top,exclude,literal)"+f)
		}
	}
	if len(reasons) == 0 {
		return specs, nil, nil
	}
	var names []string
	for f := range reasons {
		names = append(names, ":(top,literal)"+f)
	}
	var out []Skipped
	for _, args := range [][]string{
		{"ls-files", "-z", "--full-name", "--others", "--modified", "--exclude-standard", "--"},
		{"diff", "--cached", "--name-only", "-z", "--"},
	} {
		list, err := g.run(append(args, names...)...)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range strings.Split(list, "\x00") {
			r, ok := reasons[f]
			if !ok {
				continue
			}
			delete(reasons, f) // listed by both: said once
			rel, err := filepath.Rel(root, filepath.Join(top, f))
			if err != nil {
				rel = f
			}
			out = append(out, Skipped{Path: filepath.ToSlash(rel), Reason: r})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return specs, out, nil
}

// pathspecs are the saved directories that exist, as git pathspecs from
// the repository's top, with the transient paths excluded.
func pathspecs(root, top string) []string {
	var specs []string
	for _, p := range Paths {
		if !exists(filepath.Join(root, p)) {
			continue
		}
		rel, err := filepath.Rel(top, filepath.Join(root, p))
		if err != nil {
			continue
		}
		specs = append(specs, ":(top)"+filepath.ToSlash(rel))
	}
	if len(specs) == 0 {
		return nil
	}
	rel, _ := filepath.Rel(top, filepath.Join(root, "campaigns"))
	specs = append(specs, ":(top,exclude,glob)"+filepath.ToSlash(rel)+"/*/tmp/**")
	// A file being replaced atomically is written beside it first, as
	// NAME.RANDOM.tmp, and gone a moment later: never part of a save (git
	// would stumble on it vanishing while it adds).
	for _, p := range Paths {
		if r, err := filepath.Rel(top, filepath.Join(root, p)); err == nil {
			specs = append(specs, ":(top,exclude,glob)"+filepath.ToSlash(r)+"/**/*.tmp")
		}
	}
	return specs
}

// defaultMessage says what a checkpoint saves: a first line, then the
// files.
func defaultMessage(changed []string, leftOut []Skipped, describe func([]string) string) string {
	first := ""
	if describe != nil {
		first = describe(changed)
	}
	if first == "" {
		first = "checkpoint"
	}
	var b strings.Builder
	b.WriteString(first)
	b.WriteString("\n\n")
	for _, f := range changed {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return strings.TrimRight(b.String(), "\n") + leftOutText(leftOut)
}

// leftOutText is what a checkpoint's message says, after the rest, of the
// files it left out: "\n\nLeft out:" and a line each; "" when none.
func leftOutText(leftOut []Skipped) string {
	if len(leftOut) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nLeft out:")
	for _, s := range leftOut {
		fmt.Fprintf(&b, "\n- %s (%s)", s.Path, s.Reason)
	}
	return b.String()
}

type git struct {
	ctx     context.Context
	dir     string
	environ []string // nil: the process's
}

func (g *git) run(args ...string) (string, error) {
	return g.exec(nil, args...)
}

// commit runs git commit, with an author of last resort when the
// repository has none configured (a fresh machine should still save).
func (g *git) commit(args ...string) (string, error) {
	var pre []string
	if name, _ := g.run("config", "user.name"); strings.TrimSpace(name) == "" {
		pre = append(pre, "-c", "user.name=parley")
	}
	if email, _ := g.run("config", "user.email"); strings.TrimSpace(email) == "" {
		pre = append(pre, "-c", "user.email=parley@localhost")
	}
	return g.exec(pre, args...)
}

func (g *git) exec(pre []string, args ...string) (string, error) {
	cmd := exec.CommandContext(g.ctx, "git", append(pre, args...)...)
	cmd.Dir = g.dir
	env := cmd.Environ()
	if g.environ != nil {
		env = slices.Clip(g.environ)
	}
	cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		return "", ErrNoGit
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "not a git repository") {
			return "", ErrNotRepo
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.String(), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
