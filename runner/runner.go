// Package runner is parley's engine: it watches every agent's outbox,
// has each message checked by the workspace (workspace.Check), delivers it
// durably to its recipients, writes one journal line per decision, and
// runs the agents' drivers on what they receive. What a workspace is, and
// what a valid message is, belong to runner/workspace.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sync/errgroup"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Options configure a Runner.
type Options struct {
	// Logger receives the runner's logs; nil discards them.
	Logger *slog.Logger
	// UntilIdle makes Run return once every outbox is empty (or holds only
	// files still being written, which it waits for), instead of watching
	// until the context ends. Files it does not wait for (an editor holds
	// them, or hard links refused where they are) are left, and counted
	// in Stats.Left. The files it refuses are listed in Stats, and logged
	// at debug level only.
	UntilIdle bool
	// BatchSize caps how many messages are made durable together. Default
	// 256.
	BatchSize int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Handlers are the built-in handlers agents with the builtin driver
	// may name.
	Handlers Handlers
	// TakeOver says the runner takes over a workspace whose runner
	// stopped, mid-session or after it (a seat that routed beside a
	// parley run that stopped): a built-in handler that is a Resumer is
	// resumed, not started (the D&D team lead starts no session).
	TakeOver bool
	// Drivers make the handlers of agents whose driver the runner does
	// not have itself, by the name parley.yaml gives the driver
	// (driver: openai): cmd/parley provides them, so that the runner
	// links no endpoint client. A driver's handler runs as a builtin
	// handler does; its error goes to dead/ at once unless it says it
	// may pass (a Temporary method returning true), and a Detail method
	// adds its text (a transcript) to the reason in dead/.
	Drivers map[string]DriverFunc
	// Brief, when set, says what a command or session agent's context
	// file gives beside its messages (see ContextFile): the protocol it
	// speaks and the files its role may see. cmd/parley provides it, with
	// the text parley mcp's protocol tool and the openai driver give, so
	// that the runner decides nothing of campaigns. Nil: the file holds
	// the messages alone.
	Brief func(ws *workspace.Workspace, agent string) (Briefing, error)
	// NoDrivers routes without running any agent's driver: messages wait
	// in every inbox, as for human agents.
	NoDrivers bool
	// OnHandled, when set, is called each time an agent's driver is done
	// with a message (once per attempt), with when it started and ended:
	// what a status or a web view needs for an agent's last activity and
	// per-message timings. It is called from the agent's worker, which
	// waits for it, so it must return quickly; calls for different agents
	// may come at the same time, calls for one agent come one after the
	// other, in the order its driver ran. Unset, it costs a nil check.
	OnHandled func(Handled)
	// Environ is the environment the programs of command and session
	// agents start with, before the variables the runner gives each
	// (PARLEY_AGENT, PARLEY_MESSAGE...); nil: the runner's own
	// (os.Environ). A command line run in a process of another program's
	// (a test) gives its own.
	Environ []string
	// Getenv looks up the environment parley runs in, where the
	// variable an openai agent's key_env names holds its key: a key not
	// set is a DriverProblem. Nil: os.Getenv.
	Getenv func(string) string
	// Confine, when set, says what an isolated agent's program is
	// confined to (workspace.Agent.Isolated): what it may read and write.
	// It returns nil when the agent runs as it is. See Confinement.
	Confine func(a workspace.Agent, ws *workspace.Workspace) *Confinement
	// Idle, when set, is called by a run until idle each time it finds
	// nothing left to do, from the router's goroutine: the moment a
	// person's seat may show what arrived and answer what waits for them.
	// settled is false when nothing is routed and no driver is at work,
	// but replies are awaited (timeouts:) or a built-in agent's deadline
	// is ahead: the seat shows and answers what waits (the answer may be
	// the reply awaited), and the run then waits for those. Unsettled,
	// its ctx ends at the next of those deadlines: the hook returns then
	// (false), so that the run checks it (marks an agent unresponsive,
	// sends a nudge) and calls it again. It returns true when something
	// was sent (a file waits in an outbox: the seat's, or another
	// process's while the hook waited), and the run goes on to route it;
	// false, and (settled) the run ends.
	Idle func(ctx context.Context, settled bool) bool
	// Seat says the runner is a person's seat's (parley play): it notes
	// so beside the lock (LockedError.Seat), and hands the workspace over
	// to a `parley run` that asks for it (HandoverAsked, OpenHandedOver).
	Seat bool
	// NoteAwaited has a watching run note, each time it has done what it
	// could, the replies it waits for, for Awaited (a person's seat asks
	// it from another goroutine). A run until idle always notes them;
	// a watching run of nobody's seat spares the inbox counts it takes.
	NoteAwaited bool
}

// Stats counts what a Run did.
type Stats struct {
	// Ended says why the run ended before being interrupted: a message
	// type the workspace stops on (stop_on) was delivered. The agents
	// handle what was in flight, the closing message too, before the run
	// ends.
	Ended      string `json:"ended,omitempty"`
	Routed     int    `json:"routed"`     // messages delivered
	Deliveries int    `json:"deliveries"` // copies written into inboxes
	Rejected   int    `json:"rejected"`   // files moved to rejected/
	Recovered  int    `json:"recovered"`  // copies found already delivered (a re-route after a crash)
	Handled    int    `json:"handled"`    // messages agents' drivers finished (moved to done/)
	Dead       int    `json:"dead"`       // messages given up (moved to dead/)
	// RefusedInPlace counts the links (a symbolic link, or a file with
	// more than one hard link: mailbox.Linked) refused during the run
	// where they are, in their outbox, with the reason beside each
	// (NAME.reason): never moved to rejected/, they count apart from
	// Rejected. RefusedInPlaceFiles names the first 1000, each with the
	// path of the link and the reason.
	RefusedInPlace      int                 `json:"refused_in_place"`
	RefusedInPlaceFiles []workspace.Problem `json:"refused_in_place_files"`
	// RejectedFiles and DeadFiles name the files refused and the messages
	// given up during the run, with the reason, in the order it happened:
	// the first 1000 of each (Rejected and Dead count them all), so that
	// a long run refusing a flood of files keeps its memory.
	RejectedFiles []workspace.Problem `json:"rejected_files"`
	DeadFiles     []workspace.Problem `json:"dead_files"`
	// Left counts the outbox files a run until idle ended with, not
	// routed: a file an editor holds (its swap or lock file beside it),
	// one waiting behind such a file, and a hard link refused where it is
	// by an earlier run (one refused during this run counts in
	// RefusedInPlace only). LeftFiles names the first 1000, each with why it waits.
	Left      int                 `json:"left"`
	LeftFiles []workspace.Problem `json:"left_files"`
	// Loops counts the loops stopped: messages refused because two
	// programs had answered each other hop_limit times in a row (they
	// count in Rejected too). Each is journaled with its reason, and a
	// notice from parley tells the sender and every person (notices count
	// in neither Routed nor Deliveries: they come from no outbox).
	Loops int `json:"loops"`
	// Stopped names the agents stopped for the rest of the run, each
	// with why and what waits for it: those their driver stopped (an
	// openai agent's budget used up), with the message they were
	// handling (Path, in cur/), and those that approved a shutdown
	// request (parley stop). Their messages wait for the next run, which
	// starts them again.
	Stopped []StoppedAgent `json:"stopped,omitempty"`
	// Interrupted names the messages agents' drivers were handling when
	// the run was stopped (its context ended: Ctrl-C on parley run), in
	// the order they were cut off: each waits in cur/, and the next run
	// hands it to its agent again.
	Interrupted []InterruptedMessage `json:"interrupted,omitempty"`
	// NotStarted names the built-in agents whose start failed (the team
	// lead of a workspace with no campaign starts no session), each with
	// why: what they do as a run starts was not done; they still handle
	// the messages they are sent.
	NotStarted []workspace.Problem `json:"not_started,omitempty"`
}

// StoppedAgent is an agent stopped for the rest of a run, and what waits
// for it.
type StoppedAgent struct {
	Agent string `json:"agent"`
	// Path is the message its driver was handling when it stopped it,
	// in cur/, relative to the workspace root; empty for an agent that
	// approved its shutdown (it had handled the request).
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
	// ShutDown says the agent approved a shutdown request: it was not
	// its driver that stopped it.
	ShutDown bool `json:"shut_down,omitempty"`
	// Waiting counts the messages in its inbox when the run ended.
	Waiting int `json:"waiting"`
	// SetAside counts, of an agent that approved its shutdown, the
	// messages claimed in its cur/ when the run ended: held for its
	// model's endpoint, and set aside for the request.
	SetAside int `json:"set_aside,omitempty"`
}

