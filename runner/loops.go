package runner

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Loops (see workspace's Loops for the rule). The count of a message a
// program says depends on the message it was handling: who sent it, and
// the hops: in the program's copy, which parley wrote. The runner keeps
// that, for each program agent, from what it knows, never from what the
// program wrote:
//
//   - what a driver says in answer to a message (its stage) answers that
//     message: noted per file, before the stage is published;
//   - any other file in a program agent's outbox (a session writing into
//     it) answers the message its driver took last.
//
// A stopped loop is reported by a notice from parley (workspace.Runner),
// of type loop_stopped, to the agent whose message was stopped and to
// every person. It is parley's own message: written straight into the
// inboxes, not checked against the protocols, and journaled. A program
// agent does not see it: its worker files it in done/ without running the
// driver, since a program that loops would only answer it.

// answer is a message a program agent was handling: what Check needs
// (Answering), and its id and thread, for a notice; and the message its
// chain of refusal notices began with (root, sent by rootFrom): the
// message itself, or, for a refusal notice, the message the refused file
// answered (see Unanswered).
type answer struct {
	workspace.Answering
	id, thread     string
	root, rootFrom string
	// refused and why are, for a refusal notice, the refused file it
	// names (in the workspace) and why it was refused: what a notice of
	// the root left unanswered names (see Unanswered).
	refused, why string
}

// chains is what the runner knows of the messages program agents were
// handling. Workers write it, the router reads it.
type chains struct {
	mu       sync.Mutex
	files    map[fileKey]answer // published answers, until routed
	handling map[string]answer  // agent -> the message its driver took last
	said     map[string]string  // agent -> the id of that message, once a file of its outbox answering it was routed or refused
}

func newChains() *chains {
	return &chains{files: make(map[fileKey]answer), handling: make(map[string]answer), said: make(map[string]string)}
}

// answerOf returns what a message is to the program handling it, read
// from the program's copy: its sender, its hops: and its thread.
func answerOf(m *mailbox.Message) answer {
	h := m.Header()
	from, _ := h.Get("from")
	hops, _ := h.Get("hops")
	n, err := strconv.Atoi(hops)
	if err != nil || n < 0 {
		n = 0
	}
	id, _ := h.Get("id")
	thread, _ := h.Get("thread")
	if thread == "" {
		thread = id
	}
	root, rootFrom := id, from
	refused, why := "", ""
	if from == workspace.Runner {
		// parley's refusal notice: it names the message the refused
		// file answered, the file, and why.
		root, _ = h.Get(answeringField)
		rootFrom, _ = h.Get(answeringFromField)
		refused, _ = h.Get("refused")
		// "line 8: critical_count: missing: ...", as the reason beside
		// it says it (without the file's name).
		why, _ = h.Get("reason")
		if field, _ := h.Get("field"); field != "" && why != "" {
			why = field + ": " + why
		}
		if line, _ := h.Get("line"); line != "" && why != "" {
			why = "line " + line + ": " + why
		}
	}
	return answer{Answering: workspace.Answering{From: from, Hops: n}, id: id, thread: thread, root: root, rootFrom: rootFrom, refused: refused, why: why}
}

// take notes the message an agent's driver takes.
func (c *chains) take(agent string, a answer) {
	c.mu.Lock()
	c.handling[agent] = a
	delete(c.said, agent)
	c.mu.Unlock()
}

// routed notes that a file of a program agent's outbox was routed or
// refused: when it answers the message the driver took last (a file the
// program wrote into its outbox itself, not through its driver), that
// message had an answer, whatever the driver said (see Unanswered).
func (c *chains) routed(k fileKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.files[k]; ok {
		return
	}
	if a, ok := c.handling[k.agent]; ok && a.id != "" {
		c.said[k.agent] = a.id
	}
}

// saidWhileHandling reports whether a file answering the message id,
// which agent's driver took last, was routed or refused.
func (c *chains) saidWhileHandling(agent, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.said[agent] == id
}

// publish notes the message the files of a stage answer.
func (c *chains) publish(agent string, names []string, a answer) {
	c.mu.Lock()
	for _, n := range names {
		c.files[fileKey{agent, n}] = a
	}
	c.mu.Unlock()
}

// published returns the names of agent's outbox files that its driver
// said in answer to a message (see publish) and that are not routed or
// refused yet.
func (c *chains) published(agent string) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make(map[string]bool)
	for k := range c.files {
		if k.agent == agent {
			names[k.name] = true
		}
	}
	return names
}

