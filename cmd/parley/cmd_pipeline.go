package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

// parley pipeline: what a person running the dev pipeline needs to see
// and decide, from the files alone (no runner needed): the escalations
// waiting for a person, with the question and the command that answers
// each; every plan's progress; and the steps the agents have in hand.

func pipelineCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "pipeline",
		Usage: "show the dev pipeline: escalations waiting for a person (and how to answer each), plan progress, the steps agents have in hand",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: fmt.Sprintf("list every plan done, not only the newest %d", shownDone)},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := e.openWorkspaceToRead(c)
			if err != nil {
				return err
			}
			return runPipeline(e, ws, c.Bool("json"), c.Bool("all"))
		},
	}
}

// pipelineReport is what parley pipeline shows.
type pipelineReport struct {
	Escalations []escalation  `json:"escalations"`
	Dead        []deadLetter  `json:"dead"` // messages given up on: the pipeline waits on them
	Plans       []planSummary `json:"plans"`
	Steps       []stepInHand  `json:"steps"`
	Idle        []string      `json:"idle_workers"`   // workers with no step in hand
	Remote      []remoteAgent `json:"remote_workers"` // workers of other workspaces: what they hold is seen there
	Failed      []string      `json:"failed_workers"` // workers whose step was given up (in dead/)
	// Stopped are the agents the running runner stopped (parley stop):
	// what is sent to them waits in their inbox for the next run.
	Stopped []stoppedAgent `json:"stopped"`
	// Failing are the outbox files the running runner keeps failing to
	// deliver (see workspace.FailingDelivery): what they say, and their
	// senders' later files, have not arrived.
	Failing []workspace.FailingDelivery `json:"failing_deliveries"`
}

// stoppedAgent is an agent stopped in this run, and what waits for it.
type stoppedAgent struct {
	Agent   string `json:"agent"`
	Waiting int    `json:"waiting"` // messages in its inbox
}

// escalation is an escalation waiting for a person (see
// orchestrator.Escalations): in their inbox/ or cur/, or answered with a
// decision the orchestrator does not know.
type escalation struct {
	ID        string `json:"id"`
	Agent     string `json:"agent"` // the person it waits for
	From      string `json:"from"`
	Kind      string `json:"escalation"` // plan, iteration, blocked, given_up, unanswered
	PlanFile  string `json:"plan_file,omitempty"`
	Step      string `json:"step,omitempty"`
	Iteration string `json:"iteration,omitempty"`
	Question  string `json:"question"`
	Route     string `json:"route,omitempty"` // the Route: line of the message escalated
	Answer    string `json:"answer"`          // the command that answers it with its first decision
	// Answers are the commands that answer it, one per decision
	// (orchestrator.Answers), each safe to paste into a shell.
	Answers []escalationAnswer `json:"answers"`
	// Refused is, for an escalation of a message left unanswered because
	// its agent's answer was refused, that file: mended, parley retry
	// sends it, and it answers.
	Refused string `json:"refused,omitempty"`
	// Settled is set on an escalation whose step went on without a
	// decision (orchestrator.Fates.Settled: a given_up or unanswered one
	// answered after parley retry, say, or any about a step ticked by
	// hand): answering it sends nothing.
	Settled bool `json:"settled,omitempty"`
	// Pending is set on one settled by a tick that the orchestrator has
	// not gone on from yet (orchestrator.Escalation.Pending): parley run
	// sends the steps that follow when it next looks.
	Pending bool `json:"pending,omitempty"`
	// Misspelt is the decision of the person's answer that the
	// orchestrator did not know (decision=aprove): the escalation was
	// moved to done/ by the answer, and still waits for one it knows.
	Misspelt string `json:"misspelt_decision,omitempty"`
}

// escalationAnswer is a command that answers an escalation with a decision.
type escalationAnswer struct {
	Decision string `json:"decision,omitempty"` // none for an escalation that needs none
	Does     string `json:"does,omitempty"`
	Command  string `json:"command"`
}

