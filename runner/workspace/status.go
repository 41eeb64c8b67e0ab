package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// AgentStatus is what an agent's mailbox holds.
type AgentStatus struct {
	Name   string   `json:"name"`
	Roles  []string `json:"roles,omitempty"`
	Driver string   `json:"driver"`
	// State is what the agent is doing: idle, working, retrying, failed,
	// stopped, unresponsive; waiting for a human agent with messages to
	// read; "-" for a driver when no runner runs.
	State string    `json:"state"`
	Since time.Time `json:"since,omitzero"`
	// Message is the message it is handling (working, retrying), as the
	// running runner says.
	Message string `json:"message,omitempty"`
	// Late is the message it did not answer in time (timeouts:) while
	// its program is still at work on it (see AgentRun.Late).
	Late string `json:"late,omitempty"`
	// Awaited are the replies the running runner awaits from the agent
	// (timeouts: in parley.yaml), the one due first first; with no
	// runner, those the last one awaited, which the next takes up.
	Awaited []Awaited `json:"awaited,omitempty"`
	// Remote is the workspace the agent lives in (remote: in
	// parley.yaml); its inbox here is what the bridge forwards there.
	Remote string `json:"remote,omitempty"`
	// Forwarded counts, for an agent that lives in another workspace,
	// the copies the bridge forwarded to it: acknowledged by the stream,
	// not yet known taken there (BridgeState.Peers says what that
	// workspace has not taken). Done counts the same copies, in done/.
	Forwarded int    `json:"forwarded,omitempty"`
	Note      string `json:"note,omitempty"`
	Outbox    int    `json:"outbox"`   // written, not yet routed
	Inbox     int    `json:"inbox"`    // delivered, not yet handled
	Cur       int    `json:"cur"`      // being handled
	Done      int    `json:"done"`     // handled
	Dead      int    `json:"dead"`     // given up
	Sent      int    `json:"sent"`     // routed from its outbox
	Rejected  int    `json:"rejected"` // refused from its outbox
	// LastActivity is the last time a message entered or left any of the
	// agent's mailbox states; zero when none ever did.
	LastActivity time.Time `json:"last_activity,omitzero"`
	// RejectedFiles are the refused files, each with the reason parley
	// gave: the newest StatusOptions.Problems of them (Rejected counts
	// them all), oldest first.
	RejectedFiles []Problem `json:"rejected_files,omitempty"`
	// DeadFiles are the messages given up on, with the reason: the newest
	// StatusOptions.Problems of them (Dead counts them all), oldest first.
	DeadFiles []Problem `json:"dead_files,omitempty"`
	// Ignored are files in the outbox the router leaves alone: editor
	// scratch files (swap files, backups ending in "~", dot files).
	Ignored []string `json:"ignored,omitempty"`
	// Editing are messages in the outbox an editor has open (its swap or
	// lock file is beside them, mailbox.Dir.EditorLock): the router waits
	// for the editor to close them.
	Editing []Edited `json:"editing,omitempty"`
	// Missing are the mailbox's state directories that are not there (a
	// person or `git clean` removed them); a runner makes them again.
	Missing []string `json:"missing,omitempty"`
	// Leftovers are files staged in tmp/ by writers that were killed (a
	// `parley send`, a program writing the Maildir way), untouched for
	// mailbox.StaleAfter: the next runner to start removes them.
	Leftovers []string `json:"leftovers,omitempty"`
	// Unusable says why the mailbox cannot be read, when it cannot: it,
	// or one of its state directories, is a file or a symbolic link
	// (which parley never follows).
	Unusable string `json:"unusable,omitempty"`
	// Held are files refused where they are, in the outbox (hard links),
	// each with the reason in the file beside it.
	Held []Problem `json:"held,omitempty"`
}

// Shown is the agent's state as parley shows it to a person: @WORKSPACE
// for an agent that lives in another workspace (what it does is seen
// there), else its State.
func (s AgentStatus) Shown() string {
	if s.Remote != "" {
		return "@" + s.Remote
	}
	return s.State
}

// stateShown is the one rule for the state parley shows of an agent:
// with a runner, what it says (run, when ran); without one, "-" for an
// agent a program plays (nothing runs it now), else idle; an agent that
// did not answer in time is unresponsive either way, as the next runner
// keeps it until it speaks (AgentRun.Silent; Status passes run as not
// silent when, with no runner, it wrote to its outbox since); a person's agent with
// messages in its inbox, and nothing else to say, is waiting.
func stateShown(a Agent, run AgentRun, ran, running bool, inbox int) string {
	state := StateIdle
	switch {
	case running && ran:
		state = run.State
	case ran && run.Silent() != "":
		state = StateUnresponsive
	case !running && a.Driven():
		state = "-"
	}
	if a.Person() && inbox > 0 && state == StateIdle {
		state = StateWaiting
	}
	return state
}

