package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// pair makes two workspaces, inn (gm, with aria remote) and home (aria,
// with gm remote), bridged through an embedded server; it returns them
// and the server's URL.
func pair(t *testing.T) (inn, home *workspace.Workspace, url string) {
	t.Helper()
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	url = ns.ClientURL()
	inn, err = workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: home}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	home, err = workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", url))
	if err != nil {
		t.Fatal(err)
	}
	return inn, home, url
}

// deliver puts n messages from gm to aria and bram into their inboxes in
// inn, as inn's router does, and returns their ids in order.
func deliver(t *testing.T, ws *workspace.Workspace, n int) []string {
	t.Helper()
	s, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	start := time.Now().Add(-time.Hour)
	for i := range n {
		id := mailbox.IDAt("gm", start.Add(time.Duration(i)*time.Millisecond))
		data := fmt.Sprintf("---\nid: %s\nfrom: gm\nto: [aria, bram]\n---\nmessage %d\n", id, i)
		for _, to := range []string{"aria", "bram"} {
			if _, err := ws.Mailbox(to).Deliver(id, []byte(data), s); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func runBridge(t *testing.T, ctx context.Context, ws *workspace.Workspace, opts Options) (Stats, error) {
	t.Helper()
	b, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return b.Run(ctx)
}

// streamClient connects to the server at url as a NATS client of the
// test's own, closed when the test ends.
func streamClient(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBridgeInProcess: two workspaces and an embedded server in one
// test. Every message reaches every remote recipient once, in order; the
// sending side moves each copy to done/; a second pass forwards nothing
// and delivers nothing twice.
func TestBridgeInProcess(t *testing.T) {
	inn, home, _ := pair(t)
	ids := deliver(t, inn, 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 2)
	for _, ws := range []*workspace.Workspace{inn, home} {
		go func() { _, err := runBridge(t, ctx, ws, Options{}); errc <- err }()
	}
	for _, agent := range []string{"aria", "bram"} {
		waitFor(t, agent+"'s messages in home", func() bool {
			got, _ := home.Mailbox(agent).IDs(mailbox.Inbox)
			return len(got) == len(ids)
		})
		got, _ := home.Mailbox(agent).IDs(mailbox.Inbox)
		if strings.Join(got, " ") != strings.Join(ids, " ") {
			t.Errorf("%s's inbox in home is not the messages in order", agent)
		}
		waitFor(t, agent+"'s copies in inn's done/", func() bool {
			got, _ := inn.Mailbox(agent).IDs(mailbox.Done)
			left, _ := inn.Mailbox(agent).IDs(mailbox.Inbox)
			return len(got) == len(ids) && len(left) == 0
		})
	}
	cancel()
	for range 2 {
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	// A copy put back (git checkout) is published again: nothing doubles.
	data, _ := os.ReadFile(inn.Mailbox("aria").Path(mailbox.Done, mailbox.FileName(ids[0])))
	os.Remove(inn.Mailbox("aria").Path(mailbox.Done, mailbox.FileName(ids[0])))
	os.WriteFile(inn.Mailbox("aria").Path(mailbox.Inbox, mailbox.FileName(ids[0])), data, 0o644)
	var again [2]Stats
	for i, ws := range []*workspace.Workspace{inn, home} {
		st, err := runBridge(t, context.Background(), ws, Options{UntilIdle: true})
		if err != nil {
			t.Fatal(err)
		}
		again[i] = st
	}
	// The put-back copy alone is published again, and the stream's
	// duplicate window (Nats-Msg-Id) keeps it from home.
	if again[0].Forwarded != 1 || again[1].Received != 0 {
		t.Errorf("second pass: inn forwarded %d (want 1, the copy put back), home received %d (want 0)", again[0].Forwarded, again[1].Received)
	}
	got, _ := home.Mailbox("aria").IDs(mailbox.Inbox)
	if len(got) != len(ids) {
		t.Errorf("after a copy was forwarded again, home's aria holds %d, want %d", len(got), len(ids))
	}
	st, ok, err := home.ReadBridgeState()
	if err != nil || !ok || st.Name != "home" {
		t.Errorf("ReadBridgeState = %+v, %v, %v", st, ok, err)
	}
	log, _ := os.ReadFile(home.JournalPath())
	if n := strings.Count(string(log), `"outcome":"received"`); n != 2*len(ids) {
		t.Errorf("home's journal has %d received lines, want %d: one per copy, none doubled", n, 2*len(ids))
	}
	if !strings.Contains(string(log), `"workspace":"inn"`) {
		t.Errorf("home's journal does not say where messages came from")
	}
}

// TestBridgeRefuses: a message published as an agent that does not live
// in the publishing workspace, or from a workspace parley.yaml does not
// know, is refused with a reason and kept.
func TestBridgeRefuses(t *testing.T) {
	_, home, url := pair(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Make the stream as a bridge does.
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	id := mailbox.IDAt("gm", time.Now())
	msg := "---\nid: " + id + "\nfrom: gm\nto: aria\n---\nhi\n"
	// From a workspace nobody lives in.
	if err := nc.Publish(Subject("home", "aria", "evil", "gm"), []byte(msg)); err != nil {
		t.Fatal(err)
	}
	// As aria, who lives in home, published by inn.
	id2 := mailbox.IDAt("aria", time.Now())
	if err := nc.Publish(Subject("home", "bram", "inn", "aria"), []byte("---\nid: "+id2+"\nfrom: aria\nto: bram\n---\nhi\n")); err != nil {
		t.Fatal(err)
	}
	// Bytes that are no message at all, and a subject of no recipient.
	if err := nc.Publish(Subject("home", "aria", "inn", "gm"), []byte("\xff\x00 no header")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("parley.home.nobody", []byte("x")); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	refused, _ := filepath.Glob(filepath.Join(home.BridgeRefusedDir(), "*.md"))
	if len(refused) != 2 {
		t.Errorf("kept in .parley/bridge/refused/: %v, want the two messages that name no id or no recipient", refused)
	}
	for _, f := range refused {
		if r, err := os.ReadFile(f + mailbox.ReasonSuffix); err != nil || !strings.HasPrefix(string(r), workspace.BridgeRefused) {
			t.Errorf("%s: reason %q, %v", f, r, err)
		}
	}
	reason, ok := home.Mailbox("aria").Reason(mailbox.Dead, mailbox.FileName(id))
	if !ok || !strings.Contains(reason, `from workspace "evil", which no agent of parley.yaml lives in`) {
		t.Errorf("aria's dead/ reason = %q, %v", reason, ok)
	}
	reason, ok = home.Mailbox("bram").Reason(mailbox.Dead, mailbox.FileName(id2))
	if !ok || !strings.Contains(reason, `aria lives in this workspace, but the message came over the bridge from workspace "inn"`) {
		t.Errorf("bram's dead/ reason = %q, %v", reason, ok)
	}
	if n, _ := home.Mailbox("aria").Count(mailbox.Inbox); n != 0 {
		t.Errorf("aria's inbox holds %d, want 0", n)
	}
}

func TestParseSubject(t *testing.T) {
	to, agent, from, sender, ok := parseSubject(Subject("home", "aria", "inn", "gm"))
	if !ok || to != "home" || agent != "aria" || from != "inn" || sender != "gm" {
		t.Errorf("parseSubject = %s %s %s %s %v", to, agent, from, sender, ok)
	}
	for _, s := range []string{"parley.home.aria.inn", "parley.home.aria.inn.gm.x", "other.home.aria.inn.gm", "parley.home.Aria.inn.gm"} {
		if _, _, _, _, ok := parseSubject(s); ok {
			t.Errorf("parseSubject(%q) ok, want refused", s)
		}
	}
}

// TestBridgeMaxDeliver: a delivery that keeps failing here (aria's inbox
// is not a directory) is tried max_deliver times, then kept in dead/ with
// the reason, and the messages after it are delivered.
func TestBridgeMaxDeliver(t *testing.T) {
	inn, home, _ := pair(t)
	ids := deliver(t, inn, 3)
	if _, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(string(home.Mailbox("aria")), mailbox.Inbox)
	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		reason, ok := home.Mailbox("aria").Reason(mailbox.Dead, mailbox.FileName(id))
		if !ok || !strings.Contains(reason, "gave up after 5 tries") {
			t.Errorf("aria's dead/%s: reason %q, %v; want it given up after 5 tries", id, reason, ok)
		}
	}
	if got, _ := home.Mailbox("bram").IDs(mailbox.Inbox); len(got) != len(ids) {
		t.Errorf("bram got %d of %d", len(got), len(ids))
	}
}

// TestBridgeUntilIdleStops: a bridge told to finish what waits, with no
// server to reach, stops when its context ends (Ctrl-C) rather than
// trying on for its ten seconds; the error says so.
func TestBridgeUntilIdleStops(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + l.Addr().String()
	l.Close() // nobody listens there now
	ws, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nagents: [gm]\n", url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, err = runBridge(t, ctx, ws, Options{UntilIdle: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run(cancelled, UntilIdle) = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run(cancelled, UntilIdle) took %v, want it to stop at once", d)
	}
}

// TestBridgeFailLogsOnce: the same error again (a server that is down
// refuses every reconnection alike, several times a second) is logged
// once until the bridge works again, and kept with its latest time; a
// call refused while disconnected is left to the connection's error.
func TestBridgeFailLogsOnce(t *testing.T) {
	ws, err := workspace.InitConfig(t.TempDir(), "bridge: {name: inn, url: nats://127.0.0.1:4222}\nagents: [gm]\n")
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	b, err := Open(ws, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	refused := errors.New("connecting: dial tcp 127.0.0.1:4222: connect: connection refused")
	for range 5 {
		b.fail(refused)
	}
	b.fail(fmt.Errorf("stream PARLEY: %w", nats.ErrReconnectBufExceeded)) // called while disconnected: no news
	b.fail(errors.New("disconnected: EOF"))
	b.fail(refused)
	b.fail(errors.New("disconnected: EOF"))
	b.clearError()
	b.fail(refused)
	if got, want := strings.Count(logged.String(), "\n"), 3; got != want {
		t.Errorf("logged %d lines, want %d:\n%s", got, want, logged.String())
	}
	if b.lastErr != refused.Error() || b.errAt.IsZero() {
		t.Errorf("last error = %q at %v, want %q", b.lastErr, b.errAt, refused)
	}
}

// TestServePortTaken checks that a server asked to listen on a port that
// another program holds says so at once, naming the address, instead of
// failing to become ready ten seconds later.
func TestServePortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: addr, Name: "test"})
	if err == nil {
		ns.Shutdown()
		t.Fatalf("Serve on %s, a port held by another listener, succeeded", addr)
	}
	if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Serve on a taken port: %v; want the address and \"address already in use\"", err)
	}
}

