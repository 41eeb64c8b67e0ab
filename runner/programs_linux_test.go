package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/internal/proctest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/sandbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// ended waits for the process pid to end (or to be a zombie, which runs
// no more), up to a bound, and reports whether it did; one that did not
// is killed.
func ended(t *testing.T, pid int) bool {
	t.Helper()
	if !proctest.Gone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		return false
	}
	return true
}

// readPid reads a pid a script wrote.
func readPid(t *testing.T, ws *workspace.Workspace, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, name))
	if err != nil {
		t.Fatalf("the script wrote no %s: %v", name, err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
		t.Fatalf("%s holds %q", name, b)
	}
	return pid
}

// TestProgramsEndWithTheirMessage (issue 11, item 11): a program that
// exited 0 has answered, even when a child it left keeps its stdout open
// (before, the runner waited for the pipe, gave up after its WaitDelay and
// sent the message to dead/); every process a program started ends with
// it, a daemon in a session of its own (setsid) too, and a session's when
// the session is stopped.
func TestProgramsEndWithTheirMessage(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "linger.sh", `cat >/dev/null
sleep 600 &
echo $! > linger.pid
echo answer
`)
	script(t, ws, "daemon.sh", `cat >/dev/null
mkfifo daemon.fifo
setsid sh -c 'echo $$ > daemon.fifo; exec sleep 600' </dev/null >/dev/null 2>&1 &
read pid < daemon.fifo
echo $pid > daemon.pid
echo daemon started
`)
	script(t, ws, "session.sh", `mkfifo session.fifo
setsid sh -c 'echo $$ > session.fifo; exec sleep 600' </dev/null >/dev/null 2>&1 &
read pid < session.fifo
echo $pid > session.pid
while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] && printf 'session answer\n\036\n\036\n'
done
`)
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: linger, driver: command, run: [./linger.sh], retries: 0}
  - {name: daemon, driver: command, run: [./daemon.sh], retries: 0}
  - {name: sess, driver: session, run: [./session.sh]}
`)
	for _, a := range []string{"linger", "daemon", "sess"} {
		send(t, ws, "boss", a, "go")
	}
	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	slices.Sort(got)
	if d := cmp.Diff([]string{"answer", "daemon started", "session answer"}, got); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	if stats.Dead != 0 {
		t.Errorf("%d messages went to dead/, want none: %+v", stats.Dead, stats.DeadFiles)
	}
	for _, f := range []string{"linger.pid", "daemon.pid", "session.pid"} {
		if pid := readPid(t, ws, f); !ended(t, pid) {
			t.Errorf("the process in %s (%d) outlived its program", f, pid)
		}
	}
}

// TestProgramsCgroup: where the runner can give a session a cgroup (v2,
// writable, with cgroup.kill), a daemon that cleared its environment —
// which neither the process group nor the mark finds once it is orphaned
// — ends with the session too, and no cgroup is left.
func TestProgramsCgroup(t *testing.T) {
	cg := findCgroups()
	g := cg.make()
	if g == nil {
		t.Skip("no cgroup v2 this runner may write to, with cgroup.kill")
	}
	g.remove()
	// A runner killed with kill -9 leaves its programs' cgroups: the
	// next one removes those that are empty.
	stale := filepath.Join(cg.dir, "parley-999999999-000000000000")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t, "boss")
	script(t, ws, "hidden.sh", `mkfifo hidden.fifo
