package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// Flood capacity: how fast the router empties outboxes that are full,
// against how fast this disk does the same file operations itself. The
// disk's rate swings several times over from minute to minute here, so a
// single raw sample says little: each round measures the disk and both
// kinds of files one after the other (in an order that turns each round),
// and a round's ratios compare figures taken within seconds of each
// other. The report gives the medians of the rates and of the paired
// ratios, with their range.

// floodFigures is what the flood rounds measured, in messages (or, for
// the disk, files) per second.
type floodFigures struct {
	Rounds   int `json:"rounds"`
	Messages int `json:"messages"` // per phase of a round
	// Raw is the disk alone: 1 KiB written in one directory, renamed
	// into another, a syncfs per 100 files; timed before each round and
	// after each of its phases.
	Raw spread `json:"raw"`
	// HandWritten is the router emptying four outboxes of files without
	// an id (written by a person, a script, an editor) into one inbox.
	HandWritten spread `json:"hand_written"`
	// IDNamed is the same with files that carry their id and are named
	// by it (what `parley send` and agents' programs write).
	IDNamed spread `json:"id_named"`
	// The paired ratios: each routing rate over the geometric mean of
	// the disk's rates timed just before and just after it.
	HandWrittenRatio spread `json:"hand_written_ratio"`
	IDNamedRatio     spread `json:"id_named_ratio"`
	// NATS is the peer, when --peer nats was given: NATS JetStream with a
	// file store and sync_always, in the same rounds.
	NATS *natsFigures `json:"nats,omitempty"`
}

// natsFigures is what the NATS JetStream peer did in the rounds, in
// messages per second acknowledged, and parley's flood rates over its
// rate with 256 publishes in flight, paired by round.
type natsFigures struct {
	OneAtATime       spread `json:"one_at_a_time"`
	InFlight         spread `json:"in_flight_256"`
	HandWrittenTimes spread `json:"hand_written_times"`
	IDNamedTimes     spread `json:"id_named_times"`
}

// natsPeer is the program that measures NATS JetStream (see
// internal/bench/natspeer), a program of its own from before the bridge.
const natsPeer = "natspeer"

