// Package web is parley's web view of a workspace: a timeline of every
// message, the session as lanes, the agents, a D&D campaign's story and a
// pipeline's plans, live by Server-Sent Events, and the person's seat in
// the browser. The journal and the mailbox directories are its only
// source. What the page asks to send is carried out by Actions, which the
// command line supplies: the browser can send nothing the command line
// could not.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/parley-dev/parley/mailbox"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/parley-dev/parley/runner/workspace"
)

// Actions carry out what the person asks from the page, each as the
// command line does it (parley answer, play, approve, reject, reply,
// done, retry). Each returns what the command would have said, or an error
// saying why nothing was sent.
type Actions interface {
	// Answer answers a question ([ASK_PLAYER]) or a relay
	// ([RELAY_TO_HUMAN]) waiting in the person's inbox, as parley answer
	// does: a number picks an option. One that waits no more is told
	// as parley answer tells it (answered elsewhere, handled), with an
	// error.
	Answer(ctx context.Context, id, text string) (string, error)
	// Seat carries out one line typed at parley play (/roll 1d20, /say
	// ..., /save), as the seat does, and reports whether the line only
	// showed something (/status, /sheet, /help, /journal without an
	// entry), as the seat decides it.
	Seat(ctx context.Context, line string) (said string, showed bool, err error)
	// Decide approves or rejects a request as agent, one of its
	// recipients (its copy answered and filed), as parley approve and
	// reject do; agent "" answers as the first recipient holding it.
	Decide(ctx context.Context, id, agent string, approve bool, feedback string) (string, error)
	// Reply answers a message as agent, one of its recipients, as parley
	// reply does; a decision, when there is one, goes with it as parley
	// reply --field decision=DECISION sends it (the answer to an
	// escalation of the dev pipeline: approve, retry or stop), and is
	// refused as parley reply refuses one the orchestrator does not know.
	Reply(ctx context.Context, id, agent, decision, body string) (string, error)
	// Done marks a message in agent's inbox handled, as parley done
	// does.
	Done(ctx context.Context, id, agent string) (string, error)
	// Shown files the messages the Seat page showed at a D&D table that
	// ask nothing of the person (a narrative, a session's end), each
	// (by id) in the seat's inboxes holding it, as parley play files
	// what it shows: handled in every one of them, once shown.
	Shown(ctx context.Context, copies map[string][]string) error
	// Retry puts a refused file (its path, inside an agent's rejected/)
	// or a message given up on (its id) back, as parley retry does.
	Retry(ctx context.Context, target string) (string, error)
}

