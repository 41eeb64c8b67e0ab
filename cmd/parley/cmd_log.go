package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/web"
	"github.com/parley-dev/parley/runner/workspace"
)

func logCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "print the journal, oldest first: one line per message delivered, rejected, handled, given up, ...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines as they are written (until interrupted)"},
			&cli.StringSliceFlag{Name: "agent", Usage: "only lines about `AGENT`: its sender, a recipient, or the agent it happened to (repeat, or separate with commas)"},
			&cli.StringSliceFlag{Name: "type", Usage: "only messages of `TYPE` (repeat, or separate with commas)"},
			&cli.StringSliceFlag{Name: "outcome", Usage: "only `OUTCOME`s: " + strings.Join(workspace.Outcomes, ", ") + " (repeat, or separate with commas; rejected lists the links refused in place too)"},
			&cli.StringFlag{Name: "since", Usage: "only lines from `WHEN` on: a duration back from now (10m, 2h, 3d), a time of day (10:15, the last time the clock showed it) or a time (2026-11-21, 2026-11-21T10:15, RFC 3339); UTC unless it says otherwise or --local"},
			&cli.BoolFlag{Name: "local", Usage: "print times (and read --since) in the local time zone instead of UTC"},
			&cli.BoolFlag{Name: "mermaid", Usage: "print the messages delivered and refused as a Mermaid sequence diagram (one lane per agent), as parley serve's Lanes page draws them"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts := logOptions{Follow: c.Bool("follow"), JSON: c.Bool("json"), Local: c.Bool("local"), Mermaid: c.Bool("mermaid")}
			if opts.Mermaid && (opts.Follow || opts.JSON) {
				return usagef("--mermaid draws the journal as it is: leave out --follow and --json")
			}
			opts.Filter.Agents = splitList(c.StringSlice("agent"))
			opts.Filter.Types = splitList(c.StringSlice("type"))
			opts.Filter.Outcomes = splitList(c.StringSlice("outcome"))
			for _, o := range opts.Filter.Outcomes {
				if !slices.Contains(workspace.Outcomes, o) {
					return usagef("--outcome %q: use one of %s", o, strings.Join(workspace.Outcomes, ", "))
				}
			}
			if s := c.String("since"); s != "" {
				since, err := parseSince(s, time.Now(), opts.location())
				if err != nil {
					return usagef("--since %q: %v", s, err)
				}
				opts.Filter.Since = since
			}
			ws, err := e.openWorkspaceToRead(c)
			if err != nil {
				return err
			}
			if err := checkLogFilters(ws, opts.Filter.Agents, opts.Filter.Types); err != nil {
				return err
			}
			ctx, stop := interruptible(c.Context)
			defer stop()
			return runLog(ctx, e, ws, opts)
		},
	}
}

type logOptions struct {
	Filter workspace.JournalFilter
	Follow bool
	JSON   bool
	Local  bool // times in the local zone, not UTC
	// Mermaid prints the selected entries as a Mermaid sequence diagram.
	Mermaid bool
}

func (o logOptions) location() *time.Location {
	if o.Local {
		return time.Local
	}
	return time.UTC
}

