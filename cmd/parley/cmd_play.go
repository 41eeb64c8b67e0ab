package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/bridge"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

func playCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "play",
		Usage: "sit at a D&D table: see the story as it arrives, answer the game master, roll your dice, act in character",
		Description: "The seat is a human agent of the table (--as; by default the one human agent\n" +
			"that is neither the team lead nor plays a character). It shows each\n" +
			"[NARRATIVE], and asks you each [ASK_PLAYER] and [RELAY_TO_HUMAN] sent to it;\n" +
			"your answers go as the team lead ([PLAYER_ANSWER], [HUMAN_DECISION]). When no\n" +
			"program plays your character's agent, its inbox is yours too: each\n" +
			"[GM_TO_PLAYER] to your character is asked, and answered as that agent\n" +
			"([PLAYER_TO_GM]; an answer starting with veto is a VETO). A line\n" +
			"starting with / is a command (/help lists them). It routes the table while\n" +
			"you play, unless a `parley run` does already; when that one stops, the seat\n" +
			"routes the table from then on. A `parley run` started while the seat routes\n" +
			"the table is handed it, once the programs answering a message finished it,\n" +
			"and the seat plays beside that run.\n\n" +
			"In a terminal you type at any time, with line editing and history; Ctrl-D\n" +
			"leaves, once the programs answering a message have finished it (Ctrl-D\n" +
			"again stops them, to handle it again next time). Without one (or with\n" +
			"--until-idle) it plays a script: lines are read from stdin only\n" +
			"when something waits for you, once everything else at the table is done\n" +
			"(a reply the table awaits by its timeouts: does not hold that back); a\n" +
			"command is carried out as it is read, and the first other line answers the\n" +
			"oldest question waiting. It ends when the table is idle and nothing waits\n" +
			"for you (exit 1 when the input ran out while a question waited). A script\n" +
			"is read to its end: once nothing waits, a command is still carried out, and\n" +
			"another line answers nothing (exit 1; /say TEXT acts in character). Once the\n" +
			"session is over, the lines left are not used: the seat says so (exit 1).\n\n" +
			"When the session's end asks you for your character's journal entry (a\n" +
			"[JOURNAL_CHECKPOINT] no program answers), the seat stays until /journal ENTRY\n" +
			"writes it, saved in git with the session (git: auto), or you leave.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "as", Usage: "the `AGENT` that is you: a person of this workspace, not an agent a program plays (the agent of a character: that character's seat)"},
			&cli.StringFlag{Name: "lead", Usage: "the team lead `AGENT` you speak as (default: the one agent with the role team-lead)"},
			&cli.BoolFlag{Name: "until-idle", Usage: "play a script even in a terminal: read a line only when something waits for you, end when nothing does"},
			&cli.BoolFlag{Name: "verbose", Usage: "playing a script, show the log of the runner the seat runs as parley run writes it (retries, give-ups, unresponsive agents), not only what the seat tells"},
			&cli.Uint64Flag{Name: "seed", Usage: "roll your dice with this `SEED`, for a session that can be played again the same"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			s, err := openSeat(e, ws, c.String("as"), c.String("lead"))
			if err != nil {
				return err
			}
			s.verbose = c.Bool("verbose")
			if c.IsSet("seed") {
				s.dice = dice.Seeded(c.Uint64("seed"))
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			f, ok := e.stdin.(*os.File)
			terminal := ok && isTerminal(f)
			if terminal && !c.Bool("until-idle") {
				return s.interactive(ctx, f)
			}
			in := &lineSource{lines: make(chan string)}
			go in.read(e.stdin)
			return s.scripted(ctx, in, !terminal)
		},
	}
}

// read hands the lines of r out one at a time; the channel closes at the
// end of the input.
func (l *lineSource) read(r io.Reader) {
	defer close(l.lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l.lines <- sc.Text()
	}
}

// bridgeQuiet is how long a bridged seat waits for the other workspaces
// when nothing waits for the person and nothing comes.
const bridgeQuiet = 2 * time.Minute