// deadLetter is a message an agent's driver gave up on (in its dead/):
// nothing follows it until a person retries it, so the pipeline stalls.
type deadLetter struct {
	Agent    string `json:"agent"`
	ID       string `json:"id"`
	Type     string `json:"type,omitempty"`
	From     string `json:"from,omitempty"`
	PlanFile string `json:"plan_file,omitempty"`
	Step     string `json:"step,omitempty"`
	Reason   string `json:"reason"`           // the first line of the reason
	Stderr   string `json:"stderr,omitempty"` // the last line the program wrote on stderr, when the reason has it
	Retry    string `json:"retry"`            // the command that tries it again
	// Settled is set when its step went on without it, as its sender
	// (the orchestrator) decides it (orchestrator.WentOn): its agent
	// answered it since, its step is ticked, or it was sent again (the
	// person's decision on the given_up escalation).
	Settled bool `json:"settled,omitempty"`
	// PlanBlocked is set when its plan is marked blocked (a person's stop
	// decision): nothing follows it, retried or not, until the plan goes on.
	PlanBlocked bool `json:"plan_blocked,omitempty"`
}

// planSummary is one plan's progress.
type planSummary struct {
	File   string `json:"file"`
	Task   string `json:"task,omitempty"`
	Status string `json:"status,omitempty"`
	Done   int    `json:"done"`
	Total  int    `json:"total"`
	// Next and Problems are what comes next (see ahead): the steps to do
	// next, or, for a plan with problems, how many it has and no Next.
	Next     string `json:"next,omitempty"`
	Problems int    `json:"problems,omitempty"`
	// Unticked are the steps the orchestrator approved that the plan no
	// longer ticks (orchestrator.Unticked: the file was changed outside
	// parley, by git checkout, reset or stash): Next counts them done,
	// as the orchestrator does, and ticks them again when it next looks.
	Unticked []int `json:"approved_unticked,omitempty"`
}

// remoteAgent is a worker that lives in another workspace (remote: in
// parley.yaml): its copies are forwarded there, so what it has in hand,
// or gave up, is seen in that workspace, not here.
type remoteAgent struct {
	Agent     string `json:"agent"`
	Workspace string `json:"workspace"`
}

// stepInHand is a message naming a step that an agent is handling (cur/)
// or has waiting (inbox/).
type stepInHand struct {
	Agent     string `json:"agent"`
	State     string `json:"state"` // cur (handling) or inbox (waiting)
	ID        string `json:"id"`
	Type      string `json:"type"`
	PlanFile  string `json:"plan_file,omitempty"`
	Step      string `json:"step"`
	Iteration string `json:"iteration,omitempty"`
	// Interrupted: in cur/ of a program's agent while no runner runs,
	// taken by one that stopped (or was killed) before it was handled:
	// the next parley run hands it to the agent again.
	Interrupted bool `json:"interrupted,omitempty"`
}

// pipelineRoles are the roles whose agents are listed idle when they have
// no step in hand.
var pipelineRoles = []string{"worker", "debugger", "documenter"}

func runPipeline(e *env, ws *workspace.Workspace, asJSON, all bool) error {
	rep, err := pipelineOf(ws, true)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(rep)
	}
	printPipeline(e, rep, all)
	return nil
}

// shownDone is how many plans done parley pipeline lists without --all:
// the last in name order. A night of plans would bury the
// plans under way.
const shownDone = 3

