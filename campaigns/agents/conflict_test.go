package agents

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// conflicted is a file's text with a merge conflict git left in it.
const conflicted = "# Notes\n\n<<<<<<< HEAD\nA note\n=======\nB note\n>>>>>>> other\n"

// TestWritersRefuseConflicts: no built-in agent writes into a campaign
// file git left a merge conflict in (a tryout: a pull of two hosts'
// sessions, then the next turn wrote inside the conflict block). Each
// says the file and its line, and the file is as it was.
func TestWritersRefuseConflicts(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string // the conflicted file, relative to the campaign
		text string // the file's text, conflict and all
		run  func(ws string) ([]*mailbox.Message, error)
	}{
		{"scribe", "scenes/001-opening.md", "# Scene 1: Opening\n\n" + conflicted, func(ws string) ([]*mailbox.Message, error) {
			s := &Scribe{Campaigns: Campaigns{Workspace: ws}}
			return s.Handle(context.Background(), msg(t, "---\nid: 20261121-101500.000000Z-gm-000001\nfrom: gm\ntype: NARRATIVE\nscene_number: \"001\"\nscene_slug: opening\n---\nRain.\n"))
		}},
		{"journaler", "party/tilda-brannock-journal.md", conflicted, func(ws string) ([]*mailbox.Message, error) {
			j := &Journaler{Campaigns: Campaigns{Workspace: ws}, Players: map[string]string{"aria": "tilda-brannock"}}
			return j.Handle(context.Background(), msg(t, "---\nid: 20261121-101500.000000Z-aria-000001\nfrom: aria\ntype: JOURNAL_ENTRY\ntitle: The Mermaid\n---\nWe met Lysara.\n"))
		}},
		{"state writer", campaigns.StoryState, "# Story State\n\n## NPCs\n" + conflicted, func(ws string) ([]*mailbox.Message, error) {
			camp, _ := campaigns.Find(ws, "the-test")
			if err := os.WriteFile(camp.Path("tmp/gm-state-delta.md"), []byte("- NPC: Wiven Mirsk - a fence\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := &StateWriter{Campaigns: Campaigns{Workspace: ws}}
			out, err := s.Handle(context.Background(), msg(t, "---\nid: 20261121-101500.000000Z-gm-000001\nfrom: gm\ntype: STATE_UPDATED\n---\n[STATE_UPDATED]\n"))
			// Said to the game master, the delta kept.
			if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), "story-state.md:6: unresolved merge conflict") {
				t.Errorf("Handle = %v, %v, want a reply naming the conflict", out, err)
			}
			if _, err := os.Stat(camp.Path("tmp/gm-state-delta.md")); err != nil {
				t.Errorf("the delta is gone: %v", err)
			}
			return nil, &textfile.ConflictError{}
		}},
		{"tools", "party/tilda-brannock.md", "# Tilda Brannock\n\n| | |\n|---|---|\n| **Level** | 1 |\n| **Hit Points** | 12/12 |\n\n## Equipment\n" + conflicted, func(ws string) ([]*mailbox.Message, error) {
			tb := &Toolbox{Campaigns: Campaigns{Workspace: ws}, Players: map[string]string{"aria": "tilda-brannock"}, Dice: dice.Seeded(1), People: []string{"you"}}
			out, err := tb.Handle(context.Background(), msg(t, "---\nid: 20261121-101500.000000Z-aria-000001\nfrom: aria\ntool: update_character\narguments: {damage: 5}\n---\n"))
			// The call is answered with the error, and people, who
			// alone can resolve it, are told.
			if err != nil || len(out) != 2 || !strings.Contains(string(out[0].Body), "unresolved merge conflict") {
				t.Fatalf("Handle = %v, %v, want an answer naming the conflict and a notice", out, err)
			}
			if to, _ := out[1].Header().Get("to"); to != "you" || out[1].Payload().Value("notice") != SheetNotice || !strings.Contains(string(out[1].Body), "party/tilda-brannock.md:11: unresolved merge conflict") {
				t.Errorf("notice to %s:\n%s", to, out[1].Body)
			}
			return nil, &textfile.ConflictError{}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws, camp := table(t)
			path := camp.Path(tt.file)
			if err := os.MkdirAll(strings.TrimSuffix(path, "/"+lastElem(tt.file)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := tt.run(ws)
			if !errors.Is(err, textfile.ErrConflict) {
				t.Errorf("Handle = %v, want ErrConflict", err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.text {
				t.Errorf("%s was written:\n%s", tt.file, got)
			}
		})
	}
}

func lastElem(rel string) string { return rel[strings.LastIndex(rel, "/")+1:] }

// TestSessionEndConflictedDecisionLog: a [SESSION_END] does not write
// into a decision log git left a merge conflict in; people are told, with
// the summary, and the session ends all the same.
func TestSessionEndConflictedDecisionLog(t *testing.T) {
	ws := leadTableOf(t, "skills: [dnd-team]\nphase: 1\nagents:\n  - you\n  - {name: gm, driver: command, run: [./gm.sh]}\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n")
	camp, err := campaigns.Find(ws.Root, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(camp.Path(campaigns.DecisionLog), []byte(conflicted), 0o644); err != nil {
		t.Fatal(err)
	}
	const endID = "20261124-090002.000000Z-gm-e00001"
	end := "---\nid: " + endID + "\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: The bell rang.\nstate_saved: false\n---\n"
	put(t, ws, "lead", mailbox.Cur, endID, end)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	out, err := lead.Handle(context.Background(), "lead", msg(t, end))
	if err != nil {
		t.Fatal(err)
	}
	var notice, shutdown bool
	for _, m := range out {
		to, _ := m.Header().Get("to")
		switch {
		case m.Payload().Value("notice") == DecisionNotice:
			notice = to == "you" && strings.Contains(string(m.Body), "decision-log.md:3: unresolved merge conflict") && strings.Contains(string(m.Body), "The bell rang.")
		case typeOf(m) == workspace.ShutdownRequest && to == "gm":
			shutdown = true
		}
	}
	if !notice || !shutdown {
		t.Errorf("a notice to you naming the conflict: %v; the gm's shutdown: %v; in %d messages", notice, shutdown, len(out))
	}
	if got, _ := os.ReadFile(camp.Path(campaigns.DecisionLog)); string(got) != conflicted {
		t.Errorf("the decision log was written:\n%s", got)
	}
}

// TestAppendDecisionCRLF: the session's end follows the decision log's
// line ending (CRLF in a clone made with core.autocrlf): no file of
// mixed endings.
func TestAppendDecisionCRLF(t *testing.T) {
	ws := leadTable(t)
	camp, err := campaigns.Find(ws.Root, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(camp.Path(campaigns.DecisionLog), []byte("# Decision Log: The Hollow\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for range 2 { // the same end again is written once, CRLF or not
		if err := appendDecision(camp, at, "The bell rang.\nTwice.", "Something wakes.", true); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(camp.Path(campaigns.DecisionLog))
	if n := strings.Count(string(got), "\n") - strings.Count(string(got), "\r\n"); n != 0 {
		t.Errorf("%d LF-only lines:\n%q", n, got)
	}
	if n := strings.Count(string(got), "## Session ended "); n != 1 {
		t.Errorf("%d ends, want 1:\n%q", n, got)
	}
}