func runLog(ctx context.Context, e *env, ws *workspace.Workspace, opts logOptions) error {
	if opts.Mermaid {
		return logMermaid(e, ws, opts)
	}
	// Buffered: a journal of 100,000 lines is one write per 64 KiB, not
	// one per line; flushed whenever the journal is read to its end.
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	loc := opts.location()
	var line []byte
	print := func(en workspace.Entry, raw []byte) error {
		if opts.JSON {
			line = append(append(line[:0], raw...), '\n') // the entry as it is
		} else {
			line = appendEntry(line[:0], &en, loc)
		}
		_, err := out.Write(line)
		return err
	}
	var err error
	if opts.Follow {
		err = opts.Filter.Follow(ctx, ws.JournalPath(), print, out.Flush)
	} else {
		err = opts.Filter.ReadInTimeOrder(ws.JournalPath(), print)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if warnJournal(e, ws, err) {
		return nil
	}
	return err
}

// warnJournal says, when err is one, which lines of the journal could not
// be read and what they are, and reports whether it was: unreadable lines
// are skipped, not fatal.
func warnJournal(e *env, ws *workspace.Workspace, err error) bool {
	var je *workspace.JournalError
	if !errors.As(err, &je) {
		return false
	}
	fmt.Fprintf(e.stderr, "parley: %s: skipped unreadable lines: %s\n", printable(ws.JournalPath()), indentLines(printableLines(err.Error())))
	fmt.Fprintf(e.stderr, "parley: hint: a line cut short (by a crash, or a full disk) or edited by hand; every other line was read. Delete or mend it (one JSON object per line) to be rid of this warning\n")
	return true
}

// checkLogFilters refuses an --agent that is no agent of the workspace,
// and a --type that is no type of its protocol nor of parley's own
// notices, as --outcome refuses an unknown outcome, unless the journal
// has lines about it: an agent removed from parley.yaml since, or an
// informal type, still has its history. One rule for every filter: a
// value that can select nothing is a mistake, said at once (a type
// known that has no line yet is not).
func checkLogFilters(ws *workspace.Workspace, agents, types []string) error {
	unknownAgents := map[string]error{}
	for _, a := range agents {
		if err := ws.CheckAgent(a); err != nil {
			unknownAgents[a] = err
		}
	}
	known := knownTypes(ws)
	unknownTypes := map[string]bool{}
	for _, t := range types {
		if known != nil && !slices.Contains(known, t) {
			unknownTypes[t] = true
		}
	}
	if len(unknownAgents) == 0 && len(unknownTypes) == 0 {
		return nil
	}
	errAllSeen := errors.New("every value seen")
	var logged []string // the types of the journal's lines, for a did-you-mean
	// An unreadable journal is reported by runLog; here it only leaves
	// values unseen.
	var all workspace.JournalFilter
	_ = all.Read(ws.JournalPath(), func(en workspace.Entry, _ []byte) error {
		for a := range unknownAgents {
			if en.From == a || en.Agent == a || slices.Contains(en.To, a) {
				delete(unknownAgents, a)
			}
		}
		delete(unknownTypes, en.Type)
		if en.Type != "" && !slices.Contains(logged, en.Type) && len(logged) < 1000 {
			logged = append(logged, en.Type)
		}
		if len(unknownAgents) == 0 && len(unknownTypes) == 0 {
			return errAllSeen
		}
		return nil
	})
	for _, a := range agents {
		if err, ok := unknownAgents[a]; ok {
			return usagef("--agent: %v, and no line of the journal is about it", err)
		}
	}
	candidates := slices.Compact(slices.Sorted(slices.Values(append(known, logged...))))
	for _, t := range types {
		if !unknownTypes[t] {
			continue
		}
		if near := spell.Nearest(t, candidates, 2); near != "" {
			return usagef("--type %q: no type of this workspace's protocol, and no line of the journal has it; did you mean %q?", t, near)
		}
		return usagef("--type %q: no type of this workspace's protocol, and no line of the journal has it (parley skills shows the protocol's types)", t)
	}
	return nil
}

// knownTypes returns the message types a workspace may journal before
// any is sent: its protocol's, the nudges of its timeouts, and parley's
// own notices. It returns nil when the workspace checks messages against
// no skills (any type goes), or its protocol cannot be read (parley
// status and run say why): --type is then not checked.
func knownTypes(ws *workspace.Workspace) []string {
	p, err := ws.Protocol()
	if err != nil || p == nil {
		return nil // no skills: any type goes, and --follow may wait for one not sent yet
	}
	known := append(slices.Clone(parleyTypes), p.TypeNames()...)
	for _, t := range ws.Config.Timeouts {
		if t.Nudge != nil && t.Nudge.Type != "" {
			known = append(known, t.Nudge.Type)
		}
	}
	return known
}

// parleyTypes are the types of the messages parley itself sends, with
// any protocol or none.
var parleyTypes = []string{
	workspace.LoopNotice, workspace.RefusedNotice, workspace.GivenUpNotice,
	workspace.UnansweredNotice, workspace.RetriedNotice,
	workspace.ShutdownRequest, workspace.ShutdownResponse,
	llm.BudgetNotice, llm.ToolRoundsNotice, llm.KeyNotice, agents.SheetNotice,
}

// refusedInPlace is how parley log names the outcome of a rejected line
// about a file refused where it is (workspace.Entry.InPlace): it was not
// moved to rejected/, and --outcome rejected lists it.
const refusedInPlace = "refused"

// logTime is how parley log prints a time: UTC (as ids are) with a Z, or
// local with the zone's offset.
const logTime = "2006-01-02 15:04:05.000Z07:00"

// appendEntry renders a journal entry for a terminal, one line (and one
// more per further problem of a refusal, warning or note, indented),
// every field made printable:
//
//	2026-11-21 10:15:00.123Z  delivered  gm -> alice, bob  NARRATIVE  20261121-...-gm-3fa9c2
//	2026-11-21 10:15:00.456Z  rejected   bob  hello.md:2: to: unknown agent "zed"
//	    hello.md:3: tpye: no field ... is called tpye; did you mean type?
//	2026-11-21 10:15:00.500Z  refused    bob  link.md: a hard link ...  (left where it is: mailboxes/bob/outbox/link.md, reason in mailboxes/bob/outbox/link.md.reason)
//	2026-11-21 10:15:01.789Z  handled    alice  NARRATIVE from gm  20261121-...-gm-3fa9c2
//	2026-11-21 10:15:02.000Z  dead       bob  NARRATIVE from gm  20261121-...-gm-3fa9c2  bob: gave up after 3 attempts: ...
func appendEntry(b []byte, en *workspace.Entry, loc *time.Location) []byte {
	if loc == time.UTC && isJournalTime(en.Time) {
		// 2026-11-21T10:15:00.412345Z -> 2026-11-21 10:15:00.412Z, as
		// the general case below would print it, without parsing.
		b = append(b, en.Time[:10]...)
		b = append(b, ' ')
		b = append(b, en.Time[11:23]...)
		b = append(b, 'Z')
	} else if t, err := time.Parse(mailbox.TimeFormat, en.Time); err == nil {
		b = t.In(loc).AppendFormat(b, logTime)
	} else {
		b = append(b, printable(en.Time)...)
	}
	b = append(b, "  "...)
	outcome := printable(en.Outcome)
	if en.InPlace() {
		outcome = refusedInPlace
	}
	b = append(b, outcome...)
	for n := len(outcome); n < 9; n++ {
		b = append(b, ' ')
	}
	b = append(b, "  "...)
	more := "" // the further problems of a refusal, one a line
	kind := en.Type
	if en.Signal != "" {
		kind += "/" + en.Signal
	}
	switch en.Outcome {
	case workspace.Delivered:
		b = append(b, printable(en.From)...)
		b = append(b, " -> "...)
		if len(en.To) == 0 {
			b = append(b, '-')
		}
		for i, to := range en.To {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, printable(to)...)
		}
		b = append(b, "  "...)
		b = append(b, printable(dash(kind))...)
		b = append(b, "  "...)
		b = append(b, printable(dash(en.ID))...)
	case workspace.Forwarded, workspace.Received, workspace.Bounced:
		// forwarded  gm -> aria@laptop  TYPE  <id>
		// received   aria@laptop -> gm  TYPE  <id>
		b = append(b, printable(dash(en.From))...)
		if en.Outcome != workspace.Forwarded {
			b = append(b, '@')
			b = append(b, printable(dash(en.Workspace))...)
		}
		b = append(b, " -> "...)
		to := en.Agent
		if to == "" {
			to = strings.Join(en.To, ", ")
		}
		b = append(b, printable(dash(to))...)
		if en.Outcome == workspace.Forwarded {
			b = append(b, '@')
			b = append(b, printable(dash(en.Workspace))...)
		}
		b = append(b, "  "...)
		b = append(b, printable(dash(kind))...)
		b = append(b, "  "...)
		b = append(b, printable(dash(en.ID))...)
		if en.Reason != "" {
			b = append(b, "  "...)
			b = append(b, printable(en.Reason)...)
		} else if en.Note != "" {
			b = append(b, "  ("...)
			b = append(b, printable(en.Note)...)
			b = append(b, ')')
		}
	case workspace.Refused:
		b = append(b, printable(en.From)...)
		b = append(b, "  "...)
		// A refusal of several problems (workspace.Refusal.Error) says
		// one a line: the first here, the others below the entry,
		// indented as its warnings are.
		var reason string
		reason, more = cutProblems(en.Reason, en.File)
		b = append(b, printable(reason)...)
		if en.InPlace() {
			// refused  alice  x.md: a hard link ...  (left where it is: mailboxes/alice/outbox/x.md, its reason beside it)
			b = append(b, "  (left where it is: "...)
			b = append(b, printable(en.Path)...)
			b = append(b, ", reason in "...)
			b = append(b, printable(en.Path+mailbox.ReasonSuffix)...)
			b = append(b, ')')
		}
	case workspace.ModelCalled:
		// gm  llama3.1  120 in, 8 out  <id>  answered
		b = append(b, printable(en.Agent)...)
		b = append(b, "  "...)
		b = append(b, printable(dash(en.Model))...)
		b = append(b, "  "...)
		if en.Interrupted {
			// Cut short by a stop: what the endpoint counted is unknown.
			b = append(b, "? in, ? out  "...)
		} else {
			b = strconv.AppendInt(b, en.TokensIn, 10)
			b = append(b, " in, "...)
			b = strconv.AppendInt(b, en.TokensOut, 10)
			b = append(b, " out  "...)
		}
		b = append(b, printable(dash(en.ID))...)
		b = append(b, "  "...)
		if en.Attempts > 1 {
			// The client tried the call again (openai.max_retries):
			// the endpoint got that many requests.
			b = strconv.AppendInt(b, int64(en.Attempts), 10)
			b = append(b, " HTTP requests: "...)
		}
		b = append(b, printable(dashIfEmpty(en.Reason, en.Note))...)
	case workspace.ToolCalled:
		// gm  roll_dice {"dice":"1d20"} -> {"total":17,...}  <id>
		// (- for the id of a change made at the command line)
		b = append(b, printable(dash(en.Agent))...)
		b = append(b, "  "...)
		b = append(b, printable(en.Tool)...)
		b = append(b, ' ')
		b = append(b, printable(en.Args)...)
		if en.Reason != "" {
			b = append(b, " -> error: "...)
			b = append(b, printable(en.Reason)...)
		} else {
			b = append(b, " -> "...)
			b = append(b, printable(en.Result)...)
		}
		b = append(b, "  "...)
		b = append(b, printable(dash(en.ID))...)
	default:
		who := en.Agent
		if who == "" {
			who = en.From
		}
		b = append(b, printable(dash(who))...)
		from := en.From != "" && en.From != who
		if kind != "" || from {
			b = append(b, "  "...)
			b = append(b, printable(kind)...)
			if from {
				if kind != "" {
					b = append(b, ' ')
				}
				b = append(b, "from "...)
				b = append(b, printable(en.From)...)
			}
		}
		if en.ID != "" {
			b = append(b, "  "...)
			b = append(b, printable(en.ID)...)
		}
		if en.Attempts > 1 {
			b = append(b, "  (attempt "...)
			b = strconv.AppendInt(b, int64(en.Attempts), 10)
			b = append(b, ')')
		}
		if en.Reason != "" {
			reason := en.Reason
			if en.Outcome == workspace.LoopStopped {
				// A refusal, as a rejected entry's.
				reason, more = cutProblems(reason, en.File)
			}
			b = append(b, "  "...)
			b = append(b, printable(reason)...)
		}
	}
	if len(en.Already) > 0 {
		b = append(b, "  (already held by "...)
		b = append(b, printable(strings.Join(en.Already, ", "))...)
		b = append(b, ')')
	}
	for more != "" {
		var l string
		l, more = cutProblems(more, en.File)
		b = append(b, "\n    "...)
		b = append(b, printable(l)...)
	}
	for _, w := range en.Warnings {
		b = append(b, "\n    warning: "...)
		b = append(b, printable(w)...)
	}
	if en.Note != "" {
		b = append(b, "\n    note: "...)
		b = append(b, printable(en.Note)...)
	}
	return append(b, '\n')
}

