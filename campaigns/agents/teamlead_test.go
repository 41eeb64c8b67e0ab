package agents

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// leadTable makes a workspace with a team lead and two players, and its
// campaign.
func leadTable(t testing.TB) *workspace.Workspace {
	t.Helper()
	return leadTableOf(t, "skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"+
		"  - {name: tilda, role: player, character: tilda-brannock}\n  - {name: grim, role: player, character: grimjaw-ironforge}\n")
}

// leadTableOf makes a workspace of the parley.yaml cfg, its mailboxes,
// and its campaign, the-hollow.
func leadTableOf(t testing.TB, cfg string) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, workspace.ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	if _, err := campaigns.New(dir, "the-hollow"); err != nil {
		t.Fatal(err)
	}
	return ws
}

const (
	awaitID  = "20261124-100000.000000Z-gm-a00001"
	promptT  = "20261124-100000.100000Z-lead-b00001"
	promptG  = "20261124-100000.100001Z-lead-b00002"
	answerT  = "20261124-100001.000000Z-tilda-c00001"
	answerG  = "20261124-100002.000000Z-grim-c00002"
	awaitMsg = "---\nid: " + awaitID + "\nfrom: gm\nto: lead\ntype: AWAIT_PLAYERS\n---\n[AWAIT_PLAYERS]\nscene_number: \"001\"\nscene_slug: the-warehouse\ncharacters:\n" +
		"  - {name: tilda-brannock, request_type: QUICK_REACTION, scene_context: Dark., just_happened: A crate fell., request: React.}\n" +
		"  - {name: grimjaw-ironforge, request_type: QUICK_REACTION, scene_context: Dark., just_happened: A crate fell., request: React.}\n"
)

