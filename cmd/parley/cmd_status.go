package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
	"github.com/urfave/cli/v2"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show each agent's mailbox counts and last activity, and its newest rejected files and dead letters with the reasons",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: fmt.Sprintf("list every rejected file and dead letter, not only the %d newest of each agent", statusProblems)},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts := statusOptions{All: c.Bool("all"), JSON: c.Bool("json")}
			ws, configErr, err := e.openWorkspaceOrMailboxes(c)
			if err != nil {
				return err
			}
			opts.ConfigError = configErr
			return runStatus(e, ws, opts, time.Now())
		},
	}
}

type statusOptions struct {
	All  bool // every rejected file and dead letter
	JSON bool
	// ConfigError is why parley.yaml could not be loaded: ws is then an
	// unloadedWorkspace.
	ConfigError error
}

// openWorkspaceOrMailboxes opens the workspace as openWorkspaceToRead
// does, for a command that reads mailboxes (status, inbox, read): when
// parley.yaml cannot be loaded, or is missing, the mailboxes are read all
// the same, as the running runner has them, or as mailboxes/ holds them,
// so that a person reads their messages while they mend it. ws is then an
// unloadedWorkspace and configErr says why parley.yaml does not load
// (without what the running runner does: the caller says that). err is
// the workspace not found, or parley.yaml's error when it loads after all
// (mended meanwhile).
func (e *env) openWorkspaceOrMailboxes(c *cli.Context) (ws *workspace.Workspace, configErr, err error) {
	ws, err = e.openWorkspaceToRead(c)
	if err == nil {
		return ws, nil, nil
	}
	root, ferr := findRoot(c)
	if root == "" || ferr != nil && !errors.As(ferr, new(*workspace.MissingConfigError)) {
		return nil, nil, err
	}
	if ferr == nil {
		// The error without what the running runner does.
		_, ferr = workspace.OpenWith(root, workspace.LoadOptions{SkipUnknown: true})
	}
	if ferr == nil {
		return nil, nil, err // mended meanwhile
	}
	return unloadedWorkspace(root), ferr, nil
}

// warnUnloaded says once on stderr, for a command that reads mailboxes
// (inbox, read) of the workspace at root, that parley.yaml does not
// load, and why, with what a running runner does: the mailboxes are read
// all the same (openWorkspaceOrMailboxes).
func (e *env) warnUnloaded(root string, configErr error) {
	if configErr == nil {
		return
	}
	refuse, keeps := "parley send and parley run refuse", workspace.RunnerKeeps(root)
	if keeps != "" {
		refuse = "parley send and a new parley run refuse"
	}
	if errors.As(configErr, new(*workspace.MissingConfigError)) {
		fmt.Fprintf(e.stderr, "parley: warning: %s%s; the mailboxes are read as they are, and %s until it is back\n", printable(configErr.Error()), keeps, refuse)
		return
	}
	fmt.Fprintf(e.stderr, "parley: warning: %s does not load%s; the mailboxes are read as they are, and %s until it is mended:\n  %s\n",
		workspace.ConfigFile, keeps, refuse, reasonLines(configErr.Error(), "  "))
}

// unloadedWorkspace is the workspace at root as status shows it when its
// parley.yaml cannot be loaded (or is missing): the agents the running
// runner routes for, then the other mailboxes in mailboxes/, each with
// nothing but its name.
func unloadedWorkspace(root string) *workspace.Workspace {
	var names []string
	if info := workspace.ReadRunnerInfo(root); info != nil {
		names = append(names, info.Agents...)
	}
	if des, err := os.ReadDir(filepath.Join(root, workspace.MailboxesDir)); err == nil {
		for _, de := range des {
			if de.IsDir() && mailbox.CheckName(de.Name()) == nil && !slices.Contains(names, de.Name()) {
				names = append(names, de.Name())
			}
		}
	}
	// parley's defaults (the size a message may be, ...): an empty
	// parley.yaml always parses.
	cfg, err := workspace.ParseConfig(workspace.ConfigFile, nil)
	if err != nil {
		cfg = &workspace.Config{Router: workspace.RouterConfig{MaxMessageSize: workspace.DefaultMaxMessageSize}}
	}
	for _, n := range names {
		cfg.Agents = append(cfg.Agents, workspace.Agent{Name: n})
	}
	return &workspace.Workspace{Root: root, Config: cfg}
}

// statusProblems is how many rejected files, and as many dead letters,
// status lists per agent without --all: the newest.
const statusProblems = 10

// statusReason is the longest a reason is printed in text: a reason may
// hold a whole YAML error, or anything a program wrote.
const statusReason = 160

