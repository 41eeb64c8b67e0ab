package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Dispatch: each agent with a command, session or builtin driver has a
// worker that takes the messages of its inbox one at a time, in order:
//
//  1. claim: the message moves from inbox/ to cur/;
//  2. the driver handles it; what the agent says is written, as message
//     files, into the message's stage (mailbox.Stage; a command may also
//     write there itself: it is its PARLEY_OUTBOX);
//  3. the stage is committed, durably: the commit point;
//  4. the stage is published: each message in it moves into the outbox,
//     where the router takes it, and the message handled moves from cur/
//     to done/.
//
// A runner killed at any point redoes, on start, what is left: a
// committed stage is published and its message finished; an open one is
// discarded, and a message still in cur/ handled again. So every message
// is handled at least once, and what an agent says is sent exactly once.
// A message that fails is tried again, after a pause that doubles, up to
// the agent's retries; then it goes to dead/ with the reason. A write of
// the worker's that fails for want of room (see diskTrouble) is no
// failure of the message's: it is waited out (waitToWrite), and a
// message is said to be given up only once it is in dead/. A built-in
// handler's own write that fails for want of room (see noRoom) is waited
// out up to the agent's timeout, then fails its attempt.

// worker runs one agent's driver.
type worker struct {
	r      *Runner
	agent  workspace.Agent
	box    mailbox.Dir
	driver driver
	wake   chan struct{}

	// quit is closed to tell the worker to stop once the message it
	// handles is done (parley.yaml changed its driver, or removed it);
	// done is closed when it has stopped.
	quit     chan struct{}
	quitOnce sync.Once
	done     chan struct{}

	// threads is the thread of each message of done/ and sent/, kept
	// while its file is unchanged: a command agent's context names the
	// thread of each message it is sent, from every message it handled
	// and sent.
	threads *mailbox.Cache[string]

	mu      sync.Mutex
	busy    bool
	current string // id of the message being handled
	// turn is held while the worker handles a message, from the driver's
	// call to its answers' publishing: a built-in handler's Tick (see
	// Timer) is not called meanwhile, and the handling waits for a Tick
	// under way.
	turn sync.Mutex
	// started is set once the worker has finished what a stopped runner
	// left; until then it is not idle, even with an empty inbox.
	started bool
	// brief is what Options.Brief said of the agent for the workspace
	// briefed (see writeContext); used by the worker's goroutine only.
	brief   Briefing
	briefed *workspace.Workspace
	// handlerNote is the note its built-in handler last gave (see
	// stateBook.noteOver); used by the worker's goroutine only.
	handlerNote string
	// holdNote is the note of the hold its driver asked for last (see
	// hold); used by the worker's goroutine only.
	holdNote string
	holds    int // holds in a row
	// yielded is a message held (claimed, in cur/) that the worker left
	// to take a shutdown request first; handled again next, unless the
	// agent stopped meanwhile. Used by the worker's goroutine only.
	yielded string

	// blocked is set while a directory of its mailbox is a symbolic link
	// or a file: nothing is read from it (see repair.go).
	blocked atomic.Bool

	// betweenLooks, when set (by tests), is called by idle between its
	// look at the inbox and its look at busy: where the worker may claim
	// a message.
	betweenLooks func()
	// beforeTell, when set (by tests), is called once a message is in
	// dead/, before its sender is told (see GiveUps); false leaves it
	// untold, as a runner killed there does.
	beforeTell func() bool

	// writeFault, when set (by tests), is called before each write the
	// worker makes of a message's own (what: "claim", "stage",
	// "context", "commit", "publish", "finish" or "dead"); an error it
	// returns stands for that write's (a full disk).
	writeFault func(what string) error

	// listed is the inbox's ids as last listed, oldest first, less those
	// taken since (see oldest); used by the worker's goroutine only.
	// arrived is set when something new came into the inbox since.
	listed  []string
	arrived atomic.Bool

	// urgentMu guards urgent: the ids of shutdown requests delivered to
	// the agent since it listed its inbox, handed to it before older
	// messages of other senders (see oldest).
	urgentMu sync.Mutex
	urgent   []string
}

// Handled is one run of an agent's driver on a message, as reported to
// Options.OnHandled.
type Handled struct {
	Agent   string
	ID      string // the message's id
	Attempt int    // 1 for the first try
	// Start is when the driver was handed the message and End when it
	// returned, both read from Options.Now. For a command agent that is
	// the program's whole run; for a session agent, from writing the
	// message to the running program to reading the frame that ends its
	// answer (after starting the program, when it was not running); for a
	// builtin agent, the handler's call. It leaves out what dispatch does
	// around the driver: claiming the message, waiting for a concurrency
	// slot, making the answer durable and publishing it.
	Start, End time.Time
	// Err is the driver's error, nil when the agent answered (whatever
	// became of its answer afterwards).
	Err error
}

func newWorker(r *Runner, a workspace.Agent, box mailbox.Dir, d driver) *worker {
	return &worker{r: r, agent: a, box: box, driver: d, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		threads: mailbox.NewCache(threadOf)}
}

// stop tells the worker to stop once the message it handles is done.
func (w *worker) stop() { w.quitOnce.Do(func() { close(w.quit) }) }

// quitting reports whether the worker was told to stop.
func (w *worker) quitting() bool {
	select {
	case <-w.quit:
		return true
	default:
		return false
	}
}

// startWorker runs a worker in the run's group; the router is told when
// it ends.
func (r *Runner) startWorker(w *worker) {
	if r.finishing.Load() {
		w.stop() // the run is ending (Finish): it takes no message
	}
	r.group.Go(func() error {
		defer r.kickRouter()
		defer close(w.done)
		return w.run(r.groupCtx)
	})
}

// DriverProblem returns why a runner with these options cannot drive
// agent a — its entry in parley.yaml lacks a key its driver needs
// (a.ConfigError, wrapped), or it names a built-in handler or a driver
// the runner does not have (a *workspace.ConfigError for an unknown
// handler), or its openai: section names a prompt file the workspace
// at root lacks or a key_env not set (workspace.Model.Problem, wrapped);
// nil when it can, or a needs no driver. parley status asks it of a
// workspace no runner runs, so that it says what run would refuse.
func (opts Options) DriverProblem(a workspace.Agent, root string) error {
	if a.ConfigError != nil {
		return fmt.Errorf("%s cannot be driven: %w", a.Name, a.ConfigError)
	}
	if a.Model != nil && a.Driver == workspace.DriverOpenAI {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if err := a.Model.Problem(root, getenv); err != nil {
			return fmt.Errorf("%s cannot be driven: %w", a.Name, err)
		}
	}
	switch a.Driver {
	case workspace.DriverCommand, workspace.DriverSession:
		return nil
	case workspace.DriverBuiltin:
		if _, ok := opts.Handlers[a.Handler]; !ok {
			key := "handler"
			if a.Key != "" {
				key = a.Key + ".handler"
			}
			return &workspace.ConfigError{Path: workspace.ConfigFile, Line: a.HandlerLine, Key: key,
				Err: fmt.Errorf("unknown handler %q (handlers: %s)", a.Handler, strings.Join(opts.Handlers.Names(), ", "))}
		}
		return nil
	}
	if _, ok := opts.Drivers[a.Driver]; !ok && a.Driven() {
		return fmt.Errorf("%s: agent %s: driver %s is not available in this runner", workspace.ConfigFile, a.Name, a.Driver)
	}
	return nil
}

