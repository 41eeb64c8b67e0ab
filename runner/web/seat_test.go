package web

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// tableWorkspace makes a D&D table: the person you, the team lead, the
// gm, and mira, whose character no program plays, with a campaign. It
// returns the workspace and a function that writes a message (its text
// after the header) from the gm into the inboxes of to.
func tableWorkspace(t *testing.T) (*workspace.Workspace, func(n int, to []string, text string) string) {
	t.Helper()
	root := t.TempDir()
	cfg := `agents:
  - {name: you, role: human}
  - {name: lead, role: team-lead, driver: command, run: [true]}
  - {name: gm, role: gm, driver: command, run: [true]}
  - {name: mira, role: human, character: mira-quickfoot}
`
	if err := os.WriteFile(filepath.Join(root, workspace.ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeDirs(); err != nil {
		t.Fatal(err)
	}
	if _, err := campaigns.New(root, "the-test-run"); err != nil {
		t.Fatal(err)
	}
	write := func(n int, to []string, text string) string {
		t.Helper()
		id := fmt.Sprintf("20261129-1000%02d.000000Z-gm-%06x", n, n)
		data := "---\nid: " + id + "\nfrom: gm\nto: [" + strings.Join(to, ", ") + "]\n---\n" + text
		for _, a := range to {
			if err := os.WriteFile(ws.Mailbox(a).Path(mailbox.Inbox, id+".md"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	return ws, write
}

// TestSeatTellsStory guards the Seat page at a D&D table. Bug: every
// [NARRATIVE] stayed under "Waiting for you" with a reply box (which sent
// an untyped message to the gm), "mark handled" filed the person's copy
// alone, so the copy in the character's inbox came back as a second
// article; a [SESSION_END] showed an empty body; over a night the page
// held 757 stale articles. As parley play decides it (campaigns.
// SeatAnswerer), what asks nothing is told once, with no form, and filed
// in every inbox of the seat holding it; a session's end shows its
// summary, next hook, and that the gm did not save; the story told is
// the newest storyShown messages.
func TestSeatTellsStory(t *testing.T) {
	ws, write := tableWorkspace(t)
	narr := write(1, []string{"you", "mira"}, "[NARRATIVE]\nscene_number: \"001\"\n\nThe bell tolls under the water.\n")
	ask := write(2, []string{"you"}, "[ASK_PLAYER]\nheader: Door\nquestion: Which door?\noptions: [left, right]\n")
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act, Person: "you", Prompted: "mira"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	if n := strings.Count(page, `<article class="waiting`); n != 1 || !strings.Contains(page, `class="waiting k-ask" data-id="`+ask+`"`) {
		t.Errorf("GET /seat has %d waiting, want the question alone:\n%s", n, page)
	}
	if strings.Contains(page, "your answer (parley reply)") {
		t.Errorf("GET /seat offers a reply to what asks nothing:\n%s", page)
	}
	if n := strings.Count(page, `data-id="`+narr+`"`); n != 1 || !strings.Contains(page, "The bell tolls under the water.") {
		t.Errorf("GET /seat tells the narrative in both inboxes %d times, want once:\n%s", n, page)
	}
	if strings.Contains(page, `data-id="`+ask+`" data-received`) {
		t.Errorf("GET /seat marks the question to be filed once shown:\n%s", page)
	}
	// The session ends: the question it leaves unanswered is told so
	// (TestSeatPastQuestion), not asked.
	end := write(3, []string{"you"}, "[SESSION_END]\nsummary: The bell is silent for tonight.\nstate_saved: false\nnext_hook: \"Something vast sleeps beneath the pool.\"\n")
	page = get(t, s.Handler(), "/seat", true).Body.String()
	if strings.Contains(page, `<article class="waiting`) || !strings.Contains(page, "From the last session, unanswered: Which door?") {
		t.Errorf("GET /seat after the session's end asks its question still:\n%s", page)
	}
	for _, w := range []string{"The bell is silent for tonight.", "Next time: Something vast sleeps beneath the pool.", "did not save the story (state_saved: false)"} {
		if !strings.Contains(page, w) {
			t.Errorf("GET /seat's [SESSION_END] lacks %q:\n%s", w, page)
		}
	}
	// Filed once the page says it showed them (never on a GET, which a
	// prefetch or a tab in the background makes): what it tells from an
	// inbox, not the question.
	if len(act.asked) > 0 {
		t.Errorf("GET /seat asked the actions %q, want nothing filed before the page says it showed it", act.asked)
	}
	if !strings.Contains(page, `data-id="`+narr+`" data-received="true"`) {
		t.Errorf("GET /seat does not mark the narrative as to be filed once shown:\n%s", page)
	}
	if code, said := postAct(t, s, map[string][]string{"kind": {"shown"}, "ids": {narr + " " + ask + " " + end}}); code != 200 {
		t.Errorf("kind shown: %d %q", code, said)
	}
	want := []string{"shown " + narr + " you,mira", "shown " + ask + " you", "shown " + end + " you"}
	if strings.Join(act.asked, "|") != strings.Join(want, "|") {
		t.Errorf("the actions were asked\n%q\nwant\n%q", act.asked, want)
	}
	// A night's story: the page tells the newest storyShown, filed or
	// not, and says that older ones are left out.
	for i := 10; i < 60; i++ {
		id := write(i, []string{"you"}, fmt.Sprintf("[NARRATIVE]\n\nPart %d.\n", i))
		if i < 40 { // filed already
			if err := os.Rename(ws.Mailbox("you").Path(mailbox.Inbox, id+".md"), ws.Mailbox("you").Path(mailbox.Done, id+".md")); err != nil {
				t.Fatal(err)
			}
		}
	}
	page = get(t, s.Handler(), "/seat", true).Body.String()
	if n := strings.Count(page, `<article class="told`); n != storyShown || !strings.Contains(page, "Part 59.") || strings.Contains(page, "Part 29.") || !strings.Contains(page, "Earlier messages are not shown here") {
		t.Errorf("GET /seat after 50 narratives tells %d, want the newest %d and that earlier ones are left out:\n%s", n, storyShown, page)
	}
}

// TestSeatNoRunner guards a table no runner routes (parley run stopped):
// the Seat page accepted answers without a word, which then waited in an
// outbox. It says no runner routes the table, and an answer sent says
// where it waits.
func TestSeatNoRunner(t *testing.T) {
	ws, write := tableWorkspace(t)
	ask := write(1, []string{"you"}, "[ASK_PLAYER]\nquestion: Which door?\noptions: [left, right]\n")
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act, Person: "you", Prompted: "mira"})
	if page := get(t, s.Handler(), "/seat", true).Body.String(); !strings.Contains(page, "No runner routes this table now") {
		t.Errorf("GET /seat with no runner does not say so:\n%s", page)
	}
	code, said := postAct(t, s, map[string][]string{"kind": {"answer"}, "id": {ask}, "text": {"1"}})
	if code != 200 || !strings.Contains(said, "no runner routes this table") {
		t.Errorf("an answer with no runner: %d %q, want 200 saying no runner routes the table", code, said)
	}
	// What only shows sends nothing, as the seat decides it (a line it
	// showed), not a list of the page's own: nothing to say of a runner.
	act.shows = []string{"/look"}
	if code, said := postAct(t, s, map[string][]string{"kind": {"seat"}, "line": {"/look"}}); code != 200 || strings.Contains(said, "no runner routes this table") {
		t.Errorf("a seat line that only showed, with no runner: %d %q, want 200 saying nothing of a runner", code, said)
	}
	if code, said := postAct(t, s, map[string][]string{"kind": {"seat"}, "line": {"/status"}}); code != 200 || !strings.Contains(said, "no runner routes this table") {
		t.Errorf("a seat line the seat says sent something, with no runner: %d %q, want 200 saying no runner routes the table", code, said)
	}
}

// TestMarkdownTableAlignClass guards a campaign file's table with aligned
// columns on the Story page. Bug: goldmark wrote style="text-align:center"
// on each cell, which the pages' own Content-Security-Policy (style-src
// 'self') refuses: an error in the console per cell, the alignment lost.
// Each aligned cell has a class instead.
func TestMarkdownTableAlignClass(t *testing.T) {
	for name, got := range map[string]string{
		"message": string(markdown([]byte("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n"))),
		"file":    string(markdownFile([]byte("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n"))),
	} {
		if strings.Contains(got, "style=") {
			t.Errorf("%s: a table renders a style attribute:\n%s", name, got)
		}
		for _, w := range []string{`<th class="align-left">a</th>`, `<td class="align-center">2</td>`, `<td class="align-right">3</td>`} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: a table lacks %s:\n%s", name, w, got)
			}
		}
	}
}

// TestSeatTellsAllItFiles guards a Seat page opened after a night away.
// Bug: the page filed every unread message that asks nothing but told
// only the newest storyShown: a tab closed through 50 narratives showed
// 30, filed all 50, and 20 were never told. Whatever is filed is told.
func TestSeatTellsAllItFiles(t *testing.T) {
	ws, write := tableWorkspace(t)
	old := write(1, []string{"you"}, "[NARRATIVE]\n\nBefore the night.\n")
	if err := os.Rename(ws.Mailbox("you").Path(mailbox.Inbox, old+".md"), ws.Mailbox("you").Path(mailbox.Done, old+".md")); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 60; i++ {
		write(i, []string{"you"}, fmt.Sprintf("[NARRATIVE]\n\nPart %d.\n", i))
	}
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act, Person: "you", Prompted: "mira"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	ids := regexp.MustCompile(`data-id="([^"]+)" data-received="true"`).FindAllStringSubmatch(page, -1)
	var shown []string
	for _, m := range ids {
		shown = append(shown, m[1])
	}
	if code, said := postAct(t, s, map[string][]string{"kind": {"shown"}, "ids": {strings.Join(shown, " ")}}); code != 200 {
		t.Errorf("kind shown: %d %q", code, said)
	}
	var untold []int
	for i := 10; i < 60; i++ {
		if !strings.Contains(page, fmt.Sprintf("Part %d.", i)) {
			untold = append(untold, i)
		}
	}
	if len(untold) > 0 || len(act.asked) != 50 {
		t.Errorf("GET /seat with 50 unread narratives filed %d and did not tell parts %v", len(act.asked), untold)
	}
	if strings.Contains(page, "Before the night.") || !strings.Contains(page, "Earlier messages are not shown here") {
		t.Errorf("GET /seat with 50 unread narratives tells more history than storyShown allows, or does not say it left some out:\n%s", page)
	}
}

// TestSeatPastEnd guards an earlier session's [SESSION_END] at the Seat
// page: one a session run with no seat left unread, or one git brought
// from another host. Bug: the page said "The session is over." of it, as
// if the session under way had ended, where parley play shows it as past
// and goes on. agents.PastEnd decides, for both: an end is past once a
// session was started after it, or its sender asked the person something
// since; a closing narrative leaves it the session's own.
func TestSeatPastEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(ws *workspace.Workspace, write func(n int, to []string, text string) string)
		past  bool
	}{
		{"a question after it", func(ws *workspace.Workspace, write func(int, []string, string) string) {
			write(2, []string{"you"}, "[ASK_PLAYER]\nquestion: Which door?\noptions: [left, right]\n")
		}, true},
		{"a session started after it", func(ws *workspace.Workspace, write func(int, []string, string) string) {
			id := "20261129-100002.000000Z-lead-000002"
			data := "---\nid: " + id + "\nfrom: lead\nto: gm\n---\n[SESSION_COMMAND]\ncommand: start\n"
			if err := os.WriteFile(ws.Mailbox("gm").Path(mailbox.Done, id+".md"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a closing narrative after it", func(ws *workspace.Workspace, write func(int, []string, string) string) {
			write(2, []string{"you"}, "[NARRATIVE]\n\nThe lamps go out.\n")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, write := tableWorkspace(t)
			end := write(1, []string{"you"}, "[SESSION_END]\nsummary: The bell is silent for tonight.\nstate_saved: true\n")
			tc.after(ws, write)
			s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you", Prompted: "mira"})
			page := get(t, s.Handler(), "/seat", true).Body.String()
			if !strings.Contains(page, `data-id="`+end+`"`) || !strings.Contains(page, "The bell is silent for tonight.") {
				t.Fatalf("GET /seat does not tell the end %s and its summary:\n%s", end, page)
			}
			over, past := strings.Contains(page, "The session is over."), strings.Contains(page, "An earlier session's end: a newer session is under way.")
			if past != tc.past || over == tc.past {
				t.Errorf("GET /seat says the session is over: %v, an earlier session's end: %v; want past %v:\n%s", over, past, tc.past, page)
			}
		})
	}
}

// TestSeatPastQuestion guards a question a session that has ended left
// unanswered (a tryout: a prompt left open at /end was asked again at the
// next parley play, and the person's first line answered it). As parley
// play does (agents.PastQuestion decides, for both), the page tells it
// from the last session, unanswered, with no form, files it once shown,
// and tells it so once filed.
func TestSeatPastQuestion(t *testing.T) {
	ws, write := tableWorkspace(t)
	ask := write(1, []string{"you"}, "[ASK_PLAYER]\nheader: Door\nquestion: Which door?\noptions: [left, right]\n")
	prompt := write(2, []string{"mira"}, "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\n\nThe door rattles. What do you do?\n")
	end := write(3, []string{"you"}, "[SESSION_END]\nsummary: The bell is silent for tonight.\nstate_saved: true\n")
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act, Person: "you", Prompted: "mira"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	if strings.Contains(page, `<article class="waiting`) {
		t.Errorf("GET /seat asks what an ended session left unanswered:\n%s", page)
	}
	if n := strings.Count(page, "From the last session, unanswered"); n != 2 || !strings.Contains(page, "From the last session, unanswered: Which door?") {
		t.Errorf("GET /seat tells %d questions from the last session, unanswered, want the question and the prompt:\n%s", n, page)
	}
	for _, id := range []string{ask, prompt} {
		if !strings.Contains(page, `data-id="`+id+`" data-received="true"`) {
			t.Errorf("GET /seat does not file %s once shown:\n%s", id, page)
		}
	}
	if code, said := postAct(t, s, map[string][]string{"kind": {"shown"}, "ids": {ask + " " + prompt + " " + end}}); code != 200 {
		t.Errorf("kind shown: %d %q", code, said)
	}
	want := []string{"shown " + ask + " you", "shown " + prompt + " mira", "shown " + end + " you"}
	if strings.Join(act.asked, "|") != strings.Join(want, "|") {
		t.Errorf("the actions were asked\n%q\nwant\n%q", act.asked, want)
	}
	// Filed: the story still tells it unanswered, not answered.
	for _, c := range []struct{ agent, id string }{{"you", ask}, {"mira", prompt}, {"you", end}} {
		if err := os.Rename(ws.Mailbox(c.agent).Path(mailbox.Inbox, c.id+".md"), ws.Mailbox(c.agent).Path(mailbox.Done, c.id+".md")); err != nil {
			t.Fatal(err)
		}
	}
	page = get(t, s.Handler(), "/seat", true).Body.String()
	if strings.Contains(page, "Which door? (answered)") || !strings.Contains(page, "From the last session, unanswered: Which door?") {
		t.Errorf("GET /seat does not tell the filed question as unanswered:\n%s", page)
	}
}

// TestSeatTellsSaid guards what the person's character said at the web
// seat (README, your seat: what your character says at one seat shows at
// the others too). Bug (tryout G, W3): the Seat page told only what came
// to the seat's inboxes, so a say from parley play, and the page's own
// says once it was reloaded, were never on it, though parley play shows
// the web seat's. As parley play decides it (campaigns.SeatSaid), the
// [PLAYER_TO_GM] and [PLAYER_TO_PLAYER] of the character's agent, in its
// outbox/ or sent/, are told in their place; an answer (reply_to:), whose
// question the story tells, is not.
func TestSeatTellsSaid(t *testing.T) {
	ws, write := tableWorkspace(t)
	narr := write(1, []string{"you", "mira"}, "[NARRATIVE]\nscene_number: \"001\"\n\nThe bell tolls under the water.\n")
	box := ws.Mailbox("mira")
	put := func(state, id, header, text string) {
		t.Helper()
		data := "---\nid: " + id + "\nfrom: mira\nto: gm\n" + header + "---\n" + text
		if err := os.WriteFile(box.Path(state, id+".md"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sent := "20261129-100002.000000Z-mira-000002"
	put(mailbox.Sent, sent, "", "[PLAYER_TO_GM]\ntype: ACTION\ncharacter: mira-quickfoot\n\nTERMINAL-SAY Mira checks her purse.\n")
	waits := "20261129-100003.000000Z-mira-000003"
	put(mailbox.Outbox, waits, "", "[PLAYER_TO_PLAYER]\ncharacter: mira-quickfoot\nto: tor-ashgrove\n\nWHISPER psst.\n")
	answer := "20261129-100004.000000Z-mira-000004"
	put(mailbox.Sent, answer, "reply_to: 20261129-100000.000000Z-gm-000000\n", "[PLAYER_TO_GM]\ntype: REACTION\ncharacter: mira-quickfoot\n\nANSWER I duck.\n")
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you", Prompted: "mira"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	for _, want := range []string{
		"Said in character: mira-quickfoot, action, to the game master",
		"TERMINAL-SAY Mira checks her purse.",
		"Said in character: mira-quickfoot to tor-ashgrove",
		"WHISPER psst.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /seat lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "ANSWER I duck.") {
		t.Errorf("GET /seat tells an answer as said:\n%s", page)
	}
	// In their place: newest first, the whisper above the say above the
	// narrative; and not filed as shown (they are in no inbox).
	if i, j, k := strings.Index(page, `data-id="`+waits+`"`), strings.Index(page, `data-id="`+sent+`"`), strings.Index(page, `data-id="`+narr+`"`); i < 0 || !(i < j && j < k) {
		t.Errorf("GET /seat tells the whisper at %d, the say at %d, the narrative at %d: want them newest first", i, j, k)
	}
	if m := regexp.MustCompile(`data-id="` + sent + `"[^>]*data-received`).FindString(page); m != "" {
		t.Errorf("GET /seat marks the say to be filed: %s", m)
	}
	// A program that plays the character (no Prompted): nothing of its
	// agent is the person's.
	s = newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you"})
	if page := get(t, s.Handler(), "/seat", true).Body.String(); strings.Contains(page, "TERMINAL-SAY") {
		t.Errorf("GET /seat with no Prompted tells the character agent's say:\n%s", page)
	}
}