type statusReport struct {
	Workspace string `json:"workspace"`
	RunnerPID int    `json:"runner_pid,omitempty"` // -1: a runner holds the lock, pid unknown
	// Seat says the runner is a person's seat's (parley play): a
	// `parley run` started now is handed the table.
	Seat   bool                  `json:"runner_is_seat,omitempty"`
	Runner *workspace.RunnerInfo `json:"runner,omitempty"` // what the running runner says of its configuration
	// RunnerIdle, when set, says since when the running runner has not
	// looked at the outboxes, though it looks every rescan interval:
	// it holds the workspace and does nothing (see runnerIdle).
	RunnerIdle string `json:"runner_idle_since,omitempty"`
	// Gone are the messages a runner delivered that their recipients'
	// mailboxes no longer hold (workspace.Gone: removed outside parley,
	// by a git reset or checkout most likely), as far as they are still
	// missing.
	Gone   *workspace.Gone         `json:"gone_messages,omitempty"`
	Agents []workspace.AgentStatus `json:"agents"`
	// Unknown are mailboxes of no agent of parley.yaml: what an agent
	// renamed or removed left behind.
	Unknown []workspace.Unknown `json:"unknown_mailboxes,omitempty"`
	// ConfigError is why parley.yaml cannot be loaded (or that it is
	// missing): the agents are then the running runner's, and the
	// mailboxes in mailboxes/; parley send and a new parley run refuse
	// until it is mended.
	ConfigError string `json:"config_error,omitempty"`
	// ProtocolError is why the workspace's skills cannot be loaded: send
	// and a new run refuse every message until it is mended (a running
	// runner routes with the skills it loaded before).
	ProtocolError string `json:"protocol_error,omitempty"`
	// UnheldRoles are the roles the skills name that no agent has.
	UnheldRoles []workspace.UnheldRole `json:"unheld_roles,omitempty"`
	// UnknownRoles are the roles agents are given that no skill and no
	// route knows: misspelt, most likely.
	UnknownRoles []workspace.UnknownRole `json:"unknown_roles,omitempty"`
	// UnknownCharacters are the characters agents play that the
	// campaign's party has no sheet of: misspelt, most likely.
	UnknownCharacters []workspace.UnknownCharacter `json:"unknown_characters,omitempty"`
	// Conflicts name the campaign files git left an unresolved merge
	// conflict in (path:line, from the workspace): parley writes into
	// none, and reads no sheet that holds one (campaigns.Conflicts).
	Conflicts []string `json:"conflicts,omitempty"`
	// MergeDriverMissing: the workspace is a git clone without parley's
	// merge driver (a `git clone`; mergeDriverMissing), whose campaigns
	// have journals a pull would merge with union.
	MergeDriverMissing bool `json:"merge_driver_missing,omitempty"`
	// Unjournaled say which AI players' accepts: keep them from writing
	// their journals at this table (workspace.Unjournaled).
	Unjournaled []string `json:"unjournaled_players,omitempty"`
	// Models is what the openai agents' models used (parley usage), and
	// why their latest call failed; nil without openai agents.
	Models *usageReport `json:"models,omitempty"`
	// Endpoints are the outages of the models' endpoints that
	// .parley/endpoints.json keeps: a wait one asked for (Retry-After),
	// in force or over, or an outage that ended within a day.
	Endpoints []llm.KeptEndpoint `json:"endpoints,omitempty"`
	// Bridge is what the workspace's bridge last said of itself, when
	// parley.yaml has a bridge: section.
	Bridge *bridgeReport `json:"bridge,omitempty"`
	// Settled are the dead letters listed whose step went on without
	// them since they were given up (see givenUpFates): parley retry
	// leaves them in dead/ unless --force.
	Settled []settledLetter `json:"settled_dead_letters,omitempty"`
	// Escalations are the dev pipeline's escalations waiting for a
	// person's decision (parley pipeline shows each, and the command
	// that answers it), in a workspace with an orchestrator.
	Escalations []escalation `json:"escalations_waiting,omitempty"`
	// DriverProblems say why parley run would refuse to start: an agent
	// names a built-in handler or a driver parley does not have, or its
	// entry lacks a key its driver needs (a typo beside it).
	DriverProblems []string `json:"driver_problems,omitempty"`
	// StderrLogs name the logs of what the programs of agents at work
	// (working, retrying) wrote to stderr since the runner started (see
	// stderrLogs); status says nothing of an idle agent's log.
	StderrLogs []stderrLog `json:"stderr_logs,omitempty"`
}

// stderrLog is the log of what an agent's program wrote to stderr, as
// status names it.
type stderrLog struct {
	Agent   string    `json:"agent"`
	Path    string    `json:"path"`    // relative to the workspace
	Written time.Time `json:"written"` // when it was last written
}

// stderrLogs are the logs of what the programs of the agents at work
// wrote to stderr while this runner runs: where to look (tail -f) when a
// program takes long or is tried again. Not for idle agents, whose
// programs' warnings are old news (the README says where they are):
// status stays short.
func stderrLogs(ws *workspace.Workspace, agents []workspace.AgentStatus, runner *workspace.RunnerInfo) []stderrLog {
	var logs []stderrLog
	for _, a := range agents {
		if a.State != workspace.StateWorking && a.State != workspace.StateRetrying {
			continue
		}
		path := ws.StderrLogPath(a.Name)
		fi, err := os.Stat(path)
		if err != nil || (runner != nil && fi.ModTime().Before(runner.Started)) {
			continue
		}
		logs = append(logs, stderrLog{Agent: a.Name, Path: ws.Short(path), Written: fi.ModTime()})
	}
	return logs
}

// settledLetter is a dead letter whose step went on without it.
type settledLetter struct {
	Agent string `json:"agent"`
	ID    string `json:"id"`
	Path  string `json:"path"`
	Since string `json:"since"` // what happened to its step since it was given up
}

// bridgeReport is the bridge's state as status shows it.
type bridgeReport struct {
	Name    string                 `json:"name"`
	Running bool                   `json:"running"`
	State   *workspace.BridgeState `json:"state,omitempty"` // nil: no bridge ever ran here
	// Outgoing is how many messages wait here for other workspaces, in
	// the inboxes of their agents (workspace.Outgoing), counted now,
	// whether a bridge runs or not; State.Outgoing says the same.
	Outgoing int `json:"outgoing"`
	// Lag is how many messages for this workspace wait in the stream,
	// as the running bridge last counted; null when no bridge runs, or
	// the one that runs is not connected: only a connected bridge asks
	// the stream (State.Lag is then its last count, stale).
	Lag *uint64 `json:"lag"`
	// OutgoingText says it in words, and to which workspaces.
	OutgoingText string `json:"-"`
	// Refused counts the messages kept in .parley/bridge/refused/: refused
	// on arrival, naming no agent of this workspace, and refused still,
	// checked again as the bridge would take them now.
	Refused int `json:"refused,omitempty"`
	// Retryable are the ones kept there that the bridge would take now
	// (the agent they name is one since): parley retry PATH delivers
	// each.
	Retryable []string `json:"retryable,omitempty"`
}