// InterruptedMessage is a message an agent's driver was handling when
// the run was stopped.
type InterruptedMessage struct {
	Agent string `json:"agent"`
	ID    string `json:"id"`
	// Path is where it waits, in cur/, relative to the workspace root.
	Path string `json:"path"`
}

// Refused reports whether anything was refused or given up during the run.
func (s Stats) Refused() bool { return s.Rejected > 0 || s.RefusedInPlace > 0 || s.Dead > 0 }

// Undelivered reports whether a run until idle ended with something not
// delivered: a file refused or a message given up during the run, or a
// file left waiting in an outbox.
func (s Stats) Undelivered() bool { return s.Refused() || s.Left > 0 }

// Unhandled reports whether an agent stopped during the run left
// messages for the next run: the one its driver was handling, or ones
// delivered to its inbox. An agent that approved its shutdown with
// nothing sent to it since leaves none.
func (s Stats) Unhandled() bool {
	for _, a := range s.Stopped {
		if a.Path != "" || a.Waiting > 0 || a.SetAside > 0 {
			return true
		}
	}
	return false
}

// Runner routes the messages of one workspace. Only one Runner may hold a
// workspace at a time.
type Runner struct {
	// current is the workspace as last loaded: parley.yaml can change
	// while the runner runs (see reload).
	current atomic.Pointer[workspace.Workspace]
	opts    Options
	log     *slog.Logger
	lock    *workspaceLock
	records *records // the programs running (see records.go)
	journal *journal
	// journalLost is how many lines of the journal the file at its path
	// lacked at the last look (journal.lost): said when it changes.
	journalLost int
	syncer      *mailbox.Syncer
	agents      map[string]mailbox.Dir

	// toldGone are the copies it delivered that it said are gone from
	// their mailboxes (noteGone): each is said once.
	toldGone map[arrival]bool

	pending map[fileKey]*pending // outbox files seen and not yet routed (of a backlog, a window: see cut)
	holders map[string]fileKey   // agent -> the file that held it back at the last look
	inPlace map[fileKey]bool     // links refused where they are (see refuseInPlace)
	// rejectedAt is, per agent, the modification time of its rejected/
	// at the last look for reasons its files left behind (see
	// dropOrphanReasons).
	rejectedAt map[string]time.Time
	// refusedNow are the hard links refused where they are during this
	// run (counted in Stats.Rejected).
	refusedNow map[fileKey]bool
	last       map[string]time.Time // agent -> time of the newest id it sent (that we know of: see lastSent)
	// lastRead holds the agents whose sent/ lastSent has read.
	lastRead map[string]bool
	// suffixes indexes, per agent, the ids in its sent/ by their last six
	// hex digits, to find a file routed already (see routedAlready).
	suffixes map[string]map[string][]string
	// journaled indexes the deliveries the journal holds of files written
	// by hand, read the first time a file may have been routed already
	// (see journaledFrom).
	journaled journalIndex
	// drawn is the record of the ids drawn for files written by hand,
	// read the first time one is drawn (see drawnRecord).
	drawn *drawnIDs
	// fresh is what is known of the ids begun before (see fresh.go).
	fresh freshIDs
	stats Stats
	// landing is the ids whose copies are written into inboxes and whose
	// delivery is not journaled yet: a worker waits for it before it
	// handles one, so that the journal tells of the delivery first.
	landing landing
	// statsMu guards what the workers count in stats (Handled, Dead,
	// DeadFiles, and Rejected and RejectedFiles, which they share with
	// the router); the router's other counts are its own.
	statsMu sync.Mutex

	// workers are the agents with a driver. Only the router's goroutine
	// (and Open, before it) changes the map, under workersMu; the router
	// reads it freely, any other goroutine (a worker stopping its agent)
	// under workersMu.
	workers   map[string]*worker
	workersMu sync.RWMutex
	retiring  map[string]*retiring // workers stopping, by agent (reload)
	group     *errgroup.Group      // the workers, while Run runs
	groupCtx  context.Context

	config   configWatch
	watcher  *fsnotify.Watcher // while watch runs; nil when none could be made
	outboxes map[string]string // outbox directory -> agent, while watch runs
	rescan   *time.Ticker
	// looked is when the runner last looked at every outbox (at start,
	// then at each rescan): runner.json says it, for parley status to
	// tell a runner that holds the workspace and does nothing.
	looked time.Time

	// See repair.go.
	repairAsked atomic.Bool       // a worker found a directory missing
	repairAt    time.Time         // make missing directories from then on
	troubles    map[string]string // agent -> why its mailbox cannot be used
	// failing are the outbox files whose routing failed since they were
	// last told of (some may have been routed since), and told what
	// runner.json says of them (see noteFailing).
	// diskPause is the first pause of a worker's write that failed for
	// want of room (see waitToWrite); tests make it short.
	diskPause time.Duration

	// infoUnwritten is set while runner.json could not be written (a
	// full disk): it is written again (see routePending).
	infoUnwritten bool

	failing     map[fileKey]bool
	toldFailing []workspace.FailingDelivery
	// dotted says, per agent, whether its outbox held a name starting
	// with a dot at its last listing or in an event since: only then may
	// an editor's swap or lock file be beside a file (see editing).
	dotted map[string]bool
	// windowed says the last look at the pending files left part of a
	// backlog for the next (see window); lastScan is when the outboxes
	// were last listed, and scanCost how long that took.
	windowed bool
	// edges holds, per sender whose last listing found more than
	// lookWindow files named by their id, the least of those it left
	// out: only the lookWindow before it are in pending, and the outbox
	// is listed again once they are routed (see scanAgent, refill).
	edges         map[string]edge
	lastScan      time.Time
	scanCost      time.Duration
	unwatched     map[string]bool // agents whose outbox has no file events
	saidUnwatched bool
	watcherErr    error // why no watcher could be made
	watchHook     func(dir string) error
	polledAt      time.Time
	inboxesAt     time.Time            // when lookAtInboxes looks next
	inboxTimes    map[string]time.Time // agent -> its inbox's mtime when last looked at
	// sessionOver, once set, says why the run ends: a stop_on type was
	// delivered.
	sessionOver string
	expected    []*expectation                      // replies awaited, for timeouts:
	awaitedNow  atomic.Pointer[[]workspace.Awaited] // what Awaited returns
	// savedAwaited is what the state book was last told is awaited.
	savedAwaited []workspace.Awaited
	// finished holds the messages the workers finished (done/) or gave up
	// (dead/) since checkDeadlines last looked, by agent and id: what
	// ends an awaited reply of a program agent, learnt from the workers
	// rather than from its mailbox (see toldInstead). Guarded by
	// finishedMu: the workers write it.
	finished   map[finishedKey]string
	finishedMu sync.Mutex
	nudges     map[string]string // id of a nudge sent -> why, for the journal
	told       map[string]bool   // agent + the message it answered -> sent a refusal notice (see Refusals)
	chains     *chains           // the messages programs answer, for loops
	slots      chan struct{}     // concurrency: one per running driver; nil for no cap
	kick       chan struct{}     // a worker published messages, or went idle
	woken      chan struct{}     // Wake was called: toWake holds whom
	wakeMu     sync.Mutex        // guards toWake
	toWake     []string          // agents whose inboxes something else delivered to (Wake)
	finishing  atomic.Bool       // Finish was called: drivers take no new message
	givenUpMu  sync.Mutex        // one telling of a give-up at a time (see tellGivenUp)
	state      *stateBook

	// probe tells whether a file is open for writing; nil means
	// mailbox.BeingWritten. Tests replace it.
	probe func(path string) (bool, error)

	// noEvents makes Run watch no directory, as on a filesystem that
	// reports no file events (NFS, SMB, FUSE); set by tests.
	noEvents bool
	// writing, when set, replaces beingWritten; set by tests.
	writing func(path string) bool
}

// ws returns the workspace as last loaded.
func (r *Runner) ws() *workspace.Workspace { return r.current.Load() }

// Workspace returns the workspace as last loaded: parley.yaml and its
// skills as the runner routes by them now (see reload). A bridge run
// beside the runner checks what it receives against it
// (bridge.Options.Current). Safe from any goroutine.
func (r *Runner) Workspace() *workspace.Workspace { return r.current.Load() }

// environ is the environment the agents' programs start with
// (Options.Environ).
func (r *Runner) environ() []string {
	if r.opts.Environ != nil {
		return r.opts.Environ
	}
	return os.Environ()
}

// fileKey names a file in an agent's outbox.
type fileKey struct{ agent, name string }

