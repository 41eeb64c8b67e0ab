package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/runner/web"
	"github.com/parley-dev/parley/runner/workspace"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a live web view of the workspace: timeline, lanes, agents, story, plan, and your seat (until interrupted)",
		Description: "Open the address it prints, with its token: every page needs the token (kept\n" +
			"in a cookie named after the port), on 127.0.0.1 too. Pages read the journal and\n" +
			"the mailboxes and update live. Writing (answering, rolling, approving, replying,\n" +
			"retrying) goes through the same check as parley send.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:7878", Usage: "listen on `HOST:PORT` (port 0: any free port)"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"PARLEY_TOKEN"}, Usage: "the `TOKEN` every page needs (default: a new random one)"},
			&cli.BoolFlag{Name: "read-only", Usage: "let nobody write from the browser"},
			&cli.BoolFlag{Name: "spectator", Usage: "serve an audience: the story as the players know it, nothing else (no timeline, no messages, no writes: read-only already, so --read-only beside it changes nothing); with --as, serve a player: that, and the seat of --as, acting as its agents only"},
			&cli.StringFlag{Name: "as", Usage: "the `AGENT` that is you: at a D&D seat (default: as parley play finds it), or, with no team lead, whose inbox the Seat page shows; with --spectator, the player whose seat is served (a friend's: the agent of their character, which sits at that character's seat)"},
			&cli.StringFlag{Name: "lead", Usage: "the team lead `AGENT` you speak as at a D&D seat"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			addr := c.String("addr")
			// A port out of range (localhost:99999) is a wrong command
			// line as a missing one is, said before anything listens.
			_, port, err := net.SplitHostPort(addr)
			if err == nil {
				_, err = net.LookupPort("tcp", port)
			}
			if err != nil {
				return usagef("--addr %q: want HOST:PORT, such as 127.0.0.1:7878 (a port from 0 to 65535)", addr)
			}
			if t := c.String("token"); c.IsSet("token") && len(t) < 16 {
				return usagef("--token (or PARLEY_TOKEN): use at least 16 characters")
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			// A spectator is read-only: --read-only beside --spectator
			// says it again, and is accepted. A player (--spectator
			// with --as or --lead) writes from their seat, as its
			// agents only, unless --read-only says otherwise.
			spectator := c.Bool("spectator")
			player := spectator && (c.String("as") != "" || c.String("lead") != "")
			return runServe(ctx, e, ws, serveOptions{Addr: addr, Token: c.String("token"), ReadOnly: c.Bool("read-only") || spectator && !player, Spectator: spectator, Player: player, As: c.String("as"), Lead: c.String("lead")})
		},
	}
}

type serveOptions struct {
	Addr, Token string
	ReadOnly    bool
	Spectator   bool // the story alone, for an audience
	// Player, with Spectator, serves the seat of As (and Lead) too, for
	// a player: acting as the seat's agents only (web.Options.Player).
	Player   bool
	As, Lead string
	// Ready, when set, is called with the address the server listens on
	// and its token, once it listens (tests).
	Ready func(url, token string)
}

// runServe serves the web view until ctx is done.
func runServe(ctx context.Context, e *env, ws *workspace.Workspace, opts serveOptions) error {
	srv, err := newWebServer(e, ws, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	local := web.IsLocal(ln.Addr().String())
	// Listening on every address (0.0.0.0, [::]), the address printed is
	// one that other hosts can open: this machine's.
	shown := url
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		addrs, _ := net.InterfaceAddrs()
		host, _ := os.Hostname()
		shown = "http://" + net.JoinHostPort(shareHost(addrs, host), fmt.Sprint(tcp.Port)) + "/"
	}
	// Every page needs the token, on the loopback address too (an agent
	// confined to its files, another user of the machine, could read
	// every mailbox through the pages): the address printed carries it,
	// read-only and for spectators too.
	open := shown + "?token=" + srv.Token()
	if opts.Player {
		person, _ := srv.Seated()
		ro := ""
		if opts.ReadOnly {
			ro = ", read-only"
		}
		fmt.Fprintf(e.stdout, "parley: serving the story of %s as the players know it, and the seat of %s%s, at %s\n", ws.Root, person, ro, open)
		fmt.Fprintln(e.stdout, "parley: that address is for the player: it shows no game master's notes and no other agent's messages, and acts as that seat only")
	} else if opts.Spectator {
		fmt.Fprintf(e.stdout, "parley: serving the story of %s to spectators, read-only, at %s\n", ws.Root, open)
	} else if opts.ReadOnly {
		fmt.Fprintf(e.stdout, "parley: serving %s, read-only, at %s\n", ws.Root, open)
	} else {
		fmt.Fprintf(e.stdout, "parley: serving %s at %s\n", ws.Root, open)
	}
	fmt.Fprintln(e.stdout, "parley: open that address once: the token is kept in a cookie, and every page needs it")
	if !local {
		where := ln.Addr().String()
		if shown != url {
			where = "port " + where[strings.LastIndex(where, ":")+1:] + " on every address of this machine"
		}
		fmt.Fprintf(e.stderr, "parley: warning: %s is reachable from other hosts: every page needs the token, and it travels unencrypted\n", where)
	}
	if opts.Ready != nil {
		opts.Ready(url, srv.Token())
	}
	return srv.Serve(ctx, ln)
}