// pipelineOf reads what parley pipeline shows from ws's files; with
// unticked, the steps approved that plans no longer tick too (reading
// the orchestrator's history: parley status, which asks only for the
// escalations waiting, does without).
func pipelineOf(ws *workspace.Workspace, unticked bool) (pipelineReport, error) {
	ps, err := plans.List(filepath.Join(ws.Root, plans.Dir))
	if err != nil {
		return pipelineReport{}, err
	}
	blockedPlans := map[string]bool{} // "plans/x.md" -> marked blocked (a person's stop)
	for _, p := range ps {
		if p.Status == "blocked" {
			blockedPlans[ws.Short(p.Path)] = true
		}
	}
	rep := pipelineReport{Escalations: []escalation{}, Dead: []deadLetter{}, Plans: []planSummary{}, Steps: []stepInHand{}, Idle: []string{}, Remote: []remoteAgent{}, Failed: []string{}, Stopped: []stoppedAgent{}, Failing: []workspace.FailingDelivery{}}
	if info := workspace.ReadRunnerInfo(ws.Root); info != nil && len(info.Failing) > 0 {
		rep.Failing = info.Failing
	}
	limit := ws.Config.Router.MaxMessageSize
	runs, _ := ws.AgentRuns() // unreadable: no agent is said to be stopped
	running := ws.RunnerPID() != 0
	busyAgents := map[string]bool{}
	for _, a := range ws.Config.Agents {
		box := ws.Mailbox(a.Name)
		if running && runs[a.Name].Stopped {
			n, _ := box.Count(mailbox.Inbox)
			rep.Stopped = append(rep.Stopped, stoppedAgent{Agent: a.Name, Waiting: n})
		}
		busy := false
		for _, state := range []string{mailbox.Cur, mailbox.Inbox} {
			entries, err := box.List(state)
			if err != nil {
				continue // a mailbox not made yet: nothing in it
			}
			for _, en := range entries {
				m, err := mailbox.ReadMessage(en.Path, limit)
				if err != nil {
					continue
				}
				get := func(k string) string { v, _ := m.Header().Get(k); return v }
				id := get("id")
				if id == "" {
					id = strings.TrimSuffix(en.Name, ".md")
				}
				if a.Person() && get("escalation") != "" {
					continue // an escalation, listed below, no step in hand
				}
				if step := get("step"); step != "" && get("from") != workspace.Runner {
					busy = true
					rep.Steps = append(rep.Steps, stepInHand{Agent: a.Name, State: state, ID: id, Type: get("type"), PlanFile: get("plan_file"), Step: step, Iteration: get("iteration"),
						Interrupted: state == mailbox.Cur && !running && ws.IsProgram(a.Name)})
				}
			}
		}
		busyAgents[a.Name] = busy
		if entries, err := box.List(mailbox.Dead); err == nil {
			for _, en := range entries {
				d := deadOf(box, en, limit)
				d.Agent = a.Name
				rep.Dead = append(rep.Dead, d)
			}
		}
	}
	// Whether the step of a message given up went on without it (its
	// agent answered it since, its step is ticked, or it was sent again)
	// is the orchestrator's decision, read from its sender's mailbox: a
	// given_up escalation whose step went on is settled (answering it
	// sends nothing), and so is a dead letter whose step went on (one
	// sent again and given up again: the newest stands for the step, and
	// retrying both would send it twice). Which escalations wait is the
	// orchestrator's too (orchestrator.Escalations), as the web view asks.
	fates := newGivenUpFates(ws)
	for _, x := range orchestrator.Escalations(ws, fates.fates) {
		rep.Escalations = append(rep.Escalations, escalationOf(x))
	}
	failed := map[string]bool{}
	for i := range rep.Dead {
		d := &rep.Dead[i]
		if fates.settled(*d) != "" {
			d.Settled = true
			continue
		}
		if d.Step == "" {
			continue
		}
		if blockedPlans[d.PlanFile] {
			d.PlanBlocked = true
			continue
		}
		failed[d.Agent] = true
	}
	for _, a := range ws.Config.Agents {
		switch {
		case failed[a.Name]:
			rep.Failed = append(rep.Failed, a.Name)
		case !busyAgents[a.Name] && a.Remote != "" && ws.HasRole(a.Name, pipelineRoles...):
			rep.Remote = append(rep.Remote, remoteAgent{Agent: a.Name, Workspace: a.Remote})
		case !busyAgents[a.Name] && ws.HasRole(a.Name, pipelineRoles...):
			rep.Idle = append(rep.Idle, a.Name)
		}
	}
	var lostSteps map[string][]int
	if unticked {
		lostSteps = orchestrator.Unticked(ws)
	}
	for _, p := range ps {
		pr := p.Progress()
		lost := lostSteps[ws.Short(p.Path)]
		for _, n := range lost {
			if s := p.Step(n); s != nil {
				s.Done = true // as the orchestrator counts it (it ticks it again)
			}
		}
		u := planAhead(p)
		rep.Plans = append(rep.Plans, planSummary{File: ws.Short(p.Path), Task: p.Task, Status: p.Status, Done: pr.Done, Total: pr.Total, Next: u.Next, Problems: u.Problems, Unticked: lost})
	}
	return rep, nil
}

