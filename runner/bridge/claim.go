package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Claims. Two workspaces that read the stream as one bridge name (a
// parley.yaml copied to a second machine) would share its consumer,
// parley-<name>, and each take part of the other's messages: none lost
// or doubled, but split between them without a word. So the workspace
// that reads as a name writes who it is (a random id kept in
// .parley/bridge-id, its host and its directory) in the consumer's
// metadata before it takes anything, again every beatEvery while it
// reads (the beat, in the server's time), and takes it back when it
// stops. A bridge that finds the name held by another workspace, whose
// beat is less than holdFor old, takes and forwards nothing: it says so
// in its log and its state (NameHeldBy), notes itself in the metadata,
// for the holder to say so too (NameAlsoClaimedBy), and looks again
// until the holder stops. Two bridges that claim the name at the same
// moment may both read until the next beat, when the one that finds the
// other's claim stops: what either took is delivered, once.
//
// A workspace is known by its id, host and directory; each run of it
// also by a random run id. A fresh claim of this workspace by another
// run is this workspace's run before, killed (its beat stops), or a copy
// of the workspace, .parley/ and all, on a machine of the same name and
// directory (a laptop restored from a backup of one still in use: its
// beat goes on). Such a claim holds the name until its beat is late
// (holdOf), which tells them apart.

const (
	beatEvery = 5 * time.Second
	holdFor   = 20 * time.Second
	// claimSettle is how long a bridge that took the name waits before
	// it looks whether another took it at the same moment.
	claimSettle = 300 * time.Millisecond
	// earlyLook is how often a bridge looks at its claim before a batch
	// in the first beat after it took the name.
	earlyLook = time.Second
	// beatSlack is how late a beat may come (the server's fsync, the
	// link) and still count as on time.
	beatSlack = 3 * time.Second
	// alsoHold is how long the note of a workspace refused the name
	// holds after its last beat: it beats every beatEvery while it tries
	// (it looks every two seconds), and two beats missed, it stopped.
	alsoHold = 2*beatEvery + beatSlack
)

// The consumer's metadata keys a claim is written under.
const (
	metaID       = "parley_workspace"
	metaHost     = "parley_host"
	metaRoot     = "parley_root"
	metaPID      = "parley_pid"
	metaRun      = "parley_run" // the run's random id (identity.Run)
	metaBeat     = "parley_beat"
	metaAlso     = "parley_also"    // the workspace last refused the name, as identity.String
	metaAlsoID   = "parley_also_id" // its identity.runKey
	metaAlsoBeat = "parley_also_beat"
)

// ErrNameHeld is the error when another workspace reads the stream as
// this workspace's bridge name.
var ErrNameHeld = errors.New("another workspace reads the stream as this bridge name")

// identity is who reads as a bridge name.
type identity struct {
	ID, Host, Root string
	PID            int
	Run            string // drawn at random by each run; "" in a claim by parley before it
}

// key is the workspace: its runs share it.
func (i identity) key() string { return i.ID + "|" + i.Host + "|" + i.Root }

// runKey is the workspace's run.
func (i identity) runKey() string { return i.key() + "|" + i.Run }

// sameRun reports whether i and j are one run; a claim written before
// runs had ids is taken for this workspace's own.
func (i identity) sameRun(j identity) bool {
	return i.key() == j.key() && (i.Run == "" || j.Run == "" || i.Run == j.Run)
}

func (i identity) String() string {
	return fmt.Sprintf("%s on host %s (pid %d)", i.Root, i.Host, i.PID)
}

// selfIdentity is this workspace's identity, its id read from
// .parley/bridge-id, or drawn and kept there the first time.
func selfIdentity(ws *workspace.Workspace) (identity, error) {
	root, err := filepath.Abs(ws.Root)
	if err != nil {
		return identity{}, err
	}
	host, _ := os.Hostname()
	path := filepath.Join(ws.Root, workspace.StateDir, "bridge-id")
	data, err := os.ReadFile(path)
	id := strings.TrimSpace(string(data))
	if errors.Is(err, os.ErrNotExist) || (err == nil && id == "") {
		var raw [16]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return identity{}, err
		}
		id = hex.EncodeToString(raw[:])
		if err := mailbox.WriteFileAtomic(path, []byte(id+"\n")); err != nil {
			return identity{}, err
		}
	} else if err != nil {
		return identity{}, err
	}
	var run [8]byte
	if _, err := rand.Read(run[:]); err != nil {
		return identity{}, err
	}
	return identity{ID: id, Host: host, Root: root, PID: os.Getpid(), Run: hex.EncodeToString(run[:])}, nil
}

func claimOf(meta map[string]string) (identity, time.Time) {
	pid, _ := strconv.Atoi(meta[metaPID])
	beat, _ := time.Parse(time.RFC3339Nano, meta[metaBeat])
	return identity{ID: meta[metaID], Host: meta[metaHost], Root: meta[metaRoot], PID: pid, Run: meta[metaRun]}, beat
}