// TestBridgeUnreadRemote checks that a remote: no workspace reads the
// stream as (a typo: what is forwarded to its agents would wait in the
// stream, unseen, while the journal says forwarded) is said in the
// bridge's state for parley status, and no longer once a workspace of
// that name has connected.
func TestBridgeUnreadRemote(t *testing.T) {
	inn, home, url := pair(t)
	typo, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn2, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: hoem}\n  - {name: bram, remote: home}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	deliver(t, typo, 1)
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), typo, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	st, ok, err := typo.ReadBridgeState()
	if err != nil || !ok {
		t.Fatalf("ReadBridgeState = %v, %v", ok, err)
	}
	if strings.Join(st.Unread, ",") != "hoem" {
		t.Errorf("unread remotes = %q, want [hoem]: home reads the stream, no workspace is named hoem", st.Unread)
	}
	// inn, which names only home as a remote, is read.
	if _, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := inn.ReadBridgeState(); len(st.Unread) != 0 {
		t.Errorf("inn's unread remotes = %q, want none", st.Unread)
	}
}

// TestBridgeUnreadRemoteAtStart: a running bridge says a misspelt
// remote: as it starts, not ten seconds later (a tryout waited 10 s for
// the README's "looks when it starts"): the stream is made a moment
// after the first look, which is tried again each second until the
// stream can be asked. (Polled for up to 5 s; the next look of the ten-
// second round came at 10 s.)
func TestBridgeUnreadRemoteAtStart(t *testing.T) {
	_, _, url := pair(t) // a fresh server: no stream yet
	typo, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn2, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: hoem}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(typo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Run(ctx); done <- err }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, ok, _ := typo.ReadBridgeState(); ok && strings.Join(st.Unread, ",") == "hoem" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("5 s after the bridge started, its state does not say that no workspace reads the stream as hoem")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBridgeHubPurgesTaken: the stream kept every message ever bridged,
