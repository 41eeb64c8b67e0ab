package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/proctest"
)

// TestPlayLeaveWaitsForPrograms guards a bug: Ctrl-D at the seat left an
// AI player's program running with no parent, threw its answer away, and
// the message was run again at the next start. Leaving now waits for the
// programs to finish what they handle (their answers are sent), and a
// second Ctrl-D stops them as a signal stops `parley run`: ended and
// waited for, their message handled again at the next start.
func TestPlayLeaveWaitsForPrograms(t *testing.T) {
	t.Parallel()
	dir, bin := terminalParley(t)
	ws := filepath.Join(dir, "table")
	initCmd := exec.Command(bin, "init", "--template", "dnd", "--campaign", "the-hollow", "--human", "corwin-voss", "--ai", "tilda-brannock", "table")
	initCmd.Dir = dir
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("parley init: %v\n%s", err, out)
	}
	parley := parleyIn(t, bin, ws)
	// Tilda's program says it started, with its pid, and answers once
	// the test lets it (a file in its TMPDIR).
	cfgPath := filepath.Join(ws, "parley.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	prog := "    character: tilda-brannock\n    driver: command\n" +
		`    run: [sh, -c, 'echo $$ > "$TMPDIR/started.$$"; while [ ! -e "$TMPDIR/go" ]; do sleep 0.02; done; rm -f "$TMPDIR/go"; cat >/dev/null; echo Tilda nods.']` + "\n"
	cfg2 := strings.Replace(string(cfg), "    character: tilda-brannock\n", prog, 1)
	if cfg2 == string(cfg) {
		t.Fatalf("no tilda in %s:\n%s", cfgPath, cfg)
	}
	if err := os.WriteFile(cfgPath, []byte(cfg2), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(ws, "campaigns", "the-hollow", "tmp", "tilda")
	tilda := filepath.Join(ws, "mailboxes", "tilda")
	ask := func(body string) {
		parley("send", "--from", "gm", "--to", "tilda-brannock", "--type", "GM_TO_PLAYER", "--field", "request_type=QUICK_REACTION",
			"--field", `scene_number="001"`, "--field", "scene_slug=x", "--body", body)
	}
	started := func() []string {
		names, _ := filepath.Glob(filepath.Join(tmp, "started.*"))
		return names
	}
	// waitStarted waits for the program to have started n times and
	// written its pid (the file is there before the pid is in it), and
	// returns the pid of the nth start.
	waitStarted := func(n int) int {
		t.Helper()
		end := time.Now().Add(20 * time.Second)
		for {
			var data []byte
			if names := started(); len(names) >= n {
				data, _ = os.ReadFile(names[n-1])
				if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
					return pid
				}
			}
			if time.Now().After(end) {
				t.Fatalf("tilda's program did not start %d times and write its pid within 20s (started: %v, pid file: %q)", n, started(), data)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	play := func(tm *tmuxTerm, width int) {
		tm.run("new-session", "-d", "-s", "play", "-x", strconv.Itoa(width), "-y", "40", "-c", ws, "--", bin, "play")
		tm.waitFor("the seat to start", func(s string) bool { return strings.Contains(s, "Ctrl-D leaves") })
	}

	// Ctrl-D once: the seat waits for tilda, and her answer is sent; she
	// starts on no other message meanwhile, which leaving would cut off.
	ask("Tilda?")
	ask("Tilda, next?")
	tm := &tmuxTerm{t: t, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	play(tm, 100)
	waitStarted(1)
	tm.keys("C-d")
	tm.waitFor("the seat to wait for tilda", func(s string) bool { return strings.Contains(s, "waiting for tilda to finish") })
	if s := tm.screen(); !strings.Contains(s, "Ctrl-D again stops now") {
		t.Errorf("after Ctrl-D the hint does not name Ctrl-D:\n%s", s)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the seat to end", func(string) bool { return tm.ended() })
	waitForFile(t, filepath.Join(tilda, "sent"), "Tilda nods.")
	if cur, _ := filepath.Glob(filepath.Join(tilda, "cur", "*.md")); len(cur) != 0 {
		t.Errorf("after the seat waited for tilda, her cur/ holds %v, want nothing", cur)
	}
	if n := len(started()); n != 1 {
		t.Errorf("tilda's program started %d times while the seat waited, want once: the next message was taken, to be cut off", n)
	}
	if inbox, _ := filepath.Glob(filepath.Join(tilda, "inbox", "*.md")); len(inbox) != 1 {
		t.Errorf("after the seat left, tilda's inbox holds %v, want the next message, waiting", inbox)
	}

	// Ctrl-C twice: tilda's program is ended, not left running; the hint
	// names the key pressed (it said Ctrl-D after a Ctrl-C: a bug).
	ask("Tilda, again?")
	for _, f := range started() {
		os.Remove(f)
	}
	const narrow = 60
	play(tm, narrow)
	pid := waitStarted(1)
	tm.keys("C-c")
	tm.waitFor("the seat to wait for tilda", func(s string) bool { return strings.Contains(s, "(leaving:") })
	if s := strings.Join(strings.Fields(tm.screen()), " "); !strings.Contains(s, "waiting for tilda to finish") || !strings.Contains(s, "Ctrl-C again stops now") {
		t.Errorf("after Ctrl-C the hint does not say it waits for tilda and name Ctrl-C:\n%s", tm.screen())
	}
	// What the seat says as it leaves is wrapped at the terminal's width
	// (joined, a line tmux wrapped is longer), and no prompt is drawn
	// after it: nothing is read any more.
	screen := tm.joinedScreen()
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i, l := range lines {
		if !strings.Contains(l, "(leaving:") {
			continue
		}
		for _, l := range lines[i:] {
			if len(l) > narrow {
				t.Errorf("a line the seat wrote as it left is longer than the terminal (%d columns): %q", narrow, l)
			}
			if strings.TrimSpace(l) == ">" {
				t.Errorf("the prompt is drawn after the seat said it is leaving:\n%s", screen)
			}
		}
		break
	}
	tm.keys("C-c")
	tm.waitFor("the seat to end", func(string) bool { return tm.ended() })
	if !proctest.Gone(pid, 0) {
		t.Errorf("tilda's program (pid %d) runs on after the seat left", pid)
	}
	if cur, _ := filepath.Glob(filepath.Join(tilda, "cur", "*.md")); len(cur) != 1 {
		t.Errorf("after the seat stopped tilda, her cur/ holds %v, want the message cut off, to be handled again", cur)
	}
}