// startBridge runs the workspace's bridge beside the seat's runner r:
// what it delivers wakes r's drivers and the seat (s.arrived). It returns
// the function that stops it.
func (s *seat) startBridge(ctx context.Context, r *runner.Runner) (func(), error) {
	s.arrived = make(chan struct{}, 1)
	b, err := bridge.Open(s.ws, bridge.Options{Logger: s.seatLogger(), GivenUp: r.TellGivenUp, Getenv: s.e.getenv, Current: r.Workspace, Wake: func(agents []string) {
		r.Wake(agents)
		select {
		case s.arrived <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := b.Run(ctx); err != nil {
			s.printf("(the bridge stopped: %v)\n", err)
		}
	}()
	return func() { cancel(); <-done; b.Close() }, nil
}

// seatLogger is the log of the runner a seat runs: warnings and errors,
// on stderr. With --verbose it is the log parley run writes, every
// record as it is. Else the seat's screen shows no raw log line: the
// records the seat tells the person in words of its own are left out (a
// message given up, tellGivenUp; an agent unresponsive, or late, tellTable; a
// message tried again, told by tellRetrying as tellsRetry says: the give-up notice
// says how often it was tried and why it failed, and parley status and
// the dead/ reason file keep the details); any other is said in a line
// of its own, in parentheses, as the seat says things.
func (s *seat) seatLogger() *slog.Logger {
	if s.verbose {
		return s.e.logger(slog.LevelWarn)
	}
	return slog.New(toldBySeat{Handler: newConsoleHandler(seatLogLine{s.e.stderr}, slog.LevelWarn), retrying: s.tellRetrying, unresponsive: s.tellSilent})
}

// toldBySeat is a log handler that leaves out the records the seat
// tells the person in words of its own, or needs not tell. A retry is
// handed to retrying (the agent, the message and the attempt that
// failed), which tells the person plainly, when it is worth telling
// (tellsRetry), that the table waits for that agent.
type toldBySeat struct {
	slog.Handler
	retrying func(agent, id string, attempt int)
	// unresponsive, when set, is handed an agent marked unresponsive and
	// why, as the runner marks it: called from the runner's goroutine,
	// it may print only where the seat's own lines are printed from that
	// goroutine too (a script's seat, whose Idle hook the router calls).
	unresponsive func(agent, why string)
}

func (h toldBySeat) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case runner.LogRetrying:
		attrs := recordAttrs(r)
		agent, id := attrs["agent"], attrs["id"]
		attempt, _ := strconv.Atoi(attrs["attempt"])
		if h.retrying != nil && agent != "" && id != "" {
			h.retrying(agent, id, attempt)
		}
		return nil
	case runner.LogUnresponsive, runner.LogLate:
		attrs := recordAttrs(r)
		if agent := attrs["agent"]; h.unresponsive != nil && agent != "" {
			h.unresponsive(agent, attrs["note"])
		}
		return nil
	case runner.LogGaveUp, runner.LogNotReloaded:
		return nil // told by the seat (tellGivenUp, tellConfig)
	}
	if recordAttrs(r)[llm.LogNotice] != "" {
		return nil // a notice to the people: the seat shows it, or folds it into a give-up it tells
	}
	r.Time = time.Time{} // the seat's lines say no time
	return h.Handler.Handle(ctx, r)
}

// recordAttrs returns the attributes of a log record as text, by key
// ("" for one the record lacks).
func recordAttrs(r slog.Record) map[string]string {
	attrs := make(map[string]string, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	return attrs
}

func (h toldBySeat) WithAttrs(attrs []slog.Attr) slog.Handler {
	return toldBySeat{h.Handler.WithAttrs(attrs), h.retrying, h.unresponsive}
}

func (h toldBySeat) WithGroup(name string) slog.Handler {
	return toldBySeat{h.Handler.WithGroup(name), h.retrying, h.unresponsive}
}

// tellStartWarnings says, once, at a terminal's seat, what a runner warns
// of as it starts (workspace.Lint: a character: with no sheet, an AI
// player that does not accept [JOURNAL_CHECKPOINT]; a program's file
// that is not there), as the seat says the runner's other warnings: a
// terminal's seat shows no runner log, where parley run, a script's
// seat and parley status say them. parley.yaml that does not check is
// the runner's to say: it does not start.
func (s *seat) tellStartWarnings() {
	warnings, err := s.ws.Lint()
	if err != nil {
		return
	}
	for _, w := range append(warnings, s.ws.MissingRunFiles()...) {
		s.printf("\n")
		s.wrap("(parley: WARN "+w+")", "")
	}
}

// seatLogLine writes a log line (one Write, as consoleHandler makes it)
// as the seat says things: in parentheses, after a blank line.
type seatLogLine struct{ w io.Writer }

func (l seatLogLine) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	if _, err := fmt.Fprintf(l.w, "\n(parley: %s)\n", line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// waitEnd is why the seat stopped waiting for the person's next line.
type waitEnd int

const (
	gotLine      waitEnd = iota // the person wrote a line
	inputOver                   // the input ended
	waitOver                    // ctx ended: a signal, or a deadline the run checks
	tableChanged                // a file came into an outbox: there is something to route
)

// nextLine waits for the person's next line while the table goes on
// without them: it looks at the table every tick meanwhile, shows what
// arrived, says what was answered elsewhere, given up or left
// unanswered, and stops waiting when ctx ends or a file comes into an
// outbox (another process sent something, or answered a question
// elsewhere), so that the runner, held while the seat waits, routes it.
// A read of the input blocked in its goroutine holds nothing.
func (s *seat) nextLine(ctx context.Context, in *lineSource) (string, waitEnd) {
	if line, ok := in.unhold(); ok {
		return line, gotLine
	}
	return s.await(ctx, in.lines)
}

// await is nextLine's wait: for a line of lines (nil: none is read), the
// end of ctx, or a change of the table.
func (s *seat) await(ctx context.Context, lines <-chan string) (string, waitEnd) {
	before := s.outboxes()
	tick := time.NewTicker(seatTick)
	defer tick.Stop()
	for {
		select {
		case text, ok := <-lines:
			if !ok {
				return "", inputOver
			}
			return text, gotLine
		case <-ctx.Done():
			return "", waitOver
		case <-tick.C:
		}
		if err := s.show(); err != nil {
			s.printf("(%v)\n", err)
		}
		s.tellTable()
		if s.outboxes() != before {
			return "", tableChanged
		}
	}
}

// seatTick is how often a seat waiting for the person looks at the table.
const seatTick = 100 * time.Millisecond

// outboxes names the files in every outbox of the table: one string,
// that changes when one comes or goes.
func (s *seat) outboxes() string {
	var b strings.Builder
	for _, a := range s.ws.AgentNames() {
		names, _ := s.ws.Mailbox(a).Names(mailbox.Outbox)
		b.WriteString(a)
		for _, n := range names {
			b.WriteString(" " + n)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// scripted plays the seat from lines of input: each read only when
// something waits for the person and the rest of the table is done. With
// readOn (a script, not a terminal), the input is read to its end: once
// the table is idle and nothing waits, a line is taken as the interactive
// seat takes it with nothing waiting — a command is carried out, and
// another line answers nothing, which the seat says at once and, in the
// end, as its error. Lines left once the session is over are not used:
// that is its error too.
func (s *seat) scripted(ctx context.Context, in *lineSource, readOn bool) error {
	if err := s.askPrefs(ctx, in); err != nil {
		if errors.Is(err, errQuit) {
			return nil // /quit, or a signal, before the session started
		}
		return err
	}
	s.hello()
	inputEnded, quit := false, false
	var unanswered []string // lines read while nothing waited
	// run is the seat's runner (nil while another routes the table), and
	// stopRun ends its run: a /quit read while the table waits for a
	// reply leaves at once.
	var run *runner.Runner
	stopRun := context.CancelFunc(func() {})
	// waitEnded is what idle returns when its wait for a line ended
	// without one: said, whether it sent something; true when the table
	// changed (there is something to route).
	waitEnded := func(end waitEnd, said bool) bool {
		switch end {
		case inputOver:
			inputEnded = true
		case tableChanged:
			return true
		}
		return said
	}
	// settled is true when the rest of the table is done: nothing comes
	// for the person unless they act. The seat waits for a line until
	// wait ends (a signal, or the deadline of a reply the table awaits)
	// or something comes to route; the runner goes on then.
	idle := func(wait context.Context, settled bool) bool {
		if err := s.show(); err != nil {
			s.printf("(%v)\n", err)
		}
		s.tellTable()
		said := false
		for len(s.waiting) > 0 && !quit && !s.ended {
			text, end := s.nextLine(wait, in)
			if end != gotLine {
				return waitEnded(end, said)
			}
			s.printf("> %s\n", text)
			sent, err := s.line(ctx, text)
			if errors.Is(err, errQuit) {
				quit = true
				stopRun() // the run would wait out the replies it awaits
				return said
			}
			said = said || sent
			if sent && !strings.HasPrefix(strings.TrimSpace(text), "/") {
				return true // answered: the table goes on
			}
		}
		if !settled && !said && len(s.waiting) == 0 && !s.ended && !quit {
			// The table waits for a reply that is not the person's
			// (timeouts:): said, and until when. A script's next line
			// is read meanwhile, for a /quit; any other line is held
			// for what comes (it may answer a question yet to come).
			if run != nil {
				s.tellAwaiting(run.Awaited())
			}
			if readOn && !inputEnded && run != nil && len(in.held) == 0 {
				// A script's lines are there at once: a second is
				// waited for one, the table watched meanwhile; the
				// run calls again while it waits.
				peek, cancel := context.WithTimeout(wait, time.Second)
				text, end := s.nextLine(peek, in)
				cancel()
				if end != gotLine {
					return waitEnded(end, said)
				}
				if isQuit(text) {
					s.printf("> %s\n", text)
					quit = true
					stopRun()
					return false
				}
				in.hold(text)
			}
			return false
		}
		if settled && !said && s.arrived != nil && !s.ended && !quit && !inputEnded {
			// Bridged to other workspaces: the table goes on there.
			// Wait for what they send (or give up after a while).
			select {
			case <-s.arrived:
				return true
			case <-ctx.Done():
			case <-time.After(bridgeQuiet):
				s.printf("(nothing came over the bridge for %v: leaving the table)\n", bridgeQuiet)
			}
			return said
		}
		for readOn && settled && !said && len(s.waiting) == 0 && s.arrived == nil && !s.ended && !quit {
			text, end := s.nextLine(wait, in)
			if end != gotLine {
				return waitEnded(end, said)
			}
			s.printf("> %s\n", text)
			t := strings.TrimSpace(text)
			if t == "" {
				continue
			}
			if !strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//") {
				unanswered = append(unanswered, t)
			}
			sent, err := s.line(ctx, text)
			if errors.Is(err, errQuit) {
				quit = true
				return false
			}
			if sent {
				return true // a command sent something: the table goes on
			}
		}
		return said
	}
	opts := withUntilIdle(runnerOptions(s.e, s.ws, s.seatLogger()))
	opts.Idle = idle
	opts.Seat = true
	// The seat routes the table unless a runner holds it; when that
	// runner stops, the seat routes it from then on, unless another
	// runner took it meanwhile, beside which it plays again. A `parley
	// run` that asks for the table while the seat routes it is handed it,
	// and the seat plays beside that run.
	var stopped *runner.LockedError // the runner that routed the table and stopped
	takeOver := false               // the seat goes on with a session another runner routed
	for {
		ws, o := s.ws, opts
		if takeOver {
			// Taken over: with parley.yaml as it is now (it may have
			// changed since the seat began), and going on with the
			// session, never starting one (runner.Options.TakeOver).
			if fresh, err := workspace.Open(s.ws.Root); err != nil {
				// Being edited, perhaps: the table goes on with the
				// configuration the seat read (the runner reads the
				// file again once it loads).
				s.printf("(%s does not load now: %v; the seat routes with the one it read)\n", workspace.ConfigFile, err)
			} else {
				ws, o = fresh, withUntilIdle(runnerOptions(s.e, fresh, s.seatLogger()))
				o.Idle = idle
				o.Seat = true
			}
			o.TakeOver = true
		}
		r, err := runner.Open(ws, o)
		var locked *runner.LockedError
		if errors.As(err, &locked) {
			// A runner routes the table already: answer what waits now.
			s.printf("(a runner routes this table already: %v)\n", err)
			if !s.beside(ctx, idle, func() bool { return quit || inputEnded || s.ended }) {
				break
			}
			stopped, takeOver = locked, true
			if pid := int(s.routedBy.Load()); pid > 0 {
				// The runner that stopped last: another seat may have
				// handed the table to a parley run meanwhile.
				stopped = &runner.LockedError{PID: pid}
			}
			continue
		}
		if err != nil {
			return err
		}
		if stopped != nil {
			s.tellRunnerStopped(stopped.PID)
			stopped = nil
		}
		run = r
		stopBridge := func() {}
		if s.ws.Config.Bridge != nil {
			// The seat's table is bridged: the bridge runs beside the
			// seat's runner, and what it delivers wakes the seat.
			stop, berr := s.startBridge(ctx, r)
			if berr != nil {
				r.Close()
				return berr
			}
			var once sync.Once
			stopBridge = func() { once.Do(stop) }
			defer stopBridge()
		}
		var runCtx context.Context
		runCtx, stopRun = context.WithCancel(ctx)
		// A `parley run` asking for the table (asked, its pid) is seen
		// once a tick while the runner runs: one stat.
		asked := 0
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			asked = s.watchHandover(runCtx, r, stopRun)
		}()
		_, err = r.Run(runCtx)
		stopRun()
		<-watched
		if s.arrived != nil && err == nil && asked == 0 {
			waitForwarded(ctx, s.ws, 10*time.Second)
		}
		if asked != 0 {
			// Handed over: the seat's bridge lets its lock go before the
			// runner does, so that the run, once it holds the workspace,
			// runs the bridge itself (it ran without one, taking the
			// seat's for another process's).
			stopBridge()
		}
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if serr := s.show(); serr != nil {
			return serr
		}
		s.tellTable() // the runner's last word on who did not answer
		if asked == 0 {
			break
		}
		// Handed over: the run routes the table, and the seat plays
		// beside it as beside a runner that held it at the start.
		run, stopRun = nil, func() {}
		stopBridge()
		s.arrived = nil
		takeOver = true
		if !s.handedOver(ctx, asked) {
			if ctx.Err() != nil {
				break
			}
			continue // it gave up: the seat routes the table again
		}
		if !s.beside(ctx, idle, func() bool { return quit || inputEnded || s.ended }) {
			break
		}
		stopped = &runner.LockedError{PID: asked}
	}
	if s.ended && !quit && !inputEnded && s.owesAtEnd() {
		// The session's end asks the person for their journal entry:
		// the seat stays for it, and it is saved with the session.
		quit = s.stayForEntry(ctx, func() (string, bool) {
			text, ok := in.next(ctx)
			if !ok {
				inputEnded = true
				return "", false
			}
			s.printf("> %s\n", text)
			return text, true
		}, func() {})
	}
	if s.ended {
		// Nothing answers a question in a session that is over: said,
		// not an error.
		for _, q := range s.waiting {
			from, _ := q.m.Header().Get("from")
			s.printf("(the session ended while [%s] %s from %s waited for your answer: it is left unanswered)\n", q.typ, q.id, printable(from))
		}
	} else if inputEnded && len(s.waiting) > 0 && !quit {
		q := s.waiting[0]
		from, _ := q.m.Header().Get("from")
		return fmt.Errorf("the input ended while [%s] %s from %s waited for an answer (parley answer %s TEXT answers it)", q.typ, q.id, from, q.id)
	}
	if len(unanswered) > 0 {
		return fmt.Errorf("%d %s of the input answered nothing, as nothing waited for an answer: %q (nothing was sent; /say TEXT acts in character)", len(unanswered), plural(len(unanswered), "line", "lines"), unanswered[0])
	}
	if readOn && s.ended && !quit && !inputEnded {
		// The session is over: nothing more is read as play, and what
		// the script had left to say was not said (a script played
		// again where the gm ends the session at once).
		if left := in.rest(ctx, unreadWait); len(left) > 0 {
			return fmt.Errorf("the session is over, and %d %s of the input %s not used: %q first (nothing was sent for %s)",
				len(left), plural(len(left), "line", "lines"), plural(len(left), "was", "were"), left[0], plural(len(left), "it", "them"))
		}
	}
	return nil
}

// unreadWait is how long the seat waits, the session over, for a line
// left in its input: a script's lines are there at once (a file, or a
// pipe written and closed); a pipe a person holds open (sleep 300 |
// parley play) is not waited for.
const unreadWait = 500 * time.Millisecond

// rest returns the lines left in the input, blank ones aside, those held
// first: read until the input ends, ctx does, or no line comes within
// wait.
func (l *lineSource) rest(ctx context.Context, wait time.Duration) []string {
	var left []string
	for line, ok := l.unhold(); ok; line, ok = l.unhold() {
		if line = strings.TrimSpace(line); line != "" {
			left = append(left, line)
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case line, ok := <-l.lines:
			if !ok {
				return left
			}
			if line = strings.TrimSpace(line); line != "" {
				left = append(left, line)
			}
			t.Reset(wait)
		case <-ctx.Done():
			return left
		case <-t.C:
			return left
		}
	}
}

// beside plays the seat while another runner routes the table: it
// answers what waits (idle, as the seat's own runner calls it), and waits
// for the table to go quiet between, until over says the seat is done
// (the session or the input ended, the person quit), ctx ends or that
// runner stops. It reports true for the last, the seat not done: the seat
// routes the table then, or the decision sent last would wait in an
// outbox for ever.
func (s *seat) beside(ctx context.Context, idle func(wait context.Context, settled bool) bool, over func() bool) bool {
	// wait ends when the runner stops, which ends any wait of the seat's
	// (for a line, for the table to go quiet).
	wait, cancel := context.WithCancel(ctx)
	var stopped atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(seatTick)
		defer tick.Stop()
		for {
			select {
			case <-wait.Done():
				return
			case <-tick.C:
			}
			pid := s.ws.RunnerPID()
			if pid == 0 {
				stopped.Store(true)
				cancel()
				return
			}
			if pid > 0 {
				s.routedBy.Store(int64(pid)) // another may take the table from the first (a hand-over)
			}
		}
	}()
	defer func() { cancel(); <-watched }()
	taken := func() bool { return stopped.Load() && ctx.Err() == nil && !over() }
	for {
		if idle(wait, false) {
			continue // answered: the table goes on
		}
		if over() || ctx.Err() != nil {
			return false
		}
		if taken() {
			return true
		}
		if s.waitQuiet(wait) {
			continue // a question waits
		}
		if taken() {
			return true
		}
		// The table is idle and nothing waits: what is left of the
		// input is read now.
		if ctx.Err() == nil && idle(wait, true) {
			continue
		}
		return taken()
	}
}

// seatFinishWait is how long a seat handing its table over to a `parley
// run` waits for the programs answering a message to finish it: less
// than the run waits for the table (runner.HandoverWait).
const seatFinishWait = 20 * time.Second

// watchHandover looks, once a tick until ctx ends, whether a `parley run`
// asks for the table the seat's runner r routes (one stat). When one
// does, it hands the table over (handOver), ends r's run with stop, and
// returns that run's pid; else 0.
func (s *seat) watchHandover(ctx context.Context, r *runner.Runner, stop context.CancelFunc) int {
	tick := time.NewTicker(seatTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
		if pid := r.HandoverAsked(); pid > 0 {
			s.handOver(ctx, r, nil)
			stop()
			return pid
		}
	}
}

// handOver readies the seat's runner r to hand the table over, as leaving
// the seat does (finishing): r's programs take no new message
// (runner.Finish), and those answering one finish it, so that no answer
// is lost and no model asked twice; it returns once they did, ctx ended,
// or seatFinishWait passed (a program still running is then ended as a
// signal ends it under `parley run`, and its message handled again by
// the run). The caller then ends r's run and closes it.
//
// leave, at a terminal (nil elsewhere), carries the person's Ctrl-Ds, as
// to finishing: the first (leaving) lets the programs finish still, the
// second stops the wait at once, as it does when leaving. What it takes
// from leave it puts back, for the seat to leave after.
func (s *seat) handOver(ctx context.Context, r *runner.Runner, leave chan struct{}) {
	r.Finish()
	busy := s.programsBusy()
	deadline := time.After(seatFinishWait)
	tick := time.NewTicker(seatTick)
	defer tick.Stop()
	pressed := 0
	defer func() {
		for range pressed {
			leave <- struct{}{}
		}
	}()
	for len(busy) > 0 && pressed < 2 {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-leave:
			pressed++
			continue
		case <-tick.C:
		}
		now := s.programsBusy()
		for agent, id := range busy {
			if now[agent] != id {
				delete(busy, agent)
			}
		}
	}
}

// handedOver waits, the seat's runner closed, until the `parley run`
// (pid) that asked for the table holds it, and says so: the seat plays
// beside it from now on. It reports false, said too, when that run gave
// up or ended first: the seat routes the table again.
func (s *seat) handedOver(ctx context.Context, pid int) bool {
	if !runner.WaitHandedOver(ctx, s.ws, pid, runner.HandoverWait) {
		if ctx.Err() == nil {
			s.printf("(parley run (pid %d) asked for this table, and did not take it: the seat routes it again)\n", pid)
		}
		return false
	}
	s.printf("(parley run (pid %d) routes this table now: the seat plays beside it)\n", pid)
	return true
}

// tellRunnerStopped says that the runner that routed the table (pid, 0
// when not known) stopped, and that the seat routes it from now on.
func (s *seat) tellRunnerStopped(pid int) {
	who := "the runner that routed this table"
	if pid > 0 {
		who += fmt.Sprintf(" (pid %d)", pid)
	}
	s.printf("(%s stopped: the seat routes it now)\n", who)
}

// waitQuiet waits, while another runner routes the table, until the
// table is idle: no outbox holds a file and no agent but the human ones
// has a message to handle. It reports whether a question then waits for
// the person; false when nothing does (the table is idle) or ctx ended.
func (s *seat) waitQuiet(ctx context.Context) bool {
	for quiet := 0; quiet < 2; { // twice in a row: nothing between two looks
		if ctx.Err() != nil {
			return false
		}
		if s.tableBusy() {
			quiet = 0
		} else {
			quiet++
		}
		if err := s.show(); err != nil {
			s.printf("(%v)\n", err)
		}
		s.tellTable()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return len(s.waiting) > 0
}

// tableBusy reports whether something is under way at the table: a file
// waits in an outbox, or an agent with a program (or built in) has a
// message waiting or being handled.
func (s *seat) tableBusy() bool {
	for _, a := range s.ws.Config.Agents {
		box := s.ws.Mailbox(a.Name)
		if n, _ := box.Count(mailbox.Outbox); n > 0 {
			return true
		}
		if !a.Driven() {
			continue
		}
		for _, state := range []string{mailbox.Inbox, mailbox.Cur} {
			if n, _ := box.Count(state); n > 0 {
				return true
			}
		}
	}
	return false
}

// interactive plays the seat in a terminal: the story shows as it comes,
// and the person types at any time, with line editing and history.
func (s *seat) interactive(ctx context.Context, f *os.File) error {
	state, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return err
	}
	defer term.Restore(int(f.Fd()), state)
	keys := &endKeys{r: f}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{keys, s.e.stdout}, "> ")
	// The prompt stays drawn on the last line, unless the seat is leaving
	// (left): ended there, the shell's prompt does not land beside it.
	left := false
	defer func() {
		if !left {
			s.e.stdout.Write([]byte("\r\n"))
		}
	}()
	// leave takes what the seat says as it leaves off the terminal's line
	// editor, which would draw its prompt again after every line: the
	// prompt's line is cleared, and the rest is written plainly.
	leaving := func() {
		s.e.stdout.Write([]byte("\r\x1b[K"))
		s.setOut(crlf{s.e.stdout})
		left = true
	}
	if w, h, err := term.GetSize(int(f.Fd())); err == nil {
		t.SetSize(w, h)
		s.width = min(max(w-2, 20), 100)
	}
	s.out = crlf{t}
	stopRun := context.CancelFunc(func() {}) // ends the run of the seat's own runner
	defer func() { stopRun() }()
	var r *runner.Runner   // the seat's own runner; nil while another routes the table
	var runDone chan error // nil: a runner of its own does not run
	holder := 0            // the pid of the runner that routes the table, while one does
	// The runner's log is not shown at a terminal: a retry is told in
	// the seat's words (tellRetrying), the rest by tellTable.
	opts := runnerOptions(s.e, s.ws, slog.New(toldBySeat{Handler: slog.DiscardHandler, retrying: s.tellRetrying}))
	opts.NoteAwaited = true // the seat says what the table waits for (tellAwaiting)
	opts.Seat = true        // a `parley run` that asks for the table is handed it
	// route starts the seat's own runner, unless another runner holds
	// the workspace (holder is then its pid): the seat plays beside it
	// until it stops (see the loop below).
	route := func(takeOver bool) error {
		ws, o := s.ws, opts
		if takeOver {
			// With parley.yaml as it is now, going on with the session,
			// never starting one (runner.Options.TakeOver).
			if fresh, err := workspace.Open(s.ws.Root); err != nil {
				// Being edited, perhaps: as above.
				s.printf("(%s does not load now: %v; the seat routes with the one it read)\n", workspace.ConfigFile, err)
			} else {
				ws, o = fresh, runnerOptions(s.e, fresh, slog.New(toldBySeat{Handler: slog.DiscardHandler, retrying: s.tellRetrying}))
				o.NoteAwaited = true
				o.Seat = true
			}
			o.TakeOver = true
		}
		nr, err := runner.Open(ws, o)
		var locked *runner.LockedError
		switch {
		case errors.As(err, &locked) && takeOver:
			// The runner it saw stop was followed by another that
			// took the lock first (a parley run another seat handed
			// the table to): named as the loop below names one.
			if locked.PID != holder {
				s.printf("(pid %d routes this table now)\n", locked.PID)
			}
			holder = locked.PID
			return nil
		case errors.As(err, &locked):
			s.printf("(a runner routes this table already: %v)\n", err)
			holder = locked.PID
			return nil
		case err != nil:
			return err
		}
		var runCtx context.Context
		runCtx, stopRun = context.WithCancel(ctx)
		r, runDone = nr, make(chan error, 1)
		go func() { _, err := nr.Run(runCtx); runDone <- err }()
		return nil
	}
	if err := route(false); err != nil {
		return err
	}
	// Leaving stops the runner as a signal stops `parley run`: its
	// programs are ended and waited for, and the workspace is left as a
	// clean stop leaves it, before the seat returns.
	defer func() {
		if r == nil {
			return
		}
		stopRun()
		if runDone != nil {
			<-runDone
		}
		r.Close()
	}()
	// The first Ctrl-D (or Ctrl-C: both end a line of a raw terminal)
	// ends the input; each one also goes to leave, where a second stops
	// the programs the seat waits for as it leaves. The terminal keeps the
	// key that ended its input and ends every read with it after, so the
	// second is read from f itself.
	lines := make(chan string)
	leave := make(chan struct{}, 2)
	go func() {
		for {
			line, err := t.ReadLine()
			if err != nil {
				break
			}
			lines <- line
		}
		leave <- struct{}{}
		close(lines)
		if keys.inLast.Load() >= 2 {
			// The second key came with the first, in one read: the
			// line editor holds it, and f never sees it.
			leave <- struct{}{}
			return
		}
		buf := make([]byte, 64)
		for {
			n, err := f.Read(buf)
			if err != nil || slices.ContainsFunc(buf[:n], func(b byte) bool { return b == 3 || b == 4 }) {
				leave <- struct{}{}
				return
			}
		}
	}()
	in := &lineSource{lines: lines}
	if err := s.askPrefs(ctx, in); err != nil {
		if errors.Is(err, errQuit) {
			return nil
		}
		return err
	}
	s.hello()
	s.tellStartWarnings()
	s.printf("(Ctrl-D leaves)\n")
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.show(); err != nil {
			s.printf("(%v)\n", err)
		}
		s.tellTable()
		if runDone != nil && len(s.waiting) == 0 && !s.ended {
			// The table waits for a reply that is not the person's
			// (timeouts:), and does nothing else: said, and until when.
			s.tellAwaiting(r.Awaited())
		}
		if runDone != nil {
			if pid := r.HandoverAsked(); pid > 0 {
				// A `parley run` asks for the table (one stat a
				// tick): handed over, and the seat plays beside it.
				// What the person types meanwhile waits, read after.
				if busy := s.programsBusy(); len(busy) > 0 {
					s.printf("(parley run (pid %d) asks for this table: the seat hands it over once %s %s the %s %s handling (at most %s))\n", pid, strings.Join(slices.Sorted(maps.Keys(busy)), ", "), plural(len(busy), "finishes", "finish"), plural(len(busy), "message", "messages"), plural(len(busy), "it is", "they are"), seatFinishWait)
				}
				s.handOver(ctx, r, leave)
				stopRun()
				err := <-runDone
				if cerr := r.Close(); err == nil {
					err = cerr
				}
				r, runDone = nil, nil
				if err != nil {
					return err
				}
				_ = s.show()
				if s.handedOver(ctx, pid) {
					holder = pid
				} else if ctx.Err() == nil {
					if err := route(true); err != nil {
						return err
					}
				}
			}
		}
		if r == nil {
			// Another seat may hand the table to a parley run: the seat
			// names the runner that routes it now, and says so.
			if pid := s.ws.RunnerPID(); pid > 0 && pid != holder {
				if holder > 0 {
					s.printf("(pid %d routes this table now)\n", pid)
				}
				holder = pid
			}
		}
		if r == nil && !s.ended && s.ws.RunnerPID() == 0 {
			// The runner that routed the table stopped: the seat
			// routes it now, as if it had started without one (or
			// plays beside the runner that took it meanwhile). Not
			// once the session is over (stop_on ended that run).
			was := holder
			if err := route(true); err != nil {
				return err
			}
			if r != nil {
				s.tellRunnerStopped(was)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-runDone:
			runDone = nil
			_ = s.show()
			if err != nil || !s.owesAtEnd() {
				if s.ended {
					s.printf("(the session is over)\n")
				}
				return err
			}
			// The session's end asks the person for their journal
			// entry: the seat stays for it, its run closed (which saved
			// the session), and the entry is saved with the session.
			err = r.Close()
			r = nil
			if err != nil {
				return err
			}
			s.stayForEntry(ctx, func() (string, bool) {
				select {
				case line, ok := <-lines:
					if !ok {
						<-leave // this Ctrl-D's
					}
					return line, ok
				case <-ctx.Done():
					return "", false
				}
			}, leaving)
			return nil
		case line, ok := <-lines:
			if !ok {
				<-leave // this Ctrl-D's
				leaving()
				s.finishing(ctx, r, runDone, leave, tick.C, keys.last())
				return nil
			}
			if _, err := s.line(ctx, line); errors.Is(err, errQuit) {
				leaving()
				s.finishing(ctx, r, runDone, leave, tick.C, "Ctrl-D")
				return nil
			}
		case <-tick.C:
		}
	}
}

// finishing lets the programs of the seat's runner r finish the messages
// they are handling as the person leaves, so their answers are kept and
// no model is asked twice, and start on no other (runner.Finish), which
// the end would cut off: it returns once those messages are handled,
// or at once when the person presses Ctrl-D (or Ctrl-C) again, ctx ends
// or the runner stops. A program still running then is ended, as a
// signal ends it under `parley run`, and its message handled again when
// the table next runs. key is the key the person left with, which the
// hint names.
func (s *seat) finishing(ctx context.Context, r *runner.Runner, runDone <-chan error, leave <-chan struct{}, tick <-chan time.Time, key string) {
	if runDone == nil {
		return // another runner runs the programs: they go on there
	}
	r.Finish()
	busy := s.programsBusy()
	if len(busy) == 0 {
		return
	}
	s.wrap(fmt.Sprintf("(leaving: waiting for %s to finish, so nothing is lost or asked again; %s again stops now)", strings.Join(slices.Sorted(maps.Keys(busy)), ", "), key), "")
	for {
		select {
		case <-ctx.Done():
			return
		case <-runDone:
			return
		case <-leave:
			s.wrap("(stopping: what was cut off is handled again when the table next runs)", "")
			return
		case <-tick:
		}
		now := s.programsBusy()
		still := false
		for agent, id := range busy {
			if now[agent] == id {
				still = true
			}
		}
		if !still {
			return
		}
	}
}

// programsBusy returns, for each agent whose program (command, session,
// openai) is handling a message, that message's id.
func (s *seat) programsBusy() map[string]string {
	busy := map[string]string{}
	for _, a := range s.ws.Config.Agents {
		if !a.RunsProgram() {
			continue
		}
		entries, err := s.ws.Mailbox(a.Name).List(mailbox.Cur)
		if err != nil || len(entries) == 0 {
			continue
		}
		busy[a.Name] = entries[0].ID
	}
	return busy
}

// endKeys reads a raw terminal for term.Terminal, and notes the last
// key read that ends its input: Ctrl-C or Ctrl-D (ReadLine says io.EOF
// for both).
type endKeys struct {
	r   io.Reader
	key atomic.Value // string: "Ctrl-C" or "Ctrl-D"
	// inLast is how many of the keys that end the input the last read
	// held: two pressed quickly are read in one go, and the line editor
	// keeps the second, unread, behind the first (see interactive).
	inLast atomic.Int32
}

func (k *endKeys) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	ends := int32(0)
	for _, b := range p[:n] {
		switch b {
		case 3:
			k.key.Store("Ctrl-C")
			ends++
		case 4:
			k.key.Store("Ctrl-D")
			ends++
		}
	}
	if n > 0 {
		k.inLast.Store(ends)
	}
	return n, err
}