// Problem is a file that was refused or given up on, and why.
type Problem struct {
	Agent  string `json:"agent"` // whose mailbox holds it
	Path   string `json:"path"`  // relative to the workspace root
	Reason string `json:"reason"`
}

// StatusOptions say how much Status lists.
type StatusOptions struct {
	// Problems caps the rejected files and the dead letters listed per
	// agent: the newest ones (by name: a rejected file's name starts with
	// the time it was written, a dead letter's is its id, which starts
	// with the time it was sent). 0 lists every one.
	Problems int
	// Now is the time files in tmp/ are judged stale at (see Leftovers);
	// zero means time.Now().
	Now time.Time
}

// Status reports every agent's mailbox. It reads directories, not files:
// only the reason files of the problems it lists, so that it answers at
// once on a workspace holding 100,000 messages.
func (w *Workspace) Status(opts StatusOptions) ([]AgentStatus, error) {
	out := make([]AgentStatus, 0, len(w.Config.Agents))
	running := w.RunnerPID() != 0
	runs, err := w.AgentRuns()
	if err != nil {
		return nil, err
	}
	for _, a := range w.Config.Agents {
		box := w.Mailbox(a.Name)
		s := AgentStatus{Name: a.Name, Roles: w.Roles(a.Name), Driver: a.Driver, Remote: a.Remote}
		run, ran := runs[a.Name]
		if ran && running {
			s.Since, s.Note, s.Message, s.Late, s.Awaited = run.Since, run.Note, run.Message, run.Late, run.Awaited
		}
		if ran && !running && run.Silent() != "" {
			s.Since, s.Message = run.Since, run.Silent()
		}
		if ran && !running && run.Note != "" {
			s.Note = run.Note + " (last run)"
		}
		answered := false // silent in the last run, its answer since waits in its outbox
		if ran && !running {
			// What the next runner takes up: the waits whose rule is
			// still there.
			for _, a := range run.Awaited {
				if w.RuleOf(a) != nil {
					s.Awaited = append(s.Awaited, a)
				}
			}
		}
		counts := []struct {
			state string
			n     *int
		}{
			{mailbox.Inbox, &s.Inbox}, {mailbox.Cur, &s.Cur}, {mailbox.Done, &s.Done}, {mailbox.Sent, &s.Sent},
		}
		if nd := notDir(box); nd != nil {
			// One mailbox a person broke does not hide the others; a
			// symbolic link is not followed, to count another folder.
			short := *nd
			short.Path = w.Short(nd.Path)
			s.Unusable = short.Error()
			out = append(out, s)
			continue
		}
		for _, c := range counts {
			n, err := box.Count(c.state)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			*c.n = n
		}
		for _, state := range mailbox.States {
			// A directory's modification time moves whenever an entry
			// is added or removed: the newest one is the last activity.
			info, err := os.Stat(filepath.Join(string(box), state))
			if errors.Is(err, os.ErrNotExist) {
				s.Missing = append(s.Missing, state)
			}
			if err == nil && state != mailbox.Tmp && info.ModTime().After(s.LastActivity) {
				s.LastActivity = info.ModTime()
			}
		}
		if a.Remote != "" {
			s.Forwarded = s.Done // a copy forwarded moves to done/
		}
		for _, p := range []struct {
			state string
			n     *int
			dst   *[]Problem
		}{{mailbox.Rejected, &s.Rejected, &s.RejectedFiles}, {mailbox.Dead, &s.Dead, &s.DeadFiles}} {
			n, problems, err := w.problems(a.Name, p.state, opts.Problems)
			if err != nil {
				return nil, err
			}
			*p.n, *p.dst = n, problems
		}
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		left, err := box.Leftovers(now)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, e := range left {
			s.Leftovers = append(s.Leftovers, filepath.Join(MailboxesDir, a.Name, mailbox.Tmp, e.Name))
		}
		names, err := box.Names(mailbox.Outbox)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, n := range names {
			if mailbox.IsScratch(n) {
				s.Ignored = append(s.Ignored, filepath.Join(MailboxesDir, a.Name, mailbox.Outbox, n))
			} else if base, ok := mailbox.ReasonOf(n, func(b string) bool { return slices.Contains(names, b) }); !ok {
				if _, stray := box.StrayReason(n); !stray {
					s.Outbox++ // a message, as the router takes it (a stray reason it removes)
					if ran && !running && run.Silent() != "" && !answered {
						answered = writtenAfter(box.Path(mailbox.Outbox, n), run.Since)
					}
					if lock, ok := box.EditorLock(mailbox.Outbox, n); ok {
						s.Editing = append(s.Editing, Edited{Path: filepath.Join(MailboxesDir, a.Name, mailbox.Outbox, n), Lock: lock})
					}
				}
			} else {
				reason, _ := box.Reason(mailbox.Outbox, base)
				s.Held = append(s.Held, Problem{Agent: a.Name, Path: filepath.Join(MailboxesDir, a.Name, mailbox.Outbox, base), Reason: reason})
			}
		}
		if answered {
			// Anything it sends is an answer, and counts once a run
			// routes it; with no runner, status counts it already, and
			// says it waits.
			run.State, run.Late = StateIdle, ""
			s.Message, s.Since = "", time.Time{}
			s.Note = fmt.Sprintf("it did not answer in time in the last run (%s); what it wrote since waits in its outbox, for the next run to route: its answer", run.Note)
		}
		s.State = stateShown(a, run, ran, running, s.Inbox)
		out = append(out, s)
	}
	return out, nil
}

