package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func inboxCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "inbox",
		Usage:     "list the messages waiting in an agent's inbox (or another state with --state)",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state", Value: mailbox.Inbox, Usage: "the mailbox `STATE` to list: " + strings.Join(mailbox.States[1:], ", ")},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: fmt.Sprintf("list the newest `N` messages (default %d in text; --json lists every one)", inboxLimit)},
			&cli.BoolFlag{Name: "all", Usage: "list every message"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "then print each message as it arrives, until interrupted"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "an AGENT"); err != nil {
				return err
			}
			opts := inboxOptions{State: c.String("state"), JSON: c.Bool("json"), Limit: c.Int("limit"), Follow: c.Bool("follow")}
			switch {
			case c.IsSet("limit") && c.Bool("all"):
				return usagef("--limit and --all: give one")
			case c.IsSet("limit") && opts.Limit < 1:
				return usagef("--limit must be at least 1 (got %d)", opts.Limit)
			case c.Bool("all"):
				opts.Limit = 0
			case !c.IsSet("limit") && !opts.JSON:
				opts.Limit = inboxLimit
			}
			ws, configErr, err := e.openWorkspaceOrMailboxes(c)
			if err != nil {
				return err
			}
			e.warnUnloaded(ws.Root, configErr)
			if opts.State == mailbox.Inbox {
				noteUnrouted(e, ws)
			}
			if opts.Follow {
				ctx, stop := interruptible(c.Context)
				defer stop()
				return followInbox(ctx, e, ws, c.Args().First(), opts)
			}
			return runInbox(e, ws, c.Args().First(), opts)
		},
	}
}

// inboxLimit is how many messages parley inbox lists in text, the
// newest: a person reads the top of a long list, and each message listed
// is a file read and parsed.
const inboxLimit = 50

type inboxOptions struct {
	State  string
	Limit  int // the newest Limit messages; 0: every one
	JSON   bool
	Follow bool
}

// listedMessage is one line of `parley inbox`.
type listedMessage struct {
	ID      string `json:"id,omitempty"`
	File    string `json:"file"`
	From    string `json:"from,omitempty"`
	Type    string `json:"type,omitempty"`
	Signal  string `json:"signal,omitempty"`
	Summary string `json:"summary,omitempty"`
	Problem string `json:"problem,omitempty"` // why the file is not a readable message, or why it was refused
	// New marks a message of an inbox that arrived since a person last
	// listed it.
	New bool `json:"new,omitempty"`
}

func runInbox(e *env, ws *workspace.Workspace, agent string, opts inboxOptions) error {
	got, err := listInbox(ws, agent, opts, nil)
	if err != nil {
		return err
	}
	if opts.JSON {
		return e.printJSON(got.List)
	}
	return printInbox(e, agent, opts.State, got)
}

// printInbox prints a listing: a line for each message, and what it
// leaves out and what is new.
func printInbox(e *env, agent, state string, got inboxListing) error {
	list, total := got.List, got.Total
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "%s/%s is empty\n", agent, state)
		return nil
	}
	if older := total - len(list); older > 0 {
		fmt.Fprintf(e.stdout, "%s/%s: the newest %d of %d messages (--all lists every one)\n", agent, state, len(list), total)
	}
	switch n := countNew(list); {
	case n > 0 && got.NewLeftOut > 0:
		fmt.Fprintf(e.stdout, "%d new since you last looked (marked *), and %d more among the older ones left out\n", n, got.NewLeftOut)
	case n > 0:
		fmt.Fprintf(e.stdout, "%d new since you last looked (marked *)\n", n)
	case got.NewLeftOut > 0:
		fmt.Fprintf(e.stdout, "%d new since you last looked among the older ones left out\n", got.NewLeftOut)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFROM\tTYPE\tSUMMARY")
	for _, l := range list {
		printListed(tw, l)
	}
	return tw.Flush()
}

// inboxListing is what listInbox read: the messages shown, oldest first,
// how many the state holds in all, and how many of those left out are
// new.
type inboxListing struct {
	List       []listedMessage
	Total      int
	NewLeftOut int
}