// last is the last of the keys that end the input read, "Ctrl-D" when
// none was.
func (k *endKeys) last() string {
	if s, ok := k.key.Load().(string); ok {
		return s
	}
	return "Ctrl-D"
}

// crlf writes through a raw terminal, where a line ends with CR LF.
type crlf struct{ w io.Writer }

func (c crlf) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+8)
	for _, b := range p {
		if b == '\n' {
			out = append(out, '\r')
		}
		out = append(out, b)
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func answerCommandSeat(e *env) *cli.Command {
	return &cli.Command{
		Name:      "answer",
		Usage:     "answer, once, a question ([ASK_PLAYER]), a relay ([RELAY_TO_HUMAN]) or a prompt to your character no program plays ([GM_TO_PLAYER]) waiting at your D&D seat, as parley play would: a number picks an option",
		ArgsUsage: "ID TEXT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "as", Usage: "the `AGENT` that is you: a person of this workspace, not an agent a program plays"},
			&cli.StringFlag{Name: "lead", Usage: "the team lead `AGENT` you speak as"},
		},
		Action: func(c *cli.Context) error {
			if err := argCount(c, 2, -1, "the ID of the question and your answer"); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			s, err := openSeat(e, ws, c.String("as"), c.String("lead"))
			if err != nil {
				return err
			}
			s.where = "parley answer"
			return s.answerOnce(c.Args().First(), joinArgs(c.Args().Slice()[1:]))
		},
	}
}

