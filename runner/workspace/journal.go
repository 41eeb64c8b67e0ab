package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/parley-dev/parley/mailbox"
)

// Outcomes: what became of a message, the outcome of a journal line. The
// router writes delivered and rejected; the runner handled, dead, nudged
// and stopped; commands a person runs write the others. Entry says which
// fields each outcome fills.
const (
	// Delivered: every recipient has the message. ID, From (the sender),
	// To (every recipient), Type, Signal, File (its name in the outbox),
	// Already (recipients that held it before: a re-route after a crash),
	// Warnings, Note.
	Delivered = "delivered"
	// Refused: the file was moved to its sender's rejected/, with the
	// reason beside it. From, File, Path (where it is now), Reason, Line
	// and Field; ID, Type and Signal when the file could be read. A link
	// in an outbox is refused where it is instead, its reason beside it
	// there: its Path is in the outbox (see Entry.InPlace).
	Refused = "rejected"
	// Handled: an agent's driver finished a message (cur/ -> done/) and
	// what it said is on its way. Agent (who handled it), ID, From, Type,
	// Signal (the message's), File, Path, Attempts; Note when a runner
	// finished it after a restart.
	Handled = "handled"
	// GivenUp: an agent's driver failed on a message as often as it may,
	// or could not run at all; the message is in dead/, with the reason
	// beside it. Agent, ID, From, Type, Signal, File, Path, Attempts,
	// Reason.
	GivenUp = "dead"
	// Nudged: an agent did not answer in time and was sent a nudge.
	// Agent (the silent one), ID, From, Type (of the message it did not
	// answer), Sent (the nudge's id), Note.
	Nudged = "nudged"
	// Stopped: an agent approved a request to shut down: its driver takes
	// no more messages in this run. Agent, Note.
	Stopped = "stopped"
	// Answered: a person answered a request with parley approve or
	// reject. Agent (who answered), ID, From, Type (the request's), Path
	// (the request, now in done/), Sent (the answer's id), Note (approved
	// or refused, and the feedback).
	Answered = "answered"
	// MarkedDone: a person marked a message handled (inbox/ -> done/).
	// Agent, ID, From, Type, File, Path, Note.
	MarkedDone = "done"
	// Retried: a rejected or dead message was put back to go again: a
	// rejected file into its sender's outbox, a dead message into its
	// agent's inbox. Agent (whose mailbox), ID, File, Path (where it is
	// now), Reason (why it had been refused or given up), Note.
	Retried = "retried"
	// LoopStopped: the runner stopped agents answering each other in a
	// loop. Agent (whose message would have gone on), ID, From, To, Type,
	// Reason (what repeated), Note (what was done about it).
	LoopStopped = "loop"
	// ModelCalled: an openai agent called its endpoint while handling a
	// message. Agent, ID (the message handled), Model, Session, TokensIn
	// and TokensOut (the endpoint's usage figures), Note (what the model
	// answered: tool calls, a message, or a message refused and why:
	// "answer refused: ..."); Reason when the call failed. While the
	// endpoint cannot be used (an outage), only the outage's first
	// failed call and the call that ends it are journaled: that one's
	// FailedCalls counts the failed calls between.
	ModelCalled = "model"
	// ToolCalled: an openai agent's model called a tool (roll_dice...),
	// or a person changed the campaign at the command line (parley
	// character damage, parley inventory use, parley tool call, parley
	// roll), journaled alike by ToolCall. Agent (who did it), ID (the
	// message handled; none at the command line), Tool, Args (as the
	// model wrote them; the command's, as the tool takes them), Result
	// (the tool's JSON answer; for an answer that is a whole character
	// sheet, only what the call changed or read), or Reason when the
	// tool failed: every die rolled and every hit point lost is on
	// record.
	ToolCalled = "tool"
	// Forwarded: the bridge published a message for an agent that lives
	// in another workspace, and the stream acknowledged it; the copy moved
	// from the agent's inbox/ to done/. Agent (the remote recipient),
	// Workspace (where it lives), ID, From, Type, Signal.
	Forwarded = "forwarded"
	// Received: the bridge delivered a message that came from another
	// workspace into the inbox of an agent of this one. ID, From (the
	// sender, an agent of that workspace), To (the agent here), Workspace
	// (where it came from), Type, Signal; Note when the agent held it
	// already (a redelivery).
	Received = "received"
	// Bounced: the bridge refused a message that came from another
	// workspace, or gave up delivering it; it is kept in the recipient's
	// dead/ (or .parley/bridge/refused/ when the recipient is no agent
	// here), with the reason beside it. ID, From, To, Workspace, Path,
	// Reason, Attempts.
	Bounced = "bounced"
)

// ToolCall is the journal's line of a tool call (ToolCalled): agent
// called tool with args (JSON) while handling the message id ("" for
// none), and it answered result (JSON), or failed with err. The model's
// tool calls (an openai agent's) and a person's changes to a campaign at
// the command line are journaled by it, alike, so that parley log
// tells the fight whoever ran it. Time is left to the writer.
func ToolCall(agent, id, tool, args, result string, err error) Entry {
	e := Entry{Outcome: ToolCalled, Agent: agent, ID: id, Tool: tool, Args: args}
	if err != nil {
		e.Reason = err.Error()
	} else {
		e.Result = result
	}
	return e
}

