package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/parley-dev/parley/internal/visible"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// accepted is a message that passed every check and is being delivered.
type accepted struct {
	candidate
	index      int // position in the batch
	msg        *mailbox.Message
	id         string
	recipients []string
	snap       *mailbox.Snapshot // the file as it was read
	hops       map[string]int    // recipient -> the hops: of its copy
	nudge      bool              // a nudge the runner sent (timeouts:)
	already    []string
	err        error // why delivering it failed
	skipped    bool  // an earlier message of its sender failed: not tried
	warnings   []string
	skill      string // the skill that checked it (Verdict.Skill)
	typ        string // its type and signal, as the check read them (Verdict.Type, Verdict.Signal)
	signal     string
	drawn      bool // its id was drawn by the router: a file written by hand
	fresh      bool // newer than every id begun: no copy can exist yet (fresh.go)
}

// batch is one round of routing: the files taken, in sending order, and
// what became of each.
type batch struct {
	r       *Runner
	now     time.Time
	settle  time.Duration
	entries []*workspace.Entry // journal lines, in batch order
	routed  []*accepted
	ids     map[string]bool  // ids accepted in this batch
	held    map[string]bool  // senders with an earlier file not routed now
	failed  map[string]bool  // senders whose earlier message failed
	wait    time.Time        // when to look again at a file not complete yet
	notices []*notice        // parley's notices to deliver: loops stopped, refusals
	checked map[string]error // agent -> why its mailbox cannot be used (see usable)
	// snaps are the files read, kept open until the batch is done: a
	// name is moved only while it refers to the file read (see
	// mailbox.Snapshot).
	snaps []*mailbox.Snapshot
	// landing: its ids are in Runner.landing, until close.
	landing bool
}

// round is what the batches of one look at the outboxes share: the
// senders whose later files wait (a file of theirs was not complete yet,
// or failed, in an earlier batch), and the ids of the batches delivered
// but not moved to sent/ yet.
type round struct {
	waiting  map[string]bool
	inFlight map[string]bool
}

// routeBatches routes ready files (in sending order) in batches of at
// most BatchSize. A batch's deliveries and rejections are made durable
// with one sync; only then is its journal written and are its files moved
// to sent/. Four things go on at once: the main loop reads and checks a
// batch; the copies of the one before it are written (see startDelivery);
// the one before that is synced; and the one before that is journaled and
// moved to sent/ (see moving). A batch's copies are written only after
// those of the batch before it, so a sender's messages arrive in order;
// when one of them fails, the sender's messages in the batch taken
// meanwhile are not delivered either (they wait, as after any failure).
// Each batch is
// committed only after its own sync, which comes after the one before
// it, and journaled after the batch before it, so no message is
// journaled or moved to sent/ before it is durable, and the journal
// keeps the order messages were routed in. It returns when a file that
// is not complete yet should be looked at again.
func (r *Runner) routeBatches(ctx context.Context, ready []candidate, now time.Time, settle time.Duration) (wait time.Time, err error) {
	rd := &round{waiting: make(map[string]bool), inFlight: make(map[string]bool)}
	var prev *batch // delivered; its sync is under way
	var synced chan error
	var mv *moving // synced; being journaled and moved to sent/
	later := func(at time.Time) {
		if !at.IsZero() && (wait.IsZero() || at.Before(wait)) {
			wait = at
		}
	}
	// land waits for the batch being moved to sent/ and notes what became
	// of it.
	land := func() error {
		if mv == nil {
			return nil
		}
		m := mv
		mv = nil
		return m.land()
	}
	// commit waits for the sync of the batch before, then has it journaled
	// and moved to sent/ while the loop goes on.
	commit := func(cur *batch) error {
		if prev == nil {
			return land()
		}
		b := prev
		prev = nil
		serr := <-synced
		if err := land(); err != nil {
			b.close()
			return err
		}
		if serr != nil {
			defer b.close()
			// Nothing of it is known to be durable: its files stay in the
			// outboxes and are routed again, and so are those of the
			// batch delivered meanwhile (its copies are found there).
			serr = fmt.Errorf("syncing deliveries: %w", serr)
			if cur != nil {
				r.failAll(cur.routed, cur.now, serr)
				cur.routed = nil
			}
			return r.failAll(b.routed, b.now, serr)
		}
		mv = b.commit()
		return nil
	}
	// cur is the batch whose copies are being written while the loop
	// reads and checks the next one.
	var cur *batch
	var writing *delivery
	for (len(ready) > 0 && ctx.Err() == nil) || cur != nil {
		var next *batch
		if len(ready) > 0 && ctx.Err() == nil {
			// The ids of the batches not in sent/ yet: the one being
			// moved there, the one being synced and the one delivered.
			clear(rd.inFlight)
			for _, o := range []*batch{moved(mv), prev, cur} {
				if o != nil {
					for id := range o.ids {
						rd.inFlight[id] = true
					}
				}
			}
			n := min(len(ready), r.opts.BatchSize)
			next = r.newBatch(now, settle, n)
			for i, c := range ready[:n] {
				next.take(i, c, rd)
			}
			ready = ready[n:]
			for agent := range next.held {
				rd.waiting[agent] = true
			}
			later(next.wait)
		}
		if cur != nil {
			writing.finish()
			for agent := range cur.failed {
				// Its later messages wait, those taken already too: none
				// may arrive before the one that failed.
				rd.waiting[agent] = true
				if next != nil {
					next.failed[agent] = true
				}
			}
			if err := commit(cur); err != nil {
				cur.close()
				if next != nil {
					next.close()
				}
				return wait, err
			}
			prev, synced = cur, make(chan error, 1)
			go func(done chan<- error) { done <- r.syncer.Sync() }(synced)
		}
		cur, writing = next, nil
		if cur != nil {
			cur.writeDrawn()
			writing = cur.startDelivery()
		}
	}
	if err := commit(nil); err != nil {
		return wait, err
	}
	return wait, land()
}