// so a hub's store filled with messages delivered long before, and a
// restart did not empty it. The hub's bridge (beside the server it
// serves) purges what each workspace took; what waits for a workspace
// that never connected (a misspelt remote:) stays.
func TestBridgeHubPurgesTaken(t *testing.T) {
	defer func(n int) { purgeEvery = n }(purgeEvery)
	purgeEvery = 1
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Name: "hub"})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	url := ns.ClientURL()
	hub, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: hoem}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	home, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - {name: bram, remote: hoem}\n", url))
	if err != nil {
		t.Fatal(err)
	}
	ids := deliver(t, hub, 3) // to aria (home) and bram (hoem: no such workspace)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := runBridge(t, ctx, hub, Options{Server: ns}); done <- err }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the hub's Run: %v", err)
		}
	}()
	js := streamClient(t, url)
	count := func(subject string) uint64 {
		s, err := js.Stream(context.Background(), "PARLEY")
		if err != nil {
			return 1 << 62 // not made yet
		}
		info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, c := range info.State.Subjects {
			n += c
		}
		return n
	}
	waitFor(t, "the hub forwarding the six copies", func() bool { return count(SubjectPrefix+".home.>") == 3 && count(SubjectPrefix+".hoem.>") == 3 })
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if n, _ := home.Mailbox("aria").Count(mailbox.Inbox); n != len(ids) {
		t.Fatalf("aria's inbox in home holds %d, want %d", n, len(ids))
	}
	waitFor(t, "the hub purging what home took", func() bool { return count(SubjectPrefix+".home.>") == 0 })
	if n := count(SubjectPrefix + ".hoem.>"); n != 3 {
		t.Errorf("the stream keeps %d messages for hoem, which no workspace took, want 3", n)
	}
}

// TestBridgeTooLarge checks that a message larger than the server's
// max_payload is given up in the remote agent's dead/ with a reason that
// names the server's limit, and that the ones after it are carried.
func TestBridgeTooLarge(t *testing.T) {
	ns := startServer(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), MaxPayload: 4096})
	inn, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: home}\n", ns.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mailbox.NewSyncer(inn.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now().Add(-time.Hour)
	var ids []string
	for i, body := range []string{strings.Repeat("x", 8000), "small"} {
		id := mailbox.IDAt("gm", start.Add(time.Duration(i)*time.Millisecond))
		data := fmt.Sprintf("---\nid: %s\nfrom: gm\nto: aria\n---\n%s\n", id, body)
		if _, err := inn.Mailbox("aria").Deliver(id, []byte(data), s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var log strings.Builder
	var told []string
	st, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(&log, nil)), GivenUp: func(agent, id string) { told = append(told, agent+"/"+id) }})
	if err != nil {
		t.Fatal(err)
	}
	// The runner is told, to tell its sender (runner.TellGivenUp).
	if d := cmp.Diff([]string{"aria/" + ids[0]}, told); d != "" {
		t.Errorf("Options.GivenUp told (-want +got):\n%s", d)
	}
	// Said when it connected: the server carries less than the
	// workspace accepts.
	if !strings.Contains(log.String(), "max_payload=4096") || !strings.Contains(log.String(), "router.max_message_size") {
		t.Errorf("no warning that the server's max_payload is below router.max_message_size; log:\n%s", log.String())
	}
	if n := strings.Count(log.String(), "carries less"); n > 1 {
		t.Errorf("the max_payload warning was logged %d times", n)
	}
	if st.Forwarded != 1 || st.Bounced != 1 {
		t.Errorf("forwarded %d, bounced %d; want 1 and 1", st.Forwarded, st.Bounced)
	}
	reason, err := os.ReadFile(inn.Mailbox("aria").Path(mailbox.Dead, mailbox.FileName(ids[0])+mailbox.ReasonSuffix))
	if err != nil {
		t.Fatalf("the large message is not in aria's dead/ with a reason: %v", err)
	}
	if !strings.Contains(string(reason), "max_payload of 4096 bytes") {
		t.Errorf("reason = %q, want the server's limit named", reason)
	}
}