// cutProblems cuts a refusal's reason (workspace.Refusal.Error) after
// its first problem: each further one is on a line of its own that
// starts with the file's name ("x.md:4: tpye: ...", "x.md: and 3 more
// problems"). A line break anywhere else is part of the problem, which
// printable escapes.
func cutProblems(reason, file string) (first, more string) {
	if file == "" {
		return reason, ""
	}
	sep := "\n" + file + ":"
	i := strings.Index(reason, sep)
	if i < 0 {
		return reason, ""
	}
	return reason[:i], reason[i+1:]
}

// isJournalTime reports whether s is written in mailbox.TimeFormat
// (2026-11-21T10:15:00.412345Z), digits where digits go.
func isJournalTime(s string) bool {
	const layout = "dddd-dd-ddTdd:dd:dd.ddddddZ"
	if len(s) != len(layout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if layout[i] == 'd' && (s[i] < '0' || s[i] > '9') || layout[i] != 'd' && s[i] != layout[i] {
			return false
		}
	}
	return true
}

// splitList splits the values of a repeatable flag at commas too,
// spaces around each trimmed. An empty item is refused before a command
// runs (emptyNameFlag).
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// sinceLayouts are the times --since takes, besides RFC 3339.
var sinceLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// parseSince reads --since: a duration back from now (Go's, and "3d"
// for days), or a time; a time that names no zone is in loc.
func parseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.AddDate(0, 0, -days), nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range sinceLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if c, err := time.Parse(layout, s); err == nil {
			// A time of day: the last time the clock showed it.
			n := now.In(loc)
			t := time.Date(n.Year(), n.Month(), n.Day(), c.Hour(), c.Minute(), c.Second(), 0, loc)
			if t.After(n) {
				t = t.AddDate(0, 0, -1)
			}
			return t, nil
		}
	}
	return time.Time{}, errors.New("want a duration back from now (10m, 2h, 3d), a time of day (10:15, 10:15:30: the last time the clock showed it) or a time (2026-11-21, 2026-11-21T10:15, 2026-11-21T10:15:00+01:00)")
}

// logMermaid prints the entries the filter selects as a Mermaid sequence
// diagram: the lanes of parley serve.
func logMermaid(e *env, ws *workspace.Workspace, opts logOptions) error {
	var entries []workspace.Entry
	err := opts.Filter.Read(ws.JournalPath(), func(en workspace.Entry, _ []byte) error {
		entries = append(entries, en)
		return nil
	})
	if !warnJournal(e, ws, err) && err != nil {
		return err
	}
	return web.LanesOf(ws.AgentNames(), entries, 0).WriteMermaid(e.stdout)
}