// Options configure a Server. Workspace is required.
type Options struct {
	// Workspace is the workspace shown.
	Workspace *workspace.Workspace
	// Actions carry out what the page sends; nil makes the view read-only.
	Actions Actions
	// Token is the secret every page needs, to read as to write; empty
	// makes one up (see Server.Token). On the loopback address too: an
	// agent confined to its own files, or another user of the machine,
	// could otherwise read every mailbox and the game master's notes
	// through the pages.
	Token string
	// AnyHost lets the pages answer to any host name, for an address
	// other hosts can reach; without it they answer only to 127.0.0.1,
	// ::1 or localhost (a page elsewhere cannot reach them by a name of
	// its own: no DNS rebinding).
	AnyHost bool
	// Spectator serves the story as the players know it and nothing
	// else: no timeline, lanes, agents, plan or seat, and no writes; for
	// an audience.
	Spectator bool
	// Player serves a player sat at the browser: what Spectator serves
	// (the story as the players know it, no timeline, lanes, agents or
	// plan), and the seat of Person (its Seat page, and what that page
	// sends). Whatever is sent as an agent (a reply, a message marked
	// handled, a request decided) is refused (403, saying why) unless
	// it is in the inbox of Person or Prompted and sent as one of them;
	// a question answered, unless it came to one of them: one that waits
	// no more (answered or handled elsewhere) is Actions.Answer's to
	// tell, as at the host's seat. Retrying is the host's. Without a
	// Person, it serves what Spectator serves.
	Player bool
	// Person is the agent that is the person at the seat (the Seat page
	// lists what waits in its inbox); empty: every human agent's inbox.
	Person string
	// Prompted, when set, is the agent of the person's character when no
	// program plays it: the game master's [GM_TO_PLAYER] prompts to it
	// wait at the seat too, answered as parley answer answers them.
	Prompted string
	// Settled, when set, opens a look at which dead letters are settled:
	// their step went on without them since (answered, ticked, sent
	// again), so that retrying one would do the step twice, and parley
	// retry refuses it without --force. The function it returns says, for
	// the message id that agent gave up on, what happened since, in the
	// words of parley status, or "" when it is not settled (or not in
	// agent's dead/). The timeline offers no retry for a settled dead
	// letter and says what settled it. One look serves one page (or one
	// batch of rows): it may read what it needs once. It is given the
	// workspace as the server has it loaded (parley.yaml read again when
	// it changes).
	Settled func(ws *workspace.Workspace) func(agent, id string) string
	// Seat, when set, finds the person at the seat again (Person and
	// Prompted) when parley.yaml is read again: an agent renamed, a
	// character played by a program now. Its error leaves the seat as it
	// was, and is logged.
	Seat func(ws *workspace.Workspace) (person, prompted string, err error)
	// PageSize is how many timeline rows a page shows at first and loads
	// at a time when scrolled up; 0 means 200.
	PageSize int
	// Logger receives what the server does; nil discards it.
	Logger *slog.Logger
	// Vanished, when set, is told when the workspace is found gone (its
	// directory deleted, or its parley.yaml: ErrGone, naming the path),
	// and told nil when it is back (a git checkout); once for each
	// change. Serve looks every second, and each page as it is served.
	// While it is gone every page says so, instead of what was last read
	// of it.
	Vanished func(err error)
}

// ErrGone is what Options.Vanished is told when the workspace is gone.
var ErrGone = errors.New("the workspace is gone")

// goneError says which workspace is gone, and why it counts so.
type goneError struct {
	root string
	err  error
}

func (e *goneError) Error() string {
	return fmt.Sprintf("the workspace %s is gone (%v): the pages show nothing of it until it is back", e.root, e.err)
}

func (e *goneError) Is(target error) bool { return target == ErrGone }

func (e *goneError) Unwrap() error { return e.err }

// Server serves the web view of one workspace.
type Server struct {
	live     *workspace.Live // see ws
	actions  Actions
	token    string
	csrf     string
	anyHost  bool
	watcher  bool       // Options.Spectator, or Options.Player
	player   bool       // Options.Player: the seat of the person too, acting as its agents only
	seatMu   sync.Mutex // guards person and prompted, found again by reseat
	person   string
	prompted string                                                   // see Options.Prompted
	reseat   func(*workspace.Workspace) (string, string, error)       // see Options.Seat
	settled  func(*workspace.Workspace) func(agent, id string) string // see Options.Settled
	page     int
	log      *slog.Logger
	feed     *feed
	writing  sync.Mutex // one write at a time, as one person at a terminal
	answered answered   // the answers to keyed posts, found again when one comes again (see act)
	handler  http.Handler
	vanished func(error) // see Options.Vanished
	goneMu   sync.Mutex  // guards what look sees
	gone     error       // the workspace was found gone (a *goneError), or nil
	broken   error       // parley.yaml as last looked at does not load, or nil
	// files are the orchestrators' messages the Plan page reads, each
	// parsed once while its file is unchanged: the page is read again
	// every few seconds while it is open, and a long session's
	// orchestrator has handled thousands.
	files *mailbox.Cache[*mailbox.Message]
}

// ws returns the workspace as its configuration was last read: look
// reads parley.yaml again when it changes.
func (s *Server) ws() *workspace.Workspace { return s.live.Last() }

