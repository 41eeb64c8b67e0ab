package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// answerShutdown is an agent program that answers a shutdown_request with
// approve: $1 (and reason: $2), and anything else with "handled".
const answerShutdown = `
msg=$(cat)
case "$msg" in
*"type: shutdown_request"*)
  rid=$(printf '%s\n' "$msg" | sed -n 's/^request_id: //p')
  printf -- '---\nto: lead\ntype: shutdown_response\nrequest_id: %s\napprove: %s\nreason: %s\n---\nanswer\n' "$rid" "$1" "$2" ;;
*) echo handled ;;
esac
`

// TestShutdownHandshake: an agent that approves a shutdown request is
// stopped at once, and what is sent to it afterwards waits in its inbox;
// one that refuses goes on working, and its reason is noted.
func TestShutdownHandshake(t *testing.T) {
	ws := newWorkspace(t, "lead")
	script(t, ws, "answer.sh", answerShutdown)
	ws = reconfigure(t, ws, `agents:
  - {name: lead, role: team-lead}
  - {name: yes, driver: command, run: [./answer.sh, "true", done]}
  - {name: no, driver: command, run: [./answer.sh, "false", "busy with the map"]}
`)
	reqYes := send(t, ws, "lead", "yes", "Please shut down.", "type", workspace.ShutdownRequest, "request_id", "r-yes")
	send(t, ws, "lead", "no", "Please shut down.", "type", workspace.ShutdownRequest, "request_id", "r-no")
	later := send(t, ws, "lead", "yes", "one more thing")
	send(t, ws, "lead", "no", "one more thing")

	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, ws, "yes", mailbox.Inbox); len(got) != 1 || got[0] != mailbox.FileName(later) {
		t.Errorf("yes's inbox = %v, want the message sent after it shut down, waiting", got)
	}
	if got := names(t, ws, "yes", mailbox.Done); len(got) != 1 || got[0] != mailbox.FileName(reqYes) {
		t.Errorf("yes's done/ = %v, want only the shutdown request", got)
	}
	if got := len(names(t, ws, "no", mailbox.Done)); got != 2 {
		t.Errorf("no handled %d messages, want both: it refused to stop", got)
	}
	var answers []string
	for _, n := range names(t, ws, "lead", mailbox.Inbox) {
		m := readMessage(t, ws.Mailbox("lead").Path(mailbox.Inbox, n))
		from, _ := m.Header().Get("from")
		typ, _ := m.Header().Get("type")
		rid, _ := m.Header().Get("request_id")
		answers = append(answers, from+" "+typ+" "+rid)
	}
	slices.Sort(answers) // yes and no answer in parallel
	want := []string{"no  ", "no shutdown_response r-no", "yes shutdown_response r-yes"}
	if d := cmp.Diff(want, answers); d != "" {
		t.Errorf("lead's inbox (-want +got):\n%s", d)
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if !runs["yes"].Stopped || runs["yes"].State != workspace.StateStopped {
		t.Errorf("yes = %+v, want stopped", runs["yes"])
	}
	if runs["no"].Stopped || runs["no"].Note != "refused to shut down: busy with the map" {
		t.Errorf("no = %+v, want running, with the refusal noted", runs["no"])
	}
	var notes, stopped []string
	for _, e := range journalEntries(t, ws) {
		if e.Note != "" && e.Outcome == workspace.Delivered {
			notes = append(notes, e.Note)
		}
		if e.Outcome == workspace.Stopped {
			stopped = append(stopped, e.Agent)
		}
	}
	slices.Sort(notes)
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "no refused to shut down: busy with the map") || !strings.HasPrefix(notes[1], "yes approved its shutdown") {
		t.Errorf("journal notes = %q", notes)
	}
	if !slices.Equal(stopped, []string{"yes"}) {
		t.Errorf("journal: stopped %q, want [yes], once", stopped)
	}
}