setsid env -i sh -c 'echo $$ > hidden.fifo; exec sleep 600' </dev/null >/dev/null 2>&1 &
read pid < hidden.fifo
echo $pid > hidden.pid
cat /proc/self/cgroup > hidden.cgroup
while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] && printf 'hidden started\n\036\n\036\n'
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: hidden, driver: session, run: [./hidden.sh], retries: 0}\n")
	send(t, ws, "boss", "hidden", "go")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"hidden started"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	b, _ := os.ReadFile(filepath.Join(ws.Root, "hidden.cgroup"))
	_, rel, _ := strings.Cut(strings.TrimSpace(string(b)), "0::")
	if !strings.Contains(rel, fmt.Sprintf("parley-%d-", os.Getpid())) {
		t.Fatalf("the session ran in cgroup %q, want one of its own", rel)
	}
	if pid := readPid(t, ws, "hidden.pid"); !ended(t, pid) {
		t.Errorf("the daemon %d that cleared its environment outlived its session", pid)
	}
	if _, err := os.Stat(filepath.Join(cg.dir, filepath.Base(rel))); !os.IsNotExist(err) {
		t.Errorf("the session's cgroup %s is still there (%v)", rel, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		os.Remove(stale)
		t.Errorf("the cgroup a killed runner left, %s, is still there (%v)", stale, err)
	}
}

// TestEndLeftSparesOthers: what a record of a killed runner names is
// ended only while it is still the program the record names: a process
// that took its pid over later (another start time), and the process
// group it leads, are left alone; a process that carries the program's
// mark is ended wherever it is.
func TestEndLeftSparesOthers(t *testing.T) {
	stranger := exec.Command("sleep", "600")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	marked := exec.Command("sleep", "600")
	marked.Env = append(os.Environ(), MarkVar+"=0123456789abcdef")
	for _, c := range []*exec.Cmd{stranger, marked} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	pid := stranger.Process.Pid
	start := startTime(pid)
	if start == 0 {
		t.Fatal("cannot read the start time of a process")
	}
	reused := leftover{token: "fedcba9876543210", boot: bootID(), pid: pid, start: start - 1}
	mine := leftover{token: "0123456789abcdef", boot: bootID()}
	ended, err := endLeft([]leftover{reused, mine}, bootID())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{marked.Process.Pid}, ended); d != "" {
		t.Errorf("endLeft ended (-want +got):\n%s", d)
	}
	if p, ok := readProc(pid); !ok || p.zombie {
		t.Errorf("the process that took a recorded pid over (%d) was ended", pid)
	}
	// The same pid and start time: it is the program, and is ended.
	ended, err = endLeft([]leftover{{token: "fedcba9876543210", pid: pid, start: start}}, bootID())
	if err != nil || !slices.Equal(ended, []int{pid}) {
		t.Errorf("endLeft of the program itself = %v, %v; want [%d]", ended, err, pid)
	}
}

// noNewPrivsThreads counts the threads of this process that have
// no_new_privs set, the mark of a thread confined with Landlock, but the
// main thread: one that a confined program's goroutine was locked to is
// not ended when the goroutine ends (the Go runtime cannot end a
// process's main thread) but parked for good, running nothing else.
func noNewPrivsThreads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	n := 0
	for _, task := range tasks {
		if task.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		if strings.Contains(string(b), "\nNoNewPrivs:\t1\n") {
			n++
		}
	}
	return n
}