// bridgeRefusals counts the messages kept in .parley/bridge/refused/
// that the bridge would refuse still, and lists the ones it would take
// now (checked again as parley retry checks them). One the journal says
// nothing of cannot be checked: it counts as refused.
func bridgeRefusals(ws *workspace.Workspace) (refused int, retryable []string) {
	names, err := filepath.Glob(filepath.Join(ws.BridgeRefusedDir(), "*.md"))
	if err != nil || len(names) == 0 {
		return 0, nil
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = ws.Short(n)
	}
	subjects, _ := refusedSubjects(ws, paths)
	for _, p := range paths {
		subject, ok := subjects[p]
		if !ok {
			refused++
			continue
		}
		if _, refusal, err := recheck(ws, p, subject); err != nil || refusal != nil {
			refused++
			continue
		}
		retryable = append(retryable, p)
	}
	return refused, retryable
}

func runStatus(e *env, ws *workspace.Workspace, opts statusOptions, now time.Time) error {
	so := workspace.StatusOptions{Problems: statusProblems, Now: now}
	if opts.All {
		so.Problems = 0
	}
	agents, err := ws.Status(so)
	if err != nil {
		return err
	}
	unknown, err := ws.UnknownMailboxes()
	if err != nil {
		return err
	}
	rep := statusReport{Workspace: ws.Root, RunnerPID: ws.RunnerPID(), Runner: workspace.ReadRunnerInfo(ws.Root), Agents: agents, Unknown: unknown}
	rep.Seat = rep.RunnerPID > 0 && ws.SeatHolds()
	// Unreadable: nothing is said gone (the runner's log said it).
	if g, err := ws.StillGone(); err == nil && g.Count() > 0 {
		rep.Gone = &g
	}
	if rep.RunnerPID > 0 && runnerIdle(rep.Runner, ws.Config.Router.RescanInterval, time.Now()) {
		rep.RunnerIdle = rep.Runner.Looked.UTC().Format(time.RFC3339)
	}
	if opts.ConfigError != nil {
		rep.ConfigError = opts.ConfigError.Error()
	} else if protocol, err := ws.Protocol(); err == nil {
		rep.UnheldRoles = ws.UnheldRoles(protocol)
		rep.UnknownRoles = ws.UnknownRoles(protocol)
		rep.Unjournaled = ws.Unjournaled(protocol)
	} else {
		rep.ProtocolError = err.Error()
	}
	if opts.ConfigError == nil {
		rep.UnknownCharacters = ws.UnknownCharacters()
	}
	// A campaign file git left a conflict in (a pull of two clones'
	// sessions): status said nothing, where campaign check and the seat
	// did. One read of each markdown file: what campaign check reads.
	conflicts, _ := campaigns.Conflicts(ws.Root)
	for _, ce := range conflicts {
		rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s:%d", ce.Path, ce.Line))
	}
	rep.MergeDriverMissing = mergeDriverMissing(ws.Root)
	if rep.RunnerPID == 0 && rep.ConfigError == "" {
		// A running runner says what of parley.yaml it could not load
		// (and routes on with what it loaded before); with none, what
		// parley run would refuse to start with.
		ro := runnerOptions(e, ws, slog.New(slog.DiscardHandler))
		for _, a := range ws.Config.Agents {
			if err := ro.DriverProblem(a, ws.Root); err != nil {
				rep.DriverProblems = append(rep.DriverProblems, err.Error())
			}
		}
	}
	if hasModels(ws) {
		// A journal that cannot be read is said by parley log.
		rep.Models, _ = modelUsage(ws)
		// A file that cannot be read holds nothing for the next run
		// either (llm.Endpoints.Keep).
		rep.Endpoints, _ = llm.ReadEndpoints(filepath.Join(ws.Root, workspace.StateDir, llm.EndpointsFile), time.Now())
	}
	if cfg := ws.Config.Bridge; cfg != nil {
		rep.Bridge = &bridgeReport{Name: cfg.Name, Running: ws.BridgeRunning()}
		rep.Bridge.Refused, rep.Bridge.Retryable = bridgeRefusals(ws)
		// An inbox that cannot be read is said in the agent's line.
		out, _ := ws.Outgoing()
		rep.Bridge.Outgoing, rep.Bridge.OutgoingText = outgoingText(out)
		if st, ok, err := ws.ReadBridgeState(); err == nil && ok {
			// The bridge says what waited when it last looked; the
			// inboxes say what waits now.
			st.Outgoing = rep.Bridge.Outgoing
			rep.Bridge.State = &st
			if rep.Bridge.Running {
				if st.Connected && !st.LagStale {
					rep.Bridge.Lag = &st.Lag
				}
			} else {
				st.Connected = false // no bridge runs to be connected
			}
		}
	}
	rep.Escalations = escalationsWaiting(ws)
	if rep.RunnerPID != 0 {
		rep.StderrLogs = stderrLogs(ws, agents, rep.Runner)
	}
	fates := newGivenUpFates(ws)
	settled := map[string]string{} // path -> what happened since
	for _, a := range agents {
		for _, f := range a.DeadFiles {
			d := fates.deadLetterAt(a.Name, filepath.Join(ws.Root, filepath.FromSlash(f.Path)))
			if since := fates.settled(d); since != "" {
				settled[f.Path] = since + "; retrying it would do " + twice(d) + " twice"
				rep.Settled = append(rep.Settled, settledLetter{Agent: a.Name, ID: d.ID, Path: filepath.ToSlash(f.Path), Since: since})
			}
		}
	}
	if opts.JSON {
		if err := e.printJSON(rep); err != nil {
			return err
		}
		return rep.broken(opts.ConfigError)
	}
	runnerState := "not running"
	switch {
	case rep.RunnerPID > 0 && rep.Seat:
		runnerState = fmt.Sprintf("running (pid %d): a parley play seat routes the table; a parley run started now is handed it", rep.RunnerPID)
	case rep.RunnerPID > 0:
		runnerState = fmt.Sprintf("running (pid %d)", rep.RunnerPID)
	case rep.RunnerPID < 0:
		runnerState = "running"
	}
	fmt.Fprintf(e.stdout, "workspace %s\nrunner    %s\n", ws.Root, runnerState)
	if rep.RunnerIdle != "" {
		fmt.Fprintf(e.stdout, "          but it has not looked at the outboxes since %s, and it looks every %s: it holds the workspace and does nothing (stopped with kill -STOP or Ctrl-Z, its machine asleep, or stuck): kill -CONT %d, or stop it and start parley run again\n",
			ago(rep.Runner.Looked, now), ws.Config.Router.RescanInterval, rep.RunnerPID)
	}
	shownConfigError := "" // the running runner's, shown under config
	if info := rep.Runner; info != nil {
		fmt.Fprintf(e.stdout, "config    loaded %s\n", ago(info.Loaded, now))
		switch {
		case errors.As(opts.ConfigError, new(*workspace.MissingConfigError)):
			fmt.Fprintf(e.stdout, "          %s\n          %s; parley send and a new parley run refuse until it is back\n",
				printable(rep.ConfigError), runnerKeepsText(info))
		case rep.ConfigError != "":
			fmt.Fprintf(e.stdout, "          %s as saved now is NOT loaded: %s; parley send and a new parley run refuse until it is mended:\n          %s\n",
				workspace.ConfigFile, runnerKeepsText(info), reasonLines(rep.ConfigError, "          "))
		case info.ConfigError != "" && workspace.StampConfig(ws.Root).String() == info.Files:
			shownConfigError = info.ConfigError
			fmt.Fprintf(e.stdout, "          %s as saved now is NOT loaded (tried %s); the runner routes with the one loaded before:\n          %s\n",
				workspace.ConfigFile, ago(info.ConfigErrorAt, now), reasonLines(info.ConfigError, "          "))
		}
		if info.JournalLost > 0 {
			fmt.Fprintf(e.stdout, "journal   %s (found %s)\n", workspace.JournalLostText(info.JournalLost), ago(info.JournalLostAt, now))
		}
	}
	switch {
	case rep.Runner != nil || rep.ConfigError == "":
	case errors.As(opts.ConfigError, new(*workspace.MissingConfigError)):
		fmt.Fprintf(e.stdout, "config    %s\n          parley send and parley run refuse until it is back\n", printable(rep.ConfigError))
	default:
		fmt.Fprintf(e.stdout, "config    %s is NOT loaded: parley send and parley run refuse until it is mended:\n          %s\n",
			workspace.ConfigFile, reasonLines(rep.ConfigError, "          "))
	}
	if rep.ProtocolError != "" {
		refuse := "parley send and parley run refuse every message until it is mended"
		if rep.Runner != nil {
			refuse = runnerKeepsText(rep.Runner) + "; parley send and a new parley run refuse every message until it is mended"
		}
		if rep.ProtocolError == shownConfigError {
			fmt.Fprintf(e.stdout, "skills    NOT loaded (the reason above): %s\n", refuse)
		} else {
			fmt.Fprintf(e.stdout, "skills    NOT loaded: %s\n          %s\n", reasonLines(rep.ProtocolError, "          "), refuse)
		}
	}
	for _, p := range rep.DriverProblems {
		fmt.Fprintf(e.stdout, "agents    %s\n          parley run refuses to start until it is mended\n", printable(p))
	}
	if rep.Bridge != nil {
		printBridge(e, rep.Bridge, now)
	}
	if len(rep.UnheldRoles) > 0 {
		var groups []string // "human, narrator (dnd-team)"
		for i, u := range rep.UnheldRoles {
			if i > 0 && rep.UnheldRoles[i-1].Skill == u.Skill {
				groups[len(groups)-1] = strings.TrimSuffix(groups[len(groups)-1], " ("+u.Skill+")") + ", " + u.Role + " (" + u.Skill + ")"
				continue
			}
			groups = append(groups, u.Role+" ("+u.Skill+")")
		}
		fmt.Fprintf(e.stdout, "roles     no agent has %s: what the protocol sends to them goes nowhere unless to: names an agent\n", strings.Join(groups, "; "))
	}
	if g := rep.Gone; g != nil {
		for _, a := range g.Names() {
			fmt.Fprintf(e.stdout, "gone      %s, found %s: %s\n", printable(workspace.GoneText(a, len(g.Agents[a]))), ago(g.Found, now), printable(workspace.GoneIDs(g.Agents[a], 3)))
		}
	}
	for _, u := range rep.UnknownRoles {
		fmt.Fprintf(e.stdout, "warning   %s\n", printable(u.String()))
	}
	for _, u := range rep.UnknownCharacters {
		fmt.Fprintf(e.stdout, "warning   %s\n", printable(u.String()))
	}
	for _, w := range rep.Unjournaled {
		fmt.Fprintf(e.stdout, "warning   %s\n", printable(w))
	}
	for _, c := range rep.Conflicts {
		fmt.Fprintf(e.stdout, "conflict  %s: unresolved merge conflict (<<<<<<< here): resolve it, then git add; until then parley writes nothing into it, and reads no character sheet that holds one\n", printable(c))
	}
	if rep.MergeDriverMissing {
		fmt.Fprintf(e.stdout, "git       this clone has not parley's merge driver: a pull that merges the other clone's journal entries with union may cut one short; `parley init .` sets it up\n")
	}
	if w := waitingText(rep.Escalations); w != "" {
		fmt.Fprintf(e.stdout, "pipeline  %s\n", w)
	}
	if rep.Runner != nil {
		for _, f := range rep.Runner.Failing {
			for i, l := range failingLines(f, now) {
				head := "delivery  "
				if i > 0 {
					head = "          "
				}
				fmt.Fprintln(e.stdout, head+l)
			}
		}
	}
	fmt.Fprintln(e.stdout)
	width := len("AGENT")
	for _, a := range agents {
		width = max(width, len(a.Name))
	}
	fmt.Fprintf(e.stdout, "%-*s  %-12s  OUTBOX  INBOX  CUR  DONE  DEAD  SENT  REJECTED  LAST ACTIVITY\n", width, "AGENT", "STATE")
	var notes []string
	for _, a := range agents {
		done := strconv.Itoa(a.Done)
		if a.Remote != "" {
			// Forwarded to the stream is not handled there: said in
			// the notes, not under DONE.
			done = "-"
			if a.Forwarded > 0 {
				notes = append(notes, fmt.Sprintf("  %s: %d forwarded to %s (taken by the stream; what %s has not taken yet is under bridge)", a.Name, a.Forwarded, printable(a.Remote), printable(a.Remote)))
			}
		}
		fmt.Fprintf(e.stdout, "%-*s  %-12s  %6d  %5d  %3d  %4s  %4d  %4d  %8d  %s\n", width, a.Name, printable(a.Shown()), a.Outbox, a.Inbox, a.Cur, done, a.Dead, a.Sent, a.Rejected, ago(a.LastActivity, now))
		if a.Note != "" {
			notes = append(notes, "  "+a.Name+": "+printable(a.Note))
		}
		for _, w := range a.Awaited {
			line := "  " + a.Name + ": " + w.Text(now)
			if rep.RunnerPID == 0 {
				line += " (last run: the next run takes up the wait)"
			}
			notes = append(notes, line)
		}
		if a.State == workspace.StateWorking && a.Message != "" && !a.Since.IsZero() {
			// A program that hangs shows as working: for how long, and
			// until when, says whether to wait.
			line := fmt.Sprintf("  %s: handling %s for %s", a.Name, printable(a.Message), now.Sub(a.Since).Round(time.Second))
			if ag, ok := ws.Agent(a.Name); ok && ag.Model != nil {
				// A model: each request is waited for openai.timeout,
				// and tried again max_retries times.
				line += fmt.Sprintf(" (a request to its model is given up after %s: openai.timeout in %s, tried %d %s: openai.max_retries", workspace.ShortDuration(ag.Model.Timeout), workspace.ConfigFile, ag.Model.MaxRetries+1, plural(ag.Model.MaxRetries+1, "time", "times"))
				if ag.Timeout > 0 {
					line += fmt.Sprintf("; the message after %s: timeout:", workspace.ShortDuration(ag.Timeout))
				}
				line += ")"
			} else if ok && ag.RunsProgram() && ag.Timeout > 0 {
				// Not a built-in handler: it runs no program.
				line += fmt.Sprintf(" (its program is stopped after %s: its timeout: in %s, %s when it sets none)", workspace.ShortDuration(ag.Timeout), workspace.ConfigFile, workspace.ShortDuration(workspace.DefaultTimeout))
			}
			notes = append(notes, line)
		}
		for _, l := range rep.StderrLogs {
			if l.Agent == a.Name {
				notes = append(notes, fmt.Sprintf("  %s: its program last wrote to stderr at %s: tail -f %s", a.Name, ago(l.Written, now), printable(l.Path)))
			}
		}
		if a.Unusable != "" {
			notes = append(notes, "  "+a.Name+": "+printable(a.Unusable))
		}
		if len(a.Missing) > 0 {
			notes = append(notes, fmt.Sprintf("  %s: missing %s/{%s}: a running runner makes them again", a.Name, filepath.ToSlash(filepath.Join(workspace.MailboxesDir, a.Name)), strings.Join(a.Missing, ",")))
		}
		if rep.Runner != nil {
			for _, f := range rep.Runner.Failing {
				if f.Agent == a.Name {
					notes = append(notes, fmt.Sprintf("  %s: %s in its outbox is not delivered (see delivery above)%s", a.Name, printable(path.Base(f.Path)), behindText(f)))
				}
				if f.To == a.Name && f.To != f.Agent {
					notes = append(notes, fmt.Sprintf("  %s: a message to it from %s is not delivered (see delivery above)", a.Name, printable(f.Agent)))
				}
			}
		}
		if rep.Runner != nil && rep.Runner.Mailboxes[a.Name] != "" {
			notes = append(notes, "  "+a.Name+": its mailbox cannot be used: "+printable(rep.Runner.Mailboxes[a.Name]))
		}
		if rep.Runner != nil && slices.Contains(rep.Runner.Unwatched, a.Name) {
			notes = append(notes, "  "+a.Name+": no file events for its outbox (the kernel's inotify watches are used up); the runner lists it every second")
		}
		if rep.Runner != nil && !rep.Runner.Knows(a.Name) {
			notes = append(notes, "  "+a.Name+": not routed yet: the running runner has not loaded it from "+workspace.ConfigFile)
		}
	}
	for _, u := range unknown {
		notes = append(notes, fmt.Sprintf("  %s/: no agent of %s has this name (renamed or removed?); nobody routes or handles its messages (outbox %d, inbox %d): rename the agent back, or move them into another agent's mailbox (an id names its sender: leave an outbox file's id: out, and rename a file named by its id)",
			printable(filepath.ToSlash(u.Path)), workspace.ConfigFile, u.Outbox, u.Inbox))
	}
	if len(notes) > 0 {
		fmt.Fprintf(e.stdout, "\nnotes:\n%s\n", strings.Join(notes, "\n"))
	}
	for _, p := range []struct {
		title string
		get   func(workspace.AgentStatus) ([]workspace.Problem, int)
		hint  string // what to do, after the list
	}{
		{"rejected", func(a workspace.AgentStatus) ([]workspace.Problem, int) { return a.RejectedFiles, a.Rejected }, ""},
		{"dead", func(a workspace.AgentStatus) ([]workspace.Problem, int) { return a.DeadFiles, a.Dead }, "parley retry ID hands a dead letter to its agent again"},
		{"refused, left in the outbox", func(a workspace.AgentStatus) ([]workspace.Problem, int) { return a.Held, len(a.Held) }, ""},
	} {
		var lines []string
		retriable := false // a dead letter listed that parley retry hands back
		for _, a := range agents {
			files, total := p.get(a)
			if older := total - len(files); older > 0 && !opts.All {
				lines = append(lines, fmt.Sprintf("  %s: %d older not shown (parley status --all lists every one)", a.Name, older))
			}
			for _, f := range files {
				reason := shorten(printable(f.Reason), statusReason)
				switch {
				case f.Reason == "":
					reason = "(no reason file)"
				case reason != printable(f.Reason):
					// Cut short: says where the whole of it is.
					reason += " (the whole reason: " + printable(filepath.ToSlash(f.Path)+mailbox.ReasonSuffix) + ")"
				}
				lines = append(lines, "  "+printable(filepath.ToSlash(f.Path))+"\n      "+reason)
				if since, ok := settled[f.Path]; ok && p.title == "dead" {
					lines = append(lines, "      settled: "+printable(since)+" (parley retry refuses it without --force)")
				} else {
					retriable = true
				}
			}
		}
		if len(lines) > 0 && p.hint != "" && retriable {
			lines = append(lines, "  "+p.hint)
		}
		if len(lines) > 0 {
			fmt.Fprintf(e.stdout, "\n%s:\n%s\n", p.title, strings.Join(lines, "\n"))
		}
	}
	if m := rep.Models; m != nil {
		var lines []string
		for _, a := range m.Agents {
			lines = append(lines, fmt.Sprintf("  %s: %s, %d %s (%d failed), %d tokens in, %d out, cost %s; budget %s",
				a.Agent, a.models(), a.Calls, plural(a.Calls, "call", "calls"), a.Failed, a.TokensIn, a.TokensOut, cost(a.Cost, m.Prices), budgetText(a.Budget, a.Session)))
			if a.LastError != "" {
				// When: an outage journals its first failed call and the
				// one that ends it, not the tries between.
				when := ""
				if at, err := time.Parse(mailbox.TimeFormat, a.LastErrorAt); err == nil {
					when = " " + ago(at, time.Now())
				}
				lines = append(lines, "      latest call failed"+when+": "+shorten(printable(a.LastError), statusReason))
			}
		}
		fmt.Fprintf(e.stdout, "\nmodels (parley usage for more):\n%s\n", strings.Join(lines, "\n"))
	}
	if len(rep.Endpoints) > 0 {
		var lines []string
		for _, k := range rep.Endpoints {
			lines = append(lines, "  "+printable(k.Text(time.Now())))
		}
		fmt.Fprintf(e.stdout, "\nmodel endpoints (%s/%s):\n%s\n", workspace.StateDir, llm.EndpointsFile, strings.Join(lines, "\n"))
	}
	printFiles(e, agents, "left in tmp/ by writers that were killed (the runner removes them when it starts)", func(a workspace.AgentStatus) []string { return a.Leftovers })
	printFiles(e, agents, "being edited in outboxes (routed once the editor closes them)", func(a workspace.AgentStatus) []string {
		var out []string
		for _, ed := range a.Editing {
			out = append(out, fmt.Sprintf("%s (%s beside it)", ed.Path, ed.Lock))
		}
		return out
	})
	printFiles(e, agents, "ignored in outboxes (editor scratch files, never routed)", func(a workspace.AgentStatus) []string { return a.Ignored })
	return rep.broken(opts.ConfigError)
}