// parleyMeta keeps the keys of the consumer's metadata parley wrote.
func parleyMeta(meta map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range meta {
		if strings.HasPrefix(k, "parley_") {
			out[k] = v
		}
	}
	return out
}

// claim reads the stream as this workspace's name: it writes this
// workspace in the consumer's metadata with a fresh beat, unless another
// workspace holds the name (ErrNameHeld).
func (b *Bridge) claim(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, b.cfg.Stream, b.durable())
	if err != nil {
		return fmt.Errorf("consumer %s: %w", b.durable(), err)
	}
	info := c.CachedInfo()
	now := info.TimeStamp
	if now.IsZero() {
		now = time.Now().UTC()
	}
	meta := parleyMeta(info.Config.Metadata)
	holder, beat := claimOf(meta)
	if holder.ID != "" && !holder.sameRun(b.self) && !beat.IsZero() && now.Sub(beat) < holdOf(holder, b.self) {
		// Noted for the holder to say, a beat at a time.
		alsoBeat, _ := time.Parse(time.RFC3339Nano, meta[metaAlsoBeat])
		if meta[metaAlsoID] != b.self.runKey() || now.Sub(alsoBeat) >= beatEvery {
			meta[metaAlso], meta[metaAlsoID], meta[metaAlsoBeat] = b.self.String(), b.self.runKey(), now.Format(time.RFC3339Nano)
			// Not noted, the holder does not say it: this side does.
			_, _ = js.UpdateConsumer(ctx, b.cfg.Stream, b.consumerConfig(meta))
		}
		return b.heldError(holder)
	}
	also := ""
	alsoBeat, _ := time.Parse(time.RFC3339Nano, meta[metaAlsoBeat])
	taken := holder.runKey() != b.self.runKey()
	b.mu.Lock()
	since := b.takenServer
	b.mu.Unlock()
	if taken {
		since = now
	}
	// A note written before this run took the name is of one refused by
	// the holder before (perhaps this workspace's own run before, killed
	// while it waited): reported only once it is written again, as one
	// still trying writes it each beat.
	if meta[metaAlsoID] != "" && meta[metaAlsoID] != b.self.runKey() && now.Sub(alsoBeat) < alsoHold && alsoBeat.After(since) {
		also = meta[metaAlso]
		if strings.HasPrefix(meta[metaAlsoID], b.self.key()+"|") {
			also += ": a copy of this workspace with its .parley/ (the same bridge-id) on a machine of the same name (remove the copy's " + workspace.StateDir + "/bridge-id)"
		}
	} else {
		delete(meta, metaAlso)
		delete(meta, metaAlsoID)
		delete(meta, metaAlsoBeat)
	}
	meta[metaID], meta[metaHost], meta[metaRoot] = b.self.ID, b.self.Host, b.self.Root
	meta[metaPID], meta[metaBeat] = strconv.Itoa(b.self.PID), now.Format(time.RFC3339Nano)
	meta[metaRun] = b.self.Run
	if _, err := js.UpdateConsumer(ctx, b.cfg.Stream, b.consumerConfig(meta)); err != nil {
		return fmt.Errorf("consumer %s: %w", b.durable(), err)
	}
	if holder.runKey() != b.self.runKey() {
		// Taken now: another workspace that read the name free at the
		// same moment wrote its claim a moment before or after this
		// one. The claim written last holds; the other finds it here.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(claimSettle):
		}
		c, err := js.Consumer(ctx, b.cfg.Stream, b.durable())
		if err != nil {
			return fmt.Errorf("consumer %s: %w", b.durable(), err)
		}
		// A server that keeps no metadata (before NATS 2.10) keeps no
		// claim: nothing holds the name.
		if now, _ := claimOf(c.CachedInfo().Config.Metadata); now.ID != "" && now.runKey() != b.self.runKey() {
			return b.heldError(now)
		}
	}
	was := b.setHeld("")
	b.mu.Lock()
	warn := also != "" && also != b.alsoBy
	b.alsoBy = also
	b.beatAt = time.Now() // monotonic: a pause (a laptop asleep) counts
	if taken {
		b.takenAt, b.takenServer = b.beatAt, now
	}
	b.mu.Unlock()
	if was != "" {
		b.log.Info(fmt.Sprintf("bridge name %q is free again: this workspace takes and forwards what waits", b.cfg.Name), "held_by", was)
	}
	if warn {
		b.log.Warn(fmt.Sprintf("another workspace tried to read the stream as this bridge name, %q: it was refused, and takes and forwards nothing while this one reads (give one of them another bridge: name: in %s)", b.cfg.Name, workspace.ConfigFile),
			"workspace", also)
	}
	return nil
}