// newDriver makes the driver of an agent of ws; nil for a human agent.
func (r *Runner) newDriver(a workspace.Agent, ws *workspace.Workspace) (driver, error) {
	if err := r.opts.DriverProblem(a, ws.Root); err != nil {
		return nil, err
	}
	var conf *Confinement
	if a.Isolated() && r.opts.Confine != nil {
		conf = r.opts.Confine(a, ws)
	}
	switch a.Driver {
	case workspace.DriverCommand:
		// No cgroup per message: making and removing one for each run
		// made a command several times slower on a loaded machine. Its
		// process group and the sweep end what it started.
		return &commandDriver{agent: a, root: ws.Root, environ: r.environ(), maxOutput: ws.Config.MaxOutput, confine: conf, records: r.records, stderrLog: r.stderrLog(a, ws)}, nil
	case workspace.DriverSession:
		return &sessionDriver{agent: a, root: ws.Root, environ: r.environ(), maxOutput: ws.Config.MaxOutput, log: r.log, confine: conf, cgroups: findCgroups(), records: r.records, stderrLog: r.stderrLog(a, ws), lines: &sessionLines{agent: a.Name, state: r.state}}, nil
	case workspace.DriverBuiltin:
		return &builtinDriver{handler: r.opts.Handlers[a.Handler], timeout: a.Timeout}, nil
	}
	if f, ok := r.opts.Drivers[a.Driver]; ok {
		h, err := f(a, ws)
		if err != nil {
			return nil, fmt.Errorf("%s: agent %s: %w", workspace.ConfigFile, a.Name, err)
		}
		return &builtinDriver{handler: h, timeout: a.Timeout}, nil
	}
	return nil, nil
}

// stderrLog makes the log of what agent a's program writes to stderr.
func (r *Runner) stderrLog(a workspace.Agent, ws *workspace.Workspace) *stderrLog {
	return &stderrLog{path: ws.StderrLogPath(a.Name), agent: a.Name, max: stderrLogMax, now: r.opts.Now, log: r.log}
}

