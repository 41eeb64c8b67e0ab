// Command natspeer measures the durable message bus parley is most often
// compared with — NATS JetStream with a file store and sync_always (each
// write fsync'd before it is acknowledged) — for `parley bench --peer
// nats`. It runs an embedded server storing under the directory it is
// given, publishes 1 KiB messages one acknowledgement at a time and then
// with 256 in flight, and prints the two rates as JSON on stdout.
//
// It is a program of its own, written before the bridge (runner/bridge)
// linked the NATS server into parley: `go install github.com/parley-dev/parley/internal/bench/natspeer`
// puts it on PATH, where `parley bench --peer nats` finds it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Rates is what natspeer prints: messages per second, acknowledged as
// durable.
type Rates struct {
	OneAtATime float64 `json:"one_at_a_time"`
	InFlight   float64 `json:"in_flight_256"`
}

func main() {
	dir := flag.String("dir", "", "where the server stores its streams (a fresh directory on the disk to measure)")
	n := flag.Int("messages", 2000, "messages per phase")
	flag.Parse()
	if *dir == "" || *n < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: natspeer --dir DIR [--messages N]")
		os.Exit(2)
	}
	rates, err := measure(context.Background(), *dir, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natspeer:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rates); err != nil {
		fmt.Fprintln(os.Stderr, "natspeer:", err)
		os.Exit(1)
	}
}

func measure(ctx context.Context, dir string, n int) (Rates, error) {
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, DontListen: true,
		JetStream: true, StoreDir: dir, SyncAlways: true,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		return Rates{}, err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		return Rates{}, errors.New("the embedded server did not start")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		return Rates{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		return Rates{}, err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench.>"}, Storage: jetstream.FileStorage}); err != nil {
		return Rates{}, err
	}
	data := make([]byte, 1024)
	for i := range data {
		data[i] = 'x'
	}
	var r Rates
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := js.Publish(ctx, "bench.one", data); err != nil {
			return Rates{}, err
		}
	}
	r.OneAtATime = float64(n) / time.Since(start).Seconds()

	start = time.Now()
	var acks []jetstream.PubAckFuture
	for i := 0; i < n; i++ {
		// With 256 unacknowledged, a publish waits for room: the nats.go
		// default gives up after 200 ms ("stalled with too many
		// outstanding async published messages"), which a disk in a slow
		// minute takes per acknowledgement.
		f, err := js.PublishAsync("bench.many", data, jetstream.WithStallWait(time.Minute))
		if err != nil {
			return Rates{}, err
		}
		acks = append(acks, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		return Rates{}, errors.New("publishes were not acknowledged within 5 minutes")
	}
	for _, f := range acks {
		select {
		case err := <-f.Err():
			return Rates{}, err
		default:
		}
	}
	r.InFlight = float64(n) / time.Since(start).Seconds()
	return r, nil
}
