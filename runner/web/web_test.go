package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// newWorkspace makes a workspace of gm and aria with the given journal
// entries.
func newWorkspace(t *testing.T, entries ...workspace.Entry) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Init(filepath.Join(t.TempDir(), "ws"), workspace.AgentsNamed("gm", "aria"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(ws.JournalPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := workspace.AppendJournal(ws.JournalPath(), entries...); err != nil {
		t.Fatal(err)
	}
	return ws
}

// post writes a message into from's outbox and records its delivery, as
// a runner would, with the body given.
func post(t *testing.T, ws *workspace.Workspace, from, to, body string) string {
	t.Helper()
	m := mailbox.New(nil)
	m.Set("to", to)
	m.SetBody([]byte(body))
	id, _, err := ws.Mailbox(from).Post(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := workspace.AppendJournal(ws.JournalPath(), workspace.Entry{Time: time.Now().UTC().Format(mailbox.TimeFormat), ID: id, From: from, To: []string{to}, Outcome: workspace.Delivered}); err != nil {
		t.Fatal(err)
	}
	return id
}

// fakeActions records what the page asked; Seat reports that a line in
// shows only showed something.
type fakeActions struct {
	asked []string
	shows []string
}

func (f *fakeActions) Answer(_ context.Context, id, text string) (string, error) {
	f.asked = append(f.asked, "answer "+id+" "+text)
	return "answered " + id + "\n", nil
}
func (f *fakeActions) Seat(_ context.Context, line string) (string, bool, error) {
	f.asked = append(f.asked, "seat "+line)
	return "", slices.Contains(f.shows, line), nil
}
func (f *fakeActions) Decide(_ context.Context, id, agent string, approve bool, feedback string) (string, error) {
	f.asked = append(f.asked, fmt.Sprintf("decide %s %s %v %s", id, agent, approve, feedback))
	return "", nil
}
func (f *fakeActions) Reply(_ context.Context, id, agent, decision, body string) (string, error) {
	f.asked = append(f.asked, "reply "+id+" "+agent+" "+decision+" "+body)
	return "", nil
}
func (f *fakeActions) Done(_ context.Context, id, agent string) (string, error) {
	f.asked = append(f.asked, "done "+id+" "+agent)
	return "", nil
}
func (f *fakeActions) Shown(_ context.Context, copies map[string][]string) error {
	for _, id := range slices.Sorted(maps.Keys(copies)) {
		f.asked = append(f.asked, "shown "+id+" "+strings.Join(copies[id], ","))
	}
	return nil
}
func (f *fakeActions) Retry(_ context.Context, target string) (string, error) {
	f.asked = append(f.asked, "retry "+target)
	return "", nil
}

func newServer(t *testing.T, ws *workspace.Workspace, opts Options) *Server {
	t.Helper()
	opts.Workspace = ws
	opts.Token = "0123456789abcdef-token"
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, h http.Handler, target string, cookie bool) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = "127.0.0.1:7878"
	if cookie {
		req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7878"), Value: "0123456789abcdef-token"})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPages(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "The door creaks open.\n")
	s := newServer(t, ws, Options{})
	for _, p := range []string{"/", "/lanes", "/agents", "/story", "/story?view=spectator", "/plan", "/seat", "/message?n=0", "/rows?before=1", "/static/app.js", "/static/style.css", "/agents?part=live"} {
		rec := get(t, s.Handler(), p, true)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200: %s", p, rec.Code, rec.Body)
		}
	}
	if rec := get(t, s.Handler(), "/message?n=0", true); !strings.Contains(rec.Body.String(), "The door creaks open.") {
		t.Errorf("GET /message?n=0 does not show the body:\n%s", rec.Body)
	}
	if rec := get(t, s.Handler(), "/nowhere", true); rec.Code != http.StatusNotFound {
		t.Errorf("GET /nowhere = %d, want 404", rec.Code)
	}
}

// A body is untrusted: raw HTML and javascript: links render inert.
func TestMarkdownInert(t *testing.T) {
	for _, src := range []string{
		"<script>alert(1)</script>",
		"[x](javascript:alert(1))",
		"[x](JaVaScRiPt:alert(1))",
		"<img src=x onerror=alert(1)>",
		"![x](javascript:alert(1))",
		"<a href=\"javascript:alert(1)\">x</a>",
		"[x](vbscript:msgbox)",
		"<iframe src=\"https://example.com\"></iframe>",
	} {
		if tg := liveTag(string(markdown([]byte(src)))); tg != "" {
			t.Errorf("markdown(%q) = %q: holds the tag %q", src, markdown([]byte(src)), tg)
		}
	}
}

// Raw HTML in a body, inline or a block, shows as the text it is,
// escaped, nothing of it lost. Bug: "<script>alert(1)</script> plain"
// rendered as <!-- raw HTML omitted -->, "plain" gone, where the README
// says such a message shows it as text.
func TestMarkdownRawHTMLAsText(t *testing.T) {
	tests := []struct{ src, want string }{
		{"<script>alert(1)</script> plain", `<pre class="html">&lt;script&gt;alert(1)&lt;/script&gt; plain</pre>`},
		{"Say <b>hello</b> twice", `<p>Say &lt;b&gt;hello&lt;/b&gt; twice</p>`},
		{"<img src=x onerror=alert(1)>", `&lt;img src=x onerror=alert(1)&gt;`},
		{"<div>\nfirst\n\nafter</div>", "<pre class=\"html\">&lt;div&gt;\nfirst\n</pre>\n<p>after&lt;/div&gt;</p>"},
		{"<script>\nlet x = 1\n</script>\nlast", "<pre class=\"html\">&lt;script&gt;\nlet x = 1\n&lt;/script&gt;\n</pre>\n<p>last</p>"},
		{"<!-- a note -->\nkept", "&lt;!-- a note --&gt;"},
		{"a <!-- note --> b", `<p>a &lt;!-- note --&gt; b</p>`},
	}
	for _, tt := range tests {
		got := string(markdown([]byte(tt.src)))
		if !strings.Contains(got, tt.want) {
			t.Errorf("markdown(%q) = %q, want it to hold %q", tt.src, got, tt.want)
		}
		if strings.Contains(got, "omitted") {
			t.Errorf("markdown(%q) = %q: leaves raw HTML out", tt.src, got)
		}
		if tg := liveTag(got); tg != "" {
			t.Errorf("markdown(%q) = %q: holds the tag %q", tt.src, got, tg)
		}
	}
}

// A campaign file's comments are notes (the marker of the message a
// scene's part came from, the game master's notes): the Story page leaves
// them out, and shows the rest of its raw HTML as text, as a message's.
func TestMarkdownFileComments(t *testing.T) {
	tests := []struct{ src, want string }{
		{"<!-- message 20261126-100000.000000Z-gm-aaaaaa -->\nThe gate opens.\n", "<p>The gate opens.</p>\n"},
		{"The gate <!-- GM: a trap --> opens.\n", "<p>The gate  opens.</p>\n"},
		{"<b>bold</b> words\n", "<p>&lt;b&gt;bold&lt;/b&gt; words</p>\n"},
		{"<div>\n<!-- a note left open\n", "<pre class=\"html\">&lt;div&gt;\n</pre>\n"},
		{"<script>alert(1)</script> plain\n", "<pre class=\"html\">&lt;script&gt;alert(1)&lt;/script&gt; plain\n</pre>\n"},
	}
	for _, tt := range tests {
		if got := string(markdownFile([]byte(tt.src))); got != tt.want {
			t.Errorf("markdownFile(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

var (
	// goldmark escapes every < of text, so each < left opens a tag.
	tagRE     = regexp.MustCompile(`<[^>]*>?`)
	tagNameRE = regexp.MustCompile(`^</?([a-z0-9]+)`)
	handlerRE = regexp.MustCompile(`\son[a-z]+\s*=`)
	linkRE    = regexp.MustCompile(`(?:href|src)\s*=\s*"\s*(?:javascript|vbscript):`)
	safeTags  = strings.Fields("p a em strong code pre ul ol li h1 h2 h3 h4 h5 h6 blockquote hr br img table thead tbody tr th td del input !--")
)

// liveTag returns the first tag of rendered markdown that could run
// something (a script, an event handler, a javascript: link, any tag
// markdown does not make), or "".
func liveTag(html string) string {
	for _, tg := range tagRE.FindAllString(strings.ToLower(html), -1) {
		if strings.HasPrefix(tg, "<!--") {
			continue
		}
		m := tagNameRE.FindStringSubmatch(tg)
		if m == nil || !slices.Contains(safeTags, m[1]) || handlerRE.MatchString(tg) || linkRE.MatchString(tg) {
			return tg
		}
	}
	return ""
}

// Every field of a message shown is escaped, the header as the body.
func TestMessageEscaped(t *testing.T) {
	ws := newWorkspace(t)
	m := mailbox.New(nil)
	m.Set("to", "aria")
	m.Set("summary", "<script>alert(1)</script>")
	m.SetBody([]byte("<b onmouseover=alert(1)>hi</b>\n"))
	id, _, err := ws.Mailbox("gm").Post(m)
	if err != nil {
		t.Fatal(err)
	}
	workspace.AppendJournal(ws.JournalPath(), workspace.Entry{Time: "x", ID: id, From: "gm", To: []string{"aria\"><script>alert(2)</script>"}, Type: "<img src=x onerror=alert(3)>", Outcome: workspace.Delivered})
	s := newServer(t, ws, Options{})
	for _, p := range []string{"/", "/message?n=0", "/lanes"} {
		body := get(t, s.Handler(), p, true).Body.String()
		for _, bad := range []string{"<script>alert", "<img src=x", "<b onmouseover"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s holds %q unescaped", p, bad)
			}
		}
	}
}

// No journal entry can make the server read a file outside the
// workspace's mailboxes.
func TestMessageOutside(t *testing.T) {
	ws := newWorkspace(t)
	secret := filepath.Join(filepath.Dir(ws.Root), "secret.md")
	os.WriteFile(secret, []byte("---\nto: aria\n---\nTOP SECRET\n"), 0o644)
	os.WriteFile(filepath.Join(ws.Root, "parley-notes.md"), []byte("---\nto: aria\n---\nNOT A MESSAGE\n"), 0o644)
	abs, _ := filepath.Abs(secret)
	workspace.AppendJournal(ws.JournalPath(),
		workspace.Entry{Time: "x", From: "gm", Outcome: workspace.Refused, Path: "../secret.md"},
		workspace.Entry{Time: "x", From: "gm", Outcome: workspace.Refused, Path: abs},
		workspace.Entry{Time: "x", From: "gm", Outcome: workspace.Refused, Path: "parley-notes.md"},
		workspace.Entry{Time: "x", ID: "../../secret", From: "gm", Outcome: workspace.Delivered},
		workspace.Entry{Time: "x", From: "gm", Outcome: workspace.Refused, Path: "mailboxes/gm/rejected/../../../../secret.md"},
	)
	// A mailbox state directory that is a link out of the workspace.
	outside := filepath.Join(filepath.Dir(ws.Root), "elsewhere")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "20261121-101500.000000Z-gm-aaaaaa.md"), []byte("---\nto: aria\n---\nTOP SECRET\n"), 0o644)
	done := filepath.Join(ws.Root, "mailboxes", "aria", "done")
	os.RemoveAll(done)
	if err := os.Symlink(outside, done); err != nil {
		t.Fatal(err)
	}
	workspace.AppendJournal(ws.JournalPath(),
		workspace.Entry{Time: "x", ID: "20261121-101500.000000Z-gm-aaaaaa", From: "gm", Outcome: workspace.Handled, Agent: "aria", Path: "mailboxes/aria/done/20261121-101500.000000Z-gm-aaaaaa.md"})
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act})
	for n := 0; n < 6; n++ {
		body := get(t, s.Handler(), fmt.Sprintf("/message?n=%d", n), true).Body.String()
		if strings.Contains(body, "TOP SECRET") || strings.Contains(body, "NOT A MESSAGE") {
			t.Errorf("/message?n=%d shows a file outside the mailboxes:\n%s", n, body)
		}
		if _, _, err := s.do(context.Background(), url.Values{"kind": {"retry"}, "n": {fmt.Sprint(n)}}); err == nil {
			t.Errorf("retry of entry %d: no error", n)
		}
	}
	if len(act.asked) > 0 {
		t.Errorf("the actions were asked %q", act.asked)
	}
}

// TestToken: every page needs the token, on the loopback address too
// (an agent confined to its own files, or another user of the machine,
// read every mailbox and the game master's notes through the pages), for
// a read-only server and for spectators as well.
func TestToken(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "The door creaks open.\n")
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"writing", Options{Actions: &fakeActions{}}},
		{"read-only", Options{}},
		{"spectator", Options{Spectator: true}},
		{"any host", Options{AnyHost: true}},
	} {
		s := newServer(t, ws, tt.opts)
		for _, p := range []string{"/", "/story", "/story?view=spectator", "/message?n=0", "/rows?before=1", "/lanes", "/agents", "/plan", "/seat", "/static/app.js"} {
			if rec := get(t, s.Handler(), p, false); rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "door creaks") {
				t.Errorf("%s: GET %s without the token = %d, want 401:\n%s", tt.name, p, rec.Code, rec.Body)
			}
		}
		if rec := get(t, s.Handler(), "/story", true); rec.Code != http.StatusOK {
			t.Errorf("%s: a page with the token's cookie = %d, want 200", tt.name, rec.Code)
		}
		// The cookie of another port is not this server's.
		req := httptest.NewRequest(http.MethodGet, "/story", nil)
		req.Host = "127.0.0.1:7878"
		req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7879"), Value: "0123456789abcdef-token"})
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: a page with the cookie of port 7879 = %d, want 401", tt.name, rec.Code)
		}
		rec = get(t, s.Handler(), "/agents?token=0123456789abcdef-token", false)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/agents" {
			t.Errorf("%s: ?token= answers %d to %q, want 303 to /agents", tt.name, rec.Code, rec.Header().Get("Location"))
		}
		if c := rec.Result().Cookies(); len(c) != 1 || c[0].Name != "parley_token_7878" || c[0].Value != "0123456789abcdef-token" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
			t.Errorf("%s: ?token= sets cookies %v, want parley_token_7878 holding the token, HttpOnly, SameSite=Strict", tt.name, c)
		}
		if rec := get(t, s.Handler(), "/?token=wrong", false); rec.Code != http.StatusForbidden {
			t.Errorf("%s: a wrong token = %d, want 403", tt.name, rec.Code)
		}
	}
	// A server answers to local names only (no DNS rebinding), unless
	// it listens where other hosts reach it.
	for _, anyHost := range []bool{false, true} {
		s := newServer(t, ws, Options{AnyHost: anyHost})
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = "attacker.example:7878"
		req.AddCookie(&http.Cookie{Name: CookieName(req.Host), Value: "0123456789abcdef-token"})
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if want := map[bool]int{false: http.StatusMisdirectedRequest, true: http.StatusOK}[anyHost]; rec.Code != want {
			t.Errorf("AnyHost %v: a server asked as attacker.example = %d, want %d", anyHost, rec.Code, want)
		}
	}
	if !IsLocal("127.0.0.1:7878") || !IsLocal("[::1]:80") || !IsLocal("localhost:1") || IsLocal("0.0.0.0:7878") || IsLocal(":7878") || IsLocal("192.168.1.2:80") {
		t.Error("IsLocal is wrong about an address")
	}
	for host, want := range map[string]string{"127.0.0.1:7878": "parley_token_7878", "[::1]:80": "parley_token_80", "localhost": "parley_token", "example.org:8080": "parley_token_8080"} {
		if got := CookieName(host); got != want {
			t.Errorf("CookieName(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestCSRFOnlyToWriters: a page hands its form token only to a browser
// that may write (holds the token, and the server writes).
func TestCSRFOnlyToWriters(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "The door creaks open.\n")
	for _, tt := range []struct {
		name string
		opts Options
		want bool
	}{
		{"writing", Options{Actions: &fakeActions{}}, true},
		{"read-only", Options{}, false},
		{"spectator", Options{Actions: &fakeActions{}, Spectator: true}, false},
	} {
		s := newServer(t, ws, tt.opts)
		for _, p := range []string{"/story", "/message?n=0"} {
			body := get(t, s.Handler(), p, true).Body.String()
			if got := strings.Contains(body, s.csrf); got != tt.want {
				t.Errorf("%s: GET %s holds the CSRF token: %v, want %v", tt.name, p, got, tt.want)
			}
		}
	}
}

// TestActSaysWhy: a write refused says why: a page older than the
// server (its CSRF token is another start's) is told to reload, not to
// open the address with the token it already has.
func TestActSaysWhy(t *testing.T) {
	s := newServer(t, newWorkspace(t), Options{Actions: &fakeActions{}})
	for _, tt := range []struct {
		name, csrf, origin, want string
	}{
		{"a stale page", "from-the-last-start", "", "reload the page"},
		{"another site", s.csrf, "http://attacker.example", "another site"},
	} {
		form := url.Values{"kind": {"answer"}, "id": {"x"}, "text": {"1"}, "csrf": {tt.csrf}}
		req := httptest.NewRequest(http.MethodPost, "/act", strings.NewReader(form.Encode()))
		req.Host = "127.0.0.1:7878"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7878"), Value: "0123456789abcdef-token"})
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %q, want 403 saying %q", tt.name, rec.Code, rec.Body.String(), tt.want)
		}
	}
}

func TestAct(t *testing.T) {
	ws := newWorkspace(t)
	act := &fakeActions{}
	s := newServer(t, ws, Options{Actions: act})
	postForm := func(form url.Values, cookie bool, origin string) int {
		req := httptest.NewRequest(http.MethodPost, "/act", strings.NewReader(form.Encode()))
		req.Host = "127.0.0.1:7878"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if cookie {
			req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7878"), Value: "0123456789abcdef-token"})
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	good := url.Values{"kind": {"answer"}, "id": {"x"}, "text": {"1"}, "csrf": {s.csrf}}
	tests := []struct {
		name   string
		form   url.Values
		cookie bool
		origin string
		want   int
	}{
		{"no token", good, false, "", http.StatusUnauthorized},
		{"no csrf", url.Values{"kind": {"answer"}, "id": {"x"}, "text": {"1"}}, true, "", http.StatusForbidden},
		{"wrong csrf", url.Values{"kind": {"answer"}, "id": {"x"}, "text": {"1"}, "csrf": {"nope"}}, true, "", http.StatusForbidden},
		{"another origin", good, true, "http://attacker.example", http.StatusForbidden},
		{"unknown action", url.Values{"kind": {"format-disk"}, "csrf": {s.csrf}}, true, "", http.StatusUnprocessableEntity},
		{"empty answer", url.Values{"kind": {"answer"}, "id": {"x"}, "csrf": {s.csrf}}, true, "", http.StatusUnprocessableEntity},
		// An option's button and a typed answer, both named text (what
		// Enter in the typed answer's box sent when both were one form):
		// ambiguous, refused, not answered with the first.
		{"two answers", url.Values{"kind": {"answer"}, "id": {"x"}, "text": {"1", "I knock politely first"}, "csrf": {s.csrf}}, true, "", http.StatusBadRequest},
		{"two kinds", url.Values{"kind": {"approve", "reject"}, "id": {"r"}, "csrf": {s.csrf}}, true, "", http.StatusBadRequest},
		{"answer", good, true, "http://127.0.0.1:7878", http.StatusOK},
		{"roll", url.Values{"kind": {"roll"}, "dice": {"1d20+5"}, "dc": {"12"}, "check": {"Stealth\n/end"}, "csrf": {s.csrf}}, true, "", http.StatusOK},
		{"say", url.Values{"kind": {"say"}, "as": {"veto"}, "text": {"No.\n/end"}, "csrf": {s.csrf}}, true, "", http.StatusOK},
		{"reject", url.Values{"kind": {"reject"}, "id": {"r"}, "text": {"not yet"}, "csrf": {s.csrf}}, true, "", http.StatusOK},
		{"done", url.Values{"kind": {"done"}, "id": {"d"}, "agent": {"aria"}, "csrf": {s.csrf}}, true, "", http.StatusOK},
		{"empty reply", url.Values{"kind": {"reply"}, "id": {"e"}, "agent": {"aria"}, "text": {" \n"}, "csrf": {s.csrf}}, true, "", http.StatusUnprocessableEntity},
		{"a decision, no reasons", url.Values{"kind": {"reply"}, "id": {"e"}, "agent": {"aria"}, "decision": {"stop"}, "csrf": {s.csrf}}, true, "", http.StatusOK},
		{"a decision and reasons", url.Values{"kind": {"reply"}, "id": {"e"}, "agent": {"aria"}, "decision": {"retry"}, "text": {"Smaller steps."}, "csrf": {s.csrf}}, true, "", http.StatusOK},
	}
	for _, tt := range tests {
		if got := postForm(tt.form, tt.cookie, tt.origin); got != tt.want {
			t.Errorf("%s: POST /act = %d, want %d", tt.name, got, tt.want)
		}
	}
	want := []string{"answer x 1", "seat /roll 1d20+5 --dc 12 Stealth /end", "seat /say VETO No. /end", "decide r  false not yet", "done d aria", "reply e aria stop ", "reply e aria retry Smaller steps.\n"}
	if strings.Join(act.asked, "|") != strings.Join(want, "|") {
		t.Errorf("the actions were asked\n%q\nwant\n%q", act.asked, want)
	}
	// A GET never writes.
	if rec := get(t, s.Handler(), "/act?kind=answer", true); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET /act = %d, want 405", rec.Code)
	}
	ro := newServer(t, ws, Options{})
	req := httptest.NewRequest(http.MethodPost, "/act", strings.NewReader(good.Encode()))
	req.Host = "127.0.0.1:7878"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: CookieName("127.0.0.1:7878"), Value: "0123456789abcdef-token"})
	rec := httptest.NewRecorder()
	ro.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("POST /act to a read-only server = %d, want 403", rec.Code)
	}
}