// listInbox reads the messages of an agent's mailbox state that a listing
// shows (the newest opts.Limit; of them, those not in skip), and, for an
// inbox, marks those new since a person last listed it, then records that
// they have been shown: only they, not the older ones left out nor those
// in skip.
func listInbox(ws *workspace.Workspace, agent string, opts inboxOptions, skip map[string]bool) (inboxListing, error) {
	state := opts.State
	if err := ws.CheckAgent(agent); err != nil {
		return inboxListing{}, usagef("%v", err)
	}
	if !slices.Contains(mailbox.States, state) {
		return inboxListing{}, usagef("--state %q: use one of %s", state, strings.Join(mailbox.States, ", "))
	}
	box := ws.Mailbox(agent)
	// Names only, then only the files listed are read: a mailbox of
	// 100,000 messages costs its directory, not 100,000 reads.
	files, older, err := box.NewestAndOlder(state, opts.Limit)
	if err != nil {
		return inboxListing{}, err
	}
	out := inboxListing{Total: len(files) + len(older)}
	inbox := state == mailbox.Inbox
	var seen workspace.Seen
	if inbox {
		seen = ws.Seen(agent)
	}
	var shown, unshown []string
	for _, name := range older {
		if id, ok := mailbox.IDFromName(name); ok && inbox {
			unshown = append(unshown, id)
			if seen.New(id) {
				out.NewLeftOut++
			}
		}
	}
	out.List = make([]listedMessage, 0, len(files))
	for _, name := range files {
		if skip[name] {
			if id, ok := mailbox.IDFromName(name); ok && inbox {
				unshown = append(unshown, id)
			}
			continue
		}
		l := readListed(ws, box, agent, state, name)
		l.New = inbox && l.ID != "" && seen.New(l.ID)
		if inbox && l.ID != "" {
			shown = append(shown, l.ID)
			if st := box.HandledIn(l.ID); st != "" {
				// A copy back from git: handled, not new.
				l.New = false
				l.Problem = fmt.Sprintf("handled already (in %s/): a copy that came back; parley done %s files it", st, l.ID)
			}
		}
		out.List = append(out.List, l)
	}
	if inbox && len(shown) > 0 {
		// A record of what a person saw: a failure to keep it loses
		// only the marks of the next listing.
		_ = ws.MarkSeen(agent, shown, unshown)
	}
	return out, nil
}

// readListed reads one file of a mailbox state for a listing.
func readListed(ws *workspace.Workspace, box mailbox.Dir, agent, state, name string) listedMessage {
	l := listedMessage{File: name}
	l.ID, _ = mailbox.IDFromName(name)
	if state == mailbox.Rejected || state == mailbox.Dead {
		l.Problem, _ = box.Reason(state, name)
	}
	// Read as the router does: no symlinks followed, nothing huge.
	data, err := mailbox.ReadFile(box.Path(state, name), ws.Config.Router.MaxMessageSize)
	if err != nil && l.Problem == "" {
		l.Problem = err.Error()
	}
	if err == nil {
		if m, perr := mailbox.Parse(data); perr == nil {
			l.From, _ = m.Header().Get("from")
			l.Type, _ = m.Header().Get("type")
			l.Signal, _ = m.Header().Get("signal")
			l.Summary = summaryOf(m)
			if id, ok := m.Header().Get("id"); ok && l.ID == "" {
				l.ID = id
			}
		} else if l.Problem == "" {
			l.Problem = perr.Error()
		}
	}
	if l.From == "" && (state == mailbox.Outbox || state == mailbox.Sent || state == mailbox.Rejected) {
		l.From = agent // what an agent sends is from it, said or not
	}
	return l
}

// printListed writes one line of a listing: id (marked * when new),
// sender, type, summary.
func printListed(w io.Writer, l listedMessage) {
	id := l.ID
	if id == "" {
		id = l.File
	}
	if l.New {
		id = "*" + id
	}
	sum := l.Summary
	if l.Problem != "" {
		sum = shorten(printable(l.Problem), 160)
	}
	// Printable: escaped, and without tabs, which tabwriter would take
	// for a column break.
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", printable(id), printable(dash(l.From)), printable(dash(l.Type)), printable(sum))
}