// TestBridgeRefusesRemoteRecipient: a message for an agent that this
// workspace's parley.yaml says lives elsewhere (remote: on both sides)
// is refused saying where it lives, not that it is no agent here at all,
// which the person reading parley.yaml knows to be untrue.
func TestBridgeRefusesRemoteRecipient(t *testing.T) {
	_, home, url := pair(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	// gm lives in inn, by home's parley.yaml; inn sends gm a message as
	// if it lived in home.
	id := mailbox.IDAt("gm", time.Now())
	if err := nc.Publish(Subject("home", "gm", "inn", "gm"), []byte("---\nid: "+id+"\nfrom: gm\nto: gm\n---\nhi\n")); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	st, err := runBridge(t, context.Background(), home, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Bounced != 1 {
		t.Errorf("bounced %d, want 1", st.Bounced)
	}
	refused, _ := filepath.Glob(filepath.Join(home.BridgeRefusedDir(), "*.md"))
	if len(refused) != 1 {
		t.Fatalf("kept in .parley/bridge/refused/: %v, want 1", refused)
	}
	r, err := os.ReadFile(refused[0] + mailbox.ReasonSuffix)
	if err != nil {
		t.Fatal(err)
	}
	want := `for "gm", which lives in workspace "inn" by parley.yaml (remote: inn), not in this one`
	if !strings.Contains(string(r), want) {
		t.Errorf("reason = %q, want it to contain %q", r, want)
	}
}

// startServer runs a NATS server with opts (quiet, no signal handlers)
// until the test ends.
func startServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.NoLog, opts.NoSigs = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return ns
}

// TestBridgeRemoteMended checks the way back from a misspelt remote:
// what was forwarded under it waits in the stream for a workspace that
// never comes; once parley.yaml is mended, its copies put back from done/
// into the inbox are published again, to the workspace now named, and
// reach it (the stream does not drop them as the same publish).
func TestBridgeRemoteMended(t *testing.T) {
	_, home, url := pair(t)
	root := t.TempDir()
	config := "bridge: {name: inn, url: %s}\nagents:\n  - gm\n  - {name: aria, remote: %s}\n  - {name: bram, remote: home}\n"
	typo, err := workspace.InitConfig(root, fmt.Sprintf(config, url, "hoem"))
	if err != nil {
		t.Fatal(err)
	}
	ids := deliver(t, typo, 1)
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), typo, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := home.Mailbox("aria").IDs(mailbox.Inbox); len(got) != 0 {
		t.Fatalf("home's aria got %v under a misspelt remote:", got)
	}
	// Mended: parley.yaml names home, and the copy goes back to the inbox.
	if err := os.WriteFile(filepath.Join(root, workspace.ConfigFile), []byte(fmt.Sprintf(config, url, "home")), 0o644); err != nil {
		t.Fatal(err)
	}
	mended, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	name := mailbox.FileName(ids[0])
	if err := os.Rename(mended.Mailbox("aria").Path(mailbox.Done, name), mended.Mailbox("aria").Path(mailbox.Inbox, name)); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), mended, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := runBridge(t, context.Background(), home, Options{UntilIdle: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := home.Mailbox("aria").IDs(mailbox.Inbox); strings.Join(got, " ") != ids[0] {
		t.Errorf("home's aria after the mend = %v, want %s", got, ids[0])
	}
}

// TestBridgeForwardsDurableCopies: the router syncs its copies after it
// wrote them, so the bridge may see one in an inbox before it is durable;
// it makes the copies durable before it publishes them. One published
// first and lost in a power cut would be routed again (a file written by
// hand, under an id drawn anew) and reach the other workspace twice.
func TestBridgeForwardsDurableCopies(t *testing.T) {
	inn, _, url := pair(t)
	// Written as the router writes them, not synced yet.
	start := time.Now().Add(-time.Hour)
	var ids []string
	for i := range 3 {
		id := mailbox.IDAt("gm", start.Add(time.Duration(i)*time.Millisecond))
		data := fmt.Sprintf("---\nid: %s\nfrom: gm\nto: aria\n---\nmessage %d\n", id, i)
		if err := os.WriteFile(inn.Mailbox("aria").Path(mailbox.Inbox, mailbox.FileName(id)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	b, err := Open(inn, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// The stream, as another workspace would read it: nothing of a copy
	// is there when the copy is made durable here.
	js := streamClient(t, url)
	synced := map[string]bool{}
	b.synced = func(agent string, ids []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if st, err := js.Stream(ctx, inn.Config.Bridge.Stream); err == nil {
			if info, err := st.Info(ctx); err == nil && info.State.Msgs > 0 {
				t.Errorf("the stream held %d messages before the copies were made durable", info.State.Msgs)
			}
		}
		for _, id := range ids {
			synced[agent+"/"+id] = true
		}
	}
	st, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Forwarded != int64(len(ids)) {
		t.Fatalf("forwarded %d, want %d", st.Forwarded, len(ids))
	}
	for _, id := range ids {
		if !synced["aria/"+id] {
			t.Errorf("%s was forwarded without being made durable first", id)
		}
	}
}

// TestServeCarriesLargest: the server --serve runs carries the largest
// message the workspace accepts, with the bridge's headers, and the
// bridge says nothing of it.
func TestServeCarriesLargest(t *testing.T) {
	const size = 3 << 20
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Name: "test", MaxMessageSize: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	ws, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nrouter: {max_message_size: %d}\nagents:\n  - gm\n  - {name: aria, remote: home}\n", ns.ClientURL(), size))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := mailbox.IDAt("gm", time.Now().Add(-time.Hour))
	head := fmt.Sprintf("---\nid: %s\nfrom: gm\nto: aria\n---\n", id)
	data := head + strings.Repeat("x", size-len(head)-1) + "\n"
	if _, err := ws.Mailbox("aria").Deliver(id, []byte(data), s); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	st, err := runBridge(t, context.Background(), ws, Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if st.Forwarded != 1 || st.Bounced != 0 {
		t.Errorf("a message of router.max_message_size: forwarded %d, bounced %d; want 1 and 0", st.Forwarded, st.Bounced)
	}
	if strings.Contains(log.String(), "max_payload") {
		t.Errorf("warned of max_payload with a server --serve started for the workspace:\n%s", log.String())
	}
}

// TestPayloadFor: the max_payload a workspace's messages need, with the
// bridge's headers, never below NATS's default and never wrapped around;
// the server --serve runs gets it up to 64 MiB, and a workspace that
// accepts more is warned of (checkPayload compares with PayloadFor).
func TestPayloadFor(t *testing.T) {
	for _, c := range []struct {
		size         int64
		need, served int64
	}{
		{0, 1 << 20, 1 << 20},
		{1 << 20, 1<<20 + headers, 1<<20 + headers},
		{100 << 20, 100<<20 + headers, 64 << 20},
		{math.MaxInt64, math.MaxInt64, 64 << 20},
	} {
		if got := PayloadFor(c.size); got != c.need {
			t.Errorf("PayloadFor(%d) = %d, want %d", c.size, got, c.need)
		}
		if got := serverPayload(c.size); int64(got) != c.served {
			t.Errorf("serverPayload(%d) = %d, want %d", c.size, got, c.served)
		}
	}
}

// TestBridgePayloadOverNATSMost: a workspace that accepts messages larger
// than any NATS server carries (64 MiB: router.max_message_size: 100MiB)
// is warned of on a server at that most too (the one --serve runs), and
// told to lower router.max_message_size, not to raise max_payload past
// what NATS allows.
func TestBridgePayloadOverNATSMost(t *testing.T) {
	ns := startServer(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), MaxPayload: serverPayload(100 << 20)})
	inn, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: inn, url: %s}\nrouter: {max_message_size: 100MiB}\nagents:\n  - gm\n  - {name: aria, remote: home}\n", ns.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if _, err := runBridge(t, context.Background(), inn, Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(&log, nil))}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "carries less") || !strings.Contains(log.String(), fmt.Sprintf("router.max_message_size in parley.yaml to %d or less", 64<<20-4<<10)) || strings.Contains(log.String(), "max_payload to") {
		t.Errorf("want a warning that tells to lower router.max_message_size; log:\n%s", log.String())
	}
}

// fakeMsg is a message of the consumer as receiveBatch sees it.
type fakeMsg struct {
	jetstream.Msg // what the test does not need: nil
	subject       string
	data          []byte
	meta          jetstream.MsgMetadata
	acked         *int
}

func (m fakeMsg) Subject() string                           { return m.subject }
func (m fakeMsg) Data() []byte                              { return m.data }
func (m fakeMsg) Metadata() (*jetstream.MsgMetadata, error) { return &m.meta, nil }
func (m fakeMsg) Ack() error                                { *m.acked++; return nil }
func (m fakeMsg) DoubleAck(context.Context) error           { *m.acked++; return nil }
func (m fakeMsg) Headers() nats.Header                      { return nil }
func (m fakeMsg) Reply() string                             { return "" }
func (m fakeMsg) Term() error                               { return nil }
func (m fakeMsg) Nak() error                                { return nil }
func (m fakeMsg) InProgress() error                         { return nil }
func (m fakeMsg) NakWithDelay(time.Duration) error          { return nil }
func (m fakeMsg) TermWithReason(string) error               { return nil }

// TestBridgeFirstAfterReset: each session resets the consumer to the
// first message not acknowledged, which it then delivers as the
// consumer's delivery 1. When that delivery went to the session before
// (whose subscription the client library removes in the background after
// Stop, so it can still be there when the reset comes), the new session
// first sees delivery 2: taking it would acknowledge the lost one with it
// (the consumer acknowledges all up to a sequence), and a message was
// lost across the bridge under faults (TestBridgeAcrossHosts: 599 of 600).
// The bridge takes nothing then, acknowledges nothing, and starts again.
func TestBridgeFirstAfterReset(t *testing.T) {
	_, home, _ := pair(t)
	b, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	msg := func(consumerSeq uint64, n int) fakeMsg {
		id := mailbox.IDAt("gm", start.Add(time.Duration(n)*time.Millisecond))
		return fakeMsg{
			subject: "parley.home.aria.inn.gm",
			data:    fmt.Appendf(nil, "---\nid: %s\nfrom: gm\nto: aria\n---\nmessage %d\n", id, n),
			meta:    jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Consumer: consumerSeq, Stream: consumerSeq + 10}},
			acked:   new(int),
		}
	}
	second := msg(2, 2)
	var lastSeq uint64 // a new session: nothing taken yet
	if err := b.receiveBatch([]jetstream.Msg{second}, &lastSeq, false); !errors.Is(err, errGap) {
		t.Errorf("a session's first delivery numbered 2: err %v, want errGap", err)
	} else if strings.Contains(err.Error(), "missing") || strings.Contains(err.Error(), "lost") {
		// A routine reconnect: the log line must not suggest a loss.
		t.Errorf("errGap = %q, says a message went missing", err)
	}
	if *second.acked != 0 {
		t.Error("delivery 2 was acknowledged, and delivery 1, never taken, with it")
	}
	if got, _ := home.Mailbox("aria").IDs(mailbox.Inbox); len(got) != 0 {
		t.Errorf("aria holds %v: delivery 2 was taken before delivery 1", got)
	}
	// The next session gets delivery 1 first, and takes both.
	lastSeq = 0
	first, again := msg(1, 1), msg(2, 2)
	if err := b.receiveBatch([]jetstream.Msg{first, again}, &lastSeq, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := home.Mailbox("aria").IDs(mailbox.Inbox); len(got) != 2 {
		t.Errorf("aria holds %v, want both messages", got)
	}
	if *again.acked != 1 {
		t.Error("the batch was not acknowledged by its last message")
	}
}

// lockedBuffer is a log that the bridge's goroutines write to while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBridgeConnectedAfterFailures: a bridge started before its server
// logged that it could not connect, and, once it connected, nothing: the
// log's last word on the link stayed the failure. It says it connected.
func TestBridgeConnectedAfterFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ws, err := workspace.InitConfig(t.TempDir(), "bridge: {name: inn, url: nats://"+addr+"}\nagents: [gm]\n")
	if err != nil {
		t.Fatal(err)
	}
	var logged lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := runBridge(t, ctx, ws, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		errc <- err
	}()
	defer func() { cancel(); <-errc }()
	waitFor(t, "the failure to connect in the log", func() bool { return strings.Contains(logged.String(), "connecting") })
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: addr, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	waitFor(t, `"bridge connected" in the log`, func() bool { return strings.Contains(logged.String(), "bridge connected") })
}

