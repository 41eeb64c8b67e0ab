package runner

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// TestStderrLogCommand: what a command agent's program writes to stderr
// is kept in .parley/stderr/AGENT.log, each run under a header naming
// the message, when it succeeds too; before, it was kept only in dead/
// for a program that failed, and lost otherwise. A failed run still has
// its stderr in dead/.
func TestStderrLogCommand(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "warn.sh", `
msg=$(cat)
case "$msg" in
  *quiet*) echo "done"; exit 0 ;;
esac
echo "rate limited, retrying in 30s" >&2
case "$msg" in
  *fail*) echo 'model overloaded' >&2; exit 2 ;;
esac
echo "done"
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: worker, driver: command, run: [./warn.sh], retries: 0}\n")
	first := send(t, ws, "boss", "worker", "please")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	// A run that writes nothing to stderr adds nothing, not even its
	// header: quiet runs do not push what others said out of the log.
	send(t, ws, "boss", "worker", "quiet")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	second := send(t, ws, "boss", "worker", "fail please")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ws.StderrLogPath("worker"))
	if err != nil {
		t.Fatalf("the stderr log after the runs: %v", err)
	}
	want := regexp.MustCompile(`^--- \S+ message ` + regexp.QuoteMeta(first) + `, attempt 1 ---
rate limited, retrying in 30s
--- \S+ message ` + regexp.QuoteMeta(second) + `, attempt 1 ---
rate limited, retrying in 30s
model overloaded
$`)
	if !want.Match(b) {
		t.Errorf("%s =\n%s\nwant it to match\n%s", ws.StderrLogPath("worker"), b, want)
	}
	if got := filepath.ToSlash(ws.StderrLogPath("worker")); !strings.HasSuffix(got, ".parley/stderr/worker.log") {
		t.Errorf("StderrLogPath(worker) = %s, want .parley/stderr/worker.log", got)
	}
	dead, err := os.ReadFile(ws.Mailbox("worker").Path(mailbox.Dead, second+".md.reason"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dead), "stderr (last lines):\nrate limited, retrying in 30s\nmodel overloaded") {
		t.Errorf("dead/ reason = %q, want the last lines of stderr", dead)
	}
}

// TestStderrLogSession: what a session writes to stderr is in its log
// while the session still runs, so that tail -f shows it.
func TestStderrLogSession(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	release := filepath.Join(ws.Root, "release")
	if err := syscall.Mkfifo(release, 0o600); err != nil {
		t.Skipf("no fifo: %v", err)
	}
	script(t, ws, "session.sh", `
while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] || continue
  echo "model overloaded, waiting" >&2
  read -r go < release
  printf 'answered\n\036\n\036\n'
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: sess, driver: session, run: [./session.sh], timeout: 60s}\n")
	id := send(t, ws, "boss", "sess", "hello")
	ran := make(chan error, 1)
	go func() {
		_, err := runIdle(t, ws, Options{})
		ran <- err
	}()
	path := ws.StderrLogPath("sess")
	want := regexp.MustCompile(`^--- \S+ session started \(pid \d+\) ---
--- \S+ message ` + regexp.QuoteMeta(id) + `, attempt 1 ---
model overloaded, waiting
$`)
	deadline := time.Now().Add(30 * time.Second)
	var b []byte
	for !want.Match(b) {
		if time.Now().After(deadline) {
			t.Fatalf("%s while the session waits =\n%s\nwant it to match\n%s", path, b, want)
		}
		select {
		case err := <-ran:
			t.Fatalf("the run ended (%v) before the session wrote to its log; the log holds:\n%s", err, b)
		case <-time.After(10 * time.Millisecond):
		}
		b, _ = os.ReadFile(path)
	}
	f, err := os.OpenFile(release, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "go")
	f.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := bodies(t, ws, "boss", mailbox.Inbox); len(got) != 1 || got[0] != "answered" {
		t.Errorf("boss's inbox = %q, want the session's answer", got)
	}
}