// TestShutdownAheadOfBacklog: a shutdown request delivered to an agent
// busy with a backlog is handed to it next, before the messages of other
// senders that came before it: `parley stop` on a worker with twenty
// steps queued let it work through all twenty first. Its own sender's
// earlier messages still come first (order holds per sender).
func TestShutdownAheadOfBacklog(t *testing.T) {
	ws := newWorkspace(t, "lead")
	script(t, ws, "answer.sh", `
msg=$(cat)
case "$msg" in
*"gate"*) while [ ! -e go ]; do sleep 0.05; done; echo handled ;;
*"type: shutdown_request"*)
  rid=$(printf '%s\n' "$msg" | sed -n 's/^request_id: //p')
  printf -- '---\nto: lead\ntype: shutdown_response\nrequest_id: %s\napprove: true\n---\nstopping\n' "$rid" ;;
*) echo handled ;;
esac
`)
	ws = reconfigure(t, ws, `agents:
  - {name: lead, role: team-lead}
  - boss
  - {name: yes, driver: command, run: [./answer.sh]}
`)
	watching(t, ws, Options{})
	gate := send(t, ws, "boss", "yes", "gate")
	waitFor(t, 10*time.Second, func() bool { return slices.Contains(names(t, ws, "yes", mailbox.Cur), mailbox.FileName(gate)) })
	var backlog []string
	for range 5 {
		backlog = append(backlog, send(t, ws, "boss", "yes", "a step of work"))
	}
	first := send(t, ws, "lead", "yes", "before you stop, this")
	req := send(t, ws, "lead", "yes", "Please shut down.", "type", workspace.ShutdownRequest, "request_id", "r-1")
	waitFor(t, 10*time.Second, func() bool { return len(names(t, ws, "yes", mailbox.Inbox)) == 7 })
	if err := os.WriteFile(filepath.Join(ws.Root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool {
		runs, err := ws.AgentRuns()
		return err == nil && runs["yes"].Stopped
	})
	want := []string{gate, first, req}
	slices.Sort(want)
	var done []string
	for _, id := range want {
		done = append(done, mailbox.FileName(id))
	}
	if got := names(t, ws, "yes", mailbox.Done); !slices.Equal(got, done) {
		t.Errorf("yes's done/ = %v, want %v: the gate, the lead's message before its request, the request", got, done)
	}
	var waiting []string
	for _, id := range backlog {
		waiting = append(waiting, mailbox.FileName(id))
	}
	if got := names(t, ws, "yes", mailbox.Inbox); !slices.Equal(got, waiting) {
		t.Errorf("yes's inbox = %v, want boss's backlog waiting: %v", got, waiting)
	}
}

// TestStopOn: a message of a type listed in stop_on ends a run that would
// otherwise go on watching, once the agents have handled it: the scribe's
// summary, written on the closing message, is delivered.
func TestStopOn(t *testing.T) {
	ws := newWorkspace(t, "gm")
	script(t, ws, "scribe.sh", "cat >/dev/null; echo 'Summary: the lantern is lit.'\n")
	ws = reconfigure(t, ws, "stop_on: [SESSION_END]\nagents:\n  - gm\n  - aria\n  - {name: scribe, driver: command, run: [./scribe.sh]}\n")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan Stats, 1)
	go func() {
		stats, err := r.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- stats
	}()
	send(t, ws, "gm", "*", "Good night, all.", "type", "[SESSION_END]")
	select {
	case stats := <-done:
		if !strings.Contains(stats.Ended, "SESSION_END from gm ends the session") {
			t.Errorf("Ended = %q", stats.Ended)
		}
		if stats.Routed != 2 {
			t.Errorf("routed %d, want the closing message and the summary", stats.Routed)
		}
	case <-ctx.Done():
		t.Fatal("the run went on after [SESSION_END]")
	}
	if d := cmp.Diff([]string{"Summary: the lantern is lit."}, bodies(t, ws, "gm", mailbox.Inbox)); d != "" {
		t.Errorf("gm's inbox (-want +got):\n%s", d)
	}
}

