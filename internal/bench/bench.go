// Package bench measures parley's agent drivers, for `parley bench
// --drivers` and the benchmarks of this package. It runs parley's own
// dispatch (runner.Open and Run, the command and session drivers) on
// throwaway workspaces, and times each message with the runner's
// Options.OnHandled; it adds nothing to the code it measures.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// CommandScript is the program of the command agents the benchmarks run:
// a cat-like filter that answers each message with its body (one exec of
// sh, which execs sed).
const CommandScript = "#!/bin/sh\n# answers with the body of the message it is given\nexec sed '1,/^---$/d'\n"

// Message returns a message of about 1 KiB from one agent to another,
// with a new id.
func Message(from, to string) []byte {
	id := (&mailbox.IDs{}).New(from)
	return message(id, from, to)
}

func message(id, from, to string) []byte {
	head := fmt.Sprintf("---\nid: %s\nfrom: %s\nto: %s\ntype: BENCH\n---\n", id, from, to)
	body := strings.Repeat("All work and no play. ", 1024/22+1)
	return []byte(head + body[:1024-len(head)-1] + "\n")
}

// Process runs a program n times as a plain child process, with input on
// its stdin and its stdout read, one run after the other, and returns how
// long each run took: fork, exec, the program's work, exit and wait. It is
// the program's own cost, which dispatch adds to.
func Process(ctx context.Context, dir string, run []string, input []byte, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	var stdout bytes.Buffer
	for i := 0; i < n; i++ {
		cmd := exec.CommandContext(ctx, run[0], run[1:]...)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(input)
		stdout.Reset()
		cmd.Stdout = &stdout
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", run[0], err)
		}
		out = append(out, took)
	}
	return out, nil
}

// DispatchFigures is what Dispatch measured.
type DispatchFigures struct {
	Agents   int `json:"agents"`
	Messages int `json:"messages"` // per agent
	// Wall is the time Run took, from its start to every message handled
	// and every answer routed.
	Wall time.Duration `json:"wall_ns"`
	// Cycles holds, for each message but the last of each agent, the time
	// from its driver starting to the agent's driver starting on the next
	// message: everything dispatch does for one message of a backlog
	// (the driver; making its output durable and publishing it; moving
	// the message to done/; finding, claiming and reading the next one).
	Cycles []time.Duration `json:"-"`
	// Handles holds the driver's time for each message (runner.Handled's
	// End - Start): for a command, starting the program, feeding it,
	// reading it and waiting for it; for a session, the round trip.
	Handles []time.Duration `json:"-"`
	// MaxRunning is the most drivers seen running at once; Busy the sum
	// of every driver's time, so that Busy/Wall is how many ran on
	// average.
	MaxRunning int           `json:"max_running"`
	Busy       time.Duration `json:"busy_ns"`
}