// pending is what the runner knows of an outbox file it has not routed.
//
// A backlog holds one for every file in its window (see cut), and every
// file written by hand, so it keeps only what every file needs; what few
// files need is behind rare.
type pending struct {
	size int64
	// modifiedNs and sinceNs are times in Unix nanoseconds (see modified
	// and since): a backlog holds thousands of these, and a time.Time
	// is three words.
	modifiedNs int64
	sinceNs    int64 // when the runner first saw this size and mtime
	seen       bool  // size, modified and since hold an earlier look
	reasoned   bool  // a reason is beside it: it was refused where it is
	unsure     bool  // whether a writer still holds it cannot be known
	editing    bool  // an editor's swap or lock file was beside it
	rare       *rare // nil until one of its fields is set (see more)
}

// rare is what a pending file needs only when it failed, or when it was
// given an id it could not carry.
type rare struct {
	id       string    // the id it was given, when no id could be written into it
	failures int       // failed attempts to route it, in a row
	retryAt  time.Time // no attempt before this, after a failure
	lastErr  error     // why the last attempt failed
	since    time.Time // when the first of those failures was
	to       string    // the recipient the last attempt failed to deliver to, if any
	// journaled is the id under which the file was journaled as
	// delivered while its move to sent/ failed: tried again, it is not
	// journaled again unless something new is delivered.
	journaled string
}

// noRare is what get returns for a file with none: only read.
var noRare rare

// modified is the file's modification time at the last look.
func (p *pending) modified() time.Time { return time.Unix(0, p.modifiedNs) }

// since is when the runner first saw the file's size and modification
// time as they are.
func (p *pending) since() time.Time { return time.Unix(0, p.sinceNs) }

// get returns p's rare fields, to read.
func (p *pending) get() *rare {
	if p.rare == nil {
		return &noRare
	}
	return p.rare
}

// more returns p's rare fields, to set.
func (p *pending) more() *rare {
	if p.rare == nil {
		p.rare = &rare{}
	}
	return p.rare
}

// Open takes the workspace's lock, creates missing mailboxes and finishes
// what a runner that was killed left half-done: deliveries staged in tmp/
// are removed, and a journal line cut short is ended. Messages still in the
// outboxes are routed again by Run, each delivery being a no-op where it
// was already made. A workspace held by another runner gives *LockedError.
func Open(ws *workspace.Workspace, opts Options) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// A mailbox that cannot be made (a file where a directory goes) does
	// not stop the others: repair, first thing, says why in status.
	dirsErr := ws.MakeDirs()
	if _, err := ws.Protocol(); err != nil {
		return nil, err
	}
	warnings, err := ws.Lint()
	if err != nil {
		return nil, err
	}
	for _, w := range append(warnings, ws.MissingRunFiles()...) {
		opts.Logger.Warn(w)
	}
	warnUnknownMailboxes(ws, opts.Logger)
	lock, err := lockWorkspace(ws, opts.Seat)
	if err != nil {
		return nil, err
	}
	// Before any message is handed to a program: what the programs of a
	// runner that was killed left running ends.
	records, err := openRecords(ws, opts.Logger)
	if err != nil {
		lock.unlock()
		return nil, err
	}
	r := &Runner{
		opts:       opts,
		log:        opts.Logger,
		lock:       lock,
		records:    records,
		agents:     make(map[string]mailbox.Dir),
		pending:    make(map[fileKey]*pending),
		inPlace:    make(map[fileKey]bool),
		rejectedAt: make(map[string]time.Time),
		refusedNow: make(map[fileKey]bool),
		last:       make(map[string]time.Time),
		lastRead:   make(map[string]bool),
		suffixes:   make(map[string]map[string][]string),
		workers:    make(map[string]*worker),
		retiring:   make(map[string]*retiring),
		troubles:   make(map[string]string),
		failing:    make(map[fileKey]bool),
		diskPause:  time.Second,
		dotted:     make(map[string]bool),
		unwatched:  make(map[string]bool),
		edges:      make(map[string]edge),
		slots:      newSlots(ws.Config.Concurrency),
		kick:       make(chan struct{}, 1),
		woken:      make(chan struct{}, 1),
		nudges:     make(map[string]string),
		told:       make(map[string]bool),
		chains:     newChains(),
		state:      loadStateBook(ws, opts.Now, opts.Logger),
	}
	r.current.Store(ws)
	r.openFresh(ws)
	if dirsErr != nil {
		opts.Logger.Warn("cannot make every mailbox; the others are served", "err", dirsErr)
		r.repairAt = opts.Now()
	}
	for _, a := range ws.Config.Agents {
		box := ws.Mailbox(a.Name)
		r.agents[a.Name] = box
		var nd *mailbox.NotDirError
		if errors.As(box.CheckDirs(), &nd) {
			// Replaced by a symbolic link or a file: never read from nor
			// written to, and reported, until it is mended (repair.go).
			r.troubles[a.Name] = r.notDir(nd).Error()
			opts.Logger.Error("a mailbox cannot be used", "agent", a.Name, "err", r.troubles[a.Name])
		} else if err := box.CleanTmp(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// (Removed since MakeDirs: made again by repair.)
			r.Close()
			return nil, err
		}
		r.removeLeftovers(box)
		if opts.NoDrivers {
			continue
		}
		d, err := r.newDriver(a, ws)
		if err != nil {
			r.Close()
			return nil, err
		}
		if d != nil {
			r.setWorker(a.Name, newWorker(r, a, box, d))
		}
	}
	if r.journal, err = openJournal(ws.JournalPath()); err != nil {
		r.Close()
		return nil, err
	}
	r.journal.now = opts.Now
	if r.syncer, err = mailbox.NewSyncer(ws.Root); err != nil {
		r.Close()
		return nil, err
	}
	now := opts.Now()
	r.config = configWatch{settling: workspace.NewSettling(ws.Root), started: now, loaded: now}
	r.looked = now
	r.takeUpWaits()
	r.writeRunnerInfo()
	return r, nil
}

// removeLeftovers removes what writers that were killed (a `parley
// send`, a program staging the Maildir way) left in an agent's tmp/. A
// failure is logged: the files stay, and `parley status` shows them.
func (r *Runner) removeLeftovers(box mailbox.Dir) {
	removed, err := box.RemoveLeftovers(r.opts.Now())
	if len(removed) > 0 {
		var size int64
		for _, e := range removed {
			size += e.Size
		}
		r.log.Info("removed files staged by writers that were killed", "agent", box.Agent(), "files", len(removed), "bytes", size)
	}
	if err != nil {
		r.log.Warn("removing files staged by writers that were killed", "agent", box.Agent(), "err", err)
	}
}

// Wake tells the runner that something other than its router delivered
// to these agents' inboxes (the bridge, or a worker's notice to another
// agent): their drivers look at once. It may be called from any
// goroutine, never blocks, and loses no wake.
func (r *Runner) Wake(agents []string) {
	r.wakeMu.Lock()
	r.toWake = append(r.toWake, agents...)
	r.wakeMu.Unlock()
	select {
	case r.woken <- struct{}{}:
	default: // a wake is pending already: it takes these too
	}
}

// takeWakes wakes the agents Wake was told of since the last look, and
// stops the workers once Finish was called.
func (r *Runner) takeWakes() {
	r.wakeMu.Lock()
	names := r.toWake
	r.toWake = nil
	r.wakeMu.Unlock()
	if r.finishing.Load() {
		for _, w := range r.workers {
			w.stop()
		}
	}
	for _, name := range names {
		r.notify(name)
	}
}

// Finish tells the runner that the run is ending: each agent's driver
// finishes the message it handles, if any, and takes no other, so that
// no program starts on a message only to be cut off when the run ends
// (a person leaving the seat). The router goes on routing, the answers
// of those messages too, until the run ends. It may be called from any
// goroutine, and never blocks.
func (r *Runner) Finish() {
	r.finishing.Store(true)
	r.Wake(nil)
}

// Close releases the workspace.
func (r *Runner) Close() error {
	// A workspace moved or replaced while the runner ran is no longer its
	// own: what it would write last (the state book, the lines kept for
	// the journal, the record of delivered ids, runner.json) is, at those
	// paths, a workspace another runner may hold now.
	gone := r.lock != nil && errors.Is(r.lock.held(r.ws().Root), ErrWorkspaceReplaced)
	if gone {
		r.state.abandon()
	}
	r.state.close() // before the lock goes: the next runner writes the book
	var errs []error
	if r.journal != nil && r.syncer != nil && !gone {
		errs = append(errs, r.journal.flush(r.syncer)) // lines kept from a failed write
	}
	if r.syncer != nil {
		errs = append(errs, r.syncer.Sync(), r.syncer.Close())
	}
	if r.journal != nil {
		errs = append(errs, r.journal.close())
	}
	errs = append(errs, r.drawn.close())
	if r.lock != nil {
		if !gone {
			errs = append(errs, r.closeFresh(r.ws())) // nothing more is delivered
			_ = os.Remove(workspace.RunnerInfoPath(r.ws().Root))
		}
		errs = append(errs, r.lock.unlock())
	}
	return errors.Join(errs...)
}