func (r *Runner) newBatch(now time.Time, settle time.Duration, n int) *batch {
	return &batch{
		r: r, now: now, settle: settle,
		entries: make([]*workspace.Entry, n),
		ids:     make(map[string]bool),
		held:    make(map[string]bool),
		failed:  make(map[string]bool),
		checked: make(map[string]error),
	}
}

// close lets go of the files the batch read.
func (b *batch) close() {
	if b.landing {
		b.landing = false
		for _, a := range b.routed {
			b.r.landing.done(a.id)
		}
		for _, n := range b.notices {
			b.r.landing.done(n.id)
		}
	}
	for _, s := range b.snaps {
		s.Close()
	}
	b.snaps = nil
}

// take reads and checks one file: it is accepted for delivery, refused,
// or left for later (incomplete, or behind its sender's earlier file).
func (b *batch) take(i int, c candidate, rd *round) {
	r := b.r
	if err := r.usable(c.agent, b.checked); err != nil {
		// Its rejected/ or sent/ may be a link to elsewhere: nothing is
		// moved until the mailbox is mended.
		r.fail(c, b.now, err)
		b.held[c.agent] = true
		return
	}
	if c.linked {
		b.refuseInPlace(i, c)
		return
	}
	if c.refusal != nil {
		b.reject(i, c, nil, c.refusal)
		return
	}
	if b.held[c.agent] || rd.waiting[c.agent] {
		return // stays pending, behind its sender's earlier file
	}
	box := r.agents[c.agent]
	snap, err := mailbox.ReadSnapshot(box.Path(mailbox.Outbox, c.name), r.ws().Config.Router.MaxMessageSize)
	if err != nil {
		if isGone(err) {
			delete(r.pending, c.fileKey)
			r.chains.forget(c.fileKey)
			return
		}
		if nr := (*mailbox.NotRegularError)(nil); errors.As(err, &nr) && nr.Mode&fs.ModeSymlink != 0 {
			// A symbolic link since it was listed: looked at again, as a
			// link (refused where it is), never moved to rejected/.
			b.hold(c, b.now.Add(b.settle))
			return
		}
		b.reject(i, c, nil, workspace.RefusalOf(c.name, err))
		return
	}
	b.snaps = append(b.snaps, snap)
	c.read = snap.ID
	if snap.Links > 1 {
		// Linked since it was listed: looked at again, as a hard link.
		b.held[c.agent] = true
		if at := b.now.Add(b.settle); b.wait.IsZero() || at.Before(b.wait) {
			b.wait = at
		}
		return
	}
	p := r.pending[c.fileKey]
	if !idNamed(c.name) && (snap.Size != c.info.Size() || !snap.ModTime.Equal(c.info.ModTime())) {
		// Written to since it was found settled: not complete yet.
		p.observe(c.info, b.now)
		b.hold(c, b.now.Add(b.settle))
		return
	}
	data := snap.Data
	msg, perr := mailbox.Parse(data)
	if perr != nil && c.unsure {
		// Whether a writer still holds it cannot be known: a file that
		// does not parse may be one cut short; it gets longer to settle.
		if at := p.since().Add(unsureSettles * b.settle); b.now.Before(at) {
			b.hold(c, at)
			return
		}
	}
	if idNamed(c.name) && !settled(p, c.info, b.now, b.settle) {
		// Complete only if it names itself; otherwise wait for it.
		if id, _ := msgID(msg); perr != nil || mailbox.FileName(id) != c.name {
			p.observe(c.info, b.now)
			b.held[c.agent] = true
			if at := p.since().Add(b.settle); b.wait.IsZero() || at.Before(b.wait) {
				b.wait = at
			}
			return
		}
	}
	if perr != nil {
		c.notText = errors.Is(perr, mailbox.ErrBinary)
		b.reject(i, c, nil, workspace.RefusalOf(c.name, perr))
		return
	}
	answering, ans := r.answering(c.fileKey, msg)
	v, err := r.ws().Check(workspace.Input{
		File: c.name, Sender: c.agent, Message: msg,
		Sent: func(id string) bool {
			// sent/ holds no message of a fresh id: nothing was begun.
			return b.ids[id] || rd.inFlight[id] || (!r.fresh.is(c.agent, id) && box.IsSent(id))
		},
		Answering: answering,
	})
	if err != nil {
		r.fail(c, b.now, err) // the skills cannot be read
		b.held[c.agent] = true
		return
	}
	if !v.Accepted() {
		path := b.reject(i, c, msg, v.Refusal)
		if e := b.entries[i]; e != nil {
			e.Skill = v.Skill // refused by this version of its protocol
		}
		if l := v.Refusal.Stopped(); l != nil && path != "" {
			b.stopLoop(l, ans, path)
		}
		return
	}
	a := &accepted{candidate: c, index: i, msg: v.Message, id: v.ID, recipients: v.Agents(), warnings: v.Warnings, hops: v.Hops, skill: v.Skill, typ: v.Type, signal: v.Signal, snap: snap}
	if _, from, err := mailbox.ParseID(a.id); err == nil && from == c.agent {
		// An id its sender's file carries (written into it by a runner
		// stopped before it moved the file to sent/): ids given after it
		// sort after it.
		r.noteSent(c.agent, a.id)
	}
	if a.id == "" && p.get().id == "" && !c.unsure {
		if id, ok := r.routedAlready(c, data, msg); ok {
			// The same file, name and text, was routed before: put back
			// (git checkout, git stash pop), or written again by hand
			// (the same words on another turn). Which, parley cannot
			// tell: it is kept in rejected/, neither sent twice nor lost.
			// Logged as any refusal (reject: "rejected", with the
			// reason, which names the message), per file only where
			// refusals are (listedLevel).
			c.again = true
			b.reject(i, c, msg, &workspace.Refusal{Reason: routedAlreadyReason(id)})
			return
		}
	}
	if a.id == "" {
		a.id, a.drawn = b.idFor(c, p, data, msg), true
	}
	mailbox.StampWith(a.msg, a.id)
	b.ids[a.id] = true
	b.routed = append(b.routed, a)
}

