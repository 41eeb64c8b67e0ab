package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// postAct posts form to /act of s, with the token and the page's CSRF
// token, and returns the status and what the server said.
func postAct(t *testing.T, s *Server, form url.Values) (int, string) {
	t.Helper()
	form.Set("csrf", s.csrf)
	req := httptest.NewRequest(http.MethodPost, "/act", strings.NewReader(form.Encode()))
	req.Host = "127.0.0.1:7878"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7878"), Value: "0123456789abcdef-token"})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestPlayerSeat guards the seat served to a player (parley serve
// --spectator --as AGENT). Bug: the only browser seat was the host's
// server, whose Story page opened on the game master's notes, whose
// timeline showed every message, and which replied as the gm when a
// form said agent=gm; --spectator had no seat at all. A player's server
// serves the story as the players know it and the seat, and refuses
// (403, saying why) whatever is sent as an agent not the seat's, or about
// a message not in the seat's inboxes (for a question: one that never
// came to them).
func TestPlayerSeat(t *testing.T) {
	ws := newWorkspace(t)
	mine := post(t, ws, "gm", "aria", "For you.\n")
	filed := post(t, ws, "gm", "aria", "Answered at aria's other device.\n")
	theirs := post(t, ws, "aria", "gm", "For the gm alone.\n")
	for id, state := range map[string]string{mine: mailbox.Inbox, filed: mailbox.Done} {
		if err := os.Rename(ws.Mailbox("gm").Path(mailbox.Outbox, id+".md"), ws.Mailbox("aria").Path(state, id+".md")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(ws.Mailbox("aria").Path(mailbox.Outbox, theirs+".md"), ws.Mailbox("gm").Path(mailbox.Inbox, theirs+".md")); err != nil {
		t.Fatal(err)
	}
	act := &fakeActions{}
	s := newServer(t, ws, Options{Spectator: true, Player: true, Person: "aria", Actions: act})
	for path, want := range map[string]int{"/": 200, "/story": 200, "/seat": 200, "/lanes": 404, "/agents": 404, "/plan": 404, "/message?n=0": 404, "/rows?before=1": 404} {
		if got := get(t, s.Handler(), path, true).Code; got != want {
			t.Errorf("GET %s = %d, want %d", path, got, want)
		}
	}
	seat := get(t, s.Handler(), "/seat", true).Body.String()
	if !strings.Contains(seat, "For you.") || strings.Contains(seat, "For the gm alone.") {
		t.Errorf("the player's Seat page does not show aria's inbox alone:\n%s", seat)
	}
	if !strings.Contains(seat, `href="/seat"`) || strings.Contains(seat, `href="/lanes"`) {
		t.Errorf("the player's navigation is not Story and Seat:\n%s", seat)
	}
	for _, tt := range []struct {
		name string
		form url.Values
		want int
		says string
	}{
		{"reply as the gm", url.Values{"kind": {"reply"}, "id": {theirs}, "agent": {"gm"}, "text": {"You all find 1000 gp."}}, 403, "it sends nothing as gm"},
		{"reply as nobody named", url.Values{"kind": {"reply"}, "id": {theirs}, "text": {"x"}}, 403, "sends nothing as"},
		{"done as the gm", url.Values{"kind": {"done"}, "id": {theirs}, "agent": {"gm"}}, 403, "it sends nothing as gm"},
		{"done as aria, of the gm's", url.Values{"kind": {"done"}, "id": {theirs}, "agent": {"aria"}}, 403, "not in the inbox of aria"},
		{"answer the gm's", url.Values{"kind": {"answer"}, "id": {theirs}, "text": {"1"}}, 403, "not allowed: " + theirs + " was not sent to aria"},
		// One that came to aria and waits no more (answered at her other
		// device, a page not refreshed) is the seat's to tell, as the
		// host's seat tells it: not refused here.
		{"answer one aria's done/ holds", url.Values{"kind": {"answer"}, "id": {filed}, "text": {"1"}}, 200, ""},
		{"approve as the gm", url.Values{"kind": {"approve"}, "id": {theirs}, "agent": {"gm"}}, 403, "it sends nothing as gm"},
		{"approve as aria, of the gm's", url.Values{"kind": {"approve"}, "id": {theirs}, "agent": {"aria"}}, 403, "not in the inbox of aria"},
		{"retry", url.Values{"kind": {"retry"}, "n": {"0"}}, 403, "the host's"},
		{"reply as aria", url.Values{"kind": {"reply"}, "id": {mine}, "agent": {"aria"}, "text": {"Thanks."}}, 200, ""},
		{"done as aria", url.Values{"kind": {"done"}, "id": {mine}, "agent": {"aria"}}, 200, ""},
		{"roll", url.Values{"kind": {"roll"}, "dice": {"1d20"}}, 200, ""},
	} {
		code, said := postAct(t, s, tt.form)
		if code != tt.want || !strings.Contains(said, tt.says) {
			t.Errorf("%s: POST /act = %d %q, want %d saying %q", tt.name, code, said, tt.want, tt.says)
		}
	}
	want := []string{"answer " + filed + " 1", "reply " + mine + " aria  Thanks.\n", "done " + mine + " aria", "seat /roll 1d20"}
	if strings.Join(act.asked, "|") != strings.Join(want, "|") {
		t.Errorf("the actions were asked\n%q\nwant\n%q", act.asked, want)
	}
	// The story as the players know it, never the game master's view.
	if body := get(t, s.Handler(), "/story?view=gm", true).Body.String(); strings.Contains(body, "game master's view</strong>") {
		t.Errorf("the player's Story page offers the game master's view:\n%s", body)
	}
}
