package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

func retryCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "retry",
		Usage: "put a refused or given-up message back: a file in rejected/ into its outbox, a message in dead/ into its inbox, one the bridge refused (.parley/bridge/refused/) into its recipient's inbox once the bridge would take it (its .reason file is removed; the journal keeps the reason)",
		UsageText: "parley retry mailboxes/aria/rejected/FILE...   (fix the file first)\n" +
			"parley retry --as NAME mailboxes/aria/rejected/FILE...   (send it as NAME, under an id of its own)\n" +
			"parley retry ID...   (a message in an agent's dead/; a short id works)\n" +
			"parley retry .parley/bridge/refused/FILE...   (once the agent it names is one, or the protocol takes it)",
		ArgsUsage: "ID|FILE...",
		Flags: []cli.Flag{
			agentFlag("whose dead/ (default: the one agent that holds the message there)"),
			&cli.BoolFlag{Name: "force", Usage: "retry a dead letter whose step went on without it since (answered, ticked or sent again), which does the step twice"},
			&cli.StringFlag{Name: "as", Usage: "send a file in rejected/ as agent `NAME`, under a new id (a file refused for the id it carries or is named by: renamed by hand, or moved into another agent's outbox); checked as parley send checks it, the file in rejected/ removed once the new one is written"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return argsError(c, "retry needs a file in rejected/, or the ID of a message in dead/")
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			if err := checkAgentFlag(c, ws); err != nil {
				return err
			}
			if as := c.String("as"); as != "" {
				if c.IsSet("agent") || c.Bool("force") {
					return usagef("--as sends a file in rejected/ anew: --agent and --force are for a message in dead/")
				}
				if err := ws.CheckAgent(as); err != nil {
					return usagef("--as: %v", err)
				}
				return runRetryAs(e, ws, as, c.Args().Slice())
			}
			return runRetry(e, ws, c.String("agent"), c.Bool("force"), c.Args().Slice())
		},
	}
}

