package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-dev/parley/internal/visible"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

//go:embed assets
var assets embed.FS

// pageNames are the pages, in the order of the navigation bar.
var pageNames = []struct{ path, name string }{
	{"/", "Timeline"}, {"/lanes", "Lanes"}, {"/agents", "Agents"}, {"/story", "Story"}, {"/plan", "Plan"}, {"/seat", "Seat"},
}

var funcs = template.FuncMap{
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
}

// templates are the pages, each the layout with its content, parsed the
// first time a page is written: every parley command links this package,
// and only serve and export need them.
var templates = sync.OnceValue(func() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/parts.html"))
	out := map[string]*template.Template{}
	for _, name := range []string{"timeline", "lanes", "agents", "story", "plan", "seat"} {
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/"+name+".html"))
	}
	out["export"] = template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/timeline.html", "assets/lanes.html", "assets/story.html", "assets/export.html"))
	return out
})

// execute writes template tmpl of the page set name (see templates) with
// data to buf, every control character in it shown escaped
// (visible.Text: \x1b, \u202e), line breaks and tabs kept: what agents
// wrote (a body, a header, a reason) goes into a page as the terminal
// commands print it, and HTML escaping leaves such characters raw.
func execute(buf *bytes.Buffer, name, tmpl string, data any) error {
	var out bytes.Buffer
	if err := templates()[name].ExecuteTemplate(&out, tmpl, data); err != nil {
		return err
	}
	buf.WriteString(visible.Text(out.String()))
	return nil
}

// routes returns the server's handler.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	if s.watcher {
		// An audience sees the story, and news that it moved on.
		mux.HandleFunc("GET /{$}", s.story)
		mux.HandleFunc("GET /story", s.story)
		mux.HandleFunc("GET /events", s.events)
		if s.player {
			// A player: their seat too, acting as its agents only
			// (see playerMay).
			mux.HandleFunc("GET /seat", s.seat)
			mux.HandleFunc("POST /act", s.act)
		}
		return s.guard(mux)
	}
	mux.HandleFunc("GET /{$}", s.timeline)
	mux.HandleFunc("GET /rows", s.rows)
	mux.HandleFunc("GET /message", s.message)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /lanes", s.lanes)
	mux.HandleFunc("GET /agents", s.agents)
	mux.HandleFunc("GET /story", s.story)
	mux.HandleFunc("GET /plan", s.plan)
	mux.HandleFunc("GET /seat", s.seat)
	mux.HandleFunc("POST /act", s.act)
	return s.guard(mux)
}

// page is what the layout needs of every page.
type page struct {
	Title    string
	Path     string
	Nav      []struct{ Path, Name string }
	Root     string // the workspace's directory name
	CSRF     string
	CanWrite bool   // the browser holds the token and there are actions
	Live     bool   // the page refreshes its #live part on news
	Next     int    // the journal entries the page has seen
	Gone     string // why the workspace is gone (Options.Vanished): the page says so, and shows nothing of it
	Broken   string // why parley.yaml does not load now: the page says so, and goes on with what was read before
	Content  any
}

func (s *Server) newPage(r *http.Request, title, path string, content any) page {
	p := page{Title: title, Path: path, Root: filepath.Base(s.ws().Root), Next: s.feed.len(), Content: content, Live: true}
	p.CanWrite = s.actions != nil && s.authorised(r)
	if p.CanWrite {
		p.CSRF = s.csrf // handed only to a browser that holds the token
	}
	for _, n := range pageNames {
		if s.watcher && n.name != "Story" && !(s.player && n.name == "Seat") {
			continue
		}
		p.Nav = append(p.Nav, struct{ Path, Name string }{n.path, n.name})
	}
	return p
}

