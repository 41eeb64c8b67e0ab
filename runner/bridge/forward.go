package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// window is how many messages are published before their
// acknowledgements are awaited, and how many are taken in one batch.
const window = 256

// Subject is the subject a message from sender, an agent of workspace
// from, to agent, of workspace to, is published to.
func Subject(to, agent, from, sender string) string {
	return SubjectPrefix + "." + to + "." + agent + "." + from + "." + sender
}

// MsgID is the JetStream message id (Nats-Msg-Id) of the copy of message
// id for agent in the workspace remote: the stream drops a second publish
// of it. The workspace is in it so that a copy forwarded under a misspelt
// remote:, put back into the inbox once parley.yaml is mended, is
// published again to the workspace now named, not dropped as the same.
func MsgID(id, agent, remote string) string { return id + "/" + agent + "@" + remote }

// forwardLoop forwards what the router delivers to remote agents, woken
// by file events in their inboxes and every Rescan.
func (b *Bridge) forwardLoop(ctx context.Context, js jetstream.JetStream) error {
	w, err := fsnotify.NewWatcher()
	var events <-chan fsnotify.Event
	watched := map[string]bool{}
	// watch watches the inboxes of the remote agents as last loaded: one
	// made remote while the bridge runs is watched from the next pass
	// (and listed every Rescan meanwhile).
	watch := func() {
		if w == nil {
			return
		}
		for _, a := range b.workspace().Config.Agents {
			dir := filepath.Join(string(b.workspace().Mailbox(a.Name)), mailbox.Inbox)
			if a.Remote != "" && !watched[dir] && w.Add(dir) == nil {
				watched[dir] = true
			}
		}
	}
	if err == nil {
		defer w.Close()
		events = w.Events
	} else {
		w = nil
	}
	tick := time.NewTicker(b.opts.Rescan)
	defer tick.Stop()
	wait := 50 * time.Millisecond
	ready := false
	looked := b.looked
	for {
		watch()
		if !ready {
			if _, err := b.setup(ctx, js); err != nil {
				if ctx.Err() != nil {
					return nil // stopped: "context canceled" is no trouble to log
				}
				b.fail(err)
			} else {
				ready = true
			}
		}
		// While another workspace holds this one's name (see claim),
		// what waits here stays: its answers would go to the other. The
		// receiving side looks first.
		if ready && b.mayForward() {
			if _, err := b.forwardPending(ctx, js); err != nil {
				if ctx.Err() != nil {
					return nil // stopped: what was not acknowledged waits in the inbox
				}
				b.fail(err)
				wait = backoff(ctx, wait)
				if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) {
					ready = false // the server lost it (restarted without its store): make it again
				}
				// Tried again after the wait, or stopped: a context
				// ended makes backoff return at once, and a failing
				// publish looped here at full speed, for ever.
				if ctx.Err() != nil {
					return nil
				}
				continue
			}
			wait = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil
		case <-events:
			// Take every event already queued: one pass forwards them all.
			for drained := false; !drained; {
				select {
				case <-events:
				default:
					drained = true
				}
			}
		case <-tick.C:
		case <-looked:
			looked = nil // once: the first look at the name is done
		}
	}
}

// forwardPending publishes what waits in the inboxes of remote agents, in
// id order per agent, a window at a time, and moves each copy to done/
// once the stream acknowledged it. It returns how many it forwarded; an
// error stops at the first copy not acknowledged, and what follows it
// waits, so the stream gets one sender's messages in order.
func (b *Bridge) forwardPending(ctx context.Context, js jetstream.JetStream) (int, error) {
	all, err := b.workspace().Outgoing()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var inboxes []string
	var waiting int64
	for _, p := range all {
		inboxes = append(inboxes, filepath.Join(string(b.workspace().Mailbox(p.Agent.Name)), mailbox.Inbox))
		waiting += int64(len(p.IDs))
	}
	b.outgoing.Store(waiting)
	if len(all) == 0 {
		return 0, errors.Join(errs...)
	}
	// The router syncs its copies after writing them: one published
	// before that, then lost in a power cut, would be routed again, a
	// hand-written file under an id drawn anew, and the other workspace
	// would have it twice. One sync for every inbox listed.
	if err := b.sync.SyncSeen(inboxes...); err != nil {
		return 0, errors.Join(append(errs, fmt.Errorf("making the copies to forward durable: %w", err))...)
	}
	total := 0
	for _, p := range all {
		if b.synced != nil {
			b.synced(p.Agent.Name, p.IDs)
		}
		box := b.workspace().Mailbox(p.Agent.Name)
		for ids := p.IDs; len(ids) > 0; {
			n := min(len(ids), window)
			done, err := b.publish(ctx, js, p.Agent, box, ids[:n])
			total += done
			waiting -= int64(done)
			b.outgoing.Store(waiting)
			if err != nil {
				errs = append(errs, err)
				break
			}
			ids = ids[n:]
		}
	}
	return total, errors.Join(errs...)
}

