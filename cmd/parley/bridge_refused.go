package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/bridge"
	"github.com/parley-dev/parley/runner/workspace"
)

// A message the bridge refused from another workspace is kept in its
// recipient's dead/ (with a reason starting workspace.BridgeRefused), or,
// naming no agent here, in .parley/bridge/refused/. Once what refused it
// is mended (the agent added, the protocol here taking it), parley retry
// delivers it: checked again as the bridge would take it now
// (bridge.Admit, the workspace's one Check), never put into an inbox
// unchecked. Where it came from (the subject it was published to) is in
// the journal's bounced entry for the path it was kept at.

// refusedSubjects returns, for the paths (as ws.Short gives them) of messages the
// bridge refused, the subjects they were published to, as the journal's
// last bounced entry for each says; a path the journal says nothing of is
// left out.
func refusedSubjects(ws *workspace.Workspace, paths []string) (map[string]string, error) {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	out := map[string]string{}
	if ws.Config.Bridge == nil || len(want) == 0 {
		return out, nil
	}
	err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		if e.Outcome == workspace.Bounced && want[e.Path] && len(e.To) == 1 && e.Workspace != "" && e.From != "" {
			out[e.Path] = bridge.Subject(ws.Config.Bridge.Name, e.To[0], e.Workspace, e.From)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return out, err
}

// recheck checks again a message the bridge refused, kept at path (as
// ws.Short gives it) and published to subject, as the bridge would take
// it now: the entry of its receipt, and the refusal when it would be
// refused again.
func recheck(ws *workspace.Workspace, path, subject string) (workspace.Entry, *bridge.Refusal, error) {
	if ws.Config.Bridge == nil {
		return workspace.Entry{}, &bridge.Refusal{Reason: fmt.Sprintf("%s has no bridge: section: no message of another workspace is taken here", workspace.ConfigFile)}, nil
	}
	data, err := mailbox.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(path)), ws.Config.Router.MaxMessageSize)
	if err != nil {
		return workspace.Entry{}, nil, err
	}
	return bridge.Admit(ws, ws.Config.Bridge.Name, subject, data)
}

// inBridgeRefused reports whether path is a message in
// .parley/bridge/refused/, and returns it as ws.Short gives it.
func inBridgeRefused(ws *workspace.Workspace, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil || filepath.Dir(abs) != ws.BridgeRefusedDir() || !strings.HasSuffix(abs, ".md") {
		return "", false
	}
	return ws.Short(abs), true
}

// retryBridgeRefused delivers a message kept in .parley/bridge/refused/
// into its recipient's inbox, when the bridge would take it now, and
// removes it from there; else it stays, and the error says why.
func retryBridgeRefused(e *env, ws *workspace.Workspace, path, shown string) error {
	subjects, err := refusedSubjects(ws, []string{path})
	if err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	subject, ok := subjects[path]
	if !ok {
		return fmt.Errorf("%s: left where it is: the journal does not say which workspace, sender and agent it came with (no bounced entry for it), so it cannot be checked again", shown)
	}
	entry, refusal, err := recheck(ws, path, subject)
	if err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	if refusal != nil {
		return fmt.Errorf("%s: left in %s, the bridge would refuse it again: %s", shown, filepath.ToSlash(filepath.Join(workspace.StateDir, "bridge", "refused")), refusal.Reason)
	}
	full := filepath.Join(ws.Root, filepath.FromSlash(path))
	data, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	s, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		return err
	}
	defer s.Close()
	agent := entry.To[0]
	box := ws.Mailbox(agent)
	// An agent added since, with no runner to make its mailbox yet.
	if err := box.Init(); err != nil {
		return fmt.Errorf("%s: not delivered: %w", shown, err)
	}
	delivered, err := box.Deliver(entry.ID, data, s)
	if err == nil {
		err = s.Sync()
	}
	if err != nil {
		return fmt.Errorf("%s: not delivered: %w", shown, err)
	}
	reason, _ := os.ReadFile(full + mailbox.ReasonSuffix)
	if err := errors.Join(os.Remove(full), os.Remove(full+mailbox.ReasonSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: delivered, but not removed from refused/: %w", shown, err)
	}
	inbox := ws.Short(box.Path(mailbox.Inbox, mailbox.FileName(entry.ID)))
	note := "a message the bridge refused, checked again and delivered into the inbox (parley retry)"
	if !delivered {
		inbox = ws.Short(string(box))
		note = "a message the bridge refused, checked again: its recipient held it already (parley retry)"
	}
	journalLine(e, ws, workspace.Entry{Outcome: workspace.Retried, Agent: agent, ID: entry.ID, From: entry.From, Type: entry.Type, Workspace: entry.Workspace, File: mailbox.FileName(entry.ID), Path: inbox, Was: path,
		Reason: strings.TrimSpace(strings.TrimPrefix(string(reason), workspace.BridgeRefused)), Note: note})
	if !delivered {
		fmt.Fprintf(e.stdout, "%s: %s held it already; removed from refused/\n", shown, agent)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: delivered into %s\n", shown, inbox)
	return nil
}

// recheckDead checks again, before it is put back, a message of another
// workspace the bridge refused into agent's dead/ (its reason starts
// workspace.BridgeRefused): nil when the bridge would take it now. Where
// it came from is the journal's; with no word there, the sender its id
// names and the workspace parley.yaml says it lives in.
func recheckDead(ws *workspace.Workspace, agent, id, reason string) error {
	if !strings.HasPrefix(reason, workspace.BridgeRefused) {
		return nil
	}
	path := ws.Short(ws.Mailbox(agent).Path(mailbox.Dead, mailbox.FileName(id)))
	subjects, err := refusedSubjects(ws, []string{path})
	if err != nil {
		return err
	}
	subject, ok := subjects[path]
	if !ok && ws.Config.Bridge != nil {
		if _, sender, err := mailbox.ParseID(id); err == nil {
			if a, known := ws.Agent(sender); known && a.Remote != "" {
				subject, ok = bridge.Subject(ws.Config.Bridge.Name, agent, a.Remote, sender), true
			}
		}
	}
	if !ok {
		return fmt.Errorf("%s: left in dead/: the bridge refused it, and neither the journal nor %s says which workspace it came from, so it cannot be checked again", id, workspace.ConfigFile)
	}
	_, refusal, err := recheck(ws, path, subject)
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if refusal != nil {
		return fmt.Errorf("%s: left in dead/, the bridge would refuse it again: %s", id, refusal.Reason)
	}
	return nil
}