// Run routes messages until ctx is done, or, with Options.UntilIdle, until
// nothing is left to route. It lists every outbox at start, on a watcher
// overflow and every rescan interval, and reacts to file events in between;
// events are hints, the listings are the truth. Bad files never stop it:
// they are rejected. It returns an error only when it cannot go on (the
// watcher or the disk fails).
func (r *Runner) Run(ctx context.Context) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	r.group, r.groupCtx = g, gctx
	// Before any worker gives up anything: what a runner killed before
	// it told of a give-up is told (see GiveUps).
	r.tellGivenUps()
	for _, w := range r.workers {
		r.startWorker(w)
	}
	r.startBuiltins(gctx)
	r.dropOrphanReasons()
	var err error
	if r.opts.UntilIdle {
		err = r.runUntilIdle(gctx)
	} else {
		err = r.watch(gctx)
	}
	cancel()
	if werr := g.Wait(); err == nil && !errors.Is(werr, context.Canceled) {
		err = werr
	}
	// Every driver has stopped: what the built-in agents do at the end
	// sees every file the others wrote.
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	r.stopBuiltins(stopCtx)
	stopCancel()
	r.stats.Ended = r.sessionOver
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	for i, a := range r.stats.Stopped {
		// What waits for it in its inbox, for the next run.
		r.stats.Stopped[i].Waiting, _ = r.ws().Mailbox(a.Agent).Count(mailbox.Inbox)
		if a.ShutDown {
			r.stats.Stopped[i].SetAside, _ = r.ws().Mailbox(a.Agent).Count(mailbox.Cur)
		}
	}
	stats := r.stats
	stats.RejectedFiles = append([]workspace.Problem{}, stats.RejectedFiles...)
	stats.RefusedInPlaceFiles = append([]workspace.Problem{}, stats.RefusedInPlaceFiles...)
	stats.DeadFiles = append([]workspace.Problem{}, stats.DeadFiles...)
	stats.LeftFiles = append([]workspace.Problem{}, stats.LeftFiles...)
	stats.Stopped = append([]StoppedAgent(nil), stats.Stopped...)
	stats.NotStarted = append([]workspace.Problem(nil), stats.NotStarted...)
	stats.Interrupted = append([]InterruptedMessage(nil), stats.Interrupted...)
	return stats, err
}

