package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestPlayTerminal drives `parley play` in a real terminal, through tmux:
// the story shows as it arrives, wrapped to the terminal and without
// frontmatter; a line is edited (backspace) and recalled from history (up
// arrow); an answer goes to the game master; Ctrl-D leaves, ending the
// prompt's line, so the shell's next line does not land beside "> " (a
// bug). It skips when tmux is not installed (.ci/run installs it).
func TestPlayTerminal(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")

	tm := playInTerminal(t, dir, bin, ws, 60)

	story := "Rain needles the black water of the fen. The chapel leans out of the marsh like a ship run aground, its roof half gone, its door swollen shut."
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--body", story)
	tm.waitFor("the narrative", func(s string) bool { return strings.Contains(s, "door swollen shut.") })
	screen := tm.screen()
	for _, line := range strings.Split(screen, "\n") {
		if len(line) > 60 {
			t.Errorf("a line wider than the terminal: %q", line)
		}
		if strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "--- scene") || strings.HasPrefix(line, "type:") || strings.HasPrefix(line, "id:") {
			t.Errorf("raw frontmatter on screen: %q", line)
		}
	}
	if !strings.Contains(screen, "Rain needles the black water of the fen. The chapel") {
		t.Errorf("the narrative is not wrapped as words:\n%s", screen)
	}

	ask := "[ASK_PLAYER]\nto: lead\nquestion: How do you get in?\nheader: Approach\noptions:\n  - {label: The nave, description: over the stones}\n  - {label: The crypt, description: through the water}\n"
	askFile := filepath.Join(dir, "ask.md")
	if err := os.WriteFile(askFile, []byte(ask), 0o644); err != nil {
		t.Fatal(err)
	}
	parley("send", "--from", "gm", "--file", askFile)
	tm.waitFor("the question", func(s string) bool { return strings.Contains(s, "2) The crypt — through the water") })

	// A typo, then the line back from history, mended.
	tm.text("/statsu")
	tm.keys("Enter")
	tm.waitFor("the did-you-mean", func(s string) bool { return strings.Contains(s, "did you mean /status?") })
	tm.keys("Up")
	tm.waitFor("the line from history", func(s string) bool { return strings.Contains(lastPrompt(s), "/statsu") })
	tm.keys("BSpace", "BSpace")
	tm.text("us")
	tm.keys("Enter")
	tm.waitFor("the status", func(s string) bool { return strings.Contains(s, "waiting for you: 1") })

	// An answer typed with a slip, mended with backspace.
	tm.text("Thw")
	tm.keys("BSpace")
	tm.text("e crypt")
	tm.keys("Enter")
	waitForFile(t, filepath.Join(ws, "mailboxes", "gm", "inbox"), "answer: The crypt")

	// A question answered elsewhere waits no more.
	parley("send", "--from", "gm", "--file", askFile)
	tm.waitFor("the second question", func(s string) bool { return strings.Count(s, "2) The crypt") == 2 })
	inbox := filepath.Join(ws, "mailboxes", "you", "inbox")
	names, _ := filepath.Glob(filepath.Join(inbox, "*.md"))
	if len(names) != 1 {
		t.Fatalf("the seat's inbox holds %v, want the question shown", names)
	}
	id := strings.TrimSuffix(filepath.Base(names[0]), ".md")
	parley("answer", id, "1")
	tm.waitFor("the seat to notice, with the answer given", func(s string) bool {
		s = strings.ReplaceAll(s, "\n", "") // wrapped at the terminal's width
		return strings.Contains(s, id+", the question Approach, was answered elsewhere: \"The nave\")")
	})

	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
	screen = tm.screen()
	if !strings.Contains("\n"+screen, "\n[seat exited 0]") {
		t.Errorf("after Ctrl-D the next line does not start a line of its own:\n%s", screen)
	}
}

