package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// errGap is the error when the consumer's deliveries do not follow on
// from the last one taken (the link was cut, a session started again):
// the bridge starts again from the first message not acknowledged, so
// nothing is taken out of order. It is routine, and nothing is lost: its
// words say so, not that a message went missing.
var errGap = errors.New("the stream's deliveries did not follow on from the last one taken (as after a reconnect): taking them again, in order, from the first message not acknowledged")

// receiveLoop takes what the stream holds for this workspace until ctx
// ends, starting a new session after any trouble.
func (b *Bridge) receiveLoop(ctx context.Context, js jetstream.JetStream) error {
	wait := 50 * time.Millisecond
	for ctx.Err() == nil {
		before := b.received.Load() + b.bounced.Load()
		err := b.receiveSession(ctx, js)
		if ctx.Err() != nil {
			return nil
		}
		if b.received.Load()+b.bounced.Load() > before {
			wait = 50 * time.Millisecond // it went on for a while: start again soon
		}
		b.fail(err)
		wait = backoff(ctx, wait)
	}
	return nil
}

// receiveSession resets the consumer to the first message not
// acknowledged and takes messages in order, in batches, until something
// goes wrong.
func (b *Bridge) receiveSession(ctx context.Context, js jetstream.JetStream) error {
	s, err := b.setup(ctx, js)
	if err != nil {
		return err
	}
	if err := b.claim(ctx, js); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = s.ResetConsumer(rctx, b.durable())
	cancel()
	if err != nil {
		return fmt.Errorf("consumer %s: %w", b.durable(), err)
	}
	c, err := s.Consumer(ctx, b.durable())
	if err != nil {
		return err
	}
	done := make(chan struct{}) // closed when the session ends: deliveries still coming are dropped
	msgs := make(chan jetstream.Msg, 2*window)
	errc := make(chan error, 1)
	cc, err := c.Consume(func(m jetstream.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	}, jetstream.PullMaxMessages(window), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			select {
			case errc <- err:
			default:
			}
			return
		}
		b.fail(err)
	}))
	if err != nil {
		close(done)
		return err
	}
	defer func() {
		// The library removes the subscription in the background: wait
		// for it, so that the next session's reset is not followed by a
		// delivery to this one (receiveBatch would see the gap, and
		// start again).
		close(done)
		cc.Stop()
		select {
		case <-cc.Closed():
		case <-time.After(5 * time.Second):
		}
	}()
	b.clearError()
	beat := time.NewTicker(beatEvery)
	defer beat.Stop()
	var lastSeq uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case <-beat.C:
			// Another workspace that claimed the name at the same
			// moment is found here: the one that finds the other's
			// claim stops.
			if err := b.claim(ctx, js); err != nil {
				return err
			}
		case m := <-msgs:
			// The claim is looked at before a batch is taken, not only
			// at the beat (select picks either when both are ready).
			if err := b.claimDue(ctx, js); err != nil {
				return err
			}
			batch := []jetstream.Msg{m}
			for len(batch) < window {
				select {
				case m := <-msgs:
					batch = append(batch, m)
					continue
				default:
				}
				break
			}
			if err := b.receiveBatch(batch, &lastSeq, false); err != nil {
				return err
			}
		}
	}
}

func (b *Bridge) clearError() {
	b.mu.Lock()
	b.lastErr, b.errAt, b.logged = "", time.Time{}, nil
	b.mu.Unlock()
}

// receiveBatch takes a batch in order: each message is delivered (or kept
// in dead/), the batch is made durable, written to the journal and then
// acknowledged, up to the last message taken. It stops at a gap in the
// consumer's deliveries and at a delivery that failed. lastSeq is the
// consumer's number of the last delivery taken since the consumer was
// reset, 0 for none.
func (b *Bridge) receiveBatch(batch []jetstream.Msg, lastSeq *uint64, syncAck bool) error {
	var last jetstream.Msg
	var entries []workspace.Entry
	var woke []string
	var ids []string
	var stop error
	for _, m := range batch {
		meta, err := m.Metadata()
		if err != nil {
			stop = err
			break
		}
		// The consumer numbers its deliveries from 1 after each reset
		// (every session starts with one): the first one taken must be
		// 1. A delivery that went elsewhere (lost on a cut link, or to
		// the session before, whose subscription the client library
		// removes only after Stop returns) would be acknowledged with
		// the next one taken, and lost.
		if meta.Sequence.Consumer != *lastSeq+1 {
			stop = errGap
			break
		}
		e, err := b.take(m, meta)
		if err != nil {
			stop = err
			break
		}
		*lastSeq = meta.Sequence.Consumer
		last = m
		entries = append(entries, e)
		if e.Outcome == workspace.Received && e.Note == "" {
			woke = append(woke, e.To...)
			ids = append(ids, e.ID)
		}
	}
	if last == nil {
		return stop
	}
	if err := b.sync.Sync(); err != nil {
		return fmt.Errorf("making deliveries durable: %w", err)
	}
	b.journal(entries)
	for _, e := range entries {
		switch e.Outcome {
		case workspace.Received:
			b.received.Add(1)
		default:
			b.bounced.Add(1)
		}
	}
	var err error
	if syncAck {
		err = last.DoubleAck(context.Background())
	} else {
		err = last.Ack()
	}
	if err != nil {
		// Delivered and durable: a redelivery is a no-op by id.
		b.fail(fmt.Errorf("acknowledging: %w", err))
	}
	if b.opts.Wake != nil && len(woke) > 0 {
		slices.Sort(woke)
		b.opts.Wake(slices.Compact(woke))
	}
	if b.opts.OnReceived != nil {
		for _, id := range ids {
			b.opts.OnReceived(id)
		}
	}
	return stop
}

