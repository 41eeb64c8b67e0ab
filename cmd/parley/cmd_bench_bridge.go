package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sync/errgroup"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/bridge"
	"github.com/parley-dev/parley/runner/workspace"
)

// `parley bench --bridge`: two workspaces bridged over NATS JetStream on
// loopback, beside local routing, in interleaved rounds.

type bridgeBenchOptions struct {
	Dir      string
	Messages int
	Rounds   int
	Paced    int // messages of each latency phase
	JSON     bool
}

// bridgeBenchReport is what `parley bench --bridge` measured. Each round
// runs, on fresh workspaces: local routing of a backlog (1 -> 1, from a
// runner's start to the last message durable in the inbox), the same
// backlog across the bridge (from the sending runner's start to the last
// message durable in the other workspace's inbox), then a paced stream
// of each for hop latency.
type bridgeBenchReport struct {
	Rounds   int `json:"rounds"`
	Messages int `json:"messages"`
	Paced    int `json:"paced"`
	// Rates in messages per second: median, min, max over the rounds.
	LocalRate    spread         `json:"local_rate"`
	BridgeRate   spread         `json:"bridge_rate"`
	Ratio        spread         `json:"bridge_over_local"`
	LocalHopP50  spread         `json:"local_hop_p50_ms"`
	LocalHopP99  spread         `json:"local_hop_p99_ms"`
	BridgeHopP50 spread         `json:"bridge_hop_p50_ms"`
	BridgeHopP99 spread         `json:"bridge_hop_p99_ms"`
	Targets      []targetResult `json:"targets"`
}

func runBridgeBench(ctx context.Context, e *env, opts bridgeBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	say("the bridge: %d messages routed locally and across two workspaces on loopback (NATS JetStream, file store, sync_always), then %d paced, in %d interleaved rounds ...", opts.Messages, opts.Paced, opts.Rounds)
	var local, bridged, ratio, lp50, lp99, bp50, bp99 []float64
	for round := range opts.Rounds {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(base, fmt.Sprintf("round-%d", round))
		var l, b float64
		var lh, bh []float64
		// Which goes first turns each round.
		if round%2 == 0 {
			if l, lh, err = benchLocal(ctx, filepath.Join(dir, "local"), opts); err == nil {
				b, bh, err = benchBridged(ctx, filepath.Join(dir, "bridged"), opts)
			}
		} else {
			if b, bh, err = benchBridged(ctx, filepath.Join(dir, "bridged"), opts); err == nil {
				l, lh, err = benchLocal(ctx, filepath.Join(dir, "local"), opts)
			}
		}
		if err != nil {
			return err
		}
		os.RemoveAll(dir)
		say("  round %d: local %.0f msg/s, bridged %.0f msg/s; hop p50 local %.2f ms, bridged %.2f ms", round+1, l, b, percentile(lh, 0.5), percentile(bh, 0.5))
		local, bridged, ratio = append(local, l), append(bridged, b), append(ratio, b/l)
		lp50, lp99 = append(lp50, percentile(lh, 0.5)), append(lp99, percentile(lh, 0.99))
		bp50, bp99 = append(bp50, percentile(bh, 0.5)), append(bp99, percentile(bh, 0.99))
	}
	rep := bridgeBenchReport{Rounds: opts.Rounds, Messages: opts.Messages, Paced: opts.Paced,
		LocalRate: spreadOf(local), BridgeRate: spreadOf(bridged), Ratio: spreadOf(ratio),
		LocalHopP50: spreadOf(lp50), LocalHopP99: spreadOf(lp99), BridgeHopP50: spreadOf(bp50), BridgeHopP99: spreadOf(bp99)}
	rep.Targets = []targetResult{
		{Name: "bridged end to end, durable, median", Got: fmt.Sprintf("%.0f msg/s", rep.BridgeRate.Median), Want: ">= 1000 msg/s", Met: rep.BridgeRate.Median >= 1000},
		{Name: "bridged hop latency p50, median", Got: fmt.Sprintf("%.2f ms", rep.BridgeHopP50.Median), Want: "<= 10 ms", Met: rep.BridgeHopP50.Median <= 10},
	}
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --bridge (%d interleaved rounds of %d messages, %d paced; median (min-max))\n\n", rep.Rounds, rep.Messages, rep.Paced)
		row := func(name string, v spread, unit string) {
			fmt.Fprintf(w, "%-48s %.2f %s (%.2f-%.2f)\n", name, v.Median, unit, v.Min, v.Max)
		}
		row("local routing 1 -> 1, durable", rep.LocalRate, "msg/s")
		row("bridged 1 -> 1, durable in the other inbox", rep.BridgeRate, "msg/s")
		row("bridged / local, paired by round", rep.Ratio, "x")
		row("local hop p50 (outbox -> durable inbox)", rep.LocalHopP50, "ms")
		row("local hop p99", rep.LocalHopP99, "ms")
		row("bridged hop p50 (outbox -> durable inbox there)", rep.BridgeHopP50, "ms")
		row("bridged hop p99", rep.BridgeHopP99, "ms")
		printTargets(w, rep.Targets)
	})
}