// waiting returns the escalations waiting for a person's decision: not
// those settled.
func (rep pipelineReport) waiting() []escalation {
	var out []escalation
	for _, x := range rep.Escalations {
		if !x.Settled {
			out = append(out, x)
		}
	}
	return out
}

// escalationsWaiting returns the dev pipeline's escalations waiting for
// a person's decision in ws: none without an orchestrator, nor when its
// plans cannot be read (parley pipeline says why).
func escalationsWaiting(ws *workspace.Workspace) []escalation {
	if !hasOrchestrator(ws) {
		return nil
	}
	p, err := pipelineOf(ws, false)
	if err != nil {
		return nil
	}
	return p.waiting()
}

// waitingText says how many escalations wait for a decision, for whom,
// and which command shows them (parley status, parley run); "" for none.
func waitingText(waiting []escalation) string {
	n := len(waiting)
	if n == 0 {
		return ""
	}
	var people []string
	for _, x := range waiting {
		if !slices.Contains(people, x.Agent) {
			people = append(people, x.Agent)
		}
	}
	return fmt.Sprintf("%d %s waiting for a decision (%s): parley pipeline shows %s and how to answer",
		n, plural(n, "escalation", "escalations"), printable(strings.Join(people, ", ")), plural(n, "it", "them"))
}

// escalationOf is what parley pipeline shows of the escalation x.
func escalationOf(x orchestrator.Escalation) escalation {
	get := func(k string) string { v, _ := x.Message.Header().Get(k); return v }
	var answers []escalationAnswer
	for _, a := range x.Answers() {
		answers = append(answers, escalationAnswer{Decision: a.Decision, Does: a.Does, Command: a.Command})
	}
	return escalation{
		ID: x.ID, Agent: x.Agent, From: get("from"), Kind: x.Kind,
		PlanFile: get("plan_file"), Step: get("step"), Iteration: get("iteration"),
		Question: strings.TrimPrefix(get("summary"), "escalation: "),
		Route:    routeOf(x.Message.Body),
		Answer:   answers[0].Command,
		Answers:  answers,
		Refused:  get("refused"),
		Settled:  !x.Waiting(),
		Pending:  x.Pending,
		Misspelt: x.Misspelt,
	}
}

// deadOf reads a message in dead/ and the reason beside it. A message
// that does not read is still listed, by its file name.
func deadOf(box mailbox.Dir, en mailbox.Entry, limit int64) deadLetter {
	d := deadLetter{ID: strings.TrimSuffix(en.Name, ".md")}
	if data, err := mailbox.ReadFile(en.Path, limit); err == nil {
		if m, err := mailbox.Parse(data); err == nil {
			get := func(k string) string { v, _ := m.Header().Get(k); return v }
			if id := get("id"); id != "" {
				d.ID = id
			}
			d.Type, d.From, d.PlanFile, d.Step = get("type"), get("from"), get("plan_file"), get("step")
		}
	}
	if b, err := mailbox.ReadFile(en.Path+mailbox.ReasonSuffix, 64<<10); err == nil {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		d.Reason = lines[0]
		for i, l := range lines {
			if strings.HasPrefix(l, "stderr (last lines):") {
				for _, e := range lines[i+1:] {
					if strings.TrimSpace(e) == "" {
						break
					}
					d.Stderr = strings.TrimSpace(e)
				}
				break
			}
		}
	} else {
		d.Reason = "(no reason beside it)"
	}
	d.Retry = "parley retry " + d.ID
	return d
}