// TestBridgeNameHeld: two workspaces of one bridge name (a parley.yaml
// copied to a second machine) shared its consumer, and each took part of
// the other's messages, saying nothing. The second is refused while the
// first reads, says which workspace holds the name (log, state, and an
// error from --until-idle), takes nothing, and the first says it was
// tried; once the first stops, the second takes what waits. Every
// message is delivered once.
func TestBridgeNameHeld(t *testing.T) {
	inn, home, url := pair(t)
	twin, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var homeLog, twinLog lockedBuffer
	errc := make(chan error, 3)
	go func() { _, err := runBridge(t, ctx, inn, Options{}); errc <- err }()
	homeCtx, stopHome := context.WithCancel(ctx)
	homeDone := make(chan struct{})
	go func() {
		defer close(homeDone)
		_, err := runBridge(t, homeCtx, home, Options{Logger: slog.New(slog.NewTextHandler(&homeLog, nil))})
		errc <- err
	}()
	first := deliver(t, inn, 1)
	waitFor(t, "the first message in home", func() bool {
		got, _ := home.Mailbox("aria").IDs(mailbox.Inbox)
		return len(got) == 1
	})

	_, err = runBridge(t, ctx, twin, Options{UntilIdle: true})
	if !errors.Is(err, ErrNameHeld) {
		// It flaked twice under a machine's full load: say whether home
		// had stopped (and released its claim) meanwhile.
		var ended []error
		for len(errc) > 0 {
			ended = append(ended, <-errc)
		}
		t.Fatalf("twin's --until-idle while home reads: err = %v, want ErrNameHeld (bridges ended meanwhile: %v; home's log:\n%s)", err, ended, homeLog.String())
	}
	if !strings.Contains(err.Error(), home.Root) {
		t.Errorf("twin's error does not name home's directory %s: %v", home.Root, err)
	}
	// aria, in twin, answers gm: held, twin forwards nothing.
	answer := mailbox.IDAt("aria", time.Now())
	sync, err := mailbox.NewSyncer(twin.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := twin.Mailbox("gm").Deliver(answer, []byte("---\nid: "+answer+"\nfrom: aria\nto: [gm]\n---\nfrom the twin\n"), sync); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(sync.Sync(), sync.Close()); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := runBridge(t, ctx, twin, Options{Logger: slog.New(slog.NewTextHandler(&twinLog, nil))})
		errc <- err
	}()
	waitFor(t, "twin's state naming home", func() bool {
		st, ok, _ := twin.ReadBridgeState()
		return ok && strings.Contains(st.NameHeldBy, home.Root)
	})
	waitFor(t, "twin's log saying the name is held", func() bool { return strings.Contains(twinLog.String(), ErrNameHeld.Error()) })
	more := deliver(t, inn, 20)
	waitFor(t, "the others in home", func() bool {
		got, _ := home.Mailbox("aria").IDs(mailbox.Inbox)
		return len(got) == 21
	})
	waitFor(t, "home's word that twin tried", func() bool {
		st, ok, _ := home.ReadBridgeState()
		return ok && strings.Contains(st.NameAlsoClaimedBy, twin.Root) && strings.Contains(homeLog.String(), "another workspace tried to read the stream as this bridge name")
	})
	if got, _ := twin.Mailbox("aria").IDs(mailbox.Inbox); len(got) != 0 {
		t.Fatalf("twin took %d messages while home held the name", len(got))
	}
	if got, _ := twin.Mailbox("gm").IDs(mailbox.Inbox); len(got) != 1 {
		t.Fatalf("twin forwarded its answer while home held the name")
	}

	// home stops: twin takes over, and gets what comes next.
	stopHome()
	<-homeDone
	last := deliver(t, inn, 4)
	waitFor(t, "the last in twin", func() bool {
		got, _ := twin.Mailbox("aria").IDs(mailbox.Inbox)
		return len(got) == len(last)
	})
	got, _ := home.Mailbox("aria").IDs(mailbox.Inbox)
	if want := append(first, more...); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("home's aria = %v, want %v", got, want)
	}
	got, _ = twin.Mailbox("aria").IDs(mailbox.Inbox)
	if strings.Join(got, " ") != strings.Join(last, " ") {
		t.Errorf("twin's aria = %v, want %v", got, last)
	}
	waitFor(t, "twin's state holding the name", func() bool {
		st, ok, _ := twin.ReadBridgeState()
		return ok && st.NameHeldBy == ""
	})
	waitFor(t, "twin's answer in inn", func() bool {
		got, _ := inn.Mailbox("gm").IDs(mailbox.Inbox)
		return len(got) == 1 && got[0] == answer
	})
	if !strings.Contains(twinLog.String(), `bridge name \"home\" is free again`) {
		t.Errorf("twin's log does not say it took over:\n%s", twinLog.String())
	}
}