func countNew(list []listedMessage) int {
	n := 0
	for _, l := range list {
		if l.New {
			n++
		}
	}
	return n
}

// followInbox lists a mailbox state as runInbox does, then prints each
// message that arrives in it, until ctx ends. The directory is watched,
// and looked at every two seconds besides, for filesystems that report
// no events.
func followInbox(ctx context.Context, e *env, ws *workspace.Workspace, agent string, opts inboxOptions) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := ws.CheckAgent(agent); err != nil {
		return usagef("%v", err)
	}
	dir := ws.Mailbox(agent).Path(opts.State, "")
	if err := w.Add(dir); err != nil {
		return err
	}
	// What is there before the first listing is shown by it, or left out
	// as older; what arrives while it is made is in it. Either way it is
	// not printed again, and nothing that arrives after is missed.
	shown := map[string]bool{}
	names, err := ws.Mailbox(agent).Names(opts.State)
	if err != nil {
		return err
	}
	for _, n := range names {
		shown[n] = true
	}
	got, err := listInbox(ws, agent, opts, nil)
	if err != nil {
		return err
	}
	for _, l := range got.List {
		shown[l.File] = true
	}
	if opts.JSON {
		// One JSON object a line, the first listing's and each later
		// message's alike, so that a script reads them as they come.
		for _, l := range got.List {
			if err := e.printJSONLine(l); err != nil {
				return err
			}
		}
	} else if err := printInbox(e, agent, opts.State, got); err != nil {
		return err
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Events:
		case <-w.Errors:
		case <-tick.C:
		}
		all := opts
		all.Limit = 0
		got, err := listInbox(ws, agent, all, shown)
		if err != nil {
			return err
		}
		for _, l := range got.List {
			shown[l.File] = true
			if opts.JSON {
				if err := e.printJSONLine(l); err != nil {
					return err
				}
				continue
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			printListed(tw, l)
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
}

// tellingFields are the payload fields that say most about a message
// whose body is empty, best first: an [ASK_PLAYER] holds its question, a
// [PLAYER_ANSWER] its answer (and the question it answers) in fields.
var tellingFields = []string{"answer", "question", "decision", "request", "reason", "text", "message", "description"}

// summaryOf returns a message's summary field, or the first line of its
// body, or, when the body is empty, its most telling field (see
// tellingField), on one line, shortened.
// It is the one summary of inbox listings, the MCP inbox and the seat.
func summaryOf(m *mailbox.Message) string {
	s, _ := m.Payload().Get("summary") // a [SESSION_END] has one of its own
	if s == "" {
		s, _ = m.Header().Get("summary")
	}
	if s == "" {
		// The first line of text; a heading above it ("## Scene") is
		// put before it, as a label ("Scene: Rain on the roof.").
		var heading string
		for _, line := range strings.Split(string(m.Body), "\n") {
			line = strings.TrimSpace(line)
			text := strings.TrimSpace(strings.TrimLeft(line, "#"))
			if text == "" || strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
				continue // a code fence's line says nothing: its text does
			}
			if strings.HasPrefix(line, "#") {
				if heading != "" {
					break // a heading under a heading: the first says enough
				}
				heading = text
				continue
			}
			s = text
			if heading != "" {
				s = heading + ": " + text
			}
			break
		}
		if s == "" {
			s = heading
		}
	}
	if s == "" {
		s = tellingField(m.Payload())
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// tellingField returns the value of the first of tellingFields a payload
// holds as text, else of its first text field in file order that is not
// a reserved header field (a count, a flag or an id says little), else "".
func tellingField(p mailbox.Fields) string {
	text := func(k string) string {
		v, _ := p.Value(k).(string)
		return strings.TrimSpace(v)
	}
	for _, k := range tellingFields {
		if v := text(k); v != "" {
			return v
		}
	}
	for _, k := range p.Keys() {
		if v := text(k); v != "" && !mailbox.IsReserved(k) {
			return v
		}
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
