package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/parley-dev/parley/examples"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner/workspace"
)

// pipelineRequest is what the demo asks the pipeline to do.
const pipelineRequest = "Retry failed deliveries with backoff, and give up after a limit."

// runPipelineDemo copies examples/pipeline into dir, asks the
// orchestrator for a change, runs the pipeline until the person is asked
// to decide, decides (approve), and runs it to its end: the plan ticked
// and done, a summary to the person.
func runPipelineDemo(ctx context.Context, e *env, dir, _ string) error {
	keep := dir != ""
	dir, cleanup, err := demoDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
	// The agents run in the workspace and read $PARLEY_MESSAGE: with a
	// relative root that path would be relative to the wrong directory.
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	ws, err := openExample(examples.Pipeline, "pipeline", dir)
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "== the dev pipeline: a built-in orchestrator, and an architect, researchers,\n   workers, a reviewer and an auditor that are shell scripts (in %s)\n", demoPlace(ws.Root, keep))
	req := sendOptions{From: "you", To: []string{"orch"}, Body: text(pipelineRequest + "\n")}
	if err := runSend(e.silent(), ws, req); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nparley send --from you --to orch --body '%s'\n", pipelineRequest)
	if err := runQuiet(ctx, e, ws); err != nil {
		return err
	}
	planFile := filepath.Join(ws.Root, plans.Dir, "retry-failed-deliveries.md")
	if err := showPlan(e, ws, planFile); err != nil {
		return err
	}

	esc, err := lastTo(ws, "you")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== parley read %s  (the orchestrator asks you to decide)\n", esc.ID)
	if err := runRead(e, esc.Path, false, false); err != nil {
		return err
	}
	const reason = "The drop on a failed retry is covered by the journal; accept it."
	fmt.Fprintf(out, "\nparley reply %s --agent you --field decision=approve --body '%s'\n", esc.ID, reason)
	answer := sendOptions{Fields: []string{"decision=approve"}, Body: text(reason + "\n")}
	if _, err := runReply(e.silent(), ws, esc.ID, "you", false, answer); err != nil {
		return err
	}
	if err := runQuiet(ctx, e, ws); err != nil {
		return err
	}
	if err := showPlan(e, ws, planFile); err != nil {
		return err
	}
	sum, err := lastTo(ws, "you")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== parley read %s  (the orchestrator's summary)\n", sum.ID)
	if err := runRead(e, sum.Path, false, false); err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(out, "\nThe workspace is in %s: try `parley -C %s log` and `parley -C %s plan show`.\n", ws.Root, dir, dir)
	} else {
		fmt.Fprintln(out, "\nRun `parley demo pipeline DIR` to keep the workspace and look around.")
	}
	return nil
}

// showPlan prints a plan as `parley plan show` does.
func showPlan(e *env, ws *workspace.Workspace, path string) error {
	p, err := plans.Read(path)
	if err != nil {
		return err
	}
	p.Path = ws.Short(path)
	fmt.Fprintf(e.stdout, "\n== parley plan show %s\n", p.Path)
	printPlan(e, p)
	return nil
}

// lastTo is the newest message in an agent's inbox.
func lastTo(ws *workspace.Workspace, agent string) (mailbox.Entry, error) {
	entries, err := ws.Mailbox(agent).List(mailbox.Inbox)
	if err != nil {
		return mailbox.Entry{}, err
	}
	if len(entries) == 0 {
		return mailbox.Entry{}, fmt.Errorf("the pipeline sent %s nothing", agent)
	}
	return entries[len(entries)-1], nil
}