// benchMessage writes message k from s to r into s's outbox, named by its
// id, as parley send does (without the fsync: the router's sync covers
// it), and returns the id.
func bridgeBenchMessage(ws *workspace.Workspace, ids *mailbox.IDs, k int) (string, error) {
	id := ids.New("s")
	body := strings.Repeat("x", benchMessageSize-120)
	data := fmt.Sprintf("---\nid: %s\nfrom: s\nto: r\n---\nmessage %d %s\n", id, k, body)
	box := ws.Mailbox("s")
	tmp := box.Path(mailbox.Tmp, mailbox.FileName(id))
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return "", err
	}
	return id, os.Rename(tmp, box.Path(mailbox.Outbox, mailbox.FileName(id)))
}

// arrivals records when each id was made durable on the receiving side.
type arrivals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	more chan struct{}
}

func newArrivals() *arrivals {
	return &arrivals{at: map[string]time.Time{}, more: make(chan struct{}, 1)}
}

func (a *arrivals) add(id string) {
	a.mu.Lock()
	if _, ok := a.at[id]; !ok {
		a.at[id] = time.Now()
	}
	a.mu.Unlock()
	select {
	case a.more <- struct{}{}:
	default:
	}
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

func (a *arrivals) when(id string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[id]
	return t, ok
}

// wait waits until n ids arrived, or 60 s.
func (a *arrivals) wait(ctx context.Context, n int) error {
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for a.count() < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("bench: %d of %d messages arrived within 60s", a.count(), n)
		case <-a.more:
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// paced sends n messages one every 5 ms and returns each one's hop
// latency in ms, read from arrivals.
func paced(ctx context.Context, ws *workspace.Workspace, ids *mailbox.IDs, got *arrivals, n int) ([]float64, error) {
	have := got.count()
	sentAt := map[string]time.Time{}
	var order []string
	for k := range n {
		start := time.Now()
		id, err := bridgeBenchMessage(ws, ids, k)
		if err != nil {
			return nil, err
		}
		sentAt[id] = start
		order = append(order, id)
		time.Sleep(5 * time.Millisecond)
	}
	if err := got.wait(ctx, have+n); err != nil {
		return nil, err
	}
	var hops []float64
	for _, id := range order {
		at, _ := got.when(id)
		hops = append(hops, float64(at.Sub(sentAt[id]).Microseconds())/1000)
	}
	return hops, nil
}

// watchSent records, in got, each id moved to s's sent/: the router moves
// a file there once its copies are durable.
func watchSent(ctx context.Context, ws *workspace.Workspace, got *arrivals) (func(), error) {
	w, err := fsnotify.NewBufferedWatcher(65536)
	if err != nil {
		return nil, err
	}
	if err := w.Add(filepath.Join(string(ws.Mailbox("s")), mailbox.Sent)); err != nil {
		w.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if id, ok := mailbox.IDFromName(filepath.Base(ev.Name)); ok && ev.Has(fsnotify.Create) {
					got.add(id)
				}
			}
		}
	}()
	return func() { w.Close(); <-done }, nil
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// benchLocal: s and r in one workspace.
func benchLocal(ctx context.Context, dir string, opts bridgeBenchOptions) (float64, []float64, error) {
	ws, err := workspace.InitConfig(dir, "agents: [s, r]\n")
	if err != nil {
		return 0, nil, err
	}
	var ids mailbox.IDs
	for k := range opts.Messages {
		if _, err := bridgeBenchMessage(ws, &ids, k); err != nil {
			return 0, nil, err
		}
	}
	got := newArrivals()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, err := watchSent(ctx, ws, got)
	if err != nil {
		return 0, nil, err
	}
	defer stop()
	r, err := runner.Open(ws, runnerOptions(&env{}, ws, quietLog()))
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	g.Go(func() error { _, err := r.Run(gctx); return err })
	var rate float64
	var hops []float64
	err = got.wait(ctx, opts.Messages)
	if err == nil {
		rate = float64(opts.Messages) / time.Since(start).Seconds()
		hops, err = paced(ctx, ws, &ids, got, opts.Paced)
	}
	cancel()
	if werr := g.Wait(); err == nil {
		err = werr
	}
	return rate, hops, err
}

// benchBridged: s in workspace a, r in workspace b, bridged through a
// server on loopback; each bridge connects over TCP.
func benchBridged(ctx context.Context, dir string, opts bridgeBenchOptions) (float64, []float64, error) {
	ns, err := bridge.Serve(bridge.ServeOptions{Dir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Name: "bench"})
	if err != nil {
		return 0, nil, err
	}
	defer ns.Shutdown()
	url := ns.ClientURL()
	a, err := workspace.InitConfig(filepath.Join(dir, "a"), fmt.Sprintf("bridge: {name: a, url: %s}\nagents:\n  - s\n  - {name: r, remote: b}\n", url))
	if err != nil {
		return 0, nil, err
	}
	b, err := workspace.InitConfig(filepath.Join(dir, "b"), fmt.Sprintf("bridge: {name: b, url: %s}\nagents:\n  - {name: s, remote: a}\n  - r\n", url))
	if err != nil {
		return 0, nil, err
	}
	got := newArrivals()
	ba, err := bridge.Open(a, bridge.Options{Logger: quietLog()})
	if err != nil {
		return 0, nil, err
	}
	defer ba.Close()
	bb, err := bridge.Open(b, bridge.Options{Logger: quietLog(), OnReceived: got.add})
	if err != nil {
		return 0, nil, err
	}
	defer bb.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { _, err := ba.Run(gctx); return err })
	g.Go(func() error { _, err := bb.Run(gctx); return err })
	// Both bridges connected and their consumers made: a first message
	// goes across before the clock starts.
	var ids mailbox.IDs
	r, err := runner.Open(a, runnerOptions(&env{}, a, quietLog()))
	if err != nil {
		return 0, nil, err
	}
	warm, err := bridgeBenchMessage(a, &ids, -1)
	if err != nil {
		return 0, nil, err
	}
	rctx, rcancel := context.WithCancel(gctx)
	rdone := make(chan error, 1)
	go func() { _, err := r.Run(rctx); rdone <- err }()
	err = got.wait(ctx, 1)
	rcancel()
	if rerr := <-rdone; err == nil {
		err = rerr
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, nil, err
	}
	_ = warm
	for k := range opts.Messages {
		if _, err := bridgeBenchMessage(a, &ids, k); err != nil {
			return 0, nil, err
		}
	}
	r2, err := runner.Open(a, runnerOptions(&env{}, a, quietLog()))
	if err != nil {
		return 0, nil, err
	}
	defer r2.Close()
	start := time.Now()
	g.Go(func() error { _, err := r2.Run(gctx); return err })
	var rate float64
	var hops []float64
	err = got.wait(ctx, 1+opts.Messages)
	if err == nil {
		rate = float64(opts.Messages) / time.Since(start).Seconds()
		hops, err = paced(ctx, a, &ids, got, opts.Paced)
	}
	cancel()
	if werr := g.Wait(); err == nil {
		err = werr
	}
	return rate, hops, err
}
