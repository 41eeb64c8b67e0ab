package runner

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestTakenUpNudgeIsParleys: a runner killed after it sent a nudge and
// before it routed it left the nudge in the outbox of the one waiting;
// the next runner routed it as that agent's own message, awaited an
// answer to it, and nudged about the nudge. The book says which message
// is the nudge, and the next runner routes it as parley's.
func TestTakenUpNudgeIsParleys(t *testing.T) {
	// Whether the wait is taken up (its rule the same) or dropped (its
	// rule changed meanwhile), the nudge is parley's.
	for _, changed := range []bool{false, true} {
		takenUpNudge(t, changed)
	}
}

func takenUpNudge(t *testing.T, changed bool) {
	ws := newWorkspace(t, "gm", "p1")
	asked := send(t, ws, "gm", "p1", "Your move.")
	if _, err := runIdle(t, ws, Options{}); err != nil { // delivered, no timeouts yet
		t.Fatal(err)
	}
	saveConfig(t, ws, "agents: [gm, p1]\ntimeouts:\n  - match: {to: [p1]}\n    after: 1s\n    nudge:\n      body: Still there\n", true)
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	// The state the killed runner left: the wait, nudged, in the book;
	// the nudge in gm's outbox, not routed.
	nudge := mailbox.New([]byte("Still there?\n"))
	nudgeID := (&mailbox.IDs{}).New("gm")
	nudge.Set("id", nudgeID)
	nudge.Set("from", "gm")
	nudge.Set("to", "p1")
	nudge.Set("reply_to", asked)
	if _, err := ws.Mailbox("gm").Send(nudge); err != nil {
		t.Fatal(err)
	}
	book := map[string]workspace.AgentRun{"p1": {State: workspace.StateIdle, Awaited: []workspace.Awaited{{
		Agent: "p1", Message: asked, From: "gm", Until: time.Now().Add(-time.Second), After: time.Second,
		Policy: "timeouts[0]", Rule: ws.Config.Timeouts[0].Rule(), Nudged: true, Nudge: nudgeID,
	}}}}
	data, err := json.Marshal(book)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.AgentsPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed {
		saveConfig(t, ws, "agents: [gm, p1]\ntimeouts:\n  - match: {to: [p1]}\n    after: 2s\n    nudge:\n      body: Still there\n", true)
		if ws, err = workspace.Open(ws.Root); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range journalEntries(t, ws) {
		if e.Outcome == workspace.Nudged {
			t.Errorf("nudged again: %+v", e)
		}
		if e.Outcome == workspace.Delivered && e.ID == nudgeID && e.Note == "" {
			t.Errorf("the nudge was delivered as gm's own message: %+v", e)
		}
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if got := runs["p1"]; !changed && got.State != workspace.StateUnresponsive || len(got.Awaited) > 0 {
		t.Errorf("rule changed %v: p1 = %+v, want unresponsive (its rule the same), nothing awaited", changed, got)
	}
}

// TestTakenUpUnderItsRule: a wait is taken up under the rule that
// awaited it, wherever that rule is now, and by none once it changed:
// it was tied to its rule's place (timeouts[0]), and a rule put above it
// (an hour long) had the next run nudge with that rule's nudge and wait
// an hour.
func TestTakenUpUnderItsRule(t *testing.T) {
	const (
		short = "  - match: {to: [p1]}\n    after: 1s\n    nudge:\n      body: the short rule's nudge\n"
		hour  = "  - match: {to_role: [p1]}\n    after: 1h\n    nudge:\n      body: the hour rule's nudge\n"
	)
	for _, tc := range []struct {
		name, rules string
		nudge       string // the nudge p1 gets, "" for none
	}{
		{"a rule put above it", hour + short, "the short rule's nudge"},
		{"its rule changed", strings.Replace(short, "after: 1s", "after: 2s", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t, "gm", "p1")
			asked := send(t, ws, "gm", "p1", "Your move.")
			if _, err := runIdle(t, ws, Options{}); err != nil {
				t.Fatal(err)
			}
			saveConfig(t, ws, "agents: [gm, p1]\ntimeouts:\n"+short, true)
			ws, err := workspace.Open(ws.Root)
			if err != nil {
				t.Fatal(err)
			}
			before := ws.Config.Timeouts[0]
			book := map[string]workspace.AgentRun{"p1": {State: workspace.StateIdle, Awaited: []workspace.Awaited{{
				Agent: "p1", Message: asked, From: "gm", Until: time.Now().Add(-time.Second), After: time.Second,
				Policy: before.Key, Rule: before.Rule(),
			}}}}
			data, err := json.Marshal(book)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ws.AgentsPath(), data, 0o644); err != nil {
				t.Fatal(err)
			}
			saveConfig(t, ws, "agents: [gm, p1]\ntimeouts:\n"+tc.rules, true)
			if ws, err = workspace.Open(ws.Root); err != nil {
				t.Fatal(err)
			}
			if _, err := runIdle(t, ws, Options{}); err != nil {
				t.Fatal(err)
			}
			var nudges []string
			for _, b := range bodies(t, ws, "p1", mailbox.Inbox) {
				if b != "Your move." {
					nudges = append(nudges, b)
				}
			}
			want := []string{}
			if tc.nudge != "" {
				want = []string{tc.nudge}
			}
			if !slices.Equal(nudges, want) {
				t.Errorf("p1 was nudged with %q, want %q", nudges, want)
			}
		})
	}
}