// TestStderrLogBounded: the log is rotated to .1 once it passes its
// bound, one generation kept; an endless line keeps it bounded; a log
// that cannot be written is warned about once and never fails a write.
func TestStderrLogBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC) }
	l := &stderrLog{path: filepath.Join(dir, "stderr", "a.log"), agent: "a", max: 200, now: now}
	l.begin("message 1, attempt 1")
	line := strings.Repeat("x", 39) + "\n"
	for range 3 {
		l.Write([]byte(line))
	}
	if _, err := os.Stat(l.path + ".1"); err == nil {
		t.Fatalf("%s.1 exists before the log reached its bound", l.path)
	}
	l.Write([]byte(line))
	old, err := os.ReadFile(l.path + ".1")
	if err != nil {
		t.Fatalf("no rotated log once past the bound: %v", err)
	}
	if !strings.HasPrefix(string(old), "--- 2026-11-28T20:00:00Z message 1, attempt 1 ---\n") || len(old) > 200 {
		t.Errorf("%s.1 = %d bytes:\n%s\nwant the run's header first, at most 200 bytes", l.path, len(old), old)
	}
	cur, _ := os.ReadFile(l.path)
	if want := "--- 2026-11-28T20:00:00Z continued (the lines before are in a.log.1) ---\n" + line; !strings.HasPrefix(string(cur), want) {
		t.Errorf("%s after rotation =\n%s\nwant it to begin with\n%s", l.path, cur, want)
	}

	// An endless line, written in many pieces and in one: the logs stay
	// within twice the bound (plus a header).
	piece := bytes.Repeat([]byte("y"), 64)
	for range 1000 {
		if n, err := l.Write(piece); n != len(piece) || err != nil {
			t.Fatalf("Write = %d, %v, want %d, nil", n, err, len(piece))
		}
	}
	l.Write(bytes.Repeat([]byte("z"), 10000))
	for _, p := range []string{l.path, l.path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 200+80 {
			t.Errorf("%s = %d bytes after an endless line, want at most about 200", p, fi.Size())
		}
	}
	l.end()

	// A run that ended mid-line: the next run's header is on a line of
	// its own.
	l = &stderrLog{path: filepath.Join(dir, "stderr", "c.log"), agent: "c", max: 1000, now: now}
	l.begin("message 1, attempt 1")
	l.Write([]byte("no newline"))
	l.end()
	l.begin("message 2, attempt 1")
	l.Write([]byte("next\n"))
	l.end()
	cur, _ = os.ReadFile(l.path)
	if want := "--- 2026-11-28T20:00:00Z message 1, attempt 1 ---\nno newline\n--- 2026-11-28T20:00:00Z message 2, attempt 1 ---\nnext\n"; string(cur) != want {
		t.Errorf("%s =\n%q\nwant\n%q", l.path, cur, want)
	}

	// A log that cannot be written: warned about once, writes succeed.
	var warnings bytes.Buffer
	blocked := filepath.Join(dir, "file")
	os.WriteFile(blocked, nil, 0o644)
	l = &stderrLog{path: filepath.Join(blocked, "b.log"), agent: "b", max: 200, now: now, log: slog.New(slog.NewTextHandler(&warnings, nil))}
	for range 2 {
		l.begin("message 3, attempt 1")
		if n, err := l.Write([]byte("lost\n")); n != 5 || err != nil {
			t.Errorf("Write to a log that cannot be written = %d, %v, want 5, nil", n, err)
		}
		l.end()
	}
	if n := strings.Count(warnings.String(), "level=WARN"); n != 1 {
		t.Errorf("warnings of a log that cannot be written = %d, want 1:\n%s", n, &warnings)
	}
}

// TestStderrLogRemoved: a log removed or moved by a person while it is
// open (a session's stays open while the session lives: rm, git clean)
// is started anew at the program's next write. Before, the rest of the
// session's stderr went into the file removed, lost until the session
// restarted.
func TestStderrLogRemoved(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name   string
		remove func(path string) error
	}{
		{"removed", os.Remove},
		{"moved", func(path string) error { return os.Rename(path, path+".old") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &stderrLog{path: filepath.Join(t.TempDir(), "stderr", "gm.log"), agent: "gm", max: 1000, now: now}
			l.begin("session started (pid 1)")
			l.mark("message 1, attempt 1")
			l.Write([]byte("before\n"))
			if err := tc.remove(l.path); err != nil {
				t.Fatal(err)
			}
			l.Write([]byte("after\n"))
			l.mark("message 2, attempt 1")
			l.Write([]byte("later\n"))
			b, err := os.ReadFile(l.path)
			if err != nil {
				t.Fatalf("the log after it was %s and written again: %v", tc.name, err)
			}
			want := "--- 2026-11-28T20:00:00Z continued (the log was removed or moved while the program ran) ---\nafter\n" +
				"--- 2026-11-28T20:00:00Z message 2, attempt 1 ---\nlater\n"
			if string(b) != want {
				t.Errorf("%s after it was %s =\n%s\nwant\n%s", l.path, tc.name, b, want)
			}
			l.end()
		})
	}
}