// put writes a message into a state of an agent's mailbox.
func put(t testing.TB, ws *workspace.Workspace, agent, state, id, text string) {
	t.Helper()
	if err := os.WriteFile(ws.Mailbox(agent).Path(state, mailbox.FileName(id)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func prompt(id, to string) string {
	return "---\nid: " + id + "\nfrom: lead\nto: " + to + "\ntype: GM_TO_PLAYER\nthread: " + awaitID + "\nrequest_type: QUICK_REACTION\n---\nReact.\n"
}

func reply(id, from, replyTo, text string) string {
	return "---\nid: " + id + "\nfrom: " + from + "\nto: lead\nthread: " + awaitID + "\nreply_to: " + replyTo + "\n---\n" + text + "\n"
}

// midJoin leaves the mailboxes as a team lead killed mid-join leaves
// them: the await handled, both prompts sent, Tilda's answer handled.
func midJoin(t *testing.T, ws *workspace.Workspace) {
	put(t, ws, "lead", mailbox.Done, awaitID, awaitMsg)
	put(t, ws, "lead", mailbox.Sent, promptT, prompt(promptT, "tilda"))
	put(t, ws, "lead", mailbox.Sent, promptG, prompt(promptG, "grim"))
	put(t, ws, "lead", mailbox.Done, answerT, reply(answerT, "tilda", promptT, "Tilda draws her sword."))
}

// TestTeamLeadRecovers: a team lead started on the mailboxes a killed one
// left finds the join it was waiting on, with its deadline, and finishes
// it with the last answer.
func TestTeamLeadRecovers(t *testing.T) {
	ws := leadTable(t)
	midJoin(t, ws)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	if err := lead.Start(context.Background(), "lead"); err != nil {
		t.Fatal(err)
	}
	at, _, _ := mailbox.ParseID(promptG)
	if got, want := lead.Due("lead"), at.Add(time.Minute); !got.Equal(want) {
		t.Errorf("Due after a restart = %v, want the last prompt's time + Wait, %v", got, want)
	}
	put(t, ws, "lead", mailbox.Cur, answerG, reply(answerG, "grim", promptG, "[VETO] This touches my past."))
	out, err := lead.Handle(context.Background(), "lead", msg(t, reply(answerG, "grim", promptG, "[VETO] This touches my past.")))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("Handle(the last answer) = %d messages, want one [PLAYER_RESPONSES]", len(out))
	}
	text := string(out[0].Bytes())
	for _, want := range []string{"type: PLAYER_RESPONSES", "reply_to: " + awaitID, "- character: tilda-brannock\n    response: Tilda draws her sword.", "vetoes:\n  - character: grimjaw-ironforge\n    reason: This touches my past.", "2 of 2 answered."} {
		if !strings.Contains(text, want) {
			t.Errorf("the join lacks %q:\n%s", want, text)
		}
	}
	if !lead.Due("lead").IsZero() {
		t.Errorf("Due after the join = %v, want none", lead.Due("lead"))
	}
}

// TestTeamLeadDeadline: at the deadline the join goes out once, naming
// who did not answer; a restarted team lead does not send it again, and
// an answer that comes after it is passed on by itself.
func TestTeamLeadDeadline(t *testing.T) {
	ws := leadTable(t)
	midJoin(t, ws)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	if err := lead.Start(context.Background(), "lead"); err != nil {
		t.Fatal(err)
	}
	late := lead.Due("lead").Add(time.Second)
	for range 2 {
		if err := lead.Tick(context.Background(), "lead", late); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := ws.Mailbox("lead").Names(mailbox.Outbox)
	if len(names) != 1 {
		t.Fatalf("outbox after two ticks = %v, want one join", names)
	}
	data, _ := os.ReadFile(ws.Mailbox("lead").Path(mailbox.Outbox, names[0]))
	if !strings.Contains(string(data), "missing: [grimjaw-ironforge]") || !strings.Contains(string(data), "No answer in time from grimjaw-ironforge.") {
		t.Errorf("the join at the deadline:\n%s", data)
	}

	again := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	if err := again.Start(context.Background(), "lead"); err != nil {
		t.Fatal(err)
	}
	if d := again.Due("lead"); !d.IsZero() {
		t.Errorf("a restarted team lead waits on a join already sent (due %v)", d)
	}
	put(t, ws, "lead", mailbox.Cur, answerG, reply(answerG, "grim", promptG, "Grimjaw grunts."))
	out, err := again.Handle(context.Background(), "lead", msg(t, reply(answerG, "grim", promptG, "Grimjaw grunts.")))
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle(a late answer) = %v, %v; want it passed on", out, err)
	}
	if text := string(out[0].Bytes()); !strings.Contains(text, "response: Grimjaw grunts.") || strings.Contains(text, "tilda") || out[0].Header().Has("id") {
		t.Errorf("the late answer, passed on (with an id of its own to come):\n%s", text)
	}
	// Tilda's answer, already carried, is not passed on again.
	if out, _ := again.Handle(context.Background(), "lead", msg(t, reply(answerT, "tilda", promptT, "Tilda draws her sword."))); len(out) != 0 {
		t.Errorf("Handle(an answer the join carried) = %d messages, want none", len(out))
	}
}

// TestTeamLeadDeadlineFromPrompts: an await that waited in the team
// lead's inbox (the runner was down, the machine busy) still gives the
// players their whole time, from when they are asked.
func TestTeamLeadDeadlineFromPrompts(t *testing.T) {
	ws := leadTable(t)
	put(t, ws, "lead", mailbox.Cur, awaitID, awaitMsg) // sent long ago
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute, Now: func() time.Time { return now }}
	out, err := lead.Handle(context.Background(), "lead", msg(t, awaitMsg))
	if err != nil || len(out) != 2 {
		t.Fatalf("Handle(await) = %d messages, %v; want a prompt for each player", len(out), err)
	}
	if got, want := lead.Due("lead"), now.Add(time.Minute); !got.Equal(want) {
		t.Errorf("Due = %v, want %v: Wait from when the players are asked", got, want)
	}
}

// TestTeamLeadCheckpointBeforeSceneFile: a [STATE_UPDATED] that reaches
// the team lead before the scribe has written the scene of the
// [NARRATIVE] just before it (their workers race) still asks every player
// for a journal entry, for that scene.
func TestTeamLeadCheckpointBeforeSceneFile(t *testing.T) {
	ws := leadTable(t)
	const narrativeID = "20261124-100000.000000Z-gm-d00001"
	put(t, ws, "lead", mailbox.Done, narrativeID, "---\nid: "+narrativeID+"\nfrom: gm\nto: '*'\ntype: NARRATIVE\nscene_number: \"003\"\nscene_slug: the-sewer-grate\n---\nThe party stands at the sewer grate.\n")
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	state := "---\nid: 20261124-100001.000000Z-gm-d00002\nfrom: gm\nto: lead\ntype: STATE_UPDATED\ncampaign: the-hollow\ndeltas_written: []\ncharacters_involved: []\n---\n"
	out, err := lead.Handle(context.Background(), "lead", msg(t, state))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	for _, m := range out {
		if typeOf(m) == JournalCheckpointType {
			to, _ := m.Header().Get("to")
			asked = append(asked, to+" "+field(m, "scene_number")+" "+field(m, "scene_slug"))
		}
	}
	if want := []string{"tilda 003 the-sewer-grate", "grim 003 the-sewer-grate"}; strings.Join(asked, ", ") != strings.Join(want, ", ") {
		t.Errorf("journal checkpoints = %v, want %v", asked, want)
	}
}

// TestTeamLeadRefreshSkipsPeopleElsewhere: a restart mid-session sends
// [CONTEXT_REFRESH] to the programs at the table, not to people: neither
// a person of this workspace nor an agent of another workspace with the
// role human (a person there, who got it). An agent of another workspace
// without that role may be a program there: it is told.
func TestTeamLeadRefreshSkipsPeopleElsewhere(t *testing.T) {
	ws := leadTableOf(t, "skills: [dnd-team]\nphase: 1\nbridge: {name: table, url: \"nats://127.0.0.1:4222\"}\nagents:\n  - gm\n"+
		"  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"+
		"  - {name: tilda, role: player, character: tilda-brannock, driver: command, run: [sh, player.sh]}\n"+
		"  - {name: aria, roles: [player, human], remote: seat}\n"+
		"  - {name: tor, role: player, remote: players}\n")
	const startID = "20261124-090000.000000Z-lead-a00000"
	put(t, ws, "lead", mailbox.Sent, startID, "---\nid: "+startID+"\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n")
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	if err := lead.Start(context.Background(), "lead"); err != nil {
		t.Fatal(err)
	}
	names, err := ws.Mailbox("lead").Names(mailbox.Outbox)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		b, err := os.ReadFile(ws.Mailbox("lead").Path(mailbox.Outbox, n))
		if err != nil {
			t.Fatal(err)
		}
		m := msg(t, string(b))
		if typeOf(m) == ContextRefreshType {
			to, _ := m.Header().Get("to")
			got = append(got, to)
		}
	}
	if want := []string{"tilda", "tor"}; !slices.Equal(got, want) {
		t.Errorf("[CONTEXT_REFRESH] sent to %v, want %v: not the gm (a person here) nor aria (a person in the workspace seat)", got, want)
	}
}

