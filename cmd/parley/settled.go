package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

// givenUpFates tells whether a message given up is settled: its step
// went on without it since (orchestrator.WentOn: its agent answered about
// the step, the step is ticked, or it was sent again), so that retrying
// it would do the step twice. It is the one place parley pipeline,
// parley status and parley retry ask of dead letters, and the web view
// too (its retry is retry's code, its timeline asks through
// settledLook); the fate itself is the orchestrator's
// (orchestrator.Fates), read from each sender's mailbox once, which
// parley pipeline shares with the escalations it reads
// (orchestrator.Escalations).
type givenUpFates struct {
	ws    *workspace.Workspace
	fates *orchestrator.Fates
}

func newGivenUpFates(ws *workspace.Workspace) *givenUpFates {
	return &givenUpFates{ws: ws, fates: orchestrator.NewFates(ws)}
}

// settled returns, for a dead letter, what happened since that settles
// it (see settledSince); "" when it is not settled. A dead letter of no
// step is settled only when what it asked was asked again since (a
// research request sent again on a retry decision) or answered.
func (f *givenUpFates) settled(d deadLetter) string {
	if how := f.fates.WentOn(d.From, d.ID, d.Agent); how != "" {
		return settledSince(d, how)
	}
	return ""
}

// deadLetterAt reads the dead letter at path, in agent's dead/.
func (f *givenUpFates) deadLetterAt(agent, path string) deadLetter {
	box := f.ws.Mailbox(agent)
	d := deadOf(box, mailbox.Entry{Name: filepath.Base(path), Path: path}, f.ws.Config.Router.MaxMessageSize)
	d.Agent = agent
	return d
}

// settledLook is the web view's Options.Settled: for one page, a look at
// which dead letters are settled, asked of one givenUpFates as parley
// status and parley retry ask it, and said in status's words.
func settledLook(ws *workspace.Workspace) func(agent, id string) string {
	fates := newGivenUpFates(ws)
	return func(agent, id string) string {
		if _, _, err := mailbox.ParseID(id); err != nil || ws.CheckAgent(agent) != nil {
			return ""
		}
		p := ws.Mailbox(agent).Path(mailbox.Dead, mailbox.FileName(id))
		if _, err := os.Lstat(p); err != nil {
			return ""
		}
		return fates.settled(fates.deadLetterAt(agent, p))
	}
}

// settledSince says, for a person, what happened to the step of dead
// letter d since it was given up, by how (see orchestrator.Fates.WentOn).
func settledSince(d deadLetter, how string) string {
	step := "step " + d.Step
	if d.PlanFile != "" {
		step += " of " + d.PlanFile
	}
	if d.Step == "" {
		step = "its " + orDash(d.Type) // a research_request, say
	}
	switch how {
	case "answered":
		return fmt.Sprintf("%s answered about %s since", d.Agent, step)
	case "ticked":
		return fmt.Sprintf("%s is ticked in its plan since", step)
	case "sent again":
		return fmt.Sprintf("%s was sent to %s again since", step, d.Agent)
	case "planned":
		return fmt.Sprintf("the pipeline of %s asked the architect for its plan since, without its answer", step)
	}
	return fmt.Sprintf("%s went on since (%s)", step, how)
}

// twice says what retrying dead letter d, settled, would do twice: its
// step, or what it asked (a research request of no step).
func twice(d deadLetter) string {
	if d.Step == "" {
		return "what it asked"
	}
	return "the step"
}