// render writes a page; with ?part=live only its live part (what the
// page's script swaps in when the session moves on).
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, p page) {
	var buf bytes.Buffer
	tmpl := "layout"
	if r.URL.Query().Get("part") == "live" {
		tmpl = "live"
	}
	if err := s.goneNow(); err != nil {
		// What was last read of it is no longer so: an empty table, or
		// agents never active, would say it is.
		p.Gone, p.Content = err.Error(), nil
		if tmpl == "live" {
			tmpl = "gone"
		}
	}
	if err := s.brokenNow(); err != nil {
		p.Broken = brokenText(err)
		// A page refreshed in place (its live part) is told in a
		// header (escaped: a header is one line of ASCII), which its
		// script shows where the layout does.
		w.Header().Set("X-Parley-Broken", url.PathEscape(p.Broken))
	}
	if err := execute(&buf, name, tmpl, p); err != nil {
		s.log.Error("rendering a page", "page", name, "err", err)
		http.Error(w, "could not render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// brokenText is what a page says of a parley.yaml that does not load.
func brokenText(err error) string {
	return fmt.Sprintf("%s does not load now (%v): the table goes on with the configuration read before, and so does this page; it is read again once it loads", workspace.ConfigFile, err)
}

// filter is what the timeline is narrowed to: the page's parameters,
// and the journal filter they make (workspace.JournalFilter decides, as
// for parley log).
type filter struct {
	Agent, Type, Signal, Outcome string
	journal                      workspace.JournalFilter
}

func filterOf(q url.Values) filter {
	f := filter{Agent: q.Get("agent"), Type: q.Get("type"), Signal: q.Get("signal"), Outcome: q.Get("outcome")}
	one := func(v string) []string {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	f.journal = workspace.JournalFilter{Agents: one(f.Agent), Types: one(f.Type), Signals: one(f.Signal), Outcomes: one(f.Outcome)}
	return f
}

func (f *filter) match(e *workspace.Entry) bool { return f.journal.Match(e) }

// query is the filter as URL parameters.
func (f filter) query() string {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "type": f.Type, "signal": f.Signal, "outcome": f.Outcome} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// row is one journal entry on the timeline.
type row struct {
	N     int
	E     workspace.Entry
	When  string // the time of day, in UTC
	Who   string // sender -> recipients, or the agent
	Retry bool   // a refusal or a message given up on, not put back since nor settled: it can be put back
	// Settled is, for a dead letter whose step went on without it since,
	// what happened (Options.Settled): it is offered no retry.
	Settled string
	// Settles is, for a retried entry, the entry it put back (the page
	// takes that row's retry button away); -1 for any other.
	Settles int
}

// rowOf returns the row of entry n, offering retry only for what the
// journal says is still in rejected/ or dead/, and is not settled (as
// settled, from s.settledLook, says).
func (s *Server) rowOf(n int, e workspace.Entry, settled func(agent, id string) string) row {
	r := rowOf(n, e)
	back, settles := s.feed.putBack(n)
	r.Retry = r.Retry && !back
	r.Settles = settles
	if r.Retry && e.Outcome == workspace.GivenUp {
		if r.Settled = settled(e.Agent, e.ID); r.Settled != "" {
			r.Retry = false
		}
	}
	return r
}

// settledLook returns a look at which dead letters are settled, for one
// page (Options.Settled); without Options.Settled, none is.
func (s *Server) settledLook() func(agent, id string) string {
	if s.settled == nil {
		return func(string, string) string { return "" }
	}
	return s.settled(s.ws())
}

func rowOf(n int, e workspace.Entry) row {
	r := row{N: n, E: e, When: e.Time, Settles: -1}
	if t, err := time.Parse(mailbox.TimeFormat, e.Time); err == nil {
		r.When = t.UTC().Format("15:04:05.000")
	}
	switch {
	case e.Outcome == workspace.Received:
		r.Who = e.From + "@" + e.Workspace + " → " + strings.Join(e.To, ", ")
	case e.Outcome == workspace.Delivered:
		r.Who = e.From + " → " + strings.Join(e.To, ", ")
	case e.Agent != "" && e.From != "" && e.From != e.Agent:
		r.Who = e.Agent + " (from " + e.From + ")"
	case e.Agent != "":
		r.Who = e.Agent
	default:
		r.Who = e.From
	}
	r.Retry = waits(&e)
	return r
}

// rowsBefore returns up to n rows the filter selects among the entries
// before entry `before`, oldest first, and the number of the first
// entry looked at (the next page ends there).
func (s *Server) rowsBefore(before int, f filter, n int) ([]row, int) {
	entries := s.feed.slice(0, before)
	var out []row
	settled := s.settledLook()
	i := len(entries) - 1
	for ; i >= 0 && len(out) < n; i-- {
		if f.match(&entries[i]) {
			out = append(out, s.rowOf(i, entries[i], settled))
		}
	}
	slices.Reverse(out)
	return out, i + 1
}

// timelineData is the timeline page's content.
type timelineData struct {
	Rows     []row
	First    int // the entry the rows start at: older ones load from there
	Filter   filter
	Query    string
	Agents   []string
	Types    []string
	Signals  []string
	Outcomes []string
	Total    int
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r.URL.Query())
	total := s.feed.len()
	d := s.filters(f, total)
	d.Rows, d.First = s.rowsBefore(total, f, s.page)
	p := s.newPage(r, "Timeline", "/", d)
	p.Next = total
	p.Live = false
	s.render(w, r, "timeline", p)
}

// filters returns the timeline's filter form for the first total
// entries: the choices it offers and the count. The page is rendered
// with it, and a live timeline is sent it again as entries come
// (events), so both offer the same.
func (s *Server) filters(f filter, total int) timelineData {
	d := timelineData{Filter: f, Query: f.query(), Agents: s.ws().AgentNames(), Outcomes: workspace.Outcomes, Total: total}
	types, signals := map[string]bool{}, map[string]bool{}
	for _, e := range s.feed.slice(0, total) {
		types[e.Type], signals[e.Signal] = true, true
	}
	for t := range types {
		if t != "" {
			d.Types = append(d.Types, t)
		}
	}
	for sg := range signals {
		if sg != "" {
			d.Signals = append(d.Signals, sg)
		}
	}
	slices.Sort(d.Types)
	slices.Sort(d.Signals)
	return d
}

// rows answers a timeline scrolled to its top: the older rows, as HTML,
// and in X-First where the next older page ends.
func (s *Server) rows(w http.ResponseWriter, r *http.Request) {
	before, err := strconv.Atoi(r.URL.Query().Get("before"))
	if err != nil || before < 0 {
		http.Error(w, "before: want an entry number", http.StatusBadRequest)
		return
	}
	rows, first := s.rowsBefore(before, filterOf(r.URL.Query()), s.page)
	var buf bytes.Buffer
	for _, rw := range rows {
		if err := execute(&buf, "timeline", "row", rw); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-First", strconv.Itoa(first))
	w.Write(buf.Bytes())
}

// events streams the journal entries after ?after=N as they come, each
// as an event "row" holding the row's HTML, then an event "filters"
// holding the timeline's filter form for the journal so far (narrowed
// as the page is, by the same parameters), for the timeline; other
// pages listen for "tick" only (?rows=0).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	next, err := strconv.Atoi(r.URL.Query().Get("after"))
	if n := s.feed.len(); err != nil || next < 0 || next > n {
		next = n // a page from before the journal was replaced starts again from now
	}
	rows := r.URL.Query().Get("rows") != "0" && !s.watcher
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	news, stop := s.feed.subscribe()
	defer stop()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	var buf bytes.Buffer
	for {
		batch := s.feed.slice(next, next+500)
		if len(batch) > 0 {
			buf.Reset()
			if rows {
				settled := s.settledLook()
				for i, e := range batch {
					var one bytes.Buffer
					execute(&one, "timeline", "row", s.rowOf(next+i, e, settled))
					fmt.Fprintf(&buf, "event: row\nid: %d\n", next+i)
					for _, line := range strings.Split(strings.TrimRight(one.String(), "\n"), "\n") {
						fmt.Fprintf(&buf, "data: %s\n", line)
					}
					buf.WriteString("\n")
				}
			}
			next += len(batch)
			if rows {
				// The count and the filters' choices follow the rows:
				// a page opened on an empty journal said 0 entries and
				// offered no type until reloaded.
				var form bytes.Buffer
				execute(&form, "timeline", "filters", s.filters(filterOf(r.URL.Query()), next))
				buf.WriteString("event: filters\n")
				for _, line := range strings.Split(strings.TrimRight(form.String(), "\n"), "\n") {
					fmt.Fprintf(&buf, "data: %s\n", line)
				}
				buf.WriteString("\n")
			}
			fmt.Fprintf(&buf, "event: tick\ndata: %d\n\n", next)
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			flusher.Flush()
			continue
		}
		select {
		case <-r.Context().Done():
			return
		case <-news:
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// messageFile returns the file of journal entry n: where the entry says
// it went, if it is still there, else a copy of its message by id. Only
// files in the workspace's mailboxes are returned.
func (s *Server) messageFile(e workspace.Entry) (string, error) {
	if e.Path != "" && filepath.IsLocal(filepath.FromSlash(e.Path)) {
		p := filepath.Join(s.ws().Root, filepath.FromSlash(e.Path))
		if _, _, ok := s.ws().Locate(p); ok && exists(p) {
			return s.inMailboxes(p)
		}
	}
	if e.ID == "" {
		return "", errors.New("the journal names no file for it, and no id")
	}
	if _, _, err := mailbox.ParseID(e.ID); err != nil {
		return "", fmt.Errorf("id %q: %w", e.ID, err)
	}
	p, err := s.ws().FindMessage(e.ID)
	if err != nil {
		return "", err
	}
	if _, _, ok := s.ws().Locate(p); !ok {
		return "", fmt.Errorf("%s: not in a mailbox", e.ID)
	}
	return s.inMailboxes(p)
}

// inMailboxes returns p when it is, symbolic links resolved, inside the
// workspace's mailboxes: a mailbox directory linked elsewhere is not
// followed out of the workspace.
func (s *Server) inMailboxes(p string) (string, error) {
	boxes, err := filepath.EvalSymlinks(filepath.Join(s.ws().Root, workspace.MailboxesDir))
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(boxes, dir); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: a mailbox directory that leads out of the workspace", s.ws().Short(p))
	}
	return p, nil
}

// messageData is a message opened on the timeline.
type messageData struct {
	N       int
	E       workspace.Entry
	Path    string // relative to the workspace
	Err     string // why the file cannot be shown
	Header  [][2]string
	Body    template.HTML         // rendered markdown, made safe
	Raw     string                // the file as it is
	Reason  string                // the reason beside a refused or dead file
	ReplyAs []string              // who may answer it
	Decide  []orchestrator.Choice // an escalation's decisions, to pick one of with the reply
	Retry   bool
	Settled string // see row.Settled
	CSRF    string
	Write   bool
}

// message shows one message: header, rendered body, the file as it is,
// and the reason beside it when it was refused or given up on.
func (s *Server) message(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	e, ok := s.feed.at(n)
	if err != nil || !ok {
		http.Error(w, "n: no such journal entry", http.StatusNotFound)
		return
	}
	d := s.messageData(n, e)
	d.Write = s.actions != nil && s.authorised(r)
	if d.Write {
		d.CSRF = s.csrf // handed only to a browser that holds the token
	}
	var buf bytes.Buffer
	if err := execute(&buf, "timeline", "message", d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func (s *Server) messageData(n int, e workspace.Entry) messageData {
	rw := s.rowOf(n, e, s.settledLook())
	d := messageData{N: n, E: e, Retry: rw.Retry, Settled: rw.Settled}
	p, err := s.messageFile(e)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Path = s.ws().Short(p)
	data, err := mailbox.ReadFile(p, s.ws().Config.Router.MaxMessageSize)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Raw = string(data)
	if agent, state, ok := s.ws().Locate(p); ok && (state == mailbox.Rejected || state == mailbox.Dead) {
		d.Reason, _ = s.ws().Mailbox(agent).Reason(state, filepath.Base(p))
	}
	m, err := mailbox.Parse(data)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	for _, k := range m.Header().Keys() {
		d.Header = append(d.Header, [2]string{k, m.Header().Text(k)})
	}
	// A tag-first message's fields, after its tag.
	if m.Tag != "" {
		for _, k := range m.Payload().Keys() {
			d.Header = append(d.Header, [2]string{k, m.Payload().Text(k)})
		}
	}
	d.Body = markdown(m.Body)
	if e.Arrived() || e.Outcome == workspace.Handled {
		d.ReplyAs = slices.Clone(e.To)
		if e.Agent != "" && !slices.Contains(d.ReplyAs, e.Agent) {
			d.ReplyAs = append(d.ReplyAs, e.Agent)
		}
		if esc := m.Header().Text("escalation"); esc != "" && orchestrator.NewFates(s.ws()).Settled(m) == "" {
			d.Decide = orchestrator.Choices(esc) // none once settled: answering it sends nothing
		}
	}
	return d
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
