package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// refusal says why a message is rejected: the line and header field
// concerned (when known) and a reason a person can act on.
type refusal struct {
	Line   int
	Field  string
	Reason string
}

// text formats the refusal as "file:line: field: reason".
func (f *refusal) text(file string) string {
	var b strings.Builder
	b.WriteString(file)
	b.WriteString(":")
	if f.Line > 0 {
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteString(":")
	}
	b.WriteString(" ")
	if f.Field != "" {
		b.WriteString(f.Field)
		b.WriteString(": ")
	}
	b.WriteString(f.Reason)
	return b.String()
}

func refusalOf(err error) *refusal {
	var pe *mailbox.ParseError
	if errors.As(err, &pe) {
		return &refusal{Line: pe.Line, Field: pe.Field, Reason: pe.Err.Error()}
	}
	return &refusal{Reason: err.Error()}
}

// accepted is a message that passed every check and is being delivered.
type accepted struct {
	candidate
	index      int // position in the batch
	msg        *mailbox.Message
	id         string
	recipients []string
	already    []string
	failed     bool
}

// routeBatch reads, checks and delivers a batch of ready files, makes the
// deliveries and rejections durable with one sync, then moves the routed
// files to sent/ and writes the journal. It returns when a file that is not
// complete yet should be looked at again.
func (r *Runner) routeBatch(batch []candidate, now time.Time, settle time.Duration) (wait time.Time, err error) {
	var (
		entries = make([]*Entry, len(batch)) // journal lines, in batch order
		routed  []*accepted
		ids     = make(map[string]bool)
	)
	reject := func(i int, c candidate, id string, m *mailbox.Message, f *refusal) {
		box := r.agents[c.agent]
		text := f.text(c.name)
		path, err := box.Reject(c.name, c.info.ModTime(), rejectionNote(text, c, now), r.syncer)
		if err != nil {
			r.log.Error("rejecting", "agent", c.agent, "file", c.name, "err", err)
			delete(r.pending, c.fileKey) // looked at again on the next listing
			return
		}
		delete(r.pending, c.fileKey)
		r.stats.Rejected++
		e := Entry{ID: id, From: c.agent, Outcome: Refused, Reason: text, File: c.name}
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
		box := r.agents[c.agent]
		data, err := mailbox.ReadFile(box.Path(mailbox.Outbox, c.name), r.ws.Config.Router.MaxMessageSize)
		if err != nil {
			if isGone(err) {
				delete(r.pending, c.fileKey)
				continue
			}
			reject(i, c, "", nil, &refusal{Reason: err.Error()})
			continue
		}
		msg, perr := mailbox.Parse(data)
		if idNamed(c.name) && !settled(r.pending[c.fileKey], c.info, now, settle) {
			// Complete only if it names itself; otherwise wait for it.
			if id, _ := msgID(msg); perr != nil || id+".md" != c.name {
				p := &pending{size: c.info.Size(), modified: c.info.ModTime(), since: now}
				if old := r.pending[c.fileKey]; old != nil && old.size == p.size && old.modified.Equal(p.modified) {
					p = old
				}
				r.pending[c.fileKey] = p
				if at := p.since.Add(settle); wait.IsZero() || at.Before(wait) {
					wait = at
				}
				continue
			}
		}
		if perr != nil {
			reject(i, c, "", nil, refusalOf(perr))
			continue
		}
		id, f := r.check(c, msg, data, ids)
		if f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		ids[id] = true
		recipients, f := r.recipients(c.agent, msg)
		if f != nil {
			reject(i, c, id, msg, f)
			continue
		}
		routed = append(routed, &accepted{candidate: c, index: i, msg: msg, id: id, recipients: recipients})
	}

	// Deliver, in batch order, so that each recipient gets each sender's
	// messages in the order they were sent.
	for _, a := range routed {
		data := a.msg.Bytes()
		for _, to := range a.recipients {
			ok, err := r.agents[to].Deliver(a.id, data, r.syncer)
			if err != nil {
				r.log.Error("delivering", "id", a.id, "to", to, "err", err)
				a.failed = true
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
		// Nothing of this batch is known to be durable: leave the files
		// in the outboxes for the next listing.
		for _, a := range routed {
			delete(r.pending, a.fileKey)
		}
		return wait, fmt.Errorf("syncing deliveries: %w", err)
	}
	stamp := journalTime(r.opts.Now())
	for _, a := range routed {
		delete(r.pending, a.fileKey)
		if a.failed {
			continue // retried on the next listing; deliveries made are kept
		}
		if err := r.agents[a.agent].MarkSent(a.name, a.id, r.syncer); err != nil {
			r.log.Error("moving to sent", "agent", a.agent, "file", a.name, "err", err)
			continue
		}
		r.stats.Routed++
		e := Entry{Time: stamp, ID: a.id, From: a.agent, To: a.recipients, Outcome: Delivered, File: a.name, Already: a.already}
		e.Type, _ = a.msg.Get("type")
		e.Signal, _ = a.msg.Get("signal")
		entries[a.index] = &e
		r.log.Debug("delivered", "id", a.id, "from", a.agent, "to", a.recipients)
	}
	lines := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e != nil {
			e.Time = stamp
			lines = append(lines, *e)
		}
	}
	if err := r.journal.append(lines); err != nil {
		return wait, fmt.Errorf("writing journal: %w", err)
	}
	return wait, nil
}

// msgID returns the id a message carries, if any.
func msgID(m *mailbox.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	return m.Get("id")
}

// check verifies the reserved fields that say who sent a message and fills
// in the ones left out (id, from, created). It returns the message's id.
func (r *Runner) check(c candidate, m *mailbox.Message, data []byte, batchIDs map[string]bool) (string, *refusal) {
	owner := r.agents[c.agent]
	if m.Has("from") {
		from, ok := m.Get("from")
		if !ok || from != c.agent {
			return "", &refusal{Line: m.Line("from"), Field: "from", Reason: fmt.Sprintf("%q, but the file is in the outbox of %q: an agent sends only from its own outbox", from, c.agent)}
		}
	} else {
		m.Set("from", c.agent)
	}
	id, ok := m.Get("id")
	switch {
	case m.Has("id") && !ok:
		return "", &refusal{Line: m.Line("id"), Field: "id", Reason: "must be a single value"}
	case ok:
		_, sender, err := mailbox.ParseID(id)
		if err != nil {
			return "", &refusal{Line: m.Line("id"), Field: "id", Reason: err.Error()}
		}
		if sender != c.agent {
			return "", &refusal{Line: m.Line("id"), Field: "id", Reason: fmt.Sprintf("%q names %q as its sender, but the file is in the outbox of %q", id, sender, c.agent)}
		}
	default:
		id = mailbox.DerivedID(c.agent, c.info.ModTime(), c.name, data)
		m.Set("id", id)
	}
	if batchIDs[id] || owner.IsSent(id) {
		return id, &refusal{Line: m.Line("id"), Field: "id", Reason: fmt.Sprintf("duplicate: %s already sent a message with id %s (in %s)", c.agent, id, "mailboxes/"+c.agent+"/sent/")}
	}
	for _, key := range []string{"type", "signal", "thread", "reply_to", "request_id", "created"} {
		if m.Has(key) {
			if _, ok := m.Get(key); !ok {
				return id, &refusal{Line: m.Line(key), Field: key, Reason: "must be a single value, not a list or a set of fields"}
			}
		}
	}
	if !m.Has("created") {
		sent, _, _ := mailbox.ParseID(id)
		m.Set("created", sent.Format(mailbox.TimeFormat))
	}
	return id, nil
}

// recipients resolves to and cc into agent names: "*" is every agent but
// the sender. An unknown name, or one that is not a valid name, refuses the
// message; so does a message with no recipient.
func (r *Runner) recipients(sender string, m *mailbox.Message) ([]string, *refusal) {
	seen := make(map[string]bool)
	var out []string
	for _, field := range []string{"to", "cc"} {
		names, err := m.Names(field)
		if err != nil {
			return nil, refusalOf(err)
		}
		for _, n := range names {
			if n == "*" {
				for _, a := range r.ws.Config.Agents {
					if a.Name != sender && !seen[a.Name] {
						seen[a.Name] = true
						out = append(out, a.Name)
					}
				}
				continue
			}
			if err := mailbox.CheckName(n); err != nil {
				return nil, &refusal{Line: m.Line(field), Field: field, Reason: err.Error()}
			}
			if _, ok := r.agents[n]; !ok {
				return nil, &refusal{Line: m.Line(field), Field: field, Reason: (&UnknownAgentError{Name: n, Agents: r.ws.AgentNames()}).Error()}
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		if m.Has("to") {
			return nil, &refusal{Line: m.Line("to"), Field: "to", Reason: "names no agent (\"*\" alone, with no other agent in the workspace?)"}
		}
		return nil, &refusal{Field: "to", Reason: "missing: say who the message is for (to: <agent>, a list, or \"*\" for everyone)"}
	}
	return out, nil
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