// New returns a server for opts.Workspace. Call Follow (or Serve, which
// does) to keep its timeline up to date.
func New(opts Options) (*Server, error) {
	if opts.Workspace == nil {
		return nil, errors.New("web: no workspace")
	}
	s := &Server{actions: opts.Actions, token: opts.Token, anyHost: opts.AnyHost, watcher: opts.Spectator, person: opts.Person, prompted: opts.Prompted, reseat: opts.Seat, settled: opts.Settled, page: opts.PageSize, log: opts.Logger, vanished: opts.Vanished,
		files: mailbox.NewCache(func(m *mailbox.Message) *mailbox.Message { return m })}
	s.live = workspace.NewLive(opts.Workspace, nil)
	if opts.Player {
		s.watcher = true
		s.player = opts.Person != ""
	}
	if s.watcher && !s.player {
		s.actions = nil
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.page <= 0 {
		s.page = 200
	}
	if s.token == "" {
		s.token = randomHex(16)
	}
	s.csrf = randomHex(16)
	s.feed = newFeed(s.ws().JournalPath())
	if err := s.feed.load(); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// Token returns the secret a browser needs to read or write: open the
// page once as /?token=TOKEN and it is kept in a cookie (see CookieName).
func (s *Server) Token() string { return s.token }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Follow reads what is appended to the journal and sends it to open
// pages, until ctx is done.
func (s *Server) Follow(ctx context.Context) error {
	return s.feed.follow(ctx)
}

// Serve serves on ln and follows the journal until ctx is done; then it
// shuts down, letting requests under way finish for up to a second (open
// event streams end with ctx). It returns when every goroutine it started
// has ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	g, gctx := errgroup.WithContext(ctx)
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return gctx }}
	g.Go(func() error { return s.Follow(gctx) })
	g.Go(func() error {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s.look()
			select {
			case <-gctx.Done():
				return nil
			case <-tick.C:
			}
		}
	})
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		srv.Shutdown(sctx) // past the second, Close cuts what is left
		return srv.Close()
	})
	return g.Wait()
}

// look sees whether the workspace is still there (its parley.yaml), and
// tells Options.Vanished when that changed; and whether its
// configuration changed (parley.yaml, skills/), reading it again then,
// as a running runner does (runner/reload.go): once the files have been
// left alone for the settle time, and only when they load (else the
// pages go on with what was read before, and the logger is told why).
// It returns why the workspace is gone, or nil.
func (s *Server) look() error {
	ws := s.ws()
	var now error
	cfg := filepath.Join(ws.Root, workspace.ConfigFile)
	if _, err := os.Stat(cfg); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		why := "no " + workspace.ConfigFile + " there"
		if _, err := os.Stat(ws.Root); err != nil {
			why = "no such directory"
		}
		now = &goneError{root: ws.Root, err: errors.New(why)}
	}
	s.goneMu.Lock()
	defer s.goneMu.Unlock()
	if (now == nil) != (s.gone == nil) && s.vanished != nil {
		s.vanished(now)
	}
	s.gone = now
	if now != nil {
		return now
	}
	fresh, read, err := s.live.Look()
	if !read {
		return nil
	}
	s.broken = err
	if err != nil {
		s.log.Warn(workspace.ConfigFile+" not read again; the pages go on with the configuration read before", "err", err)
		return nil
	}
	s.log.Info(workspace.ConfigFile + " read again")
	if s.reseat != nil {
		person, prompted, err := s.reseat(fresh)
		s.seatMu.Lock()
		if err != nil {
			s.log.Warn("the seat is not found in "+workspace.ConfigFile+" as read again; it stays as it was", "person", s.person, "err", err)
		} else {
			s.person, s.prompted = person, prompted
		}
		s.seatMu.Unlock()
	}
	return nil
}