// reject moves a refused file to its sender's rejected/, with the reason
// beside it, and notes the journal line. It returns where the file is
// now, or "" when it could not be moved (it is tried again).
func (b *batch) reject(i int, c candidate, m *mailbox.Message, f *workspace.Refusal) string {
	r := b.r
	f.File = c.name
	text := f.Error()
	ans, _ := r.chains.answering(c.fileKey) // before it is forgotten
	path, err := r.agents[c.agent].Reject(c.name, c.info.ModTime(), rejectionNote(text, f.Anew, c, b.now), c.read, r.syncer)
	if errors.Is(err, mailbox.ErrReplaced) {
		// Something else is there now: it is looked at afresh.
		delete(r.pending, c.fileKey)
		r.chains.forget(c.fileKey)
		return ""
	}
	if err != nil {
		r.fail(c, b.now, fmt.Errorf("rejecting: %w", err))
		return ""
	}
	delete(r.pending, c.fileKey)
	r.chains.routed(c.fileKey)
	r.chains.forget(c.fileKey)
	r.dropReason(c)
	r.statsMu.Lock() // workers count what their agents said that was refused
	r.stats.Rejected++
	r.statsMu.Unlock()
	rel := mailboxPath(c.agent, mailbox.Rejected, filepath.Base(path))
	r.noteRejected(c.agent, rel, text)
	e := workspace.Entry{From: c.agent, Outcome: workspace.Refused, Reason: text, Line: f.Line, Field: f.Field, File: c.name, Path: rel}
	if l := f.Stopped(); l != nil {
		// Refused like any file (it is in rejected/), and said to be a
		// loop stopped: what `parley log --outcome loop` lists.
		e.Outcome, e.Agent, e.Note = workspace.LoopStopped, c.agent, fmt.Sprintf("stopped: %s %s; parley's notice tells %s, the sender, and every person", l.Between(), l.Tally(), l.From)
	}
	if m != nil {
		e.ID, _ = m.Header().Get("id")
		e.Type, _ = m.Header().Get("type")
		e.Signal, _ = m.Header().Get("signal")
	}
	if f.Stopped() == nil && r.toldOfRefusals(c.agent) {
		if n := r.refusedNotice(c.agent, m, f, path, rel, ans); n != nil {
			b.notices = append(b.notices, n)
			e.Note = c.agent + " is told, by parley's notice " + n.id
		} else if n := r.unansweredAfterRefusals(c.agent, ans, (&workspace.Refusal{Line: f.Line, Field: f.Field, Reason: f.Reason}).Error(), rel); n != nil {
			b.notices = append(b.notices, n)
			e.Note = fmt.Sprintf("%s is told no more; %s, whose message %s it was answering, is told by parley's notice %s", c.agent, ans.rootFrom, ans.root, n.id)
		}
	}
	b.entries[i] = &e
	r.log.Log(context.Background(), r.listedLevel(), "rejected", "agent", c.agent, "file", c.name, "reason", text, "moved_to", path)
	return path
}

// stopLoop notes a loop stopped, and the notice that tells of it,
// delivered and journaled with the batch.
func (b *batch) stopLoop(l *workspace.Loop, a answer, rejected string) {
	r := b.r
	r.stats.Loops++
	n := r.loopNotice(l, a, rejected)
	b.notices = append(b.notices, n)
	r.log.Warn("loop stopped", "agent", l.From, "with", l.With, "hops", l.Hops, "hop_limit", l.Limit, "told", n.recipients)
}

// idFor gives a file that came without an id its id. The file is never
// rewritten with it: renaming a stamped copy over the sender's file, or
// removing the file once a copy is written, cost this disk a flush and
// a discard per message, and would cut short a file a writer still
// holds (its later bytes would go into a file no name leads to). The
// file moves to sent/ as it is, under its id. The id is drawn from the
// file's time, name and content (newID) and kept while the file waits,
// so it is the same when the file is routed again after a failure, and,
// drawn alike, after a crash: the recipients' copies, named by it, are
// then not delivered twice.
func (b *batch) idFor(c candidate, p *pending, data []byte, m *mailbox.Message) string {
	r := b.r
	if id := p.get().id; id != "" {
		return id
	}
	if rec, err := r.drawnRecord(); err == nil {
		// Drawn by a runner stopped before the file went to sent/, which
		// may have delivered some of its copies; its time may have
		// changed since (git stash, then git stash pop). An unreadable
		// record fails the file before delivery (see writeDrawn).
		if id := rec.find(r.agents[c.agent], c.agent, c.name, data); id != "" {
			r.log.Info("a file written by hand gets the id drawn for it before", "agent", c.agent, "file", c.name, "id", id)
			p.more().id = id
			// Ids drawn after it sort after it, though it may be dated
			// later than the files written after this one.
			if t, _, err := mailbox.ParseID(id); err == nil && t.After(r.last[c.agent]) {
				r.last[c.agent] = t
			}
			return id
		}
	}
	id := r.newID(c, data)
	p.more().id = id
	return id
}

