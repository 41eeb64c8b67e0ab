package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// ContextFile is the name of the context file of a command or session
// agent, in its mailbox's tmp/ (git-ignored): what the program needs
// beside the message it handles. Its path is the program's
// PARLEY_CONTEXT. There is one per agent, written again, whole, for each
// message, so it never grows with the session.
const ContextFile = "context.md"

// writeContext writes the context file of a delivery to a command or
// session agent and returns its path. The file is replaced at once
// (a new file renamed over the old): a program never reads half of one.
// It is not made durable: it is written again for every message.
func (w *worker) writeContext(d *Delivery) (string, error) {
	path := w.box.Path(mailbox.Tmp, ContextFile)
	tmp := path + ".tmp" // one at a time: the agent handles one message at a time
	if err := os.WriteFile(tmp, []byte(contextText(d)), 0o644); err != nil {
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

// contextText is the text of a context file: markdown, each message in
// a fence long enough for its text.
func contextText(d *Delivery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context for %s\n\nThe message to answer: %s\n", d.Agent, short(d, d.Path))
	if len(d.Context) > 0 {
		fmt.Fprintf(&b, "\n## Kept as context\n\nSince your last call, %d %s arrived that your accepts: in parley.yaml leave out: filed, not to be answered; here as context, oldest first.\n",
			len(d.Context), plural(len(d.Context), "message", "messages"))
		for _, k := range d.Context {
			fenced(&b, short(d, k.Path), string(k.Message.Bytes()))
		}
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
