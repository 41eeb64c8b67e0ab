package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func doneCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "done",
		Usage:     "mark messages handled: move them from an agent's inbox (or cur/) to done/",
		ArgsUsage: "ID... (with --all: AGENT)",
		Flags: []cli.Flag{
			agentFlag("whose copy (default: the one agent that received it)"),
			&cli.BoolFlag{Name: "all", Usage: "mark every message in the inbox of the agent named (or --agent) handled"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("all") {
				agents := c.Args().Slice()
				if a := c.String("agent"); a != "" {
					agents = append(agents, a)
				}
				if len(agents) != 1 {
					return argsError(c, "done --all needs the one agent whose inbox it empties: parley done --all AGENT")
				}
				ws, err := openWorkspace(c)
				if err != nil {
					return err
				}
				if err := ws.CheckAgent(agents[0]); err != nil {
					return usagef("done --all: %v", err)
				}
				return runDoneAll(e, ws, agents[0])
			}
			if c.NArg() == 0 {
				return argsError(c, "done needs the ID of a message (a short id works: its last six hex digits), or --all AGENT")
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			if err := checkAgentFlag(c, ws); err != nil {
				return err
			}
			return runDone(e, ws, c.String("agent"), c.Args().Slice())
		},
	}
}

// runDone moves each message an agent received to its done/: the person
// (or script) playing the agent has handled it.
func runDone(e *env, ws *workspace.Workspace, agent string, args []string) error {
	return markDone(e, ws, agent, args, "marked handled by a person (parley done)")
}

// runDoneAll moves every message in agent's inbox to its done/: the
// person has seen them all. An empty inbox is no error.
func runDoneAll(e *env, ws *workspace.Workspace, agent string) error {
	ids, err := ws.Mailbox(agent).IDs(mailbox.Inbox)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // none: it never received anything
		return fmt.Errorf("%s: %w", agent, err)
	}
	if len(ids) == 0 {
		fmt.Fprintf(e.stdout, "%s: nothing in %s\n", agent, ws.Short(ws.Mailbox(agent).Path(mailbox.Inbox, ""))+"/")
		return nil
	}
	return markDone(e, ws, agent, ids, "marked handled by a person (parley done --all)")
}

