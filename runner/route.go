package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/parley-dev/parley/skills"
)

// accepted is a message that passed every check and is being delivered.
type accepted struct {
	candidate
	index      int // position in the batch
	msg        *mailbox.Message
	id         string
	recipients []string
	stamp      bool // came without an id: written back with one first
	already    []string
	err        error // why delivering it failed
	skipped    bool  // an earlier message of its sender failed: not tried
	warnings   []string
}

// routeBatch reads, checks and delivers a batch of ready files in sending
// order, makes the deliveries and rejections durable with one sync, writes
// the journal, then moves the routed files to sent/. A file that turns out
// to be incomplete, or that fails, holds back its sender's later files. It
// returns when a file that is not complete yet should be looked at again.
func (r *Runner) routeBatch(batch []candidate, now time.Time, settle time.Duration) (wait time.Time, err error) {
	var (
		entries = make([]*workspace.Entry, len(batch)) // journal lines, in batch order
		routed  []*accepted
		ids     = make(map[string]bool)
		held    = make(map[string]bool) // senders with an earlier file not routed now
	)
	reject := func(i int, c candidate, id string, m *mailbox.Message, f *workspace.Refusal) {
		box := r.agents[c.agent]
		text := f.Text(c.name)
		path, err := box.Reject(c.name, c.info.ModTime(), rejectionNote(text, c, now), r.syncer)
		if err != nil {
			r.fail(c, now, fmt.Errorf("rejecting: %w", err))
			return
		}
		delete(r.pending, c.fileKey)
		r.stats.Rejected++
		e := workspace.Entry{ID: id, From: c.agent, Outcome: workspace.Refused, Reason: text, File: c.name}
		if m != nil {
			e.Type, _ = m.Get("type")
			e.Signal, _ = m.Get("signal")
		}
		entries[i] = &e
		r.log.Warn("rejected", "agent", c.agent, "file", c.name, "reason", text, "moved_to", path)
	}
	for i, c := range batch {
		if c.refusal != nil {
			reject(i, c, "", nil, c.refusal)
			continue
		}
		if held[c.agent] {
			continue // stays pending, behind its sender's earlier file
		}
		box := r.agents[c.agent]
		data, err := mailbox.ReadFile(box.Path(mailbox.Outbox, c.name), r.ws.Config.Router.MaxMessageSize)
		if err != nil {
			if isGone(err) {
				delete(r.pending, c.fileKey)
				continue
			}
			reject(i, c, "", nil, &workspace.Refusal{Reason: err.Error()})
			continue
		}
		msg, perr := mailbox.Parse(data)
		if p := r.pending[c.fileKey]; idNamed(c.name) && !settled(p, c.info, now, settle) {
			// Complete only if it names itself; otherwise wait for it.
			if id, _ := msgID(msg); perr != nil || id+".md" != c.name {
				p.observe(c.info, now)
				held[c.agent] = true
				if at := p.since.Add(settle); wait.IsZero() || at.Before(wait) {
					wait = at
				}
				continue
			}
		}
		if perr != nil {
			reject(i, c, "", nil, workspace.RefusalOf(perr))
			continue
		}
		id, f := r.check(c, msg, ids)
		if f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		if f := r.checkHops(msg); f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		recipients, broadcast, f := r.recipients(c.agent, msg)
		if f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		f, warnings := r.checkProtocol(c.agent, msg, recipients, broadcast)
		if f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		a := &accepted{candidate: c, index: i, msg: msg, id: id, recipients: recipients, warnings: warnings}
		if id == "" {
			a.stamp = true
			a.id = r.newID(c)
			msg.Set("id", a.id)
		}
		if !msg.Has("created") {
			sent, _, _ := mailbox.ParseID(a.id)
			msg.Set("created", sent.Format(mailbox.TimeFormat))
		}
		ids[a.id] = true
		routed = append(routed, a)
	}

	// A file that came without an id is written back with the id it was
	// given, durably, before any copy is delivered: routed again after a
	// crash, it is the same message.
	failed := make(map[string]bool) // senders whose earlier message failed
	stamped := false
	for _, a := range routed {
		if !a.stamp {
			continue
		}
		if failed[a.agent] {
			a.skipped = true
			continue
		}
		if err := r.agents[a.agent].Stamp(a.name, a.info.ModTime(), a.msg, r.syncer); err != nil {
			a.err = fmt.Errorf("writing its id into it: %w", err)
			failed[a.agent] = true
			continue
		}
		stamped = true
	}
	if stamped {
		if err := r.syncer.Sync(); err != nil {
			return wait, r.failAll(routed, now, fmt.Errorf("syncing ids: %w", err))
		}
	}

	// Deliver, in sending order, so that each recipient gets each sender's
	// messages in the order they were sent.
	for _, a := range routed {
		if a.err != nil || a.skipped {
			continue
		}
		if failed[a.agent] {
			a.skipped = true
			continue
		}
		data := a.msg.Bytes()
		for _, to := range a.recipients {
			ok, err := r.agents[to].Deliver(a.id, data, r.syncer)
			if err != nil {
				a.err = fmt.Errorf("delivering to %s: %w", to, err)
				failed[a.agent] = true
				break
			}
			if ok {
				r.stats.Deliveries++
			} else {
				a.already = append(a.already, to)
				r.stats.Recovered++
			}
		}
	}
	if err := r.syncer.Sync(); err != nil {
		// Nothing of this batch is known to be durable: the files stay in
		// the outboxes and are routed again.
		return wait, r.failAll(routed, now, fmt.Errorf("syncing deliveries: %w", err))
	}

	// The journal first, then the moves to sent/: a crash in between
	// routes the message again, which the journal shows as already
	// delivered, rather than leaving a routed message unrecorded.
	stamp := journalTime(r.opts.Now())
	var done []*accepted
	for _, a := range routed {
		switch {
		case a.skipped:
		case a.err != nil:
			r.fail(a.candidate, now, a.err)
		default:
			e := workspace.Entry{ID: a.id, From: a.agent, To: a.recipients, Outcome: workspace.Delivered, File: a.name, Already: a.already, Warnings: a.warnings}
			e.Note = r.observe(a.agent, a.msg)
			e.Type, _ = a.msg.Get("type")
			e.Signal, _ = a.msg.Get("signal")
			entries[a.index] = &e
			done = append(done, a)
		}
	}
	lines := make([]workspace.Entry, 0, len(entries))
	for _, e := range entries {
		if e != nil {
			e.Time = stamp
			lines = append(lines, *e)
		}
	}
	if err := r.journal.append(lines, r.syncer); err != nil {
		return wait, r.failAll(done, now, fmt.Errorf("writing journal: %w", err))
	}
	for _, a := range done {
		if err := r.agents[a.agent].MarkSent(a.name, a.id, r.syncer); err != nil {
			r.fail(a.candidate, now, fmt.Errorf("moving to sent/: %w", err))
			continue
		}
		delete(r.pending, a.fileKey)
		r.noteSent(a.agent, a.id)
		r.stats.Routed++
		for _, to := range a.recipients {
			r.notify(to)
		}
		r.expectReplies(a.agent, a.msg, a.recipients)
		r.log.Debug("delivered", "id", a.id, "from", a.agent, "to", a.recipients)
	}
	return wait, nil
}