// Outcomes lists every outcome, in the order a message meets them.
var Outcomes = []string{Delivered, Refused, Handled, GivenUp, Nudged, Stopped, Answered, MarkedDone, Retried, LoopStopped, ModelCalled, ToolCalled, Forwarded, Received, Bounced}

// Entry is one line of the journal (.parley/journal.jsonl): one thing that
// became of a message, written once it happened. The constants above say
// which fields each outcome fills; fields left empty are left out of the
// line.
type Entry struct {
	Time string `json:"time"` // when it happened (UTC, mailbox.TimeFormat)
	// ID is the message's id; empty when the file could not be read.
	ID      string   `json:"id,omitempty"`
	From    string   `json:"from,omitempty"` // the message's sender (for a routed file, the agent whose outbox held it)
	To      []string `json:"to,omitempty"`   // every recipient
	Type    string   `json:"type,omitempty"` // the message's type
	Signal  string   `json:"signal,omitempty"`
	Skill   string   `json:"skill,omitempty"` // the skill that checked it, name@hash of its file
	Outcome string   `json:"outcome"`         // one of Outcomes
	// Agent is the agent the outcome happened to, when it is not the
	// sender of a routed file: who handled the message, gave it up, was
	// nudged, stopped, answered.
	Agent  string `json:"agent,omitempty"`
	Reason string `json:"reason,omitempty"` // why it was rejected ("file:line: field: reason") or given up
	Line   int    `json:"line,omitempty"`   // the line of the file the refusal is about
	Field  string `json:"field,omitempty"`  // the field the refusal is about
	File   string `json:"file,omitempty"`   // the file's name: in the outbox for a routed file, else "<id>.md"
	// Path is where the file is after the outcome, relative to the
	// workspace root (mailboxes/bram/rejected/...), for outcomes that
	// move it out of the way: rejected, handled, dead, answered, done,
	// retried.
	Path string `json:"path,omitempty"`
	// Was is, for a retried entry, where the file was before it was put
	// back, as Path says it (mailboxes/bram/rejected/STAMP-FILE,
	// mailboxes/bram/dead/ID.md): which refusal or dead letter went
	// again, when two had the same name.
	Was      string   `json:"was,omitempty"`
	Attempts int      `json:"attempts,omitempty"` // how often the driver tried
	Sent     string   `json:"sent,omitempty"`     // the id of the message parley sent for it: a nudge, an answer
	Already  []string `json:"already,omitempty"`  // recipients that held it already (a re-route after a crash)
	// Warnings are what the protocol had to say about a message it let
	// through: a deprecated or wrong-phase type, an informal tag.
	Warnings []string `json:"warnings,omitempty"`
	// Note is what the runner did about a message: an agent stopped
	// after approving its shutdown, a refusal, a session ended.
	Note string `json:"note,omitempty"`
	// Model, Session, TokensIn and TokensOut are a model call's (see
	// ModelCalled); Tool, Args and Result a tool call's (ToolCalled).
	Model     string `json:"model,omitempty"`
	Session   string `json:"session,omitempty"`
	TokensIn  int64  `json:"tokens_in,omitempty"`
	TokensOut int64  `json:"tokens_out,omitempty"`
	// Interrupted marks a model call cut short by the runner stopping
	// (parley run interrupted) while it was in flight: the endpoint may
	// have got it, answered and counted it; its tokens are unknown here
	// (0). It counts as a call made, and one that got no answer.
	Interrupted bool `json:"interrupted,omitempty"`
	// FailedCalls, on the model call that ends an outage of its endpoint
	// (see ModelCalled), counts the outage's failed calls not journaled
	// one by one: calls made, and failed, besides this one.
	FailedCalls int    `json:"failed_calls,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Args        string `json:"args,omitempty"`
	Result      string `json:"result,omitempty"`
	// Workspace is the other workspace of a bridged message: where it
	// came from (Received, Bounced) or went (Forwarded).
	Workspace string `json:"workspace,omitempty"`
}

// Arrived reports whether the entry is of a message put into this
// workspace's inboxes: delivered by the router, or received over the
// bridge from another workspace.
func (e Entry) Arrived() bool { return e.Outcome == Delivered || e.Outcome == Received }

// InPlace reports whether the entry is a refusal of a file left where it
// was, in its outbox, with its reason beside it (NAME.reason), not moved
// to rejected/: a symbolic or hard link. The router has always written
// such a refusal's Path in the outbox, so journal lines of every version
// tell it.
func (e Entry) InPlace() bool {
	if e.Outcome != Refused {
		return false
	}
	_, state, _, ok := SplitMailboxPath(e.Path)
	return ok && state == mailbox.Outbox
}

// JournalError is a journal line that could not be read; reading goes on
// after it.
type JournalError struct {
	Line int
	Err  error
}

func (e *JournalError) Error() string { return fmt.Sprintf("journal line %d: %v", e.Line, e.Err) }

// ReadJournal calls fn for every entry of the journal at path, in order.
// Lines that are not entries (a line cut short by a crash) are skipped and
// returned together, as *JournalError values, after the whole file is read.
// A missing journal has no entries.
func ReadJournal(path string, fn func(Entry) error) error {
	var all JournalFilter
	return all.Read(path, func(e Entry, _ []byte) error { return fn(e) })
}

// FollowJournal calls fn for every entry of the journal, then for every
// entry appended later, until ctx is done. It returns nil when ctx ends it.
func FollowJournal(ctx context.Context, path string, fn func(Entry) error) error {
	var all JournalFilter
	return all.Follow(ctx, path, func(e Entry, _ []byte) error { return fn(e) }, nil)
}

// JournalFilter selects entries of the journal. Its zero value selects
// every entry; each field set narrows the selection, and a list selects
// an entry that has any of its values.
type JournalFilter struct {
	Agents   []string  // the sender, a recipient, or the agent the outcome happened to
	Types    []string  // the message's type
	Outcomes []string  // see Outcomes
	Signals  []string  // the signal the message carries
	IDs      []string  // the message's id
	Since    time.Time // at or after this time; zero: from the start
}

// Match reports whether the filter selects e. An entry whose time cannot
// be read is not selected by a filter with Since.
func (f *JournalFilter) Match(e *Entry) bool {
	if len(f.Agents) > 0 && !slices.Contains(f.Agents, e.From) && !slices.Contains(f.Agents, e.Agent) && !slices.ContainsFunc(e.To, func(to string) bool { return slices.Contains(f.Agents, to) }) {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) {
		return false
	}
	if len(f.Outcomes) > 0 && !slices.Contains(f.Outcomes, e.Outcome) {
		return false
	}
	if len(f.Signals) > 0 && !slices.Contains(f.Signals, e.Signal) {
		return false
	}
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, e.ID) {
		return false
	}
	if !f.Since.IsZero() {
		t, err := time.Parse(mailbox.TimeFormat, e.Time)
		if err != nil || t.Before(f.Since) {
			return false
		}
	}
	return true
}

// Read calls fn for every entry of the journal at path that the filter
// selects, in order, with the line it was read from (valid during the
// call only). Lines that are not entries (a line cut short by a crash)
// are skipped and returned together, as *JournalError values, after the
// whole file is read. A missing journal has no entries.
//
// Reading streams: memory does not grow with the journal. A line that
// cannot match is skipped without being decoded (see skip), and lines
// written the way parley writes them are decoded without reflection
// (decodeEntry), so a journal of 100,000 lines is read in a fraction of
// a second.
func (f *JournalFilter) Read(path string, fn func(e Entry, line []byte) error) error {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = f.compile().read(file, 0, fn)
	return err
}

// ReadInTimeOrder is Read, the entries in the order of their times, the
// entries of one time in the order they were read. It is the one place
// that decides the order a journal is shown in: parley log, the first
// read of parley log --follow (Follow) and the web Timeline's
// (ReadPositionInTimeOrder) read it so.
//
// A journal is written nearly in that order: the runner stamps its lines
// as it writes them, but commands, an openai agent and the bridge append
// lines they stamped a moment before, so a line may come a few
// microseconds after one later than it. Reading streams all the same:
// the entries go through a window of OrderWindow entries, sorted, and
// the earliest comes out as each later one comes in, so memory does not
// grow with the journal and the first entry comes out once the window is
// full. That sorts exactly every line within OrderWindow lines of its
// place. Whether all are is known beforehand: a first pass reads each
// line's time only (no entry is decoded, nothing is kept but the times
// of a window of lines), a few milliseconds for 100,000 lines. A line
// further from its place begins a run: a journal git merged with its
// union driver (one clone's lines, then the other's) is two runs, or
// more after more merges, each read through a window of its own, and
// merged (see merge). One of more than maxRuns runs (lines moved by
// hand all over) is held whole, to sort.
func (f *JournalFilter) ReadInTimeOrder(path string, fn func(e Entry, line []byte) error) error {
	_, err := f.ReadPositionInTimeOrder(path, fn)
	return err
}

// ReadPositionInTimeOrder is ReadInTimeOrder, and returns the position
// after the journal's last complete line, as ReadPosition does: what
// FollowFrom reads after it comes in the order it is appended.
func (f *JournalFilter) ReadPositionInTimeOrder(path string, fn func(e Entry, line []byte) error) (JournalPosition, error) {
	return f.compile().readInTimeOrder(path, fn, nil)
}

// OrderWindow is how many entries reading in time order holds at most
// to sort a journal whose lines are a little out of order (see
// ReadInTimeOrder). The lines parley's writers put out of order are a
// few lines from their place (at most 3 in a dev-pipeline run of 91,000
// lines, before the runner stamped its lines as it wrote them).
const OrderWindow = 1024

// journalOrder is how the lines of a journal stand to the order of their
// times.
type journalOrder int

const (
	inOrder     journalOrder = iota // every line at or after the one before
	nearOrder                       // every line within OrderWindow lines of its place
	mergedOrder                     // runs of lines near their place (see scanOrder)
	outOfOrder                      // lines further from their place, in more than maxRuns runs
)

// orderStats, when a test asks for them, count what readInTimeOrder
// held and decoded.
type orderStats struct {
	order journalOrder
	held  int // the most entries held at once
	// decodedAtFirst is how many lines were decoded when the first entry
	// was handed on.
	decodedAtFirst int
	decoded        int
}

// readInTimeOrder reads the journal at path in the order of its times
// (see ReadInTimeOrder); stats, when not nil, is filled in.
func (q *query) readInTimeOrder(path string, fn func(e Entry, line []byte) error, stats *orderStats) (JournalPosition, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return JournalPosition{}, nil
	}
	if err != nil {
		return JournalPosition{}, err
	}
	defer file.Close()
	order, runs, at, err := scanOrder(file)
	if err != nil {
		return JournalPosition{}, err
	}
	if stats == nil {
		stats = &orderStats{}
	}
	stats.order = order
	// What the first pass read, and no more: lines appended meanwhile
	// are read after, by FollowFrom, in the order they are appended.
	lines := io.NewSectionReader(file, 0, at.Offset)
	var err2 error
	switch order {
	case inOrder:
		_, err2 = q.read(lines, 0, fn)
	case mergedOrder:
		err2 = q.merge(file, runs, fn, stats)
	case nearOrder:
		var w window[held]
		give := func(h held) error {
			if stats.decodedAtFirst == 0 {
				stats.decodedAtFirst = stats.decoded
			}
			return fn(h.e, h.line)
		}
		_, err2 = q.read(lines, 0, func(e Entry, line []byte) error {
			stats.decoded++
			if w.late(e.Time) {
				// Further from its place than the first pass saw (a
				// line it read otherwise): shown where it is.
				return give(held{e, line})
			}
			w.push(e.Time, held{e, bytes.Clone(line)})
			stats.held = max(stats.held, w.len())
			if w.len() > OrderWindow {
				return give(w.pop())
			}
			return nil
		})
		var je *JournalError
		if err2 == nil || errors.As(err2, &je) {
			for w.len() > 0 {
				if ferr := give(w.pop()); ferr != nil {
					return at, ferr
				}
			}
		}
	default:
		var all []held
		_, err2 = q.read(lines, 0, func(e Entry, line []byte) error {
			all = append(all, held{e, bytes.Clone(line)})
			return nil
		})
		stats.held = len(all)
		slices.SortStableFunc(all, func(a, b held) int { return strings.Compare(a.e.Time, b.e.Time) })
		for _, h := range all {
			if ferr := fn(h.e, h.line); ferr != nil {
				return at, ferr
			}
		}
	}
	return at, err2
}

// merge reads the runs of the journal file (see scanOrder) at once, each
// through a window of its own, and hands on their entries in the order
// of their times, the entries of one time in the order of the file. A
// run is begun only when its first time comes: the runs a journal merged
// by git again and again is made of follow each other in time, but for
// the two that each merge put one after the other, so few are read at
// once.
func (q *query) merge(file *os.File, runs []run, fn func(e Entry, line []byte) error, stats *orderStats) error {
	type head struct {
		next func() (held, bool) // nil: the run is not begun
		stop func()
		at   held
		key  string // the time of at, or the run's first time
		run  int
	}
	var errs []error
	holding := 0 // entries held in the runs' windows
	heads := make([]*head, len(runs))
	for i, r := range runs {
		heads[i] = &head{key: r.first, run: i}
	}
	defer func() {
		for _, h := range heads {
			if h.stop != nil {
				h.stop()
			}
		}
	}()
	before := func(a, b *head) bool { return a.key < b.key || a.key == b.key && a.run < b.run }
	for len(heads) > 0 {
		// Few runs: the earliest head is found by looking at each.
		e := 0
		for i := range heads {
			if before(heads[i], heads[e]) {
				e = i
			}
		}
		h := heads[e]
		if h.next == nil {
			r := runs[h.run]
			seq := func(yield func(held) bool) {
				var w window[held]
				_, err := q.read(io.NewSectionReader(file, r.start.Offset, r.end-r.start.Offset), r.start.Lines, func(e Entry, line []byte) error {
					stats.decoded++
					if w.late(e.Time) {
						if !yield(held{e, bytes.Clone(line)}) {
							return errStop
						}
						return nil
					}
					w.push(e.Time, held{e, bytes.Clone(line)})
					holding++
					stats.held = max(stats.held, holding)
					if w.len() > OrderWindow {
						holding--
						if !yield(w.pop()) {
							return errStop
						}
					}
					return nil
				})
				if errors.Is(err, errStop) {
					return
				}
				if err != nil {
					errs = append(errs, err) // unreadable lines: what was read is handed on
				}
				for w.len() > 0 {
					holding--
					if !yield(w.pop()) {
						return
					}
				}
			}
			h.next, h.stop = iter.Pull(seq)
		} else {
			if stats.decodedAtFirst == 0 {
				stats.decodedAtFirst = stats.decoded
			}
			if err := fn(h.at.e, h.at.line); err != nil {
				return err
			}
		}
		var ok bool
		if h.at, ok = h.next(); !ok {
			h.stop()
			heads = slices.Delete(heads, e, e+1)
			continue
		}
		h.key = h.at.e.Time
	}
	return errors.Join(errs...)
}

// errStop stops reading a run no more wanted.
var errStop = errors.New("stop")

// held is an entry held to be sorted, with its line.
type held struct {
	e    Entry
	line []byte
}

// window holds items sorted by key, those of one key in the order they
// were pushed, for the earliest to be taken out first.
type window[T any] struct {
	items []keyed[T]
	head  int    // items before it were taken out
	last  string // the key of the item last taken out
	out   bool   // one was taken out
}

// keyed is an item of a window, with its key.
type keyed[T any] struct {
	k string
	v T
}

func (w *window[T]) len() int { return len(w.items) - w.head }

// late reports whether an item of key k comes before one taken out
// already.
func (w *window[T]) late(k string) bool { return w.out && k < w.last }

// before reports whether an item of key k comes before one in the
// window.
func (w *window[T]) before(k string) bool {
	return w.len() > 0 && k < w.items[len(w.items)-1].k
}

// push adds v, of key k, after every item whose key is not after k.
func (w *window[T]) push(k string, v T) {
	if !w.before(k) {
		w.items = append(w.items, keyed[T]{k, v}) // in order: nearly always
		return
	}
	i := w.head + sort.Search(w.len(), func(i int) bool { return w.items[w.head+i].k > k })
	w.items = slices.Insert(w.items, i, keyed[T]{k, v})
}

// pop takes out the earliest item; the window is not empty.
func (w *window[T]) pop() T {
	x := w.items[w.head]
	w.items[w.head] = keyed[T]{}
	w.head++
	if w.head == len(w.items) {
		w.items, w.head = w.items[:0], 0
	} else if w.head >= OrderWindow {
		n := copy(w.items, w.items[w.head:])
		clear(w.items[n:])
		w.items, w.head = w.items[:n], 0
	}
	w.last, w.out = x.k, true
	return x.v
}

// scanOrder reads the times of the journal's lines, from its start, and
// says how they stand to their order (see journalOrder); it returns the
// position after the last complete line, and the runs the lines make: a
// run ends before a line further than OrderWindow lines from its place
// in it, which begins the next (in a journal git merged, the lines one
// clone added, then the other's). It decodes only a line that does not
// begin with its time (written by hand), as the reader decodes it; a line
// that is no entry has no place. While the lines are in order it copies
// each time into a ring of the last OrderWindow+1, and allocates nothing;
// from the first line out of order on, it keeps the times of a window of
// lines, sorted, as the reader will (window). More than maxRuns runs are
// not listed: the journal is outOfOrder, to be read whole.
func scanOrder(r io.Reader) (journalOrder, []run, JournalPosition, error) {
	order := inOrder
	var ring timeRing
	var w *window[struct{}] // from the first line out of order in the run on
	runs := []run{{}}
	var at JournalPosition
	buf := make([]byte, 0, 64<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		m, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if end := bytes.LastIndexByte(buf, '\n') + 1; end > 0 {
			n := 0 // lines of buf before line
			for rest := buf[:end]; len(rest) > 0 && order != outOfOrder; n++ {
				i := bytes.IndexByte(rest, '\n') + 1
				line := rest[:i]
				rest = rest[i:]
				t, ok := lineTimeBytes(line)
				if !ok {
					continue
				}
				if w == nil && (ring.before(t) || !ring.add(t)) {
					w = ring.window()
				}
				if w != nil {
					k := string(t)
					switch {
					case !w.late(k):
						if w.before(k) && order == inOrder {
							order = nearOrder
						}
						w.push(k, struct{}{})
						if w.len() > OrderWindow {
							w.pop()
						}
					case len(runs) == maxRuns:
						order = outOfOrder
					default:
						// Further from its place than the window reaches:
						// the next run begins here.
						order = mergedOrder
						cur := &runs[len(runs)-1]
						cur.end = at.Offset + int64(end-len(rest)-len(line))
						runs = append(runs, run{start: JournalPosition{Offset: cur.end, Lines: at.Lines + n}})
						ring.reset()
						if w = nil; !ring.add(t) {
							w = &window[struct{}]{}
							w.push(k, struct{}{})
						}
					}
				}
				if cur := &runs[len(runs)-1]; cur.first == "" || string(t) < cur.first {
					cur.first = string(t)
				}
			}
			at.Offset += int64(end)
			at.Lines += bytes.Count(buf[:end], []byte{'\n'})
			buf = buf[:copy(buf, buf[end:])]
		}
		if errors.Is(rerr, io.EOF) || rerr != nil {
			runs[len(runs)-1].end = at.Offset
			if order == outOfOrder {
				runs = nil
			}
			if errors.Is(rerr, io.EOF) {
				rerr = nil
			}
			return order, runs, at, rerr
		}
	}
}

// run is a part of the journal whose lines are each within OrderWindow
// lines of their place in it.
type run struct {
	start JournalPosition // where its first line begins
	end   int64           // the offset after its last line
	first string          // the earliest time of its lines
}

// maxRuns is how many runs a journal read in time order is merged from
// at most, each read through its own window; a journal of more (lines
// moved by hand all over) is read whole, to sort. A journal merged by
// git from two clones each time both had added lines has a run more
// each time.
const maxRuns = 64

// timeRing holds copies of the times of the last OrderWindow+1 lines of a
// journal in order, of up to timeCap bytes each: the window they would
// make, and the time of the line last taken out of it.
type timeRing struct {
	times []byte // OrderWindow+1 slots of timeCap bytes
	lens  []uint8
	next  int // the slot the next time goes to
	n     int // how many times were added
}

// timeCap is the longest time timeRing holds: parley writes 27 bytes.
const timeCap = 40

// before reports whether t comes before the last time added.
func (r *timeRing) before(t []byte) bool {
	if r.n == 0 {
		return false
	}
	last := (r.next + len(r.lens) - 1) % len(r.lens)
	return bytes.Compare(t, r.slot(last)) < 0
}

// reset empties the ring.
func (r *timeRing) reset() { r.next, r.n = 0, 0 }

func (r *timeRing) slot(i int) []byte { return r.times[i*timeCap : i*timeCap+int(r.lens[i])] }

// add adds t; false when it is too long to hold (then it is not added).
func (r *timeRing) add(t []byte) bool {
	if len(t) > timeCap {
		return false
	}
	if r.times == nil {
		r.times, r.lens = make([]byte, (OrderWindow+1)*timeCap), make([]uint8, OrderWindow+1)
	}
	copy(r.times[r.next*timeCap:], t)
	r.lens[r.next] = uint8(len(t))
	r.next = (r.next + 1) % len(r.lens)
	r.n++
	return true
}

// window returns the window the times added would make: the last
// OrderWindow of them, the one before taken out.
func (r *timeRing) window() *window[struct{}] {
	w := &window[struct{}]{}
	if r.n == 0 {
		return w
	}
	size := len(r.lens)
	held := min(r.n, size)
	for j := size - held; j < size; j++ {
		k := string(r.slot((r.next + j) % size))
		if held == size && j == 0 {
			w.last, w.out = k, true // taken out: more than OrderWindow came after it
			continue
		}
		w.items = append(w.items, keyed[struct{}]{k: k})
	}
	return w
}

// lineTimeBytes is lineTime of a line read as bytes: the time is a part
// of the line, or a copy when the line had to be decoded.
func lineTimeBytes(line []byte) ([]byte, bool) {
	if rest, ok := bytes.CutPrefix(line, timePrefix); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			return rest[:end], true
		}
	}
	t, ok := lineTime(string(line))
	return []byte(t), ok
}

// lineTime returns the time of a journal line, as the reader reads it;
// false for a blank line, or one that is no entry.
func lineTime(line string) (string, bool) {
	if rest, ok := strings.CutPrefix(line, string(timePrefix)); ok {
		if end := strings.IndexByte(rest, '"'); end >= 0 && !strings.Contains(rest[:end], `\`) {
			return rest[:end], true
		}
	}
	if strings.TrimSpace(line) == "" {
		return "", false
	}
	var e Entry
	if !decodeString(line, &e) && json.Unmarshal([]byte(line), &e) != nil {
		return "", false
	}
	return e.Time, true
}

// Follow calls fn for every entry the filter selects, in the order of
// their times, as ReadInTimeOrder does (a journal git merged is shown as
// parley log shows it), then for every one appended later, in the order
// it is appended, until ctx is done; caughtUp, when not nil, is called
// each time it has read to the end of the journal (to flush what fn
// wrote). Unreadable lines are skipped. It returns nil when ctx ends it.
func (f *JournalFilter) Follow(ctx context.Context, path string, fn func(e Entry, line []byte) error, caughtUp func() error) error {
	at, err := f.ReadPositionInTimeOrder(path, fn)
	var je *JournalError
	if err != nil && !errors.As(err, &je) {
		return err
	}
	return f.FollowFrom(ctx, path, at, fn, caughtUp)
}

// JournalPosition is a place in the journal: the byte offset just after a
// complete line, and how many lines come before it.
type JournalPosition struct {
	Offset int64
	Lines  int
}

// ReadPosition reads the journal as Read does, and returns the position
// after its last complete line, from which FollowFrom goes on without
// reading the journal again.
func (f *JournalFilter) ReadPosition(path string, fn func(e Entry, line []byte) error) (JournalPosition, error) {
	return f.ReadFrom(path, JournalPosition{}, fn)
}

// ReadFrom reads the journal as Read does, but only the entries written
// after from, a position ReadPosition or ReadFrom returned (a journal
// shorter than it, replaced meanwhile, is read from its start), and
// returns the position after its last complete line: what keeps an index
// of the journal up to date reads each line once.
func (f *JournalFilter) ReadFrom(path string, from JournalPosition, fn func(e Entry, line []byte) error) (JournalPosition, error) {
	return f.compile().readFrom(path, from, fn)
}

// readFrom reads the entries of the journal at path after from (from its
// start when it is shorter than from), and returns the position after
// its last complete line. A missing journal has none: from is returned.
func (q *query) readFrom(path string, from JournalPosition, fn func(e Entry, line []byte) error) (JournalPosition, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer file.Close()
	if info, err := file.Stat(); err == nil && info.Size() < from.Offset {
		from = JournalPosition{} // the journal was replaced: start over
	}
	if _, err := file.Seek(from.Offset, io.SeekStart); err != nil {
		return from, err
	}
	cr := &countingReader{r: file}
	n, err := q.read(cr, from.Lines, fn)
	return JournalPosition{Offset: from.Offset + cr.complete, Lines: from.Lines + n}, err
}

// FollowFrom is Follow starting at a position ReadPosition returned:
// only the entries written after it are read. A journal shorter than the
// position (replaced meanwhile) is read from its start.
func (f *JournalFilter) FollowFrom(ctx context.Context, path string, from JournalPosition, fn func(e Entry, line []byte) error, caughtUp func() error) error {
	q := f.compile()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	// Watch the directory before reading, so no append falls between the
	// read and the watch.
	if err := w.Add(filepath.Dir(path)); err != nil {
		return err
	}
	at := from
	catchUp := func() error {
		var err error
		at, err = q.readFrom(path, at, fn)
		var je *JournalError
		if errors.As(err, &je) {
			err = nil // unreadable lines are skipped when following
		}
		if err == nil && caughtUp != nil {
			err = caughtUp()
		}
		return err
	}
	if err := catchUp(); err != nil {
		return err
	}
	// A periodic look covers filesystems that deliver no events.
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// Whatever was written before the end is shown.
			return catchUp()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) != filepath.Clean(path) {
				continue
			}
		case err := <-w.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return err
			}
		case <-tick.C:
		}
		if err := catchUp(); err != nil {
			return err
		}
	}
}

// query is a filter made ready to test raw lines.
type query struct {
	f                       *JournalFilter
	agents, types, outcomes [][]byte // each value as a JSON string
	signals, ids            [][]byte
	since                   []byte // Since in the journal's time format
	all                     bool   // the filter selects everything
}

func (f *JournalFilter) compile() *query {
	q := &query{f: f}
	quote := func(vs []string) [][]byte {
		out := make([][]byte, len(vs))
		for i, v := range vs {
			out[i], _ = json.Marshal(v)
		}
		return out
	}
	q.agents, q.types, q.outcomes, q.signals, q.ids = quote(f.Agents), quote(f.Types), quote(f.Outcomes), quote(f.Signals), quote(f.IDs)
	if !f.Since.IsZero() {
		q.since = []byte(f.Since.UTC().Format(mailbox.TimeFormat))
	}
	q.all = len(f.Agents) == 0 && len(f.Types) == 0 && len(f.Outcomes) == 0 && len(f.Signals) == 0 && len(f.IDs) == 0 && f.Since.IsZero()
	return q
}

// timePrefix starts every line parley writes: the time comes first.
var timePrefix = []byte(`{"time":"`)

// skip reports whether a line surely holds no entry the filter selects,
// without decoding it: a value the filter asks for appears in a
// selected line as a JSON string, and the time of a line written by
// parley is a fixed-width string that sorts as the time does. A line
// with a \u escape could spell a value otherwise, so it is never
// skipped.
func (q *query) skip(line []byte) bool {
	if q.all || bytes.Contains(line, []byte(`\u`)) {
		return false
	}
	if q.since != nil && bytes.HasPrefix(line, timePrefix) {
		n := len(timePrefix) + len(q.since)
		if len(line) > n && line[n] == '"' && bytes.Compare(line[len(timePrefix):n], q.since) < 0 {
			return true
		}
	}
	for _, vs := range [][][]byte{q.agents, q.types, q.outcomes, q.signals, q.ids} {
		if len(vs) > 0 && !slices.ContainsFunc(vs, func(v []byte) bool { return bytes.Contains(line, v) }) {
			return true
		}
	}
	return false
}

// read reads complete lines from r, starting at line number line
// (0-based count of lines already read), calls fn for those the filter
// selects, and returns the number of complete lines read. A trailing line
// without a newline is left unread.
//
// It reads 64 KiB at a time and copies the whole lines of each read into
// one string, of which the entries' fields are substrings: one
// allocation per few hundred lines rather than one per field.
func (q *query) read(r io.Reader, line int, fn func(Entry, []byte) error) (int, error) {
	buf := make([]byte, 0, 64<<10)
	var bad []error
	n := 0
	for {
		if len(buf) == cap(buf) {
			// A line longer than the buffer: make room for it.
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		m, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if end := bytes.LastIndexByte(buf, '\n') + 1; end > 0 {
			raw, text := buf[:end], string(buf[:end])
			for start := 0; start < end; {
				stop := start + strings.IndexByte(text[start:], '\n') + 1
				b, s := raw[start:stop], text[start:stop]
				start = stop
				n++
				if len(bytes.TrimSpace(b)) == 0 || q.skip(b) {
					continue
				}
				var e Entry
				if !decodeString(s, &e) {
					e = Entry{}
					if err := json.Unmarshal(b, &e); err != nil {
						bad = append(bad, &JournalError{Line: line + n, Err: err})
						continue
					}
				}
				if !q.all && !q.f.Match(&e) {
					continue
				}
				if err := fn(e, bytes.TrimRight(b, "\r\n")); err != nil {
					return n, err
				}
			}
			buf = buf[:copy(buf, buf[end:])]
		}
		if errors.Is(rerr, io.EOF) {
			return n, errors.Join(bad...)
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// countingReader counts the bytes of complete lines read through it.
type countingReader struct {
	r        io.Reader
	read     int64
	complete int64 // bytes up to and including the last newline seen
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		c.complete = c.read + int64(i) + 1
	}
	c.read += int64(n)
	return n, err
}

// MaxWordLen is the longest, in bytes, a message's type or signal may be
// (Check refuses a longer one), and the longest the journal keeps of a
// word it copies from a message (its id, type, signal, the field a
// refusal is about): a message under the size limit could otherwise
// write a type of a megabyte into every line about it, and into every
// page that shows them.
const MaxWordLen = 200

// MaxTextLen is the longest, in bytes, the journal keeps of a text about
// a message (a reason, a note, a warning), which may quote what the
// message says.
const MaxTextLen = 16 << 10

// Capped returns the entry as the journal keeps it: each word copied
// from a message cut to MaxWordLen bytes, each text to MaxTextLen, ending
// in "…" where it was cut. Every journal line is written so (EncodeJournal),
// and a reader may cap what it read of an older journal: an entry cut is
// then a copy that holds nothing of the line read (whose other fields
// are substrings of it).
func (e Entry) Capped() Entry {
	c := e
	c.ID = capText(e.ID, MaxWordLen)
	c.Type = capText(e.Type, MaxWordLen)
	c.Signal = capText(e.Signal, MaxWordLen)
	c.Field = capText(e.Field, MaxWordLen)
	c.Reason = capText(e.Reason, MaxTextLen)
	c.Note = capText(e.Note, MaxTextLen)
	cut := len(c.ID) < len(e.ID) || len(c.Type) < len(e.Type) || len(c.Signal) < len(e.Signal) || len(c.Field) < len(e.Field) || len(c.Reason) < len(e.Reason) || len(c.Note) < len(e.Note)
	if slices.ContainsFunc(e.Warnings, func(w string) bool { return len(w) > MaxTextLen }) {
		c.Warnings = make([]string, len(e.Warnings))
		for i, w := range e.Warnings {
			c.Warnings[i] = capText(w, MaxTextLen)
		}
		cut = true
	}
	if !cut {
		return e
	}
	// Rare (a line over the bounds): copied through JSON, every string
	// of it is new.
	var fresh Entry
	if b, err := json.Marshal(&c); err == nil && json.Unmarshal(b, &fresh) == nil {
		return fresh
	}
	return c
}

// capText cuts s to at most max bytes, on a character's boundary, ending
// in "…" when it was cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// EncodeJournal appends entries to b as journal lines, one JSON line
// each, capped (Entry.Capped): what every writer of the journal writes.
func EncodeJournal(b *bytes.Buffer, entries ...Entry) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	for i := range entries {
		e := entries[i].Capped()
		if err := enc.Encode(&e); err != nil {
			return err
		}
	}
	return nil
}

// AppendJournal appends entries to the journal at path, for a command
// that records what a person did (parley approve, reject): one write of
// whole lines, then an fsync. It is safe while a runner writes the
// journal too. Both open the file with O_APPEND, so each write lands at
// the end of the file as it is then, and on a local filesystem (Linux,
// macOS) the kernel holds the file's lock for the whole write, so the
// lines of two writers never mix. POSIX itself promises that only for
// pipes, and for writes up to PIPE_BUF (4 KiB on Linux, 512 bytes on
// macOS); parley's lines are that short but for long reasons. Over NFS,
// O_APPEND is not atomic: lines written at the same moment by a command
// and a runner on two machines may collide (reading skips a broken line
// and says so). A last line cut short by a crash is ended first, so the
// entries start on a line of their own.
func AppendJournal(path string, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			// Cut short, or a runner's line being written as we look:
			// then this makes an empty line, which readers skip.
			b.WriteByte('\n')
		}
	}
	if err := EncodeJournal(&b, entries...); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
