package bench

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// The dispatch targets, measured. Each benchmark's op is one message (to
// each agent); -benchtime 500x gives the 500-message runs of the targets:
//
//	go test ./internal/bench -run '^$' -bench . -benchtime 500x
//
// Timings are reported, never asserted: `parley bench --drivers` checks
// them against the targets.

// BenchmarkCommandDispatch: one command agent running a cat-like script
// (CommandScript) through a backlog of b.N messages. The overhead is
// what parley adds to the program's own run time: the p50 of a message's
// cycle through dispatch (see DispatchFigures.Cycles) minus the median
// time of plain fork/execs of the same script with the same input.
// Target: overhead p50 <= 5 ms.
func BenchmarkCommandDispatch(b *testing.B) {
	ctx := benchContext(b)
	dir := b.TempDir()
	run := benchScript(b, dir)
	bare, err := Process(ctx, dir, run, Message("boss", "agent-1"), min(max(b.N, 20), 200))
	if err != nil {
		b.Fatal(err)
	}
	f, err := Dispatch(ctx, filepath.Join(dir, "ws"), workspace.DriverCommand, run, 1, b.N, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(f.Wall.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(ms(pct(bare, 0.5)), "bare-p50-ms")
	if len(f.Cycles) > 0 {
		b.ReportMetric(ms(pct(f.Cycles, 0.5)), "p50-ms")
		b.ReportMetric(ms(pct(f.Cycles, 0.99)), "p99-ms")
		b.ReportMetric(ms(pct(f.Cycles, 0.5)-pct(bare, 0.5)), "overhead-p50-ms")
	}
	b.ReportMetric(ms(pct(f.Handles, 0.5)), "driver-p50-ms")
}

// BenchmarkParallelAgents: 4 command agents with b.N messages each, and
// concurrency 4, against one agent with b.N messages. x-one-agent is the
// wall time of the four over that of the one (close to 1 with 4 free
// CPUs); max-running the most agents seen running at once (4: all in
// parallel), avg-running how many ran on average.
func BenchmarkParallelAgents(b *testing.B) {
	ctx := benchContext(b)
	dir := b.TempDir()
	run := benchScript(b, dir)
	one, err := Dispatch(ctx, filepath.Join(dir, "one"), workspace.DriverCommand, run, 1, b.N, nil)
	if err != nil {
		b.Fatal(err)
	}
	four, err := Dispatch(ctx, filepath.Join(dir, "four"), workspace.DriverCommand, run, 4, b.N, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(four.Wall.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(one.Wall.Seconds(), "one-agent-s")
	b.ReportMetric(four.Wall.Seconds(), "four-agents-s")
	b.ReportMetric(four.Wall.Seconds()/one.Wall.Seconds(), "x-one-agent")
	b.ReportMetric(float64(four.MaxRunning), "max-running")
	b.ReportMetric(four.Busy.Seconds()/four.Wall.Seconds(), "avg-running")
}

// BenchmarkSessionRoundTrip: the session driver's round trip, from
// writing a message to a session program (this test binary, as
// SessionEcho) to reading the end of its answer, for each message of a
// session agent's backlog but the first. Target: p50 <= 1 ms.
func BenchmarkSessionRoundTrip(b *testing.B) {
	ctx := benchContext(b)
	rt, err := Session(ctx, b.TempDir(), sessionHelper(b), b.N)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, d := range rt {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/op") // the start of the program left out
	b.ReportMetric(ms(pct(rt, 0.5)), "p50-ms")
	b.ReportMetric(ms(pct(rt, 0.99)), "p99-ms")
}

// BenchmarkSessionDispatch: one session agent through a backlog of b.N
// messages, everything dispatch does included (the durable moves of the
// message and of the answer): the session counterpart of
// BenchmarkCommandDispatch. For information; the target is the round
// trip.
func BenchmarkSessionDispatch(b *testing.B) {
	ctx := benchContext(b)
	dir := b.TempDir()
	f, err := Dispatch(ctx, dir, workspace.DriverSession, sessionHelper(b), 1, b.N, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(f.Wall.Nanoseconds())/float64(b.N), "ns/op")
	if len(f.Cycles) > 0 {
		b.ReportMetric(ms(pct(f.Cycles, 0.5)), "p50-ms")
		b.ReportMetric(ms(pct(f.Cycles, 0.99)), "p99-ms")
	}
	b.ReportMetric(ms(pct(f.Handles, 0.5)), "driver-p50-ms")
}

// TestDispatch: the figures hold one driver time per message and one
// cycle per message but each agent's last, and the agents' drivers ran
// at once.
func TestDispatch(t *testing.T) {
	ctx := benchContext(t)
	dir := t.TempDir()
	const agents, messages = 2, 3
	f, err := Dispatch(ctx, filepath.Join(dir, "ws"), workspace.DriverCommand, benchScript(t, dir), agents, messages, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Handles) != agents*messages || len(f.Cycles) != agents*(messages-1) {
		t.Errorf("Dispatch: %d driver times, %d cycles; want %d, %d", len(f.Handles), len(f.Cycles), agents*messages, agents*(messages-1))
	}
	if f.MaxRunning < 1 || f.MaxRunning > agents || f.Busy <= 0 || f.Wall < f.Busy/agents {
		t.Errorf("Dispatch: at most %d running, busy %v, wall %v", f.MaxRunning, f.Busy, f.Wall)
	}
}

// TestSession: one round trip per message but the first.
func TestSession(t *testing.T) {
	rt, err := Session(benchContext(t), t.TempDir(), sessionHelper(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt) != 3 {
		t.Errorf("Session(3) = %d round trips, want 3", len(rt))
	}
}

func TestMostAtOnce(t *testing.T) {
	t0 := time.Now()
	run := func(start, end int) runner.Handled {
		return runner.Handled{Start: t0.Add(time.Duration(start)), End: t0.Add(time.Duration(end))}
	}
	for _, tc := range []struct {
		name string
		runs []runner.Handled
		want int
	}{
		{"none", nil, 0},
		{"one", []runner.Handled{run(0, 5)}, 1},
		{"one after the other", []runner.Handled{run(0, 5), run(5, 9), run(9, 12)}, 1},
		{"overlapping", []runner.Handled{run(0, 5), run(4, 9), run(3, 12), run(10, 11)}, 3},
		{"nested", []runner.Handled{run(0, 10), run(2, 3), run(3, 4), run(8, 9)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mostAtOnce(tc.runs); got != tc.want {
				t.Errorf("mostAtOnce = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDispatchFiguresAdd: rounds of one agent merged read as one run of
// both backlogs, so that the bench's p50 is over every cycle measured.
func TestDispatchFiguresAdd(t *testing.T) {
	var f DispatchFigures
	f.Add(&DispatchFigures{Agents: 1, Messages: 3, Wall: 3 * time.Second, Busy: 2 * time.Second, Cycles: []time.Duration{1, 2}, Handles: []time.Duration{5, 6, 7}, MaxRunning: 1})
	f.Add(&DispatchFigures{Agents: 1, Messages: 2, Wall: time.Second, Busy: time.Second, Cycles: []time.Duration{3}, Handles: []time.Duration{8, 9}, MaxRunning: 1})
	want := DispatchFigures{Agents: 1, Messages: 5, Wall: 4 * time.Second, Busy: 3 * time.Second, Cycles: []time.Duration{1, 2, 3}, Handles: []time.Duration{5, 6, 7, 8, 9}, MaxRunning: 1}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("merged %+v, want %+v", f, want)
	}
}

// TestSessionHelper is not a test: it is the session program of the
// session benchmarks, run as this test binary with
// PARLEY_BENCH_SESSION_HELPER=1.
func TestSessionHelper(t *testing.T) {
	if os.Getenv("PARLEY_BENCH_SESSION_HELPER") != "1" {
		t.Skip("the session program of the session benchmarks")
	}
	if err := SessionEcho(os.Stdin, os.Stdout); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// sessionHelper returns the command line that runs this test binary as
// TestSessionHelper.
func sessionHelper(tb testing.TB) []string {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Setenv("PARLEY_BENCH_SESSION_HELPER", "1") // the driver passes its environment on
	return []string{self, "-test.run=^TestSessionHelper$"}
}

// benchScript writes CommandScript into dir.
func benchScript(tb testing.TB, dir string) []string {
	tb.Helper()
	path := filepath.Join(dir, "echo-body.sh")
	if err := os.WriteFile(path, []byte(CommandScript), 0o755); err != nil {
		tb.Fatal(err)
	}
	return []string{path}
}

func benchContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// pct returns the p-th quantile of v (nearest rank, rounding down).
func pct(v []time.Duration, p float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
