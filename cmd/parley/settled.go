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
// parley status and parley retry ask, and the web view too (its retry is
// retry's code, its timeline asks through settledLook); the fate itself
// is the orchestrator's (orchestrator.GivenUps), read from each sender's
// mailbox once.
type givenUpFates struct {
	ws       *workspace.Workspace
	bySender map[string]*orchestrator.GivenUps // sender -> what it sent and handled
}

func newGivenUpFates(ws *workspace.Workspace) *givenUpFates {
	return &givenUpFates{ws: ws, bySender: map[string]*orchestrator.GivenUps{}}
}

// wentOn returns how the step of message id, sent by sender and given up
// by agent, went on without it since: "answered", "ticked" or "sent
// again"; "" when it did not (or the sender is no agent).
func (f *givenUpFates) wentOn(sender, id, agent string) string {
	if _, ok := f.ws.Agent(sender); !ok || id == "" {
		return ""
	}
	g, ok := f.bySender[sender]
	if !ok {
		g = (&orchestrator.Orchestrator{Workspace: f.ws}).GivenUps(sender)
		f.bySender[sender] = g
	}
	if fate, how := g.How(id, agent); fate == orchestrator.WentOn {
		return how
	}
	return ""
}

// escalationSettled returns how the step of a given_up or unanswered
// escalation went on without a decision since (see wentOn): answering
// it sends nothing. "" when it did not, or for another kind.
func (f *givenUpFates) escalationSettled(x escalation) string {
	if x.Kind != orchestrator.EscalateGivenUp && x.Kind != orchestrator.EscalateUnanswered {
		return ""
	}
	return f.wentOn(x.From, x.givenUp, x.givenUpBy)
}

// settled returns, for a dead letter of a step, what happened since that
// settles it (see settledSince); "" when it is not settled. A dead letter
// of no step is never settled: only a step goes on without it.
func (f *givenUpFates) settled(d deadLetter) string {
	if d.Step == "" {
		return ""
	}
	if how := f.wentOn(d.From, d.ID, d.Agent); how != "" {
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
func settledLook(ws *workspace.Workspace) func() func(agent, id string) string {
	return func() func(agent, id string) string {
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
}

// escalationSettledLook is the web view's Options.EscalationSettled:
// for one page, a look at which escalations waiting in a person's inbox
// are settled, asked of one givenUpFates as parley pipeline asks it.
func escalationSettledLook(ws *workspace.Workspace) func() func(agent, id string, m *mailbox.Message) string {
	return func() func(agent, id string, m *mailbox.Message) string {
		fates := newGivenUpFates(ws)
		return func(agent, id string, m *mailbox.Message) string {
			x, ok := escalationOf(agent, id, m)
			if !ok {
				return ""
			}
			return fates.escalationSettled(x)
		}
	}
}

// settledSince says, for a person, what happened to the step of dead
// letter d since it was given up, by how (see wentOn).
func settledSince(d deadLetter, how string) string {
	step := "step " + d.Step
	if d.PlanFile != "" {
		step += " of " + d.PlanFile
	}
	switch how {
	case "answered":
		return fmt.Sprintf("%s answered about %s since", d.Agent, step)
	case "ticked":
		return fmt.Sprintf("%s is ticked in its plan since", step)
	case "sent again":
		return fmt.Sprintf("%s was sent to %s again since", step, d.Agent)
	}
	return fmt.Sprintf("%s went on since (%s)", step, how)
}