// publish publishes one window of an agent's inbox and waits for the
// acknowledgements, in order.
func (b *Bridge) publish(ctx context.Context, js jetstream.JetStream, a workspace.Agent, box mailbox.Dir, ids []string) (int, error) {
	type inflight struct {
		id, from string
		data     []byte
		ack      jetstream.PubAckFuture
	}
	var sent []inflight
	var firstErr error
	for _, id := range ids {
		data, err := os.ReadFile(box.Path(mailbox.Inbox, mailbox.FileName(id)))
		if errors.Is(err, os.ErrNotExist) {
			continue // claimed or moved meanwhile (parley done by a person)
		}
		if err != nil {
			firstErr = err
			break
		}
		_, from, err := mailbox.ParseID(id)
		if err != nil {
			firstErr = fmt.Errorf("%s: %w", box.Path(mailbox.Inbox, mailbox.FileName(id)), err)
			break
		}
		m := nats.NewMsg(Subject(a.Remote, a.Name, b.cfg.Name, from))
		m.Data = data
		// No retry of its own by the client (after "no responders", a
		// stream not ready yet): it would publish this copy again after
		// later ones. A failure stops the window; the next pass publishes
		// from this copy on, in order.
		f, err := js.PublishMsgAsync(m, jetstream.WithMsgID(MsgID(id, a.Name, a.Remote)), jetstream.WithExpectStream(b.cfg.Stream), jetstream.WithRetryAttempts(0))
		if err != nil {
			if errors.Is(err, nats.ErrMaxPayload) && len(sent) == 0 {
				b.giveUp(box, a, id, from, fmt.Sprintf("the bridge cannot carry it: %v (%d bytes, and the bridge's headers on top, over the NATS server's max_payload of %d bytes)", err, len(data), js.Conn().MaxPayload()))
				continue
			}
			firstErr = err
			break
		}
		sent = append(sent, inflight{id: id, from: from, data: data, ack: f})
		b.pendingAcks.Add(1)
	}
	done := 0
	var entries []workspace.Entry
	var errAck error
	for _, s := range sent {
		if errAck == nil {
			select {
			case <-s.ack.Ok():
			case err := <-s.ack.Err():
				errAck = fmt.Errorf("publishing %s for %s: %w", s.id, a.Name, err)
			case <-ctx.Done():
				errAck = ctx.Err()
			}
		}
		b.pendingAcks.Add(-1)
		if errAck != nil {
			continue // this one and the ones after it are published again next time
		}
		if err := box.Forwarded(s.id); err != nil {
			errAck = err
			continue
		}
		done++
		b.forwarded.Add(1)
		e := workspace.Entry{Time: time.Now().UTC().Format(mailbox.TimeFormat), Outcome: workspace.Forwarded, ID: s.id, From: s.from, Agent: a.Name, Workspace: a.Remote}
		if m, err := mailbox.Parse(s.data); err == nil {
			e.Type, _ = m.Header().Get("type")
			e.Signal, _ = m.Header().Get("signal")
		}
		entries = append(entries, e)
	}
	b.journal(entries)
	if errAck != nil {
		return done, errAck
	}
	return done, firstErr
}

// giveUp files a copy the bridge can never carry in the remote agent's
// dead/, with the reason.
func (b *Bridge) giveUp(box mailbox.Dir, a workspace.Agent, id, from, reason string) {
	if err := box.Claim(id); err != nil {
		b.fail(err)
		return
	}
	if err := box.GiveUp(id, reason); err != nil {
		b.fail(err)
		return
	}
	b.bounced.Add(1)
	b.journal([]workspace.Entry{{Time: time.Now().UTC().Format(mailbox.TimeFormat), Outcome: workspace.GivenUp, ID: id, From: from, Agent: a.Name, Workspace: a.Remote,
		Path: b.workspace().Short(box.Path(mailbox.Dead, mailbox.FileName(id))), Reason: reason}})
	if b.opts.GivenUp != nil {
		b.opts.GivenUp(a.Name, id)
	}
}