// TestPlayTerminalJournalAtEnd: a tryout's seat at a terminal left as
// soon as the gm's [SESSION_END] came (stop_on), though the team lead's
// checkpoint had just asked the person for their journal entry (/journal
// ENTRY): it could not be written there, and one written later missed
// the session's commit. The seat stays for it, and the entry is saved
// in git with the session (git: auto).
func TestPlayTerminalJournalAtEnd(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")
	appendConfig(t, ws, "git: auto\nstop_on: [SESSION_END]\n")
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=lead", "-c", "user.email=lead@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "start")
	git("config", "user.name", "lead")
	git("config", "user.email", "lead@example.com")

	tm := playInTerminal(t, dir, bin, ws, 100)
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--field", `scene_number="001"`, "--field", "scene_slug=the-gate", "--body", "Rain on the gate.")
	parley("send", "--from", "gm", "--type", "SESSION_END", "--field", "summary=A quiet night.", "--field", "state_saved=true", "--field", "next_hook=Dawn.", "--body", "bye")
	tm.waitFor("the seat to say the checkpoint waits", func(s string) bool {
		return strings.Contains(strings.ReplaceAll(s, "\n", " "), "waits for mira-quickfoot's journal entry")
	})
	if strings.Contains(tm.screen(), "[seat exited ") {
		t.Fatalf("the seat left with the entry unwritten:\n%s", tm.screen())
	}
	tm.text("/journal I found the bell rope cut.")
	tm.keys("Enter")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
	if screen := tm.screen(); !strings.Contains(screen, "[seat exited 0]") || !strings.Contains(screen, "(saved in git with the session: ") {
		t.Errorf("the seat did not save the entry with the session, and end:\n%s", screen)
	}
	if got := git("log", "-1", "--format=%s"); !strings.Contains(got, "session end: the-hollow, scene 001 the-gate, the last journal entries") {
		t.Errorf("the last commit is %q, want the session's end saving the last journal entries", got)
	}
	if got := git("status", "--porcelain", "campaigns"); got != "" {
		t.Errorf("the campaign holds what was not committed:\n%s", got)
	}
}