// notify wakes an agent's worker: its inbox has something new.
func (r *Runner) notify(agent string) {
	if w, ok := r.workers[agent]; ok {
		w.arrived.Store(true)
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// notifyShutdown is notify, for a shutdown request delivered to agent:
// `parley stop` asks an agent to stop, and one with a backlog handled
// every message before it first (twenty steps of work, in a tryout).
func (r *Runner) notifyShutdown(agent, id string) {
	if w, ok := r.workers[agent]; ok {
		w.urgentMu.Lock()
		w.urgent = append(w.urgent, id)
		w.urgentMu.Unlock()
	}
	r.notify(agent)
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
	defer func() {
		if err := w.box.DropSpare(); err != nil {
			w.r.log.Warn("removing the spare stage directory", "agent", w.agent.Name, "err", err)
		}
	}()
	var nd *mailbox.NotDirError
	if errors.As(w.box.CheckDirs(), &nd) {
		// Never read through a symbolic link: what a stopped runner left
		// waits for the next runner.
		w.blocked.Store(true)
	} else {
		w.cleanContext()
		if err := w.recover(ctx); err != nil {
			return err
		}
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
		case <-w.quit:
			return nil
		case <-w.wake:
		}
	}
}

// drain handles every message waiting in the inbox, oldest first.
func (w *worker) drain(ctx context.Context) error {
	var claiming stuck
	for ctx.Err() == nil && !w.quitting() {
		if w.r.isStopped(w.agent.Name) {
			w.driver.close() // a session ends; messages wait in the inbox
			return nil
		}
		var nd *mailbox.NotDirError
		err := w.box.CheckDirs(mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead, mailbox.Tmp)
		w.blocked.Store(errors.As(err, &nd))
		if err != nil {
			// Missing, or a symbolic link in place of a directory: the
			// router makes it again or reports it, and wakes the worker
			// once the mailbox can be used.
			w.r.askRepair()
			return nil
		}
		next, err := w.oldest()
		if errors.Is(err, fs.ErrNotExist) {
			// The inbox was removed: the router makes it again, and
			// wakes the worker when something arrives.
			w.r.askRepair()
			return nil
		}
		if err != nil {
			return err
		}
		if id := w.yielded; id != "" {
			// A held message set aside for a shutdown request: the
			// request alone is taken meanwhile (a message of its
			// sender's before it would be held too, and the request
			// wait behind it for the outage); once it was handled
			// (and refused), or is gone, the held message goes on.
			if u := w.urgentWaiting(); u != "" {
				next = u
			} else {
				w.yielded = ""
				w.handle(ctx, id)
				continue
			}
		}
		if next == "" {
			return nil
		}
		// Busy from before the claim, so that the message is never out of
		// the inbox while the worker looks idle.
		w.setBusy(next)
		err = w.write("claim", func() error { return w.box.ClaimUntilSync(next, w.r.syncer) })
		if diskTrouble(err) {
			// No room to move it to cur/: it waits in the inbox.
			if !w.waitToWrite(ctx, next, &claiming, mailbox.Inbox, "move it to cur/", err) {
				w.setBusy("")
				return nil
			}
			continue
		}
		w.wrote(&claiming)
		var h *mailbox.HandledError
		if err == nil || errors.Is(err, mailbox.ErrNotFound) || errors.As(err, &h) {
			w.taken(next) // claimed, taken by someone else, or filed
		}
		if err != nil {
			w.setBusy("")
			if errors.Is(err, mailbox.ErrNotFound) {
				continue // taken by someone else
			}
			if h != nil {
				// Restored into the inbox (git stash, git checkout):
				// handled is handled; it is never run twice.
				w.r.log.Warn("not handling again a message handled already; its copy in the inbox is filed", "agent", w.agent.Name, "id", next, "in", h.State)
				w.r.kickRouter() // it may be idle now
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				w.r.askRepair() // cur/ was removed; the router wakes the worker
				return nil
			}
			return err
		}
		w.handle(ctx, next)
	}
	return nil
}

// oldest returns the id of the oldest message in the inbox, or "" when
// there is none. It reads names only (see Dir.IDs), and only when what
// it listed last is used up or something new arrived since (see notify):
// listing a backlog again for each of its messages made each message
// cost in proportion to the backlog. An id listed that is gone since
// (taken, or removed by a person) fails its claim and is passed over.
func (w *worker) oldest() (string, error) {
	if arrived := w.arrived.Swap(false); arrived || len(w.listed) == 0 {
		ids, err := w.box.IDs(mailbox.Inbox)
		if err != nil {
			w.listed = nil
			return "", err
		}
		w.listed = ids
	}
	if len(w.listed) == 0 {
		return "", nil
	}
	w.hurry()
	return w.listed[0], nil
}

// hurry puts first, of what was listed, a shutdown request delivered
// (urgent), after the messages of its own sender's listed before it: it
// goes ahead of other senders' messages, and a sender's own are handed
// over in the order they were sent.
func (w *worker) hurry() {
	w.urgentMu.Lock()
	defer w.urgentMu.Unlock()
	for len(w.urgent) > 0 {
		id := w.urgent[0]
		k := slices.Index(w.listed, id)
		_, sender, err := mailbox.ParseID(id)
		if k < 0 || err != nil {
			// Not listed: listed before it was delivered (arrived is
			// set, the next listing has it), or gone since (taken, or
			// removed by a person): looked for in the inbox.
			if _, serr := os.Lstat(w.box.Path(mailbox.Inbox, mailbox.FileName(id))); err == nil && serr == nil {
				return
			}
			w.urgent = w.urgent[1:]
			continue
		}
		var first, rest []string
		for _, o := range w.listed[:k] {
			if _, s, err := mailbox.ParseID(o); err == nil && s == sender {
				first = append(first, o)
			} else {
				rest = append(rest, o)
			}
		}
		first = append(first, id)
		copy(w.listed, append(first, rest...))
		return
	}
}

// hasUrgent reports whether a shutdown request waits to be handed to
// the worker's agent (see hurry).
func (w *worker) hasUrgent() bool {
	w.urgentMu.Lock()
	defer w.urgentMu.Unlock()
	return len(w.urgent) > 0
}

// urgentWaiting returns the first shutdown request delivered that still
// waits in the inbox (forgetting those gone), or "".
func (w *worker) urgentWaiting() string {
	w.urgentMu.Lock()
	defer w.urgentMu.Unlock()
	for len(w.urgent) > 0 {
		id := w.urgent[0]
		if _, err := os.Lstat(w.box.Path(mailbox.Inbox, mailbox.FileName(id))); err == nil {
			return id
		}
		w.urgent = w.urgent[1:]
	}
	return ""
}

// taken drops id, which oldest returned (or urgentWaiting), from what
// was listed: it is out of the inbox.
func (w *worker) taken(id string) {
	if k := slices.Index(w.listed, id); k >= 0 {
		w.listed = slices.Delete(w.listed, k, k+1)
	}
	w.urgentMu.Lock()
	w.urgent = slices.DeleteFunc(w.urgent, func(u string) bool { return u == id })
	w.urgentMu.Unlock()
}

// recover finishes what a stopped runner left: committed answers whose
// message was not finished, and messages claimed but not answered.
func (w *worker) recover(ctx context.Context) error {
	stages, err := w.box.Stages(w.r.syncer)
	if errors.Is(err, fs.ErrNotExist) {
		w.r.askRepair() // tmp/ was removed: nothing was left in it
		stages, err = nil, nil
	}
	if err != nil {
		return err
	}
	for _, st := range stages {
		if !st.Committed() {
			// A run that did not complete: it is done again.
			if err := st.Discard(); err != nil {
				return err
			}
			continue
		}
		names, err := st.Names()
		if err == nil {
			w.r.chains.publish(w.agent.Name, names, w.answered(st.ID()))
		}
		refusals, _ := st.Refusals()
		if _, err := st.Publish(); err != nil {
			return err
		}
		w.recordRefused(st.ID(), refusals)
		if err == nil && len(names) == 0 {
			w.saidNothing(w.answered(st.ID()), refusals)
		}
		w.r.log.Info("finished a message after a restart", "agent", w.agent.Name, "id", st.ID())
		w.recordHandled(st.ID(), w.read(mailbox.Done, st.ID()), 0, "finished by a runner started after a crash")
	}
	cur, err := w.box.IDs(mailbox.Cur)
	if errors.Is(err, fs.ErrNotExist) {
		w.r.askRepair()
		cur, err = nil, nil
	}
	if err != nil {
		return err
	}
	for _, id := range cur {
		if ctx.Err() != nil || w.r.isStopped(w.agent.Name) {
			break // a stopped agent's message waits in cur/ for the next run
		}
		if h := (*mailbox.HandledError)(nil); errors.As(w.box.FileHandled(id, mailbox.Cur), &h) {
			// Put back into cur/ (git stash, git checkout) after it was
			// handled: handled is handled.
			w.r.log.Warn("not handling again a message handled already; its copy in cur/ is filed", "agent", w.agent.Name, "id", id, "in", h.State)
			continue
		}
		w.r.log.Info("handling again a message a stopped runner had claimed", "agent", w.agent.Name, "id", id)
		w.handle(ctx, id)
	}
	return nil
}

// answered returns what a message the agent handled is to it, read from
// its copy in cur/ (or done/, when a stopped runner had finished it); an
// answer to nobody when it cannot be read.
func (w *worker) answered(id string) answer {
	for _, state := range []string{mailbox.Cur, mailbox.Done} {
		data, err := mailbox.ReadFile(w.box.Path(state, mailbox.FileName(id)), w.r.ws().Config.Router.MaxMessageSize)
		if err != nil {
			continue
		}
		if m, err := mailbox.Parse(data); err == nil {
			return answerOf(m)
		}
	}
	return answer{}
}

// handle runs the driver on a claimed message, with retries, and
// publishes what the agent said, or gives the message up.
func (w *worker) handle(ctx context.Context, id string) {
	w.setBusy(id)
	defer func() {
		w.setBusy("")
		w.r.kickRouter() // a worker going idle may end an --until-idle run, or let a Tick come
	}()
	w.r.landing.wait(ctx, id) // its delivery journaled first
	w.turn.Lock()
	defer w.turn.Unlock()
	path := w.box.Path(mailbox.Cur, mailbox.FileName(id))
	data, err := mailbox.ReadFile(path, w.r.ws().Config.Router.MaxMessageSize)
	var m *mailbox.Message
	if err == nil {
		m, err = mailbox.Parse(data)
	}
	if err != nil {
		w.giveUp(ctx, id, &HandleError{Err: fmt.Errorf("cannot read the message: %w", err)}, 0)
		return
	}
	ws := w.r.ws()
	if isNotice(m) {
		if !w.takesNotice(m) {
			// parley's own notice: filed, for the record; the program is
			// not woken to answer it (see Loops). A refusal notice is
			// handed to it (see Refusals), and a notice of a message
			// given up to a built-in handler that handles it (see
			// GiveUps).
			if err := w.untilWritten(ctx, id, "finish", "file it in done/", func() error { return w.box.Finish(id) }); err != nil {
				w.r.log.Error("filing a notice", "agent", w.agent.Name, "id", id, "err", err)
			}
			return
		}
		// A notice it takes is about a message of its own: it wakes the
		// agent whatever its accepts: say, since nobody else will mend
		// or answer it.
	} else if a, ok := ws.Agent(w.agent.Name); ok && !a.Accepts.Wakes(m) {
		// Not one it accepts: filed without waking the driver, and
		// handed to it with the next message it accepts (keptContext).
		if err := w.untilWritten(ctx, id, "finish", "file it in done/", func() error { return w.box.Finish(id) }); err != nil {
			w.r.log.Error("filing a message kept as context", "agent", w.agent.Name, "id", id, "err", err)
			return
		}
		w.recordHandled(id, m, 0, KeptNote)
		return
	}
	kept := w.keptContext(ws, id)
	w.r.chains.take(w.agent.Name, answerOf(m))
	attempts := 1 + w.agent.Retries
	stage := w.box.Stage(id, w.r.syncer)
	// A write of the worker's own that fails for want of room (see
	// diskTrouble) is no attempt of the agent's: it is waited out, and
	// the attempt made again.
	var disk stuck
	// room is a built-in handler's own write that fails for want of
	// room: waited out too, for a while (see waitedForRoom).
	var room stuck
	var failed error // why the attempt before this one failed, for the journal
	before, why := w.r.state.failedBefore(w.agent.Name, id)
	if why != "" {
		failed = errors.New(why) // said by the runner before this one
	}
	for attempt := 1 + before; ; attempt++ {
		if err := w.write("stage", stage.Open); err != nil {
			if diskTrouble(err) {
				if !w.waitToWrite(ctx, id, &disk, mailbox.Cur, "open the stage of its answers", err) {
					return
				}
				attempt--
				continue
			}
			w.giveUp(ctx, id, &HandleError{Err: err}, attempt)
			return
		}
		ws := w.r.ws()
		d := &Delivery{Agent: w.agent.Name, ID: id, Path: path, Data: data, Message: m, Workspace: ws.Root, Loaded: ws, Outbox: stage.Path(), Attempt: attempt, Context: kept}
		if w.agent.Driver == workspace.DriverCommand || w.agent.Driver == workspace.DriverSession {
			var cf string
			err := w.write("context", func() (err error) {
				cf, err = w.writeContext(ws, d)
				return err
			})
			if diskTrouble(err) {
				if !w.waitToWrite(ctx, id, &disk, mailbox.Cur, "write its context file", err) {
					return
				}
				attempt--
				continue
			}
			if err != nil {
				w.giveUp(ctx, id, &HandleError{Err: fmt.Errorf("writing its context file: %w", err)}, attempt)
				return
			}
			d.ContextFile = cf
		}
		release := w.r.acquire(ctx)
		if release == nil {
			return // shutting down: the message stays in cur/, for the next runner
		}
		w.r.log.Debug("handling", "agent", w.agent.Name, "id", id, "attempt", attempt)
		w.r.state.setAttempt(w.agent.Name, workspace.StateWorking, id, attempt)
		var start time.Time
		if w.r.opts.OnHandled != nil {
			start = w.r.opts.Now()
		}
		frames, err := w.driver.handle(ctx, d)
		if d.ContextFile != "" {
			os.Remove(d.ContextFile) // written again for the next message
		}
		if w.r.opts.OnHandled != nil {
			w.r.opts.OnHandled(Handled{Agent: w.agent.Name, ID: id, Attempt: attempt, Start: start, End: w.r.opts.Now(), Err: err})
		}
		release()
		if b, ok := w.driver.(*builtinDriver); ok {
			if note := b.note(); note != "" {
				// In place of nothing, or of the handler's own last note:
				// never of another (an agent that did not answer in time).
				w.r.state.noteOver(w.agent.Name, note, w.handlerNote)
				w.handlerNote = note
			}
		}
		if ctx.Err() != nil {
			// Shutting down: cut off, handled again by the next runner;
			// the run's summary says so.
			w.r.statsMu.Lock()
			w.r.stats.Interrupted = append(w.r.stats.Interrupted, InterruptedMessage{Agent: w.agent.Name, ID: id, Path: mailboxPath(w.agent.Name, mailbox.Cur, mailbox.FileName(id))})
			w.r.statsMu.Unlock()
			return
		}
		var held Held
		if err != nil && errors.As(err, &held) {
			// Its model's endpoint cannot be used for now: no attempt
			// of the message's, waited out, the message claimed.
			if !w.hold(ctx, id, held.HoldUntil(), err) {
				return
			}
			attempt--
			continue
		}
		w.unhold()
		var he *HandleError
		var re *recordError
		if err != nil && errors.As(err, &re) && diskTrouble(err) {
			// parley's own record of the program, written before it
			// starts, failed for want of room: waited out, as every
			// write of the worker's own.
			if !w.waitToWrite(ctx, id, &disk, mailbox.Cur, "write down its program before it starts", err) {
				return
			}
			attempt--
			continue
		}
		if err != nil && noRoom(err) && !(errors.As(err, &he) && he.Permanent) {
			// What a built-in handler wrote failed for want of room
			// (the orchestrator writing a plan): no fault of the
			// message's, waited out, but only for as long as the
			// agent's timeout: a handler that writes where room never
			// comes must not hold its agent's queue for ever. Then it is
			// a failed attempt, as any other. (A read-only filesystem is
			// a handler's own failure: one may write where it never
			// may.)
			waited, over := w.waitedForRoom(&room)
			if !over {
				if !w.waitToWrite(ctx, id, &room, mailbox.Cur, "handle it", err) {
					return
				}
				attempt--
				continue
			}
			err = fmt.Errorf("%w (still no room after %s)", err, waited.Round(time.Second))
		}
		w.wrote(&room)
		if err == nil {
			err = w.write("commit", func() error { return nil })
			if err == nil {
				err = w.commit(ctx, stage, id, m, frames, attempt, failed, handledNote(w.driver))
			}
			if diskTrouble(err) && !stage.Ready() {
				// Its answers could not be staged: they are asked for
				// again once there is room.
				if derr := stage.Discard(); derr != nil {
					w.r.log.Warn("discarding a stage", "agent", w.agent.Name, "id", id, "err", derr)
				}
				if !w.waitToWrite(ctx, id, &disk, mailbox.Cur, "stage its answers", err) {
					return
				}
				attempt--
				continue
			}
		}
		if err == nil {
			w.wrote(&disk)
			w.r.state.set(w.agent.Name, workspace.StateIdle, "")
			return
		}
		var stop interface{ StopAgent() bool }
		if errors.As(err, &stop) && stop.StopAgent() {
			// The agent cannot go on in this run (its budget is used
			// up): it is stopped, and the message stays in cur/, for
			// the next runner to hand it again.
			cur := mailboxPath(w.agent.Name, mailbox.Cur, mailbox.FileName(id))
			// The driver's error names the agent already ("gm: budget
			// used up: ..."): said once.
			reason := strings.TrimPrefix(err.Error(), w.agent.Name+": ")
			why := fmt.Sprintf("%s%s; the message it was handling waits in %s, the next ones in its inbox: the next parley run hands them to it again", stoppedNote(w.agent.Name), reason, cur)
			w.r.stopForRun(StoppedAgent{Agent: w.agent.Name, Path: cur, Reason: reason}, why)
			w.r.state.note(w.agent.Name, why)
			w.r.log.Warn("agent stopped", "agent", w.agent.Name, "id", id, "err", err)
			return
		}
		permanent := errors.As(err, &he) && he.Permanent
		if attempt >= attempts || permanent {
			w.giveUp(ctx, id, err, attempt)
			return
		}
		failed = err
		pause := time.Duration(1<<min(attempt-1, 6)) * time.Second
		w.r.log.Warn(LogRetrying, "agent", w.agent.Name, "id", id, "attempt", attempt, "retry_in", pause, "err", err)
		w.r.state.retrying(w.agent.Name, id, attempt, err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// handledNote is what a driver has to say of the message it handled
// last, for the journal's line of it (a session's program denied
// permissions), if it says anything.
func handledNote(d driver) string {
	if n, ok := d.(interface{ handledNote() string }); ok {
		return n.handledNote()
	}
	return ""
}

// commit turns what the agent said into messages in the stage, commits
// the stage, publishes it and finishes the message. It returns an error
// only before the commit point, when the handling may be tried again.
//
// Nothing the agent said is dropped in silence. What cannot be sent — a
// file under a scratch name or over max_message_size in its outbox, not a
// regular file, a second answer with an id an earlier one has — goes to
// the agent's rejected/ with the reason, and the journal says so; the
// other answers are sent, and the message is not handled again.
//
// failed, when not nil, is why the attempt before this one failed: the
// journal's line of the message handled says it (parley log showed
// "attempt 2" and never why the first failed). driverNote is what the
// driver has to say of the handling (see handledNote).
func (w *worker) commit(ctx context.Context, stage *mailbox.Stage, id string, in *mailbox.Message, frames [][]byte, attempt int, failed error, driverNote string) (err error) {
	defer func() {
		// The stage, or tmp/, went while its answers were staged (a
		// program's `git clean -fdX` left running): the reason says so,
		// not only "no such file or directory".
		if err != nil && errors.Is(err, fs.ErrNotExist) && !stage.Ready() {
			err = fmt.Errorf("%w (%s was removed while the agent was handled: git clean -X?)", err, mailboxPath(w.agent.Name, mailbox.Tmp, ""))
		}
	}()
	ids := &mailbox.IDs{Now: w.r.opts.Now}
	var notes []string // for the journal: what the runner has to say of the handling
	// Files the program wrote into its outbox (the stage) first, in name
	// order, then what it printed.
	taken, err := stage.Take(w.r.ws().Config.Router.MaxMessageSize)
	if errors.Is(err, mailbox.ErrStageRemoved) {
		// Its PARLEY_OUTBOX was removed while it ran (a program that
		// runs `git clean -fdX`): what it printed is sent all the same,
		// but what it wrote there before is lost, and it is said.
		why := fmt.Sprintf("its PARLEY_OUTBOX (%s) was removed while its program ran (git clean -X?): what it printed is sent, files it wrote there before were lost", mailboxPath(w.agent.Name, mailbox.Tmp, filepath.Base(stage.Path())))
		w.r.log.Warn("an agent's outbox was removed while it ran", "agent", w.agent.Name, "id", id, "why", why)
		notes = append(notes, why)
		taken, err = nil, nil
	}
	if err != nil {
		return err
	}
	type output struct {
		file string // the file's name in the program's outbox; "" when printed
		data []byte
	}
	var outputs []output
	for _, o := range taken {
		if o.Err != nil {
			note := w.refusalNote(id, o.Name+" (in its PARLEY_OUTBOX)", o.Name+": "+o.Err.Error())
			if nr := (*mailbox.NotRegularError)(nil); errors.As(o.Err, &nr) && nr.Mode&fs.ModeSymlink != 0 {
				// Not kept as the program left it: mailbox.Stage.Refuse
				// says what is kept instead, and how to send it.
				note = w.refusalNoteOf(id, o.Name+" (in its PARLEY_OUTBOX)", o.Name+": "+o.Err.Error(), "The agent's other answers were sent.\n")
			}
			if _, err := stage.Refuse(o.Name, note); err != nil {
				return err
			}
			continue
		}
		outputs = append(outputs, output{file: o.Name, data: o.Data})
	}
	for _, f := range frames {
		outputs = append(outputs, output{data: f})
	}
	var names []string
	stopping := false
	given := make(map[string]string) // id -> the output that has it
	if failed != nil {
		// First: it happened first.
		notes = append([]string{fmt.Sprintf("attempt %d failed: %s", attempt-1, failed)}, notes...)
	}
	printed := 0
	for i, o := range outputs {
		data := o.data
		what := o.file + " (in its PARLEY_OUTBOX)"
		if o.file == "" {
			printed++
			what = fmt.Sprintf("message %d it printed", printed)
		}
		msg, kept, late := reply(in, data)
		if late.Line > 0 {
			to, _ := msg.Header().Names("to")
			why := fmt.Sprintf("%s was sent as plain text (an untyped reply to %s), although %s: a header counts only on line one", what, strings.Join(to, ", "), late)
			w.r.log.Warn("sent as plain text", "agent", w.agent.Name, "id", id, "why", why)
			notes = append(notes, why)
		}
		if msg != nil && approvesShutdown(msg) {
			stopping = true
		}
		if msg != nil {
			outID := ids.New(w.agent.Name)
			if !msg.Header().Has("id") {
				msg.Set("id", outID)
			} else if v, _ := msg.Header().Get("id"); !mailbox.IsID(v) {
				msg = nil // a bad id: the router refuses it with its reason
			}
			if msg != nil {
				data = msg.Bytes()
				outID, _ = msg.Header().Get("id")
				if dup := w.duplicate(outID, given); dup != "" {
					name := o.file
					if name == "" {
						name = mailbox.FileName(outID)
					}
					// Kept out of the fence it was printed in, if any:
					// mended and moved back, it is routed.
					if _, err := stage.AddRefused(name, w.r.opts.Now(), kept, w.refusalNote(id, what, fmt.Sprintf("duplicate: id %s is already %s; each message needs an id of its own", outID, dup))); err != nil {
						return err
					}
					continue
				}
				given[outID] = "on " + what
			}
			names = append(names, mailbox.FileName(outID))
			if err := stage.Add(mailbox.FileName(outID), data); err != nil {
				return err
			}
			continue
		}
		// Not text, or a message whose header does not parse: kept as
		// it is (out of its fence), for the router to refuse with its
		// reason; a file the program wrote keeps its name.
		name := o.file
		if name == "" {
			name = outputName(id, i+1, kept)
		}
		names = append(names, name)
		if err := stage.Add(name, kept); err != nil {
			return err
		}
	}
	if err := stage.Commit(); err != nil {
		if !stage.Ready() {
			return err
		}
		// Moved to its ready directory, but the sync after the move
		// failed (syncfs finding no room for what it flushes): past the
		// point of asking for the answers again. Run again, the driver's
		// new stage could not replace this one, the message would be
		// given up, and the next runner would still publish these
		// answers. Only the sync is made again, until it goes through.
		if err := w.untilWritten(ctx, id, "sync", "make its answers durable", stage.Commit); err != nil {
			// The run ended, or the agent was stopped for it: the
			// message waits in cur/, and the next runner publishes
			// the ready stage (Stages).
			w.r.log.Error("committing", "agent", w.agent.Name, "id", id, "err", err)
			return nil
		}
	}
	refusals, _ := stage.Refusals()
	// What it said answers this message, whenever the router takes it.
	w.r.chains.publish(w.agent.Name, names, answerOf(in))
	if stopping {
		// The agent agreed to shut down: it takes no next message, even
		// one delivered before the router sees its answer.
		w.r.shutDown(w.agent.Name)
	}
	// Committed: handling the message again now would send its answers a
	// second time. A publish that fails (a full disk) is tried again,
	// after a pause that doubles (each of its steps can be redone); a
	// run that ends meanwhile leaves the committed stage for the next
	// runner to finish.
	var n int
	err = w.untilWritten(ctx, id, "publish", "send its answers and file it in done/", func() (err error) {
		n, err = stage.Publish()
		return err
	})
	if err != nil {
		w.r.log.Error("publishing", "agent", w.agent.Name, "id", id, "err", err)
	} else {
		w.recordRefused(id, refusals)
		if len(names) == 0 && len(refusals) == 0 {
			if n := w.answeredNothing(id, in); n != "" {
				notes = append(notes, n)
			}
		}
		if driverNote != "" {
			notes = append(notes, driverNote)
		}
		w.keepHandled(id, in)
		w.recordHandled(id, in, attempt, strings.Join(notes, "; "))
		if len(names) == 0 {
			w.saidNothing(answerOf(in), refusals)
		}
	}
	if n > 0 {
		w.r.kickRouter()
	}
	return nil
}

// keepHandled files the message handled, in, into done/ when its file
// was taken from cur/ while its agent handled it (a program's `git stash
// -u`, a reset): put back (`git stash pop`), the file would be handled
// again and answered twice; with its copy in done/, the one put back is
// known as handled (mailbox.Dir.FileHandled) and filed, not handed on.
func (w *worker) keepHandled(id string, in *mailbox.Message) {
	name := mailbox.FileName(id)
	for _, state := range []string{mailbox.Done, mailbox.Cur} {
		if _, err := os.Lstat(w.box.Path(state, name)); !errors.Is(err, fs.ErrNotExist) {
			return // filed, as ever, or there to be filed
		}
	}
	if err := mailbox.WriteFileAtomic(w.box.Path(mailbox.Done, name), in.Bytes()); err != nil {
		w.r.log.Error("filing in done/ a message taken from cur/ while it was handled", "agent", w.agent.Name, "id", id, "err", err)
		return
	}
	w.r.log.Warn("a message was taken from cur/ while its agent handled it (git stash -u, a reset?): the copy handled is filed in done/, so that one put back is not handled again", "agent", w.agent.Name, "id", id)
}

// outputName is the name in the outbox of a program's n-th output in
// answer to the message id that is no message parley can send as it is:
// not text, or a message whose header does not parse (see reply). The
// router refuses it, and rejected/ keeps it under the time of the
// refusal then this name, which has no time of its own: it names the
// message answered by its sender and six hex digits, as in
// "20261128-124106.262889Z-output-1-answering-you-56c078.md". Text ends
// in .md, so that a person mends it in an editor and moves it back into
// the outbox (or parley retry), where it is routed as a file written by
// hand; what is not text ends in .bin: no editor mends it, and moved
// back it is refused again.
func outputName(id string, n int, data []byte) string {
	ext := ".md"
	if _, err := mailbox.Parse(data); errors.Is(err, mailbox.ErrBinary) {
		ext = ".bin"
	}
	answering := id
	if _, from, err := mailbox.ParseID(id); err == nil {
		answering = from + "-" + mailbox.IDSuffix(id)
	}
	return fmt.Sprintf("output-%d-answering-%s%s", n, answering, ext)
}

// duplicate says where a message with this id is already, when it is:
// among the answers given so far, or in the agent's outbox (an answer to
// an earlier message, not routed yet: both would be sent under one id).
func (w *worker) duplicate(id string, given map[string]string) string {
	if where, ok := given[id]; ok {
		return where
	}
	if _, err := os.Lstat(w.box.Path(mailbox.Outbox, mailbox.FileName(id))); err == nil {
		return "in " + mailboxPath(w.agent.Name, mailbox.Outbox, mailbox.FileName(id))
	}
	return ""
}

// refusalNote is the text of the .reason beside something an agent said
// that cannot be sent: the reason on the first line, then what a person
// needs to act.
func (w *worker) refusalNote(id, what, reason string) string {
	return w.refusalNoteOf(id, what, reason, "The file beside this one is what the program said, as it wrote it (out of\n"+
		"the code fence it was printed in, if any); the agent's other answers were\n"+
		"sent. To send it, fix it and move it into the outbox.\n")
}

// refusalNoteOf is refusalNote with its last paragraph, what to do, said
// by the caller.
func (w *worker) refusalNoteOf(id, what, reason, todo string) string {
	return reason + "\n" +
		"\n" +
		"agent:     " + w.agent.Name + "\n" +
		"answering: " + id + "\n" +
		"output:    " + what + "\n" +
		"rejected:  " + w.r.opts.Now().UTC().Format(mailbox.TimeFormat) + "\n" +
		"\n" + todo
}

// reply makes a message of what an agent said: an envelope as it is, or
// plain text as a reply to the message it handled (mailbox.Reply). Plain
// text is text with no header: neither a frontmatter block ("---" on the
// first line, closed by a later "---" or "..." line) nor a "[TAG]" first
// line; text whose first line is "---" and that is never closed is plain
// text too (a horizontal rule). It returns nil for output that is not
// text, and for output with a header that does not parse: that was meant
// as a message, and sent as plain text it would go to the wrong agent,
// untyped, unchecked; kept as it is, the router refuses it with the
// reason Check gives.
//
// It reads the output as mailbox.ParseAnswer does (a message wholly in
// one code fence is taken out of it). Plain text in which a header
// begins after line one (words before a "[TAG]" line) is still plain
// text: late names that header, for the journal and the log to say so.
// kept is what to keep of it for the router to refuse, when it cannot
// be sent: the output, or the message its fence held, so that the
// refusal is the message's own (the router reads no fence: kept in it,
// the message would be refused as having no header, mended or not).
func reply(in *mailbox.Message, data []byte) (m *mailbox.Message, kept []byte, late mailbox.LateHeader) {
	a, err := mailbox.ParseAnswer(data)
	if err == nil {
		return a.Message, a.Text, late
	}
	if !errors.Is(err, mailbox.ErrNoHeader) && !errors.Is(err, mailbox.ErrUnclosedFrontmatter) {
		return nil, a.Text, late
	}
	r := mailbox.Reply(in, a.Text)
	readdress(in, r)
	return r, a.Text, a.Late
}

// giveUp moves a message to dead/ with why it failed. A move that fails
// (a full disk) is tried again, after a pause that doubles, until it is
// made: a message is given up, and said to be, only once it is in dead/.
func (w *worker) giveUp(ctx context.Context, id string, err error, attempts int) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: gave up after %d %s: %v\n", w.agent.Name, attempts, plural(attempts, "attempt", "attempts"), err)
	reason := strings.TrimSuffix(b.String(), "\n")
	var he *HandleError
	if errors.As(err, &he) && he.Stderr != "" {
		fmt.Fprintf(&b, "\nstderr (last lines):\n%s\n", he.Stderr)
	}
	if he != nil && he.Stdout != "" {
		fmt.Fprintf(&b, "\nstdout (last lines):\n%s\n", he.Stdout)
	}
	if he != nil && he.Detail != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(he.Detail, "\n"))
	}
	if gerr := w.untilWritten(ctx, id, "dead", "move it to dead/ (giving it up: "+reason+")", func() error { return w.box.GiveUp(id, b.String()) }); gerr != nil {
		// Not in dead/: it stays in cur/, handled again by the next
		// runner (or the run ended meanwhile).
		w.r.log.Error("giving up a message", "agent", w.agent.Name, "id", id, "err", gerr)
		return
	}
	dead := w.read(mailbox.Dead, id)
	w.recordGivenUp(id, dead, reason, attempts)
	if w.beforeTell == nil || w.beforeTell() {
		w.r.tellGivenUp(w.agent.Name, id, dead, reason, attempts)
	}
	if err := w.box.Stage(id, w.r.syncer).Discard(); err != nil {
		w.r.log.Error("discarding the stage of a message given up", "agent", w.agent.Name, "id", id, "err", err)
	}
	w.r.log.Error(LogGaveUp, "agent", w.agent.Name, "id", id, "err", err)
	w.r.state.set(w.agent.Name, workspace.StateFailed, id)
}

// diskTrouble reports whether err is one a write returns while its
// filesystem is full (ENOSPC), the user's quota is used up (EDQUOT) or
// the filesystem is mounted read-only (EROFS): each passes once room is
// made or the filesystem is mounted read-write again, so the write is
// waited out, not taken for the message's fault.
func diskTrouble(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}

// noRoom reports whether err is one a write returns while its
// filesystem is full (ENOSPC) or the user's quota is used up (EDQUOT):
// of diskTrouble, what may pass while the runner runs without anyone
// mounting anything.
func noRoom(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// waitedForRoom says how long a handler's write (s) has failed for want
// of room, and whether that is over the agent's timeout: waited out no
// longer, it fails its attempt.
func (w *worker) waitedForRoom(s *stuck) (time.Duration, bool) {
	if s.tries == 0 {
		return 0, false
	}
	bound := w.agent.Timeout
	if bound <= 0 {
		bound = workspace.DefaultTimeout
	}
	waited := w.r.opts.Now().Sub(s.since)
	return waited, waited >= bound
}

// stuck is what a worker knows of a write of a message's that keeps
// failing (see waitToWrite).
type stuck struct {
	tries int       // failed in a row
	since time.Time // when the first of them failed
	note  string    // the note it gave the agent meanwhile
}

// write runs do, the write named what (see writeFault).
func (w *worker) write(what string, do func() error) error {
	if w.writeFault != nil {
		if err := w.writeFault(what); err != nil {
			return err
		}
	}
	return do()
}

// untilWritten runs do, the write named what (see writeFault) that doing
// says, for the message id in cur/, until it succeeds: each failure is
// waited out (waitToWrite). It returns nil once do succeeded, or the
// last error when the run ended first, when the agent was stopped for
// the run, or when do found the message gone from cur/.
func (w *worker) untilWritten(ctx context.Context, id, what, doing string, do func() error) error {
	var s stuck
	for {
		err := w.write(what, do)
		if err == nil {
			w.wrote(&s)
			return nil
		}
		if errors.Is(err, mailbox.ErrNotFound) || !w.waitToWrite(ctx, id, &s, mailbox.Cur, doing, err) {
			return err
		}
	}
}

// wrote notes that a write that failed before was made: the note it gave
// the agent is taken back.
func (w *worker) wrote(s *stuck) {
	if s.note != "" {
		w.r.state.noteOver(w.agent.Name, "", s.note)
	}
	*s = stuck{}
}

// waitToWrite waits before a write for message id (doing says what it
// does) that failed with err is tried again: a pause that doubles from
// diskPause up to the rescan interval, while the agent is shown
// retrying, with a note that says why and since when. The message waits
// where it is, in state (inbox/ or cur/). It returns false when the run
// ends first, or, in a run until idle, instead of a pause after the
// maxAttempts-th failure: the agent is then stopped for the run (exit 5,
// naming it), and the message waits for the next run.
func (w *worker) waitToWrite(ctx context.Context, id string, s *stuck, state, doing string, err error) bool {
	s.tries++
	now := w.r.opts.Now()
	if s.tries == 1 {
		s.since = now
	}
	where := mailboxPath(w.agent.Name, state, mailbox.FileName(id))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		w.r.askRepair() // a directory of its mailbox went missing: made again
	}
	if w.r.opts.UntilIdle && s.tries > maxAttempts {
		reason := fmt.Sprintf("cannot %s: %v (tried %d times since %s)", doing, err, s.tries, s.since.Local().Format("15:04:05"))
		why := fmt.Sprintf("%s%s; the message waits in %s, the next ones in its inbox: the next parley run hands them to it again", stoppedNote(w.agent.Name), reason, where)
		w.r.stopForRun(StoppedAgent{Agent: w.agent.Name, Path: where, Reason: reason}, why)
		w.r.state.noteOver(w.agent.Name, why, s.note)
		s.note = why
		w.r.log.Warn("agent stopped", "agent", w.agent.Name, "id", id, "err", err)
		return false
	}
	pause := min(w.r.diskPause<<min(s.tries-1, 16), w.r.ws().Config.Router.RescanInterval)
	note := fmt.Sprintf("cannot %s for %s since %s (%d %s): %v; tried again in %s (the message waits in %s: nothing is lost)",
		doing, id, s.since.Local().Format("15:04:05"), s.tries, plural(s.tries, "try", "tries"), err, pause, where)
	w.r.state.holding(w.agent.Name, id)
	w.r.state.noteOver(w.agent.Name, note, s.note)
	s.note = note
	w.r.log.Error("cannot write; trying again", "agent", w.agent.Name, "id", id, "doing", doing, "try", s.tries, "retry_in", pause, "err", err)
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Held is a driver's error that says its agent cannot work for now,
// through no fault of the message's: its model's endpoint is down, or
// asked to be left alone (runner/llm's OutageError). The message stays
// claimed, no attempt is counted, and it is handed to the driver again
// at HoldUntil; parley status says why meanwhile. The driver bounds how
// long it asks to hold (openai.outage_limit), then fails the message as
// any other error.
type Held interface {
	error
	HoldUntil() time.Time
}

// Following is a Held that waits for another agent's call rather than
// for a time alone: the call that probes its model's endpoint once a
// wait is over (runner/llm's OutageError.Probe). The message is handed
// to the driver again as soon as Following's channel is closed, or at
// HoldUntil at the latest; a run until idle waits for it too (the call
// is bounded), where it does not wait out an outage.
type Following interface {
	Held
	Following() <-chan struct{}
}

// shortHold is the longest hold a run until idle waits out; a longer
// one stops the agent for the run, its messages waiting for the next.
const shortHold = time.Second

// hold waits, message id claimed, until its driver may be called again
// (until); err says why. It returns false when the run ends first or
// the worker is told to stop. A run until idle does not wait out an
// outage: past a short hold, or maxAttempts holds, it stops the agent
// for the run, the message waiting in cur/ and the next in its inbox.
func (w *worker) hold(ctx context.Context, id string, until time.Time, err error) bool {
	cur := mailboxPath(w.agent.Name, mailbox.Cur, mailbox.FileName(id))
	reason := strings.TrimPrefix(err.Error(), w.agent.Name+": ")
	waits := "the message waits in " + cur
	if n, cerr := w.box.Count(mailbox.Inbox); cerr == nil && n > 0 {
		waits += fmt.Sprintf(", %d more in its inbox", n)
	}
	wait := max(until.Sub(w.r.opts.Now()), 0)
	var probe <-chan struct{}
	if f := Following(nil); errors.As(err, &f) {
		probe = f.Following()
	}
	w.holds++
	if w.r.opts.UntilIdle && probe == nil && (wait > shortHold || w.holds > maxAttempts) {
		why := fmt.Sprintf("%s stopped for this run: %s; %s: the next parley run hands them to it again", w.agent.Name, reason, waits)
		w.unhold()
		w.r.stopForRun(StoppedAgent{Agent: w.agent.Name, Path: cur, Reason: reason}, why)
		w.r.state.note(w.agent.Name, why)
		w.r.log.Warn("agent stopped", "agent", w.agent.Name, "id", id, "err", err)
		return false
	}
	if w.yielded == "" && w.hasUrgent() {
		// Asked to stop before the wait began: the request first.
		w.unhold()
		w.yielded = id
		return false
	}
	note := fmt.Sprintf("%s; %s (nothing is lost)", reason, waits)
	w.r.state.holding(w.agent.Name, id)
	w.r.state.noteOver(w.agent.Name, note, w.holdNote)
	w.holdNote = note
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-w.quit:
			return false
		case <-w.wake:
			// Something arrived (it waits), or the agent was stopped,
			// or asked to stop (parley stop: a shutdown request is
			// handed to it next, see hurry): the message stays in cur/.
			if w.r.isStopped(w.agent.Name) {
				w.unhold()
				return false
			}
			if w.yielded == "" && w.hasUrgent() {
				w.unhold()
				w.yielded = id // taken up again after the request (drain)
				return false
			}
		case <-t.C:
			return true
		case <-probe:
			return true // the call it waited for ended: tried again
		}
	}
}