// The timeline shows the newest page of rows; older ones come by
// /rows, a page at a time, back to the first.
func TestRowsPaging(t *testing.T) {
	var entries []workspace.Entry
	for i := range 450 {
		entries = append(entries, workspace.Entry{Time: "t", ID: fmt.Sprintf("e%03d", i), From: "gm", To: []string{"aria"}, Outcome: workspace.Delivered})
	}
	ws := newWorkspace(t, entries...)
	s := newServer(t, ws, Options{PageSize: 100})
	body := get(t, s.Handler(), "/", true).Body.String()
	if n := strings.Count(body, `<li class="row`); n != 100 {
		t.Fatalf("the timeline shows %d rows, want 100", n)
	}
	if !strings.Contains(body, `data-first="350"`) || !strings.Contains(body, `data-id="e449"`) {
		t.Fatal("the timeline does not show the newest 100 rows")
	}
	seen := 100
	for before := 350; before > 0; {
		rec := get(t, s.Handler(), fmt.Sprintf("/rows?before=%d", before), true)
		seen += strings.Count(rec.Body.String(), `<li class="row`)
		next := rec.Header().Get("X-First")
		if next == fmt.Sprint(before) {
			t.Fatalf("/rows?before=%d: X-First did not move", before)
		}
		fmt.Sscan(next, &before)
	}
	if seen != 450 {
		t.Errorf("scrolled back through %d rows, want 450", seen)
	}
	// A filter selects rows as parley log does.
	body = get(t, s.Handler(), "/?outcome=rejected", true).Body.String()
	if n := strings.Count(body, `<li class="row`); n != 0 {
		t.Errorf("?outcome=rejected shows %d rows, want none", n)
	}
}