// maxAttempts is how often `parley run --until-idle` tries a file that
// fails before giving up on it.
const maxAttempts = 4

// fail records a failed attempt to route a file: it is tried again after
// a pause that doubles with each failure, up to the rescan interval, and
// its sender's later files wait for it.
func (r *Runner) fail(c candidate, now time.Time, err error) {
	p := r.note(c.fileKey)
	p.failures++
	p.lastErr = err
	pause := min(100*time.Millisecond<<min(p.failures-1, 16), r.ws.Config.Router.RescanInterval)
	p.retryAt = now.Add(pause)
	r.log.Error("routing failed; trying again", "agent", c.agent, "file", c.name, "attempt", p.failures, "retry_in", pause, "err", err)
}

// failAll records a failure of every message of a batch that was tried.
func (r *Runner) failAll(routed []*accepted, now time.Time, err error) error {
	for _, a := range routed {
		if !a.skipped {
			r.fail(a.candidate, now, err)
		}
	}
	return err
}

// newID gives a message that came without an id one: its time is the
// file's modification time, but after the last message its sender sent,
// so that ids (and inbox listings) keep the order messages were routed in.
func (r *Runner) newID(c candidate) string {
	t := c.info.ModTime().UTC().Truncate(time.Microsecond)
	if last := r.lastSent(c.agent); !t.After(last) {
		t = last.Add(time.Microsecond)
	}
	r.last[c.agent] = t
	return mailbox.IDAt(c.agent, t)
}

// lastSent returns the time of the newest id an agent has sent, reading
// its sent/ directory the first time.
func (r *Runner) lastSent(agent string) time.Time {
	if t, ok := r.last[agent]; ok {
		return t
	}
	var last time.Time
	if entries, err := os.ReadDir(filepath.Join(string(r.agents[agent]), mailbox.Sent)); err == nil {
		for i := len(entries) - 1; i >= 0; i-- {
			stem, _ := strings.CutSuffix(entries[i].Name(), ".md")
			if t, _, err := mailbox.ParseID(stem); err == nil {
				last = t
				break
			}
		}
	}
	r.last[agent] = last
	return last
}

// noteSent records that an agent sent a message with this id.
func (r *Runner) noteSent(agent, id string) {
	if t, _, err := mailbox.ParseID(id); err == nil && t.After(r.lastSent(agent)) {
		r.last[agent] = t
	}
}

// msgID returns the id a message carries, if any.
func msgID(m *mailbox.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	return m.Get("id")
}