// TestPlayTerminalConfigBroken: a tryout saved parley.yaml with a typo
// (git: atuo) while the seat routed the table at a terminal: nothing was
// said there, the edit silently did not take effect, and only parley
// status said "NOT loaded". The seat says it once, with the line and
// the field, and once again when it is mended.
func TestPlayTerminalConfigBroken(t *testing.T) {
	t.Parallel()
	dir, bin, ws, _ := terminalSeatTable(t, "")
	appendConfig(t, ws, "git: off\n")
	tm := playInTerminal(t, dir, bin, ws, 100)
	path := filepath.Join(ws, "parley.yaml")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(good), "git: off", "git: atuo", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the seat to say parley.yaml does not load", func(s string) bool {
		return strings.Contains(s, `git: "atuo" is not auto or off)`) && strings.Contains(strings.ReplaceAll(s, "\n", " "), "is NOT loaded")
	})
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the seat to say it is mended", func(s string) bool { return strings.Contains(s, "parley.yaml is mended: loaded again") })
	if n := strings.Count(tm.screen(), "is NOT loaded"); n != 1 {
		t.Errorf("the seat says %d times that parley.yaml does not load, want once:\n%s", n, tm.screen())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalStartWarnings: a tryout's terminal seat said nothing
// of what a runner warns of as it starts (a character: that names no
// sheet, an AI player that does not accept [JOURNAL_CHECKPOINT]), where
// parley run, a piped seat and parley status said both. The terminal's
// seat says them once, at its start, as it says the runner's warnings.
func TestPlayTerminalStartWarnings(t *testing.T) {
	t.Parallel()
	dir, bin, ws, _ := terminalSeatTable(t, "  - {name: tor, role: player, character: mira-quickfot, driver: command, run: [cat], accepts: [GM_TO_PLAYER]}\n")
	tm := playInTerminal(t, dir, bin, ws, 100)
	screen := strings.Join(strings.Fields(tm.screen()), " ")
	for _, want := range []string{
		`(parley: WARN parley.yaml:8: agents[4].character: campaign the-hollow has no sheet of "mira-quickfot"`,
		"(parley: WARN parley.yaml:8: agents[4].accepts: tor plays mira-quickfot and does not accept [JOURNAL_CHECKPOINT]",
	} {
		if n := strings.Count(screen, want); n != 1 {
			t.Errorf("the seat says %q %d times, want once:\n%s", want, n, tm.screen())
		}
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalRetrying: a tryout waited at the seat with no sign
// while the runner retried an AI player's program. At a terminal too the
// seat says once, in its own words, that the agent is slow to answer,
// and nothing more while it is tried again, until it answers.
func TestPlayTerminalRetrying(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [sh, tor.sh], retries: 2}\n")
	// A player whose model is down twice, then answers; it counts in its
	// TMPDIR, where a confined player may write.
	tor := "cat >/dev/null\nn=$(cat \"$TMPDIR/tries\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$TMPDIR/tries\"\n[ \"$n\" -ge 2 ] || exit 1\nprintf '[PLAYER_TO_GM]\\ntype: REACTION\\ncharacter: tor-ashgrove\\n\\nTor raises his shield.\\n'\n"
	if err := os.WriteFile(filepath.Join(ws, "tor.sh"), []byte(tor), 0o644); err != nil {
		t.Fatal(err)
	}

	tm := playInTerminal(t, dir, bin, ws, 100)

	promptTor(t, dir, parley)
	tm.waitFor("the retry told", func(s string) bool { return strings.Contains(s, "is slow to answer") })
	waitForFile(t, filepath.Join(ws, "mailboxes", "gm", "inbox"), "Tor raises his shield.")
	screen := tm.screen()
	if !strings.Contains(screen, "(tor-ashgrove's agent, tor, is slow to answer: its program failed on [GM_TO_PLAYER] from gm") {
		t.Errorf("the retry is not told in the seat's words:\n%s", screen)
	}
	if n := strings.Count(screen, "slow to answer"); n != 1 {
		t.Errorf("the retry is told %d times, want once:\n%s", n, screen)
	}
	if strings.Contains(screen, "trying again") || strings.Contains(screen, "level=") {
		t.Errorf("a raw log line on screen:\n%s", screen)
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalRunnerStops: a tryout's seat beside a `parley run`
// waited for ever once that runner stopped (kill -9): what was sent
// stayed in an outbox, and the seat said nothing. At a terminal too, the
// seat says once that the runner stopped, and routes the table itself.
func TestPlayTerminalRunnerStops(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")
	run := exec.Command(bin, "-C", ws, "run")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			run.Process.Kill()
			run.Wait()
		}
	})
	for end := time.Now().Add(20 * time.Second); workspace.ReadRunnerInfo(ws) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("parley run did not start within 20s")
		}
	}

	tm := playInTerminal(t, dir, bin, ws, 100)
	if screen := tm.joinedScreen(); !strings.Contains(screen, "a runner routes this table already") {
		t.Fatalf("the seat does not say a runner routes the table:\n%s", screen)
	}
	run.Process.Kill()
	run.Wait()
	killed = true
	tm.waitFor("the seat to take over", func(s string) bool { return strings.Contains(s, "stopped: the seat routes it now") })
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--body", "The bell tolls once.")
	tm.waitFor("the narrative, routed by the seat", func(s string) bool { return strings.Contains(s, "The bell tolls once.") })
	if n := strings.Count(tm.joinedScreen(), "the seat routes it now"); n != 1 {
		t.Errorf("the runner's stop is told %d times, want once:\n%s", n, tm.joinedScreen())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalHandback: a seat at a terminal routing its table kept
// it: a `parley run` started then was refused, and routing went back to
// a `parley run` only when the person left the seat. The seat now hands
// the table to the run that asks, says so once, shows what the run
// routes, and routes the table again when that run stops.
func TestPlayTerminalHandback(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")
	tm := playInTerminal(t, dir, bin, ws, 100)
	seat := waitSeatRoutes(t, ws)
	run := exec.Command(bin, "-C", ws, "run")
	var runErr syncBuffer
	run.Stderr = &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			run.Process.Kill()
			run.Wait()
		}
	})
	tm.waitFor("the seat to hand the table over", func(s string) bool { return strings.Contains(s, "routes this table now: the seat plays") })
	if got, want := seat.RunnerPID(), run.Process.Pid; got != want {
		t.Fatalf("after the hand-over, pid %d holds the workspace, want the run's, %d", got, want)
	}
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--body", "The bell tolls once.")
	tm.waitFor("the narrative, routed by the run", func(s string) bool { return strings.Contains(s, "The bell tolls once.") })
	run.Process.Kill()
	run.Wait()
	killed = true
	tm.waitFor("the seat to take over", func(s string) bool { return strings.Contains(s, "stopped: the seat routes it now") })
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--body", "The bell tolls twice.")
	tm.waitFor("the narrative, routed by the seat", func(s string) bool { return strings.Contains(s, "The bell tolls twice.") })
	if n := strings.Count(tm.joinedScreen(), "routes this table now"); n != 1 {
		t.Errorf("the hand-over is told %d times, want once:\n%s", n, tm.joinedScreen())
	}
	if !strings.Contains(runErr.String(), "asking it to hand the table over") {
		t.Errorf("parley run does not say it asks the seat for the table:\n%s", runErr.String())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// waitSeatRoutes waits until a seat's runner routes the workspace ws,
// and returns it.
func waitSeatRoutes(t *testing.T, ws string) *workspace.Workspace {
	t.Helper()
	seat := &workspace.Workspace{Root: ws}
	for end := time.Now().Add(20 * time.Second); !seat.SeatHolds(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the seat does not route its table within 20s")
		}
	}
	return seat
}

