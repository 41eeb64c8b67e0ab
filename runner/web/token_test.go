package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTokenKept guards the token of a player's phone. Bug: the cookie
// that keeps the token ended with the browser's session, so a phone that
// closed its browser was answered "401 open the address parley serve
// printed, with its token", a terminal the friend at the seat never saw.
// The cookie is kept cookieLife after the page last opened with it, and
// a page asked for without the token (or with another serve's) says what
// a player does: ask the host for the seat's link.
func TestTokenKept(t *testing.T) {
	s := newServer(t, newWorkspace(t), Options{Spectator: true})
	// A week of sessions at least, whatever cookieLife says.
	const week = 7 * 24 * 60 * 60
	rec := get(t, s.Handler(), "/story?token=0123456789abcdef-token", false)
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].MaxAge < week {
		t.Errorf("?token= sets cookies %v, want one kept a week at least", c)
	}
	rec = get(t, s.Handler(), "/story", true)
	if c := rec.Result().Cookies(); rec.Code != 200 || len(c) != 1 || c[0].MaxAge < week || c[0].Value != "0123456789abcdef-token" {
		t.Errorf("a page opened with the cookie = %d setting %v, want 200 and the cookie kept longer", rec.Code, c)
	}
	for _, tt := range []struct {
		name, cookie string
		says         []string
	}{
		{"no token", "", []string{"ask the host for your seat's link", "parley serve printed"}},
		{"another serve's token", "an-earlier-serve-token", []string{"not this parley serve's", "ask the host for your seat's link again"}},
	} {
		req := httptest.NewRequest(http.MethodGet, "/story", nil)
		req.Host = "127.0.0.1:7878"
		if tt.cookie != "" {
			req.AddCookie(&http.Cookie{Name: CookieName(req.Host), Value: tt.cookie})
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		for _, want := range tt.says {
			if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s: GET /story = %d %q, want 401 saying %q", tt.name, rec.Code, rec.Body.String(), want)
			}
		}
	}
}