// take delivers one message into the inbox of the agent its subject
// names, or keeps it in dead/ with the reason it is refused. An error
// means it could not do either yet: the message is taken again later.
// It is checked against the workspace as last loaded (Options.Current).
func (b *Bridge) take(m jetstream.Msg, meta *jetstream.MsgMetadata) (workspace.Entry, error) {
	ws := b.workspace()
	data := m.Data()
	e, refusal, err := Admit(ws, b.cfg.Name, m.Subject(), data)
	e.Time = time.Now().UTC().Format(mailbox.TimeFormat)
	if err != nil {
		return e, err
	}
	if refusal != nil {
		return b.bounce(ws, e, meta, data, refusal)
	}
	delivered, err := ws.Mailbox(e.To[0]).Deliver(e.ID, data, b.sync)
	if err != nil {
		return b.failed(ws, e, meta, data, err)
	}
	b.mu.Lock()
	delete(b.attempts, strconv.FormatUint(meta.Sequence.Stream, 10)) // delivered: its failures are forgotten
	b.mu.Unlock()
	if !delivered {
		e.Note = "already held: a redelivery"
	}
	return e, nil
}

// Refusal is why the receiving side refuses a message from another
// workspace (see Admit).
type Refusal struct {
	// Reason says why, as the bridge writes it beside the message.
	Reason string
	// Mend says what makes the message acceptable, to be followed by
	// "parley retry" and where the message is kept: "once it is one
	// (parley.yaml)"; empty when nothing here mends it (a subject or id
	// that is wrong, a sender that lives elsewhere).
	Mend string
}

// Admit checks a message another workspace published to subject, as the
// bridge of ws, reading the stream as name, takes it: the subject must be
// parley.<name>.<agent>.<workspace>.<sender>; the workspace one that
// remote: names; the agent one that lives in ws; and the message must
// pass ws's Check as sent by sender from that workspace, to that agent.
// It returns the journal entry of its receipt (Outcome Received, no
// time), and the refusal when it is refused; an error when the Check
// could not be made. parley retry checks a refused message again with
// it, as the bridge would take it now.
func Admit(ws *workspace.Workspace, name, subject string, data []byte) (workspace.Entry, *Refusal, error) {
	e := workspace.Entry{Outcome: workspace.Received}
	to, agent, from, sender, ok := parseSubject(subject)
	e.Workspace, e.From = from, sender
	if agent != "" {
		e.To = []string{agent}
	}
	refuse := func(mend, reason string, args ...any) (workspace.Entry, *Refusal, error) {
		return e, &Refusal{Reason: fmt.Sprintf(reason, args...), Mend: mend}, nil
	}
	msg, perr := mailbox.Parse(data)
	var id string
	if perr == nil {
		id, _ = msg.Header().Get("id")
		if _, idSender, err := mailbox.ParseID(id); err == nil && idSender == sender {
			e.ID = id
		}
		e.Type, _ = msg.Header().Get("type")
		e.Signal, _ = msg.Header().Get("signal")
	}
	if !ok || to != name {
		return refuse("", "subject %q is not %s.%s.AGENT.WORKSPACE.SENDER", subject, SubjectPrefix, name)
	}
	if !slices.Contains(ws.Config.Remotes(), from) {
		return refuse(fmt.Sprintf("once an agent of %s lives in it (remote: %s)", workspace.ConfigFile, from),
			"from workspace %q, which no agent of %s lives in (remote: names %s)", from, workspace.ConfigFile, orNone(ws.Config.Remotes()))
	}
	if a, known := ws.Agent(agent); !known {
		return refuse(fmt.Sprintf("once it is one (agents: in %s)", workspace.ConfigFile), "for %q, which is no agent of this workspace", agent)
	} else if a.Remote != "" {
		return refuse(fmt.Sprintf("once it lives here (no remote: in %s)", workspace.ConfigFile), "for %q, which lives in workspace %q by %s (remote: %s), not in this one", agent, a.Remote, workspace.ConfigFile, a.Remote)
	}
	if perr != nil {
		return refuse("", "%s", perr.Error())
	}
	if e.ID == "" {
		return refuse("", "id %q is no id of %s", id, sender)
	}
	v, err := ws.Check(workspace.Input{File: mailbox.FileName(id), Sender: sender, Workspace: from, Message: msg, Sent: func(string) bool { return false }})
	if err != nil {
		return e, nil, err
	}
	if !v.Accepted() {
		return refuse(fmt.Sprintf("once this workspace's protocol takes it (its skills, %s)", workspace.ConfigFile), "%s", v.Refusal.Error())
	}
	if !slices.Contains(v.Agents(), agent) {
		return refuse(fmt.Sprintf("once it does (%s)", workspace.ConfigFile), "by this workspace's %s the message does not go to %s (it goes to %s)", workspace.ConfigFile, agent, orNone(v.Agents()))
	}
	return e, nil, nil
}