// newWebServer makes the web view of ws, its writes carried out by the
// commands' own code (browserActions).
func newWebServer(e *env, ws *workspace.Workspace, opts serveOptions) (*web.Server, error) {
	wo := web.Options{Workspace: ws, Token: opts.Token, Logger: e.logger(slog.LevelWarn), PageSize: 200, Spectator: opts.Spectator, Player: opts.Player, Settled: settledLook}
	// A workspace deleted under the server (rm -rf, a branch without
	// it) is said once, and once again when it is back: serve goes on,
	// its pages saying it is gone meanwhile.
	wo.Vanished = func(err error) {
		if err != nil {
			fmt.Fprintf(e.stderr, "parley: warning: %v; serve goes on (Ctrl-C stops it)\n", err)
			return
		}
		fmt.Fprintf(e.stderr, "parley: the workspace %s is back\n", ws.Root)
	}
	host, _, _ := net.SplitHostPort(opts.Addr)
	wo.AnyHost = !web.IsLocal(net.JoinHostPort(host, "0"))
	// The seat is found as parley play finds it, by the same code: an
	// --as or --lead it refuses is refused here, before anything
	// listens (it started, and its seat said nothing waits). Without
	// them, a workspace with no seat to find (no campaign, two people)
	// shows every person's inbox; with --as and no team lead, that
	// person's.
	// Found again, by the same code, when serve reads parley.yaml again.
	wo.Seat = func(ws *workspace.Workspace) (person, prompted string, err error) {
		s, err := openSeat(e.quiet(), ws, opts.As, opts.Lead)
		switch {
		case err == nil:
			return s.me, s.prompted(), nil
		case opts.As != "" && opts.Lead == "" && !ws.RoleHeld("team-lead"):
			// No table here (a pipeline): --as says whose inbox the
			// Seat page shows, an agent checked as the table's seat
			// checks it.
			person, err := seatPerson(ws, opts.As)
			return person, "", err
		case opts.As != "" || opts.Lead != "":
			return "", "", err
		case errors.As(err, new(*campaigns.NoSheetError)):
			// A table whose preferences.md names a character with
			// no sheet: refused as parley play refuses it, not shown
			// as a workspace without a seat.
			return "", "", err
		}
		return "", "", nil
	}
	var err error
	if wo.Person, wo.Prompted, err = wo.Seat(ws); err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		wo.Actions = &browserActions{root: ws.Root, as: opts.As, lead: opts.Lead, last: ws}
	}
	return web.New(wo)
}

// browserActions carry out what the browser asks, each with the code of
// the command that does it at a terminal: parley answer, play, approve,
// reject, reply, done, retry. The workspace is opened again for each, so that
// an edited parley.yaml counts as it does for those commands; while it
// does not load (a typo being mended), each goes on with the last one that
// did, as the runner and the terminal seat do, and says so.
type browserActions struct {
	root     string
	as, lead string

	mu   sync.Mutex
	last *workspace.Workspace // the last that loaded: nil until one did
}

// env returns an environment whose output is collected.
func (a *browserActions) env() (*env, *bytes.Buffer) {
	var buf bytes.Buffer
	return &env{stdin: strings.NewReader(""), stdout: &buf, stderr: &buf}, &buf
}

// open opens the workspace as it is now; when its parley.yaml does not
// load, it returns the one that last did, having written to out that
// this one is used, and why.
func (a *browserActions) open(out io.Writer) (*workspace.Workspace, error) {
	ws, err := workspace.Open(a.root)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		a.last = ws
		return ws, nil
	}
	if a.last == nil {
		return nil, err
	}
	if _, serr := os.Stat(filepath.Join(a.root, workspace.ConfigFile)); serr != nil {
		return nil, err // gone, not being mended: nothing to write to
	}
	fmt.Fprintf(out, "(%s does not load now: %v; done with the configuration read before, as the table goes on with it)\n", workspace.ConfigFile, err)
	return a.last, nil
}

