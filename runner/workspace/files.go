package workspace

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// ErrNoSender is the error for a message file whose sender cannot be told:
// it is in no agent's outbox and has no from:.
var ErrNoSender = errors.New("say who sends it: the file is in no outbox, and its header names no sender (from:)")

// Locate says whose mailbox, and which state of it, a path is in:
// mailboxes/AGENT/STATE/FILE. ok is false for any other path.
func (w *Workspace) Locate(path string) (agent, state string, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", false
	}
	rel, err := filepath.Rel(w.Root, abs)
	if err != nil {
		return "", "", false
	}
	agent, state, _, ok = SplitMailboxPath(rel)
	return agent, state, ok
}

// InMailboxes reports whether path is, or is in, the workspace's
// mailboxes/ directory: parley's, where a file written may be taken for
// a message (in an outbox, it is sent).
func (w *Workspace) InMailboxes(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(w.Root, abs)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == MailboxesDir
}

// SplitMailboxPath splits a path relative to the workspace root, as the
// journal writes it, mailboxes/AGENT/STATE/FILE; ok is false for any
// other path.
func SplitMailboxPath(rel string) (agent, state, name string, ok bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 4 || parts[0] != MailboxesDir || !slices.Contains(mailbox.States, parts[2]) {
		return "", "", "", false
	}
	return parts[1], parts[2], parts[3], true
}

// FileCheck says how CheckFile looks at a file.
type FileCheck struct {
	// Sender is the agent that sends the file. Empty: the owner of the
	// mailbox when the file is in an outbox (or its tmp/, sent/ or
	// rejected/), else the file's from:.
	Sender string
	// Sending says the file is to be sent now (send --file, compose): an
	// id its sender sent before is a duplicate wherever the file is.
	// Otherwise a file in sent/, or in a mailbox it was delivered to, is
	// the message its id names, not a second sending of it.
	Sending bool
	// Sent, when set, tells of more ids sent before: those of the files
	// of an outbox checked before this one, which the router would route
	// first.
	Sent func(sender, id string) bool
}

// CheckFile reads a message file and checks it as the router would, were
// the file in its sender's outbox (see FileCheck). A file with no sender
// to be told gives ErrNoSender. A notice from parley itself (from:
// parley) delivered into a mailbox is accepted as it is. A file parley
// cannot read as a message is refused, as the router refuses it. The
// refusal names the file as path.
func (w *Workspace) CheckFile(path string, opts FileCheck) (*Verdict, error) {
	agent, state, inMailbox := w.Locate(path)
	data, err := mailbox.ReadFile(path, w.Config.Router.MaxMessageSize)
	var m *mailbox.Message
	if err == nil {
		m, err = mailbox.Parse(data)
	}
	sender := opts.Sender
	if sender == "" {
		switch {
		case inMailbox && slices.Contains([]string{mailbox.Tmp, mailbox.Outbox, mailbox.Sent, mailbox.Rejected}, state):
			sender = agent
		case m != nil:
			sender, _ = m.Header().Get("from")
		}
	}
	if err != nil {
		return &Verdict{File: path, From: sender, Refusal: RefusalOf(path, err)}, nil
	}
	if sender == "" {
		if fs := checkFields(m.Header(), "from"); m.Header().Has("from") && len(fs) > 0 {
			// A from: that is no single value names no sender: its
			// problems are said, as the router says them, not that
			// from: is missing.
			return &Verdict{File: path, Refusal: refusalOf(path, fs, nil)}, nil
		}
		return nil, ErrNoSender
	}
	if sender == Runner && inMailbox && slices.Contains([]string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead}, state) {
		// parley's own notice, delivered: it passes no Check, as the
		// runner writes it straight into the inboxes.
		v := &Verdict{File: path, From: Runner}
		v.ID, _ = m.Header().Get("id")
		v.Type, _ = m.Header().Get("type")
		return v, nil
	}
	in := Input{File: path, Sender: sender, Message: m}
	if inMailbox && state == mailbox.Rejected {
		// Checked under the name it has back in the outbox: the time of
		// the refusal before "output-1-answering-you-56c078.md" (a
		// program's output, see the runner's outputName) reads as an id
		// whose sender is "output-1-answering-you".
		in.Name = mailbox.UnrejectedName(filepath.Base(path))
	}
	itself := !opts.Sending && inMailbox && state != mailbox.Tmp && state != mailbox.Outbox && state != mailbox.Rejected
	box := w.Mailbox(sender)
	in.Sent = func(id string) bool {
		if opts.Sent != nil && opts.Sent(sender, id) {
			return true
		}
		return !itself && box.IsSent(id)
	}
	return w.Check(in)
}