// runRetry puts each refused file back into its outbox, and each message
// given up on back into its agent's inbox. A message given up whose step
// went on without it since (see givenUpFates) is left in dead/ unless
// force: retrying it would do the step twice.
func runRetry(e *env, ws *workspace.Workspace, agent string, force bool, args []string) error {
	var errs []error
	fates := newGivenUpFates(ws)
	for _, arg := range args {
		if _, err := os.Lstat(arg); err == nil {
			who, state, ok := ws.Locate(arg)
			if path, refused := inBridgeRefused(ws, arg); refused {
				if err := retryBridgeRefused(e, ws, path, arg); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			switch {
			case ok && state == mailbox.Rejected:
				if err := retryRejected(e, ws, who, arg, arg); err != nil {
					errs = append(errs, err)
				}
				continue
			case ok && state == mailbox.Dead:
				arg, _ = mailbox.IDFromName(filepath.Base(arg))
				agent = who
			default:
				errs = append(errs, fmt.Errorf("%s: neither in an agent's rejected/ or dead/ nor in %s", arg, filepath.ToSlash(filepath.Join(workspace.StateDir, "bridge", "refused"))))
				continue
			}
		}
		if strings.ContainsRune(arg, '/') {
			// A path, not an id: the file is not there (retried already,
			// or mistyped). Said as read says it, not as a short id.
			errs = append(errs, fmt.Errorf("%s: no such file (`parley status` lists what is in rejected/ and dead/)", arg))
			continue
		}
		id, err := ws.ResolveID(arg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := ws.Received(id, agent, mailbox.Dead)
		refused := rejectedCopies(ws, id, agent)
		if err == nil && len(refused) > 0 {
			// Given up, and a copy refused besides (one sent again
			// with the same id): which to put back is the person's
			// call, by its path.
			paths := []string{ws.Short(c.Path)}
			for _, r := range refused {
				paths = append(paths, ws.Short(r.Path))
			}
			errs = append(errs, fmt.Errorf("%s: %d files are message %s: give the path of the one to put back (parley retry %s)", arg, len(paths), id, strings.Join(paths, " or ")))
			continue
		}
		if err != nil && len(refused) > 0 {
			// A file named by the id that the router refused: put back
			// into its outbox, as when named by its path.
			for _, r := range refused {
				if err := retryRejected(e, ws, r.Agent, r.Path, ws.Short(r.Path)); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if err != nil {
			if errors.Is(err, workspace.ErrMessageNotFound) && len(ws.Copies(id)) > 0 {
				err = fmt.Errorf("%w (only a message in dead/ is retried)", err)
				if there := forwardedTo(ws, id); there != "" {
					err = fmt.Errorf("%w; %s", err, there)
				}
			}
			errs = append(errs, err)
			continue
		}
		if d := fates.deadLetterAt(c.Agent, c.Path); fates.settled(d) != "" && !force {
			errs = append(errs, fmt.Errorf("%s: not retried: it was given up, and %s; retrying it would do %s twice (parley retry --force %s retries it all the same)", id, fates.settled(d), twice(d), id))
			continue
		}
		reason, _ := ws.Mailbox(c.Agent).Reason(mailbox.Dead, mailbox.FileName(id))
		if err := recheckDead(ws, c.Agent, id, reason); err != nil {
			// Refused by the bridge: put back only once it would take
			// it, as the router checks a file put back into an outbox.
			errs = append(errs, err)
			continue
		}
		if err := ws.Mailbox(c.Agent).Revive(id); err != nil {
			if errors.Is(err, mailbox.ErrExists) {
				// A copy came back into the inbox (git stash, git
				// checkout): the dead/ copy is not put over it.
				err = fmt.Errorf("%s: not put back: %s is there already (a copy that came back, from git say); remove it, then retry", id, ws.Short(ws.Mailbox(c.Agent).Path(mailbox.Inbox, mailbox.FileName(id))))
			}
			errs = append(errs, err)
			continue
		}
		inbox := ws.Mailbox(c.Agent).Path(mailbox.Inbox, mailbox.FileName(id))
		rec := workspace.Entry{Outcome: workspace.Retried, Agent: c.Agent, ID: id, File: mailbox.FileName(id), Path: ws.Short(inbox), Was: ws.Short(ws.Mailbox(c.Agent).Path(mailbox.Dead, mailbox.FileName(id))), Reason: reason, Note: "a message given up on put back into the inbox (parley retry)"}
		rec.From, rec.Type = senderAndType(inbox, ws)
		journalLine(e, ws, rec)
		fmt.Fprintf(e.stdout, "%s: back in %s\n", id, ws.Short(ws.Mailbox(c.Agent).Path(mailbox.Inbox, mailbox.FileName(id))))
		// A sender of another workspace was told of the give-up, and
		// cannot see this: it is told, so that it does not send the
		// message again.
		told, err := runner.TellRetried(ws, c.Agent, id, time.Now())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: back in the inbox, but its sender, of another workspace, could not be told: %w", id, err))
			continue
		}
		if told != nil {
			journalLine(e, ws, *told)
			fmt.Fprintf(e.stdout, "%s: %s, of workspace %s, is told (the bridge carries it)\n", id, told.To[0], remoteOf(ws, told.To[0]))
		}
	}
	return errors.Join(errs...)
}

// remoteOf is the workspace an agent lives in, when another.
func remoteOf(ws *workspace.Workspace, agent string) string {
	a, _ := ws.Agent(agent)
	return a.Remote
}

// retryRejected puts the file at path, in who's rejected/, back into its
// outbox, once it is mended: checked as the router will check it there,
// a file not fixed yet stays where it is, with its reason. shown is how
// the file is named to the person.
func retryRejected(e *env, ws *workspace.Workspace, who, path, shown string) error {
	if v, err := ws.CheckFile(path, workspace.FileCheck{}); err == nil && !v.Accepted() {
		if v.Refusal.Rename {
			// Its name in rejected/ is parley's (a time, then the
			// name it had): put back by hand, under a name of the
			// person's.
			first := ""
			if v.Refusal.Line > 0 {
				// The id is on a line of its own too: out first.
				first = fmt.Sprintf("delete its id: line (line %d), then ", v.Refusal.Line)
			}
			return fmt.Errorf("%s: left in rejected/, the router would refuse it again: %w; to send it as %s under an id of its own: parley retry --as %s %s (or, to send it under another name yourself, %smove it into the outbox: mv %s %s && rm %s)",
				shown, v.Refusal, who, who, ws.Short(path), first, ws.Short(path), ws.Short(ws.Mailbox(who).Path(mailbox.Outbox, renamedName(path))), ws.Short(path)+mailbox.ReasonSuffix)
		}
		if v.Refusal.Anew {
			// Only a new id mends it (an id sent already or of
			// another sender, a from: of another agent's): --as
			// drops its id, created and from lines.
			return fmt.Errorf("%s: left in rejected/, the router would refuse it again: %w; to send it as %s, under an id of its own: parley retry --as %s %s", shown, v.Refusal, who, who, ws.Short(path))
		}
		return fmt.Errorf("%s: left in rejected/, the router would refuse it again: %w", shown, v.Refusal)
	}
	reason, _ := ws.Mailbox(who).Reason(mailbox.Rejected, filepath.Base(path))
	dst, err := ws.Mailbox(who).Unreject(filepath.Base(path))
	if errors.Is(err, mailbox.ErrExists) {
		// Never over a file a person may still be writing.
		name := mailbox.UnrejectedName(filepath.Base(path))
		err = fmt.Errorf("%s: not put back: %s is there already, not sent yet; rename one of them (or wait until the router has sent that one), then retry", shown, ws.Short(ws.Mailbox(who).Path(mailbox.Outbox, name)))
	}
	if err != nil {
		return err
	}
	journalLine(e, ws, workspace.Entry{Outcome: workspace.Retried, Agent: who, From: who, File: filepath.Base(dst), Path: ws.Short(dst), Was: ws.Short(ws.Mailbox(who).Path(mailbox.Rejected, filepath.Base(path))), Reason: reason, Note: "a refused file put back into its outbox (parley retry)"})
	fmt.Fprintf(e.stdout, "%s: back in %s\n", shown, ws.Short(dst))
	return nil
}

// runRetryAs sends each file given, in an agent's rejected/, as agent
// as: a new message of its, under an id of its own (a file refused for
// the id it carries or is named by: one renamed by hand, or moved into
// another agent's outbox with its old id). Its id, created and from
// lines are dropped, and the message is checked as parley send checks
// it: refused, the file stays where it is. It is sent once, however
// often it is run and wherever one stopped (see retryAs).
func runRetryAs(e *env, ws *workspace.Workspace, as string, args []string) error {
	var errs []error
	for _, path := range args {
		if err := retryAs(e, ws, as, path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// retryAs sends the file at path, in an agent's rejected/, as agent as,
// in three durable steps, so that a run stopped between two (a crash,
// kill -9) and run again sends it once:
//
//  1. its .reason gets a line naming the new id (retryAsLine), then the
//     file is rewritten in place (mailbox.WriteFileAtomic) with that id
//     and from: as;
//  2. the rewritten message is posted into as's outbox;
//  3. the file and its .reason are removed from rejected/.
//
// Run again, a file whose id is the one its .reason names is reused as
// it is, not stamped anew; one whose id is in as's outbox or sent/
// already was sent, and is only removed. The .reason's line tells such a
// file from one that carries an id of as's that was sent before (a copy
// of a message of as's put back: sent anew, under a new id).
func retryAs(e *env, ws *workspace.Workspace, as, path string) error {
	if _, err := os.Lstat(path); err != nil {
		return fmt.Errorf("%s: no such file (`parley status` lists what is in rejected/)", path)
	}
	who, state, ok := ws.Locate(path)
	if !ok || state != mailbox.Rejected {
		return fmt.Errorf("%s: not in an agent's rejected/: --as sends a refused file anew (a message in dead/ is retried by its id, without --as)", path)
	}
	m, err := mailbox.ReadMessage(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	box := ws.Mailbox(as)
	reasonPath := path + mailbox.ReasonSuffix
	note, _ := mailbox.ReadFile(reasonPath, 64<<10) // absent: none
	reason, _, _ := strings.Cut(string(note), "\n")
	id, _ := m.Header().Get("id")
	from, _ := m.Header().Get("from")
	stamped := id != "" && from == as && retryAsID(string(note), as) == id
	sent := stamped && (box.IsSent(id) || fileExists(box.Path(mailbox.Outbox, mailbox.FileName(id))))
	if !stamped {
		for _, key := range []string{"id", "created", "from"} {
			m.Delete(key) // the old sending's: as's own are given
		}
		id = box.Stamp(m)
	}
	if !sent {
		v, err := check(ws, box, m)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := judged(e, ws, v, false, false); err != nil {
			return fmt.Errorf("%s: left in rejected/, refused as %s's: %w", path, as, err)
		}
	}
	if !stamped {
		// Step 1: the id this file is sent under, said before it is
		// written into the file.
		if err := mailbox.WriteFileAtomic(reasonPath, append(note, retryAsLine(as, id)...)); err != nil {
			return fmt.Errorf("%s: left in rejected/: %w", path, err)
		}
		if err := mailbox.WriteFileAtomic(path, m.Bytes()); err != nil {
			return fmt.Errorf("%s: left in rejected/: %w", path, err)
		}
	}
	dst := box.Path(mailbox.Outbox, mailbox.FileName(id))
	if box.IsSent(id) {
		dst = box.Path(mailbox.Sent, mailbox.FileName(id))
	}
	if !sent {
		// Step 2.
		if _, err := box.Send(m); err != nil && !errors.Is(err, mailbox.ErrExists) {
			return fmt.Errorf("%s: left in rejected/ (as %s's, id %s: run this again to send it): %w", path, as, id, err)
		}
	}
	// Step 3.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: sent as %s (%s), but not removed from rejected/: %w; remove it (run this again, it is not sent twice)", path, as, ws.Short(dst), err)
	}
	_ = os.Remove(reasonPath) // the journal keeps the reason
	typ, _ := m.Header().Get("type")
	journalLine(e, ws, workspace.Entry{Outcome: workspace.Retried, Agent: as, From: as, ID: id, Type: typ, File: filepath.Base(dst), Path: ws.Short(dst), Was: ws.Short(path), Reason: reason,
		Note: fmt.Sprintf("a refused file of %s's sent again as %s, under a new id (parley retry --as)", who, as)})
	fmt.Fprintf(e.stdout, "%s: sent as %s, id %s, in %s\n", ws.Short(path), as, id, ws.Short(dst))
	return nil
}

// retryAsPrefix starts the line retryAs adds to a refused file's
// .reason: the agent it is sent as and the id it is sent under.
const retryAsPrefix = "parley retry --as "

// retryAsLine is the line retryAs adds to a .reason before it writes id
// into the file beside it.
func retryAsLine(as, id string) string {
	return "\n" + retryAsPrefix + as + ": sent as " + as + ", id " + id + " (run again, it is sent once)\n"
}

// retryAsID is the id the last retryAs line of note names for as; ""
// when there is none.
func retryAsID(note, as string) string {
	id := ""
	for _, l := range strings.Split(note, "\n") {
		rest, ok := strings.CutPrefix(l, retryAsPrefix+as+": sent as "+as+", id ")
		if ok {
			id, _, _ = strings.Cut(rest, " ")
		}
	}
	return id
}

// fileExists reports whether a file is at path (a link is not followed).
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// renamedName is a name, no message id, for the refused file at path
// whose name is an id: "retried-" and the id's random part.
func renamedName(path string) string {
	id, _ := mailbox.IDFromName(mailbox.UnrejectedName(filepath.Base(path)))
	tail := id[strings.LastIndexByte(id, '-')+1:]
	if tail == "" {
		tail = "message"
	}
	return "retried-" + tail + ".md"
}

// rejectedCopies returns the files named by message id in rejected/ (of
// agent, unless it is ""): a message the router refused, retried by its
// id as by its path.
func rejectedCopies(ws *workspace.Workspace, id, agent string) []workspace.Copy {
	var out []workspace.Copy
	for _, c := range ws.Copies(id) {
		if c.State == mailbox.Rejected && (agent == "" || c.Agent == agent) {
			out = append(out, c)
		}
	}
	return out
}

// forwardedTo says, for a message the bridge forwarded to an agent of
// another workspace, that one given up there is in that workspace's
// dead/, where `parley retry` is run; empty for any other message.
func forwardedTo(ws *workspace.Workspace, id string) string {
	for _, c := range ws.Copies(id) {
		if a, ok := ws.Agent(c.Agent); ok && a.Remote != "" && c.State == mailbox.Done {
			return fmt.Sprintf("it was forwarded to %s, who lives in workspace %q: given up there, it is in that workspace's dead/, and `parley retry %s` is run there", c.Agent, a.Remote, id)
		}
	}
	return ""
}