// TestTimeoutNudge: an agent that does not answer in time is nudged with
// the configured message, then marked unresponsive; one that answers the
// nudge is not. The deadline is 2s, not less: quick's program must start
// and answer within it on a loaded CI machine, under -race.
func TestTimeoutNudge(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "lead")
	// late answers only the nudge; quick answers at once.
	script(t, ws, "late.sh", `grep -q 'type: NUDGE' && echo "sorry, here"; exit 0`)
	script(t, ws, "quick.sh", "cat >/dev/null; echo here\n")
	ws = reconfigure(t, ws, `agents:
  - lead
  - silent
  - {name: late, driver: command, run: [./late.sh]}
  - {name: quick, driver: command, run: [./quick.sh]}
timeouts:
  - match: {type: ASK}
    after: 2s
    nudge:
      type: NUDGE
      fields: {campaign: the-rot-beneath}
      body: Are you still with us?
`)
	ask := map[string]string{}
	for _, to := range []string{"silent", "late", "quick"} {
		ask[to] = send(t, ws, "lead", to, "Where are you?", "type", "ASK")
	}
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if s := runs["silent"]; s.State != workspace.StateUnresponsive || !strings.Contains(s.Note, "no answer to "+ask["silent"]+" from lead within 2s, nor after a nudge") {
		t.Errorf("silent = %+v, want unresponsive with a note", s)
	}
	for _, a := range []string{"late", "quick"} {
		if s := runs[a]; s.State == workspace.StateUnresponsive || s.Note != "" {
			t.Errorf("%s = %+v, want it responsive", a, s)
		}
	}
	// silent holds the question and the nudge, from lead, about it.
	in := names(t, ws, "silent", mailbox.Inbox)
	if len(in) != 2 {
		t.Fatalf("silent's inbox = %v, want the question and the nudge", in)
	}
	nudge := readMessage(t, ws.Mailbox("silent").Path(mailbox.Inbox, in[1]))
	for k, v := range map[string]string{"from": "lead", "to": "silent", "type": "NUDGE", "reply_to": ask["silent"], "thread": ask["silent"], "campaign": "the-rot-beneath"} {
		if got, _ := nudge.Header().Get(k); got != v {
			t.Errorf("nudge %s = %q, want %q", k, got, v)
		}
	}
	if got := strings.TrimSpace(string(nudge.Body)); got != "Are you still with us?" {
		t.Errorf("nudge body = %q", got)
	}
	if got := len(names(t, ws, "quick", mailbox.Done)); got != 1 {
		t.Errorf("quick handled %d messages, want only the question (no nudge)", got)
	}
	replies := bodies(t, ws, "lead", mailbox.Inbox)
	slices.Sort(replies) // the two answer in parallel
	if d := cmp.Diff([]string{"here", "sorry, here"}, replies); d != "" {
		t.Errorf("lead's inbox (-want +got):\n%s", d)
	}
}

// TestNudgeOnce: a nudge is never itself waited on, nor nudged, even
// when the rule that sent it matches it too (a rule for its type, a
// catch-all, a rule by recipient only): an agent that stays silent gets
// exactly one nudge per message it was waited on for, then is marked
// unresponsive, and the run ends.
func TestNudgeOnce(t *testing.T) {
	t.Parallel()
	rules := map[string]string{
		"catch-all":            "  - after: 200ms\n    nudge: {type: ASK}\n",
		"the nudge's own type": "  - match: {type: ASK}\n    after: 200ms\n    nudge: {type: ASK}\n",
		"by recipient only":    "  - match: {to: [silent, mute]}\n    after: 200ms\n    nudge: {body: \"Hello?\"}\n",
		"by role only":         "  - match: {to_role: quiet}\n    after: 200ms\n    nudge: {}\n",
	}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			ws := newWorkspace(t, "lead")
			script(t, ws, "mute.sh", "cat >/dev/null\n") // handles, never answers
			ws = reconfigure(t, ws, `agents:
  - lead
  - {name: silent, role: quiet}
  - {name: mute, role: quiet, driver: command, run: [./mute.sh]}
timeouts:
`+rule)
			asks := map[string][]string{}
			for _, to := range []string{"silent", "mute", "silent"} {
				asks[to] = append(asks[to], send(t, ws, "lead", to, "Where are you?", "type", "ASK"))
			}
			start := time.Now()
			if _, err := runIdle(t, ws, Options{}); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the run took %v: it kept waiting on nudges", took)
			}
			runs, err := ws.AgentRuns()
			if err != nil {
				t.Fatal(err)
			}
			for agent, state := range map[string]string{"silent": mailbox.Inbox, "mute": mailbox.Done} {
				if s := runs[agent]; s.State != workspace.StateUnresponsive || !strings.Contains(s.Note, "nor after a nudge") {
					t.Errorf("%s = %+v, want unresponsive after a nudge", agent, s)
				}
				// Each message it was asked, and one nudge about each.
				var nudged []string
				got := names(t, ws, agent, state)
				for _, n := range got {
					m := readMessage(t, ws.Mailbox(agent).Path(state, n))
					if about, ok := m.Header().Get("reply_to"); ok {
						nudged = append(nudged, about)
					}
				}
				slices.Sort(nudged)
				want := slices.Sorted(slices.Values(asks[agent]))
				if d := cmp.Diff(want, nudged); d != "" || len(got) != 2*len(asks[agent]) {
					t.Errorf("%s's %s = %v; the nudges are about (-want +got):\n%s", agent, state, got, d)
				}
			}
		})
	}
}