// slowTor writes tor.sh into ws: a player whose model takes its time. It
// says it was called (calls.md in its TMPDIR), and answers once a file
// named go is there.
func slowTor(t *testing.T, ws string) {
	t.Helper()
	tor := "echo call >> \"$TMPDIR/calls.md\"\ncat >/dev/null\nwhile [ ! -e \"$TMPDIR/go\" ]; do sleep 0.05; done\nprintf '[PLAYER_TO_GM]\\ntype: REACTION\\ncharacter: tor-ashgrove\\n\\nTor raises his shield.\\n'\n"
	if err := os.WriteFile(filepath.Join(ws, "tor.sh"), []byte(tor), 0o644); err != nil {
		t.Fatal(err)
	}
}

// handbackWhileBusy seats the person at a terminal at a table where tor,
// an AI player whose model takes its time (it answers once a file named
// go is in tmp, its TMPDIR), is at work on a prompt, and starts a parley
// run that asks the seat for the table. It returns the terminal, the
// workspace, tmp and a parley run in the workspace.
func handbackWhileBusy(t *testing.T) (tm *tmuxTerm, ws, tmp string, parley func(args ...string) string) {
	t.Helper()
	dir, bin, ws, parley := terminalSeatTable(t, "  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [sh, tor.sh]}\n")
	slowTor(t, ws)
	tm = playInTerminal(t, dir, bin, ws, 120)
	promptTor(t, dir, parley)
	tmp = filepath.Join(ws, "campaigns", "the-hollow", "tmp", "tor")
	waitForFile(t, tmp, "call") // at work on the prompt
	run := exec.Command(bin, "-C", ws, "run")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	return tm, ws, tmp, parley
}