// hasOrchestrator reports whether ws runs the dev pipeline: an agent
// has the orchestrator role, or is the built-in orchestrator.
func hasOrchestrator(ws *workspace.Workspace) bool {
	for _, a := range ws.Config.Agents {
		if a.Handler == "orchestrator" || ws.HasRole(a.Name, workspace.OrchestratorRole) {
			return true
		}
	}
	return false
}

// runnerKeepsText says what a running runner does while the files on
// disk cannot be loaded.
func runnerKeepsText(info *workspace.RunnerInfo) string {
	return fmt.Sprintf("the running runner routes with the configuration it loaded at %s", info.Loaded.Local().Format("15:04:05"))
}

// reasonLines is a reason of several lines (a skill's problems under the
// parley.yaml line that names it) as status prints it: each line
// printable, the lines after the first indented by indent.
func reasonLines(s, indent string) string {
	return strings.ReplaceAll(printableLines(strings.TrimRight(s, "\n")), "\n", "\n"+indent)
}

// broken is the error a status report ends with: the workspace cannot
// work as it is. Problems it can work around (rejected files, dead
// letters) are reported, not errors; nor is a parley.yaml the running
// runner could not reload when commands can still load it. configErr is
// why parley.yaml could not be loaded at all: with no runner, it is the
// error; with one, that send and a new run refuse.
func (r statusReport) broken(configErr error) error {
	keeps := ""
	if r.Runner != nil {
		keeps = "; " + runnerKeepsText(r.Runner)
	}
	switch {
	case configErr != nil && r.Runner == nil:
		return configErr
	case errors.As(configErr, new(*workspace.MissingConfigError)):
		return fmt.Errorf("%s is missing: parley send and a new parley run refuse until it is back%s (the report says where)", workspace.ConfigFile, keeps)
	case configErr != nil:
		return fmt.Errorf("%s is not loaded: parley send and a new parley run refuse until it is mended%s (the report says why)", workspace.ConfigFile, keeps)
	case r.ProtocolError != "" && r.Runner == nil:
		return errors.New("the skills of parley.yaml are not loaded: parley send and parley run refuse every message until it is mended (the report says why)")
	case r.ProtocolError != "":
		return fmt.Errorf("the skills of parley.yaml are not loaded: parley send and a new parley run refuse every message until it is mended%s (the report says why)", keeps)
	}
	if len(r.DriverProblems) > 0 {
		return errNoDriver
	}
	return nil
}