// namePair sets up, for a test of the claims on a bridge name, the
// workspace home (of the pair inn and home), a second workspace that
// reads as home too, a client of the stream, and open, which opens a
// workspace's bridge with its stream and consumer set up, not running.
func namePair(t *testing.T) (home, other *workspace.Workspace, js jetstream.JetStream, open func(*workspace.Workspace) *Bridge) {
	t.Helper()
	_, home, url := pair(t)
	other, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", url))
	if err != nil {
		t.Fatal(err)
	}
	js = streamClient(t, url)
	open = func(ws *workspace.Workspace) *Bridge {
		b, err := Open(ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if _, err := b.setup(context.Background(), js); err != nil {
			t.Fatal(err)
		}
		return b
	}
	return home, other, js, open
}

// TestBridgeClaimDue: a bridge looks at its claim before it takes a
// batch once a beat has passed since it last claimed the name: one
// paused past holdFor (a laptop asleep), whose name a twin holds now,
// takes and acknowledges nothing; a fresh claim is not looked at again.
func TestBridgeClaimDue(t *testing.T) {
	home, twin, js, open := namePair(t)
	ctx := context.Background()
	h := open(home)
	if err := h.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := h.claimDue(ctx, js); err != nil {
		t.Fatalf("claimDue right after a claim = %v, want nil", err)
	}
	// home pauses; its claim is taken back meanwhile (as a claim gone
	// stale is), and the twin holds the name.
	h.release(js)
	tw := open(twin)
	if err := tw.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := h.claimDue(ctx, js); err != nil {
		t.Fatalf("claimDue within a beat of home's last claim = %v, want nil (not looked at again)", err)
	}
	h.mu.Lock()
	h.beatAt = time.Now().Add(-holdFor)
	h.mu.Unlock()
	if err := h.claimDue(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("claimDue after a pause, the twin holding the name = %v, want ErrNameHeld", err)
	}
}

// TestBridgeNameCopied: a copy of a workspace with its .parley/ (the same
// bridge-id) on a machine of the same name and directory — a laptop
// restored from a backup of one still in use — is refused the name while
// the workspace's run beats: the two shared one consumer silently
// before. A run killed is taken over by the next run once its beat is
// late, not a whole holdFor later; and a copy that stops takes back no
// claim but its own.
func TestBridgeNameCopied(t *testing.T) {
	home, copied, js, open := namePair(t)
	ctx := context.Background()
	h := open(home)
	if err := h.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	// The copy: home's identity, another run.
	cp := open(copied)
	cp.self = h.self
	cp.self.PID, cp.self.Run = h.self.PID+1, "0123456789abcdef"
	err := cp.claim(ctx, js)
	if !errors.Is(err, ErrNameHeld) {
		t.Fatalf("the copy's claim while home beats = %v, want ErrNameHeld", err)
	}
	if !strings.Contains(err.Error(), "a copy of this workspace") || !strings.Contains(err.Error(), "bridge-id") {
		t.Errorf("the copy's error does not say what it is: %v", err)
	}
	// home says so at its next beat.
	if err := h.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	also := h.alsoBy
	h.mu.Unlock()
	if !strings.Contains(also, "a copy of this workspace") {
		t.Errorf("home's word of the copy = %q, want it called a copy", also)
	}
	// The copy stops: home's claim stays.
	cp.release(js)
	if err := cp.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("the copy took back home's claim as it stopped: its claim then = %v, want ErrNameHeld", err)
	}

	// home is killed: its last beat grows late; the next run of home
	// (the copy's identity stands for it) takes the name then.
	c, err := js.Consumer(ctx, workspace.DefaultStream, h.durable())
	if err != nil {
		t.Fatal(err)
	}
	meta := parleyMeta(c.CachedInfo().Config.Metadata)
	meta[metaBeat] = c.CachedInfo().TimeStamp.Add(-(beatEvery + beatSlack + time.Second)).Format(time.RFC3339Nano)
	if _, err := js.UpdateConsumer(ctx, workspace.DefaultStream, h.consumerConfig(meta)); err != nil {
		t.Fatal(err)
	}
	if err := cp.claim(ctx, js); err != nil {
		t.Fatalf("the next run's claim once the killed run's beat is late = %v, want nil (holdFor is %s)", err, holdFor)
	}
	if err := h.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("the killed run's claim, the next run holding the name = %v, want ErrNameHeld", err)
	}
}

