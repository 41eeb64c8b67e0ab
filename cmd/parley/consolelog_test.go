package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/llm"
)

// TestConsoleLog: what `parley run` logs to a terminal reads as a line
// for a person: the time of day, the level when it is not INFO, the
// message, then key=value, quoted only when needed, with what an agent
// wrote escaped.
func TestConsoleLog(t *testing.T) {
	at := time.Date(2026, 11, 28, 21, 4, 5, 0, time.Local)
	for _, tc := range []struct {
		name  string
		level slog.Level
		msg   string
		attrs []any
		with  []any
		group string
		want  string
	}{
		{"info", slog.LevelInfo, "agent stopped", []any{"agent", "narrator"}, nil, "", "21:04:05 agent stopped agent=narrator\n"},
		{"warn quoted", slog.LevelWarn, "rejected", []any{"agent", "aria", "reason", `x.md:2: to: unknown agent "zed"`}, nil, "",
			`21:04:05 WARN rejected agent=aria reason="x.md:2: to: unknown agent \"zed\""` + "\n"},
		{"control characters", slog.LevelError, "routing", []any{"file", "a\x1b[2Jb.md", "err", errors.New("bad\nline")}, nil, "",
			`21:04:05 ERROR routing file="a\x1b[2Jb.md" err="bad\nline"` + "\n"},
		{"time and duration", slog.LevelInfo, "waiting", []any{"until", at.Add(time.Minute), "after", 90 * time.Second, "n", 3}, nil, "",
			"21:04:05 waiting until=21:05:05 after=1m30s n=3\n"},
		{"with attrs and group", slog.LevelDebug, "delivered", []any{"id", "x"}, []any{"agent", "gm"}, "bridge",
			"21:04:05 DEBUG delivered agent=gm bridge.id=x\n"},
		{"empty value", slog.LevelInfo, "m", []any{"note", ""}, nil, "", `21:04:05 m note=""` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = newConsoleHandler(&buf, slog.LevelDebug)
			if tc.with != nil {
				h = h.WithAttrs(attrsOf(tc.with))
			}
			if tc.group != "" {
				h = h.WithGroup(tc.group)
			}
			r := slog.NewRecord(at, tc.level, tc.msg, 0)
			r.Add(tc.attrs...)
			if err := h.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// attrsOf makes attributes of alternating keys and values.
func attrsOf(kv []any) []slog.Attr {
	var out []slog.Attr
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, slog.Any(kv[i].(string), kv[i+1]))
	}
	return out
}

// TestConsoleLogLevel: --quiet and --verbose hold at a terminal too.
func TestConsoleLogLevel(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(newConsoleHandler(&buf, slog.LevelError))
	log.Warn("not shown")
	log.Error("shown")
	if got := buf.String(); !strings.HasSuffix(got, " ERROR shown\n") || strings.Contains(got, "not shown") {
		t.Errorf("at level ERROR the log is %q", got)
	}
}

// TestSeatLogger: the log of the runner a seat runs shows no raw line
// (a tryout: "time=... level=WARN msg=..." between story lines). What
// the seat tells itself (a retry too: TestSeatTellsRetrying) is left
// out; another warning is said in parentheses; --verbose shows every
// record as it is.
func TestSeatLogger(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verbose bool
		log     func(*slog.Logger)
		want    string
	}{
		{"retry", false, func(l *slog.Logger) {
			l.Warn(runner.LogRetrying, "agent", "gm", "attempt", 1, "err", "exit code 1")
		}, ""},
		{"given up", false, func(l *slog.Logger) { l.Error(runner.LogGaveUp, "agent", "gm") }, ""},
		{"unresponsive", false, func(l *slog.Logger) { l.Warn(runner.LogUnresponsive, "agent", "gm") }, ""},
		{"notice", false, func(l *slog.Logger) {
			l.Warn("gm stopped answering m1: its model was still calling tools after 8 rounds", "agent", "gm", llm.LogNotice, llm.ToolRoundsNotice)
		}, ""},
		{"other", false, func(l *slog.Logger) { l.Warn("loop stopped", "agent", "gm", "hops", 9) }, "\n(parley: WARN loop stopped agent=gm hops=9)\n"},
		{"info", false, func(l *slog.Logger) { l.Info("session over") }, ""},
		{"verbose retry", true, func(l *slog.Logger) { l.Warn(runner.LogRetrying, "agent", "gm") }, `level=WARN msg="handling failed; trying again" agent=gm`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			s := &seat{e: &env{stderr: &b}, verbose: tc.verbose, out: io.Discard, told: map[string]bool{}} // what it tells the person goes to out
			tc.log(s.seatLogger())
			got := b.String()
			if tc.verbose {
				if !strings.Contains(got, tc.want) {
					t.Errorf("seatLogger() wrote %q, want it to hold %q", got, tc.want)
				}
				return
			}
			if got != tc.want {
				t.Errorf("seatLogger() wrote %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSeatTellsRetrying: a tryout waited at the seat with no sign while
// the runner retried an agent's program. The retry's log record is told
// on the seat's screen in plain words, never as a log line: an agent's
// first retry, then only a message that failed twice (tellsRetry), each
// message once.
func TestSeatTellsRetrying(t *testing.T) {
	ws := newWorkspace(t, t.TempDir(), "skills: [dnd-team]\nagents:\n  - {name: gm, role: gm, driver: command, run: [true]}\n  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [true]}\n  - you\n")
	var out, errs bytes.Buffer
	s := &seat{e: &env{stderr: &errs}, ws: ws, out: &out, width: 200}
	log := s.seatLogger()
	for _, r := range []struct {
		agent, id string
		attempt   int
	}{{"tor", "m1", 1}, {"tor", "m1", 2}, {"gm", "m2", 1}, {"tor", "m3", 1}, {"tor", "m4", 1}, {"tor", "m4", 2}, {"tor", "m4", 3}} {
		log.Warn(runner.LogRetrying, "agent", r.agent, "id", r.id, "attempt", r.attempt, "err", "exit code 1")
	}
	want := "\n(tor-ashgrove's agent, tor, is slow to answer: its program failed on a message, and is being tried again; please wait)\n" +
		"\n(the game master, gm, is slow to answer: its program failed on a message, and is being tried again; please wait)\n" +
		"\n(tor-ashgrove's agent, tor, is slow to answer: its program failed 2 times on a message, and is being tried again; please wait)\n"
	if got := out.String(); got != want {
		t.Errorf("the seat said %q, want %q", got, want)
	}
	if errs.Len() > 0 {
		t.Errorf("the seat's log wrote %q, want nothing", errs.String())
	}
}
