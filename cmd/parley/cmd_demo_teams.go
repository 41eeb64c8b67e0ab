package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/examples"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// teamsTopic is what the demo asks the team to write about.
const teamsTopic = "the lighthouse of Skerry Point"

// runTeamsDemo copies examples/teams into dir, gives the lead a task, and
// runs the team until its lead closes the session.
func runTeamsDemo(ctx context.Context, e *env, dir, _ string) error {
	keep := dir != ""
	dir, cleanup, err := demoDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
	ws, err := openExample(examples.Teams, "teams", dir)
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "== a writing team: lead, researcher and writer, each a shell script (in %s)\n", demoPlace(ws.Root, keep))
	fmt.Fprintln(out, "   see parley.yaml: a route by signal, a timeout that nudges, stop_on: [TEAM_DONE]")
	fmt.Fprintln(out)

	task := sendOptions{From: "you", To: []string{"lead"}, Type: "TASK", Fields: []string{"topic=" + teamsTopic}, Body: text("Write a short history, please.\n")}
	if err := runSend(e.silent(), ws, task); err != nil {
		return err
	}
	fmt.Fprintf(out, "parley send --from you --to lead --type TASK --field 'topic=%s'\n", teamsTopic)

	if err := showRun(ctx, e, ws); err != nil {
		return err
	}
	if reports, err := ws.Mailbox("you").List(mailbox.Inbox); err == nil && len(reports) > 0 {
		last := reports[len(reports)-1]
		fmt.Fprintf(out, "\n== parley read %s  (the lead's report to you)\n", last.ID)
		if err := runRead(e, last.Path, false, false); err != nil {
			return err
		}
	}
	for _, f := range []string{"work/draft.md"} {
		data, err := os.ReadFile(filepath.Join(ws.Root, f))
		if err != nil {
			return fmt.Errorf("the team left no %s: %w", f, err)
		}
		fmt.Fprintf(out, "\n== cat %s\n%s", f, data)
	}
	if keep {
		fmt.Fprintf(out, "\nThe workspace is in %s: try `parley -C %s inbox you`.\n", ws.Root, dir)
	} else {
		fmt.Fprintln(out, "\nRun `parley demo teams DIR` to keep the workspace and look around.")
	}
	return nil
}

// openExample copies an embedded example (see copyExample) into dir and
// opens it as a workspace, with its mailboxes made.
func openExample(fsys fs.FS, root, dir string) (*workspace.Workspace, error) {
	if err := copyExample(fsys, root, dir); err != nil {
		return nil, err
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := ws.MakeMailboxes(); err != nil {
		return nil, err
	}
	return ws, nil
}

// copyExample writes the files of an embedded example under root into
// dir, which must not hold a workspace yet. Shell scripts are made
// executable.
func copyExample(fsys fs.FS, root, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, workspace.ConfigFile)); err == nil {
		return fmt.Errorf("%s: %w", dir, workspace.ErrWorkspaceExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(dst, data, mode)
	})
}
