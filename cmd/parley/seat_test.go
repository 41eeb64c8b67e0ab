package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

func TestRollArgs(t *testing.T) {
	tests := []struct {
		args, expr, check, dc string
		bad                   bool
	}{
		{"1d20+5 --dc 12 Stealth", "1d20+5", "Stealth", "12", false},
		{"1d20 + 5 Sleight of Hand", "1d20+5", "Sleight of Hand", "", false},
		{"--dc=15 2d6", "2d6", "", "15", false},
		{"Perception 1d20", "", "Perception 1d20", "", false},
		{"", "", "", "", false},
		{"1d20 --dc", "", "", "", true},
	}
	for _, tt := range tests {
		expr, check, dc, err := rollArgs(tt.args)
		if (err != nil) != tt.bad {
			t.Errorf("rollArgs(%q) error = %v, want one: %v", tt.args, err, tt.bad)
		}
		if expr != tt.expr || check != tt.check || dc != tt.dc {
			t.Errorf("rollArgs(%q) = %q, %q, %q; want %q, %q, %q", tt.args, expr, check, dc, tt.expr, tt.check, tt.dc)
		}
	}
}

// FuzzSeatLine feeds a seat any line a person could type: it never
// panics, and the only error is the person's /quit.
func FuzzSeatLine(f *testing.F) {
	for _, s := range []string{
		"", "1", "The crypt", "/roll 1d20+5 --dc 12 Stealth", "/roll 1d20+", "/roll --dc x 1d4",
		"/say VETO this is mine", "/say", "/whisper tor-ashgrove psst", "/whisper", "/save", "/end because",
		"/away", "/back", "/status", "/sheet", "/journal", "/help", "/rol", "/", "//", "/quit",
		"/roll 99999999999d99999999999", "/say \x00\xff", "/whisper ../../etc hi",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n  - {name: mira, role: human, character: mira-quickfoot}\n"
	ws := newWorkspace(f, dir, cfg)
	camp, err := campaigns.New(dir, "the-hollow")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := camp.NewSheet("mira-quickfoot", ""); err != nil {
		f.Fatal(err)
	}
	if err := camp.WritePrefs("mira-quickfoot", "", "terse"); err != nil {
		f.Fatal(err)
	}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	s, err := openSeat(e, ws, "", "")
	if err != nil {
		f.Fatal(err)
	}
	s.dice = dice.Seeded(1)
	f.Fuzz(func(t *testing.T, line string) {
		if _, err := s.line(context.Background(), line); err != nil && !errors.Is(err, errQuit) {
			t.Errorf("line(%q) = %v", line, err)
		}
	})
}

func TestTellsRetry(t *testing.T) {
	tests := []struct {
		told, id string
		attempt  int
		want     bool
	}{
		{"", "m1", 1, true},    // the agent's first retry
		{"", "m1", 2, true},    // first seen at its second failure (beside a parley run)
		{"", "m1", 0, true},    // an older runner's agents.json, without the attempt
		{"m1", "m1", 2, false}, // told of this message already
		{"m1", "m2", 1, false}, // a first attempt failed again: it usually answers the next
		{"m1", "m2", 0, false}, // not known to be more
		{"m1", "m2", 2, true},  // failed twice: serious
		{"m2", "m2", 3, false}, // told at its second failure
		{"m2", "m3", 3, true},
	}
	for _, tt := range tests {
		if got := tellsRetry(tt.told, tt.id, tt.attempt); got != tt.want {
			t.Errorf("tellsRetry(%q, %q, %d) = %v, want %v", tt.told, tt.id, tt.attempt, got, tt.want)
		}
	}
}

// TestRetryNoticesAlike checks that a seat tells the same retries from
// its own runner's log as from agents.json, which a parley run beside it
// writes: the rule is tellsRetry's, the attempt comes with either.
func TestRetryNoticesAlike(t *testing.T) {
	type retry struct {
		id      string
		attempt int
	}
	retries := []retry{{"m1", 1}, {"m1", 2}, {"m2", 1}, {"m3", 1}, {"m3", 2}, {"m3", 3}, {"m4", 1}}
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n  - {name: mira, role: human, character: mira-quickfoot}\n  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [cat]}\n"
	fromLog, logOut := seatAt(t, cfg)
	h := toldBySeat{Handler: slog.DiscardHandler, retrying: fromLog.tellRetrying}
	for _, r := range retries {
		rec := slog.NewRecord(time.Now(), slog.LevelWarn, runner.LogRetrying, 0)
		rec.Add("agent", "tor", "id", r.id, "attempt", r.attempt, "retry_in", time.Second)
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}

	fromRuns, runsOut := seatAt(t, cfg)
	for _, r := range retries {
		data, err := json.Marshal(map[string]workspace.AgentRun{"tor": {State: workspace.StateRetrying, Message: r.id, Attempt: r.attempt, Since: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fromRuns.ws.AgentsPath(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		fromRuns.tellUnresponsive()
	}

	if got := strings.Count(logOut.String(), "slow to answer"); got != 2 {
		t.Errorf("told from the log %d times, want 2 (m1, the first; m3, failed twice):\n%s", got, logOut)
	}
	if got := strings.Count(logOut.String(), "failed 2 times"); got != 1 {
		t.Errorf("told of a second failure %d times, want 1 (m3):\n%s", got, logOut)
	}
	if diff := cmp.Diff(logOut.String(), runsOut.String()); diff != "" {
		t.Errorf("told from agents.json otherwise than from the log (-log +agents.json):\n%s", diff)
	}
}

// TestUnresponsiveNoticesAlike checks that a script's seat tells an
// agent unresponsive from its own runner's log record, as the runner
// marks it, in the words it uses for agents.json (which a parley run
// beside it writes, and which the runner writes a moment later): told
// from agents.json only, a notice came after the seat had read on.
func TestUnresponsiveNoticesAlike(t *testing.T) {
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n"
	note := "no answer to m1 from lead within 2s"
	fromLog, logOut := seatAt(t, cfg)
	h := fromLog.seatLogger().Handler()
	for range 2 { // told once
		rec := slog.NewRecord(time.Now(), slog.LevelWarn, runner.LogUnresponsive, 0)
		rec.Add("agent", "gm", "message", "m1", "policy", "timeouts[0]", "note", note)
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}

	fromRuns, runsOut := seatAt(t, cfg)
	data, err := json.Marshal(map[string]workspace.AgentRun{"gm": {State: workspace.StateUnresponsive, Message: "m1", Note: note, Since: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fromRuns.ws.AgentsPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromRuns.tellUnresponsive()

	// Late while its program is still at work: told the same.
	fromLate, lateOut := seatAt(t, cfg)
	data, err = json.Marshal(map[string]workspace.AgentRun{"gm": {State: workspace.StateWorking, Message: "m1", Late: "m1", Note: note, Since: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fromLate.ws.AgentsPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromLate.tellUnresponsive()

	want := "\n(gm: " + note + "; the table waits for it, `parley\nstatus` says more)\n" // wrapped as the seat's lines are
	if logOut.String() != want {
		t.Errorf("told from the log %q, want %q", logOut, want)
	}
	if diff := cmp.Diff(logOut.String(), runsOut.String()); diff != "" {
		t.Errorf("told from agents.json otherwise than from the log (-log +agents.json):\n%s", diff)
	}
	if diff := cmp.Diff(logOut.String(), lateOut.String()); diff != "" {
		t.Errorf("told of a late agent at work otherwise than from the log (-log +late):\n%s", diff)
	}
}

// seatAt opens the seat of agent you, speaking as lead, at a new
// workspace of config cfg with the campaign the-hollow; what it tells
// the person is written to the builder returned.
func seatAt(t *testing.T, cfg string) (*seat, *strings.Builder) {
	t.Helper()
	dir := t.TempDir()
	ws := newWorkspace(t, dir, cfg)
	if _, err := campaigns.New(dir, "the-hollow"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: io.Discard}
	s, err := openSeat(e, ws, "you", "lead")
	if err != nil {
		t.Fatal(err)
	}
	return s, &out
}

// TestLineSourceHeld: a line a script's seat read ahead and held (while
// the table waited for a reply) is the next one read, and is counted
// among the lines left when the session is over.
func TestLineSourceHeld(t *testing.T) {
	in := &lineSource{lines: make(chan string)}
	go in.read(strings.NewReader("I attack.\n/say hi\n\nlast\n"))
	ctx := context.Background()
	first, ok := in.next(ctx)
	if !ok || first != "I attack." {
		t.Fatalf("next = %q, %v; want the first line", first, ok)
	}
	in.hold(first)
	if again, ok := in.next(ctx); !ok || again != first {
		t.Fatalf("next after hold = %q, %v; want the line held, %q", again, ok, first)
	}
	in.hold(first)
	if got, want := in.rest(ctx, time.Minute), []string{"I attack.", "/say hi", "last"}; !slices.Equal(got, want) {
		t.Errorf("rest = %q, want %q (the held line first, blank lines aside)", got, want)
	}
}

// TestSeatInboxGone: git removes a directory it empties (`git stash pop`
// took the last file of mailboxes/you/inbox), and the seat said "(open
// .../mailboxes/you/inbox: no such file or directory)" at every look, ten
// times a second, until a message made it again. Now the seat makes it
// again, as the runner makes the mailboxes people remove, and says so
// once; an inbox that cannot be made (a file in its place) is said once
// too, not at every look.
func TestSeatInboxGone(t *testing.T) {
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nrouter: {settle: 1ms}\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n"
	s, out := seatAt(t, cfg)
	inbox := s.ws.Mailbox("you").Path(mailbox.Inbox, "")
	// looks has the seat look at the table until cond holds, then five
	// times more, and returns what it said meanwhile.
	looks := func(what string, cond func() bool) string {
		t.Helper()
		out.Reset()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 10s; the seat said:\n%s", what, out)
			}
			if err := s.show(); err != nil {
				t.Fatalf("show with the inbox gone: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
		for range 5 {
			if err := s.show(); err != nil {
				t.Fatalf("show: %v", err)
			}
		}
		return out.String()
	}

	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	said := looks("inbox made again", func() bool { _, err := os.Stat(inbox); return err == nil })
	if want := "(mailboxes/you/inbox had gone (a git checkout or stash removes a directory it empties): made again)\n"; said != want {
		t.Errorf("the seat said, as its inbox was made again:\n%s\nwant:\n%s", said, want)
	}

	if err := os.Remove(inbox); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	tries := 0
	said = looks("notice", func() bool { tries++; return tries > 20 })
	if n := strings.Count(said, "\n"); n != 1 || !strings.Contains(said, "mailboxes/you/inbox is a file, not a directory") {
		t.Errorf("the seat said, its inbox a file (%d lines, want 1 naming the file):\n%s", n, said)
	}
}

// TestSeatCameBack: a message the seat showed in this sitting, filed
// (or, a question, answered elsewhere), that `git stash` brought back
// into the inbox was filed again without a word, though the seat says
// so of one handled before it sat down. Now it says so, once.
func TestSeatCameBack(t *testing.T) {
	cfg := "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - gm\n  - {name: lead, role: team-lead}\n  - you\n"
	for _, tc := range []struct {
		name, id, msg string
	}{
		{"narrative", "20261129-105144.034866Z-gm-69a527", "---\nid: 20261129-105144.034866Z-gm-69a527\nfrom: gm\nto: you\ntype: NARRATIVE\nscene_number: \"001\"\nscene_slug: the-well\n---\nA bucket comes up black.\n"},
		{"question", "20261129-105145.034866Z-gm-69a528", "---\nid: 20261129-105145.034866Z-gm-69a528\nfrom: gm\nto: lead\ncc: [you]\ntype: ASK_PLAYER\nquestion: Open the cellar door?\nheader: Cellar\noptions:\n  - label: \"Yes\"\n    description: do it\n  - label: \"No\"\n    description: do not\n---\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, out := seatAt(t, cfg)
			box := s.ws.Mailbox("you")
			inbox, done := box.Path(mailbox.Inbox, mailbox.FileName(tc.id)), box.Path(mailbox.Done, mailbox.FileName(tc.id))
			if err := os.WriteFile(inbox, []byte(tc.msg), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.show(); err != nil {
				t.Fatal(err)
			}
			if len(s.waiting) > 0 {
				// Answered elsewhere (parley answer): filed in done/.
				if err := os.Rename(inbox, done); err != nil {
					t.Fatal(err)
				}
				if err := s.show(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(done); err != nil {
				t.Fatalf("the message is not handled: %v\nthe seat said:\n%s", err, out)
			}
			// git stash: the inbox's copy is back.
			if err := os.WriteFile(inbox, []byte(tc.msg), 0o644); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			for range 3 {
				if err := s.show(); err != nil {
					t.Fatal(err)
				}
			}
			want := "(" + tc.id + ", handled already (mailboxes/you/done/" + tc.id + ".md), came back into your inbox: filed there, not shown again)\n"
			if got := out.String(); got != want {
				t.Errorf("the seat said, as the copy came back:\n%s\nwant:\n%s", got, want)
			}
			if _, err := os.Stat(inbox); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the copy that came back is still in the inbox (%v)", err)
			}
		})
	}
}

// openaiTable is a seat's table whose gm is on driver: openai and whose
// player tor runs a command.
const openaiTable = "skills: [dnd-team]\ncampaign: the-hollow\nagents:\n  - {name: gm, role: gm, driver: openai, openai: {base_url: 'http://127.0.0.1:9/v1', model: m}}\n  - {name: lead, role: team-lead}\n  - you\n  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [cat]}\n"

// giveUp puts message id, from lead to agent, into agent's dead/ with
// the reason beside it, as the runner gives one up.
func giveUp(t *testing.T, s *seat, agent, id, reason string) {
	t.Helper()
	box := s.ws.Mailbox(agent)
	msg := "---\nid: " + id + "\nfrom: lead\nto: " + agent + "\ntype: SESSION_COMMAND\ncommand: start\n---\n"
	if err := os.WriteFile(box.Path(mailbox.Dead, mailbox.FileName(id)), []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(box.Path(mailbox.Dead, mailbox.FileName(id)+mailbox.ReasonSuffix), []byte(reason+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// roundsNotice is the notice gm's model sends the people when its
// max_tool_rounds ran out on message about (llm's tell), as sent.
func roundsNotice(id, about string) string {
	return "---\nid: " + id + "\nfrom: gm\nto: [you]\nreply_to: " + about + "\nnotice: " + llm.ToolRoundsNotice + "\n---\ngm stopped answering " + about + ": its model was still calling tools after 8 rounds (max_tool_rounds in parley.yaml). The message is in mailboxes/gm/dead/, with the transcript.\n"
}

// TestSeatMendAdvice: a message an agent on driver: openai gave up (its
// endpoint down, a line added by hand to its conversation.md) was told
// with "Mend gm's program (run: in parley.yaml)": that agent has no
// run:. The advice fits the driver, and what failed.
func TestSeatMendAdvice(t *testing.T) {
	const id, later = "20261129-105144.034866Z-lead-69a527", "20261129-105145.034866Z-gm-69a528"
	for _, tc := range []struct {
		name, agent, reason string
		setup               func(t *testing.T, s *seat)
		want                string
	}{
		{"endpoint down", "gm", "gave up after 1 attempt: model endpoint http://127.0.0.1:9/v1 unreachable: connection refused", nil,
			"Mend gm's model endpoint (its server, or base_url, model and key_env under openai: in parley.yaml), then `parley retry " + id + "`"},
		{"conversation edited", "gm", "gave up after 1 attempt: mailboxes/gm/conversation.md:3: expected a turn: ## user or ## assistant", func(t *testing.T, s *seat) {
			conv := "# conversation: gm\n\nNote to self: keep it spooky.\n"
			if err := os.WriteFile(filepath.Join(s.ws.Root, "mailboxes", "gm", llm.ConversationFile), []byte(conv), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "Mend gm's memory, mailboxes/gm/conversation.md, at line 3 (a line of your own goes inside a turn's fence), then `parley retry " + id + "`"},
		{"tool rounds", "gm", "gave up after 1 attempt: gm: still calling tools after max_tool_rounds rounds (8)", func(t *testing.T, s *seat) {
			if err := os.WriteFile(s.ws.Mailbox("gm").Path(mailbox.Sent, mailbox.FileName(later)), []byte(roundsNotice(later, id)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "gm's model was still calling tools when its rounds ran out: raise max_tool_rounds (openai: in parley.yaml) or mend its prompt (the transcript is beside the message in mailboxes/gm/dead), then `parley retry " + id + "`"},
		{"command", "tor", "gave up after 3 attempts: exit code 1: boom", nil,
			"Mend tor's program (run: in parley.yaml), then `parley retry " + id + "`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, out := seatAt(t, openaiTable)
			s.width = 10000 // one line: the advice is read whole
			if tc.setup != nil {
				tc.setup(t, s)
			}
			giveUp(t, s, tc.agent, id, tc.reason)
			s.tellGivenUp(tc.agent, id)
			if got := out.String(); !strings.Contains(got, tc.want) {
				t.Errorf("the seat said:\n%s\nwant it to hold:\n%s", got, tc.want)
			}
			if tc.agent == "gm" && strings.Contains(out.String(), "run:") {
				t.Errorf("the seat told of run: for an openai agent:\n%s", out)
			}
		})
	}
}

// TestSeatFoldsToolRounds: gm's model called tools past max_tool_rounds,
// and the seat told it three times: a raw log line (TestSeatLogger), the
// notice gm sends the people, and the message given up. The notice is
// folded into the give-up, which the seat tells once, with what to do;
// while gm still holds the message (in cur/, moved to dead/ a moment
// after the notice is sent), the notice waits for the next look.
func TestSeatFoldsToolRounds(t *testing.T) {
	const id, notice = "20261129-105144.034866Z-lead-69a527", "20261129-105145.034866Z-gm-69a528"
	s, out := seatAt(t, openaiTable)
	s.width = 10000
	gm, you := s.ws.Mailbox("gm"), s.ws.Mailbox("you")
	msg := "---\nid: " + id + "\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\n---\n"
	if err := os.WriteFile(gm.Path(mailbox.Cur, mailbox.FileName(id)), []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{gm.Path(mailbox.Sent, mailbox.FileName(notice)), you.Path(mailbox.Inbox, mailbox.FileName(notice))} {
		if err := os.WriteFile(path, []byte(roundsNotice(notice, id)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	look := func() {
		t.Helper()
		if err := s.show(); err != nil {
			t.Fatal(err)
		}
		s.tellTable()
	}
	look()
	if out.Len() > 0 {
		t.Errorf("the seat said, gm still handling the message:\n%s\nwant nothing yet", out)
	}
	if _, err := os.Stat(you.Path(mailbox.Inbox, mailbox.FileName(notice))); err != nil {
		t.Errorf("the notice left the inbox while gm held the message: %v", err)
	}

	if err := os.Remove(gm.Path(mailbox.Cur, mailbox.FileName(id))); err != nil {
		t.Fatal(err)
	}
	giveUp(t, s, "gm", id, "gave up after 1 attempt: gm: still calling tools after max_tool_rounds rounds (8)")
	look()
	look()
	said := out.String()
	if n := strings.Count(said, "\n("); n != 1 || !strings.Contains(said, "gm could not handle [SESSION_COMMAND] from lead "+id) || !strings.Contains(said, "raise max_tool_rounds") {
		t.Errorf("the seat said (%d notices, want 1: the give-up, with what to do):\n%s", n, said)
	}
	if strings.Contains(said, "stopped answering") {
		t.Errorf("the seat showed gm's notice besides the give-up:\n%s", said)
	}
	if you.HandledIn(notice) != mailbox.Done {
		t.Errorf("gm's notice is not filed in done/")
	}
}
