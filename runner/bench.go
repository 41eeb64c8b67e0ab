package runner

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
	"strings"
	"sync/atomic"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Measuring the drivers, for `parley bench --drivers` and the benchmarks
// of this package. These run parley's own dispatch code (Open, Run, the
// command and session drivers) on throwaway workspaces; they only add
// clocks around the driver.

// BenchCommandScript is the program of the command agents the benchmarks
// run: a cat-like filter that answers each message with its body (one
// exec of sh, which execs sed).
const BenchCommandScript = "#!/bin/sh\n# answers with the body of the message it is given\nexec sed '1,/^---$/d'\n"

// BenchMessage returns a message of about 1 KiB from one agent to another,
// with a new id.
func BenchMessage(from, to string) []byte {
	id := (&mailbox.IDs{}).New(from)
	return benchMessage(id, from, to)
}

func benchMessage(id, from, to string) []byte {
	head := fmt.Sprintf("---\nid: %s\nfrom: %s\nto: %s\ntype: BENCH\n---\n", id, from, to)
	body := strings.Repeat("All work and no play. ", 1024/22+1)
	return []byte(head + body[:1024-len(head)-1] + "\n")
}

// BenchProcess runs a program n times as a plain child process, with
// input on its stdin and its stdout read, one run after the other, and
// returns how long each run took: fork, exec, the program's work, exit
// and wait. It is the program's own cost, which dispatch adds to.
func BenchProcess(ctx context.Context, dir string, run []string, input []byte, n int) ([]time.Duration, error) {
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

// DispatchFigures is what BenchDispatch measured.
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
	// Handles holds the driver's time for each message: for a command,
	// starting the program, feeding it, reading it and waiting for it.
	Handles []time.Duration `json:"-"`
	// MaxRunning is the most drivers seen running at once; Busy the sum
	// of every driver's time, so that Busy/Wall is how many ran on
	// average.
	MaxRunning int           `json:"max_running"`
	Busy       time.Duration `json:"busy_ns"`
}

// BenchDispatch makes a workspace in dir (a new or empty directory) with
// an agent "boss" and agents agent-1 ... agent-N driven by run (driver
// command or session), with concurrency N. It delivers messages 1 KiB
// messages from boss into each agent's inbox, then runs the workspace
// until idle: each agent handles its backlog, and its answers are routed
// to boss.
func BenchDispatch(ctx context.Context, dir, driver string, run []string, agents, messages int) (*DispatchFigures, error) {
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
		fmt.Fprintf(&cfg, "  - {name: %s, driver: %s, run: %s, retries: 0, timeout: 1m}\n", names[i], driver, argv)
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
			if err := os.WriteFile(tmp, benchMessage(id, "boss", a), 0o644); err != nil {
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

	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var running, most atomic.Int64
	clocks := make([]*clockedDriver, 0, agents)
	for _, w := range r.workers {
		c := &clockedDriver{driver: w.driver, running: &running, most: &most}
		w.driver = c
		clocks = append(clocks, c)
	}
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
	for _, a := range names {
		if n, err := ws.Mailbox(a).Count(mailbox.Done); err != nil || n != messages {
			return nil, fmt.Errorf("bench: %s handled %d messages of %d (%v)", a, n, messages, err)
		}
	}
	f := &DispatchFigures{Agents: agents, Messages: messages, Wall: wall, MaxRunning: int(most.Load())}
	for _, c := range clocks {
		for i, st := range c.starts {
			f.Handles = append(f.Handles, c.ends[i].Sub(st))
			f.Busy += c.ends[i].Sub(st)
			if i > 0 {
				f.Cycles = append(f.Cycles, st.Sub(c.starts[i-1]))
			}
		}
	}
	return f, nil
}

// clockedDriver notes when its driver starts and ends each message, and
// how many drivers run at once. A worker handles one message at a time,
// so starts and ends need no lock; Run returning orders them before the
// reader.
type clockedDriver struct {
	driver
	running, most *atomic.Int64
	starts, ends  []time.Time
}

func (c *clockedDriver) handle(ctx context.Context, d *Delivery) ([][]byte, error) {
	n := c.running.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	c.starts = append(c.starts, time.Now())
	frames, err := c.driver.handle(ctx, d)
	c.ends = append(c.ends, time.Now())
	c.running.Add(-1)
	return frames, err
}

// BenchSession starts run as the session driver does and hands it n 1 KiB
// messages, one after the other, through the driver; it returns each
// round trip: from writing the message to reading the empty frame that
// ends the answer. The program is started, and given one message, before
// the clock starts. dir is its working directory.
func BenchSession(ctx context.Context, dir string, run []string, n int) ([]time.Duration, error) {
	s := &sessionDriver{
		agent:     workspace.Agent{Name: "agent-1", Driver: workspace.DriverSession, Run: run, Timeout: time.Minute},
		root:      dir,
		maxOutput: workspace.DefaultMaxOutput,
	}
	defer s.close()
	id := (&mailbox.IDs{}).New("boss")
	data := benchMessage(id, "boss", "agent-1")
	m, err := mailbox.Parse(data)
	if err != nil {
		return nil, err
	}
	d := &Delivery{Agent: "agent-1", ID: id, Data: data, Message: m, Workspace: dir, Outbox: dir, Attempt: 1}
	out := make([]time.Duration, 0, n)
	for i := -1; i < n; i++ {
		start := time.Now()
		frames, err := s.handle(ctx, d)
		took := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("bench: the session: %w", err)
		}
		if len(frames) != 1 {
			return nil, fmt.Errorf("bench: the session answered %d messages, want 1", len(frames))
		}
		if i >= 0 {
			out = append(out, took)
		}
	}
	return out, nil
}

// SessionEcho is a session program for BenchSession and BenchDispatch:
// it reads messages from r, each ended by a FrameEnd line, and answers
// each with "ok" and the empty frame, until r ends.
func SessionEcho(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriter(w)
	lineStart := true
	for {
		line, err := in.ReadSlice('\n')
		if lineStart && string(line) == FrameEnd+"\n" {
			if _, err := out.WriteString("ok\n" + FrameEnd + "\n" + FrameEnd + "\n"); err != nil {
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
