package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/proctest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// orphanCheck is what each run of an agent's program does first: it
// writes "overlap PID" into runs-AGENT.txt for every process an earlier
// run of the agent started that still runs (a zombie runs no more), then
// "start PID", and notes its pid. Unless the file fast is there, it then
// starts a sleep that outlives the runner, notes its pid, and waits for it.
const orphanCheck = `f=runs-$PARLEY_AGENT.txt
for pid in $(cat pids-$PARLEY_AGENT 2>/dev/null); do
  s=$(cut -d')' -f2 /proc/$pid/stat 2>/dev/null | cut -d' ' -f2)
  [ -n "$s" ] && [ "$s" != Z ] && echo "overlap $pid" >> $f
done
echo "start $$" >> $f
echo $$ >> pids-$PARLEY_AGENT
if [ ! -e fast ]; then
  sleep 600 &
  echo $! >> pids-$PARLEY_AGENT
  echo "sleeping $!" >> $f
  wait
fi
`

const orphansConfig = `agents:
  - boss
  - name: cmd
    driver: command
    run: [sh, cmd.sh]
  - name: sess
    driver: session
    run: [sh, sess.sh]
`

// TestCrashOrphans (a user's tryout: after kill -9 of the runner, a
// command agent's program ran on, and the next runner started a second
// copy of it on the same message, at the same time): a runner is killed
// with SIGKILL while a command agent's program and a session agent's
// program each handle a message, having started a sleep of their own.
// The programs the runner started end with it, at once; the sleeps they
// started, before a new runner runs anything; the new runner handles
// each message again, once, and never while the earlier run's processes
// still run.
func TestCrashOrphans(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a runner while agents work")
	}
	root := t.TempDir()
	files := map[string]string{
		"parley.yaml": orphansConfig,
		"cmd.sh":      "cat >/dev/null\n" + orphanCheck + "echo ack\n",
		"sess.sh": "while IFS= read -r line; do\n" +
			"[ \"$line\" = \"$(printf '\\036')\" ] || continue\n" +
			orphanCheck +
			"printf 'ack\\n\\036\\n\\036\\n'\n" +
			"done\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	agents := []string{"cmd", "sess"}
	for _, a := range append([]string{"boss"}, agents...) {
		if err := ws.Mailbox(a).Init(); err != nil {
			t.Fatal(err)
		}
	}
	ids := &mailbox.IDs{}
	for _, a := range agents {
		id := ids.New("boss")
		m := mailbox.New([]byte("work\n"))
		m.Set("id", id)
		m.Set("to", a)
		if err := os.WriteFile(ws.Mailbox("boss").Path(mailbox.Outbox, mailbox.FileName(id)), m.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What the first run started, for the test to end whatever outlives
	// this test.
	var first []int
	t.Cleanup(func() {
		for _, pid := range first {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	runs := func(agent string) string {
		b, _ := os.ReadFile(filepath.Join(root, "runs-"+agent+".txt"))
		return string(b)
	}

	runnerLog, err := os.Create(filepath.Join(t.TempDir(), "runner.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer runnerLog.Close()
	cmd := exec.Command("parley", "-C", root, "run", "--quiet")
	cmd.Stderr = runnerLog // a file: Wait does not wait for what holds it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(runs("cmd"), "sleeping") || !strings.Contains(runs("sess"), "sleeping") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			log, _ := os.ReadFile(runnerLog.Name())
			t.Fatalf("waited 60s for both programs to start their sleep; cmd: %q, sess: %q; the runner said:\n%s", runs("cmd"), runs("sess"), log)
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for _, a := range agents {
		program, sleep := 0, 0
		for _, line := range strings.Split(runs(a), "\n") {
			if p, ok := strings.CutPrefix(line, "start "); ok {
				program, _ = strconv.Atoi(p)
			}
			if p, ok := strings.CutPrefix(line, "sleeping "); ok {
				sleep, _ = strconv.Atoi(p)
			}
		}
		first = append(first, program, sleep)
		// The program the runner started (not the sleep it started in
		// turn) ends with the runner, with no runner started again.
		if !proctest.Gone(program, 10*time.Second) {
			t.Errorf("%s: the program (pid %d) still runs 10s after its runner was killed", a, program)
		}
	}

	// Run again, fast this time: each message, in cur/, is handled again.
	if err := os.WriteFile(filepath.Join(root, "fast"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final := exec.CommandContext(ctx, "parley", "-C", root, "run", "--until-idle", "--quiet")
	var stderr bytes.Buffer
	final.Stderr = &stderr
	if out, err := final.Output(); err != nil {
		t.Fatalf("second run: %v\n%s%s", err, out, stderr.String())
	}
	for _, a := range agents {
		got := runs(a)
		if n := strings.Count(got, "start "); n != 2 {
			t.Errorf("%s ran %d times, want 2 (once per runner):\n%s", a, n, got)
		}
		if strings.Contains(got, "overlap") {
			t.Errorf("%s ran while a process of its earlier run still ran:\n%s", a, got)
		}
		if n, _ := ws.Mailbox(a).Count(mailbox.Done); n != 1 {
			t.Errorf("%s/done holds %d messages, want 1", a, n)
		}
	}
	for _, pid := range first {
		if !proctest.Gone(pid, 0) {
			t.Errorf("process %d of the first run still runs after the second", pid)
		}
	}
	if n, _ := ws.Mailbox("boss").Count(mailbox.Inbox); n != 2 {
		t.Errorf("boss/inbox holds %d messages, want the 2 answers", n)
	}
	if des, err := os.ReadDir(filepath.Join(root, workspace.StateDir, "programs")); err == nil && len(des) != 0 {
		t.Errorf(".parley/programs holds %d records after a clean stop, want none", len(des))
	}
}