// writeDrawn writes down the ids drawn for files written by hand that the
// record of drawn ids does not hold yet, before any of their copies is
// delivered (see drawn.go). When that fails, their senders' messages are
// not delivered now, and are tried again.
func (b *batch) writeDrawn() {
	r := b.r
	var lines []workspace.Entry
	stamp := journalTime(r.opts.Now())
	rec, err := r.drawnRecord()
	for _, a := range b.routed {
		if a.drawn && (err != nil || !rec.has(a.agent, a.name, a.id)) {
			lines = append(lines, workspace.Entry{Time: stamp, ID: a.id, From: a.agent, File: a.name, Outcome: drawnOutcome})
		}
	}
	if len(lines) == 0 {
		return
	}
	if err == nil {
		err = rec.write(r, lines)
	}
	if err == nil {
		return
	}
	for _, a := range b.routed {
		if a.drawn {
			a.err = fmt.Errorf("writing down its id before delivery: %w", err)
			b.failed[a.agent] = true
		}
	}
}

// startDelivery starts writing every accepted message into its
// recipients' inboxes; finish waits for it. They are durable once the
// syncer's next Sync returns.
//
// Each sender's messages are delivered by one goroutine, in sending
// order, so each recipient gets them in the order they were sent: a
// worker listing an inbox never finds a sender's message without the ones
// it sent before. Different senders' messages have no order between them
// to keep, so they are delivered at once, by up to GOMAXPROCS goroutines:
// a copy's lookups, write and link are system calls that wait on the
// kernel, and one core alone was the router's limit. What the goroutines
// share is only read: which recipients can be used is settled first,
// here, and what they find is summed by finish. Meanwhile the loop reads
// and checks the next batch: the goroutines touch only this batch's
// messages, its b.checked and the mailboxes.
func (b *batch) startDelivery() *delivery {
	r := b.r
	d := &delivery{b: b}
	bySender := make(map[string]int)
	for _, a := range b.routed {
		if a.err != nil || a.skipped {
			continue
		}
		if b.failed[a.agent] {
			a.skipped = true // its sender failed before delivery (see writeDrawn)
			continue
		}
		a.fresh = r.fresh.begin(a.agent, a.id)
		for _, to := range a.recipients {
			r.usable(to, b.checked) // notes what it finds in the runner
		}
		s, ok := bySender[a.agent]
		if !ok {
			s = len(d.senders)
			bySender[a.agent] = s
			d.senders = append(d.senders, nil)
		}
		d.senders[s] = append(d.senders[s], a)
	}
	// Its copies are not handled before the batch is journaled (or
	// fails): see landing. Released by close.
	for _, a := range b.routed {
		r.landing.add(a.id)
	}
	for _, n := range b.notices {
		r.landing.add(n.id)
	}
	b.landing = true
	d.outcomes = make([]deliveries, len(d.senders))
	var next atomic.Int64 // the next sender to take
	for range min(runtime.GOMAXPROCS(0), len(d.senders)) {
		d.wg.Go(func() {
			for s := int(next.Add(1) - 1); s < len(d.senders); s = int(next.Add(1) - 1) {
				d.outcomes[s] = b.deliverFrom(d.senders[s])
			}
		})
	}
	return d
}

// delivery is a batch's copies being written (see startDelivery).
type delivery struct {
	b        *batch
	senders  [][]*accepted // each sender's messages, in sending order
	outcomes []deliveries  // by senders' index
	wg       sync.WaitGroup
}

// finish waits for the copies, sums what became of them, and delivers
// parley's notices of the batch.
func (d *delivery) finish() {
	d.wg.Wait()
	b, r := d.b, d.b.r
	for s, o := range d.outcomes {
		r.stats.Deliveries += o.delivered
		r.stats.Recovered += o.recovered
		if o.failed {
			b.failed[d.senders[s][0].agent] = true
		}
	}
	for _, n := range b.notices {
		for _, to := range n.recipients {
			if _, err := r.agents[to].Deliver(n.id, n.data, r.syncer); err != nil {
				// The refusal stands all the same: it is journaled with
				// its reason, which is beside the file in rejected/.
				r.log.Error("delivering parley's notice", "to", to, "err", err)
			}
		}
	}
}

// deliveries is what became of one sender's messages in a batch.
type deliveries struct {
	delivered int  // copies written
	recovered int  // copies a recipient held already
	failed    bool // a message failed: the ones after it were not tried
}

// deliverFrom delivers one sender's messages, in sending order, and stops
// at the first that fails: the ones after it are skipped, so that none
// arrives before it. It may run beside deliverFrom for other senders: it
// writes only to its own messages and reads only what deliver settled
// before (b.checked) and the runner's mailboxes.
func (b *batch) deliverFrom(msgs []*accepted) (o deliveries) {
	r := b.r
	for _, a := range msgs {
		if o.failed {
			a.skipped = true
			continue
		}
		copies := map[int][]byte{0: a.msg.Bytes()} // by the hops: they carry
		for _, to := range a.recipients {
			if err := b.checked[to]; err != nil { // see usable, called by deliver
				a.err = &deliveryError{to: to, err: err}
				o.failed = true
				break
			}
			n := a.hops[to]
			data, ok := copies[n]
			if !ok {
				m := a.msg.Clone()
				m.SetValue("hops", strconv.Itoa(n))
				data = m.Bytes()
				copies[n] = data
			}
			deliver := r.agents[to].Deliver
			if a.fresh {
				deliver = r.agents[to].DeliverNew // no copy can be anywhere (fresh.go)
			}
			ok, err := deliver(a.id, data, r.syncer)
			if err != nil {
				a.err = &deliveryError{to: to, err: err}
				o.failed = true
				break
			}
			if ok {
				o.delivered++
			} else {
				a.already = append(a.already, to)
				o.recovered++
			}
		}
	}
	return o
}