// errNoDriver is status's error for a workspace with an agent parley
// cannot drive (runner.Options.DriverProblem): parley run refuses to
// start.
var errNoDriver = errors.New("parley run refuses to start this workspace: an agent cannot be driven (the report says which, and why)")

// hasModels reports whether any agent is an openai agent.
func hasModels(ws *workspace.Workspace) bool {
	for _, a := range ws.Config.Agents {
		if a.Model != nil {
			return true
		}
	}
	return false
}

// printFiles prints, under a title, the files every agent has of a kind;
// nothing when none has any.
func printFiles(e *env, agents []workspace.AgentStatus, title string, files func(workspace.AgentStatus) []string) {
	var lines []string
	for _, a := range agents {
		for _, f := range files(a) {
			lines = append(lines, "  "+printable(filepath.ToSlash(f)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(e.stdout, "\n%s:\n%s\n", title, strings.Join(lines, "\n"))
	}
}

// ago formats a time as a local date and time with how long ago it was.
// printBridge says whether the bridge runs, where it is connected, what
// waits on either side, and its last error.
func printBridge(e *env, b *bridgeReport, now time.Time) {
	st := b.State
	switch {
	case !b.Running && st == nil:
		fmt.Fprintf(e.stdout, "bridge    %s: not running (parley run starts it; parley bridge runs it alone)\n", printable(b.Name))
		if b.Outgoing > 0 {
			fmt.Fprintf(e.stdout, "          outgoing: %s\n", b.OutgoingText)
		}
		return
	case !b.Running:
		fmt.Fprintf(e.stdout, "bridge    %s: not running (last seen %s)\n", printable(b.Name), ago(st.Updated, now))
	case st == nil:
		fmt.Fprintf(e.stdout, "bridge    %s: starting\n", printable(b.Name))
		if b.Outgoing > 0 {
			fmt.Fprintf(e.stdout, "          outgoing: %s\n", b.OutgoingText)
		}
		return
	default:
		conn := "NOT connected, trying " + printable(st.URL)
		if st.Connected {
			conn = "connected to " + printable(st.URL)
		}
		fmt.Fprintf(e.stdout, "bridge    %s: running (pid %d), %s\n", printable(b.Name), st.PID, conn)
		if st.Serving != "" {
			fmt.Fprintf(e.stdout, "          serving NATS at %s\n", printable(st.Serving))
		}
		if st.StoreFull != "" {
			fmt.Fprintf(e.stdout, "          NATS store OUT OF ROOM: %s; the server refuses what the workspaces publish (it waits in their inboxes): make room there, then restart parley run --serve\n", printable(st.StoreFull))
		}
	}
	switch {
	case b.Running && b.Lag != nil:
		fmt.Fprintf(e.stdout, "          outgoing %d waiting, %d awaiting the stream's acknowledgement; lag %d (waiting in the stream for here)\n", st.Outgoing, st.PendingAcks, *b.Lag)
		fmt.Fprintf(e.stdout, "          forwarded %d, received %d, refused %d since it started\n", st.Forwarded, st.Received, st.Bounced)
	case b.Running:
		// The lag it counted before the link went, or before the
		// stream stopped answering, is stale: messages published
		// since wait in the stream, and it cannot ask.
		why := "the bridge is not connected"
		if st.Connected {
			why = "the stream did not answer the bridge's last count"
		}
		fmt.Fprintf(e.stdout, "          outgoing %d waiting, %d awaiting the stream's acknowledgement; lag not known: %s\n", st.Outgoing, st.PendingAcks, why)
		fmt.Fprintf(e.stdout, "          forwarded %d, received %d, refused %d since it started\n", st.Forwarded, st.Received, st.Bounced)
	default:
		// The lag the bridge last counted is stale: messages published
		// since wait in the stream, and only a bridge asks it.
		fmt.Fprintf(e.stdout, "          outgoing %d waiting; lag not known: the bridge is not running (parley bridge --until-idle takes what waits in the stream for here)\n", st.Outgoing)
		fmt.Fprintf(e.stdout, "          forwarded %d, received %d, refused %d in its last run\n", st.Forwarded, st.Received, st.Bounced)
	}
	if b.Running && st.NameHeldBy != "" {
		fmt.Fprintf(e.stdout, "          NOT taking or forwarding: another workspace reads the stream as %q: %s (give one of them another bridge: name: in %s)\n", printable(b.Name), printable(st.NameHeldBy), workspace.ConfigFile)
	}
	if b.Running && st.NameAlsoClaimedBy != "" {
		fmt.Fprintf(e.stdout, "          another workspace tries to read the stream as %q too, refused while this one reads: %s (give one of them another bridge: name: in %s)\n", printable(b.Name), printable(st.NameAlsoClaimedBy), workspace.ConfigFile)
	}
	if st.LastError != "" && !(b.Running && st.NameHeldBy != "" && strings.Contains(st.LastError, st.NameHeldBy)) {
		fmt.Fprintf(e.stdout, "          last error %s: %s\n", ago(st.ErrorAt, now), printable(st.LastError))
	}
	for _, name := range st.Unread {
		fmt.Fprintf(e.stdout, "          no workspace named %q reads the stream yet: what is forwarded to its agents waits there until one connects as %q (remote: in parley.yaml must be that workspace's bridge name)\n", printable(name), printable(name))
	}
	for _, p := range st.Peers {
		fmt.Fprintf(e.stdout, "          %s\n", peerText(p, b.Running, now))
	}
	if b.Refused > 0 {
		fmt.Fprintf(e.stdout, "          %d refused naming no agent here, kept with the reason in %s\n", b.Refused, filepath.ToSlash(filepath.Join(workspace.StateDir, "bridge", "refused")))
	}
	if n := len(b.Retryable); n > 0 {
		fmt.Fprintf(e.stdout, "          %d refused before that the bridge would take now: parley retry %s delivers %s\n", n, strings.Join(b.Retryable, " "), plural(n, "it", "them"))
	}
}

// peerText says what the stream said of a remote workspace: how many
// messages for it it has not taken, and whether its bridge reads now or
// when it was last seen. With no bridge running here, it is what the
// last one saw.
func peerText(p workspace.PeerState, running bool, now time.Time) string {
	taken := "all taken"
	if p.Pending > 0 {
		taken = fmt.Sprintf("%d not yet taken", p.Pending)
	}
	var text string
	switch {
	case p.Reading && running:
		text = fmt.Sprintf("%s: reading, %s", printable(p.Name), taken)
	case p.LastSeen.IsZero():
		text = fmt.Sprintf("%s: %s, never seen reading", printable(p.Name), taken)
	default:
		text = fmt.Sprintf("%s: %s, last seen %s", printable(p.Name), taken, ago(p.LastSeen, now))
	}
	if !p.Reading && running {
		text += ": its bridge does not run now"
		if p.Pending > 0 {
			text += " (it takes them when parley run starts there)"
		}
	}
	if !running {
		text += " (as this workspace's bridge last looked)"
	}
	return text
}

// failingLines says of an outbox file whose routing keeps failing which
// it is, to whom, why, since when, and what waits behind it.
func failingLines(f workspace.FailingDelivery, now time.Time) []string {
	who := "from " + f.Agent
	if f.To != "" {
		who += " to " + f.To
	}
	lines := []string{
		fmt.Sprintf("FAILING since %s, %d %s: %s (%s)", ago(f.Since, now), f.Attempts, plural(f.Attempts, "try", "tries"), printable(f.Path), printable(who)),
		shorten(printable(f.Reason), statusReason),
	}
	next := "tried again "
	if d := f.Next.Sub(now).Round(time.Second); d > 0 {
		next += "in " + d.String()
	} else {
		next += "now"
	}
	return append(lines, next+" (the runner keeps trying; the file stays in the outbox)"+behindText(f))
}

// behindText says how many of a failing file's sender's files wait
// behind it.
func behindText(f workspace.FailingDelivery) string {
	if f.Waiting == 0 {
		return ""
	}
	return fmt.Sprintf("; %d later %s of %s %s behind it: one sender's files are delivered in order", f.Waiting, plural(f.Waiting, "file", "files"), printable(f.Agent), plural(f.Waiting, "waits", "wait"))
}

func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	rel := "just now"
	switch {
	case d >= 48*time.Hour:
		rel = fmt.Sprintf("%dd ago", int(d.Hours()/24))
	case d >= time.Hour:
		rel = fmt.Sprintf("%dh ago", int(d.Hours()))
	case d >= time.Minute:
		rel = fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d >= time.Second:
		rel = fmt.Sprintf("%ds ago", int(d.Seconds()))
	}
	return t.Local().Format("2006-01-02 15:04:05") + " (" + rel + ")"
}

// runnerIdle reports whether a running runner's last look at the
// outboxes (info.Looked) is more than three of its rescan intervals
// old: it holds the workspace and does nothing (a SIGSTOP, a machine
// asleep, a runner stuck), though parley status said it was running.
func runnerIdle(info *workspace.RunnerInfo, every time.Duration, now time.Time) bool {
	if info == nil || info.Looked.IsZero() || every <= 0 {
		return false
	}
	return now.Sub(info.Looked) > 3*every
}
