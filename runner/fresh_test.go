package runner

import (
	"os"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// heldBy counts the copies of a message an agent holds in every received
// state.
func heldBy(t *testing.T, ws *workspace.Workspace, agent, name string) int {
	t.Helper()
	n := 0
	for _, st := range []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead} {
		if _, err := os.Lstat(ws.Mailbox(agent).Path(st, name)); err == nil {
			n++
		}
	}
	return n
}

// maxAheadForTests dates an id after the clock, by less than the check
// allows (workspace.MaxIDAhead).
const maxAheadForTests = 3 * time.Minute

// sentAt writes into alice's outbox a message to bob named by an id
// dated at.
func sentAt(t *testing.T, ws *workspace.Workspace, at time.Time) (id, name string) {
	t.Helper()
	id = mailbox.IDAt("alice", at)
	name = mailbox.FileName(id)
	drop(t, ws, "alice", name, "---\nid: "+id+"\nfrom: alice\nto: bob\n---\nhello\n")
	return id, name
}

// handledAndPutBack leaves bob's copy of a routed message in done/ and
// puts its file back in alice's outbox, not in sent/, as a git checkout
// of alice's mailbox from before it was routed would.
func handledAndPutBack(t *testing.T, ws *workspace.Workspace, name string) {
	t.Helper()
	bob, alice := ws.Mailbox("bob"), ws.Mailbox("alice")
	if err := os.Rename(bob.Path(mailbox.Inbox, name), bob.Path(mailbox.Done, name)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(alice.Path(mailbox.Sent, name), alice.Path(mailbox.Outbox, name)); err != nil {
		t.Fatal(err)
	}
	age(t, alice.Path(mailbox.Outbox, name))
}

// TestFreshAfterCleanStop: a runner that stops cleanly writes down the
// newest id it began delivering, and the next looks for the copies of
// that message before delivering it again: bob, who handled it, does not
// get it twice. It fails if the record claims less than was begun.
func TestFreshAfterCleanStop(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	// Dated after the workspace was made: newer than any id begun.
	id, name := sentAt(t, ws, time.Now())
	if stats := routeAll(t, ws); stats.Deliveries != 1 {
		t.Fatalf("first run: %+v, want 1 delivery", stats)
	}
	rec, err := ws.ReadDeliveryRecord()
	if err != nil {
		t.Fatal(err)
	}
	sent, _, _ := mailbox.ParseID(id)
	if rec.Running || rec.Newest.Before(sent) {
		t.Errorf("record after a clean stop = %+v, want not running and newest at or after %s", rec, sent)
	}
	handledAndPutBack(t, ws, name)
	stats := routeAll(t, ws)
	if n := heldBy(t, ws, "bob", name); n != 1 || stats.Recovered != 1 {
		t.Errorf("bob holds %d copies (stats %+v), want 1, found in done/", n, stats)
	}
}

// TestFreshAfterCrash: after a runner that did not stop cleanly (the
// record says one is at work), a message the one stopped may have
// delivered is looked for: even one dated after this runner starts, by a
// program whose clock runs ahead.
func TestFreshAfterCrash(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	before := time.Now().Add(-time.Second)
	_, name := sentAt(t, ws, time.Now().Add(maxAheadForTests))
	// Killed after delivering it to bob, who handled it, before the
	// file went to sent/.
	if err := os.WriteFile(ws.Mailbox("bob").Path(mailbox.Done, name), []byte("---\nfrom: alice\n---\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteDeliveryRecord(workspace.DeliveryRecord{Newest: before, Running: true}); err != nil {
		t.Fatal(err)
	}
	stats := routeAll(t, ws)
	if n := heldBy(t, ws, "bob", name); n != 1 || stats.Recovered != 1 {
		t.Errorf("bob holds %d copies (stats %+v), want 1, found in done/", n, stats)
	}
}

// TestFreshWithoutRecord: without .parley/delivered.json (removed, or a
// workspace older than it) nothing is known of what was delivered: every
// message is looked for, even one dated ahead.
func TestFreshWithoutRecord(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	_, name := sentAt(t, ws, time.Now().Add(maxAheadForTests))
	if err := os.WriteFile(ws.Mailbox("bob").Path(mailbox.Done, name), []byte("---\nfrom: alice\n---\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ws.DeliveryRecordPath()); err != nil {
		t.Fatal(err)
	}
	stats := routeAll(t, ws)
	if n := heldBy(t, ws, "bob", name); n != 1 || stats.Recovered != 1 {
		t.Errorf("bob holds %d copies (stats %+v), want 1, found in done/", n, stats)
	}
	if rec, err := ws.ReadDeliveryRecord(); err != nil || rec.Running {
		t.Errorf("record after a clean stop = %+v, %v; want one, not running", rec, err)
	}
}

// TestFreshIDs: which ids are fresh, and how beginning one changes that.
func TestFreshIDs(t *testing.T) {
	floor := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	f := freshIDs{on: true, marked: true, floor: floor, newest: map[string]time.Time{}}
	old, next, later := mailbox.IDAt("alice", floor), mailbox.IDAt("alice", floor.Add(time.Second)), mailbox.IDAt("alice", floor.Add(2*time.Second))
	if f.is("alice", old) {
		t.Errorf("an id dated at the floor is fresh")
	}
	if !f.begin("alice", later) || f.begin("alice", later) {
		t.Errorf("an id after the floor: fresh the first time it is begun, and only then")
	}
	if f.is("alice", next) {
		t.Errorf("an id older than one begun (sent out of order) is fresh")
	}
	if !f.is("bob", mailbox.IDAt("bob", floor.Add(time.Second))) {
		t.Errorf("another sender's id after the floor is not fresh")
	}
	if f.is("alice", "not-an-id") {
		t.Errorf("a malformed id is fresh")
	}
	f.on = false
	if f.is("bob", mailbox.IDAt("bob", floor.Add(time.Hour))) {
		t.Errorf("an id is fresh when the record could not be written")
	}
}

// TestFreshMarkedAtOpen: a runner says it is at work before it delivers
// anything, so that a runner killed while delivering leaves a record that
// makes the next look for what it may have delivered.
func TestFreshMarkedAtOpen(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ws.ReadDeliveryRecord()
	if err != nil || !rec.Running {
		t.Errorf("record of an open runner = %+v, %v; want running", rec, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if rec, err := ws.ReadDeliveryRecord(); err != nil || rec.Running {
		t.Errorf("record after Close = %+v, %v; want not running", rec, err)
	}
}

// TestFreshAfterCrashFloor: after a runner that did not stop cleanly, ids
// are fresh again once dated an hour after this start (or after the
// record's date, when later): the one stopped began none dated further
// than MaxIDAhead after its clock.
func TestFreshAfterCrashFloor(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		newest, want time.Time
	}{
		{start.Add(-time.Hour), start.Add(afterUncleanStop)},
		{start.Add(3 * time.Hour), start.Add(3*time.Hour + afterUncleanStop)},
	} {
		if err := ws.WriteDeliveryRecord(workspace.DeliveryRecord{Newest: tt.newest, Running: true}); err != nil {
			t.Fatal(err)
		}
		r, err := Open(ws, Options{Now: func() time.Time { return start }})
		if err != nil {
			t.Fatal(err)
		}
		f := r.fresh
		r.Close()
		if !f.on || !f.floor.Equal(tt.want) {
			t.Errorf("after an unclean stop recorded at %v: fresh on %v, floor %v; want on, floor %v", tt.newest, f.on, f.floor, tt.want)
		}
		if afterUncleanStop <= workspace.MaxIDAhead {
			t.Errorf("afterUncleanStop %v is not beyond MaxIDAhead %v", afterUncleanStop, workspace.MaxIDAhead)
		}
	}
}

// TestFreshAfterCrashesInARow: runners killed one after another at the
// same clock each look for every message until an hour after their
// start, not an hour more per crash (15 kill -9s in a row made the next
// runners look for every message during the next 15 hours).
func TestFreshAfterCrashesInARow(t *testing.T) {
	ws := newWorkspace(t, "alice", "bob")
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	if err := ws.WriteDeliveryRecord(workspace.DeliveryRecord{Newest: start.Add(-time.Hour), Running: true}); err != nil {
		t.Fatal(err)
	}
	for crash := 1; crash <= 3; crash++ {
		r, err := Open(ws, Options{Now: func() time.Time { return start }})
		if err != nil {
			t.Fatal(err)
		}
		f := r.fresh
		left, err := ws.ReadDeliveryRecord() // what a kill -9 leaves
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if want := start.Add(afterUncleanStop); !f.floor.Equal(want) {
			t.Errorf("runner %d after a crash: floor %v, want %v", crash, f.floor, want)
		}
		if err := ws.WriteDeliveryRecord(left); err != nil {
			t.Fatal(err)
		}
	}
}
