package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Dispatch: each agent with a command, session or builtin driver has a
// worker that takes the messages of its inbox one at a time, in order:
//
//  1. claim: inbox/<id>.md moves to cur/;
//  2. the driver handles it; what the agent says is written, as message
//     files, into tmp/<id>.out/ (a command may also write there itself:
//     it is its PARLEY_OUTBOX);
//  3. tmp/<id>.out/ is renamed tmp/<id>.out.ready/ and synced: the
//     commit point;
//  4. each message in it is renamed into the outbox, where the router
//     takes it;
//  5. cur/<id>.md moves to done/;
//  6. the ready directory, now empty, is removed: it goes last, as it is
//     what tells a restarted runner that the message was answered.
//
// A runner killed at any point redoes, on start, what is left: a ready
// directory is published and its message finished; a message still in
// cur/ without one is handled again. So every message is handled at least
// once, and what an agent says is sent exactly once. A message that fails
// is tried again, after a pause that doubles, up to the agent's retries;
// then it goes to dead/ with the reason.

const (
	outSuffix   = ".out"
	readySuffix = ".out.ready"
)

// worker runs one agent's driver.
type worker struct {
	r      *Runner
	agent  workspace.Agent
	box    mailbox.Dir
	driver driver
	wake   chan struct{}

	mu      sync.Mutex
	busy    bool
	current string // id of the message being handled
	// started is set once the worker has finished what a stopped runner
	// left; until then it is not idle, even with an empty inbox.
	started bool
}

// newDriver makes the driver of an agent; nil for a human agent.
func (r *Runner) newDriver(a workspace.Agent) (driver, error) {
	switch a.Driver {
	case workspace.DriverCommand:
		return &commandDriver{agent: a, root: r.ws.Root, maxOutput: r.ws.Config.MaxOutput}, nil
	case workspace.DriverSession:
		return &sessionDriver{agent: a, root: r.ws.Root, maxOutput: r.ws.Config.MaxOutput}, nil
	case workspace.DriverBuiltin:
		h, ok := r.opts.Handlers[a.Handler]
		if !ok {
			return nil, fmt.Errorf("%s: agent %s: unknown handler %q (handlers: %s)", workspace.ConfigFile, a.Name, a.Handler, strings.Join(r.opts.Handlers.Names(), ", "))
		}
		return &builtinDriver{handler: h, timeout: a.Timeout}, nil
	}
	return nil, nil
}

// notify wakes an agent's worker: its inbox has something new.
func (r *Runner) notify(agent string) {
	if w, ok := r.workers[agent]; ok {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// kick tells the router that an outbox has something new.
func (r *Runner) kickRouter() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run handles the agent's messages until ctx ends.
func (w *worker) run(ctx context.Context) error {
	defer w.driver.close()
	if err := w.recover(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	w.started = true
	w.mu.Unlock()
	w.r.kickRouter()
	for {
		if err := w.drain(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		}
	}
}

// drain handles every message waiting in the inbox, oldest first.
func (w *worker) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		if w.r.isStopped(w.agent.Name) {
			w.driver.close() // a session ends; messages wait in the inbox
			return nil
		}
		next, err := w.oldest()
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		// Busy from before the claim, so that the message is never out of
		// the inbox while the worker looks idle.
		w.setBusy(next)
		if err := w.box.Claim(next); err != nil {
			w.setBusy("")
			if errors.Is(err, mailbox.ErrNotFound) {
				continue // taken by someone else
			}
			return err
		}
		w.handle(ctx, next)
	}
	return nil
}

// oldest returns the id of the oldest message in the inbox, or "" when
// there is none. It reads names only (os.ReadDir sorts them, and ids sort
// in sending order): the worker looks once per message, and a look that
// stats every file, as List does, makes working through a backlog
// quadratic.
func (w *worker) oldest() (string, error) {
	des, err := os.ReadDir(filepath.Join(string(w.box), mailbox.Inbox))
	if err != nil {
		return "", err
	}
	for _, de := range des {
		if stem, ok := strings.CutSuffix(de.Name(), ".md"); ok && mailbox.IsID(stem) {
			return stem, nil
		}
	}
	return "", nil
}

// recover finishes what a stopped runner left: published outputs whose
// message was not finished, and messages claimed but not answered.
func (w *worker) recover(ctx context.Context) error {
	tmp := filepath.Join(string(w.box), mailbox.Tmp)
	des, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		switch {
		case !de.IsDir():
		case strings.HasSuffix(name, readySuffix):
			id := strings.TrimSuffix(name, readySuffix)
			if err := w.publish(filepath.Join(tmp, name), id); err != nil {
				return err
			}
			w.r.log.Info("finished a message after a restart", "agent", w.agent.Name, "id", id)
		case strings.HasSuffix(name, outSuffix):
			// A run that did not complete: it is done again.
			if err := os.RemoveAll(filepath.Join(tmp, name)); err != nil {
				return err
			}
		}
	}
	cur, err := w.box.List(mailbox.Cur)
	if err != nil {
		return err
	}
	for _, e := range cur {
		if e.ID == "" || ctx.Err() != nil {
			continue
		}
		w.r.log.Info("handling again a message a stopped runner had claimed", "agent", w.agent.Name, "id", e.ID)
		w.handle(ctx, e.ID)
	}
	return nil
}