// TestBridgeKilledWaiterNoCopy: a hub killed twice in a row — its run
// killed, the next run killed too while it waited for the first's beat
// to grow late — was restarted: the third run took the name and said
// the second was "a copy of this workspace" (remove its bridge-id),
// from the note the second left while it waited. A note written before
// a run took the name is not reported; one written again after it (a
// copy still trying) is, and called a copy.
func TestBridgeKilledWaiterNoCopy(t *testing.T) {
	home, copied, js, open := namePair(t)
	ctx := context.Background()
	first := open(home)
	if err := first.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	// Each run a workspace of its own (a workspace is locked by its
	// bridge), home's identity.
	dirs := []*workspace.Workspace{copied}
	third, err := workspace.InitConfig(t.TempDir(), fmt.Sprintf("bridge: {name: home, url: %s}\nagents:\n  - {name: gm, remote: inn}\n  - aria\n  - bram\n", home.Config.Bridge.URLs[0]))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, third)
	run := func(n int) *Bridge {
		b := open(dirs[n-1])
		b.self = first.self
		b.self.PID, b.self.Run = first.self.PID+n, fmt.Sprintf("run%d", n)
		return b
	}
	second := run(1)
	if err := second.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("the second run's claim while the first beats = %v, want ErrNameHeld", err)
	}
	// Both killed: the first's beat grows late; the second's note stays
	// (within alsoHold).
	c, err := js.Consumer(ctx, workspace.DefaultStream, first.durable())
	if err != nil {
		t.Fatal(err)
	}
	meta := parleyMeta(c.CachedInfo().Config.Metadata)
	meta[metaBeat] = c.CachedInfo().TimeStamp.Add(-(beatEvery + beatSlack + time.Second)).Format(time.RFC3339Nano)
	if _, err := js.UpdateConsumer(ctx, workspace.DefaultStream, first.consumerConfig(meta)); err != nil {
		t.Fatal(err)
	}
	thirdRun := run(2)
	if err := thirdRun.claim(ctx, js); err != nil {
		t.Fatalf("the third run's claim, the first's beat late = %v, want nil", err)
	}
	also := func() string {
		t.Helper()
		thirdRun.mu.Lock()
		defer thirdRun.mu.Unlock()
		return thirdRun.alsoBy
	}
	if got := also(); got != "" {
		t.Errorf("the third run's word of the second, killed before it took the name = %q, want none", got)
	}
	if err := thirdRun.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	if got := also(); got != "" {
		t.Errorf("at its next beat = %q, want none", got)
	}
	// The second was a copy after all, still trying: its note, written
	// again, is reported.
	if err := second.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("the copy's claim while the third beats = %v, want ErrNameHeld", err)
	}
	if err := thirdRun.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	if got := also(); !strings.Contains(got, "a copy of this workspace") {
		t.Errorf("the third run's word of a copy trying after it took the name = %q, want it called a copy", got)
	}
}

