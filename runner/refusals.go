package runner

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Refusals. A message the bus refuses goes to its sender's rejected/,
// with the reason beside it (<name>.reason), and is shown by `parley
// status`: a person reads it there. A program agent (driver command,
// session or openai) does not look there: it is sent, besides, a notice
// from parley, of type message_refused, naming the refused file, the
// field, the line and the reason (the reason Check gave: nothing is
// decided again here), and quoting the file; and it is woken for it,
// unlike a loop notice, so that it can send the message again, mended.
//
// Never in a loop: the notice carries hops:, the count of notices in a
// row. A program's message that answers a refusal notice and is refused
// again gets a notice counting one more (the runner knows what the
// program was handling, see Loops); past workspace.MaxRefusedNotices it
// is told no more, and the file waits in rejected/ for a person. Nor
// does it multiply: of the refused files that answer one message, only
// the first is told of (a program that answers each notice with ten bad
// messages gets one notice, not ten, at each step), and each refused
// file is refused once.
//
// Built-in handlers (parley's own code: a refusal of theirs is a mistake
// in the workspace's configuration, for a person) and people keep
// rejected/ and the reason alone. A message refused to stop a loop has
// its own notice (loop_stopped), which the program does not see.

// quoteLimit is how much of a refused file a notice quotes.
const quoteLimit = 8 << 10

// toldOfRefusals reports whether an agent is sent a notice when its
// message is refused.
func (r *Runner) toldOfRefusals(agent string) bool {
	a, ok := r.ws().Agent(agent)
	return ok && a.RunsProgram()
}

// refusedNotice writes the notice of a refused file to the program that
// sent it, or returns nil when it has been told MaxRefusedNotices times
// in a row. m is the refused message, nil when it did not parse; path is
// the refused file in rejected/, rel that path in the workspace; a is the
// message the program was handling.
func (r *Runner) refusedNotice(agent string, m *mailbox.Message, f *workspace.Refusal, path, rel string, a answer) *notice {
	count := inARow(a)
	if count > workspace.MaxRefusedNotices {
		r.log.Warn("not told of a refusal again: its answers to refusal notices were refused in a row", "agent", agent, "refused", rel, "notices", count-1)
		return nil
	}
	if a.id != "" {
		key := agent + "\x00" + a.id
		if r.told[key] {
			r.log.Warn("not told of a refusal: it was told of another refused file answering the same message", "agent", agent, "refused", rel, "answering", a.id)
			return nil
		}
		r.told[key] = true
	}
	get := func(k string) string {
		if m == nil {
			return ""
		}
		v, _ := m.Header().Get(k)
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "parley refused a message you sent: %s\n", f.Error())
	fmt.Fprintf(&b, "\nIt was not delivered. It is in %s, with the reason beside it.\n", rel)
	b.WriteString("Send it again, mended, as a new message.")
	if count == workspace.MaxRefusedNotices {
		fmt.Fprintf(&b, " This is notice %d of %d in a row: if the mended message is refused too, you are not told again, and a person sees it in `parley status`.", count, workspace.MaxRefusedNotices)
	}
	b.WriteString("\n")
	if data, err := mailbox.ReadFile(path, r.ws().Config.Router.MaxMessageSize); err == nil {
		quote(&b, data)
	}
	thread := get("thread")
	if thread == "" {
		thread = a.thread
	}
	to := []string{agent}
	n, id := r.newNotice(workspace.RefusedNotice, to, thread, b.String())
	n.SetValue("refused", rel)
	if m != nil {
		if names, err := m.Header().Names("to"); err == nil && len(names) > 0 {
			n.SetNames("refused_to", names) // where a plain-text answer goes (see readdress)
		}
	}
	for _, kv := range [][2]string{{"refused_type", get("type")}, {"refused_signal", get("signal")}, {"field", f.Field}} {
		if kv[1] != "" {
			n.SetValue(kv[0], kv[1])
		}
	}
	if f.Line > 0 {
		n.SetValue("line", strconv.Itoa(f.Line))
	}
	n.SetValue("reason", f.Reason)
	n.SetValue("hops", strconv.Itoa(count))
	if a.root != "" {
		// What the program says in answer to this notice answers
		// that message (see Unanswered).
		n.SetValue(answeringField, a.root)
		n.SetValue(answeringFromField, a.rootFrom)
	}
	return &notice{
		id: id, data: n.Bytes(), recipients: to,
		entry: workspace.Entry{
			ID: id, From: workspace.Runner, To: to, Type: workspace.RefusedNotice, Outcome: workspace.Delivered, File: mailbox.FileName(id),
			Note: fmt.Sprintf("parley's notice to %s of its message refused (%d of %d in a row): %s", agent, count, workspace.MaxRefusedNotices, rel),
		},
	}
}

// inARow is the count of the refusal notice that a refused file
// answering a would get: one more than a's, when a is a refusal notice
// (the only notice from parley a program is handed), else 1.
func inARow(a answer) int {
	if a.From == workspace.Runner {
		return a.Hops + 1
	}
	return 1
}

// unansweredAfterRefusals is the notice, to the sender of the message the
// chain of a began with, that it has no answer: the program agent's
// answers to it were refused MaxRefusedNotices times in a row and more,
// and it is told no more (see Unanswered); nil when that is not so, or
// the sender is not told.
func (r *Runner) unansweredAfterRefusals(agent string, a answer, reason, rel string) *notice {
	if inARow(a) <= workspace.MaxRefusedNotices || a.root == "" {
		return nil
	}
	why := fmt.Sprintf("its answers were refused %d times in a row, and it is told no more; the last: %s", inARow(a), reason)
	return r.unansweredNotice(agent, a.root, a.rootFrom, why, rel)
}

// quote writes the refused file into a notice, fenced, its first
// quoteLimit bytes at most (cut between characters); a file that is not
// text is not quoted: the notice must itself be a message.
func quote(b *strings.Builder, data []byte) {
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		b.WriteString("\nThe refused file is not text: it is not quoted here.\n")
		return
	}
	what := "The refused message"
	if len(data) > quoteLimit {
		data, what = data[:quoteLimit], "The refused message (its first 8 KiB)"
		for len(data) > 0 && !utf8.Valid(data) {
			data = data[:len(data)-1]
		}
	}
	fence := "~~~~"
	for strings.Contains(string(data), fence) {
		fence += "~"
	}
	fmt.Fprintf(b, "\n%s:\n\n%s\n%s", what, fence, data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n")
}

// readdress sends a plain-text answer to a refusal notice (a program's
// answer without a header, made a reply to the message it answers) where
// the refused message was going (refused_to:), not back to parley, which
// no agent is.
func readdress(in, answer *mailbox.Message) {
	if !isNotice(in) || !wakes(in) {
		return
	}
	if to, err := in.Header().Names("refused_to"); err == nil && len(to) > 0 {
		answer.SetNames("to", to)
	}
}

// wakes reports whether a notice from parley is handed to a program's
// driver: a refusal notice is; a loop notice is not (see Loops).
func wakes(m *mailbox.Message) bool {
	t, _ := m.Header().Get("type")
	return t == workspace.RefusedNotice
}