// moved is the batch m moves to sent/, or nil.
func moved(m *moving) *batch {
	if m == nil {
		return nil
	}
	return m.b
}

// moving is a synced batch being journaled and moved to sent/ by a
// goroutine of its own (see batch.commit): file operations only. What
// the runner keeps of its messages is updated by land, in the loop.
type moving struct {
	b     *batch
	lines []workspace.Entry
	done  []*accepted // journaled as delivered: to move to sent/
	moved []error     // by done's index: why the move to sent/ failed
	err   error       // the journal could not be written: nothing was moved
	over  chan struct{}
}

// commit notes the journal lines of a synced batch, then writes them and
// moves the routed files to sent/ in a goroutine: a crash in between
// routes a message again, which the journal shows as already delivered,
// rather than leaving a routed message unrecorded. See land.
func (b *batch) commit() *moving {
	r := b.r
	m := &moving{b: b, over: make(chan struct{})}
	for _, a := range b.routed {
		switch {
		case a.skipped:
		case a.err != nil:
			r.fail(a.candidate, b.now, a.err)
		case r.journaledAlready(a):
			m.done = append(m.done, a) // one line said it was delivered already
		default:
			e := workspace.Entry{ID: a.id, From: a.agent, To: a.recipients, Outcome: workspace.Delivered, File: a.name, Already: a.already, Warnings: a.warnings, Skill: a.skill}
			a.nudge = r.nudges[a.id] != ""
			e.Note = r.observe(a.agent, a.msg)
			e.Type, e.Signal = a.typ, a.signal
			b.entries[a.index] = &e
			m.done = append(m.done, a)
		}
	}
	// Stamped as they are written (journal.stamp), after a worker's
	// line that may come first.
	m.lines = make([]workspace.Entry, 0, len(b.entries)+len(b.notices))
	for _, e := range b.entries {
		if e != nil {
			m.lines = append(m.lines, *e)
		}
	}
	for _, n := range b.notices {
		m.lines = append(m.lines, n.entry)
	}
	m.moved = make([]error, len(m.done))
	go m.run()
	return m
}

// run writes the journal, then moves the routed files to sent/. It reads
// only what commit gave it and the files.
func (m *moving) run() {
	defer close(m.over)
	r := m.b.r
	if m.err = r.journal.append(m.lines, r.syncer); m.err != nil {
		return
	}
	for i, a := range m.done {
		if a.unsure && a.snap.Changed() {
			// Written to after it was read: what was delivered misses
			// the end. The file, with all its bytes, goes to sent/.
			r.log.Error("a file was written to after it was delivered: its recipients got it cut short (write in tmp/, then move the file into the outbox)", "agent", a.agent, "file", a.name, "id", a.id)
		}
		m.moved[i] = r.agents[a.agent].MarkSent(a.name, a.id, a.read, r.syncer)
	}
}

// land waits for run to end and notes what became of each message:
// routed, or tried again.
func (m *moving) land() error {
	<-m.over
	b := m.b
	r := b.r
	defer b.close()
	if m.err != nil {
		return r.failAll(m.done, b.now, fmt.Errorf("writing journal: %w", m.err))
	}
	for i, a := range m.done {
		err := m.moved[i]
		if errors.Is(err, mailbox.ErrReplaced) {
			// Delivered and journaled: what is there now is another file,
			// looked at afresh; the one that was read is not archived.
			r.log.Warn("a routed file was replaced before it was moved to sent/; the file there now is routed on its own", "agent", a.agent, "file", a.name, "id", a.id)
		} else if err != nil {
			r.fail(a.candidate, b.now, fmt.Errorf("moving to sent/: %w", err))
			r.note(a.fileKey).more().journaled = a.id
			continue
		} else {
			r.dropReason(a.candidate)
		}
		delete(r.pending, a.fileKey)
		r.chains.routed(a.fileKey)
		r.chains.forget(a.fileKey)
		r.noteSent(a.agent, a.id)
		if r.drawn != nil && !idNamed(a.name) {
			r.drawn.sent(a.agent, a.name, a.id)
		}
		r.stats.Routed++
		shutdown := a.typ == workspace.ShutdownRequest
		for _, to := range a.recipients {
			if shutdown {
				r.notifyShutdown(to, a.id)
			} else {
				r.notify(to)
			}
		}
		if !a.nudge {
			// A nudge is parley's, not its sender's: it shows no sign of
			// life, and is never itself waited on, nor nudged.
			r.expectReplies(a.agent, a.msg, a.recipients)
		}
		r.log.Debug("delivered", "id", a.id, "from", a.agent, "to", a.recipients)
	}
	for _, n := range b.notices {
		for _, to := range n.recipients {
			r.notify(to)
		}
	}
	return nil
}

// journaledAlready reports whether a message routed again was journaled
// as delivered by an attempt whose move to sent/ failed, and nothing new
// was delivered since: one line tells of it.
func (r *Runner) journaledAlready(a *accepted) bool {
	p := r.pending[a.fileKey]
	return p != nil && p.get().journaled == a.id && len(a.already) == len(a.recipients)
}

// unsureSettles is how many settle times a file that does not parse is
// waited for, when whether a writer still holds it cannot be known.
const unsureSettles = 10

// hold leaves a file for later, with its sender's later files, and looks
// again at it no later than at.
func (b *batch) hold(c candidate, at time.Time) {
	b.held[c.agent] = true
	if b.wait.IsZero() || at.Before(b.wait) {
		b.wait = at
	}
}