// TestTeamLeadSessionEndJournals: a session ended with nothing told since
// its start (a scripted game master whose one story is told ends a rerun
// at once) asks no one for a journal entry; a session with a narrative
// does. (A tryout: each rerun of the kept demo table added a filler entry
// to every journal.)
func TestTeamLeadSessionEndJournals(t *testing.T) {
	const (
		oldNarrative = "20261124-080000.000000Z-gm-d00001"
		startID      = "20261124-090000.000000Z-lead-a00000"
		newNarrative = "20261124-090001.000000Z-gm-d00002"
		endID        = "20261124-090002.000000Z-gm-e00001"
	)
	narrative := func(id string) string {
		return "---\nid: " + id + "\nfrom: gm\nto: '*'\ntype: NARRATIVE\nscene_number: \"002\"\nscene_slug: the-bell-chamber\n---\nThe bell is still.\n"
	}
	end := "---\nid: " + endID + "\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: The story is told.\nstate_saved: false\nnext_hook: Something wakes.\n---\n"
	for _, tt := range []struct {
		name  string
		told  bool // a narrative since the start
		asked []string
	}{
		{"nothing told since the start", false, nil},
		{"a narrative since the start", true, []string{"tilda", "grim"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := leadTable(t)
			put(t, ws, "lead", mailbox.Done, oldNarrative, narrative(oldNarrative))
			put(t, ws, "lead", mailbox.Sent, startID, "---\nid: "+startID+"\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n")
			if tt.told {
				put(t, ws, "lead", mailbox.Done, newNarrative, narrative(newNarrative))
			}
			put(t, ws, "lead", mailbox.Cur, endID, end)
			lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
			out, err := lead.Handle(context.Background(), "lead", msg(t, end))
			if err != nil {
				t.Fatal(err)
			}
			var asked []string
			for _, m := range out {
				if typeOf(m) == JournalCheckpointType {
					to, _ := m.Header().Get("to")
					asked = append(asked, to)
				}
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("journal checkpoints at the end sent to %v, want %v", asked, tt.asked)
			}
		})
	}
}