// TestPlayTerminalHandbackBusy: a table handed over while an AI player's
// program is at work: the seat says what it waits for (it said nothing
// for up to 20s, the person's lines unanswered), the program finishes its
// message, and its answer is sent once, the model not asked again.
func TestPlayTerminalHandbackBusy(t *testing.T) {
	t.Parallel()
	tm, ws, tmp, parley := handbackWhileBusy(t)
	tm.waitFor("the seat to say what it waits for", func(s string) bool {
		return strings.Contains(strings.Join(strings.Fields(s), " "), "asks for this table: the seat hands it over once tor finishes the message it is handling")
	})
	if err := os.WriteFile(filepath.Join(tmp, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("the hand-over", func(s string) bool { return strings.Contains(s, "routes this table now: the seat plays") })
	waitForFile(t, filepath.Join(ws, "mailboxes", "gm", "inbox"), "Tor raises his shield.")
	// The prompt was handled once (the run's team lead then refreshes
	// tor's context: a message of its own).
	if log := parley("log"); len(regexp.MustCompile(`handled +tor +GM_TO_PLAYER`).FindAllString(log, -1)) != 1 {
		t.Errorf("tor's prompt is not handled once (finished by the seat, not handled again by the run):\n%s", log)
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalHandbackLeave: Ctrl-D twice while the seat waits to
// hand its table over (a program at work) leaves at once, as it does
// when leaving: the wait kept the keyboard for up to 20s.
func TestPlayTerminalHandbackLeave(t *testing.T) {
	t.Parallel()
	tm, _, _, _ := handbackWhileBusy(t)
	tm.waitFor("the seat to say what it waits for", func(s string) bool { return strings.Contains(s, "asks for this table") })
	start := time.Now()
	tm.keys("C-d")
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the seat left %v after Ctrl-D twice, want at once (not after its 20s wait)", d)
	}
}

// TestPlayTerminalHandbackLeaveTogether: Ctrl-D twice, the two keys read
// in one go (pressed quickly on a busy machine; one send-keys here): the
// terminal's line editor kept the second behind the first, unread, and
// the seat waited its 20s (CI failed on it, the keys sent apart landing
// together under load).
func TestPlayTerminalHandbackLeaveTogether(t *testing.T) {
	t.Parallel()
	tm, _, _, _ := handbackWhileBusy(t)
	tm.waitFor("the seat to say what it waits for", func(s string) bool { return strings.Contains(s, "asks for this table") })
	start := time.Now()
	tm.keys("C-d", "C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the seat left %v after Ctrl-D twice, want at once (not after its 20s wait)", d)
	}
}

// TestPlayTerminalTwoSeatsHandback: two seats, A routing the table, B
// beside it; a parley run takes the table from A, then stops. B named A
// as the runner that stopped (A still played), and never said the run
// had the table. It names the runner that routes the table as it
// changes.
func TestPlayTerminalTwoSeatsHandback(t *testing.T) {
	t.Parallel()
	dir, bin, ws, _ := terminalSeatTable(t, "")
	a := playInTerminal(t, dir, bin, ws, 120)
	seat := waitSeatRoutes(t, ws)
	seatA := seat.RunnerPID()
	b := playInTerminal(t, t.TempDir(), bin, ws, 120)
	b.waitFor("seat B beside A", func(s string) bool { return strings.Contains(s, "a runner routes this table already") })
	run := exec.Command(bin, "-C", ws, "run")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	a.waitFor("seat A to hand the table over", func(s string) bool { return strings.Contains(s, "routes this table now: the seat plays") })
	runPID := strconv.Itoa(run.Process.Pid)
	b.waitFor("seat B to name the run", func(s string) bool { return strings.Contains(s, "(pid "+runPID+" routes this table now)") })
	run.Process.Kill()
	run.Wait()
	stoppedRun := "(the runner that routed this table (pid " + runPID + ") stopped"
	tookOver := func(s string) bool { return strings.Contains(s, "stopped: the seat routes it now") }
	for end := time.Now().Add(20 * time.Second); !tookOver(a.joinedScreen()) && !tookOver(b.joinedScreen()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no seat took the table over within 20s:\nA:\n%s\nB:\n%s", a.joinedScreen(), b.joinedScreen())
		}
	}
	for name, tm := range map[string]*tmuxTerm{"A": a, "B": b} {
		screen := strings.Join(strings.Fields(tm.joinedScreen()), " ")
		if tookOver(screen) && !strings.Contains(screen, stoppedRun) {
			t.Errorf("seat %s took over naming another runner than the run (pid %s; seat A is %d):\n%s", name, runPID, seatA, tm.joinedScreen())
		}
	}
}

// TestPlayTerminalFiledElsewhere: two seats of one person (two
// terminals, or a terminal and the web Seat page): the one that showed a
// narrative first filed it, and the other never showed it, the story lost
// there. A seat shows what another filed before it showed it; a question
// answered there, as answered.
func TestPlayTerminalFiledElsewhere(t *testing.T) {
	t.Parallel()
	dir, bin, ws, _ := terminalSeatTable(t, "")
	tm := playInTerminal(t, dir, bin, ws, 100)
	// Filed by the other seat before this one looked: in done/, never in
	// the inbox here.
	file := func(id, text string) {
		path := filepath.Join(ws, "mailboxes", "you", "done", id+".md")
		if err := os.WriteFile(path, []byte("---\nid: "+id+"\nfrom: gm\nto: you\n---\n"+text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	file(mailbox.IDAt("gm", now), "[NARRATIVE]\nscene_number: \"001\"\nscene_slug: the-gate\n\nThe bell tolls in the other room.\n")
	tm.waitFor("the narrative filed by the other seat", func(s string) bool { return strings.Contains(s, "The bell tolls in the other room.") })
	ask := mailbox.IDAt("gm", now.Add(time.Millisecond))
	file(ask, "[ASK_PLAYER]\nheader: Door\nquestion: Which door?\noptions: [left, right]\n")
	tm.waitFor("the question answered at the other seat", func(s string) bool { return strings.Contains(s, ask+", the question Door, was answered elsewhere") })
	if strings.Contains(tm.joinedScreen(), "Which door?") {
		t.Errorf("the question answered elsewhere is asked here:\n%s", tm.joinedScreen())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalSaidElsewhere: a terminal seat and the web Seat page
// open for one person (tryout F, 8): a /say sent from the web never
// showed in the terminal, where the game master's answer to it then
// came out of nowhere. What the person's character said at another seat
// shows here, once, in its place; what this seat said is not shown again.
func TestPlayTerminalSaidElsewhere(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")
	tm := playInTerminal(t, dir, bin, ws, 100)
	tm.text("/say Mira nods to the guard.")
	tm.keys("Enter")
	tm.waitFor("the seat's own say", func(s string) bool { return strings.Contains(s, "(mira-quickfoot, action: sent to the game master)") })
	// As the web Seat page sends it.
	parley("send", "--from", "mira", "--type", "PLAYER_TO_GM", "--field", "type=ACTION", "--field", "character=mira-quickfoot", "--body", "Mira draws her dagger.")
	tm.waitFor("the say from another seat", func(s string) bool { return strings.Contains(s, "Mira draws her dagger.") })
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--field", `scene_number="001"`, "--field", "scene_slug=the-gate", "--body", "The guard steps back.")
	tm.waitFor("the gm's answer", func(s string) bool { return strings.Contains(s, "The guard steps back.") })
	screen := strings.Join(strings.Fields(tm.screen()), " ")
	if n := strings.Count(screen, "sent from another seat"); n != 1 || !strings.Contains(screen, "(mira-quickfoot, action, sent from another seat to the game master:) Mira draws her dagger.") {
		t.Errorf("the say from another seat is shown %d times, want once as said there:\n%s", n, tm.screen())
	}
	if strings.Index(screen, "Mira draws her dagger.") > strings.Index(screen, "The guard steps back.") {
		t.Errorf("the say from another seat is shown after the answer to it:\n%s", tm.screen())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalAwaiting: a person at the terminal rolled for the game
// master, whom nobody played, and the seat said nothing for the five
// minutes the table waited (timeouts:), as a script's seat once did. It
// says, once, whose answer the table waits for, until when, and how a
// person answers for an agent no program plays.
func TestPlayTerminalAwaiting(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "")
	appendConfig(t, ws, "timeouts:\n  - match: {type: DICE_RESULT}\n    after: 5m\n")

	tm := playInTerminal(t, dir, bin, ws, 100)

	tm.text("/roll 1d20+3")
	tm.keys("Enter")
	tm.waitFor("the wait told", func(s string) bool { return strings.Contains(s, "`parley reply`)") })
	screen := strings.Join(strings.Fields(tm.screen()), " ") // the seat wraps its lines
	if !regexp.MustCompile("\\(the table waits until \\d\\d:\\d\\d:\\d\\d for gm's answer to \\[DICE_RESULT\\] \\S+ from lead \\(timeouts: after 5m0s\\); no program plays gm: a person answers for it with `parley inbox gm` and `parley reply`\\)").MatchString(screen) {
		t.Errorf("the wait is not told as it should be:\n%s", screen)
	}
	parley("send", "--from", "gm", "--type", "NARRATIVE", "--body", "The lock gives with a click.")
	tm.waitFor("the gm's answer", func(s string) bool { return strings.Contains(s, "The lock gives with a click.") })
	if n := strings.Count(tm.screen(), "the table waits until"); n != 1 {
		t.Errorf("the wait is told %d times, want once:\n%s", n, tm.screen())
	}
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// TestPlayTerminalLate: an AI player whose program is still at work past
// its timeouts: rule stays working (parley status says how long), and the
// terminal seat, which reads agents.json, said nothing until the program
// ended; a script's seat, told by the runner's log, said it at once. Both
// say it as the runner marks it.
func TestPlayTerminalLate(t *testing.T) {
	t.Parallel()
	dir, bin, ws, parley := terminalSeatTable(t, "  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [sh, tor.sh]}\n")
	appendConfig(t, ws, "timeouts:\n  - match: {type: GM_TO_PLAYER, to: [tor]}\n    after: 1s\n")
	slowTor(t, ws)
	tm := playInTerminal(t, dir, bin, ws, 100)
	promptTor(t, dir, parley)
	tm.waitFor("the lateness told", func(s string) bool { return strings.Contains(s, "the table waits for it") })
	if screen := strings.Join(strings.Fields(tm.screen()), " "); !strings.Contains(screen, "(tor: no answer to ") || !strings.Contains(screen, " from gm within 1s; the table waits for it, `parley status` says more)") {
		t.Errorf("the lateness is not told as it should be:\n%s", tm.screen())
	}
	if out := parley("status"); !regexp.MustCompile(`(?m)^tor +working `).MatchString(out) {
		t.Errorf("tor, late and at work, is not shown working:\n%s", out)
	}
	tmp := filepath.Join(ws, "campaigns", "the-hollow", "tmp", "tor")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(ws, "mailboxes", "gm", "inbox"), "Tor raises his shield.")
	tm.keys("C-d")
	tm.waitFor("the seat to end", func(s string) bool { return strings.Contains(s, "[seat exited ") })
}

// promptTor has the gm ask tor-ashgrove (the agent tor) for a quick
// reaction: the gate slams shut.
func promptTor(t *testing.T, dir string, parley func(args ...string) string) {
	t.Helper()
	prompt := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(prompt, []byte("[GM_TO_PLAYER]\nto: tor-ashgrove\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: the-gate\n\nThe gate slams shut.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parley("send", "--from", "gm", "--file", prompt)
}

// terminalSeatTable skips a test without tmux (terminalParley), else
// lays out the seat's table (newSeatTable, with the agents more) in a new
// temporary directory, and returns it, the binary, the workspace and a
// parley run in it.
func terminalSeatTable(t *testing.T, more string) (dir, bin, ws string, parley func(args ...string) string) {
	t.Helper()
	dir, bin = terminalParley(t)
	ws = filepath.Join(dir, "table")
	parley = parleyIn(t, bin, ws)
	newSeatTable(t, parley, ws, more)
	return dir, bin, ws, parley
}

// appendConfig adds text (top-level keys: timeouts:, routes:) to the
// parley.yaml of ws.
func appendConfig(t *testing.T, ws, text string) {
	t.Helper()
	path := filepath.Join(ws, "parley.yaml")
	cfg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(cfg, text...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// playInTerminal starts the parley at bin playing the seat of ws in a
// tmux terminal width columns wide, under a shell that says when the
// seat ended ("[seat exited N]") and waits, and returns the terminal once
// the seat has started.
func playInTerminal(t *testing.T, dir, bin, ws string, width int) *tmuxTerm {
	t.Helper()
	tm := &tmuxTerm{t: t, sock: filepath.Join(dir, "tmux.sock")}
	tm.run("new-session", "-d", "-s", "play", "-x", strconv.Itoa(width), "-y", "40", "-c", ws, "--", "sh", "-c", `"$0" play; echo "[seat exited $?]"; read x`, bin)
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	tm.waitFor("the seat to start", func(s string) bool { return strings.Contains(s, "Ctrl-D leaves") })
	return tm
}

// lastPrompt returns the last line of a screen that holds the prompt.
func lastPrompt(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "> ") {
			return lines[i]
		}
	}
	return ""
}

// waitForFile waits until a file in dir holds text.
func waitForFile(t *testing.T, dir, text string) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for time.Now().Before(end) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), text) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no file in %s holds %q within 20s", dir, text)
}

// tmuxTerm drives a program in a detached tmux terminal.
type tmuxTerm struct {
	t    *testing.T
	sock string
}

func (tm *tmuxTerm) run(args ...string) {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", tm.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "play"}, keys...)...)
}

func (tm *tmuxTerm) text(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "play", "-l", "--", s)
}

func (tm *tmuxTerm) screen() string {
	out, _ := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-t", "play").Output()
	return string(out)
}

// joinedScreen is the screen with the lines tmux wrapped at its width
// joined again: as the program wrote them.
func (tm *tmuxTerm) joinedScreen() string {
	out, _ := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-J", "-t", "play").Output()
	return string(out)
}

func (tm *tmuxTerm) ended() bool {
	return exec.Command("tmux", "-S", tm.sock, "has-session", "-t", "play").Run() != nil
}

// waitFor polls the screen until cond holds, or fails after 20 seconds
// showing it.
func (tm *tmuxTerm) waitFor(what string, cond func(screen string) bool) {
	tm.t.Helper()
	end := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen()
		if cond(s) {
			return
		}
		if time.Now().After(end) {
			tm.t.Fatalf("waiting for %s: not within 20s; the screen:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newSeatTable lays out at ws the table the seat's tests sit at: a gm,
// the team lead, you, and mira, whose character the person plays, with
// more agents (lines of the YAML list) besides, and a campaign whose
// preferences name Mira as the person's character.
func newSeatTable(t *testing.T, parley func(args ...string) string, ws, more string) {
	t.Helper()
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n  - you\n" +
		"  - {name: mira, role: human, character: mira-quickfoot}\n" + more +
		"routes:\n  - match: {type: [ASK_PLAYER, RELAY_TO_HUMAN, SESSION_END, NARRATIVE]}\n    cc: [you]\n"
	if err := os.WriteFile(filepath.Join(ws, "parley.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	parley("init")
	parley("campaign", "new", "the-hollow")
	parley("character", "new", "mira-quickfoot")
	prefs := "## Narrative Style\n\n**dialogue_format**: cinematic\n\n## Player Character\n\n**name**: Mira Quickfoot\n**file**: party/mira-quickfoot.md\n"
	if err := os.WriteFile(filepath.Join(ws, "campaigns", "the-hollow", "preferences.md"), []byte(prefs), 0o644); err != nil {
		t.Fatal(err)
	}
}

// terminalParley skips a test when tmux is not installed, else returns
// parley (parleyProgram): a new temporary directory and the binary.
func terminalParley(t *testing.T) (dir, bin string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skipf("tmux is not installed (.ci/run installs it): %v", err)
	}
	return t.TempDir(), parleyProgram(t)
}

// parleyIn returns a function that runs the parley at bin in the
// workspace ws and returns what it printed, failing the test if it fails.
func parleyIn(t *testing.T, bin, ws string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"-C", ws}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("parley %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