// TestNudgeRefusedAwaited: a nudge the one waiting may not send (in
// dnd-team, CONTEXT_REFRESH is the team lead's, and here the gm waits) is
// not sent, and the wait that goes on said "after a nudge" in parley
// status until the agent was marked unresponsive; its reason, two
// problems, was written with a "\n" between them on the one line of a
// note. Now the wait says at once that the nudge was not sent, and why,
// on one line, and so does the note; a runner that takes up the wait
// says so too, not "nor after a nudge".
func TestNudgeRefusedAwaited(t *testing.T) {
	const config = `skills: [dnd-team]
agents:
  - gm
  - {name: aria, role: player}
timeouts:
  - match: {type: GM_TO_PLAYER}
    after: 1m
    nudge:
      type: CONTEXT_REFRESH
      body: Are you still with us?
`
	ws := newWorkspace(t, "gm", "aria")
	asked := send(t, ws, "gm", "aria", "What do you do?", "type", "GM_TO_PLAYER", "request_type", "QUICK_REACTION", "scene_number", `"001"`, "scene_slug", "inn")
	if _, err := runIdle(t, ws, Options{}); err != nil { // delivered, no timeouts yet
		t.Fatal(err)
	}
	ws = reconfigure(t, ws, config)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	r, err := Open(ws, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	m := readMessage(t, ws.Mailbox("aria").Path(mailbox.Inbox, mailbox.FileName(asked)))
	r.expectReplies("gm", m, []string{"aria"})
	now = now.Add(61 * time.Second)
	r.checkDeadlines() // the nudge is refused
	aw := r.state.run("aria").Awaited
	if len(aw) != 1 {
		t.Fatalf("aria's awaited = %+v, want the one wait", aw)
	}
	text := aw[0].Text(now)
	for _, want := range []string{"its nudge was not sent: ", "may not send [CONTEXT_REFRESH]", "; the nudge: campaign: missing"} {
		if !strings.Contains(text, want) {
			t.Errorf("Awaited.Text = %q, want it to say %q", text, want)
		}
	}
	if strings.Contains(text, "after a nudge") || strings.Contains(aw[0].Unsent, "\n") || strings.Contains(text, `\n`) {
		t.Errorf("Awaited.Text = %q (unsent %q), want no \"after a nudge\", on one line", text, aw[0].Unsent)
	}
	r.Close()

	// The next runner takes the wait up, and marks aria unresponsive.
	r, err = Open(ws, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if aw := r.state.run("aria").Awaited; len(aw) != 1 || aw[0].Unsent == "" {
		t.Fatalf("aria's awaited, taken up = %+v, want the wait, its nudge not sent", aw)
	}
	now = now.Add(61 * time.Second)
	r.checkDeadlines()
	run := r.state.run("aria")
	if run.State != workspace.StateUnresponsive || !strings.Contains(run.Note, "; its nudge was not sent: ") || strings.Contains(run.Note, "nor after a nudge") || strings.Contains(run.Note, "\n") {
		t.Errorf("aria = %+v, want unresponsive, its note saying on one line that its nudge was not sent", run)
	}
}