// A journal entry appended while a page is open reaches its event
// stream.
func TestEvents(t *testing.T) {
	ws := newWorkspace(t)
	s := newServer(t, ws, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followed := make(chan error, 1)
	go func() { followed <- s.Follow(ctx) }()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+u.Port()+"/events?after=0", nil)
	req.AddCookie(&http.Cookie{Name: CookieName(req.Host), Value: "0123456789abcdef-token"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	id := post(t, ws, "gm", "aria", "Hello.\n")
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			found = strings.HasPrefix(line, "data: ") && strings.Contains(line, `data-id="`+id+`"`)
		case <-timeout:
			t.Fatal("no event for the message within 10s")
		}
	}
	cancel()
	if err := <-followed; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Follow: %v", err)
	}
}

func TestMermaid(t *testing.T) {
	entries := []workspace.Entry{
		{ID: "1", From: "gm", To: []string{"aria", "worker-1"}, Type: "NARRATIVE", Outcome: workspace.Delivered},
		{ID: "1", Agent: "aria", Outcome: workspace.Handled},
		{From: "worker-1", Outcome: workspace.Refused, Reason: "x.md:2: to: unknown agent \"zed\"; #1 {a}\nnext"},
		{ID: "2", From: "aria", To: []string{"gm"}, Type: "review_verdict", Signal: "pass", Outcome: workspace.Delivered},
		// Over the bridge: what arrived from another workspace is a step;
		// what was forwarded there was a delivery here already.
		{ID: "3", From: "tor", To: []string{"aria"}, Type: "PLAYER_TO_PLAYER", Outcome: workspace.Received, Workspace: "table"},
		{ID: "2", From: "aria", Agent: "gm", Outcome: workspace.Forwarded, Workspace: "table"},
	}
	var b bytes.Buffer
	if err := LanesOf([]string{"gm", "aria"}, entries, 0).WriteMermaid(&b); err != nil {
		t.Fatal(err)
	}
	want := `sequenceDiagram
    participant P1 as gm
    participant P2 as aria
    participant P3 as worker-1
    participant P4 as tor
    P1->>P2: NARRATIVE
    P1->>P3: NARRATIVE
    Note over P3: rejected: x.md:2: to: unknown agent zed 1 a next
    P2->>P1: review_verdict/pass
    P4->>P2: PLAYER_TO_PLAYER
`
	if b.String() != want {
		t.Errorf("WriteMermaid =\n%s\nwant\n%s", b.String(), want)
	}
	if r := rowOf(4, entries[4]); r.Who != "tor@table → aria" {
		t.Errorf("a received message's row says %q, want tor@table → aria", r.Who)
	}
}

func TestExport(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "<script>alert(1)</script> The door creaks open.\n")
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(context.Background(), ws, dir, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", "lanes.html", "style.css"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "<script") || strings.Contains(string(data), "/static/") {
			t.Errorf("%s holds a script or a server's address", name)
		}
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(index), "The door creaks open.") {
		t.Error("index.html does not hold the message")
	}
	if _, err := os.Stat(filepath.Join(dir, "story.html")); err == nil {
		t.Error("story.html written for a workspace without a campaign")
	}
}

// TestExportPages: a long session's timeline is written in pages, the
// newest in index.html and the older ones in timeline-N.html (1 the
// oldest), each linked to the one before and after it, every message on
// one page; an export of a shorter session removes the pages it no
// longer writes, never a person's file.
func TestExportPages(t *testing.T) {
	ws := newWorkspace(t)
	for i := 1; i <= 7; i++ {
		post(t, ws, "gm", "aria", fmt.Sprintf("Message number %d.\n", i))
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(context.Background(), ws, dir, ExportOptions{PageSize: 3}); err != nil {
		t.Fatal(err)
	}
	page := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	want := map[string][]int{"timeline-1.html": {1, 2, 3}, "timeline-2.html": {4, 5, 6}, "index.html": {7}}
	for name, nums := range want {
		text := page(name)
		for i := 1; i <= 7; i++ {
			if has := strings.Contains(text, fmt.Sprintf("Message number %d.", i)); has != slices.Contains(nums, i) {
				t.Errorf("%s holds message %d: %v, want %v", name, i, has, !has)
			}
		}
	}
	if p := page("index.html"); !strings.Contains(p, `messages 7-7 of 7, page 3 of 3 · <a href="timeline-2.html">older</a>`) || strings.Contains(p, "newer") {
		t.Errorf("index.html's links:\n%s", p)
	}
	if p := page("timeline-2.html"); !strings.Contains(p, `messages 4-6 of 7, page 2 of 3 · <a href="timeline-1.html">older</a> · <a href="index.html">newer</a>`) {
		t.Errorf("timeline-2.html's links:\n%s", p)
	}
	if p := page("timeline-1.html"); strings.Contains(p, ">older<") || !strings.Contains(p, `<a href="timeline-2.html">newer messages</a>`) {
		t.Errorf("timeline-1.html's links:\n%s", p)
	}

	// Fewer pages: the old ones go; a person's own file of such a name
	// stays.
	own := []byte("<h1>my notes</h1>\n")
	if err := os.WriteFile(filepath.Join(dir, "timeline-9.html"), own, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Export(context.Background(), ws, dir, ExportOptions{PageSize: 10}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"timeline-1.html", "timeline-2.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of the copy before is still there (%v)", name, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "timeline-9.html")); !bytes.Equal(got, own) {
		t.Errorf("a person's timeline-9.html was changed: %q", got)
	}
	if p := page("index.html"); !strings.Contains(p, "Message number 1.") || strings.Contains(p, "page 1 of") {
		t.Errorf("one page: index.html holds every message, with no page line:\n%s", p)
	}
}

// Export writes over the files it wrote alone: a person's own page or
// style sheet in the directory is refused and left as it is.
func TestExportKeepsForeignFiles(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "The door creaks open.\n")
	for _, name := range []string{"index.html", "lanes.html", "style.css"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			own := []byte("<h1>my blog</h1>\n")
			if err := os.WriteFile(filepath.Join(dir, name), own, 0o644); err != nil {
				t.Fatal(err)
			}
			err := Export(context.Background(), ws, dir, ExportOptions{})
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, name)+" was not written by parley export") {
				t.Fatalf("Export over a person's %s = %v, want a refusal naming it", name, err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(got, own) {
				t.Errorf("%s = %q after the refusal, want %q", name, got, own)
			}
		})
	}
	dir := t.TempDir()
	for i := range 2 {
		if err := Export(context.Background(), ws, dir, ExportOptions{}); err != nil {
			t.Fatalf("Export #%d into its own copy: %v", i+1, err)
		}
	}
}

// FuzzMarkdownInert renders any body: the HTML never holds a script, an
// event handler or a javascript: link.
func FuzzMarkdownInert(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>", "[x](javascript:alert(1))", "[x](  javascript:alert(1))",
		"[x](java\\nscript:alert(1))", "<img src=x onerror=alert(1)>", "![x](javascript:alert(1))",
		"[x]: javascript:alert(1)\n\n[y][x]", "<a href=\"javascript:alert(1)\">x</a>", "`<script>`",
		"```html\n<script>alert(1)</script>\n```", "<svg onload=alert(1)>", "[x](&#106;avascript:alert(1))",
		"<details open ontoggle=alert(1)>", "# <script>", "| a |\n|---|\n| <script> |", "www.example.com/<script>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := string(markdown([]byte(src)))
		if tg := liveTag(out); tg != "" {
			t.Fatalf("markdown(%q) holds the tag %q:\n%s", src, tg, out)
		}
	})
}

