package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/sandbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// kept reports whether a directory may not be granted whole to a
// player's program: the workspace itself or one that holds it, and its
// campaigns, mailboxes and runtime state.
func kept(root, dir string) bool {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if rel, err := filepath.Rel(dir, root); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return true // the workspace, or above it
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return false // elsewhere
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == campaigns.Dir || first == workspace.MailboxesDir || first == workspace.StateDir
}

// systemRead are what any program needs to read: its own files, the
// system's libraries and settings, its process.
var systemRead = []string{"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/proc",
	"/dev/zero", "/dev/urandom", "/dev/random"}

// systemWrite are what any program needs to write.
var systemWrite = []string{"/dev/null", "/dev/tty"}

// confiner returns the runner's Confine: an isolated agent's program is
// confined with Landlock to what its character may know. Where the
// kernel offers no Landlock, the program runs as it is and log says so
// once.
func confiner(log *slog.Logger, getenv func(string) string) func(a workspace.Agent, ws *workspace.Workspace) *runner.Confinement {
	warned := false
	return func(a workspace.Agent, ws *workspace.Workspace) *runner.Confinement {
		camp, err := campaigns.Find(ws.Root, ws.Config.Campaign)
		if errors.Is(err, campaigns.ErrNoCampaign) {
			return nil // no campaign: nothing to keep from anyone
		}
		if err != nil {
			log.Warn("a player's program runs unconfined: which campaign its character is in is not known (campaign: in parley.yaml)", "agent", a.Name, "err", err)
			return nil
		}
		if _, ok := sandbox.Available(); !ok {
			if !warned {
				log.Warn("this system offers no Landlock: the players' programs can read every file of the workspace (the secrets guard still checks every message)", "agent", a.Name)
				warned = true
			}
			return nil
		}
		self, err := os.Executable()
		if err != nil {
			log.Error("cannot confine a player's program: parley's own path is unknown", "agent", a.Name, "err", err)
			return nil
		}
		view := camp.View(a.Character)
		// The scratch directory, the program's TMPDIR, is made by the
		// runner before each run (a git clean may remove it meanwhile).
		scratch := camp.Path(campaigns.TmpDir, a.Name)
		// The journal is the player's to write: it is made, empty, when
		// missing, as Landlock allows only files that exist.
		for _, p := range view.Write {
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
				f.Close()
			} else if !errors.Is(err, fs.ErrExist) {
				log.Error("making a player's journal", "agent", a.Name, "err", err)
			}
		}
		var rules sandbox.Rules
		rules.Read = append(append(rules.Read, systemRead...), view.Read...)
		// parley's own directory, and that of the parley the program
		// finds on its PATH when that is another: the program may run
		// parley (send, roll) with the workspace's settings and skills.
		rules.Read = append(rules.Read, filepath.Dir(self), filepath.Join(ws.Root, workspace.ConfigFile), ws.SkillsDir(), filepath.Join(ws.Root, workspace.StateDir))
		if dir := parleyDirOnPath(getenv("PATH")); dir != "" {
			rules.Read = append(rules.Read, dir)
		}
		for _, arg := range a.Run {
			// The program's own files: a script named by its path, and
			// the directory it is in (where its helpers are) — unless
			// that directory holds the workspace or is part of what is
			// kept from the player, symbolic links followed.
			p := arg
			if !filepath.IsAbs(p) {
				p = filepath.Join(ws.Root, p)
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if info, err := os.Stat(real); err != nil || info.IsDir() {
				continue
			}
			if dir := filepath.Dir(real); kept(ws.Root, dir) {
				rules.Read = append(rules.Read, real)
			} else {
				rules.Read = append(rules.Read, dir)
			}
		}
		rules.Write = append(append(rules.Write, systemWrite...), view.Write...)
		rules.Write = append(rules.Write, string(ws.Mailbox(a.Name)), scratch)
		return &runner.Confinement{Rules: rules, Env: []string{"TMPDIR=" + scratch}}
	}
}

// parleyDirOnPath returns the directory of the first parley on path (a
// PATH's list of directories), or "".
func parleyDirOnPath(path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // the program's working directory is the workspace
		}
		if fi, err := os.Stat(filepath.Join(dir, "parley")); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return dir
		}
	}
	return ""
}
