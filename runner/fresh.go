package runner

import (
	"errors"
	"io/fs"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Fresh ids. Before it delivers a copy, the router looks for an earlier
// one in the recipient's inbox/, cur/, done/ and dead/, and in the
// sender's sent/ for the id (mailbox.Dir.Deliver, the check's duplicate
// id): a runner stopped between delivering a message and moving its file
// to sent/, or git putting a sender's outbox back, leaves a file whose
// copies may be anywhere. Those lookups were a quarter of the router's
// CPU. But no copy can exist of a message whose id is newer than every id
// a runner of this workspace began delivering: for such a fresh id only
// the inbox is looked at, by the link that delivers the copy
// (mailbox.Dir.DeliverNew).
//
// What was begun is known from .parley/delivered.json
// (workspace.DeliveryRecord): the date of the newest id a runner began
// delivering, written when it stops, and whether a runner is at work,
// written (durably) before it delivers anything. After a runner that
// stopped cleanly, an id dated after that newest one is fresh. After one
// killed, or cut off by a power cut, what it began is not written down;
// but it began no id dated more than workspace.MaxIDAhead after its clock
// (the check refuses those), and its clock read before this start: an id
// dated an hour after this start (afterUncleanStop: room for a clock set
// back across a power cut) is fresh. Without the record (a workspace made
// before it existed, or .parley/ removed: `git clean -fdX`), nothing is
// known of what runners of other versions began: every message is looked
// for, as before, until this runner stops cleanly.

// afterUncleanStop is how long after its start a runner that follows one
// that did not stop cleanly looks for every message before delivering it.
const afterUncleanStop = time.Hour

// freshIDs is what the runner knows of the ids begun.
type freshIDs struct {
	// marked: the record says this runner is at work, and is written
	// again when it stops. on: ids past floor are fresh (the runner
	// before stopped cleanly).
	marked, on bool
	// floor: every id begun before this runner started is dated at or
	// before it.
	floor time.Time
	// newest is the date of the newest id this runner began delivering,
	// by sender.
	newest map[string]time.Time
}

// openFresh reads the record and marks a runner at work, before anything
// is delivered.
func (r *Runner) openFresh(ws *workspace.Workspace) {
	f := &r.fresh
	f.newest = make(map[string]time.Time)
	f.floor = r.opts.Now().UTC()
	// mark is what the record says while this runner is at work: the
	// floor, or after an unclean stop the floor without the hour, which
	// the next runner adds again (written with it, each crash in a row
	// would push the floor an hour further: after 15, every message was
	// looked for during the next 15 hours).
	mark := f.floor
	rec, err := ws.ReadDeliveryRecord()
	switch {
	case err == nil && !rec.Running:
		f.floor, f.on = rec.Newest, true // nothing newer was begun
		mark = f.floor
	case err == nil:
		if rec.Newest.After(f.floor) {
			f.floor = rec.Newest
		}
		mark = f.floor
		f.floor, f.on = f.floor.Add(afterUncleanStop), true
		r.log.Info("the last runner did not stop cleanly: until the time given, each message is first looked for in its recipients' mailboxes, in case it was delivered before the stop", "until", f.floor.Format(time.RFC3339))
	case !errors.Is(err, fs.ErrNotExist):
		r.log.Warn("cannot read the record of delivered ids: every message is looked for in its recipients' mailboxes before it is delivered", "err", err)
	}
	if err := ws.WriteDeliveryRecord(workspace.DeliveryRecord{Newest: mark, Running: true}); err != nil {
		r.log.Warn("cannot write the record of delivered ids: every message is looked for in its recipients' mailboxes before it is delivered", "err", err)
		f.on = false
		return
	}
	f.marked = true
}

// is reports whether an id of a sender is fresh: newer than every id
// begun, by any runner, so no copy of it can exist.
func (f *freshIDs) is(from, id string) bool {
	t, _, err := mailbox.ParseID(id)
	return err == nil && f.on && t.After(f.floor) && t.After(f.newest[from])
}

// begin reports whether an id is fresh, and notes it begun: the runner is
// about to deliver it.
func (f *freshIDs) begin(from, id string) bool {
	t, _, err := mailbox.ParseID(id)
	if err != nil {
		return false
	}
	fresh := f.on && t.After(f.floor) && t.After(f.newest[from])
	if t.After(f.newest[from]) {
		f.newest[from] = t
	}
	return fresh
}

// closeFresh writes down, once nothing more is delivered, the newest id
// begun and that the runner stopped cleanly.
func (r *Runner) closeFresh(ws *workspace.Workspace) error {
	f := &r.fresh
	if !f.marked {
		return nil
	}
	newest := f.floor
	for _, t := range f.newest {
		if t.After(newest) {
			newest = t
		}
	}
	f.marked, f.on = false, false
	return ws.WriteDeliveryRecord(workspace.DeliveryRecord{Newest: newest})
}