// TestConfinedFromItsThread: an isolated agent's program runs confined
// (it cannot read what its rules leave out, and writes where they let
// it), started from a thread of the runner confined for it alone; that
// thread ends with the program, so that no other work of the runner runs
// confined (its journal, the other agents' programs, the next message).
func TestConfinedFromItsThread(t *testing.T) {
	if _, ok := sandbox.Available(); !ok {
		t.Skip("this kernel offers no Landlock")
	}
	if n := noNewPrivsThreads(t); n != 0 {
		t.Skipf("this test runs with no_new_privs set on %d threads already", n)
	}
	ws := newWorkspace(t, "boss")
	script(t, ws, "probe.sh", `cat >/dev/null
if cat secret.md >/dev/null 2>&1; then echo "read secret"; else echo "denied secret"; fi
if echo x > "$TMPDIR/note"; then echo "wrote note"; else echo "denied note"; fi
`)
	script(t, ws, "plain.sh", `cat >/dev/null
cat secret.md
`)
	if err := os.WriteFile(filepath.Join(ws.Root, "secret.md"), []byte("the cult meets at dawn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: tilda, character: tilda, driver: command, run: [./probe.sh], retries: 0}
  - {name: gm, driver: command, run: [./plain.sh], retries: 0}
`)
	root, err := filepath.EvalSymlinks(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	confine := func(a workspace.Agent, _ *workspace.Workspace) *Confinement {
		return &Confinement{
			Rules: sandbox.Rules{Read: []string{"/bin", "/usr", "/lib", "/lib64", "/etc", filepath.Join(root, "probe.sh")}, Write: []string{"/dev/null", scratch}},
			Env:   []string{"TMPDIR=" + scratch},
		}
	}
	for range 3 {
		send(t, ws, "boss", "tilda", "look around")
	}
	send(t, ws, "boss", "gm", "what is the secret?")
	if _, err := runIdle(t, ws, Options{Confine: confine}); err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	slices.Sort(got)
	want := []string{"denied secret\nwrote note", "denied secret\nwrote note", "denied secret\nwrote note", "the cult meets at dawn"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	// The confined threads end with their goroutines, just after their
	// programs were reaped.
	deadline := time.Now().Add(10 * time.Second)
	for noNewPrivsThreads(t) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := noNewPrivsThreads(t); n != 0 {
		t.Errorf("%d threads of the runner are still confined after their programs ended", n)
	}
}

// TestConfinedTmpDirMadeAgain: the TMPDIR a confined program is handed
// is made before each run when it is gone (a tryout: `git clean -fdX`
// removed campaigns/NAME/tmp/ while the runner ran; the program, which
// Landlock lets write only inside it, could not make it again, failed
// three times, and the message went to dead/).
func TestConfinedTmpDirMadeAgain(t *testing.T) {
	if _, ok := sandbox.Available(); !ok {
		t.Skip("this kernel offers no Landlock")
	}
	ws := newWorkspace(t, "boss")
	script(t, ws, "probe.sh", `cat >/dev/null
if echo x > "$TMPDIR/note"; then echo "wrote note"; else echo "denied note"; fi
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: tilda, character: tilda, driver: command, run: [./probe.sh], retries: 0}\n")
	root, err := filepath.EvalSymlinks(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(t.TempDir(), "tmp", "tilda") // made by the runner
	confine := func(a workspace.Agent, _ *workspace.Workspace) *Confinement {
		return &Confinement{
			Rules: sandbox.Rules{Read: []string{"/bin", "/usr", "/lib", "/lib64", "/etc", filepath.Join(root, "probe.sh")}, Write: []string{"/dev/null", scratch}},
			Env:   []string{"TMPDIR=" + scratch},
		}
	}
	for range 2 {
		if err := os.RemoveAll(filepath.Dir(scratch)); err != nil {
			t.Fatal(err)
		}
		send(t, ws, "boss", "tilda", "look around")
		if _, err := runIdle(t, ws, Options{Confine: confine}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := bodies(t, ws, "boss", mailbox.Inbox), []string{"wrote note", "wrote note"}; !slices.Equal(got, want) {
		t.Errorf("boss's inbox = %q, want %q", got, want)
	}
}

// TestShutdownKillsChildren: when the runner stops, a program mid-message
// is killed with everything it started, and the message stays in cur/ to
// be handled by the next runner.
func TestShutdownKillsChildren(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "slow.sh", `cat >/dev/null
if [ -e handled-once ]; then echo finished; exit 0; fi
touch handled-once
sleep 600 & echo $! > child.pid
wait
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: slow, driver: command, run: [./slow.sh]}\n")
	id := send(t, ws, "boss", "slow", "take your time")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	pidFile := filepath.Join(ws.Root, "child.pid")
	deadline := time.Now().Add(30 * time.Second)
	var pid int
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		cancel()
		t.Fatal("the program never started its child")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Killed, it ends a moment later: on a busy machine it may still be
	// running when the runner returns.
	if !ended(t, pid) {
		t.Errorf("the child %d outlived the runner", pid)
	}
	if got := names(t, ws, "slow", mailbox.Cur); len(got) != 1 || got[0] != mailbox.FileName(id) {
		t.Fatalf("slow's cur/ = %v, want the interrupted message", got)
	}
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"finished"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("after a restart, boss's inbox (-want +got):\n%s", d)
	}
}