// natsRates runs the peer on a fresh directory.
func natsRates(ctx context.Context, program, dir string, n int) (one, many float64, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, program, "--dir", dir, "--messages", strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("bench: %s: %v: %s", program, err, strings.TrimSpace(stderr.String()))
	}
	var r struct {
		One  float64 `json:"one_at_a_time"`
		Many float64 `json:"in_flight_256"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, 0, fmt.Errorf("bench: %s printed %q: %w", program, out, err)
	}
	return r.One, r.Many, nil
}

// spread is a median with the range it came from.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := spread{Median: percentile(v, 0.5), Min: v[0], Max: v[0]}
	for _, x := range v {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	return s
}

// floodRounds runs the rounds in dir. Nothing is deleted until the bench
// ends: on this disk, creating files is slow for a while after many were
// deleted, which would slow whatever phase came next.
func floodRounds(ctx context.Context, dir string, rounds, n int, peer string, say func(string, ...any)) (*floodFigures, error) {
	f := &floodFigures{Rounds: rounds, Messages: n}
	var raw, hand, named, handRatio, namedRatio []float64
	var natsOne, natsMany, handTimes, namedTimes []float64
	probes := 0
	probe := func() (float64, error) {
		probes++
		return rawRate(filepath.Join(dir, fmt.Sprintf("raw-%d", probes)), n)
	}
	for round := 0; round < rounds; round++ {
		// The disk alone is timed before the round's first phase and
		// after each: a routing rate is divided by the geometric mean
		// of the two timings around it, the disk's speed while it ran
		// as near as it can be known (it swings several times over
		// within a minute here).
		var h, id, one, many, hDisk, idDisk float64
		type phase struct {
			run  func() error
			disk *float64 // set to the disk around it; nil: not divided by it
		}
		phases := []phase{
			{func() (err error) {
				h, err = flood(ctx, filepath.Join(dir, fmt.Sprintf("hand-%d", round)), n, true)
				return err
			}, &hDisk},
			{func() (err error) {
				id, err = flood(ctx, filepath.Join(dir, fmt.Sprintf("named-%d", round)), n, false)
				return err
			}, &idDisk},
		}
		if peer != "" {
			phases = append(phases, phase{func() (err error) {
				one, many, err = natsRates(ctx, peer, filepath.Join(dir, fmt.Sprintf("nats-%d", round)), n)
				return err
			}, nil})
		}
		before, err := probe()
		if err != nil {
			return nil, err
		}
		raw = append(raw, before)
		for i := range phases {
			p := phases[(i+round)%len(phases)]
			if err := p.run(); err != nil {
				return nil, err
			}
			after, err := probe()
			if err != nil {
				return nil, err
			}
			raw = append(raw, after)
			if p.disk != nil {
				*p.disk = math.Sqrt(before * after)
			}
			before = after
		}
		say("round %d of %d: hand-written %.0f msg/s (%.2f of the disk around it, %.0f files/s), id-named %.0f msg/s (%.2f, %.0f files/s)", round+1, rounds, h, h/hDisk, hDisk, id, id/idDisk, idDisk)
		hand, named = append(hand, h), append(named, id)
		handRatio, namedRatio = append(handRatio, h/hDisk), append(namedRatio, id/idDisk)
		if peer != "" {
			say("round %d of %d: NATS JetStream sync_always %.0f msg/s one at a time, %.0f msg/s with 256 in flight", round+1, rounds, one, many)
			natsOne, natsMany = append(natsOne, one), append(natsMany, many)
			handTimes, namedTimes = append(handTimes, h/many), append(namedTimes, id/many)
		}
	}
	if peer != "" {
		f.NATS = &natsFigures{OneAtATime: spreadOf(natsOne), InFlight: spreadOf(natsMany), HandWrittenTimes: spreadOf(handTimes), IDNamedTimes: spreadOf(namedTimes)}
	}
	f.Raw, f.HandWritten, f.IDNamed = spreadOf(raw), spreadOf(hand), spreadOf(named)
	f.HandWrittenRatio, f.IDNamedRatio = spreadOf(handRatio), spreadOf(namedRatio)
	return f, nil
}

// flood fills the outboxes of four senders of a fresh workspace with n
// 1 KiB messages to one recipient — files without an id, named note-N.md,
// or files named by their id — makes them durable, and times a runner
// that routes them all, from its start to its last durable delivery.
// Hand-written files are older than the settle time when it starts.
func flood(ctx context.Context, dir string, n int, handWritten bool) (float64, error) {
	senders := []string{"ann", "bo", "cy", "di"}
	ws, err := workspace.Init(dir, workspace.AgentsNamed(append(senders, "rae")...), nil)
	if err != nil {
		return 0, err
	}
	ids := &mailbox.IDs{}
	for i := 0; i < n; i++ {
		from := senders[i%len(senders)]
		box := ws.Mailbox(from)
		var name string
		var data []byte
		if handWritten {
			name = "note-" + strconv.Itoa(i) + ".md"
			data = handMessage("rae")
		} else {
			id := ids.New(from)
			name = mailbox.FileName(id)
			data = benchMessage(id, from, "rae")
		}
		tmp := box.Path(mailbox.Tmp, name)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return 0, err
		}
		if err := os.Rename(tmp, box.Path(mailbox.Outbox, name)); err != nil {
			return 0, err
		}
	}
	last := time.Now()
	root, err := os.Open(ws.Root)
	if err != nil {
		return 0, err
	}
	err = syncDisk(root)
	root.Close()
	if err != nil {
		return 0, err
	}
	if handWritten {
		// A file written by hand is routed once it has not changed for
		// the settle time. The last files written are younger than that:
		// the runner would wait for them, once, before routing its first
		// (a delay of up to the settle time, not a rate). They are a
		// backlog by the time the runner starts.
		time.Sleep(time.Until(last.Add(ws.Config.Router.Settle)))
	}
	start := time.Now()
	r, err := runner.Open(ws, runner.Options{UntilIdle: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return 0, err
	}
	stats, err := r.Run(ctx)
	elapsed := time.Since(start)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if stats.Routed != n {
		return 0, fmt.Errorf("bench: flood routed %d of %d messages", stats.Routed, n)
	}
	return float64(n) / elapsed.Seconds(), nil
}

// handMessage is a 1 KiB message as a person writes one: no id, no
// sender, a recipient and a body.
func handMessage(to string) []byte {
	head := "---\nto: " + to + "\n---\n"
	body := strings.Repeat("All work and no play. ", benchMessageSize/22+1)
	return []byte(head + body[:benchMessageSize-len(head)-1] + "\n")
}