// handle runs the driver on a claimed message, with retries, and
// publishes what the agent said, or gives the message up.
func (w *worker) handle(ctx context.Context, id string) {
	w.setBusy(id)
	defer func() {
		w.setBusy("")
		w.r.kickRouter() // a worker going idle may end an --until-idle run
	}()
	path := w.box.Path(mailbox.Cur, mailbox.FileName(id))
	data, err := mailbox.ReadFile(path, w.r.ws.Config.Router.MaxMessageSize)
	var m *mailbox.Message
	if err == nil {
		m, err = mailbox.Parse(data)
	}
	if err != nil {
		w.giveUp(id, &HandleError{Err: fmt.Errorf("cannot read the message: %w", err)}, 0)
		return
	}
	attempts := 1 + w.agent.Retries
	for attempt := 1; ; attempt++ {
		stage := w.box.Path(mailbox.Tmp, id+outSuffix)
		if err := os.RemoveAll(stage); err != nil {
			w.r.log.Error("clearing a stage", "err", err)
		}
		if err := os.Mkdir(stage, 0o755); err != nil {
			w.giveUp(id, &HandleError{Err: err}, attempt)
			return
		}
		d := &Delivery{Agent: w.agent.Name, ID: id, Path: path, Data: data, Message: m, Workspace: w.r.ws.Root, Outbox: stage, Attempt: attempt}
		release := w.r.acquire(ctx)
		if release == nil {
			return // shutting down: the message stays in cur/, for the next runner
		}
		w.r.log.Debug("handling", "agent", w.agent.Name, "id", id, "attempt", attempt)
		w.r.state.set(w.agent.Name, workspace.StateWorking, id)
		frames, err := w.driver.handle(ctx, d)
		release()
		if ctx.Err() != nil {
			return // shutting down: handled again by the next runner
		}
		if err == nil {
			err = w.commit(stage, id, m, frames)
		}
		if err == nil {
			w.r.state.set(w.agent.Name, workspace.StateIdle, "")
			return
		}
		var he *HandleError
		permanent := errors.As(err, &he) && he.Permanent
		if attempt >= attempts || permanent {
			w.giveUp(id, err, attempt)
			return
		}
		pause := time.Duration(1<<min(attempt-1, 6)) * time.Second
		w.r.log.Warn("handling failed; trying again", "agent", w.agent.Name, "id", id, "attempt", attempt, "retry_in", pause, "err", err)
		w.r.state.set(w.agent.Name, workspace.StateRetrying, id)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// commit turns what the agent said into messages in the stage, makes the
// stage the ready directory (durably), publishes it and finishes the
// message. It returns an error only before the commit point, when the
// handling may be tried again.
func (w *worker) commit(stage, id string, in *mailbox.Message, frames [][]byte) error {
	ids := &mailbox.IDs{Now: w.r.opts.Now}
	// Files the program wrote into its outbox (the stage) first, in name
	// order, then what it printed.
	des, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	var outputs [][]byte
	for _, de := range des {
		if !de.Type().IsRegular() || mailbox.IsScratch(de.Name()) {
			continue
		}
		data, err := mailbox.ReadFile(filepath.Join(stage, de.Name()), w.r.ws.Config.Router.MaxMessageSize)
		if err != nil {
			return err
		}
		outputs = append(outputs, data)
		if err := os.Remove(filepath.Join(stage, de.Name())); err != nil {
			return err
		}
	}
	outputs = append(outputs, frames...)
	hops := 1
	if h, ok := in.Get("hops"); ok {
		if n, err := strconv.Atoi(h); err == nil {
			hops = n + 1
		}
	}
	stopping := false
	for _, data := range outputs {
		msg := w.reply(in, id, data)
		if msg != nil && approvesShutdown(msg) {
			stopping = true
		}
		if msg != nil {
			outID := ids.New(w.agent.Name)
			if !msg.Has("id") {
				msg.Set("id", outID)
			} else if v, _ := msg.Get("id"); !mailbox.IsID(v) {
				msg = nil // a bad id: the router refuses it with its reason
			}
			if msg != nil {
				if !msg.Has("hops") {
					msg.Set("hops", strconv.Itoa(hops))
				}
				data = msg.Bytes()
				outID, _ = msg.Get("id")
			}
			if err := w.r.syncer.WriteFile(filepath.Join(stage, mailbox.FileName(outID)), data); err != nil {
				return err
			}
			continue
		}
		// Not a message and not text: kept as it is, for the router to
		// refuse with its reason.
		name := fmt.Sprintf("%s.output-%d", id, len(outputs))
		if err := w.r.syncer.WriteFile(filepath.Join(stage, name), data); err != nil {
			return err
		}
	}
	ready := w.box.Path(mailbox.Tmp, id+readySuffix)
	if err := w.r.syncer.Rename(stage, ready); err != nil {
		return err
	}
	if err := w.r.syncer.Sync(); err != nil {
		return err
	}
	if stopping {
		// The agent agreed to shut down: it takes no next message, even
		// one delivered before the router sees its answer.
		w.r.stopAgent(w.agent.Name)
	}
	// Committed: handling the message again now would send its answers a
	// second time. A publish that fails is logged, not retried; the ready
	// directory stays for the next runner to finish.
	if err := w.publish(ready, id); err != nil {
		w.r.log.Error("publishing", "agent", w.agent.Name, "id", id, "err", err)
	}
	return nil
}

// reply makes a message of what an agent said: an envelope as it is, or
// plain text as a reply to the sender of the message it handled. It
// returns nil for output that is not text.
func (w *worker) reply(in *mailbox.Message, id string, data []byte) *mailbox.Message {
	if m, err := mailbox.Parse(data); err == nil {
		return m
	} else if errors.Is(err, mailbox.ErrBinary) || errors.Is(err, mailbox.ErrEmpty) {
		return nil
	}
	m := mailbox.New(data)
	if from, ok := in.Get("from"); ok {
		m.Set("to", from)
	}
	m.Set("reply_to", id)
	thread, ok := in.Get("thread")
	if !ok {
		thread = id
	}
	m.Set("thread", thread)
	return m
}

// publish moves every message of a ready directory into the outbox,
// finishes the message they answer (cur/ -> done/), then removes the
// directory.
func (w *worker) publish(ready, id string) error {
	des, err := os.ReadDir(ready)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		names = append(names, de.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.Rename(filepath.Join(ready, n), w.box.Path(mailbox.Outbox, n)); err != nil {
			return err
		}
	}
	if len(names) > 0 {
		w.r.kickRouter()
	}
	// The ready directory is the only record that the message was
	// answered, so it goes last, once the message is in done/. Removed
	// before, a runner killed in between left the message in cur/ with
	// nothing to say so, and the next runner handled it again and sent
	// its answers twice (under new ids: the router cannot tell them from
	// new messages). The message may be done already: finished by a
	// runner killed before it removed the directory.
	if err := w.box.Finish(id); err != nil && !errors.Is(err, mailbox.ErrNotFound) {
		return err
	}
	return os.Remove(ready)
}

// giveUp moves a message to dead/ with why it failed.
func (w *worker) giveUp(id string, err error, attempts int) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: gave up after %d %s: %v\n", w.agent.Name, attempts, plural(attempts, "attempt", "attempts"), err)
	var he *HandleError
	if errors.As(err, &he) && he.Stderr != "" {
		fmt.Fprintf(&b, "\nstderr (last lines):\n%s\n", he.Stderr)
	}
	if err := w.box.GiveUp(id, b.String()); err != nil {
		w.r.log.Error("giving up a message", "agent", w.agent.Name, "id", id, "err", err)
	}
	_ = os.RemoveAll(w.box.Path(mailbox.Tmp, id+outSuffix))
	w.r.log.Error("gave up a message", "agent", w.agent.Name, "id", id, "err", err)
	w.r.state.set(w.agent.Name, workspace.StateFailed, id)
}

func (w *worker) setBusy(id string) {
	w.mu.Lock()
	w.busy, w.current = id != "", id
	w.mu.Unlock()
}

// idle reports whether the worker handles nothing and has nothing waiting.
func (w *worker) idle() bool {
	w.mu.Lock()
	busy, started := w.busy, w.started
	w.mu.Unlock()
	if busy || !started {
		return false
	}
	if w.r.isStopped(w.agent.Name) {
		return true
	}
	n, err := w.box.Count(mailbox.Inbox)
	return err == nil && n == 0
}

// acquire takes one of the concurrency slots, or returns nil when ctx
// ends first.
func (r *Runner) acquire(ctx context.Context) func() {
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }
	case <-ctx.Done():
		return nil
	}
}