// refuseInPlace refuses a link in an outbox (a symbolic link, or a file
// with more than one hard link: mailbox.Linked) where it is, with the
// reason beside it (<name>.reason): moved to rejected/, where a person
// fixes a refused file and moves it back, it would lead them to edit the
// file it is linked to (/etc/passwd, say), and delivered, it would hand
// out a file its sender may not read. It stays refused while it is a
// link; once it is a file of its own, it is routed.
func (b *batch) refuseInPlace(i int, c candidate) {
	r := b.r
	delete(r.pending, c.fileKey)
	r.chains.forget(c.fileKey)
	r.inPlace[c.fileKey] = true
	if c.reasoned {
		return // refused already, by this runner or one before
	}
	shown := visible.Line(c.name) // a name may hold anything: seen, never acted on by a terminal
	text := fmt.Sprintf("%s: a hard link (%d names for one file), refused and left where it is: parley does not send a file linked from elsewhere; replace it with a copy of its own to send it", shown, mailbox.Links(c.info))
	// A copy renamed over it (cp --remove-destination of the file onto
	// itself fails: the same file); NAME.tmp is a scratch name, never
	// routed.
	mend := fmt.Sprintf("The file is left where it is. Remove it, or replace it with a copy of its\nown, and parley routes it; in the outbox:\n\n    cp %s %s && mv %s %s\n", shellWord(c.name), shellWord(c.name+".tmp"), shellWord(c.name+".tmp"), shellWord(c.name))
	if c.info.Mode()&fs.ModeSymlink != 0 {
		// Said as every command says it (mailbox.NotRegularError).
		text = shown + ": " + (&mailbox.NotRegularError{Mode: fs.ModeSymlink}).Error()
		name := shellWord(c.name)
		mend = fmt.Sprintf("The link is left where it is. Remove it, or replace it with a copy of the\nfile it points to, and parley routes it; in the outbox:\n\n    cp --remove-destination \"$(readlink %s)\" %s\n", name, name)
	}
	box := r.agents[c.agent]
	note := text + "\n\nagent:    " + c.agent + "\nfile:     mailboxes/" + c.agent + "/outbox/" + shown + "\nrefused:  " + b.now.UTC().Format(mailbox.TimeFormat) + "\n\n" + mend
	if err := box.Explain(mailbox.Outbox, c.name, note, r.syncer); err != nil {
		r.fail(c, b.now, fmt.Errorf("writing why it is refused: %w", err))
		return
	}
	rel := mailboxPath(c.agent, mailbox.Outbox, c.name)
	r.statsMu.Lock()
	r.stats.RefusedInPlace++
	if len(r.stats.RefusedInPlaceFiles) < maxListed {
		r.stats.RefusedInPlaceFiles = append(r.stats.RefusedInPlaceFiles, workspace.Problem{Agent: c.agent, Path: rel, Reason: text})
	}
	r.statsMu.Unlock()
	r.refusedNow[c.fileKey] = true
	b.entries[i] = &workspace.Entry{From: c.agent, Outcome: workspace.Refused, Reason: text, File: c.name, Path: rel}
	r.log.Log(context.Background(), r.listedLevel(), "refused, left in the outbox", "agent", c.agent, "file", c.name, "reason", text)
}