// TestBridgeClaimEarlyLook: two bridges that took a free name at the
// same start, the second's claim landing after the first's settle, both
// read until the first looks again: within a second of taking the name
// (before its next batch), not a whole beat later.
func TestBridgeClaimEarlyLook(t *testing.T) {
	home, twin, js, open := namePair(t)
	ctx := context.Background()
	h := open(home)
	if err := h.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	// twin's claim lands now, over home's (it read the name free).
	tw := open(twin)
	c, err := js.Consumer(ctx, workspace.DefaultStream, h.durable())
	if err != nil {
		t.Fatal(err)
	}
	meta := parleyMeta(c.CachedInfo().Config.Metadata)
	meta[metaID], meta[metaHost], meta[metaRoot], meta[metaRun] = tw.self.ID, tw.self.Host, tw.self.Root, tw.self.Run
	meta[metaPID], meta[metaBeat] = strconv.Itoa(tw.self.PID), c.CachedInfo().TimeStamp.Format(time.RFC3339Nano)
	if _, err := js.UpdateConsumer(ctx, workspace.DefaultStream, h.consumerConfig(meta)); err != nil {
		t.Fatal(err)
	}
	if err := h.claimDue(ctx, js); err != nil {
		t.Fatalf("claimDue right after home took the name = %v, want nil (not looked at again yet)", err)
	}
	h.mu.Lock()
	h.beatAt = h.beatAt.Add(-earlyLook)
	h.mu.Unlock()
	if err := h.claimDue(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("claimDue a second after home took the name, twin's claim over it = %v, want ErrNameHeld", err)
	}
	// Once a beat has passed since it took the name, a second is not
	// enough: the claim of a bridge long at work is looked at each beat.
	h.mu.Lock()
	h.heldBy, h.takenAt, h.beatAt = "", time.Now().Add(-beatEvery), time.Now().Add(-earlyLook)
	h.mu.Unlock()
	if err := h.claimDue(ctx, js); err != nil {
		t.Fatalf("claimDue a second after the last claim of a bridge long at work = %v, want nil", err)
	}
}

// TestBridgeStopsWhileUnreachable: a bridge whose server went away, with
// a message waiting to be forwarded, did not stop when asked (SIGTERM to
// parley run): its forwarding loop tried again at once, for ever, at full
// CPU, until the server came back. It stops within a few seconds, the
// message left waiting in the inbox, and while the server is away it
// tries no more often than its backoff says.
func TestBridgeStopsWhileUnreachable(t *testing.T) {
	inn, _, _ := pair(t)
	ns, err := Serve(ServeOptions{Dir: t.TempDir(), Listen: "127.0.0.1:0", Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	inn.Config.Bridge.URLs = []string{ns.ClientURL()}
	b, err := Open(inn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var tries sync.Mutex
	passes := 0
	b.synced = func(string, []string) { tries.Lock(); passes++; tries.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, err := b.Run(ctx); errc <- err }()
	waitFor(t, "the bridge to hold its name", b.mayForward)
	ns.Shutdown()
	ids := deliver(t, inn, 1)
	waitFor(t, "a try to forward while the server is away", func() bool {
		tries.Lock()
		defer tries.Unlock()
		return passes > 0
	})
	tries.Lock()
	passes = 0
	tries.Unlock()
	time.Sleep(3 * time.Second)
	tries.Lock()
	n := passes
	tries.Unlock()
	// Backing off (0.1, 0.2, 0.4, 0.8, 1.6 s...), a pass lists two
	// remote agents: about ten calls in 3s, eleven or twelve on a loaded
	// machine (it failed CI at eleven); a loop that does not back off
	// makes hundreds.
	if n > 30 {
		t.Errorf("the bridge tried to forward %d times in 3s while the server was away, want a few (backing off)", n)
	}
	cancel()
	start := time.Now()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Run = %v, want nil (stopped)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10s after its context ended, the server away and a message waiting")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v to stop, want a few seconds at most", d)
	}
	if got, _ := inn.Mailbox("aria").IDs(mailbox.Inbox); strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("aria's inbox in inn after the stop = %v, want %v (still waiting to be forwarded)", got, ids)
	}
}

// TestBridgeTwinNoteGone: a workspace refused the name (a twin) that
// stopped was still reported by the holder, "another workspace tries to
// read the stream as ... too", about 20 seconds later. A twin that stops
// cleanly takes back its note, and the note of one killed lasts two of
// its beats.
func TestBridgeTwinNoteGone(t *testing.T) {
	home, twin, js, open := namePair(t)
	ctx := context.Background()
	h := open(home)
	if err := h.claim(ctx, js); err != nil {
		t.Fatal(err)
	}
	tw := open(twin)
	also := func() string {
		t.Helper()
		if err := h.claim(ctx, js); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.alsoBy
	}
	if err := tw.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("twin's claim while home holds the name = %v, want ErrNameHeld", err)
	}
	if got := also(); !strings.Contains(got, twin.Root) {
		t.Fatalf("home's word of the twin = %q, want it to name %s", got, twin.Root)
	}
	tw.release(js) // a clean stop
	if got := also(); got != "" {
		t.Errorf("home's word of the twin after it stopped cleanly = %q, want none", got)
	}
	c, err := js.Consumer(ctx, workspace.DefaultStream, h.durable())
	if err != nil {
		t.Fatal(err)
	}
	if holder, _ := claimOf(c.CachedInfo().Config.Metadata); holder.runKey() != h.self.runKey() {
		t.Errorf("the twin's stop took home's claim: held by %v", holder)
	}

	// A twin killed: its note, last written 2 beats and more ago, is gone.
	if err := tw.claim(ctx, js); !errors.Is(err, ErrNameHeld) {
		t.Fatalf("twin's claim while home holds the name = %v, want ErrNameHeld", err)
	}
	c, err = js.Consumer(ctx, workspace.DefaultStream, h.durable())
	if err != nil {
		t.Fatal(err)
	}
	meta := parleyMeta(c.CachedInfo().Config.Metadata)
	meta[metaAlsoBeat] = c.CachedInfo().TimeStamp.Add(-2*beatEvery - beatSlack - time.Second).Format(time.RFC3339Nano)
	if _, err := js.UpdateConsumer(ctx, workspace.DefaultStream, h.consumerConfig(meta)); err != nil {
		t.Fatal(err)
	}
	if got := also(); got != "" {
		t.Errorf("home's word of a twin silent for two beats = %q, want none", got)
	}
}
