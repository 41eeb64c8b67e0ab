package orchestrator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
)

// TestEscalations: which escalations wait for a person's decision is
// decided once, for parley pipeline, status, run and the web view (they
// used to decide it apart, and disagreed): one in the person's inbox/ or
// cur/ waits; one whose step went on without a decision (a given_up
// or a blocked one whose step is ticked) is settled; one answered with a decision the
// orchestrator does not know waits still, though parley reply moved it
// to done/; one answered with a decision it knows does not (in reply to
// it, or to the note on the decision misspelt, which names it); nor does
// a copy come back into the inbox (git) of one handled already.
func TestEscalations(t *testing.T) {
	h := newHarness(t, config)
	tasks := h.toPlan()
	you := h.ws.Mailbox("you")
	// deliver files the escalation esc in you's state/.
	deliver := func(esc *mailbox.Message, state string) string {
		t.Helper()
		if err := os.WriteFile(you.Path(state, get(esc, "id")+".md"), esc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return get(esc, "id")
	}
	// answer files you's answer to esc, with decision, in you's sent/.
	answer := func(esc *mailbox.Message, decision string) {
		t.Helper()
		a := h.decide(esc, decision, "Because.")
		if err := os.WriteFile(you.Path(mailbox.Sent, get(a, "id")+".md"), a.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	escalate := func(task *mailbox.Message) *mailbox.Message {
		t.Helper()
		out := h.handle(h.givenUp(task))
		want(t, "given up", out, "you:escalation/decide")
		return out[0]
	}
	blocked := func(step int) *mailbox.Message {
		t.Helper()
		m := h.msg("orch", "Route: architect\n", "escalation", EscalateBlocked, "plan_file", "plans/retry.md", "step", fmt.Sprint(step))
		m.Set("to", "you")
		return m
	}

	waiting := deliver(escalate(tasks[1]), mailbox.Inbox) // step 2, worker-2: stalled
	settled := deliver(escalate(tasks[0]), mailbox.Inbox) // step 1, worker-1: ticked below
	if _, _, err := plans.Tick(filepath.Join(h.ws.Root, "plans", "retry.md"), 1); err != nil {
		t.Fatal(err)
	}
	handling := deliver(blocked(3), mailbox.Cur)
	mis := blocked(2)
	misanswered := deliver(mis, mailbox.Done)
	tickedBlocked := deliver(blocked(1), mailbox.Inbox) // step 1, ticked since
	answer(mis, "aprove")
	answer(mis, "rety")
	ok := blocked(2)
	deliver(ok, mailbox.Done)
	answer(ok, "aprove")
	answer(ok, "approve")
	// Answered misspelt, then with a decision in reply to the note that
	// says it waits: answered.
	noted := blocked(2)
	deliver(noted, mailbox.Done)
	answer(noted, "aprove")
	note := h.msg("orch", "Your decision \"aprove\" is none of approve, retry, stop.", WaitingEscalation, get(noted, "id"))
	note.Set("to", "you")
	deliver(note, mailbox.Done)
	answer(note, "approve")
	restored := blocked(3)
	deliver(restored, mailbox.Done)
	deliver(restored, mailbox.Inbox) // back by git checkout
	answer(restored, "stop")

	type row struct{ ID, State, Kind, Settled, Misspelt string }
	var got []row
	for _, x := range Escalations(h.ws, nil) {
		if x.Agent != "you" || x.Waiting() != (x.Settled == "") {
			t.Errorf("escalation %s: Agent %q, Waiting() %v with Settled %q", x.ID, x.Agent, x.Waiting(), x.Settled)
		}
		got = append(got, row{x.ID, x.State, x.Kind, x.Settled, x.Misspelt})
	}
	wantRows := []row{
		{handling, mailbox.Cur, EscalateBlocked, "", ""},
		{waiting, mailbox.Inbox, EscalateGivenUp, "", ""},
		{settled, mailbox.Inbox, EscalateGivenUp, "ticked", ""},
		{tickedBlocked, mailbox.Inbox, EscalateBlocked, "ticked", ""},
		{misanswered, mailbox.Done, EscalateBlocked, "", "rety"},
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Errorf("Escalations() (-want +got):\n%s", diff)
	}
}

// TestToPersonUntypedWithoutProtocol: in a workspace whose parley.yaml
// names no skill, the escalation and the note go as informal messages,
// of no type (a protocol of the workspace's own may lack the types the
// dev-pipeline skill adds); with the skill, they are typed.
func TestToPersonUntypedWithoutProtocol(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, esc, note string
	}{
		{"dev-pipeline", config, "you:escalation/decide", "you:pipeline_note/info"},
		{"no skills", strings.TrimPrefix(config, "skills: [dev-pipeline]\n"), "you:", "you:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			req := h.handle(h.msg("you", "Add retries."))
			want(t, "request", req, "architect:triage_request/execute")
			esc := h.handle(h.answer(req[0], TriageResult, "blocked", "Stuck."))
			want(t, "blocked", esc, tc.esc)
			// A verdict no review asked for is set aside, with a note.
			note := h.handle(h.msg("reviewer", "Fine.", "type", ReviewVerdict, "signal", "pass"))
			want(t, "stray verdict", note, tc.note)
		})
	}
}