// TestTimeoutBusyAgent: an agent whose program is at work on an earlier
// message is busy, not silent: a message waiting its turn is timed from
// when the program starts on it, and only then can the agent be marked
// unresponsive.
func TestTimeoutBusyAgent(t *testing.T) {
	ws := newWorkspace(t, "lead")
	ws = reconfigure(t, ws, `agents:
  - lead
  - {name: busy, driver: command, run: [cat]}
timeouts:
  - match: {type: ASK}
    after: 2m
`)
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	r, err := Open(ws, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ask := mailbox.New([]byte("Where are you?\n"))
	ask.Set("id", "20261127-100000.000000Z-lead-000001")
	ask.Set("type", "ASK")
	r.expectReplies("lead", ask, []string{"busy"})
	unresponsive := func() bool { return r.state.run("busy").State == workspace.StateUnresponsive }

	// Busy with an earlier message past the deadline: not unresponsive.
	r.state.set("busy", workspace.StateWorking, "20261127-095900.000000Z-lead-000000")
	now = now.Add(3 * time.Minute)
	r.checkDeadlines()
	if unresponsive() || len(r.expected) != 1 {
		t.Fatalf("busy with another message: state %+v, %d expected; want it waited for, not unresponsive", r.state.run("busy"), len(r.expected))
	}
	// Its program starts on the question: it has 2 minutes from then.
	r.state.set("busy", workspace.StateWorking, "20261127-100000.000000Z-lead-000001")
	started := now
	now = started.Add(time.Minute)
	r.checkDeadlines()
	if unresponsive() {
		t.Fatal("marked unresponsive a minute after its program started on the message")
	}
	now = started.Add(119 * time.Second)
	r.checkDeadlines()
	if unresponsive() {
		t.Fatal("marked unresponsive before 2 minutes on the message")
	}
	now = now.Add(2 * time.Second)
	r.checkDeadlines()
	// Late, its program still at work: working, so status says for how
	// long, with the note that it is late.
	if run := r.state.run("busy"); run.State != workspace.StateWorking || run.Late != "20261127-100000.000000Z-lead-000001" || !strings.HasPrefix(run.Note, "no answer to 20261127-100000.000000Z-lead-000001 from lead within 2m") {
		t.Fatalf("state %+v after 2 minutes on the message without an answer, its program at work; want working, noted late", run)
	}
	// Its program done without an answer: unresponsive.
	r.state.set("busy", workspace.StateIdle, "")
	if !unresponsive() {
		t.Fatalf("state %+v once its program was done without an answer; want unresponsive", r.state.run("busy"))
	}
}

// TestStopAgentDuringReload: a worker stopping its agent (a budget used
// up, a write it cannot make, a shutdown it approved) while the router
// reloads parley.yaml. stopAgent read the map of workers from the
// worker's goroutine as reload changed it: under -race, a data race;
// without, "concurrent map read and map write" could end the runner.
func TestStopAgentDuringReload(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "echo.sh", "cat >/dev/null; echo heard\n")
	agents := "agents:\n  - boss\n  - {name: echo, driver: command, run: [./echo.sh]}\n"
	ws = reconfigure(t, ws, agents+"  - {name: other, driver: command, run: [./echo.sh]}\n")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reconfigure(t, ws, agents) // other is removed: its worker leaves the map
	start := make(chan struct{})
	stopped := make(chan bool)
	go func() {
		<-start
		stopped <- r.stopAgent("echo", "echo stopped for this run: a test")
	}()
	close(start)
	if err := r.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !<-stopped {
		t.Errorf("stopAgent(echo) = false, want true: it was not stopped before")
	}
	if _, ok := r.workers["other"]; ok {
		t.Errorf("other's worker is still in the map after the reload that removed it")
	}
}