// unhold takes back the note of a hold: the driver works again.
func (w *worker) unhold() {
	w.holds = 0
	if w.holdNote != "" {
		w.r.state.noteOver(w.agent.Name, "", w.holdNote)
		w.holdNote = ""
	}
}

// handling reports whether the worker handles a message now.
func (w *worker) handling() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.busy
}

func (w *worker) setBusy(id string) {
	w.mu.Lock()
	w.busy, w.current = id != "", id
	w.mu.Unlock()
}

// idle reports whether the worker handles nothing and has nothing waiting.
// The inbox is counted before busy is read: the worker sets busy before
// it claims a message, so a message claimed after the count is seen as
// busy, and one handled since has its answers published before busy is
// cleared. Read the other way round, a message claimed between the two
// looked like no work at all, and a run until idle could end before its
// answers were routed (a flake of the pipeline tests under load).
func (w *worker) idle() bool {
	w.mu.Lock()
	started := w.started
	w.mu.Unlock()
	if !started {
		return false
	}
	if w.r.isStopped(w.agent.Name) || w.blocked.Load() {
		w.mu.Lock()
		busy := w.busy
		w.mu.Unlock()
		return !busy // a mailbox that cannot be used is reported, not waited on
	}
	n, err := w.box.Count(mailbox.Inbox)
	if w.betweenLooks != nil {
		w.betweenLooks()
	}
	w.mu.Lock()
	busy := w.busy
	w.mu.Unlock()
	return !busy && err == nil && n == 0
}

// newSlots makes the concurrency slots of a cap of n drivers at once;
// nil, no cap, for 0.
func newSlots(n int) chan struct{} {
	if n == 0 {
		return nil
	}
	return make(chan struct{}, n)
}

// acquire takes one of the concurrency slots, or returns nil when ctx
// ends first. With no cap (the default), every agent runs when it has a
// message: an agent that waits on its program never delays another.
func (r *Runner) acquire(ctx context.Context) func() {
	if r.slots == nil {
		if ctx.Err() != nil {
			return nil
		}
		return func() {}
	}
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }
	case <-ctx.Done():
		return nil
	}
}