// watch routes on file events until ctx ends. It also watches the
// workspace's directory and skills/, to reload the configuration when it
// changes (see reload.go).
func (r *Runner) watch(ctx context.Context) error {
	w, err := fsnotify.NewBufferedWatcher(4096)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if err != nil {
		// No inotify instance left: every outbox is listed every
		// pollInterval instead.
		r.watcherErr = fmt.Errorf("no file watcher: %w", err)
	} else {
		defer w.Close()
		r.watcher, events, errs = w, w.Events, w.Errors
	}
	r.outboxes = make(map[string]string, len(r.agents))
	defer func() { r.watcher, r.outboxes = nil, nil }()
	for name := range r.agents {
		r.watchOutbox(name)
	}
	root := r.ws().Root
	if r.watcher != nil && !r.noEvents {
		// Events here are hints too: the rescan compares the files.
		_ = w.Add(root)
		_ = w.Add(filepath.Join(root, "skills"))
	}
	r.log.Info("routing", "workspace", root, "agents", len(r.agents))
	r.config.dirty = true // changed since Open, before the watch began?
	r.writeRunnerInfo()
	r.scan()
	r.polledAt = r.opts.Now()
	r.rescan = time.NewTicker(r.ws().Config.Router.RescanInterval)
	defer r.rescan.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	for {
		if err := r.lock.held(root); err != nil {
			return err
		}
		r.startRetired()
		r.takeWakes()
		now := r.opts.Now()
		if r.repairAsked.Swap(false) {
			r.repairSoon() // a worker found a directory missing
		}
		if !r.repairAt.IsZero() && !now.Before(r.repairAt) {
			r.repair()
		}
		if p := r.nextPoll(); !p.IsZero() && !now.Before(p) {
			r.pollUnwatched()
		}
		if !now.Before(r.inboxesAt) {
			r.lookAtInboxes(now)
		}
		// Routing waits while the configuration is being written (see
		// workspace.Settling).
		again, hold := r.checkConfig(ctx)
		var next time.Time
		if !hold {
			if next, err = r.routePending(ctx); err != nil {
				r.log.Error("routing", "err", err)
			}
		}
		if !again.IsZero() && (next.IsZero() || again.Before(next)) {
			next = again
		}
		if r.sessionOver != "" {
			r.log.Info("session over; finishing what is in flight", "why", r.sessionOver)
			return r.runUntilIdle(ctx)
		}
		r.checkDeadlines()
		if r.opts.NoteAwaited {
			r.noteAwaited()
		}
		r.tickBuiltins(ctx)
		r.flushJournal(now)
		r.noteJournal()
		for _, d := range []time.Time{r.nextDeadline(), r.nextTick(), r.nextPoll(), r.repairAt, r.journal.retryAt(), r.inboxesAt} {
			if !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		if !next.IsZero() {
			settle.Reset(max(time.Until(next), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("file watcher stopped")
			}
			r.event(ev)
			// Take every event already queued, so that a burst is
			// routed, and synced, as one batch.
			for drained := false; !drained; {
				select {
				case ev := <-events:
					r.event(ev)
				default:
					drained = true
				}
			}
		case err, ok := <-errs:
			if !ok {
				return errors.New("file watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.log.Warn("file events overflowed; listing every outbox again")
				r.config.dirty = true
				r.scan()
				continue
			}
			return fmt.Errorf("watching outboxes: %w", err)
		case <-r.rescan.C:
			r.config.dirty = true
			if err := r.journal.look(); err != nil {
				r.log.Error("looking at the journal", "err", err)
			}
			r.repair()
			r.scan()
			r.looked = r.opts.Now()
			r.writeRunnerInfo()
			r.dropOrphanReasons()
			for name := range r.workers {
				r.notify(name) // an inbox another process delivered to (a bridge of its own)
			}
		case <-settle.C:
		case <-r.kick:
			r.scan() // a driver published messages, or stopped
		case <-r.woken:
			r.takeWakes()
		}
	}
}

// waitPoll is how often a run until idle that waits out a deadline (an
// awaited reply, a built-in agent's tick) lists the outboxes again, to
// route what another process sent meanwhile.
const waitPoll = 250 * time.Millisecond

// runUntilIdle routes, and lets drivers handle what was delivered, until
// a listing of every outbox finds nothing to do and every driver is idle.
// Files that keep failing are tried maxAttempts times; then it gives up
// with an error naming them. It is also how a watching run winds down
// once a stop_on message is delivered.
func (r *Runner) runUntilIdle(ctx context.Context) error {
	for {
		if err := r.lock.held(r.ws().Root); err != nil {
			return err
		}
		r.takeWakes()
		if r.repairAsked.Load() || !r.repairAt.IsZero() {
			r.repair()
		}
		// Working through a backlog, the outboxes are listed again
		// after a second at least, and after 20 times what the last
		// listing cost, not for every window: a listing of 100,000 names
		// costs more than routing a window.
		if start := time.Now(); !r.windowed || start.Sub(r.lastScan) >= max(time.Second, 20*r.scanCost) {
			r.scan()
			r.lastScan, r.scanCost = start, time.Since(start)
		}
		var next, again time.Time
		var err error
		hold := false
		if r.opts.Seat {
			// A script's seat plays a whole session in one run until
			// idle: parley.yaml saved meanwhile is read again before
			// what is sent after it is routed, as a watching run reads
			// it (one that does not load is logged, .parley/runner.json
			// keeps why, and the run goes on with the one it has).
			again, hold = r.checkConfig(ctx)
		}
		if !hold {
			next, err = r.routePending(ctx)
		}
		if !again.IsZero() && (next.IsZero() || again.Before(next)) {
			next = again
		}
		if err != nil && !r.anyRetryable() {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if !hold && len(r.pending) > 0 && !r.anyRetryable() && r.workersIdle() {
			// What the agents at work say is routed first (or waits
			// behind the file given up, when they are its sender).
			return r.givenUp()
		}
		if r.sessionOver != "" {
			// The session is over: what is in flight is finished, but
			// no reply is awaited any more.
			r.expected = nil
		}
		r.checkDeadlines()
		r.tickBuiltins(ctx)
		r.flushJournal(r.opts.Now())
		r.noteJournal()
		// A built-in agent's deadline is waited for like an answer,
		// unless the session is over.
		tick := r.nextTick()
		if r.sessionOver != "" {
			tick = time.Time{}
		}
		for _, d := range []time.Time{r.nextDeadline(), tick, r.journal.retryAt()} {
			if !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		if awaited := r.noteAwaited(); len(awaited) > 0 {
			r.tellAwaited(awaited)
		}
		if r.opts.Idle != nil && r.nothingPending() && r.workersIdle() && (len(r.expected) > 0 || !tick.IsZero()) {
			// Waiting for replies or a deadline: what waits for a
			// person is theirs to answer meanwhile, until that deadline,
			// which is then checked.
			r.state.flush() // what the hook reads of agents.json is as it is
			idleCtx, cancel := ctx, context.CancelFunc(func() {})
			if !next.IsZero() {
				idleCtx, cancel = context.WithDeadline(ctx, next)
			}
			goOn := r.opts.Idle(idleCtx, false)
			cancel()
			if goOn {
				continue
			}
		}
		if r.nothingPending() && r.workersIdle() && len(r.expected) == 0 && tick.IsZero() {
			// Look once more: a driver may have published since.
			r.scan()
			if r.nothingPending() && r.workersIdle() && len(r.expected) == 0 && (r.sessionOver != "" || r.nextTick().IsZero()) {
				if r.opts.Idle != nil {
					r.state.flush()
				}
				if r.opts.Idle != nil && r.opts.Idle(ctx, true) {
					continue // the seat said something: route it
				}
				r.noteLeft()
				if r.sessionOver != "" {
					r.log.Info("session over", "why", r.sessionOver)
				}
				return r.unusable()
			}
			continue
		}
		if r.nothingPending() && r.workersIdle() && (len(r.expected) > 0 || !tick.IsZero()) {
			// Waiting out a deadline, with no file watcher: what is
			// sent meanwhile (a person's `parley reply` in another
			// terminal) is routed when it comes, not when the deadline
			// passes: the outboxes are listed again every waitPoll.
			if p := r.opts.Now().Add(waitPoll); next.IsZero() || p.Before(next) {
				next = p
			}
		}
		// Files still being written, files to try again, or drivers at
		// work: wait for them.
		var timer *time.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(max(time.Until(next), time.Millisecond))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-fire:
		case <-r.kick:
		case <-r.woken:
			r.takeWakes()
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// warnUnknownMailboxes says which mailboxes belong to no agent of
// parley.yaml (one renamed or removed): nobody routes or handles what
// they hold.
func warnUnknownMailboxes(ws *workspace.Workspace, log *slog.Logger) {
	unknown, err := ws.UnknownMailboxes()
	if err != nil {
		return
	}
	for _, u := range unknown {
		log.Warn("a mailbox of no agent: renamed or removed in "+workspace.ConfigFile+"? its messages wait, unrouted", "mailbox", u.Path, "outbox", u.Outbox, "inbox", u.Inbox)
	}
}

// unknownLeft are the files in the outboxes of mailboxes of no agent of
// parley.yaml: an agent renamed while its answer was in its outbox.
func (r *Runner) unknownLeft() []workspace.Problem {
	unknown, err := r.ws().UnknownMailboxes()
	if err != nil {
		return nil
	}
	var left []workspace.Problem
	for _, u := range unknown {
		if u.Outbox == 0 {
			continue
		}
		name := filepath.Base(u.Path)
		entries, err := r.ws().Mailbox(name).List(mailbox.Outbox)
		if err != nil {
			continue
		}
		for _, e := range entries {
			left = append(left, workspace.Problem{Agent: name, Path: mailboxPath(name, mailbox.Outbox, e.Name),
				Reason: fmt.Sprintf("%s/ is the mailbox of no agent of %s (renamed or removed?): nobody routes it; name the agent again, or move the file into another agent's outbox (an id names its sender: leave id: out, and rename a file named by its id)", u.Path, workspace.ConfigFile)})
		}
	}
	return left
}

// noteLeft records, as a run until idle ends, the outbox files it leaves
// there, not routed, and why (Stats.Left): those an editor holds, those
// waiting behind them, hard links refused where they are by an earlier
// run, and those in the outbox of a mailbox no agent has.
func (r *Runner) noteLeft() {
	left := r.unknownLeft()
	for k, p := range r.pending {
		var why string
		if p.editing || r.editing(k, p) {
			lock, _ := r.agents[k.agent].EditorLock(mailbox.Outbox, k.name)
			why = fmt.Sprintf("an editor's swap or lock file is beside it (%s): it is routed once the editor lets go of it", lock)
			r.log.Warn("left in the outbox: an editor's swap or lock file is beside it", "agent", k.agent, "file", k.name)
		} else {
			behind := r.holders[k.agent].name
			why = fmt.Sprintf("it waits behind %s, which an editor holds", mailboxPath(k.agent, mailbox.Outbox, behind))
			r.log.Warn("left in the outbox: it waits behind a file an editor holds", "agent", k.agent, "file", k.name, "behind", behind)
		}
		left = append(left, workspace.Problem{Agent: k.agent, Path: mailboxPath(k.agent, mailbox.Outbox, k.name), Reason: why})
	}
	for k := range r.inPlace {
		if r.refusedNow[k] {
			continue // named among the files refused during this run
		}
		box := r.agents[k.agent]
		info, err := os.Lstat(box.Path(mailbox.Outbox, k.name))
		if err != nil || !mailbox.Linked(info) {
			continue
		}
		why, ok := box.Reason(mailbox.Outbox, k.name)
		if !ok {
			why = "a link, refused where it is"
		}
		left = append(left, workspace.Problem{Agent: k.agent, Path: mailboxPath(k.agent, mailbox.Outbox, k.name), Reason: why})
	}
	sort.Slice(left, func(i, j int) bool { return left[i].Path < left[j].Path })
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	r.stats.Left = len(left)
	r.stats.LeftFiles = left[:min(len(left), maxListed)]
}

// flushJournal writes the journal lines kept from a failed write, once
// they are due to be tried again.
func (r *Runner) flushJournal(now time.Time) {
	if at := r.journal.retryAt(); at.IsZero() || now.Before(at) {
		return
	}
	if err := r.journal.flush(r.syncer); err != nil {
		r.log.Error("writing the journal; the lines are kept and tried again", "err", err)
	}
}

// noteJournal compares the journal's files that replaced one another
// (journal.settle) and says, when it changed, how many lines of the
// journal the file at its path lacks since git or a person replaced it:
// a warning in the log, once, and in runner.json for parley status while
// it stands. A journal removed or emptied is said once in the log: the
// person's act, not a standing problem.
func (r *Runner) noteJournal() {
	removed := r.journal.settle()
	if removed {
		r.log.Warn(workspace.JournalRemovedText, "path", r.journal.path)
	}
	n, at := r.journal.lost()
	if removed || n > r.journalLost {
		// git put the journal back: the mailboxes, most likely, too.
		r.noteGone()
	}
	if n == r.journalLost {
		return
	}
	r.journalLost = n
	if n > 0 {
		r.log.Warn(workspace.JournalLostText(n), "path", r.journal.path, "since", at)
	} else {
		r.log.Info("the journal holds again the lines it lacked since it was replaced", "path", r.journal.path)
	}
	r.writeRunnerInfo()
}

// nothingPending reports whether no outbox file waits to be routed, but
// those an editor holds (see editing): a run until idle does not wait for
// a person to quit their editor, nor for a swap file a crashed editor left.
func (r *Runner) nothingPending() bool {
	for k, p := range r.pending {
		if p.editing {
			continue
		}
		if h, ok := r.holders[k.agent]; ok && h != k {
			if hp := r.pending[h]; hp != nil && hp.editing {
				continue // waits behind a file being edited
			}
		}
		return false
	}
	return true
}

// workersIdle reports whether every driver is idle with an empty inbox.
func (r *Runner) workersIdle() bool {
	for _, w := range r.workers {
		if !w.idle() {
			return false
		}
	}
	return true
}

// isStopped reports whether an agent was shut down.
func (r *Runner) isStopped(agent string) bool { return r.state.stopped(agent) }

// anyRetryable reports whether a pending file is still worth waiting for:
// one not yet given up on after maxAttempts failures, and not waiting
// behind a file of its sender that was (one sender's files go in order:
// it is never tried while that one waits).
func (r *Runner) anyRetryable() bool {
	stuck := r.stuckSenders()
	for k, p := range r.pending {
		if p.get().failures < maxAttempts && !stuck[k.agent] {
			return true
		}
	}
	return false
}

// stuckSenders are the agents with a file given up on after maxAttempts
// failures: their later files wait behind it.
func (r *Runner) stuckSenders() map[string]bool {
	stuck := map[string]bool{}
	for k, p := range r.pending {
		if p.get().failures >= maxAttempts {
			stuck[k.agent] = true
		}
	}
	return stuck
}

// givenUp is the error for files that kept failing, naming each and
// how many of its sender's later files wait behind it.
func (r *Runner) givenUp() error {
	behind := map[string]int{}
	var failed []fileKey
	for k, p := range r.pending {
		if p.get().failures >= maxAttempts {
			failed = append(failed, k)
		} else {
			behind[k.agent]++
		}
	}
	sort.Slice(failed, func(i, j int) bool {
		if failed[i].agent != failed[j].agent {
			return failed[i].agent < failed[j].agent
		}
		return naturalLess(failed[i].name, failed[j].name)
	})
	var errs []error
	told := map[string]bool{}
	for _, k := range failed {
		err := fmt.Errorf("%s: %w", mailboxPath(k.agent, mailbox.Outbox, k.name), r.pending[k].get().lastErr)
		if n := behind[k.agent]; n > 0 && !told[k.agent] {
			told[k.agent] = true
			err = fmt.Errorf("%w (%d later %s of %s %s behind it, in its outbox: one sender's files go in order)", err, n, plural(n, "file", "files"), k.agent, plural(n, "waits", "wait"))
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("%d %s could not be routed after %d attempts; %s in the outbox: %w", len(errs), plural(len(errs), "file", "files"), maxAttempts, plural(len(errs), "it stays", "they stay"), errors.Join(errs...))
}

// unusable is the error that ends a run until idle while mailboxes
// cannot be used: the messages they hold, or that go to them, wait.
func (r *Runner) unusable() error {
	if len(r.troubles) == 0 {
		return nil
	}
	agents := make([]string, 0, len(r.troubles))
	for a := range r.troubles {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	var errs []error
	for _, a := range agents {
		errs = append(errs, fmt.Errorf("%s: %s", a, r.troubles[a]))
	}
	return fmt.Errorf("%d %s cannot be used; what waits in %s, or for %s, is not routed: %w", len(agents), plural(len(agents), "mailbox", "mailboxes"), plural(len(agents), "it", "them"), plural(len(agents), "it", "them"), errors.Join(errs...))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// event notes an outbox file named by a file event, or that the
// configuration may have changed.
func (r *Runner) event(ev fsnotify.Event) {
	if r.configEvent(ev.Name) {
		if ev.Op != fsnotify.Chmod {
			r.config.dirty = true
		}
		return
	}
	if agent, ok := r.outboxes[ev.Name]; ok && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		r.outboxGone(agent) // the outbox itself: its watch is gone
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		r.leftOutbox(ev.Name)
		return
	}
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
		return
	}
	agent, ok := r.outboxes[filepath.Dir(ev.Name)]
	if !ok {
		return
	}
	name := filepath.Base(ev.Name)
	if strings.HasPrefix(name, ".") {
		r.dotted[agent] = true // perhaps an editor's lock: see editing
	}
	if mailbox.IsScratch(name) {
		return
	}
	if r.ownReason(agent, name, func(base string) bool {
		_, err := os.Lstat(filepath.Join(filepath.Dir(ev.Name), base))
		return err == nil
	}) {
		return // the router's own: why the file beside it was refused where it is
	}
	if r.strayReason(agent, name) {
		return
	}
	if r.pastListing(agent, name) {
		return // listed again when the window reaches it
	}
	p := r.note(fileKey{agent, name})
	if ev.Has(fsnotify.Write) && p.seen {
		p.sinceNs = r.opts.Now().UnixNano() // still being written: settle again
	}
}

// note records an outbox file as pending, once.
func (r *Runner) note(k fileKey) *pending {
	p := r.pending[k]
	if p == nil {
		p = &pending{}
		r.pending[k] = p
	}
	return p
}

// scan lists every outbox and notes the files it holds.
func (r *Runner) scan() {
	for agent := range r.agents {
		r.scanAgent(agent)
	}
}

// scanAgent lists an agent's outbox and notes the files it holds. A
// missing outbox is made again (see repair).
func (r *Runner) scanAgent(agent string) {
	if r.troubles[agent] != "" {
		delete(r.edges, agent)
		return // not used until it is mended: see repair
	}
	err := r.agents[agent].CheckDirs(mailbox.Outbox)
	var names []string
	if err == nil {
		names, err = r.agents[agent].NamesUnsorted(mailbox.Outbox)
	}
	var nd *mailbox.NotDirError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &nd) {
		r.repairSoon()
		return
	}
	if err != nil {
		r.log.Error("listing outbox", "agent", agent, "err", err)
		return
	}
	var reasons map[string]bool // files with a reason beside them
	r.dotted[agent] = false
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			r.dotted[agent] = true
		}
		if base, ok := strings.CutSuffix(n, mailbox.ReasonSuffix); ok {
			if reasons == nil {
				reasons = make(map[string]bool)
			}
			reasons[base] = true
		}
	}
	r.cut(agent, names)
	var listed map[string]bool // names, when some are reasons
	if reasons != nil {
		listed = make(map[string]bool, len(names))
		for _, n := range names {
			listed[n] = true
		}
	}
	for _, n := range names {
		if mailbox.IsScratch(n) {
			continue
		}
		if r.ownReason(agent, n, func(base string) bool { return listed[base] }) {
			if base := strings.TrimSuffix(n, mailbox.ReasonSuffix); !listed[base] {
				r.dropOrphan(agent, base)
			}
			continue // why the file beside it was refused where it is
		}
		if reasons != nil && r.strayReason(agent, n) {
			continue
		}
		if r.pastListing(agent, n) {
			continue // not kept: listed again when the window reaches it
		}
		k := fileKey{agent, n}
		if r.inPlace[k] {
			// Refused where it is: looked at again once it is a file of
			// its own.
			if info, err := os.Lstat(r.agents[agent].Path(mailbox.Outbox, n)); err == nil && mailbox.Linked(info) {
				continue
			}
			delete(r.inPlace, k)
			delete(r.refusedNow, k)
		}
		p := r.note(k)
		p.reasoned = reasons[n]
	}
}

// dropOrphanReasons removes the reasons left in the agents' rejected/
// by the files a person moved out of them (fixed, back into the outbox:
// see mailbox.Dir.DropOrphanReasons), when the runner starts and at every
// rescan: housekeeping, not routing, so not at every listing. An agent's
// rejected/ is read only when it changed since the last look (its
// modification time); a time too recent to tell a later change by is
// looked at again. A mailbox that cannot be used (a directory replaced
// by a link) is left alone.
func (r *Runner) dropOrphanReasons() {
	for agent, box := range r.agents {
		if r.troubles[agent] != "" || box.CheckDirs(mailbox.Rejected) != nil {
			continue
		}
		info, err := os.Stat(box.Path(mailbox.Rejected, "."))
		if err != nil || info.ModTime().Equal(r.rejectedAt[agent]) {
			continue
		}
		removed, err := box.DropOrphanReasons()
		if err != nil {
			r.log.Warn("cannot remove the reason of a file moved out of rejected/", "agent", agent, "err", err)
			continue
		}
		for _, n := range removed {
			r.log.Info("removed the reason of a file moved out of rejected/", "agent", agent, "file", n)
		}
		if len(removed) > 0 {
			if info, err = os.Stat(box.Path(mailbox.Rejected, ".")); err != nil {
				continue
			}
		}
		if time.Since(info.ModTime()) > time.Second {
			r.rejectedAt[agent] = info.ModTime()
		}
	}
}

// ownReason reports whether an outbox file is the router's own, never a
// message: the reason it wrote beside a file it refused where it is (see
// refuseInPlace), "<name>.reason" beside "<name>" (there says whether
// the outbox holds that name), or beside a file this runner refused
// where it is that has left the outbox since. Any other name ending in
// .reason (one a person chose, with no file of the base name beside it)
// is a file like any other.
func (r *Runner) ownReason(agent, name string, there func(base string) bool) bool {
	_, ok := mailbox.ReasonOf(name, func(base string) bool { return r.inPlace[fileKey{agent, base}] || there(base) })
	return ok
}

// leftOutbox removes the reason of a file this runner refused where it
// was, told by a file event that the file left its outbox.
func (r *Runner) leftOutbox(path string) {
	agent, ok := r.outboxes[filepath.Dir(path)]
	if !ok || !r.inPlace[fileKey{agent, filepath.Base(path)}] {
		return
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		r.dropOrphan(agent, filepath.Base(path))
	}
}

// strayReason removes a reason the router wrote beside a file that left
// the outbox while no runner watched it (see mailbox.Dir.StrayReason),
// and reports whether name was one: it is no message, and its file is
// gone.
func (r *Runner) strayReason(agent, name string) bool {
	if !strings.HasSuffix(name, mailbox.ReasonSuffix) {
		return false
	}
	base, ok := r.agents[agent].StrayReason(name)
	if !ok {
		return false
	}
	r.dropOrphan(agent, base)
	r.log.Info("removed the reason of a file that has left the outbox", "agent", agent, "file", name)
	return true
}

// dropOrphan removes the reason of a file this runner refused where it
// was, once that file has left the outbox (removed, not mended): left
// alone, the reason would be a file with no reason beside it.
func (r *Runner) dropOrphan(agent, base string) {
	delete(r.inPlace, fileKey{agent, base})
	delete(r.refusedNow, fileKey{agent, base})
	if err := r.agents[agent].Unexplain(mailbox.Outbox, base); err != nil {
		r.log.Warn("cannot remove a reason file", "agent", agent, "file", base+mailbox.ReasonSuffix, "err", err)
	}
}

// edge is where a sender's listed backlog was cut: name is the least
// file named by its id left out, at the time in that id.
type edge struct {
	name string
	at   time.Time
}

// cut keeps, of a listing of an agent's outbox that holds more than
// lookWindow files named by their id, the lookWindow least (ids sort in
// time order) and records the least of the others as the agent's edge:
// a backlog of 100,000 files costs the router a window of them, not an
// entry each. The files left out are listed again once the window is
// routed (see refill).
func (r *Runner) cut(agent string, names []string) {
	delete(r.edges, agent)
	var named []string
	for _, n := range names {
		if idNamed(n) {
			named = append(named, n)
		}
	}
	if len(named) <= lookWindow {
		return
	}
	_, next := least(named, lookWindow)
	id, _ := mailbox.IDFromName(next)
	if at, _, err := mailbox.ParseID(id); err == nil {
		r.edges[agent] = edge{name: next, at: at}
	} // else a date no calendar has: every file is kept
}

// pastListing reports whether a file is named by an id at or past its
// sender's edge: left out of the window, it waits unlisted.
func (r *Runner) pastListing(agent, name string) bool {
	e, ok := r.edges[agent]
	return ok && name >= e.name && idNamed(name)
}

// refill lists again the outbox of each sender whose window is routed
// while files were left out of it, for the next window.
func (r *Runner) refill() {
	if len(r.edges) == 0 {
		return
	}
	drained := make(map[string]bool, len(r.edges))
	for agent := range r.edges {
		drained[agent] = true
	}
	for k := range r.pending {
		if drained[k.agent] && idNamed(k.name) && !r.pastListing(k.agent, k.name) {
			delete(drained, k.agent)
		}
	}
	for agent := range drained {
		r.scanAgent(agent)
	}
}

// candidate is an outbox file that is ready to be routed or rejected.
type candidate struct {
	fileKey
	info     fs.FileInfo
	sent     time.Time          // when it was sent: see sendTime
	idTime   time.Time          // the time in its name, for a file named by its id
	refusal  *workspace.Refusal // set when the file is refused without being read
	read     mailbox.FileID     // the file that was read (see mailbox.Snapshot)
	linked   bool               // has other hard links: refused where it is
	reasoned bool               // see pending.reasoned
	unsure   bool               // see pending.unsure
	notText  bool               // read, and refused as no text (mailbox.ErrBinary): no editor mends it
	again    bool               // refused as routed already (routedAlready): moved back as it was, refused again
}

// routePending looks at every pending file and routes, in batches and in
// sending order, those that are complete. A file still being written holds
// back its sender's later files, so that one sender's messages arrive in
// the order they were sent. It returns when to look again (zero when
// nothing waits).
func (r *Runner) routePending(ctx context.Context) (next time.Time, err error) {
	defer func() {
		r.noteFailing()
		if r.infoUnwritten {
			// What parley status reads is written again in a second.
			if at := r.opts.Now().Add(time.Second); next.IsZero() || at.Before(next) {
				next = at
			}
		}
	}()
	r.refill()
	if len(r.pending) == 0 {
		return time.Time{}, nil
	}
	now := r.opts.Now()
	settle := r.ws().Config.Router.Settle
	maxSize := r.ws().Config.Router.MaxMessageSize
	later := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	var ready, quiet []candidate
	blocked := make(map[string]time.Time) // agent -> earliest file it waits for
	holders := make(map[string]fileKey)   // agent -> that file
	block := func(c candidate) {
		if b, ok := blocked[c.agent]; !ok || c.sent.Before(b) {
			blocked[c.agent], holders[c.agent] = c.sent, c.fileKey
		}
	}
	// The files that held their senders back at the last look are looked
	// at first: a file seen before, after one that still holds its sender
	// back, waits, and is not looked at again (no stat, no lease) until
	// that one is routed. Thousands of files waiting behind one being
	// written cost nothing each time the router looks.
	keys, edges, open := r.window()
	r.windowed = edges != nil
	if open {
		later(now) // the rest of a backlog, once this part is routed
	} else if edges != nil {
		later(now.Add(settle)) // its listing failed: tried again
	}
	// A file written by hand after the edge of its sender's window waits
	// for the next window.
	pastEdge := func(k fileKey, sent time.Time) bool {
		e, ok := edges[k.agent]
		return ok && !idNamed(k.name) && !sent.Before(e)
	}
	var first []candidate
	for _, k := range r.holders {
		if p := r.pending[k]; p != nil {
			r.look(k, p, now, settle, maxSize, &ready, &first, block, later)
		}
	}
	for _, c := range first {
		open, known := r.beingWritten(r.agents[c.agent].Path(mailbox.Outbox, c.name))
		if open {
			block(c) // still open for writing: its sender's later files wait
			later(now.Add(settle))
			continue
		}
		quiet = append(quiet, r.unsure(c, !known))
	}
	lookAt := func(k fileKey, p *pending) {
		if r.holders[k.agent] == k {
			return // looked at above
		}
		if b, ok := blocked[k.agent]; ok && p.seen && !p.modified().Before(b) {
			return // waits behind an earlier file of its sender
		}
		if p.seen && pastEdge(k, p.modified()) {
			return
		}
		r.look(k, p, now, settle, maxSize, &ready, &quiet, block, later)
	}
	if keys == nil {
		for k, p := range r.pending {
			lookAt(k, p)
		}
	} else {
		for _, k := range keys {
			lookAt(k, r.pending[k])
		}
	}
	r.holders = holders
	if edges != nil {
		quiet = slices.DeleteFunc(quiet, func(c candidate) bool { return pastEdge(c.fileKey, c.sent) })
		ready = slices.DeleteFunc(ready, func(c candidate) bool { return pastEdge(c.fileKey, c.sent) })
	}
	r.routeQuiet(quiet, &ready, blocked, block, later, now, settle)
	// Route in sending order; a sender's files after one it waits for wait
	// too.
	sort.Slice(ready, func(i, j int) bool { return before(ready[i], ready[j]) })
	kept := ready[:0]
	for _, c := range ready {
		if b, ok := blocked[c.agent]; ok && c.refusal == nil && !c.sent.Before(b) {
			continue
		}
		kept = append(kept, c)
	}
	ready = kept
	wait, err := r.routeBatches(ctx, ready, now, settle)
	if !wait.IsZero() {
		later(wait)
	}
	if err != nil || ctx.Err() != nil {
		return next, err
	}
	// Files that failed just now are tried again later.
	for _, p := range r.pending {
		if at := p.get().retryAt; at.After(now) {
			later(at)
		}
	}
	return next, nil
}

// look stats a pending file and sorts it: ready to route (or refuse),
// quiet (unchanged for the settle time: ready unless a writer has it
// open, see routeQuiet), or holding its sender back (block), with when to
// look again (later).
func (r *Runner) look(k fileKey, p *pending, now time.Time, settle time.Duration, maxSize int64, ready, quiet *[]candidate, block func(candidate), later func(time.Time)) {
	if r.troubles[k.agent] != "" {
		delete(r.pending, k) // listed again once its mailbox is mended
		return
	}
	info, err := os.Lstat(r.agents[k.agent].Path(mailbox.Outbox, k.name))
	if err != nil {
		delete(r.pending, k) // gone: routed, or taken back by its writer
		return
	}
	c := candidate{fileKey: k, info: info, reasoned: p.reasoned}
	if id, ok := mailbox.IDFromName(k.name); ok {
		c.idTime, _, _ = mailbox.ParseID(id)
	}
	c.sent = sendTime(c)
	if info.Mode()&fs.ModeSymlink != 0 {
		c.linked = true // refused where it is, never followed
		*ready = append(*ready, c)
		return
	}
	if err := mailbox.CheckFile(info, maxSize); err != nil {
		c.refusal = &workspace.Refusal{Reason: err.Error()}
		*ready = append(*ready, c)
		return
	}
	if mailbox.Links(info) > 1 {
		// A hard link: refused where it is, once it has been one for the
		// settle time (a program that delivers by link and unlink is not
		// caught in between).
		if at := mailbox.ChangeTime(info).Add(settle); now.Before(at) {
			block(c)
			later(at)
			return
		}
		c.linked = true
		*ready = append(*ready, c)
		return
	}
	if at := p.get().retryAt; now.Before(at) {
		block(c) // failed before: retried later, in order
		later(at)
		return
	}
	wasSettled := settled(p, info, now, settle)
	p.observe(info, now)
	if idNamed(k.name) {
		*ready = append(*ready, c)
		return
	}
	if wasSettled && !r.editing(k, p) {
		*quiet = append(*quiet, c) // unless a writer has it open
		return
	}
	block(c)
	at := p.since().Add(settle)
	if !at.After(now) {
		at = now.Add(settle)
	}
	later(at)
}

// routeQuiet adds to ready the files that stopped changing, unless a
// writer still has one open. Asking the kernel costs a lease per file:
// it is asked, in sending order, only of files no earlier file of their
// sender waits for.
func (r *Runner) routeQuiet(quiet []candidate, ready *[]candidate, blocked map[string]time.Time, block func(candidate), later func(time.Time), now time.Time, settle time.Duration) {
	sort.Slice(quiet, func(i, j int) bool { return before(quiet[i], quiet[j]) })
	for _, c := range quiet {
		if b, ok := blocked[c.agent]; ok && !c.sent.Before(b) {
			continue // waits behind an earlier file
		}
		open, known := r.beingWritten(r.agents[c.agent].Path(mailbox.Outbox, c.name))
		if open {
			block(c)
			later(now.Add(settle)) // settled in time, but still open for writing
			continue
		}
		*ready = append(*ready, r.unsure(c, !known))
	}
}

// unsure marks a file whose writer cannot be known (see beingWritten):
// it is never replaced.
func (r *Runner) unsure(c candidate, unsure bool) candidate {
	c.unsure = unsure
	if p := r.pending[c.fileKey]; p != nil {
		p.unsure = unsure
	}
	return c
}

// before orders candidates by sending time. Within one tick of the file
// clock, files named by their id come first, in the order of the time in
// their ids (to the microsecond, whoever sent them), then the others by
// sender and name in natural order ("note-2" before "note-10").
func before(a, b candidate) bool {
	if !a.sent.Equal(b.sent) {
		return a.sent.Before(b.sent)
	}
	if a.idTime.IsZero() != b.idTime.IsZero() {
		return !a.idTime.IsZero()
	}
	if !a.idTime.Equal(b.idTime) {
		return a.idTime.Before(b.idTime)
	}
	if a.agent != b.agent {
		return a.agent < b.agent
	}
	return naturalLess(a.name, b.name)
}

// sendTime is when a file was sent, as far as the router can tell: when it
// was last written. File times are only as fine as the kernel's clock tick
// (a few milliseconds); files of one sender written in the same tick go in
// name order, which for files named by their id is the order they were
// sent in.
func sendTime(c candidate) time.Time {
	return c.info.ModTime()
}

// lookWindow is how many files named by their id the router looks at, per
// sender, in one look at a backlog: their names say their order, so the
// rest wait unread (no stat, and no entry in pending: see cut), and the
// first messages of 100,000 pending are delivered as soon as a few
// thousand were looked at, not all.
const lookWindow = 2048

// window chooses the pending files to look at now: every file of a sender
// with at most lookWindow files named by their id before its edge (see
// cut), and otherwise that sender's first lookWindow id-named files in id
// order, and its files written by hand. keys is nil when every pending
// file is to be looked at. edges holds, for each sender with files left
// out, the time in the first id left out: its files written by hand at or
// after it wait for the next window, so that they keep their place among
// the ids. open says whether a sender with files left out has files in
// this window (none when listing its outbox again failed).
func (r *Runner) window() (keys []fileKey, edges map[string]time.Time, open bool) {
	if len(r.pending) <= lookWindow && len(r.edges) == 0 {
		return nil, nil, false
	}
	named := make(map[string][]string)
	for k := range r.pending {
		if !idNamed(k.name) {
			keys = append(keys, k)
		} else if !r.pastListing(k.agent, k.name) {
			named[k.agent] = append(named[k.agent], k.name)
		}
	}
	for agent, e := range r.edges {
		if edges == nil {
			edges = make(map[string]time.Time)
		}
		edges[agent] = e.at
		open = open || len(named[agent]) > 0
	}
	for agent, names := range named {
		if len(names) > lookWindow {
			first, next := least(names, lookWindow) // ids sort in time order
			id, _ := mailbox.IDFromName(next)
			if at, _, err := mailbox.ParseID(id); err == nil {
				if edges == nil {
					edges = make(map[string]time.Time)
				}
				if e, ok := edges[agent]; !ok || at.Before(e) {
					edges[agent] = at
				}
				names, open = first, true
			} // else a date no calendar has: every file is looked at
		}
		for _, n := range names {
			keys = append(keys, fileKey{agent, n})
		}
	}
	if edges == nil {
		return nil, nil, false
	}
	return keys, edges, open
}

// least returns the n least of names (more than n, in no order), and the
// least of the others. A heap of the n least so far turns most names away
// with one comparison: cheaper than sorting them all.
func least(names []string, n int) (first []string, next string) {
	h := slices.Clone(names[:n+1]) // a max-heap of the n+1 least so far
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && h[c+1] > h[c] {
				c++
			}
			if h[i] >= h[c] {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, name := range names[n+1:] {
		if name < h[0] {
			h[0] = name
			down(0)
		}
	}
	// The greatest of the n+1 is the least of the others.
	next = h[0]
	h[0] = h[len(h)-1]
	return h[:n], next
}

// naturalLess compares names with runs of digits compared as numbers.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// observe records what a look at the file found; a change restarts the
// settle time.
func (p *pending) observe(info fs.FileInfo, now time.Time) {
	if !p.seen || p.size != info.Size() || p.modifiedNs != info.ModTime().UnixNano() {
		p.seen, p.size, p.modifiedNs, p.sinceNs = true, info.Size(), info.ModTime().UnixNano(), now.UnixNano()
	}
}

// settled reports whether a file has stopped changing: untouched for the
// settle time, and, when the runner looked before, unchanged since.
func settled(p *pending, info fs.FileInfo, now time.Time, settle time.Duration) bool {
	mod := info.ModTime()
	if !p.seen {
		// First sight: an old file (a rescan at start) is complete.
		return !mod.After(now) && now.Sub(mod) >= settle
	}
	if p.size != info.Size() || p.modifiedNs != mod.UnixNano() {
		return false
	}
	return now.Sub(p.since()) >= settle && (mod.After(now) || now.Sub(mod) >= settle)
}

// editing reports whether an editor's swap or lock file is beside an
// outbox file (see mailbox.Dir.EditorLock): a person is editing it, and a
// draft they saved is not a message yet. It is looked at again every
// settle time until the lock is gone.
func (r *Runner) editing(k fileKey, p *pending) bool {
	if dotted, known := r.dotted[k.agent]; known && !dotted {
		// No name starting with a dot in the outbox at its last listing,
		// nor in an event since: no editor's lock to look for (five
		// system calls fewer for each file written by hand).
		p.editing = false
		return false
	}
	lock, ok := r.agents[k.agent].EditorLock(mailbox.Outbox, k.name)
	if ok && !p.editing {
		r.log.Info("being edited; waiting for the editor to let go of it", "agent", k.agent, "file", k.name, "lock", lock)
	}
	p.editing = ok
	return ok
}

// beingWritten reports whether a process still has the file open for
// writing (a program streaming a message into the outbox, pausing longer
// than the settle time), and whether that could be known at all: not on
// a filesystem without leases (NFS, FUSE, 9p, SMB; macOS), nor for a file
// that belongs to another user. Where it cannot, the file is taken once
// settled, but never replaced (see unsure).
func (r *Runner) beingWritten(path string) (open, known bool) {
	if r.writing != nil {
		return r.writing(path), true
	}
	probe := mailbox.BeingWritten
	if r.probe != nil {
		probe = r.probe
	}
	open, err := probe(path)
	return open, err == nil
}

// idNamed reports whether a file is named "<id>.md". Such files are
// written the Maildir way (in tmp/, then renamed), so one whose header
// carries the same id is complete as soon as it appears.
func idNamed(name string) bool {
	_, ok := mailbox.IDFromName(name)
	return ok
}