// answering returns the message an outbox file of a program agent
// answers, and whether the runner knows one.
func (c *chains) answering(k fileKey) (answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.files[k]; ok {
		return a, true
	}
	a, ok := c.handling[k.agent]
	return a, ok
}

// forget drops what was noted of a file once it is routed or refused.
func (c *chains) forget(k fileKey) {
	c.mu.Lock()
	delete(c.files, k)
	c.mu.Unlock()
}

// answering returns what Check needs to know of the message a file
// answers: nil for a person's message and for parley's own (a nudge); for
// a program's message the runner knows nothing of, an answer to nobody.
func (r *Runner) answering(k fileKey, m *mailbox.Message) (*workspace.Answering, answer) {
	if !r.ws().IsProgram(k.agent) {
		return nil, answer{}
	}
	if id, ok := msgID(m); ok && r.nudges[id] != "" {
		return nil, answer{}
	}
	a, _ := r.chains.answering(k)
	return &a.Answering, a
}

// notice is a loop notice, delivered with the batch that stopped the loop.
type notice struct {
	id         string
	data       []byte
	recipients []string
	entry      workspace.Entry
}

// loopNotice writes the notice of a stopped loop: to the agent whose
// message was stopped, and to every person.
func (r *Runner) loopNotice(l *workspace.Loop, a answer, rejected string) *notice {
	to := []string{l.From}
	for _, ag := range r.ws().Config.Agents {
		if !r.ws().IsProgram(ag.Name) && ag.Name != l.From {
			to = append(to, ag.Name)
		}
	}
	if rel, err := filepath.Rel(r.ws().Root, rejected); err == nil {
		rejected = filepath.ToSlash(rel)
	}
	between := l.Between()
	var b strings.Builder
	fmt.Fprintf(&b, "parley stopped a loop: %s, programs answering each other, %s (hop_limit: %d in %s).\n", between, l.Tally(), l.Limit, workspace.ConfigFile)
	fmt.Fprintf(&b, "\nThe answer was not sent: it is in %s, with the reason beside it.\n", rejected)
	fmt.Fprintf(&b, "\n%s does not see this notice (it is filed in its done/): a program that loops would only answer it.\n", l.From)
	m, id := r.newNotice(workspace.LoopNotice, to, a.thread, b.String())
	m.SetValue("agent", l.From)
	m.SetValue("with", l.With)
	m.SetValue("limit", strconv.Itoa(l.Limit))
	m.SetValue("stopped", rejected)
	return &notice{
		id: id, data: m.Bytes(), recipients: to,
		entry: workspace.Entry{
			ID: id, From: workspace.Runner, To: to, Type: workspace.LoopNotice, Outcome: workspace.Delivered, File: mailbox.FileName(id),
			Note: fmt.Sprintf("parley's notice of the loop it stopped between %s: the answer is in %s", between, rejected),
		},
	}
}

// newNotice makes a notice of parley's own: its id, from, to, type,
// thread (when there is one) and time, and its body.
func (r *Runner) newNotice(typ string, to []string, thread, body string) (*mailbox.Message, string) {
	id := (&mailbox.IDs{Now: r.opts.Now}).New(workspace.Runner)
	return noticeWithID(id, typ, to, thread, body), id
}

// noticeWithID makes a notice from parley, as newNotice does, with the
// id given: one derived from what it is about, so that telling it again
// delivers nothing new (see GiveUps).
func noticeWithID(id, typ string, to []string, thread, body string) *mailbox.Message {
	m := mailbox.New([]byte(body))
	m.Set("id", id)
	m.Set("from", workspace.Runner)
	m.SetNames("to", to)
	m.Set("type", typ)
	if thread != "" {
		m.Set("thread", thread)
	}
	sent, _, _ := mailbox.ParseID(id)
	m.Set("created", sent.Format(mailbox.TimeFormat))
	return m
}

// isNotice reports whether a delivered message is parley's own notice.
func isNotice(m *mailbox.Message) bool {
	from, _ := m.Header().Get("from")
	return from == workspace.Runner
}