// shellWord is a file name as a person pastes it into a shell: quoted
// when it holds anything but letters, digits and "._-", and never taken
// for an option.
func shellWord(name string) string {
	if strings.HasPrefix(name, "-") {
		name = "./" + name
	}
	plain := strings.IndexFunc(name, func(r rune) bool {
		return !(r == '.' || r == '_' || r == '-' || r == '/' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0
	if plain && name != "" {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
}

// dropReason removes the reason beside a file that was refused where it
// was, once the file is routed or moved to rejected/.
func (r *Runner) dropReason(c candidate) {
	if !c.reasoned {
		return
	}
	if err := r.agents[c.agent].Unexplain(mailbox.Outbox, c.name); err != nil {
		r.log.Warn("cannot remove a reason file", "agent", c.agent, "file", c.name+mailbox.ReasonSuffix, "err", err)
	}
}

// maxAttempts is how often `parley run --until-idle` tries a file that
// fails before giving up on it.
const maxAttempts = 4

// fail records a failed attempt to route a file: it is tried again after
// a pause that doubles with each failure, up to the rescan interval, and
// its sender's later files wait for it.
func (r *Runner) fail(c candidate, now time.Time, err error) {
	p := r.note(c.fileKey).more()
	p.failures++
	p.lastErr = err
	if p.failures == 1 {
		p.since = now
	}
	p.to = ""
	if de := (*deliveryError)(nil); errors.As(err, &de) {
		p.to = de.to
	}
	r.failing[c.fileKey] = true
	limit := r.ws().Config.Router.RescanInterval
	if errors.Is(err, errJournal) {
		limit = min(limit, journalRetry) // the disk may have room again any moment
	}
	pause := min(100*time.Millisecond<<min(p.failures-1, 16), limit)
	p.retryAt = now.Add(pause)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		r.repairSoon() // a mailbox directory went missing: make it again first
	}
	r.log.Error("routing failed; trying again", "agent", c.agent, "file", c.name, "attempt", p.failures, "retry_in", pause, "err", err)
}

// deliveryError is a copy of a message that could not be delivered to
// one of its recipients.
type deliveryError struct {
	to  string
	err error
}

func (e *deliveryError) Error() string { return fmt.Sprintf("delivering to %s: %v", e.to, e.err) }
func (e *deliveryError) Unwrap() error { return e.err }

// noteFailing has runner.json say which outbox files keep failing (see
// workspace.FailingDelivery), for parley status, when that changed: a
// file failing, failing again or for another reason, or routed at last.
func (r *Runner) noteFailing() {
	if r.infoUnwritten {
		defer r.writeRunnerInfo() // unless written below
	}
	if len(r.failing) == 0 && len(r.toldFailing) == 0 {
		return
	}
	var now []workspace.FailingDelivery
	held := map[string]int{} // agent -> its files pending behind those failing
	for k := range r.failing {
		p := r.pending[k]
		if p == nil || p.get().failures == 0 {
			delete(r.failing, k) // routed, refused, or gone
			continue
		}
		held[k.agent] = 0
	}
	if len(r.failing) > 0 {
		for k := range r.pending {
			if n, ok := held[k.agent]; ok && !r.failing[k] {
				held[k.agent] = n + 1
			}
		}
	}
	for k := range r.failing {
		p := r.pending[k].get()
		reason := ""
		if p.lastErr != nil {
			reason = p.lastErr.Error()
		}
		now = append(now, workspace.FailingDelivery{Agent: k.agent, Path: mailboxPath(k.agent, mailbox.Outbox, k.name), To: p.to,
			Reason: reason, Since: p.since.UTC(), Attempts: p.failures, Next: p.retryAt.UTC(), Waiting: held[k.agent]})
	}
	sort.Slice(now, func(i, j int) bool { return now[i].Path < now[j].Path })
	if slices.Equal(now, r.toldFailing) {
		return
	}
	r.toldFailing = now
	if !r.infoUnwritten {
		r.writeRunnerInfo()
	}
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
// file's modification time (now, for one dated in the future), but after the last message its sender sent,
// so that ids (and inbox listings) keep the order messages were routed
// in; its last six hex digits are drawn from the file's name and content
// (see routedAlready).
func (r *Runner) newID(c candidate, data []byte) string {
	t := c.info.ModTime().UTC().Truncate(time.Microsecond)
	if now := r.opts.Now().UTC().Truncate(time.Microsecond); t.After(now) {
		// A file dated in the future (a clock set wrong, `touch -d`) is
		// sent now: its id would pin the sender's later ids there.
		t = now
	}
	if last := r.lastSent(c.agent); !t.After(last) {
		t = last.Add(time.Microsecond)
	}
	r.last[c.agent] = t
	return mailbox.IDOf(c.agent, t, c.name, data)
}

// routedAlready returns the id of a message in the sender's sent/ that
// this file, which came without an id, was routed as before: a file of
// the same name and content put back in the outbox (`git checkout`, `git
// stash pop` of a mailbox). It is the one whose id ends in the digits
// drawn from the file's name and content, which reads, byte for byte,
// as the file (or as the file given that id: earlier runners wrote the
// id into it before moving it), and which the journal says came from a file of that
// name.
func (r *Runner) routedAlready(c candidate, data []byte, m *mailbox.Message) (string, bool) {
	box := r.agents[c.agent]
	index := r.suffixes[c.agent]
	if index == nil {
		// Built the first time a file without an id comes from this
		// sender, then kept up to date by noteSent.
		index = make(map[string][]string)
		ids, _ := box.IDs(mailbox.Sent)
		for _, id := range ids {
			index[mailbox.IDSuffix(id)] = append(index[mailbox.IDSuffix(id)], id)
		}
		r.suffixes[c.agent] = index
	}
	for _, id := range index[mailbox.ContentSuffix(c.name, data)] {
		sent, err := mailbox.ReadFile(box.Path(mailbox.Sent, mailbox.FileName(id)), r.ws().Config.Router.MaxMessageSize)
		if err != nil {
			continue
		}
		if mailbox.SentCopy(sent, data, m, id) && r.journaledFrom(c.agent, id, c.name) {
			return id, true
		}
	}
	return "", false
}

// routedAlreadyReason is why a file routed before (routedAlready) is
// refused: what it is taken for, and how to send it all the same.
func routedAlreadyReason(id string) string {
	when := ""
	if t, _, err := mailbox.ParseID(id); err == nil {
		when = " on " + t.Local().Format("2006-01-02 15:04:05")
	}
	return fmt.Sprintf("routed already: a file of this name and text was sent as %s%s; taken for that message put back (git checkout, git stash pop), not sent twice. To send it again as a new message: parley retry it, or write it under another name", id, when)
}

// errFound stops a read of the journal.
var errFound = errors.New("found")

// journaledFrom reports whether the journal says a message was routed
// from a file of this name. Two files of the same content under other
// names read the same once given an id; only the journal, which names
// the file each message came from, tells them apart. It is asked only
// when a file's content matches a message in sent/ whose id ends in the
// digits drawn from the file's name and content, which a flood of files
// of one content under many names does often (they share the digits one
// time in 16 million each), so it does not read the journal each time:
// it keeps an index of the deliveries from files not named by their id
// (see journalIndex), brought up to date from where it last read.
func (r *Runner) journaledFrom(agent, id, name string) bool {
	if name == mailbox.FileName(id) {
		return r.journaledOnce(agent, id, name) // not in the index: see journalIndex.add
	}
	ji := &r.journaled
	path := r.ws().JournalPath()
	if info, err := os.Stat(path); err == nil {
		if ji.file != nil && (!os.SameFile(ji.file, info) || info.Size() < ji.pos.Offset) {
			*ji = journalIndex{read: ji.read} // the journal was replaced: read it from its start
		}
		ji.file = info
	}
	f := workspace.JournalFilter{Outcomes: []string{workspace.Delivered}}
	pos, err := f.ReadFrom(path, ji.pos, func(e workspace.Entry, _ []byte) error {
		ji.add(e)
		return nil
	})
	ji.read += pos.Lines - ji.pos.Lines
	ji.pos = pos
	var je *workspace.JournalError
	if err != nil && !errors.As(err, &je) {
		// Not read to its end: what it holds after pos is not known.
		return r.journaledOnce(agent, id, name)
	}
	return ji.from[journalKey{agent, id, name}]
}

// journaledOnce reads the whole journal for the delivery of id from a
// file of this name.
func (r *Runner) journaledOnce(agent, id, name string) bool {
	f := workspace.JournalFilter{Agents: []string{agent}, Outcomes: []string{workspace.Delivered}, IDs: []string{id}}
	err := f.Read(r.ws().JournalPath(), func(e workspace.Entry, _ []byte) error {
		if e.ID == id && e.From == agent && e.File == name {
			return errFound
		}
		return nil
	})
	return errors.Is(err, errFound)
}

// journalIndex is what journaledFrom knows of the journal: the
// deliveries of files not named by their id, read up to pos.
type journalIndex struct {
	pos  workspace.JournalPosition
	from map[journalKey]bool
	file os.FileInfo // the journal read, to tell when it is replaced
	read int         // lines read in all: each once, unless the journal is replaced
}

// journalKey is a message delivered from a file: its sender, id and the
// name of the file.
type journalKey struct{ agent, id, file string }

// add notes a delivery from a file not named by its id (a file written
// by hand): only those are asked of journaledFrom, the index stays the
// size of what was written by hand.
func (ji *journalIndex) add(e workspace.Entry) {
	if e.Outcome != workspace.Delivered || e.File == "" || e.File == mailbox.FileName(e.ID) {
		return
	}
	if ji.from == nil {
		ji.from = make(map[journalKey]bool)
	}
	ji.from[journalKey{strings.Clone(e.From), strings.Clone(e.ID), strings.Clone(e.File)}] = true
}

// lastSent returns the time of the newest id an agent has sent, reading
// its sent/ directory the first time it is asked: only a file without an
// id needs it, so a runner whose senders name their files by id never
// reads sent/, however much it holds.
func (r *Runner) lastSent(agent string) time.Time {
	last := r.last[agent] // what noteSent saw, which may not be in sent/ yet
	if r.lastRead[agent] {
		return last
	}
	if ids, err := r.agents[agent].IDs(mailbox.Sent); err == nil && len(ids) > 0 {
		if t, _, err := mailbox.ParseID(ids[len(ids)-1]); err == nil && t.After(last) {
			last = t
		}
	}
	r.last[agent], r.lastRead[agent] = last, true
	return last
}

// noteSent records that an agent sent a message with this id.
func (r *Runner) noteSent(agent, id string) {
	if t, _, err := mailbox.ParseID(id); err == nil && t.After(r.last[agent]) {
		r.last[agent] = t
	}
	if index := r.suffixes[agent]; index != nil && !slices.Contains(index[mailbox.IDSuffix(id)], id) {
		index[mailbox.IDSuffix(id)] = append(index[mailbox.IDSuffix(id)], id)
	}
}

// msgID returns the id a message carries, if any.
func msgID(m *mailbox.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	return m.Header().Get("id")
}

// rejectionNote is the text of a .reason file: the reason on the first
// line (what `parley status` shows), then what a person needs to act;
// anew when only a new id mends it (see workspace.Refusal).
func rejectionNote(reason string, anew bool, c candidate, now time.Time) string {
	todo := "The file beside this one is the input, unchanged. To send it again, fix it\n" +
		"and move it back into the outbox.\n"
	if anew {
		todo = "The file beside this one is the input, unchanged. Moved back into the outbox\n" +
			"it is refused again: only a new id mends it. To send it as " + c.agent + "'s, under\n" +
			"an id of its own: parley retry --as " + c.agent + " FILE (FILE: the file beside this one).\n"
	}
	if c.notText {
		todo = "The file beside this one is the input, unchanged. It is not text: no editor\n" +
			"mends it, and moved back into the outbox it is refused again. To send what\n" +
			"it was meant to say, write that as a new message.\n"
	}
	if c.again {
		todo = "The file beside this one is the input, unchanged. Moved back into the outbox\n" +
			"under its old name it is refused again: to send it as a new message, run\n" +
			"parley retry on it (it goes back under this file's name), or move it back\n" +
			"under another name.\n"
	}
	return reason + "\n" +
		"\n" +
		"agent:    " + c.agent + "\n" +
		"file:     " + visible.Line(c.name) + " (was in mailboxes/" + c.agent + "/outbox/)\n" +
		"rejected: " + now.UTC().Format(mailbox.TimeFormat) + "\n" +
		"\n" + todo
}

// isGone reports whether an error means the file is no longer there.
func isGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}

// landing is the ids being delivered whose delivery is not journaled
// yet. A worker may find a copy in its inbox as soon as it is written
// (it lists its inbox when it finishes a message, before the router's
// notify), while the batch's journal waits for the batch's sync: what
// the agent's driver journals (a model's call, its handling) would come
// before the delivery. The worker waits for the id to land.
type landing struct {
	mu  sync.Mutex
	ids map[string]chan struct{}
}

// add notes an id whose copies are about to be written.
func (l *landing) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil {
		l.ids = make(map[string]chan struct{})
	}
	if _, ok := l.ids[id]; !ok {
		l.ids[id] = make(chan struct{})
	}
}

// done notes that an id's batch landed (journaled, or failed).
func (l *landing) done(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, ok := l.ids[id]; ok {
		close(ch)
		delete(l.ids, id)
	}
}

// wait returns once the id is not being delivered, or ctx is done.
func (l *landing) wait(ctx context.Context, id string) {
	l.mu.Lock()
	ch := l.ids[id]
	l.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