// The Agents page shows what the models used, from the journal.
func TestAgentsUsage(t *testing.T) {
	ws := newWorkspace(t,
		workspace.Entry{Time: "2026-11-26T10:00:00.000000Z", Outcome: workspace.ModelCalled, Agent: "gm", Model: "m", Session: "s", TokensIn: 120, TokensOut: 8},
		workspace.Entry{Time: "2026-11-26T10:00:01.000000Z", Outcome: workspace.ModelCalled, Agent: "gm", Model: "m", Session: "s", TokensIn: 200, TokensOut: 30},
	)
	s := newServer(t, ws, Options{})
	body := get(t, s.Handler(), "/agents", true).Body.String()
	row := body[strings.Index(body, `data-agent="gm"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "<td>2</td><td>358</td>") {
		t.Errorf("gm's row does not show 2 model calls and 358 tokens:\n%s", row)
	}
}

// A workspace no runner has run in has no .parley/ yet: the server waits
// for it rather than failing.
func TestFollowBeforeJournal(t *testing.T) {
	ws := newWorkspace(t)
	os.RemoveAll(filepath.Dir(ws.JournalPath()))
	s := newServer(t, ws, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Follow(ctx) }()
	if err := os.MkdirAll(filepath.Dir(ws.JournalPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	post(t, ws, "gm", "aria", "First.\n")
	for deadline := time.Now().Add(10 * time.Second); s.feed.len() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the journal's first line was not seen within 10s")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow: %v", err)
	}
}

// A spectators' server serves the story alone, and no message.
func TestSpectatorServer(t *testing.T) {
	ws := newWorkspace(t)
	post(t, ws, "gm", "aria", "A private word.\n")
	s := newServer(t, ws, Options{Spectator: true, Actions: &fakeActions{}})
	for path, want := range map[string]int{"/": 200, "/story": 200, "/story?view=gm": 200, "/static/app.js": 200,
		"/lanes": 404, "/agents": 404, "/plan": 404, "/seat": 404, "/message?n=0": 404, "/rows?before=1": 404} {
		if got := get(t, s.Handler(), path, true).Code; got != want {
			t.Errorf("GET %s = %d, want %d", path, got, want)
		}
	}
	if body := get(t, s.Handler(), "/", true).Body.String(); strings.Contains(body, "Timeline") || strings.Contains(body, "private") {
		t.Errorf("the spectators' page names the timeline or a message:\n%s", body)
	}
	if s.actions != nil {
		t.Error("a spectators' server has actions")
	}
	// Its event stream says that the story moved on, never what was said.
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+u.Port()+"/events?after=0", nil)
	req.AddCookie(&http.Cookie{Name: CookieName(req.Host), Value: "0123456789abcdef-token"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	ticked := false
	for !ticked && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: row") {
			t.Fatal("a spectators' event stream sent a row")
		}
		ticked = strings.HasPrefix(sc.Text(), "event: tick")
	}
	if !ticked {
		t.Fatal("a spectators' event stream never said the story moved on (no tick)")
	}
}

// planWorkspace makes a dev-pipeline workspace with a plan of one step
// (plans/p.md), and returns it and a function that writes a message into
// orch's mailbox, in state, from from, with fields, each with an id
// newer than the last: the orchestrator's history, as the Plan page
// reads it.
func planWorkspace(t *testing.T) (*workspace.Workspace, func(state, from string, fields ...string) string) {
	t.Helper()
	root := t.TempDir()
	cfg := `agents:
  - {name: you, role: human}
  - {name: orch, role: orchestrator, driver: builtin, handler: orchestrator}
  - {name: worker-1, role: worker, driver: command, run: [true]}
  - {name: reviewer, driver: command, run: [true]}
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
	if err := os.MkdirAll(filepath.Join(root, "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan := "---\nstatus: in_progress\n---\n## Implementation Waves\n### Wave 1 — Only\n- [ ] **Step 1: One** — a.go: one.\n"
	if err := os.WriteFile(filepath.Join(root, "plans", "p.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ids := &mailbox.IDs{Now: func() time.Time { now = now.Add(time.Millisecond); return now }}
	file := func(state, from string, fields ...string) string {
		t.Helper()
		m := mailbox.New([]byte("x\n"))
		id := ids.New(from)
		m.Set("id", id)
		m.Set("from", from)
		for i := 0; i+1 < len(fields); i += 2 {
			m.SetValue(fields[i], fields[i+1])
		}
		if err := os.WriteFile(ws.Mailbox("orch").Path(state, id+".md"), m.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return id
	}
	return ws, file
}

// TestPlanRetriedRounds guards the Plan page after a person's retry: the
// orchestrator counts attempts on (the retry's task_assignment starts at
// iteration 6), and the page tells the runs apart instead of folding
// attempts 6 and 7 into iterations 1 and 2.
func TestPlanRetriedRounds(t *testing.T) {
	ws, file := planWorkspace(t)
	box := ws.Mailbox("orch")
	step := []string{"plan_file", "plans/p.md", "step", "1"}
	review := func(it int) {
		q := file(mailbox.Sent, "orch", append([]string{"type", "review_request", "to", "reviewer", "iteration", fmt.Sprint(it)}, step...)...)
		file(mailbox.Done, "reviewer", "type", "review_verdict", "signal", "fail", "reply_to", q)
	}
	file(mailbox.Sent, "orch", append([]string{"type", "task_assignment", "to", "worker-1"}, step...)...)
	review(1)
	for it := 2; it <= 5; it++ {
		file(mailbox.Sent, "orch", append([]string{"type", "revision_request", "to", "worker-1", "iteration", fmt.Sprint(it)}, step...)...)
		review(it)
	}
	file(mailbox.Sent, "orch", append([]string{"to", "you", "escalation", "iteration", "summary", "escalation: step 1 of plans/p.md failed review 5 times", "iteration", "5"}, step...)...)
	file(mailbox.Sent, "orch", append([]string{"type", "task_assignment", "to", "worker-1", "iteration", "6"}, step...)...)
	review(6)
	file(mailbox.Sent, "orch", append([]string{"type", "revision_request", "to", "worker-1", "iteration", "7"}, step...)...)
	review(7)

	s := newServer(t, ws, Options{})
	d := s.planData()
	if len(d.Plans) != 1 || len(d.Plans[0].Waves) != 1 || len(d.Plans[0].Waves[0].Steps) != 1 {
		t.Fatalf("planData() = %+v, want one plan of one step", d)
	}
	st := d.Plans[0].Waves[0].Steps[0]
	if st.Iterations != 7 {
		t.Errorf("step 1: Iterations = %d, want 7", st.Iterations)
	}
	if want := []attemptRun{{First: 1, Last: 5}, {First: 6, Last: 7}}; !slices.Equal(st.Runs, want) {
		t.Errorf("step 1: Runs = %v, want %v", st.Runs, want)
	}
	var rounds []int
	for _, r := range st.Rounds {
		rounds = append(rounds, r.Iteration)
		if !slices.Equal(r.Verdicts, []string{"reviewer: fail"}) {
			t.Errorf("iteration %d: verdicts %q, want one fail", r.Iteration, r.Verdicts)
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7}; !slices.Equal(rounds, want) {
		t.Errorf("step 1: rounds of iterations %v, want %v", rounds, want)
	}
	page := get(t, s.Handler(), "/plan", true).Body.String()
	if want := "7 iterations (attempts 1-5, then retried after escalation; attempts 6-7)"; !strings.Contains(page, want) {
		t.Errorf("GET /plan lacks %q:\n%s", want, page)
	}

	// Its escalation says where it stands, as parley pipeline does:
	// answered (no copy waits for you), waiting in your inbox, or
	// settled (waiting, its step went on without a decision).
	if len(d.Escalations) != 1 || d.Escalations[0].State != "handled" {
		t.Fatalf("escalations %+v, want one, handled", d.Escalations)
	}
	esc := d.Escalations[0].ID
	data, err := os.ReadFile(box.Path(mailbox.Sent, esc+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Mailbox("you").Path(mailbox.Inbox, esc+".md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.planData().Escalations[0].State; got != "waiting" {
		t.Errorf("an escalation in you's inbox is %q, want waiting", got)
	}
	// (Settled: see TestEscalationsAsPipeline.)
}

// TestSeatRelayOptions guards the web seat's decide box: a relay's
// ## Suggested Options are numbered as parley play numbers them, with a
// button per option that sends its number (the answer parley answer ID N
// gives), and the box says a number is an answer.
func TestSeatRelayOptions(t *testing.T) {
	ws := newWorkspace(t)
	relay := "---\nfrom: gm\nto: aria\ntype: RELAY_TO_HUMAN\ncharacter: Aria\n---\n## Decision Needed\n\nThe troll blocks the bridge.\n\n## Suggested Options\n\n- Fight the troll\n- Pay the toll\n\n## Context\n\n- not an option\n"
	id := "20261126-100000.000000Z-gm-aaaaaa"
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, id+".md"), []byte(relay), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "aria"})
	d := s.seatData()
	if len(d.Waiting) != 1 || d.Waiting[0].Kind != "relay" {
		t.Fatalf("seatData().Waiting = %+v, want one relay", d.Waiting)
	}
	// A copy of it back in the inbox once it is handled (git checkout
	// of the mailboxes) asks nothing: a message to file, which says so.
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Done, id+".md"), []byte(relay), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := s.seatData().Waiting; len(w) != 1 || w[0].Kind != "message" || !strings.HasPrefix(w[0].Question, "Handled already") || len(w[0].Options) > 0 {
		t.Errorf("with the relay in done/ too, seatData().Waiting = %+v, want a message, handled already", w)
	}
	if err := os.Remove(ws.Mailbox("aria").Path(mailbox.Done, id+".md")); err != nil {
		t.Fatal(err)
	}
	// Answered already, by a seat stopped before it filed it: the same.
	answer := "20261126-100001.000000Z-aria-bbbbbb"
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Sent, answer+".md"), []byte("---\nid: "+answer+"\nfrom: aria\nto: gm\nreply_to: "+id+"\n---\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := s.seatData().Waiting; len(w) != 1 || w[0].Kind != "message" || !strings.HasPrefix(w[0].Question, "Answered already ("+answer) {
		t.Errorf("with an answer in aria's sent/, seatData().Waiting = %+v, want a message, answered already", w)
	}
	if err := os.Remove(ws.Mailbox("aria").Path(mailbox.Sent, answer+".md")); err != nil {
		t.Fatal(err)
	}
	want := []option{{N: 1, Label: "Fight the troll"}, {N: 2, Label: "Pay the toll"}}
	if got := d.Waiting[0].Options; !slices.Equal(got, want) {
		t.Errorf("relay options = %+v, want %+v", got, want)
	}
	page := get(t, s.Handler(), "/seat", true).Body.String()
	for _, w := range []string{`<button name="text" value="1" class="option">1) Fight the troll</button>`, `<button name="text" value="2" class="option">2) Pay the toll</button>`, `placeholder="a number, or what your character does"`} {
		if !strings.Contains(page, w) {
			t.Errorf("GET /seat lacks %s:\n%s", w, page)
		}
	}
	if strings.Contains(page, `value="3"`) {
		t.Errorf("GET /seat numbers an item outside ## Suggested Options:\n%s", page)
	}
}

// A refused file or a dead letter that parley retry put back is no
// longer offered for retry on the timeline: the row and the opened
// message lose their button, and the row of the retried line says which
// button the page takes away; what waits still has its button. A retry
// arriving while the server follows the journal counts the same.
func TestRetryOnlyWhatWaits(t *testing.T) {
	at := "2026-01-02T03:04:05.000000Z"
	ws := newWorkspace(t,
		workspace.Entry{Time: at, From: "aria", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/aria/rejected/20260102-030405.000000Z-a.md"},
		workspace.Entry{Time: at, From: "aria", Agent: "aria", Outcome: workspace.Retried, File: "a.md", Path: "mailboxes/aria/outbox/a.md", Was: "mailboxes/aria/rejected/20260102-030405.000000Z-a.md"},
		workspace.Entry{Time: at, From: "aria", Outcome: workspace.Refused, File: "b.md", Path: "mailboxes/aria/rejected/20260102-030406.000000Z-b.md"},
		workspace.Entry{Time: at, ID: "x1", Agent: "gm", Outcome: workspace.GivenUp, Path: "mailboxes/gm/dead/x1.md"},
		workspace.Entry{Time: at, ID: "x1", Agent: "gm", Outcome: workspace.Retried, File: "x1.md", Path: "mailboxes/gm/inbox/x1.md"},
		workspace.Entry{Time: at, ID: "x2", Agent: "gm", Outcome: workspace.GivenUp, Path: "mailboxes/gm/dead/x2.md"},
		// Refused again after its retry: this refusal waits.
		workspace.Entry{Time: at, From: "aria", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/aria/rejected/20260102-030407.000000Z-a.md"},
	)
	s := newServer(t, ws, Options{Actions: &fakeActions{}})
	retries := func() []string {
		t.Helper()
		page := get(t, s.Handler(), "/", true).Body.String()
		var out []string
		for _, m := range regexp.MustCompile(`<button type="button" class="retry" data-n="(\d+)">`).FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if got, want := retries(), []string{"2", "5", "6"}; !slices.Equal(got, want) {
		t.Errorf("retry buttons on rows %q, want %q", got, want)
	}
	for n, want := range map[string]string{"1": "0", "4": "3"} {
		if page := get(t, s.Handler(), "/", true).Body.String(); !strings.Contains(page, `id="r`+n+`" data-n="`+n+`"`) || !regexp.MustCompile(`id="r`+n+`"[^>]*data-settles="`+want+`"`).MatchString(page) {
			t.Errorf("row %s does not say it put back row %s", n, want)
		}
	}
	for n, want := range map[string]bool{"0": false, "3": false, "2": true} {
		body := get(t, s.Handler(), "/message?n="+n, true).Body.String()
		if got := strings.Contains(body, `name="kind" value="retry"`); got != want {
			t.Errorf("message %s offers retry = %v, want %v", n, got, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan error, 1)
	go func() { followed <- s.Follow(ctx) }()
	defer func() {
		cancel()
		<-followed
	}()
	if err := workspace.AppendJournal(ws.JournalPath(), workspace.Entry{Time: at, From: "aria", Agent: "aria", Outcome: workspace.Retried, File: "b.md", Path: "mailboxes/aria/outbox/b.md", Was: "mailboxes/aria/rejected/20260102-030406.000000Z-b.md"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); s.feed.len() < 8; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not read the retried line within 10s")
		}
	}
	if got, want := retries(), []string{"5", "6"}; !slices.Equal(got, want) {
		t.Errorf("after b.md was retried, retry buttons on rows %q, want %q", got, want)
	}
}

// An escalation of the dev pipeline waits at the seat with its decisions
// as buttons and a box for the reasons, and a hint that says what they
// send, not a free answer only a command line would turn into a
// decision.
func TestSeatEscalation(t *testing.T) {
	ws := newWorkspace(t)
	id := "20261126-100000.000000Z-gm-bbbbbb"
	esc := "---\nid: " + id + "\nfrom: gm\nto: aria\nsummary: 'escalation: step 2 failed review 5 times'\nescalation: iteration\nplan_file: plans/p.md\nstep: 2\n---\nThe pipeline needs your decision.\n\nAnswer with `parley reply ID --field decision=DECISION` and your reasons.\n"
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, id+".md"), []byte(esc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "aria"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	form := regexp.MustCompile(`(?s)<form class="act decide".*?</form>`).FindString(page)
	if form == "" {
		t.Fatalf("GET /seat offers no decision for the escalation:\n%s", page)
	}
	for _, w := range []string{
		`<input type="hidden" name="kind" value="reply">`,
		`<input type="hidden" name="id" value="` + id + `">`,
		`<button name="decision" value="approve"`,
		`<button name="decision" value="retry"`,
		`<button name="decision" value="stop"`,
		`<textarea name="text"`,
		`a button sends your decision with your reasons`,
	} {
		if !strings.Contains(form, w) {
			t.Errorf("the escalation's form lacks %s:\n%s", w, form)
		}
	}
	if strings.Contains(page, `placeholder="your answer (parley reply)"`) {
		t.Errorf("GET /seat offers the escalation a free answer too:\n%s", page)
	}

	// Opened on the timeline, its reply picks a decision too.
	if err := workspace.AppendJournal(ws.JournalPath(), workspace.Entry{Time: "2026-11-26T10:00:00.000000Z", ID: id, From: "gm", To: []string{"aria"}, Outcome: workspace.Delivered}); err != nil {
		t.Fatal(err)
	}
	s = newServer(t, ws, Options{Actions: &fakeActions{}, Person: "aria"})
	msg := get(t, s.Handler(), "/message?n=0", true).Body.String()
	for _, w := range []string{`<select name="decision" required><option value="">pick one</option><option value="approve">`, `<option value="retry">`, `<option value="stop">`, `placeholder="your reasons (optional)"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("GET /message of the escalation lacks %s:\n%s", w, msg)
		}
	}
}

// A prompt of the game master's to the person's character, when no
// program plays its agent (Options.Prompted), waits at the seat beside
// the person's own inbox, answered in the character's words as parley
// answer answers it; without Prompted it is not the person's.
func TestSeatPrompt(t *testing.T) {
	ws := newWorkspace(t)
	id := "20261126-100000.000000Z-gm-cccccc"
	prompt := "---\nid: " + id + "\nfrom: gm\nto: aria\n---\n[GM_TO_PLAYER]\nto: aria-vell\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: the-gate\n\nThe gate slams shut. What do you do?\n"
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, id+".md"), []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "gm", Prompted: "aria"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	for _, w := range []string{
		`gm asks aria-vell (quick reaction)`,
		`The gate slams shut. What do you do?`,
		`<input type="hidden" name="kind" value="answer"><input type="hidden" name="id" value="` + id + `">`,
		`placeholder="what your character does`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("GET /seat lacks %s:\n%s", w, page)
		}
	}
	// Copied to the person too (a route), it waits once, as the prompt.
	if err := os.WriteFile(ws.Mailbox("gm").Path(mailbox.Inbox, id+".md"), []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	page = get(t, s.Handler(), "/seat", true).Body.String()
	if n := strings.Count(page, `<article class="waiting`); n != 1 || !strings.Contains(page, "k-prompt") {
		t.Errorf("GET /seat with the prompt in both inboxes shows %d waiting, want it once, as the prompt:\n%s", n, page)
	}
	if err := os.Remove(ws.Mailbox("gm").Path(mailbox.Inbox, id+".md")); err != nil {
		t.Fatal(err)
	}
	// A question to the character's agent is the person's to answer,
	// as parley play asks it (campaigns.SeatAnswerer decides for both).
	ask := "20261126-100001.000000Z-gm-dddddd"
	question := "---\nid: " + ask + "\nfrom: gm\nto: aria\n---\n[ASK_PLAYER]\nheader: Door\nquestion: Which door?\noptions: [left, right]\n"
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, ask+".md"), []byte(question), 0o644); err != nil {
		t.Fatal(err)
	}
	page = get(t, s.Handler(), "/seat", true).Body.String()
	if !strings.Contains(page, "Which door?") || strings.Count(page, "k-ask") != 1 {
		t.Errorf("GET /seat does not ask the question in aria's inbox:\n%s", page)
	}
	s = newServer(t, ws, Options{Actions: &fakeActions{}, Person: "gm"})
	if page := get(t, s.Handler(), "/seat", true).Body.String(); strings.Contains(page, id) {
		t.Errorf("GET /seat without Prompted shows the prompt to aria:\n%s", page)
	}
}

// Which refusal a retry put back is matched by the file's full mailbox
// path (agent, state, name), not by its name: of two refusals named
// a.md, the older retried, the newer still waits; a refusal in another
// agent's rejected/ under the same name waits; and a file refused where
// it is (left in its outbox) is not in rejected/ and has no retry
// button.
func TestRetryMatchesFullPath(t *testing.T) {
	at := "2026-01-02T03:04:05.000000Z"
	ws := newWorkspace(t,
		workspace.Entry{Time: at, From: "aria", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/aria/rejected/20260102-030405.000000Z-a.md"},
		workspace.Entry{Time: at, From: "aria", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/aria/rejected/20260102-030406.000000Z-a.md"},
		workspace.Entry{Time: at, From: "gm", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/gm/rejected/20260102-030405.000000Z-a.md"},
		workspace.Entry{Time: at, From: "aria", Agent: "aria", Outcome: workspace.Retried, File: "a.md", Path: "mailboxes/aria/outbox/a.md", Was: "mailboxes/aria/rejected/20260102-030405.000000Z-a.md"},
		workspace.Entry{Time: at, From: "gm", Outcome: workspace.Refused, File: "b.md", Path: "mailboxes/gm/outbox/b.md"},
	)
	s := newServer(t, ws, Options{Actions: &fakeActions{}})
	page := get(t, s.Handler(), "/", true).Body.String()
	var got []string
	for _, m := range regexp.MustCompile(`<button type="button" class="retry" data-n="(\d+)">`).FindAllStringSubmatch(page, -1) {
		got = append(got, m[1])
	}
	if want := []string{"1", "2"}; !slices.Equal(got, want) {
		t.Errorf("retry buttons on rows %q, want %q", got, want)
	}
	if !regexp.MustCompile(`id="r3"[^>]*data-settles="0"`).MatchString(page) {
		t.Errorf("row 3 does not say it put back row 0:\n%s", page)
	}
}

// What agents wrote cannot put control characters into a page: an
// escape sequence, a bell or a bidi control in a body, a header or a
// reason is shown escaped, as the terminal commands show it (\x1b),
// line breaks and tabs kept; HTML escaping alone let them through raw.
func TestNoControlCharacters(t *testing.T) {
	ws := newWorkspace(t)
	m := mailbox.New(nil)
	m.Set("to", "aria")
	m.Set("summary", "beware\x1b]0;pwned\x07")
	m.SetBody([]byte("\x1b[31mred\x1b[0m and a bell\x07\n\tindented \u202eevil &#27;[2J\n"))
	id, path, err := ws.Mailbox("gm").Post(m)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, mailbox.FileName(id)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	workspace.AppendJournal(ws.JournalPath(),
		workspace.Entry{Time: "x", ID: id, From: "gm", To: []string{"aria"}, Outcome: workspace.Delivered},
		workspace.Entry{Time: "x", From: "gm", Outcome: workspace.Refused, File: "a.md", Path: "mailboxes/gm/rejected/20260102-030405.000000Z-a.md", Reason: "a.md:1: bad\x1b[2J byte"})
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "aria"})
	for _, p := range []string{"/", "/message?n=0", "/seat", "/rows?before=2"} {
		body := get(t, s.Handler(), p, true).Body.String()
		if i := strings.IndexFunc(body, func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r == 0x202e
		}); i >= 0 {
			t.Errorf("GET %s holds the control character %q at %d: %q", p, body[i], i, body[max(0, i-40):min(len(body), i+40)])
		}
	}
	for p, want := range map[string]string{"/message?n=0": `\x1b[31mred\x1b[0m`, "/": `bad\x1b[2J byte`} {
		if body := get(t, s.Handler(), p, true).Body.String(); !strings.Contains(body, want) {
			t.Errorf("GET %s does not show %s escaped:\n%s", p, want, body)
		}
	}
}

// A dead letter whose step went on without it since (Options.Settled:
// parley status calls it settled, parley retry refuses it without
// --force) is offered no retry, on its row or opened, and says what
// settled it; one not settled keeps its button. A page opens one look.
func TestRetrySettled(t *testing.T) {
	at := "2026-01-02T03:04:05.000000Z"
	ws := newWorkspace(t,
		workspace.Entry{Time: at, ID: "x1", Agent: "gm", Outcome: workspace.GivenUp, Path: "mailboxes/gm/dead/x1.md"},
		workspace.Entry{Time: at, ID: "x2", Agent: "gm", Outcome: workspace.GivenUp, Path: "mailboxes/gm/dead/x2.md"},
	)
	looks := 0
	settled := func(*workspace.Workspace) func(agent, id string) string {
		looks++
		return func(agent, id string) string {
			if agent == "gm" && id == "x1" {
				return "step 2 of plans/p.md was sent to gm again since"
			}
			return ""
		}
	}
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Settled: settled})
	page := get(t, s.Handler(), "/", true).Body.String()
	if looks != 1 {
		t.Errorf("GET / opened %d looks at what is settled, want 1", looks)
	}
	var got []string
	for _, m := range regexp.MustCompile(`<button type="button" class="retry" data-n="(\d+)">`).FindAllStringSubmatch(page, -1) {
		got = append(got, m[1])
	}
	if want := []string{"1"}; !slices.Equal(got, want) {
		t.Errorf("retry buttons on rows %q, want %q", got, want)
	}
	const says = "settled: step 2 of plans/p.md was sent to gm again since; retrying it would do the step twice"
	if !regexp.MustCompile(`id="r0".*` + regexp.QuoteMeta(says)).MatchString(page) {
		t.Errorf("row 0 does not say %q:\n%s", says, page)
	}
	for n, want := range map[string]bool{"0": false, "1": true} {
		body := get(t, s.Handler(), "/message?n="+n, true).Body.String()
		if got := strings.Contains(body, `name="kind" value="retry"`); got != want {
			t.Errorf("message %s offers retry = %v, want %v", n, got, want)
		}
		if got := strings.Contains(body, says); got == want {
			t.Errorf("message %s says it is settled = %v, want %v", n, got, !want)
		}
	}
}

// The Agents page shows an agent of another workspace as parley status
// does, @WORKSPACE, not as a person here (it showed "human idle").
func TestAgentsRemote(t *testing.T) {
	ws, err := workspace.InitConfig(t.TempDir(), "bridge: {name: home, url: nats://127.0.0.1:4222}\nagents:\n  - you\n  - {name: w, remote: away}\n")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{})
	body := get(t, s.Handler(), "/agents", true).Body.String()
	row := body[strings.Index(body, `data-agent="w"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "<td>lives in away</td>") || !strings.Contains(row, `<td class="state">@away`) || strings.Contains(row, "human") {
		t.Errorf("w's row does not show it lives in away:\n%s", row)
	}
}

// settledEscalation files, in ws of planWorkspace, a task of step 1
// that worker-1 gave up and the given_up escalation about it, in orch's
// sent/ and you's inbox/ (and the journal), and worker-1's answer to the
// task since (after a parley retry): its step went on without a decision
// (orchestrator.Fates). It returns the escalation's id.
func settledEscalation(t *testing.T, ws *workspace.Workspace, file func(state, from string, fields ...string) string) string {
	t.Helper()
	step := []string{"thread", "20261126-090000.000000Z-you-aaaaaa", "plan_file", "plans/p.md", "step", "1"}
	task := file(mailbox.Sent, "orch", append([]string{"type", "task_assignment", "to", "worker-1"}, step...)...)
	id := file(mailbox.Sent, "orch", append([]string{"to", "you", "escalation", "given_up", "summary", "escalation: step 1 of plans/p.md is stalled", "given_up", task, "agent", "worker-1"}, step...)...)
	copyEscalation(t, ws, id, mailbox.Inbox)
	if err := workspace.AppendJournal(ws.JournalPath(), workspace.Entry{Time: "2026-11-26T10:00:00.000000Z", ID: id, From: "orch", To: []string{"you"}, Outcome: workspace.Delivered}); err != nil {
		t.Fatal(err)
	}
	file(mailbox.Done, "worker-1", append([]string{"type", "worker_submission", "signal", "rfr", "reply_to", task}, step...)...)
	return id
}

// copyEscalation files a copy of what orch sent as id in you's state/.
func copyEscalation(t *testing.T, ws *workspace.Workspace, id, state string) {
	t.Helper()
	data, err := os.ReadFile(ws.Mailbox("orch").Path(mailbox.Sent, id+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Mailbox("you").Path(state, id+".md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bug: an escalation about a step ticked by hand since, which parley run
// had not gone on from yet, said "its step went on without a decision
// (ticked); answering it sends nothing" while no step that follows was
// sent. It says when the pipeline goes on from it.
func TestSeatEscalationTicked(t *testing.T) {
	ws, file := planWorkspace(t)
	plan := "---\ndate: 2026-11-26\ntask: Q\ntier: 2\nstatus: in_progress\n---\n## Summary\nS.\n## Out of Scope\nO.\n## Approach\nA.\n## Risks\nR.\n## Risk Tags\n- docs\n## Implementation Waves\n### Wave 1 — First\n- [x] **Step 1: One** — a.go: one.\n### Wave 2 — Second (depends on Wave 1)\n- [ ] **Step 2: Two** — b.go: two.\n## Acceptance Criteria\n- AC1: works.\n"
	if err := os.WriteFile(filepath.Join(ws.Root, "plans", "q.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	id := file(mailbox.Sent, "orch", "to", "you", "escalation", "blocked", "summary", "escalation: worker-1 signalled blocked", "thread", "20261126-090000.000000Z-you-aaaaaa", "plan_file", "plans/q.md", "step", "1")
	copyEscalation(t, ws, id, mailbox.Inbox)
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	if w := "Settled: its step was ticked by hand; parley run goes on from it when it next looks"; !strings.Contains(page, w) {
		t.Errorf("GET /seat lacks %q:\n%s", w, page)
	}
}

// An escalation whose step went on without a decision (settled, as
// parley pipeline says: orchestrator.Escalations) is offered no
// decision at the seat nor on its message page: answering it sends
// nothing. The seat says so, and offers to mark it handled.
func TestSeatEscalationSettled(t *testing.T) {
	ws, file := planWorkspace(t)
	id := settledEscalation(t, ws, file)
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	if strings.Contains(page, `class="act decide"`) {
		t.Errorf("GET /seat offers a decision on a settled escalation:\n%s", page)
	}
	for _, w := range []string{id, "Settled: its step went on without a decision (answered); answering it sends nothing", `value="done">mark handled`} {
		if !strings.Contains(page, w) {
			t.Errorf("GET /seat lacks %q:\n%s", w, page)
		}
	}
	msg := get(t, s.Handler(), "/message?n=0", true).Body.String()
	if strings.Contains(msg, `<select name="decision"`) {
		t.Errorf("GET /message offers a decision on a settled escalation:\n%s", msg)
	}
}

// TestEscalationsAsPipeline guards the web view against deciding apart
// from parley pipeline which escalations wait for a decision (it did,
// and they disagreed): one answered with a decision the orchestrator
// does not know (decision=aprove; parley reply moved it to done/) waits
// still, on the Plan page and at the seat with its decisions; a copy
// come back into the inbox (git checkout) of one handled already waits
// for nothing; one whose step went on is settled; one in cur/ waits.
func TestEscalationsAsPipeline(t *testing.T) {
	ws, file := planWorkspace(t)
	settled := settledEscalation(t, ws, file)
	step := []string{"plan_file", "plans/p.md", "step", "1"}
	reply := func(to, decision string) {
		t.Helper()
		m := mailbox.New([]byte("Because.\n"))
		rid := to[:len(to)-6] + "you-" + decision[:1] + "aaaaa"
		m.Set("id", rid)
		m.Set("from", "you")
		m.Set("to", "orch")
		m.Set("reply_to", to)
		m.SetValue("decision", decision)
		if err := os.WriteFile(ws.Mailbox("you").Path(mailbox.Sent, rid+".md"), m.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mis := file(mailbox.Sent, "orch", append([]string{"to", "you", "escalation", "blocked", "summary", "escalation: worker-1 signalled blocked"}, step...)...)
	copyEscalation(t, ws, mis, mailbox.Done)
	reply(mis, "aprove")
	restored := file(mailbox.Sent, "orch", append([]string{"to", "you", "escalation", "iteration", "summary", "escalation: step 1 failed review 5 times"}, step...)...)
	copyEscalation(t, ws, restored, mailbox.Done)
	copyEscalation(t, ws, restored, mailbox.Inbox)
	reply(restored, "stop")
	handling := file(mailbox.Sent, "orch", append([]string{"to", "you", "escalation", "plan", "summary", "escalation: the plan has blockers"}, step...)...)
	copyEscalation(t, ws, handling, mailbox.Cur)

	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "you"})
	states := map[string]string{}
	for _, x := range s.planData().Escalations {
		states[x.ID] = x.State
	}
	if want := map[string]string{settled: "settled", mis: "waiting", restored: "handled", handling: "waiting"}; !maps.Equal(states, want) {
		t.Errorf("Plan page: escalations %v, want %v", states, want)
	}
	page := get(t, s.Handler(), "/seat", true).Body.String()
	forms := regexp.MustCompile(`(?s)<article class="waiting k-(\w+)" data-id="([^"]+)">.*?</article>`).FindAllStringSubmatch(page, -1)
	kinds := map[string]string{}
	for _, f := range forms {
		kinds[f[2]] = f[1]
		if f[2] == mis {
			for _, w := range []string{`<button name="decision" value="approve"`, `<input type="hidden" name="id" value="` + mis + `">`, `Your answer&#39;s decision &#34;aprove&#34; is none of approve, retry, stop`} {
				if !strings.Contains(f[0], w) {
					t.Errorf("GET /seat: the escalation answered aprove lacks %s:\n%s", w, f[0])
				}
			}
		}
		if f[2] == restored && !strings.Contains(f[0], "Handled already") {
			t.Errorf("GET /seat: the copy come back does not say it is handled already:\n%s", f[0])
		}
	}
	if want := map[string]string{settled: "message", mis: "escalation", restored: "message", handling: "escalation"}; !maps.Equal(kinds, want) {
		t.Errorf("GET /seat waits for %v, want %v:\n%s", kinds, want, page)
	}
}

// TestPlanTakenUpAgain: a plan taken up again by a second pipeline
// (another request: another thread) shows the steps of the newest, not
// the two added up (a user's tryout saw each verdict twice).
func TestPlanTakenUpAgain(t *testing.T) {
	ws, file := planWorkspace(t)
	step := []string{"plan_file", "plans/p.md", "step", "1"}
	for _, thread := range []string{"20261126-090000.000000Z-you-aaaaaa", "20261126-095000.000000Z-you-bbbbbb"} {
		file(mailbox.Sent, "orch", append([]string{"thread", thread, "type", "task_assignment", "to", "worker-1"}, step...)...)
		q := file(mailbox.Sent, "orch", append([]string{"thread", thread, "type", "review_request", "to", "reviewer", "iteration", "1"}, step...)...)
		file(mailbox.Done, "reviewer", "thread", thread, "type", "review_verdict", "signal", "pass", "reply_to", q)
	}
	d := newServer(t, ws, Options{}).planData()
	if len(d.Plans) != 1 || len(d.Plans[0].Waves) != 1 || len(d.Plans[0].Waves[0].Steps) != 1 {
		t.Fatalf("planData() = %+v, want one plan of one step", d)
	}
	st := d.Plans[0].Waves[0].Steps[0]
	if st.Iterations != 1 || len(st.Runs) > 1 {
		t.Errorf("step 1: Iterations = %d, Runs = %v; want 1 iteration, one run", st.Iterations, st.Runs)
	}
	if len(st.Rounds) != 1 || !slices.Equal(st.Rounds[0].Verdicts, []string{"reviewer: pass"}) {
		t.Errorf("step 1: rounds %+v, want one with one pass", st.Rounds)
	}
}

// The Agents page marks a dead letter whose step went on without it
// (Options.Settled) as parley status does: settled, and why.
func TestAgentsSettled(t *testing.T) {
	ws := newWorkspace(t)
	id := "20261126-100000.000000Z-gm-ffffff"
	s2, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := ws.Mailbox("aria").Bury(id, []byte("---\nid: "+id+"\nfrom: gm\nto: aria\n---\nwork\n"), "the program failed", s2); err != nil {
		t.Fatal(err)
	}
	settled := func(*workspace.Workspace) func(agent, id string) string {
		return func(agent, got string) string {
			if agent == "aria" && got == id {
				return "step 2 was sent to aria again since"
			}
			return ""
		}
	}
	s := newServer(t, ws, Options{Settled: settled})
	body := get(t, s.Handler(), "/agents", true).Body.String()
	if want := "settled: step 2 was sent to aria again since; retrying it would do the step twice"; !strings.Contains(body, want) {
		t.Errorf("GET /agents lacks %q:\n%s", want, body)
	}
}

// A sheet whose hit points are above the maximum, or that does not read
// at all, gets a note on the Story page, not nothing (a tryout: the
// badge was left out and the page said no more).
func TestStorySheetNotes(t *testing.T) {
	ws := newWorkspace(t)
	c, err := campaigns.New(ws.Root, "the-test-run")
	if err != nil {
		t.Fatal(err)
	}
	sheets := map[string]string{
		"mira-voss":  "# Mira\n\n| **Hit Points** | 11/14 |\n",
		"tilda-hale": "# Tilda\n\n| **Hit Points** | 30/24 |\n",
		"bo-pike":    "# Bo\n\n| **Hit Pionts** | 24 |\n\n## Equipment\n- Dagger\n",
		// Temporary hit points are shown with the hit points (a tryout:
		// the badge said 8/12 of a sheet with 3 more to lose first). The
		// page escapes "+" as &#43;, which a browser shows as "+".
		"wren-hale": "# Wren\n\n| **Hit Points** | 8/12 (temp 3) |\n",
		"ada-frost": "---\nhp: 30\nmax_hp: 24\ntemp_hp: 5\n---\n# Ada\n",
		// What could not be read is said as parley character show says
		// it (a tryout: the page said nothing of it).
		"cole-reed": "# Cole\n\n| **Levle** | 3 |\n| **Hit Points** | 8/8 |\n",
	}
	for name, text := range sheets {
		if err := os.WriteFile(c.SheetPath(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newServer(t, ws, Options{})
	body := get(t, s.Handler(), "/story", true).Body.String()
	for _, want := range []string{
		"HP 11/14 · 0 items</span>",
		"HP 30/24 · 0 items · party/tilda-hale.md:3: hit points: 30 is out of range: want 0 to 24, the maximum</span>",
		"bo-pike <span class=\"badge\">the sheet does not read: party/bo-pike.md:3: hit points: no hit points anywhere",
		"wren-hale <span class=\"badge\">HP 8/12 &#43;3 temp · 0 items</span>",
		"ada-frost <span class=\"badge\">HP 30/24 &#43;5 temp · 0 items · party/ada-frost.md:2: hit points: 30 is out of range",
		"cole-reed <span class=\"badge\">HP 8/8 · 0 items · could not read: party/cole-reed.md:3: level: &#34;Levle&#34; is no label parley reads: did you mean &#34;Level&#34;?</span>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /story does not say %q:\n%s", want, body)
		}
	}
	// Spectators are told where, not what: an error may quote the sheet.
	body = get(t, s.Handler(), "/story?view=spectator", true).Body.String()
	for _, want := range []string{
		`bo-pike <span class="badge">the sheet does not read (line 3)</span>`,
		`wren-hale <span class="badge">HP 8/12 &#43;3 temp · 0 items</span>`,
		`cole-reed <span class="badge">HP 8/8 · 0 items · could not read line 3: level</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /story?view=spectator does not say %q:\n%s", want, body)
		}
	}
}

// TestSeatEnterSendsTyped guards every form of the seat against the
// defect that answered a typed answer with option 1: Enter in a form's
// text box submits it with the form's first submit button, and when that
// button carries a field (an option's text=1, approve's kind=approve)
// the browser sends it beside, or instead of, what was typed. A form
// with a text box Enter submits has, as its first button, one that sends
// nothing of its own; option and decision buttons live in a form without
// one.
func TestSeatEnterSendsTyped(t *testing.T) {
	ws := newWorkspace(t)
	msgs := map[string]string{
		"20261126-100000.000000Z-gm-aaaaaa": "---\nfrom: gm\nto: aria\ntype: ASK_PLAYER\n---\n[ASK_PLAYER]\nquestion: \"A door. Open it?\"\noptions:\n  - label: \"Open it\"\n  - label: \"Leave\"\n",
		"20261126-100001.000000Z-gm-bbbbbb": "---\nfrom: gm\nto: aria\ntype: RELAY_TO_HUMAN\ncharacter: Aria\n---\n## Decision Needed\n\nThe troll.\n\n## Suggested Options\n\n- Fight the troll\n- Pay the toll\n",
		"20261126-100002.000000Z-gm-cccccc": "---\nfrom: gm\nto: aria\ntype: plan_approval_request\nrequest_id: r1\n---\nThe plan.\n",
		"20261126-100003.000000Z-gm-dddddd": "---\nfrom: gm\nto: aria\n---\nHello.\n",
	}
	for id, m := range msgs {
		if err := os.WriteFile(ws.Mailbox("aria").Path(mailbox.Inbox, id+".md"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Person: "aria"})
	page := get(t, s.Handler(), "/seat", true).Body.String()
	for _, k := range []string{"k-ask", "k-relay", "k-request", "k-message"} {
		if !strings.Contains(page, k) {
			t.Fatalf("GET /seat shows no %s:\n%s", k, page)
		}
	}
	forms := regexp.MustCompile(`(?s)<form class="act[^"]*".*?</form>`).FindAllString(page, -1)
	textBox := regexp.MustCompile(`<input (?:[^>]*\s)?name=`)
	hidden := regexp.MustCompile(`<input type="hidden"`)
	firstButton := regexp.MustCompile(`<button[^>]*>`)
	checked := 0
	for _, f := range forms {
		if len(textBox.FindAllString(f, -1)) == len(hidden.FindAllString(f, -1)) {
			continue // no text box: Enter submits nothing
		}
		checked++
		if b := firstButton.FindString(f); strings.Contains(b, "name=") {
			t.Errorf("a form with a text box has as its first button %s: Enter in the box sends that button's field too:\n%s", b, f)
		}
	}
	if checked < 2 {
		t.Errorf("GET /seat has %d forms with a text box, want the ask's and the relay's at least:\n%s", checked, page)
	}
}

// TestWorkspaceGone guards what the pages show of a workspace deleted
// under the server. Bug: they showed what was last read (the agents
// "never" active, an empty table as if it were real), and nothing said
// so. Each page says the workspace is gone, naming it; Vanished is told
// once, and once again when it is back, and the pages show it again.
func TestWorkspaceGone(t *testing.T) {
	ws := newWorkspace(t)
	var told []error
	s := newServer(t, ws, Options{Actions: &fakeActions{}, Vanished: func(err error) { told = append(told, err) }})
	if page := get(t, s.Handler(), "/agents", true).Body.String(); !strings.Contains(page, `<table class="agents"`) || strings.Contains(page, "is gone") {
		t.Fatalf("GET /agents of the workspace as it is:\n%s", page)
	}
	away := ws.Root + ".away"
	if err := os.Rename(ws.Root, away); err != nil {
		t.Fatal(err)
	}
	want := "the workspace " + ws.Root + " is gone (no such directory)"
	for _, p := range []string{"/", "/agents", "/agents?part=live", "/lanes", "/story", "/plan", "/seat", "/seat?part=live"} {
		page := get(t, s.Handler(), p, true).Body.String()
		if !strings.Contains(page, want) {
			t.Errorf("GET %s of a workspace gone does not say %q:\n%s", p, want, page)
		}
		for _, stale := range []string{"<table", "never", "Nothing waits for you", `id="timeline"`} {
			if strings.Contains(page, stale) {
				t.Errorf("GET %s of a workspace gone shows %q, as if it were there:\n%s", p, stale, page)
			}
		}
	}
	if len(told) != 1 || !errors.Is(told[0], ErrGone) || !strings.Contains(told[0].Error(), ws.Root) {
		t.Errorf("Vanished was told %v, want once that %s is gone", told, ws.Root)
	}
	if err := os.Rename(away, ws.Root); err != nil {
		t.Fatal(err)
	}
	if page := get(t, s.Handler(), "/agents", true).Body.String(); !strings.Contains(page, `<table class="agents"`) || strings.Contains(page, "is gone") {
		t.Errorf("GET /agents of the workspace back:\n%s", page)
	}
	if len(told) != 2 || told[1] != nil {
		t.Errorf("Vanished was told %v, want the workspace gone, then back (nil)", told)
	}
}

// TestConfigReread guards the pages against a parley.yaml changed under
// the server. Bug: an agent added showed in parley status but not on
// /agents, nor in the timeline's filter. The server reads the
// configuration again once it has been left alone for the settle time,
// as a running runner does; one that does not load changes nothing, and
// the logger says why.
func TestConfigReread(t *testing.T) {
	ws := newWorkspace(t)
	var logged bytes.Buffer
	// The seat is found again with the file (Options.Seat): the person
	// at it is the last agent, zed once added.
	seat := func(ws *workspace.Workspace) (string, string, error) {
		names := ws.AgentNames()
		return names[len(names)-1], "", nil
	}
	person, _, _ := seat(ws)
	s := newServer(t, ws, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil)), Person: person, Seat: seat})
	if page := get(t, s.Handler(), "/agents", true).Body.String(); strings.Contains(page, "zed") {
		t.Fatalf("GET /agents shows zed before it is added:\n%s", page)
	}
	cfg := filepath.Join(ws.Root, workspace.ConfigFile)
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		// Left alone for longer than the settle time, as the skills
		// beside it.
		past := time.Now().Add(-time.Minute)
		skills, _ := filepath.Glob(filepath.Join(ws.Root, "skills", "*"))
		for _, p := range append(skills, cfg) {
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	write(strings.Replace(string(data), "  - name: aria\n", "  - name: aria\n  - name: zed\n", 1))
	if page := get(t, s.Handler(), "/agents", true).Body.String(); !strings.Contains(page, ">zed<") {
		t.Errorf("GET /agents after zed was added to %s does not show zed:\n%s", workspace.ConfigFile, page)
	}
	if got, _ := s.seated(); got != "zed" {
		t.Errorf("the seat after %s was read again is %q, want zed (found again)", workspace.ConfigFile, got)
	}
	if page := get(t, s.Handler(), "/", true).Body.String(); !strings.Contains(page, "<option>zed</option>") {
		t.Errorf("GET / after zed was added: the filter offers no zed:\n%s", page)
	}
	write("agents: [\n")
	if page := get(t, s.Handler(), "/agents", true).Body.String(); !strings.Contains(page, ">zed<") {
		t.Errorf("GET /agents after %s was broken does not show the agents read before:\n%s", workspace.ConfigFile, page)
	}
	if !strings.Contains(logged.String(), "not read again") {
		t.Errorf("the logger was not told %s does not load:\n%s", workspace.ConfigFile, logged.String())
	}
	// The page says so, with the line; a part refreshed in place, in a
	// header its script shows (tryout F, 9: only the log was told).
	if page := get(t, s.Handler(), "/agents", true).Body.String(); !strings.Contains(page, `<p id="broken" class="err broken">parley.yaml does not load now (parley.yaml:1:`) {
		t.Errorf("GET /agents after %s was broken does not say so:\n%s", workspace.ConfigFile, page)
	}
	if h := get(t, s.Handler(), "/agents?part=live", true).Header().Get("X-Parley-Broken"); !strings.HasPrefix(h, "parley.yaml%20does%20not%20load%20now") {
		t.Errorf("GET /agents?part=live after %s was broken: X-Parley-Broken = %q", workspace.ConfigFile, h)
	}
}

// TestAgentsAwaited: the Agents page says, as parley status does, who
// owes an answer (timeouts:) and until when.
func TestAgentsAwaited(t *testing.T) {
	ws, err := workspace.InitConfig(t.TempDir(), "agents: [gm, p1]\ntimeouts:\n  - match: {to: [p1]}\n    after: 2m\n")
	if err != nil {
		t.Fatal(err)
	}
	const asked = "20261126-100000.000000Z-gm-aaaaaa"
	book := map[string]workspace.AgentRun{"p1": {State: workspace.StateIdle, Awaited: []workspace.Awaited{{
		Agent: "p1", Message: asked, From: "gm", Until: time.Now().Add(time.Minute), After: 2 * time.Minute,
		Policy: "timeouts[0]", Rule: ws.Config.Timeouts[0].Rule(),
	}}}}
	data, err := json.Marshal(book)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.AgentsPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{})
	body := get(t, s.Handler(), "/agents", true).Body.String()
	if want := `<tr class="awaited"><td></td><td colspan="14">gm awaits its answer to ` + asked + ` until `; !strings.Contains(body, want) {
		t.Errorf("GET /agents does not say p1 owes gm an answer (%s):\n%s", want, body)
	}
}

// TestLongTypeCut: a journal written before the bounds (Entry.Capped)
// may hold a type of a megabyte; the pages cut it. Bug: 60 messages of a
// 900 KB type made the timeline a page of 162 MB, and serve 840 MB.
func TestLongTypeCut(t *testing.T) {
	ws := newWorkspace(t)
	long := strings.Repeat("A", 900000)
	var lines bytes.Buffer
	for i := range 3 {
		b, err := json.Marshal(workspace.Entry{Time: "2026-11-21T10:15:00.000000Z", ID: fmt.Sprintf("m%d", i), From: "gm", To: []string{"aria"}, Type: fmt.Sprintf("T%d", i) + long, Signal: long, Outcome: workspace.Delivered})
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(append(b, '\n'))
	}
	if err := os.WriteFile(ws.JournalPath(), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, ws, Options{})
	for _, p := range []string{"/", "/lanes", "/agents", "/rows?before=3"} {
		rec := get(t, s.Handler(), p, true)
		if rec.Code != http.StatusOK || rec.Body.Len() > 200_000 {
			t.Errorf("GET %s = %d, %d bytes, want 200 and the long types cut", p, rec.Code, rec.Body.Len())
		}
	}
	if body := get(t, s.Handler(), "/", true).Body.String(); !strings.Contains(body, "T2AAAA") {
		t.Errorf("the timeline does not show the cut type")
	}
}

// TestTimelineMergedJournalInTimeOrder guards the Timeline of a journal
// git merged with its union driver (two clones co-running a campaign:
// one clone's lines, then the other's). Bug: the Timeline showed it in
// file order, where parley log shows it in time order. Its first load
// reads it as parley log does (JournalFilter.ReadInTimeOrder); what comes
// after follows in the order it is appended.
func TestTimelineMergedJournalInTimeOrder(t *testing.T) {
	entry := func(sec int, from, to string) workspace.Entry {
		at := fmt.Sprintf("2026-11-29T10:00:%02d.000000Z", sec)
		id := fmt.Sprintf("20261129-1000%02d.000000Z-%s-%06d", sec, from, sec+1)
		return workspace.Entry{Time: at, ID: id, From: from, To: []string{to}, Outcome: workspace.Delivered}
	}
	// As git's union merge leaves it: one clone's lines, then the other's.
	merged := []workspace.Entry{entry(0, "gm", "aria"), entry(2, "gm", "aria"), entry(1, "aria", "gm"), entry(3, "aria", "gm")}
	ws := newWorkspace(t, merged...)
	s := newServer(t, ws, Options{})
	page := get(t, s.Handler(), "/", true).Body.String()
	last := -1
	for _, sec := range []int{0, 1, 2, 3} {
		id := entry(sec, "gm", "aria").ID
		if sec%2 == 1 {
			id = entry(sec, "aria", "gm").ID
		}
		at := strings.Index(page, id)
		if at < 0 || at < last {
			t.Fatalf("GET / shows %s at %d, after the entry before it in time (at %d): want the merged journal in time order:\n%s", id, at, last, page)
		}
		last = at
	}
}