func said(buf *bytes.Buffer, err error) (string, error) {
	if err != nil {
		if out := strings.TrimSpace(buf.String()); out != "" && !strings.Contains(err.Error(), out) {
			return "", fmt.Errorf("%w\n%s", err, out)
		}
		return "", err
	}
	return buf.String(), nil
}

func (a *browserActions) Answer(ctx context.Context, id, text string) (string, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", err
	}
	s, err := openSeat(e, ws, a.as, a.lead)
	if err != nil {
		return "", err
	}
	s.where = "the web seat"
	return said(buf, s.answerOnce(id, text))
}

// Seat carries out a line as the seat does (seat.command), and reports
// whether it only showed something (seat.showed: /status, /sheet, /help,
// /journal without an entry). A [JOURNAL_CHECKPOINT] that waits in the
// seat's inboxes is the checkpoint /journal speaks of, and is filed once
// /journal ENTRY wrote the entry it asks for (seat.journalAdd, as at
// parley play).
func (a *browserActions) Seat(ctx context.Context, line string) (string, bool, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", false, err
	}
	s, err := openSeat(e, ws, a.as, a.lead)
	if err != nil {
		return "", false, err
	}
	s.out = buf
	s.where = "the web seat"
	s.checkpoints() // the checkpoint /journal says waits
	sent, err := s.command(ctx, line)
	if errors.Is(err, errQuit) {
		return "", false, errors.New("/quit: close the page to leave")
	}
	if err != nil {
		out, err := said(buf, err)
		return out, false, err
	}
	if !sent && !s.showed {
		return "", false, errors.New(strings.TrimSpace(buf.String()))
	}
	return buf.String(), s.showed, nil
}

func (a *browserActions) Decide(ctx context.Context, id, agent string, approve bool, feedback string) (string, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", err
	}
	if agent != "" {
		if err := ws.CheckAgent(agent); err != nil {
			return "", err
		}
	}
	return said(buf, runAnswer(e, ws, id, agent, approve, feedback))
}

func (a *browserActions) Reply(ctx context.Context, id, agent, decision, body string) (string, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", err
	}
	if agent != "" {
		if err := ws.CheckAgent(agent); err != nil {
			return "", err
		}
	}
	opts := sendOptions{Body: &body, Once: true} // a form sent twice answers once
	if decision != "" {
		opts.Fields = []string{"decision=" + decision}
	}
	note, err := runReply(e, ws, id, agent, false, opts)
	if note != "" {
		fmt.Fprintln(buf, note)
	}
	return said(buf, err)
}

func (a *browserActions) Done(ctx context.Context, id, agent string) (string, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", err
	}
	if agent != "" {
		if err := ws.CheckAgent(agent); err != nil {
			return "", err
		}
	}
	return said(buf, runDone(e, ws, agent, []string{id}))
}

// Shown files what the Seat page showed that asks nothing of the
// person, as parley play files what it shows (seat.handledCopies): each
// copy in the seat's inboxes marked handled, a copy handled meanwhile
// left as it is.
func (a *browserActions) Shown(ctx context.Context, copies map[string][]string) error {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return err
	}
	s, err := openSeat(e, ws, a.as, a.lead)
	if err != nil {
		return err
	}
	s.out = buf
	for _, id := range slices.Sorted(maps.Keys(copies)) {
		s.handledCopies(id, copies[id], "shown at the web seat")
	}
	if out := strings.TrimSpace(buf.String()); out != "" {
		return errors.New(out)
	}
	return nil
}

func (a *browserActions) Retry(ctx context.Context, target string) (string, error) {
	e, buf := a.env()
	ws, err := a.open(buf)
	if err != nil {
		return "", err
	}
	return said(buf, runRetry(e, ws, "", false, []string{target}))
}

// shareHost is the host to print for a server listening on every address:
// the machine's first IPv4 address that is not a loopback or link-local
// one, else its first such IPv6 address, else its host name, else
// localhost.
func shareHost(addrs []net.Addr, hostname string) string {
	var v6 string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || !n.IP.IsGlobalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return n.IP.String()
		}
		if v6 == "" {
			v6 = n.IP.String()
		}
	}
	switch {
	case v6 != "":
		return v6
	case hostname != "":
		return hostname
	}
	return "localhost"
}