// failed counts a delivery that failed; after max_deliver tries the
// message is kept in dead/ with the reason.
func (b *Bridge) failed(ws *workspace.Workspace, e workspace.Entry, meta *jetstream.MsgMetadata, data []byte, err error) (workspace.Entry, error) {
	key := strconv.FormatUint(meta.Sequence.Stream, 10)
	b.mu.Lock()
	b.attempts[key]++
	n := b.attempts[key]
	if n >= b.cfg.MaxDeliver {
		delete(b.attempts, key) // kept in dead/ below: not tried again
	}
	b.mu.Unlock()
	if n < b.cfg.MaxDeliver {
		return e, err
	}
	e.Attempts = n
	return b.bounce(ws, e, meta, data, &Refusal{Reason: fmt.Sprintf("gave up after %d tries: %v", n, err), Mend: "once what failed is mended"})
}

// bounce keeps a refused message: in its recipient's dead/ when it names
// an agent of this workspace and carries an id, else in
// .parley/bridge/refused/, named by its stream sequence. The reason kept
// beside it says, when something here mends it, what, and that parley
// retry then delivers it.
func (b *Bridge) bounce(ws *workspace.Workspace, e workspace.Entry, meta *jetstream.MsgMetadata, data []byte, r *Refusal) (workspace.Entry, error) {
	e.Outcome = workspace.Bounced
	agent := ""
	if len(e.To) == 1 {
		agent = e.To[0]
	}
	if a, ok := ws.Agent(agent); ok && a.Remote == "" && e.ID != "" {
		box := ws.Mailbox(agent)
		e.Reason = r.text(e.ID)
		if _, err := box.Bury(e.ID, data, workspace.BridgeRefused+e.Reason, b.sync); err != nil {
			return e, err
		}
		e.Path = ws.Short(box.Path(mailbox.Dead, mailbox.FileName(e.ID)))
		return e, nil
	}
	dir := ws.BridgeRefusedDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return e, err
	}
	name := fmt.Sprintf("%012d.md", meta.Sequence.Stream)
	e.Path = ws.Short(filepath.Join(dir, name))
	e.Reason = r.text(e.Path)
	if err := mailbox.WriteFileAtomic(filepath.Join(dir, name+mailbox.ReasonSuffix), []byte(workspace.BridgeRefused+e.Reason+"\n")); err != nil {
		return e, err
	}
	if err := mailbox.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
		return e, err
	}
	return e, nil
}

// text is the reason with what mends it, and the parley retry of what
// names the message kept (its id, or its path) that then delivers it.
func (r *Refusal) text(what string) string {
	if r.Mend == "" {
		return r.Reason
	}
	return fmt.Sprintf("%s; %s, parley retry %s delivers it", r.Reason, r.Mend, what)
}

// parseSubject splits parley.TO.AGENT.FROM.SENDER.
func parseSubject(s string) (to, agent, from, sender string, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 5 || parts[0] != SubjectPrefix {
		return "", "", "", "", false
	}
	for _, p := range parts[1:] {
		if mailbox.CheckName(p) != nil {
			return "", "", "", "", false
		}
	}
	return parts[1], parts[2], parts[3], parts[4], true
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