// TestAppendDecisionOnce: the same end of a session said again (each
// rerun of the kept demo table, whose scripted game master has told its
// story; a [SESSION_END] handled again after a crash) is not written to
// the decision log twice; another end is.
func TestAppendDecisionOnce(t *testing.T) {
	ws := leadTable(t)
	camp, err := campaigns.Find(ws.Root, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for i, end := range []struct {
		summary, hook string
		saved         bool
	}{
		{"The bell rang.", "Something wakes.", true},
		{"The story is told.", "Something wakes.", false},
		{"The story is told.", "Something wakes.", false},
		{"The story is told.\n", "Something wakes. ", false},
		{"The story is told.", "Something wakes.", true},
	} {
		if err := appendDecision(camp, at.Add(time.Duration(i)*time.Hour), end.summary, end.hook, end.saved); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(camp.Path(campaigns.DecisionLog))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "## Session ended "); got != 3 {
		t.Errorf("the decision log has %d ends, want 3 (the same end twice is written once):\n%s", got, data)
	}
}

// TestStateSaved: the team lead's commit and the seat's warning read a
// [SESSION_END]'s state_saved the same way: true (any case) is saved,
// anything else, or none, is not.
func TestStateSaved(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  bool
	}{
		{"state_saved: true\n", true},
		{"state_saved: True\n", true},
		{"state_saved: \"true\"\n", true},
		{"state_saved: false\n", false},
		{"state_saved: yes\n", false},
		{"", false},
	} {
		m, err := mailbox.Parse([]byte("[SESSION_END]\nsummary: The end.\n" + tt.field + "\nDone.\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := StateSaved(m); got != tt.want {
			t.Errorf("StateSaved(%q) = %v, want %v", tt.field, got, tt.want)
		}
	}
}

// TestTeamLeadStartWhileClosing: a runner killed as the session closed
// (its [SESSION_END] delivered to the team lead, not handled yet) left a
// team lead that, started again, sent a new start: the game master opened
// a second session that the end, handled next, shut down, and every agent
// was asked twice to shut down. The end is handled; nothing is started.
// So too for an end the game master wrote as the runner stopped, still in
// its outbox: the next run routes it.
func TestTeamLeadStartWhileClosing(t *testing.T) {
	const (
		startID = "20261124-090000.000000Z-lead-a00000"
		endID   = "20261124-090002.000000Z-gm-e00001"
	)
	// held: the end in the gm's outbox is in the lead's done/ too (a
	// runner killed after delivering it, before its move to sent/): it is
	// routed again to nobody, and is no session closing.
	for _, at := range []struct {
		agent, state string
		held         bool
	}{{"lead", mailbox.Inbox, false}, {"lead", mailbox.Cur, false}, {"lead", mailbox.Done, false}, {"gm", mailbox.Outbox, false}, {"gm", mailbox.Outbox, true}} {
		state := at.state
		name := at.agent + "/" + state
		if at.held {
			name += "+held"
		}
		t.Run(name, func(t *testing.T) {
			ws := leadTable(t)
			if at.agent == "lead" {
				// The session the end closes. Left out for the
				// end in the gm's outbox: without it, Start would
				// send a start (with it, a refresh).
				put(t, ws, "lead", mailbox.Sent, startID, "---\nid: "+startID+"\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n")
			}
			if at.held {
				put(t, ws, "lead", mailbox.Done, endID, "---\nid: "+endID+"\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: Done.\nstate_saved: false\nnext_hook: More.\n---\n")
			}
			put(t, ws, at.agent, state, endID, "---\nid: "+endID+"\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: Done.\nstate_saved: false\nnext_hook: More.\n---\n")
			prefs := "## Narrative Style\n\n**dialogue_format**: cinematic\n\n## Player Character\n\n**name**: Tilda Brannock\n**file**: party/tilda-brannock.md\n"
			if err := os.WriteFile(filepath.Join(ws.Root, "campaigns", "the-hollow", "preferences.md"), []byte(prefs), 0o644); err != nil {
				t.Fatal(err)
			}
			// The character preferences.md names has its sheet.
			if err := os.MkdirAll(filepath.Join(ws.Root, "campaigns", "the-hollow", "party"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws.Root, "campaigns", "the-hollow", "party", "tilda-brannock.md"), []byte("# Tilda Brannock\n\n| **Hit Points** | 8/8 |\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
			if err := lead.Start(context.Background(), "lead"); err != nil {
				t.Fatal(err)
			}
			n, err := ws.Mailbox("lead").Count(mailbox.Outbox)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{mailbox.Inbox: 0, mailbox.Cur: 0, mailbox.Done: 1, mailbox.Outbox: 0}[state]
			if at.held {
				want = 1
			}
			if n != want {
				t.Errorf("with the end in %s, Start sent %d messages, want %d (a start only once the end is handled)", state, n, want)
			}
		})
	}
}

// TestTeamLeadReload: the team lead goes on with the workspace as loaded
// again: a player removed from parley.yaml while the runner ran is no
// longer at the table (it was asked for its journal and to shut down, and
// each message was refused: unknown agent).
func TestTeamLeadReload(t *testing.T) {
	ws := leadTable(t)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	if got := lead.tablePlayers(); !slices.Equal(got, []string{"tilda", "grim"}) {
		t.Fatalf("tablePlayers = %v", got)
	}
	if err := os.WriteFile(filepath.Join(ws.Root, workspace.ConfigFile), []byte("skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"+
		"  - {name: tilda, role: player, character: tilda-brannock}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	lead.Reload(fresh)
	if got := lead.tablePlayers(); !slices.Equal(got, []string{"tilda"}) {
		t.Errorf("after a reload without grim, tablePlayers = %v, want [tilda]", got)
	}
}

// TestTeamLeadResume: a runner taking over from one that stopped resumes
// the team lead: a session under way has the table refreshed, as a start
// after a restart does; a session over starts no new one (a seat that
// took over after stop_on ended the run began a session nobody asked
// for).
func TestTeamLeadResume(t *testing.T) {
	const (
		startID = "20261124-090000.000000Z-lead-a00000"
		endID   = "20261124-090002.000000Z-gm-e00001"
	)
	for _, ended := range []bool{false, true} {
		ws := leadTableOf(t, "skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n"+
			"  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"+
			"  - {name: tilda, role: player, character: tilda-brannock, driver: command, run: [sh, player.sh]}\n")
		prefs := "## Narrative Style\n\n**dialogue_format**: cinematic\n\n## Player Character\n\n**name**: Grimjaw Ironforge\n**file**: party/grimjaw-ironforge.md\n"
		if err := os.WriteFile(filepath.Join(ws.Root, "campaigns", "the-hollow", "preferences.md"), []byte(prefs), 0o644); err != nil {
			t.Fatal(err)
		}
		put(t, ws, "lead", mailbox.Sent, startID, "---\nid: "+startID+"\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n")
		if ended {
			put(t, ws, "lead", mailbox.Done, endID, "---\nid: "+endID+"\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: Done.\nstate_saved: false\nnext_hook: More.\n---\n")
		}
		lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
		if err := lead.Resume(context.Background(), "lead"); err != nil {
			t.Fatal(err)
		}
		names, err := ws.Mailbox("lead").Names(mailbox.Outbox)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, n := range names {
			b, err := os.ReadFile(ws.Mailbox("lead").Path(mailbox.Outbox, n))
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, typeOf(msg(t, string(b))))
		}
		want := []string{ContextRefreshType}
		if ended {
			want = nil
		}
		if !slices.Equal(types, want) {
			t.Errorf("session ended %v: Resume sent %v, want %v", ended, types, want)
		}
	}
}

// TestTeamLeadJoined: an agent put back into parley.yaml while the runner
// runs gets the catch-up a restart gives, a [CONTEXT_REFRESH] with the
// last narrative it missed; the agents that never left get none, nor
// does anyone when no session is under way. (A tryout: a player left out
// while the bridge collapsed, then put back, was never told.)
func TestTeamLeadJoined(t *testing.T) {
	const (
		startID = "20261124-090000.000000Z-lead-a00000"
		narID   = "20261124-090001.000000Z-gm-d00001"
	)
	for _, underWay := range []bool{true, false} {
		ws := leadTableOf(t, "skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"+
			"  - {name: tilda, role: player, character: tilda-brannock, driver: command, run: [sh, player.sh]}\n"+
			"  - {name: grim, role: player, character: grimjaw-ironforge, driver: command, run: [sh, player.sh]}\n")
		if underWay {
			put(t, ws, "lead", mailbox.Sent, startID, "---\nid: "+startID+"\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n")
		}
		put(t, ws, "lead", mailbox.Done, narID, "---\nid: "+narID+"\nfrom: gm\nto: '*'\ntype: NARRATIVE\n---\nTHE BRIDGE COLLAPSES while Grim is away. Dust rises.\n")
		lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
		if err := lead.Joined(context.Background(), "lead", []string{"grim"}); err != nil {
			t.Fatal(err)
		}
		names, err := ws.Mailbox("lead").Names(mailbox.Outbox)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range names {
			b, err := os.ReadFile(ws.Mailbox("lead").Path(mailbox.Outbox, n))
			if err != nil {
				t.Fatal(err)
			}
			m := msg(t, string(b))
			to, _ := m.Header().Get("to")
			last, _ := m.Payload().Get("last_narrative_summary")
			got = append(got, typeOf(m)+" "+to+" "+last)
		}
		var want []string
		if underWay {
			want = []string{ContextRefreshType + " grim THE BRIDGE COLLAPSES while Grim is away."}
		}
		if !slices.Equal(got, want) {
			t.Errorf("session under way %v: Joined sent %q, want %q", underWay, got, want)
		}
	}
}

// TestTeamLeadPlainJournalEntry: bug (a GM's tryout): an AI player that
// answered the [JOURNAL_CHECKPOINT] in plain prose, without the
// [JOURNAL_ENTRY] tag, had its reply marked handled by the team lead and
// dropped: no entry, nobody told. The reply is the entry; one that
// cannot be written is the error (the reply kept in dead/ with it); a
// plain reply to anything else is not an entry.
func TestTeamLeadPlainJournalEntry(t *testing.T) {
	const (
		checkID = "20261124-090000.000000Z-lead-f00001"
		replyID = "20261124-090001.000000Z-tilda-f00002"
		otherID = "20261124-090000.000000Z-lead-f00003"
	)
	check := "---\nid: " + checkID + "\nfrom: lead\nto: tilda\ntype: JOURNAL_CHECKPOINT\ncampaign: the-hollow\nscene_number: \"001\"\nscene_slug: the-well\ntrigger: state_updated\n---\nWrite your journal entry.\n"
	plain := func(id, to string) string {
		return "---\nid: " + id + "\nfrom: tilda\nto: lead\nthread: " + to + "\nreply_to: " + to + "\n---\nDear journal: the well is poisoned.\n"
	}
	ws := leadTable(t)
	camp, err := campaigns.Find(ws.Root, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	put(t, ws, "lead", mailbox.Sent, checkID, check)
	put(t, ws, "lead", mailbox.Sent, otherID, "---\nid: "+otherID+"\nfrom: lead\nto: tilda\ntype: CONTEXT_REFRESH\n---\nRead again.\n")
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}

	// No sheet for Tilda: not written, and the error says so.
	_, err = lead.Handle(context.Background(), "lead", msg(t, plain(replyID, checkID)))
	if err == nil || !strings.Contains(err.Error(), "tilda answered the JOURNAL_CHECKPOINT "+checkID+" without a [JOURNAL_ENTRY]") {
		t.Errorf("Handle(a plain reply, no sheet) = %v, want an error naming the reply", err)
	}

	if err := os.WriteFile(camp.SheetPath("tilda-brannock"), []byte("# Tilda Brannock\n\n| **Hit Points** | 12/12 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := lead.Handle(context.Background(), "lead", msg(t, plain(replyID, checkID))); err != nil || len(out) != 0 {
		t.Fatalf("Handle(a plain reply to a checkpoint) = %v, %v; want nothing sent, no error", out, err)
	}
	got, _ := os.ReadFile(camp.JournalPath("tilda-brannock"))
	if !strings.Contains(string(got), "<!-- message "+replyID+" -->\n\n**What happened:** Dear journal: the well is poisoned.\n") {
		t.Errorf("tilda-brannock-journal.md after a plain reply to a checkpoint:\n%s", got)
	}
	if _, err := lead.Handle(context.Background(), "lead", msg(t, plain("20261124-090002.000000Z-tilda-f00004", otherID))); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(camp.JournalPath("tilda-brannock")); string(again) != string(got) {
		t.Errorf("a plain reply to a CONTEXT_REFRESH was written into the journal:\n%s", again)
	}
}

// TestTeamLeadPlainJournalEntryOnce: bug (review): any plain message of
// a player whose reply_to or thread was a [JOURNAL_CHECKPOINT] became a
// journal entry, any number of times: "Done, thanks." after the entry
// was a second one, and "Written." after a [JOURNAL_ENTRY] a junk one.
// A plain reply is the entry only when it replies to the checkpoint, is
// the player's first, and the player has no entry for it yet; anything
// else is noted, not written.
func TestTeamLeadPlainJournalEntryOnce(t *testing.T) {
	const (
		checkID  = "20261124-090000.000000Z-lead-f00001"
		replyID  = "20261124-090001.000000Z-tilda-f00002"
		check2ID = "20261124-090000.000000Z-lead-f00003"
		entryID  = "20261124-090001.000000Z-tilda-f00004"
	)
	checkpoint := func(id string) string {
		return "---\nid: " + id + "\nfrom: lead\nto: tilda\ntype: JOURNAL_CHECKPOINT\ncampaign: the-hollow\nscene_number: \"001\"\nscene_slug: the-well\ntrigger: state_updated\n---\nWrite your journal entry.\n"
	}
	plain := func(id, to, thread, body string) string {
		return "---\nid: " + id + "\nfrom: tilda\nto: lead\nthread: " + thread + "\nreply_to: " + to + "\n---\n" + body + "\n"
	}
	ws := leadTable(t)
	camp, err := campaigns.Find(ws.Root, "the-hollow")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(camp.SheetPath("tilda-brannock"), []byte("# Tilda Brannock\n\n| **Hit Points** | 12/12 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	put(t, ws, "lead", mailbox.Sent, checkID, checkpoint(checkID))
	put(t, ws, "lead", mailbox.Sent, check2ID, checkpoint(check2ID))
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	ctx := context.Background()

	first := plain(replyID, checkID, checkID, "Dear journal: the well is poisoned.")
	if _, note, err := lead.HandleNoted(ctx, "lead", msg(t, first)); err != nil || note != "" {
		t.Fatalf("HandleNoted(the first plain reply) = note %q, %v; want no note, no error", note, err)
	}
	put(t, ws, "lead", mailbox.Done, replyID, first)
	// The same message again (a retry) writes nothing twice, and is no
	// other reply.
	if _, note, err := lead.HandleNoted(ctx, "lead", msg(t, first)); err != nil || note != "" {
		t.Errorf("HandleNoted(the first plain reply again) = note %q, %v; want no note, no error", note, err)
	}
	want, _ := os.ReadFile(camp.JournalPath("tilda-brannock"))
	if !strings.Contains(string(want), "Dear journal") {
		t.Fatalf("journal after the first plain reply:\n%s", want)
	}

	for _, tt := range []struct{ name, text, note string }{
		{"a second plain reply", plain("20261124-090002.000000Z-tilda-f00005", checkID, checkID, "Done, thanks."), "replied to the JOURNAL_CHECKPOINT " + checkID + " before, with " + replyID},
		{"a reply in the thread, to the lead's answer", plain("20261124-090003.000000Z-tilda-f00006", "20261124-090002.500000Z-lead-f00007", checkID, "Thanks."), "no reply to it"},
		{"a message in the thread only", "---\nid: 20261124-090003.500000Z-tilda-f00009\nfrom: tilda\nto: lead\nthread: " + checkID + "\n---\nAll written.\n", "no reply to it"},
	} {
		_, note, err := lead.HandleNoted(ctx, "lead", msg(t, tt.text))
		if err != nil || !strings.Contains(note, tt.note) {
			t.Errorf("HandleNoted(%s) = note %q, %v; want a note saying %q", tt.name, note, err, tt.note)
		}
		if got, _ := os.ReadFile(camp.JournalPath("tilda-brannock")); string(got) != string(want) {
			t.Errorf("%s was written into the journal:\n%s", tt.name, got)
		}
	}

	// A proper [JOURNAL_ENTRY] (to the journal agent), then "Written."
	put(t, ws, "tilda", mailbox.Sent, entryID, "---\nid: "+entryID+"\nfrom: tilda\nto: journal\ntype: JOURNAL_ENTRY\nthread: "+check2ID+"\nreply_to: "+check2ID+"\n---\nThe well.\n")
	_, note, err := lead.HandleNoted(ctx, "lead", msg(t, plain("20261124-090004.000000Z-tilda-f00008", check2ID, check2ID, "Written.")))
	if err != nil || !strings.Contains(note, "sent its [JOURNAL_ENTRY] "+entryID) {
		t.Errorf("HandleNoted(Written. after a JOURNAL_ENTRY) = note %q, %v; want a note naming %s", note, err, entryID)
	}
	if got, _ := os.ReadFile(camp.JournalPath("tilda-brannock")); string(got) != string(want) {
		t.Errorf("Written. after a JOURNAL_ENTRY was written into the journal:\n%s", got)
	}

	// Two plain replies handled out of order: the later one is the
	// entry (the journal holds it), the earlier one then is not.
	const (
		check3ID = "20261124-090005.000000Z-lead-f0000a"
		earlyID  = "20261124-090006.000000Z-tilda-f0000b"
		lateID   = "20261124-090007.000000Z-tilda-f0000c"
	)
	put(t, ws, "lead", mailbox.Sent, check3ID, checkpoint(check3ID))
	late := plain(lateID, check3ID, check3ID, "Dear journal: the mill is shut.")
	if _, note, err := lead.HandleNoted(ctx, "lead", msg(t, late)); err != nil || note != "" {
		t.Fatalf("HandleNoted(the later plain reply) = note %q, %v; want no note, no error", note, err)
	}
	put(t, ws, "lead", mailbox.Done, lateID, late)
	want, _ = os.ReadFile(camp.JournalPath("tilda-brannock"))
	_, note, err = lead.HandleNoted(ctx, "lead", msg(t, plain(earlyID, check3ID, check3ID, "Dear journal: the mill.")))
	if err != nil || !strings.Contains(note, "journal holds its entry "+lateID) {
		t.Errorf("HandleNoted(the earlier plain reply, handled last) = note %q, %v; want a note naming %s", note, err, lateID)
	}
	if got, _ := os.ReadFile(camp.JournalPath("tilda-brannock")); string(got) != string(want) {
		t.Errorf("the earlier plain reply, handled last, was written into the journal:\n%s", got)
	}
}

// TestTeamLeadSessionEndRepeat: bug (a GM's tryout): a [SESSION_END]
// sent twice (the command run again from the shell's history) closed the
// session twice: every player was asked for its journal twice, each AI
// player paid twice. A second end of a session already ended, no start
// between, is a repeat: nothing sent, a note; an end after a new start
// is not.
func TestTeamLeadSessionEndRepeat(t *testing.T) {
	const (
		startID  = "20261124-090000.000000Z-lead-a00000"
		told     = "20261124-090001.000000Z-gm-d00001"
		firstID  = "20261124-090002.000000Z-gm-e00001"
		secondID = "20261124-090003.000000Z-gm-e00002"
		start2ID = "20261124-090004.000000Z-lead-a00001"
		told2    = "20261124-090005.000000Z-gm-d00002"
		thirdID  = "20261124-090006.000000Z-gm-e00003"
	)
	end := func(id string) string {
		return "---\nid: " + id + "\nfrom: gm\nto: lead\ntype: SESSION_END\ncampaign: the-hollow\nsummary: The well is poisoned.\nstate_saved: false\nnext_hook: Who did it?\n---\n"
	}
	start := func(id string) string {
		return "---\nid: " + id + "\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\ncampaign: the-hollow\n---\n"
	}
	narrative := func(id string) string {
		return "---\nid: " + id + "\nfrom: gm\nto: '*'\ntype: NARRATIVE\nscene_number: \"001\"\nscene_slug: the-well\n---\nThe well is poisoned.\n"
	}
	checkpoints := func(out []*mailbox.Message) int {
		n := 0
		for _, m := range out {
			if typeOf(m) == JournalCheckpointType {
				n++
			}
		}
		return n
	}
	ws := leadTable(t)
	put(t, ws, "lead", mailbox.Sent, startID, start(startID))
	put(t, ws, "lead", mailbox.Done, told, narrative(told))
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	ctx := context.Background()

	put(t, ws, "lead", mailbox.Inbox, secondID, end(secondID)) // both sent before the run
	put(t, ws, "lead", mailbox.Cur, firstID, end(firstID))
	out, note, err := lead.HandleNoted(ctx, "lead", msg(t, end(firstID)))
	if err != nil || checkpoints(out) != 2 || note != "" {
		t.Fatalf("HandleNoted(the first end) = %d checkpoints, note %q, %v; want 2, no note, no error", checkpoints(out), note, err)
	}
	// Handled again after a crash, the first end is no repeat of itself.
	if out, note, _ := lead.HandleNoted(ctx, "lead", msg(t, end(firstID))); checkpoints(out) != 2 || note != "" {
		t.Errorf("HandleNoted(the first end again) = %d checkpoints, note %q; want 2, no note", checkpoints(out), note)
	}
	if err := os.Rename(ws.Mailbox("lead").Path(mailbox.Cur, mailbox.FileName(firstID)), ws.Mailbox("lead").Path(mailbox.Done, mailbox.FileName(firstID))); err != nil {
		t.Fatal(err)
	}
	out, note, err = lead.HandleNoted(ctx, "lead", msg(t, end(secondID)))
	if err != nil || len(out) != 0 || !strings.Contains(note, "a repeat: the session ended already with "+firstID) {
		t.Errorf("HandleNoted(the second end) = %d messages, note %q, %v; want none, a note naming %s", len(out), note, err, firstID)
	}

	// A new session started since: its end is no repeat.
	put(t, ws, "lead", mailbox.Sent, start2ID, start(start2ID))
	put(t, ws, "lead", mailbox.Done, told2, narrative(told2))
	if out, note, err := lead.HandleNoted(ctx, "lead", msg(t, end(thirdID))); err != nil || checkpoints(out) != 2 || note != "" {
		t.Errorf("HandleNoted(the end of the next session) = %d checkpoints, note %q, %v; want 2, no note", checkpoints(out), note, err)
	}
}

// TestTeamLeadNoJoinOfOtherThreads: bug (a GM's tryout): the game
// master's plain "Noted" to a [PLAYER_ANSWER] (in the thread of its
// [ASK_PLAYER]) made the team lead send it an empty, deprecated
// [PLAYER_RESPONSES] ("0 of 0 answered."): any message the team lead
// received began a join. Only an [AWAIT_PLAYERS] does, and only a
// prompted player's reply is an answer of it: the game master's word in
// an await's thread, before or after the join, is filed.
func TestTeamLeadNoJoinOfOtherThreads(t *testing.T) {
	const (
		askID  = "20261124-110000.000000Z-gm-a10001"
		notedA = "20261124-110001.000000Z-gm-a10002"
		notedB = "20261124-110002.000000Z-gm-a10003"
	)
	ws := leadTable(t)
	lead := &TeamLead{Campaigns: Campaigns{Workspace: ws.Root}, Workspace: ws, Wait: time.Minute}
	ctx := context.Background()
	put(t, ws, "lead", mailbox.Done, askID, "---\nid: "+askID+"\nfrom: gm\nto: lead\ntype: ASK_PLAYER\nquestion: Go down?\n---\n")
	noted := "---\nid: " + notedA + "\nfrom: gm\nto: lead\nthread: " + askID + "\nreply_to: 20261124-110000.500000Z-lead-a10009\n---\nNoted: you wait until noon.\n"
	if out, err := lead.Handle(ctx, "lead", msg(t, noted)); err != nil || len(out) != 0 {
		t.Errorf("Handle(the gm's reply in an ASK_PLAYER's thread) = %d messages, %v; want none", len(out), err)
	}

	midJoin(t, ws) // Tilda answered, Grim not yet
	gmSays := "---\nid: " + notedB + "\nfrom: gm\nto: lead\nthread: " + awaitID + "\n---\nTake your time.\n"
	if out, err := lead.Handle(ctx, "lead", msg(t, gmSays)); err != nil || len(out) != 0 {
		t.Errorf("Handle(the gm's word in an await's thread) = %d messages, %v; want none", len(out), err)
	}
	put(t, ws, "lead", mailbox.Cur, answerG, reply(answerG, "grim", promptG, "Grim ducks."))
	out, err := lead.Handle(ctx, "lead", msg(t, reply(answerG, "grim", promptG, "Grim ducks.")))
	if err != nil || len(out) != 1 || !strings.Contains(string(out[0].Body), "2 of 2 answered.") {
		t.Fatalf("Handle(the last answer) = %v, %v; want the join, 2 of 2", out, err)
	}
	joinID, _ := out[0].Header().Get("id")
	put(t, ws, "lead", mailbox.Sent, joinID, string(out[0].Bytes()))
	if out, err := lead.Handle(ctx, "lead", msg(t, gmSays)); err != nil || len(out) != 0 {
		t.Errorf("Handle(the gm's word after the join) = %d messages, %v; want none (no late answer of the gm's)", len(out), err)
	}
}