// routeOf returns the Route: line of an escalation's body, if any.
func routeOf(body []byte) string {
	for l := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(l, "Route:") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func printPipeline(e *env, rep pipelineReport, all bool) {
	w := e.stdout
	waiting := rep.waiting()
	var settledEsc []escalation
	for _, x := range rep.Escalations {
		if x.Settled {
			settledEsc = append(settledEsc, x)
		}
	}
	escLine := func(x escalation) {
		where := x.Kind
		if x.PlanFile != "" {
			where += ", " + x.PlanFile
		}
		if x.Step != "" {
			where += " step " + x.Step
		}
		if x.Iteration != "" {
			where += " (iteration " + x.Iteration + ")"
		}
		fmt.Fprintf(w, "  %s  for %s, from %s: %s\n", x.ID, x.Agent, x.From, printable(where))
	}
	if len(waiting) == 0 {
		fmt.Fprintln(w, "escalations: none waiting")
	} else {
		fmt.Fprintf(w, "escalations: %d waiting for a decision\n", len(waiting))
		for _, x := range waiting {
			escLine(x)
			fmt.Fprintf(w, "    %s\n", printable(x.Question))
			if x.Misspelt != "" {
				fmt.Fprintf(w, "    your answer's decision %q is none of %s: answer it again\n", x.Misspelt, strings.Join(orchestrator.Decisions(), ", "))
			}
			if x.Route != "" {
				fmt.Fprintf(w, "    %s\n", printable(x.Route))
			}
			if x.Refused != "" {
				fmt.Fprintf(w, "    refused answer: %s (the reason beside it)\n", printable(x.Refused))
				fmt.Fprintf(w, "    mend it, then: parley retry %s\n", printable(x.Refused))
			}
			for i, a := range x.Answers {
				// One command per decision, each safe to paste.
				label := "answer:"
				if i > 0 {
					label = "    or:"
				}
				fmt.Fprintf(w, "    %s %s\n", label, printable(a.Command))
			}
		}
	}
	if len(settledEsc) > 0 {
		var kinds []string // given_up, unanswered: those there are
		pending := 0       // settled by a tick nothing went on from yet
		for _, x := range settledEsc {
			if !slices.Contains(kinds, x.Kind) {
				kinds = append(kinds, x.Kind)
			}
			if x.Pending {
				pending++
			}
		}
		how := "went on"
		switch {
		case pending == len(settledEsc):
			how = "was ticked by hand, and goes on"
		case pending > 0:
			how = "went on, or was ticked by hand,"
		}
		fmt.Fprintf(w, "escalations settled since: %d %s whose step %s without a decision (answering %s sends nothing)\n", len(settledEsc), strings.Join(kinds, " or "), how, plural(len(settledEsc), "it", "them"))
		for _, x := range settledEsc {
			escLine(x)
			if x.Pending {
				fmt.Fprintln(w, "    its step was ticked by hand: parley run goes on from it when it next looks (a running one within seconds, else the next one when it starts)")
			}
		}
	}
	var stalled []deadLetter
	settled := 0
	var behindBlocked []string // the blocked plans dead letters belong to
	blockedDead := 0
	for _, d := range rep.Dead {
		switch {
		case d.Settled:
			settled++
		case d.PlanBlocked:
			blockedDead++
			if !slices.Contains(behindBlocked, d.PlanFile) {
				behindBlocked = append(behindBlocked, d.PlanFile)
			}
		default:
			stalled = append(stalled, d)
		}
	}
	if len(stalled) > 0 {
		fmt.Fprintf(w, "given up: %d %s, and nothing follows until retried\n", len(stalled), plural(len(stalled), "message", "messages"))
		for _, d := range stalled {
			what := orDash(d.Type)
			if d.Step != "" {
				what += ": step " + d.Step
				if d.PlanFile != "" {
					what += " of " + d.PlanFile
				}
			}
			if d.From != "" {
				what += ", from " + d.From
			}
			fmt.Fprintf(w, "  %s  %s gave up %s\n", d.ID, d.Agent, printable(what))
			fmt.Fprintf(w, "    %s\n", printable(d.Reason))
			if d.Stderr != "" && !strings.Contains(d.Reason, d.Stderr) {
				// A command's reason carries its last stderr line
				// already.
				fmt.Fprintf(w, "    stderr: %s\n", printable(d.Stderr))
			}
			fmt.Fprintf(w, "    retry: %s\n", d.Retry)
		}
	}
	if n := len(rep.Failing); n > 0 {
		fmt.Fprintf(w, "not delivered: %d %s the runner keeps failing to deliver, and tries again (parley status says more)\n", n, plural(n, "file", "files"))
		now := time.Now()
		for _, f := range rep.Failing {
			for i, l := range failingLines(f, now) {
				fmt.Fprintf(w, "  %s%s\n", strings.Repeat("  ", min(i, 1)), l)
			}
		}
	}
	if blockedDead > 0 {
		fmt.Fprintf(w, "given up, plan blocked: %d %s of a plan a decision stopped (%s); parley retry ID still hands one to its agent\n", blockedDead, plural(blockedDead, "message", "messages"), printable(strings.Join(behindBlocked, ", ")))
	}
	if settled > 0 {
		fmt.Fprintf(w, "given up, settled since: %d %s whose step went on without %s (parley status lists %s)\n", settled, plural(settled, "message", "messages"), plural(settled, "it", "them"), plural(settled, "it", "them"))
	}
	if len(rep.Stopped) > 0 {
		var names []string
		for _, st := range rep.Stopped {
			names = append(names, fmt.Sprintf("%s (%d waiting)", st.Agent, st.Waiting))
		}
		fmt.Fprintf(w, "stopped: %s: shut down by parley stop; what is sent to them waits in their inboxes for the next parley run\n", strings.Join(names, ", "))
	}
	if len(rep.Plans) == 0 {
		fmt.Fprintf(w, "plans: none in %s/\n", plans.Dir)
	} else {
		fmt.Fprintln(w, "plans:")
		done := 0
		for _, p := range rep.Plans {
			if p.Status == "done" {
				done++
			}
		}
		hidden := 0
		if !all {
			hidden = max(done-shownDone, 0)
		}
		if hidden > 0 {
			fmt.Fprintf(w, "  %d more %s done (parley pipeline --all lists every plan)\n", hidden, plural(hidden, "plan", "plans"))
		}
		for _, p := range rep.Plans {
			if p.Status == "done" && hidden > 0 {
				hidden--
				continue
			}
			line := fmt.Sprintf("  %s  %s  %d/%d %s", p.File, orDash(p.Status), p.Done, p.Total, plural(p.Total, "step", "steps"))
			if a := ahead(p.File, upNext{Next: p.Next, Problems: p.Problems}); a != "" {
				line += "  " + a
			}
			fmt.Fprintln(w, printable(line))
			if n := len(p.Unticked); n > 0 {
				fmt.Fprintf(w, "    %s %s approved but no longer ticked: the file was changed outside parley (git checkout, reset or stash?); parley run ticks %s again and goes on (a running one within seconds)\n", plural(n, "step", "steps"), stepNumbers(p.Unticked), plural(n, "it", "them"))
			}
		}
	}
	if len(rep.Steps) == 0 && len(rep.Idle) == 0 && len(rep.Remote) == 0 && len(stalled) == 0 {
		return
	}
	fmt.Fprintln(w, "steps in hand:")
	for _, s := range rep.Steps {
		what := "handling"
		switch {
		case s.Interrupted:
			what = "interrupted"
		case s.State == mailbox.Inbox:
			what = "waiting"
		}
		line := fmt.Sprintf("  %s  %s %s: step %s", s.Agent, what, s.Type, s.Step)
		if s.PlanFile != "" {
			line += " of " + s.PlanFile
		}
		if s.Iteration != "" {
			line += " (iteration " + s.Iteration + ")"
		}
		if s.Interrupted {
			line += ": taken by a runner that stopped before " + s.Agent + " answered; the next parley run hands it to " + s.Agent + " again"
		}
		fmt.Fprintln(w, printable(line))
	}
	for _, d := range stalled {
		if d.Step == "" {
			continue
		}
		line := fmt.Sprintf("  %s  failed %s: step %s", d.Agent, orDash(d.Type), d.Step)
		if d.PlanFile != "" {
			line += " of " + d.PlanFile
		}
		fmt.Fprintln(w, printable(line+" (given up: "+d.Retry+")"))
	}
	for _, a := range rep.Idle {
		line := "  " + a + "  idle"
		for _, f := range rep.Failing {
			if f.To == a {
				line += ": a message to it from " + printable(f.Agent) + " is not delivered (see not delivered above)"
				break
			}
		}
		fmt.Fprintln(w, line)
	}
	for _, a := range rep.Remote {
		fmt.Fprintf(w, "  %s  in workspace %s: what it has in hand, or gave up, `parley pipeline` shows there\n", a.Agent, a.Workspace)
	}
}

// stepNumbers is "1, 2, 5".
func stepNumbers(steps []int) string {
	s := make([]string, len(steps))
	for i, n := range steps {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