// markDone moves each message an agent received to its done/, and says so
// in the journal with note. The moves are flushed together, a thousand
// at a time, and their journal lines written in one write then: a move
// flushed each, and a line written and flushed each, made 50,000
// messages take two minutes. A crash before a flush may leave some of
// those thousand in inbox/, as if not marked (marked again, they are done
// once), or in done/ with no journal line: at most a thousand.
func markDone(e *env, ws *workspace.Workspace, agent string, args []string, note string) error {
	var errs []error
	var recs []workspace.Entry
	var said bytes.Buffer
	touched := map[string]mailbox.Dir{} // the mailboxes whose directories to flush
	flush := func() {
		// done/ first: the messages are there for good; then the
		// names they leave.
		for _, state := range []string{mailbox.Done, mailbox.Cur, mailbox.Inbox} {
			for _, box := range touched {
				if err := mailbox.SyncDir(box.Path(state, "")); err != nil {
					errs = append(errs, err)
				}
			}
		}
		journalLines(e, ws, recs...)
		recs = recs[:0]
		e.stdout.Write(said.Bytes())
		said.Reset()
	}
	for i, arg := range args {
		if i > 0 && i%doneBatch == 0 {
			flush()
		}
		id, err := ws.ResolveID(arg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := ws.Handling(id, agent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.State == mailbox.Done {
			errs = append(errs, handledAlready(ws, id, c))
			continue
		}
		box := ws.Mailbox(c.Agent)
		if _, ok := touched[c.Agent]; !ok {
			if err := box.Init(); err != nil { // a done/ or cur/ git removed (reply sent its answer already)
				errs = append(errs, err)
				continue
			}
			touched[c.Agent] = box
		}
		if c.State == mailbox.Inbox {
			if err := box.ClaimUnsynced(id); err != nil {
				var h *mailbox.HandledError
				if errors.As(err, &h) {
					// A copy that came back (git stash, git checkout)
					// beside the one handled: filed where that one is.
					fmt.Fprintf(&said, "%s: handled already (in %s): the copy that came back into %s is filed there\n", id, ws.Short(box.Path(h.State, mailbox.FileName(id))), ws.Short(box.Path(mailbox.Inbox, ""))+"/")
					continue
				}
				errs = append(errs, handledMeanwhile(ws, c.Agent, id, err))
				continue
			}
		}
		if err := box.FinishUnsynced(id); err != nil {
			errs = append(errs, handledMeanwhile(ws, c.Agent, id, err))
			continue
		}
		done := box.Path(mailbox.Done, mailbox.FileName(id))
		rec := workspace.Entry{Outcome: workspace.MarkedDone, Agent: c.Agent, ID: id, File: mailbox.FileName(id), Path: ws.Short(done), Note: note}
		rec.From, rec.Type = senderAndType(done, ws)
		recs = append(recs, rec)
		fmt.Fprintf(&said, "%s: done (%s)\n", id, ws.Short(box.Path(mailbox.Done, "")))
	}
	flush()
	return errors.Join(errs...)
}

// doneBatch is how many messages parley done moves before it flushes
// their directories and writes their journal lines.
const doneBatch = 1000

// doneAlready says so when a message agent did not find is in its done/
// already, rather than that it is not found.
func doneAlready(ws *workspace.Workspace, id, agent string, err error) error {
	if !errors.Is(err, workspace.ErrMessageNotFound) {
		return err
	}
	if c, derr := ws.Received(id, agent, mailbox.Done); derr == nil {
		return handledAlready(ws, id, c)
	}
	return err
}

// handledAlready is the error for a copy of a message that is in done/.
// It matches mailbox.ErrHandled.
func handledAlready(ws *workspace.Workspace, id string, c workspace.Copy) error {
	return fmt.Errorf("%s: %w (in %s)", id, mailbox.ErrHandled, ws.Short(c.Path))
}

// handledMeanwhile is err, from claiming or filing message id, or the
// error saying the message is handled already when err is that it is
// gone and agent's done/ holds it now: another call (parley done, the
// MCP done tool) marked it handled meanwhile.
func handledMeanwhile(ws *workspace.Workspace, agent, id string, err error) error {
	if !errors.Is(err, mailbox.ErrNotFound) {
		return err
	}
	if c, derr := ws.Received(id, agent, mailbox.Done); derr == nil {
		return handledAlready(ws, id, c)
	}
	return err
}

// agentFlag is the --agent flag of the commands that act on one agent's
// copy of a message.
func agentFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "agent", Usage: "the `AGENT` " + usage}
}

// checkAgentFlag refuses an --agent that is no agent of the workspace.
func checkAgentFlag(c *cli.Context, ws *workspace.Workspace) error {
	if a := c.String("agent"); a != "" {
		if err := ws.CheckAgent(a); err != nil {
			return usagef("--agent: %v", err)
		}
	}
	return nil
}

// senderAndType reads who sent a message file and its type, for a journal
// line; a file that cannot be read gives neither.
func senderAndType(path string, ws *workspace.Workspace) (from, typ string) {
	m, err := mailbox.ReadMessage(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return "", ""
	}
	from, _ = m.Header().Get("from")
	typ, _ = m.Header().Get("type")
	return from, typ
}

// journalLine appends a line for something a person did to the journal. What
// was done is done: a journal that cannot be written is a warning, so that
// a script does not do it again.
func journalLine(e *env, ws *workspace.Workspace, rec workspace.Entry) {
	journalLines(e, ws, rec)
}

// journalLines is journalLine of several lines, in one write.
func journalLines(e *env, ws *workspace.Workspace, recs ...workspace.Entry) {
	if len(recs) == 0 {
		return
	}
	stamp := time.Now().UTC().Format(mailbox.TimeFormat)
	for i := range recs {
		recs[i].Time = stamp
	}
	if err := workspace.AppendJournal(ws.JournalPath(), recs...); err != nil {
		fmt.Fprintf(e.stderr, "parley: warning: done, but the journal was not written: %v\n", err)
	}
}