func joinArgs(args []string) string {
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}

// answerOnce answers one waiting question by its id.
func (s *seat) answerOnce(arg, text string) error {
	id, err := s.ws.ResolveID(arg)
	if err != nil {
		return err
	}
	var c workspace.Copy
	var holders []string // the seat inboxes that hold it
	var firstErr error
	for _, agent := range s.inboxes() {
		held, err := s.ws.Received(id, agent, mailbox.Inbox)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if holders == nil {
			c = held
		}
		holders = append(holders, agent)
	}
	if holders == nil {
		if err := s.noLongerWaiting(id); err != nil {
			return err
		}
		return firstErr
	}
	if where := s.fileHandled(id, holders); where != "" {
		return fmt.Errorf("%s: %w (in %s): the copy that came back into the inbox is filed there; nothing was sent", id, mailbox.ErrHandled, where)
	}
	m, err := mailbox.ReadMessage(c.Path, s.ws.Config.Router.MaxMessageSize)
	if err != nil {
		return err
	}
	typ := workspace.TypeOf(m)
	agent := campaigns.SeatAnswerer(typ, holders, s.me, s.prompted())
	switch {
	case agent == "" && typ == campaigns.GMToPlayerType:
		return fmt.Errorf("%s is a prompt to %s, which you do not play: it is not yours to answer", id, dashIfEmpty(field(m, "to"), "another character"))
	case agent == "":
		return fmt.Errorf("%s is a %s, not a question: only [ASK_PLAYER], [RELAY_TO_HUMAN] and [GM_TO_PLAYER] are answered", id, dashIfEmpty(typ, "message without a type"))
	}
	s.out = io.Discard
	if ans := s.answeredAlready(id, agent, m.Header().Text("from")); ans != "" {
		s.handledCopies(id, holders, "answered already ("+ans+")")
		return fmt.Errorf("%s: answered already (%s was sent): the question is filed; nothing was sent", id, ans)
	}
	others := slices.DeleteFunc(slices.Clone(holders), func(a string) bool { return a == agent })
	q := &waitingQ{agent: agent, copies: append([]string{agent}, others...), id: id, m: m, typ: typ}
	if agents.PastQuestion(s.ws, m) {
		// Its session is over: filed unanswered, as parley play files it.
		s.handledCopies(id, q.copies, unansweredNote+", at "+dashIf(s.where, "parley answer"))
		return fmt.Errorf("%s, %s, is from a session that has ended: nothing answers it now, and it is filed unanswered; nothing was sent", id, q.name())
	}
	s.waiting = []*waitingQ{q}
	var said []byte
	s.out = writerFunc(func(p []byte) (int, error) { said = append(said, p...); return len(p), nil })
	if !s.answer(q, text) {
		return errors.New(strings.TrimSpace(string(said)))
	}
	fmt.Fprintf(s.e.stdout, "answered %s\n", id)
	return nil
}