// Dispatch makes a workspace in dir (a new or empty directory) with an
// agent "boss" and agents agent-1 ... agent-N driven by run (driver
// command or session), with concurrency N. It delivers messages 1 KiB
// messages from boss into each agent's inbox, then runs the workspace
// until idle: each agent handles its backlog, and its answers are routed
// to boss. Every agent handles its messages in one attempt each, or
// Dispatch fails. With confine set, each agent plays a character and its
// program runs confined to it, as a player's does.
func Dispatch(ctx context.Context, dir, driver string, run []string, agents, messages int, confine *runner.Confinement) (*DispatchFigures, error) {
	if agents < 1 || messages < 1 {
		return nil, errors.New("bench: at least one agent and one message")
	}
	argv, err := json.Marshal(run) // JSON is YAML
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "concurrency: %d\nagents:\n  - boss\n", agents)
	names := make([]string, agents)
	for i := range names {
		names[i] = fmt.Sprintf("agent-%d", i+1)
		character := ""
		if confine != nil {
			character = ", character: " + names[i]
		}
		fmt.Fprintf(&cfg, "  - {name: %s, driver: %s, run: %s, retries: 0, timeout: 1m%s}\n", names[i], driver, argv, character)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, workspace.ConfigFile), []byte(cfg.String()), 0o644); err != nil {
		return nil, err
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := ws.MakeDirs(); err != nil {
		return nil, err
	}
	// The backlog, delivered the way the router does, in sending order.
	ids := &mailbox.IDs{}
	for i := 0; i < messages; i++ {
		for _, a := range names {
			id := ids.New("boss")
			box := ws.Mailbox(a)
			tmp := box.Path(mailbox.Tmp, mailbox.FileName(id))
			if err := os.WriteFile(tmp, message(id, "boss", a), 0o644); err != nil {
				return nil, err
			}
			if err := os.Rename(tmp, box.Path(mailbox.Inbox, mailbox.FileName(id))); err != nil {
				return nil, err
			}
		}
	}
	s, err := mailbox.NewSyncer(dir)
	if err != nil {
		return nil, err
	}
	err = errors.Join(s.Sync(), s.Close())
	if err != nil {
		return nil, err
	}

	// The runs of each agent's driver, in order: a worker handles one
	// message at a time, but the workers report at the same time.
	var mu sync.Mutex
	runs := make(map[string][]runner.Handled, agents)
	onHandled := func(h runner.Handled) {
		mu.Lock()
		runs[h.Agent] = append(runs[h.Agent], h)
		mu.Unlock()
	}
	opts := runner.Options{UntilIdle: true, OnHandled: onHandled}
	if confine != nil {
		opts.Confine = func(workspace.Agent, *workspace.Workspace) *runner.Confinement { return confine }
	}
	r, err := runner.Open(ws, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	start := time.Now()
	stats, err := r.Run(ctx)
	wall := time.Since(start)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	want := agents * messages
	if stats.Routed != want {
		return nil, fmt.Errorf("bench: %d answers routed, want %d", stats.Routed, want)
	}
	f := &DispatchFigures{Agents: agents, Messages: messages, Wall: wall}
	var all []runner.Handled
	for _, a := range names {
		if n, err := ws.Mailbox(a).Count(mailbox.Done); err != nil || n != messages {
			return nil, fmt.Errorf("bench: %s handled %d messages of %d (%v)", a, n, messages, err)
		}
		if len(runs[a]) != messages {
			return nil, fmt.Errorf("bench: %s's driver ran %d times for %d messages", a, len(runs[a]), messages)
		}
		for i, h := range runs[a] {
			f.Handles = append(f.Handles, h.End.Sub(h.Start))
			f.Busy += h.End.Sub(h.Start)
			if i > 0 {
				f.Cycles = append(f.Cycles, h.Start.Sub(runs[a][i-1].Start))
			}
		}
		all = append(all, runs[a]...)
	}
	f.MaxRunning = mostAtOnce(all)
	return f, nil
}

// Add merges the figures of another run of the same agents into f, as
// if one run had handled both backlogs: walls and busy times add up, the
// cycles and handles of both are kept, and MaxRunning is the larger.
func (f *DispatchFigures) Add(g *DispatchFigures) {
	f.Agents = max(f.Agents, g.Agents)
	f.Messages += g.Messages
	f.Wall += g.Wall
	f.Busy += g.Busy
	f.Cycles = append(f.Cycles, g.Cycles...)
	f.Handles = append(f.Handles, g.Handles...)
	f.MaxRunning = max(f.MaxRunning, g.MaxRunning)
}

// mostAtOnce returns the most runs that overlap at one instant. A run
// ending at the instant another starts does not overlap it.
func mostAtOnce(runs []runner.Handled) int {
	type edge struct {
		t     time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(runs))
	for _, h := range runs {
		edges = append(edges, edge{h.Start, +1}, edge{h.End, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta // ends first
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// Session runs a workspace with one session agent driven by run, in dir
// (a new or empty directory), through a backlog of n+1 1 KiB messages,
// and returns n round trips: the driver's time for each message, from
// writing it to the running program to reading the empty frame that ends
// the answer. The first message, which also starts the program, is left
// out.
func Session(ctx context.Context, dir string, run []string, n int) ([]time.Duration, error) {
	if n < 1 {
		return nil, errors.New("bench: at least one round trip")
	}
	f, err := Dispatch(ctx, dir, workspace.DriverSession, run, 1, n+1, nil)
	if err != nil {
		return nil, err
	}
	return f.Handles[1:], nil
}

// SessionEcho is a session program for Session and Dispatch: it reads
// messages from r, each ended by a runner.FrameEnd line, and answers each
// with "ok" and the empty frame, until r ends.
func SessionEcho(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriter(w)
	lineStart := true
	for {
		line, err := in.ReadSlice('\n')
		if lineStart && string(line) == runner.FrameEnd+"\n" {
			if _, err := out.WriteString("ok\n" + runner.FrameEnd + "\n" + runner.FrameEnd + "\n"); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
		}
		lineStart = len(line) > 0 && line[len(line)-1] == '\n'
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}