// Seated returns the person at the seat, and the agent of the person's
// character when no program plays it (Options.Person, Options.Prompted,
// as found again when parley.yaml was read again).
func (s *Server) Seated() (person, prompted string) { return s.seated() }

// seated returns the person at the seat, and the agent of the person's
// character when no program plays it (Options.Person, Options.Prompted).
func (s *Server) seated() (person, prompted string) {
	s.seatMu.Lock()
	defer s.seatMu.Unlock()
	return s.person, s.prompted
}

// brokenNow returns why parley.yaml did not load when look last read it
// (the pages, and the table, go on with the configuration read before),
// or nil.
func (s *Server) brokenNow() error {
	s.goneMu.Lock()
	defer s.goneMu.Unlock()
	return s.broken
}

// goneNow returns why the workspace was found gone when look last
// looked, or nil.
func (s *Server) goneNow() error {
	s.goneMu.Lock()
	defer s.goneMu.Unlock()
	return s.gone
}

// IsLocal reports whether addr (host:port) listens on the loopback
// interface only.
func IsLocal(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && localHost(host)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// CookieName returns the name of the cookie that keeps the token for a
// server reached at host (a Host header: name or address, and port):
// parley_token_PORT, or parley_token without a port. A browser sends a
// cookie to every port of a host, so two servers on two ports of one
// machine need a cookie each, or the second's overwrites the first's.
func CookieName(host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" {
		return "parley_token_" + port
	}
	return "parley_token"
}

// authorised reports whether the request carries the token, in the
// cookie of the port it was sent to.
func (s *Server) authorised(r *http.Request) bool {
	c, err := r.Cookie(CookieName(r.Host))
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.token)) == 1
}

// guard wraps every handler: the token arriving in a URL becomes a
// cookie; every page needs it, on the loopback address too; without
// AnyHost a page answers only to a loopback Host (no DNS rebinding).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if !s.anyHost && !localHost(r.Host) {
			http.Error(w, "this page answers only at 127.0.0.1 or localhost", http.StatusMisdirectedRequest)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" {
			if subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) != 1 {
				http.Error(w, "wrong token", http.StatusForbidden)
				return
			}
			s.keepToken(w, r)
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.authorised(r) {
			why := errNoToken
			if _, err := r.Cookie(CookieName(r.Host)); err == nil {
				why = errOtherToken
			}
			http.Error(w, why.Error(), http.StatusUnauthorized)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			if r.Method == http.MethodGet && r.URL.Path != "/events" {
				s.keepToken(w, r) // kept cookieLife from its last use
			}
			s.look() // each page as the workspace is now
		}
		next.ServeHTTP(w, r)
	})
}

// cookieLife is how long a browser keeps the token's cookie after a
// page it opened with it: through a restart of the browser (a phone
// closes it when it likes), for as long as the token is good (a made-up
// one while this parley serve runs; one given with --token as long as
// the host gives that one).
const cookieLife = 30 * 24 * time.Hour

// keepToken sets the token's cookie for the port r was sent to, good for
// cookieLife.
func (s *Server) keepToken(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(r.Host), Value: s.token, Path: "/", MaxAge: int(cookieLife / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// errNoToken is the answer to a page asked for without the token: who
// opens it is the host, or a player the host gave the seat's address.
var errNoToken = errors.New("this page needs its token: open the address with ?token= in it once (the browser keeps it then).\n" +
	"At a player's seat: ask the host for your seat's link, and open it.\n" +
	"The host: open the address parley serve printed.")

// errOtherToken is the answer to a page asked for with a token that is
// not this server's: kept from a parley serve started before with
// another.
var errOtherToken = errors.New("this browser's token is not this parley serve's (it was started again with a new token, or it is another one): open the address with ?token= in it again.\n" +
	"At a player's seat: ask the host for your seat's link again, and open it.\n" +
	"The host: open the address parley serve printed.")

// localHost reports whether host (a name or address, with or without a
// port or brackets) is this machine's loopback.
func localHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