// writtenAfter reports whether the file at path was written after t.
func writtenAfter(path string, t time.Time) bool {
	info, err := os.Lstat(path)
	return err == nil && info.ModTime().After(t)
}

// Edited is a message an editor has open: its path, relative to the
// workspace root, and the editor's swap or lock file beside it.
type Edited struct {
	Path string `json:"path"`
	Lock string `json:"lock"`
}

// Unknown is a mailbox directory that names no agent of parley.yaml: an
// agent renamed or removed there, whose mailbox was left behind.
type Unknown struct {
	Path string `json:"path"` // relative to the workspace root
	// Outbox and Inbox count the messages waiting there: nobody routes
	// or handles them while no agent has that name.
	Outbox int `json:"outbox"`
	Inbox  int `json:"inbox"`
}

// UnknownMailboxes returns the directories in mailboxes/ that name no
// agent of parley.yaml, sorted by name: what a renamed agent left. Files
// and dot files there are not mailboxes and are left out.
func (w *Workspace) UnknownMailboxes() ([]Unknown, error) {
	des, err := os.ReadDir(filepath.Join(w.Root, MailboxesDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Unknown
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if _, ok := w.Agent(name); ok {
			continue
		}
		box := w.Mailbox(name)
		u := Unknown{Path: filepath.Join(MailboxesDir, name)}
		u.Outbox, _ = box.Count(mailbox.Outbox)
		u.Inbox, _ = box.Count(mailbox.Inbox)
		out = append(out, u)
	}
	return out, nil
}

// notDir returns the first of a mailbox's directories that is a file or
// a symbolic link, nil when none is; missing ones are passed over.
func notDir(box mailbox.Dir) *mailbox.NotDirError {
	var nd *mailbox.NotDirError
	for _, state := range mailbox.States {
		if errors.As(box.CheckDirs(state), &nd) {
			return nd
		}
	}
	return nil
}

// problems counts the files of a rejected/ or dead/ directory and
// returns the newest max of them (every one when max is 0), oldest first,
// each with the first line of its reason file.
func (w *Workspace) problems(agent, state string, max int) (int, []Problem, error) {
	box := w.Mailbox(agent)
	names, total, err := box.Newest(state, max)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	var out []Problem
	for _, n := range names {
		if n[0] == '.' {
			continue
		}
		p := Problem{Agent: agent, Path: filepath.Join(MailboxesDir, agent, state, n)}
		p.Reason, _ = box.Reason(state, n)
		out = append(out, p)
	}
	return total, out, nil
}

// ErrMessageNotFound is the error when no mailbox holds a message id.
var ErrMessageNotFound = errors.New("no mailbox holds this message")

// FindMessage returns the path of a message by id, or by a short id (see
// ResolveID): the copy in a recipient's mailbox (inbox, cur, done, dead)
// if there is one, else the sender's file (sent, or outbox before it is
// routed), else a file named by its id that the router refused (rejected).
func (w *Workspace) FindMessage(id string) (string, error) {
	id, err := w.ResolveID(id)
	if err != nil {
		return "", err
	}
	copies := w.Copies(id)
	if len(copies) == 0 {
		return "", fmt.Errorf("%s: %w", id, ErrMessageNotFound)
	}
	return copies[0].Path, nil
}