// noLongerWaiting returns, for message id that no inbox of the seat
// holds, why it waits no more when one of the seat's agents has it
// filed (in done/, or in cur/ while it is filed): a question answered
// elsewhere (parley answer, another seat, the same seat's page not
// refreshed) says so and what the answer was, as a seat answering at the
// same moment says it; one handled with no answer found says so; any
// other message is handled already (mailbox.ErrHandled). It returns
// nil when none of the seat's agents has it filed. Every seat of the
// agents (the host's, a friend's, parley answer) decides it here: a
// friend's server refuses only a question that never came to them.
func (s *seat) noLongerWaiting(id string) error {
	for _, agent := range s.inboxes() {
		for _, state := range []string{mailbox.Cur, mailbox.Done} {
			c, err := s.ws.Received(id, agent, state)
			if err != nil {
				continue
			}
			m, err := mailbox.ReadMessage(c.Path, s.ws.Config.Router.MaxMessageSize)
			if err != nil {
				continue // filed meanwhile, from cur/ into done/: looked for there next
			}
			typ := workspace.TypeOf(m)
			answerer := campaigns.SeatAnswerer(typ, []string{agent}, s.me, s.prompted())
			if answerer == "" {
				return handledAlready(s.ws, id, c)
			}
			q := &waitingQ{agent: answerer, id: id, m: m, typ: typ}
			if ans := s.answeredAlready(id, answerer, m.Header().Text("from")); ans != "" {
				return fmt.Errorf("%s, %s, was answered elsewhere%s: nothing was sent", id, q.name(), s.answerSaid(ans, q))
			}
			if state == mailbox.Cur {
				// Taken by another seat, its answer not sent yet: it may
				// come back to the inbox if that answer fails.
				return fmt.Errorf("%s, %s, is being answered elsewhere (%s): nothing was sent", id, q.name(), s.ws.Short(c.Path))
			}
			return fmt.Errorf("%s, %s, was handled elsewhere, with no answer found (%s): nothing was sent", id, q.name(), s.ws.Short(c.Path))
		}
	}
	return nil
}

// writerFunc is a function that is an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
