package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// ContextFile is the name of the context file of a command or session
// agent, in its mailbox's tmp/ (git-ignored, and inside what an isolated
// player's program may read): what the program needs beside the message
// it handles. Its path is the program's PARLEY_CONTEXT. There is one per
// agent, written again, whole, before each message and removed once the
// driver is done with it, so it never grows with the session. It holds,
// in this order:
//
//   - the message to answer (its path);
//   - the thread so far: the messages of the agent's done/ and sent/ in
//     the message's thread, oldest first, the last maxThread of them;
//   - the messages kept as context (see keptContext);
//   - the protocol the agent speaks and the files its role may see, as
//     Options.Brief gives them.
const ContextFile = "context.md"

// maxThread caps how many earlier messages of a thread a context file
// holds: the newest ones.
const maxThread = 20

// Briefing is what Options.Brief says of an agent: the text of the
// protocol it speaks, and the files its role may see (read at each
// message; a missing one is left out).
type Briefing struct {
	Protocol string
	Files    []string
}

// writeContext writes the context file of a delivery to a command or
// session agent and returns its path. The file is replaced at once
// (written under another name, then renamed): a program never reads half
// of one. It is not made durable: it is written again for every message,
// and a runner that starts removes what a stopped one left
// (cleanContext).
func (w *worker) writeContext(ws *workspace.Workspace, d *Delivery) (string, error) {
	if w.r.opts.Brief != nil && w.briefed != ws {
		// Asked once per loaded parley.yaml: the protocol's text is
		// read from the skills.
		b, err := w.r.opts.Brief(ws, w.agent.Name)
		if err != nil {
			return "", err
		}
		w.brief, w.briefed = b, ws
	}
	text := contextText(d, w.thread(d.Message, d.ID), w.brief)
	path := w.box.Path(mailbox.Tmp, ContextFile)
	tmp := path + ".tmp" // one at a time: the agent handles one message at a time
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// cleanContext removes the context file a stopped runner left, and the
// one it was writing.
func (w *worker) cleanContext() {
	path := w.box.Path(mailbox.Tmp, ContextFile)
	for _, p := range []string{path, path + ".tmp"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.r.log.Warn("removing a context file left by a stopped runner", "agent", w.agent.Name, "path", p, "err", err)
		}
	}
}

// thread returns the earlier messages of m's thread the agent has
// received (done/) or sent (sent/), oldest first (in the order of their
// ids), the last maxThread of them; none for a message that starts a
// thread.
func (w *worker) thread(m *mailbox.Message, id string) []Kept {
	h := m.Header()
	t, _ := h.Get("thread")
	if t == "" {
		t, _ = h.Get("reply_to")
	}
	if t == "" {
		return nil
	}
	type found struct {
		id string
		k  Kept
	}
	var all []found
	limit := w.r.ws().Config.Router.MaxMessageSize
	for _, state := range []string{mailbox.Done, mailbox.Sent} {
		dir := w.box.Path(state, "")
		names, err := w.box.Names(state)
		if err != nil {
			continue
		}
		w.threads.Keep(dir, names)
		for _, name := range names {
			other, ok := mailbox.IDFromName(name)
			if !ok || other == id {
				continue
			}
			// The thread of each file, parsed once (w.threads); the
			// whole message read only when it belongs.
			if mt, err := w.threads.Read(dir, name, limit); err != nil || other != t && mt != t {
				continue
			}
			msg := w.read(state, other)
			if msg == nil {
				continue
			}
			all = append(all, found{other, Kept{Path: w.box.Path(state, name), Message: msg}})
		}
	}
	slices.SortStableFunc(all, func(a, b found) int { return strings.Compare(a.id, b.id) })
	if len(all) > maxThread {
		all = all[len(all)-maxThread:]
	}
	out := make([]Kept, len(all))
	for i, f := range all {
		out[i] = f.k
	}
	return out
}

// threadOf is the thread a message names, as a thread's context finds
// its messages.
func threadOf(m *mailbox.Message) string {
	t, _ := m.Header().Get("thread")
	return t
}

// contextText is the text of a context file: markdown, each message and
// file in a fence longer than any run of backquotes in it.
func contextText(d *Delivery, thread []Kept, brief Briefing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context for %s\n\nThe message to answer: %s\n", d.Agent, short(d, d.Path))
	if len(thread) > 0 {
		fmt.Fprintf(&b, "\n## The thread so far\n\nThe %s of its thread you received or sent before it, oldest first.\n",
			plural(len(thread), "message", fmt.Sprintf("%d messages", len(thread))))
		for _, k := range thread {
			fenced(&b, short(d, k.Path), string(k.Message.Bytes()))
		}
	}
	if len(d.Context) > 0 {
		fmt.Fprintf(&b, "\n## Kept as context\n\nSince your last call, %d %s arrived that your accepts: in parley.yaml leave out: filed, not to be answered; here as context, oldest first.\n",
			len(d.Context), plural(len(d.Context), "message", "messages"))
		for _, k := range d.Context {
			fenced(&b, short(d, k.Path), string(k.Message.Bytes()))
		}
	}
	if brief.Protocol != "" {
		b.WriteString("\n## The protocol\n\n")
		b.WriteString(brief.Protocol)
		if !strings.HasSuffix(brief.Protocol, "\n") {
			b.WriteString("\n")
		}
	}
	first := true
	for _, f := range brief.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // not written yet
		}
		if first {
			b.WriteString("\n## Files your role may see\n")
			first = false
		}
		fenced(&b, short(d, f), string(data))
	}
	return b.String()
}

// fenced writes a section: a heading and the text in a fence longer than
// any run of backquotes in it.
func fenced(b *strings.Builder, heading, text string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	fmt.Fprintf(b, "\n### %s\n\n%s\n%s%s\n", heading, fence, text, fence)
}

// short returns path relative to the workspace root, when it is under it.
func short(d *Delivery, path string) string {
	if rel, err := filepath.Rel(d.Workspace, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
