package bridge

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-dev/parley/runner/workspace"
)

// Readers. A message for an agent of another workspace is published to
// the stream under that workspace's name (the agent's remote:), and the
// workspace of that name reads it through its consumer, parley-<name>.
// A remote: that no workspace's bridge.name matches (a typo, or a
// workspace not started yet) leaves what is forwarded waiting in the
// stream, unread, while this side journals it as forwarded. So the bridge
// looks, now and then, for each remote workspace's consumer, warns once
// of each that has none, naming the workspaces that do read the stream,
// and says so in its state for `parley status`. A NATS user limited to
// the subjects of an earlier Permissions (without the other consumers'
// INFO) is refused the look: the bridge then stops looking, and the
// refusal is no error of the bridge's.

// lookForReaders notes the remote workspaces, of this workspace's
// agents, that no workspace reads the stream as: their consumers do not
// exist. It changes nothing when the stream cannot be asked, and
// reports whether it could (or had nothing to ask).
func (b *Bridge) lookForReaders(ctx context.Context, js jetstream.JetStream) bool {
	remotes := b.remotes()
	b.mu.Lock()
	off := b.noReaders
	b.mu.Unlock()
	if len(remotes) == 0 || off {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	s, err := js.Stream(ctx, b.cfg.Stream)
	if err != nil {
		return false
	}
	var unread []string
	for _, name := range remotes {
		_, err := s.Consumer(ctx, ConsumerName(name))
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			unread = append(unread, name)
		} else if err != nil {
			// The stream cannot be asked now, or the user may not ask (the
			// server says so to the connection's error handler: see
			// readersRefused): nothing is known.
			return false
		}
	}
	b.mu.Lock()
	b.unread = unread
	var fresh []string
	for _, name := range unread {
		if !b.warnedUnread[name] {
			b.warnedUnread[name] = true
			fresh = append(fresh, name)
		}
	}
	for name := range b.warnedUnread {
		if !slices.Contains(unread, name) {
			delete(b.warnedUnread, name) // read now: warned again if it stops
		}
	}
	b.mu.Unlock()
	if len(fresh) == 0 {
		return true
	}
	readers := b.readers(ctx, s)
	for _, name := range fresh {
		b.log.Warn("no workspace named "+name+" reads the stream yet: what is forwarded to its agents waits there until one connects with that bridge name",
			"agents", strings.Join(b.agentsOf(name), ", "), "workspaces_reading", orNone(readers), "check", "remote: in parley.yaml spells that workspace's bridge: name:")
	}
	return true
}

// readers lists the workspaces that read the stream: the names of its
// parley- consumers.
func (b *Bridge) readers(ctx context.Context, s jetstream.Stream) []string {
	var names []string
	l := s.ConsumerNames(ctx)
	for n := range l.Name() {
		if name, ok := strings.CutPrefix(n, ConsumerName("")); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// agentsOf lists this workspace's agents that live in the workspace
// named remote.
func (b *Bridge) agentsOf(remote string) []string {
	var names []string
	for _, a := range b.workspace().Config.Agents {
		if a.Remote == remote {
			names = append(names, a.Name)
		}
	}
	return names
}

// readersRefused reports whether err is the server refusing a look for
// readers (a permissions violation on another workspace's consumer INFO,
// or on the list of consumers), and stops the looks when it is.
func (b *Bridge) readersRefused(err error) bool {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return false
	}
	info := "$JS.API.CONSUMER.INFO." + b.cfg.Stream + "."
	msg := err.Error()
	i := strings.Index(msg, info)
	names := strings.Contains(msg, `"$JS.API.CONSUMER.NAMES.`+b.cfg.Stream+`"`)
	if !names && (i < 0 || strings.HasPrefix(msg[i+len(info):], b.durable()+`"`)) {
		return false // not a look, or at its own consumer: an error
	}
	b.mu.Lock()
	first := !b.noReaders
	b.noReaders, b.unread = true, nil
	b.mu.Unlock()
	if first {
		b.log.Info("the NATS user may not look at other workspaces' consumers: whether a remote: names a workspace that reads the stream is not checked", "err", err)
	}
	return true
}

// remotes lists the workspaces this workspace's agents live in
// (remote:), as last loaded, in name order.
func (b *Bridge) remotes() []string {
	var remotes []string
	for _, a := range b.workspace().Config.Agents {
		if a.Remote != "" && !slices.Contains(remotes, a.Remote) {
			remotes = append(remotes, a.Remote)
		}
	}
	sort.Strings(remotes)
	return remotes
}

// Peers. The stream knows, of each workspace's consumer, how many
// messages for it it holds not yet taken there, and when that
// workspace's bridge last claimed its name (its beat), took or
// acknowledged one: what this side forwarded is acknowledged by the
// stream, not by the workspace it goes to, and a workspace shut down
// takes nothing until it starts again. So the bridge asks, every second,
// for the workspaces its agents' remote: name, and says it in its state
// (workspace.PeerState) for parley status.

// lookAtPeers notes what the stream says of the remote workspaces that
// read it. A workspace whose consumer does not exist is left out (see
// lookForReaders); one that cannot be asked now keeps what was last
// known of it.
func (b *Bridge) lookAtPeers(ctx context.Context, js jetstream.JetStream) {
	remotes := b.remotes()
	b.mu.Lock()
	off := b.noReaders
	before := b.peers
	b.mu.Unlock()
	if off || len(remotes) == 0 {
		b.mu.Lock()
		b.peers = nil
		b.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var peers []workspace.PeerState
	for _, name := range remotes {
		c, err := js.Consumer(ctx, b.cfg.Stream, ConsumerName(name))
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			for _, p := range before {
				if p.Name == name {
					peers = append(peers, p)
				}
			}
			continue
		}
		peers = append(peers, b.peerOf(name, c.CachedInfo()))
	}
	b.mu.Lock()
	b.peers = peers
	b.mu.Unlock()
}

// peerOf is what info, a remote workspace's consumer, says of it.
func (b *Bridge) peerOf(name string, info *jetstream.ConsumerInfo) workspace.PeerState {
	p := workspace.PeerState{Name: name, Pending: info.NumPending + uint64(info.NumAckPending)}
	seen := func(t time.Time) {
		if t.After(p.LastSeen) {
			p.LastSeen = t.UTC()
		}
	}
	now := info.TimeStamp // the server's: the beat is in its time
	if now.IsZero() {
		now = time.Now()
	}
	if _, beat := claimOf(parleyMeta(info.Config.Metadata)); !beat.IsZero() {
		p.Reading = now.Sub(beat) < holdFor
		seen(beat)
	}
	seen(info.Created) // made by that workspace's bridge, when it first read
	for _, t := range []*time.Time{info.Delivered.Last, info.AckFloor.Last} {
		if t != nil {
			seen(*t)
		}
	}
	// A bridge that stopped cleanly took its beat back: the last one
	// seen here is kept.
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.peerSeen == nil {
		b.peerSeen = map[string]time.Time{}
	}
	if last := b.peerSeen[name]; last.After(p.LastSeen) {
		p.LastSeen = last
	} else {
		b.peerSeen[name] = p.LastSeen
	}
	return p
}