// check verifies the reserved fields that say who sent a message: from is
// the outbox's owner (filled in when left out), an id is a parley id of
// that sender not sent before. It returns the message's id, or "" when it
// came without one.
func (r *Runner) check(c candidate, m *mailbox.Message, batchIDs map[string]bool) (string, *workspace.Refusal) {
	owner := r.agents[c.agent]
	if m.Has("from") {
		from, ok := m.Get("from")
		if !ok || from != c.agent {
			return "", &workspace.Refusal{Line: m.Line("from"), Field: "from", Reason: fmt.Sprintf("%q, but the file is in the outbox of %q: an agent sends only from its own outbox", from, c.agent)}
		}
	} else {
		m.Set("from", c.agent)
	}
	for _, key := range []string{"id", "type", "signal", "thread", "reply_to", "request_id", "created"} {
		if m.Has(key) {
			if _, ok := m.Get(key); !ok {
				return "", &workspace.Refusal{Line: m.Line(key), Field: key, Reason: "must be a single value, not a list or a set of fields"}
			}
		}
	}
	id, ok := m.Get("id")
	if !ok {
		return "", nil
	}
	_, sender, err := mailbox.ParseID(id)
	if err != nil {
		return "", &workspace.Refusal{Line: m.Line("id"), Field: "id", Reason: err.Error()}
	}
	if sender != c.agent {
		return "", &workspace.Refusal{Line: m.Line("id"), Field: "id", Reason: fmt.Sprintf("%q names %q as its sender, but the file is in the outbox of %q", id, sender, c.agent)}
	}
	if batchIDs[id] || owner.IsSent(id) {
		return id, &workspace.Refusal{Line: m.Line("id"), Field: "id", Reason: fmt.Sprintf("duplicate: %s already sent a message with id %s (in %s)", c.agent, id, "mailboxes/"+c.agent+"/sent/")}
	}
	return id, nil
}

// recipients resolves a message's recipients for delivery; a message that
// named none says in its delivered copy where it went.
func (r *Runner) recipients(sender string, m *mailbox.Message) ([]string, bool, *workspace.Refusal) {
	a, f := r.ws.Address(r.protocol, sender, m)
	if f != nil {
		return nil, false, f
	}
	if len(a.Named) == 0 {
		if a.Broadcast {
			m.Set("to", "*")
		} else {
			m.SetNames("to", a.Recipients)
		}
	}
	return a.Recipients, a.Broadcast, nil
}

// checkHops dead-letters a message that is too deep in a chain of driver
// answers: agents answering each other for ever.
func (r *Runner) checkHops(m *mailbox.Message) *workspace.Refusal {
	v, ok := m.Get("hops")
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return &workspace.Refusal{Line: m.Line("hops"), Field: "hops", Reason: fmt.Sprintf("%q is not a count", v)}
	}
	if n > r.ws.Config.HopLimit {
		return &workspace.Refusal{Line: m.Line("hops"), Field: "hops", Reason: fmt.Sprintf("dead letter: the %d-th answer in a chain of answers by programs (hop_limit: %d in parley.yaml): agents answering each other in a loop?", n, r.ws.Config.HopLimit)}
	}
	return nil
}

// checkProtocol checks a message against the workspace's protocol. It
// returns a refusal for violations, and the warnings to journal.
func (r *Runner) checkProtocol(sender string, m *mailbox.Message, recipients []string, broadcast bool) (*workspace.Refusal, []string) {
	if r.protocol == nil {
		return nil, nil
	}
	env := skills.Envelope{
		Sender:    skills.Party{Name: sender, Roles: r.ws.Roles(sender)},
		Broadcast: broadcast,
		Phase:     r.ws.Config.Phase,
		Strict:    r.ws.Config.Strict,
	}
	for _, to := range recipients {
		env.Recipients = append(env.Recipients, skills.Party{Name: to, Roles: r.ws.Roles(to)})
	}
	_, vs := r.protocol.Check(m, env)
	var warnings []string
	var f *workspace.Refusal
	for _, v := range vs {
		if v.Warning {
			warnings = append(warnings, v.Error())
			continue
		}
		if f == nil {
			f = &workspace.Refusal{Line: v.Line, Field: v.Field, Reason: v.Reason}
			continue
		}
		more := v.Error()
		if v.Line > 0 {
			more = fmt.Sprintf("line %d: %s", v.Line, more)
		}
		f.Reason += "; and " + more
	}
	return f, warnings
}

// rejectionNote is the text of a .reason file: the reason on the first
// line (what `parley status` shows), then what a person needs to act.
func rejectionNote(reason string, c candidate, now time.Time) string {
	return reason + "\n" +
		"\n" +
		"agent:    " + c.agent + "\n" +
		"file:     " + c.name + " (was in mailboxes/" + c.agent + "/outbox/)\n" +
		"rejected: " + now.UTC().Format(mailbox.TimeFormat) + "\n" +
		"\n" +
		"The file beside this one is the input, unchanged. To send it again, fix it\n" +
		"and move it back into the outbox.\n"
}

// isGone reports whether an error means the file is no longer there.
func isGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}