// claimDue claims the name again (claim) when the last claim is a beat
// old: called before each batch is taken, so that a bridge paused past
// holdFor (a laptop asleep), whose name a twin may hold now, takes and
// acknowledges nothing before it looked, and a long run until idle
// keeps its claim fresh. In the first beat after it took the name, a
// second old is enough: a twin whose claim landed after this one's
// settle (claimSettle) is found within a second, not five.
func (b *Bridge) claimDue(ctx context.Context, js jetstream.JetStream) error {
	b.mu.Lock()
	since := time.Since(b.beatAt)
	due := since >= beatEvery || time.Since(b.takenAt) < beatEvery && since >= earlyLook
	b.mu.Unlock()
	if !due {
		return nil
	}
	return b.claim(ctx, js)
}

// heldError is the error of a bridge whose name holder holds.
func (b *Bridge) heldError(holder identity) error {
	if holder.key() == b.self.key() {
		who := holder.String() + ": this workspace's run before, or a copy of this workspace with its .parley/ (the same bridge-id) on a machine of the same name"
		b.setHeld(who)
		return fmt.Errorf("bridge name %q: %w: %s; this run takes and forwards nothing until that claim is %s old: a run killed claims no more, a copy goes on (remove the copy's %s/bridge-id, and give it another bridge: name: in %s)",
			b.cfg.Name, ErrNameHeld, who, beatEvery+beatSlack, workspace.StateDir, workspace.ConfigFile)
	}
	b.setHeld(holder.String())
	return fmt.Errorf("bridge name %q: %w: %s; two workspaces of one name would each take part of the other's messages, so this one takes and forwards nothing until that one stops (give one of them another bridge: name: in %s, and the remote: that name it)",
		b.cfg.Name, ErrNameHeld, holder, workspace.ConfigFile)
}

// setHeld notes who holds the name, "" for this workspace, and returns
// who held it before.
func (b *Bridge) setHeld(by string) (was string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was = b.heldBy
	if !b.claimed {
		close(b.looked)
	}
	b.heldBy, b.claimed = by, true
	return was
}

// holdOf is how long holder's claim holds the name against self after
// its last beat: holdFor; but a claim of self's own workspace by another
// run (this workspace's run before, or a copy of it elsewhere) only
// until a beat is late, beatEvery and beatSlack: a run killed beats no
// more, and is taken over soon after; a copy goes on beating.
func holdOf(holder, self identity) time.Duration {
	if holder.key() == self.key() {
		return beatEvery + beatSlack
	}
	return holdFor
}

// release takes back this workspace's claim, when it holds the name: a
// workspace refused meanwhile takes over at its next look, not holdFor
// later. A workspace refused the name takes back its note instead: the
// holder says no more that it tries, from its next beat on.
func (b *Bridge) release(js jetstream.JetStream) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, b.cfg.Stream, b.durable())
	if err != nil {
		return
	}
	meta := parleyMeta(c.CachedInfo().Config.Metadata)
	keys := []string{metaID, metaHost, metaRoot, metaPID, metaBeat, metaRun}
	if holder, _ := claimOf(meta); holder.runKey() != b.self.runKey() {
		if meta[metaAlsoID] != b.self.runKey() {
			return
		}
		// Written back over the holder's claim as read: a beat written
		// meanwhile goes back one beat, well within holdFor.
		keys = []string{metaAlso, metaAlsoID, metaAlsoBeat}
	}
	for _, k := range keys {
		delete(meta, k)
	}
	if _, err := js.UpdateConsumer(ctx, b.cfg.Stream, b.consumerConfig(meta)); err != nil {
		// A twin waiting takes over once the claim is old (holdFor).
		b.log.Debug("the bridge name's claim was not taken back", "err", err)
	}
}

// mayForward reports whether this workspace holds its name, as last
// looked: not before the first look, nor while another holds it.
func (b *Bridge) mayForward() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.claimed && b.heldBy == ""
}

// consumerConfig is the configuration of this workspace's consumer, with
// the metadata meta.
func (b *Bridge) consumerConfig(meta map[string]string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       b.durable(),
		Description:   "parley workspace " + b.cfg.Name,
		FilterSubject: b.filter(),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    -1, // the bridge counts failures itself, and keeps what fails in dead/
		MaxAckPending: 4 * window,
		Metadata:      maps.Clone(meta),
	}
}

// sameConsumer reports whether the consumer configured have is as want
// says, but for its metadata.
func sameConsumer(have, want jetstream.ConsumerConfig) bool {
	return have.Durable == want.Durable && have.Description == want.Description &&
		have.FilterSubject == want.FilterSubject && len(have.FilterSubjects) == 0 &&
		have.DeliverPolicy == want.DeliverPolicy && have.AckPolicy == want.AckPolicy &&
		have.AckWait == want.AckWait && have.MaxDeliver == want.MaxDeliver &&
		have.MaxAckPending == want.MaxAckPending
}
