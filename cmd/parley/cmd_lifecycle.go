package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

func stopCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "ask agents to shut down: a shutdown_request through the bus; an agent that approves is stopped",
		ArgsUsage: "AGENT...",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "ask every agent that runs a program"},
			&cli.StringFlag{Name: "from", Usage: "who asks (`AGENT`; default: the agent with the role team-lead)"},
			&cli.StringFlag{Name: "reason", Usage: "why (`TEXT`)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if !c.Args().Present() && !c.Bool("all") {
				return argsError(c, "name the agents to stop, or --all")
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			targets := c.Args().Slice()
			if c.Bool("all") {
				stopped, err := stoppedNow(ws)
				if err != nil {
					return err
				}
				asked := 0
				for _, a := range ws.Config.Agents {
					if !a.Driven() {
						continue
					}
					asked++
					if stopped[a.Name] {
						// Asked again, the request would wait in its
						// inbox and stop it as soon as the next run
						// starts it.
						if !c.Bool("json") {
							fmt.Fprintf(e.stdout, "%s is stopped already in this run (it approved a shutdown request): not asked again\n", a.Name)
						}
						continue
					}
					targets = append(targets, a.Name)
				}
				if len(targets) == 0 {
					// Every agent that runs a program is stopped
					// already, or none runs one: nothing to ask, and
					// that is no mistake.
					if c.Bool("json") {
						return e.printJSON([]map[string]string{})
					}
					if asked == 0 {
						fmt.Fprintf(e.stdout, "nothing to stop: no agent of %s runs a program (--all asks those that do)\n", workspace.ConfigFile)
					}
					return nil
				}
			}
			if len(targets) == 0 {
				return usagef("name the agents to stop, or --all")
			}
			from := c.String("from")
			if from == "" {
				from = asker(ws)
			}
			if from == "" {
				return usagef("say who asks: --from AGENT (no agent has the role team-lead, and no one agent the role human)")
			}
			if err := ws.CheckAgent(from); err != nil {
				return usagef("--from: %v", err)
			}
			if asked := slices.DeleteFunc(slices.Clone(targets), func(t string) bool { return t == from }); len(asked) > 0 {
				if err := lacksType(ws, workspace.ShutdownRequest, "parley stop"); err != nil {
					return fmt.Errorf("not asking %s to shut down: %w", strings.Join(asked, ", "), err)
				}
			}
			// Every request is checked as the router will check it before
			// any is written: one the router would refuse is refused now,
			// with its reason, and none is sent.
			var out []*mailbox.Message
			for _, t := range targets {
				if t == from {
					continue
				}
				if err := ws.CheckAgent(t); err != nil {
					return usagef("%v", err)
				}
				m := mailbox.New([]byte(dashIfEmpty(c.String("reason"), "Please shut down.") + "\n"))
				id := (&mailbox.IDs{Now: time.Now}).New(from)
				m.Set("id", id)
				m.Set("from", from)
				m.Set("to", t)
				m.Set("type", workspace.ShutdownRequest)
				m.Set("request_id", id)
				if r := c.String("reason"); r != "" {
					m.Set("reason", r)
				}
				if err := refusal(ws, ws.Mailbox(from), m); err != nil {
					return fmt.Errorf("not asking %s to shut down: %w", t, err)
				}
				out = append(out, m)
			}
			var sent []map[string]string
			for _, m := range out {
				t, _ := m.Header().Get("to")
				id, _ := m.Header().Get("id")
				if _, err := ws.Mailbox(from).Send(m); err != nil {
					return err
				}
				sent = append(sent, map[string]string{"agent": t, "request_id": id})
				if !c.Bool("json") {
					fmt.Fprintf(e.stdout, "asked %s to shut down (request %s)\n", t, id)
				}
			}
			if c.Bool("json") {
				return e.printJSON(sent)
			}
			return nil
		},
	}
}

// lacksType says, when the workspace's protocol has no message type typ
// (a request or an answer of the team-requests skill, which its skills:
// leave out), which line of parley.yaml to mend and how; nil when the
// protocol has it, or when no skill checks messages. The router's own
// reason would advise leaving type out, which is no request. command is
// the one to run again once mended.
func lacksType(ws *workspace.Workspace, typ, command string) error {
	set, err := ws.Protocol()
	if err != nil || set == nil {
		return nil // said by the check of each message; no skills: no check
	}
	if _, _, ok := set.Type(typ); ok {
		return nil
	}
	skills := strings.Join(ws.Config.Skills, ", ")
	return hintedError{
		err:  fmt.Errorf("%s:%d: skills: [%s] define no %s (the team-requests skill does)", workspace.ConfigFile, ws.Config.SkillsLine, skills, typ),
		hint: fmt.Sprintf("add team-requests to skills: in %s (skills: [%s, team-requests]), then %s again", workspace.ConfigFile, skills, command),
	}
}

// stoppedNow returns the agents the running runner has stopped (they
// approved a shutdown request): none when no runner runs, since a stop
// lasts for the run and the next run starts every agent again.
func stoppedNow(ws *workspace.Workspace) (map[string]bool, error) {
	out := map[string]bool{}
	if ws.RunnerPID() == 0 {
		return out, nil
	}
	runs, err := ws.AgentRuns()
	if err != nil {
		return nil, err
	}
	for name, r := range runs {
		if r.Stopped {
			out[name] = true
		}
	}
	return out, nil
}

// asker is who asks agents to shut down when --from does not say: the
// team lead, else the workspace's one person (role human), as in the dev
// pipeline.
func asker(ws *workspace.Workspace) string {
	if l := lead(ws); l != "" {
		return l
	}
	var people []string
	for _, a := range ws.AgentNames() {
		if ws.HasRole(a, "human") {
			people = append(people, a)
		}
	}
	if len(people) == 1 {
		return people[0]
	}
	return ""
}

// refusal checks a message a command writes on an agent's behalf as the
// router will (the one Check, through check): the refusal when the router
// would refuse it, else nil.
func refusal(ws *workspace.Workspace, box mailbox.Dir, m *mailbox.Message) error {
	v, err := check(ws, box, m)
	if err != nil {
		return err
	}
	if !v.Accepted() {
		return v.Refusal
	}
	return nil
}

// lead returns the agent whose role is team-lead, if there is one.
func lead(ws *workspace.Workspace) string {
	for _, a := range ws.AgentNames() {
		for _, r := range ws.Roles(a) {
			if r == workspace.TeamLeadRole || r == "lead" {
				return a
			}
		}
	}
	return ""
}

// article is the indefinite article of a word: "an escalation", "a
// message".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func dashIfEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

func answerCommand(e *env, name string, approve bool) *cli.Command {
	verb := "approve"
	if !approve {
		verb = "refuse"
	}
	return &cli.Command{
		Name:      name,
		Usage:     verb + " a plan approval or shutdown request waiting in a mailbox, by its id: the answer goes back through the bus",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feedback", Aliases: []string{"reason"}, Usage: "what to say with the answer (`TEXT`)"},
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "the ID of the request"); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			return runAnswer(e, ws, c.Args().First(), "", approve, c.String("feedback"))
		},
	}
}

// runAnswer answers a structured request as the agent that received it:
// agent's copy (in its inbox/, cur/ or done/) when agent is not "", else
// the first copy a recipient holds.
func runAnswer(e *env, ws *workspace.Workspace, arg, agent string, approve bool, feedback string) error {
	id, err := ws.ResolveID(arg)
	if err != nil {
		return err
	}
	var path string
	if agent != "" {
		c, err := ws.Handling(id, agent)
		if err != nil {
			return err
		}
		path = c.Path
	} else if path, err = ws.FindMessage(id); err != nil {
		return err
	}
	agent, state, ok := ws.Locate(path)
	if !ok || (state != mailbox.Inbox && state != mailbox.Cur && state != mailbox.Done) {
		return fmt.Errorf("%s: no agent has received it (it is in %s)", id, filepath.Dir(path))
	}
	req, err := mailbox.ReadMessage(path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return err
	}
	typ, _ := req.Header().Get("type")
	var respType, textField string
	switch typ {
	case workspace.PlanApprovalRequest:
		respType, textField = workspace.PlanApprovalResponse, "feedback"
	case workspace.ShutdownRequest:
		respType, textField = workspace.ShutdownResponse, "reason"
	default:
		if kind, _ := req.Header().Get("escalation"); kind != "" {
			// The dev pipeline's escalation: answered with a decision
			// (a tryout ran parley approve on one, and was told only
			// what it is not).
			decision := orchestrator.DecisionApprove
			if !approve {
				decision = orchestrator.DecisionStop
			}
			return fmt.Errorf("%s is an escalation, not a plan_approval_request or a shutdown_request: answer it with %s", id, orchestrator.AnswerHint(req, agent, decision))
		}
		what := dashIfEmpty(typ, "message without a type")
		return fmt.Errorf("%s is %s %s, not a plan_approval_request or a shutdown_request", id, article(what), what)
	}
	requester, _ := req.Header().Get("from")
	if requester == "" {
		return fmt.Errorf("%s has no sender (from) to answer", id)
	}
	requestID, ok := req.Header().Get("request_id")
	if !ok {
		requestID = id
	}
	if a, ok := ws.FindAnswer(id, requestID); ok {
		return fmt.Errorf("%s was answered already: %s sent a %s (%s) at %s UTC", id, a.From, a.Type, a.ID, a.Sent.UTC().Format("2006-01-02 15:04:05"))
	}
	body := "Approved."
	if !approve {
		body = "Refused."
	}
	if feedback != "" {
		body = feedback
	}
	m := mailbox.Reply(req, []byte(body+"\n"))
	respID := (&mailbox.IDs{Now: time.Now}).New(agent)
	m.Set("id", respID)
	m.Set("from", agent)
	m.Set("type", respType)
	m.Set("request_id", requestID)
	m.SetValue("approve", fmt.Sprint(approve))
	if feedback != "" {
		m.Set(textField, feedback)
	}
	if err := lacksType(ws, respType, map[bool]string{true: "parley approve", false: "parley reject"}[approve]); err != nil {
		return fmt.Errorf("not answering %s: %w", id, err)
	}
	if err := refusal(ws, ws.Mailbox(agent), m); err != nil {
		return fmt.Errorf("not answering %s: %w", id, err)
	}
	if _, err := ws.Mailbox(agent).Send(m); err != nil {
		return err
	}
	// The request is handled (in a done/ made again if git removed it:
	// the answer is sent, and run again would send a second).
	box := ws.Mailbox(agent)
	if err := box.Init(); err != nil {
		return err
	}
	if state == mailbox.Inbox {
		err := box.Claim(id)
		if err != nil && !errors.Is(err, mailbox.ErrNotFound) && !errors.Is(err, mailbox.ErrHandled) {
			return err
		}
		if !errors.Is(err, mailbox.ErrHandled) {
			state = mailbox.Cur
		}
	}
	if state == mailbox.Cur {
		if err := box.Finish(id); err != nil && !errors.Is(err, mailbox.ErrNotFound) {
			return err
		}
	}
	word := "approved"
	if !approve {
		word = "refused"
	}
	note := fmt.Sprintf("%s %s's %s (%s): answer %s sent to %s", word, requester, typ, requestID, respID, requester)
	if feedback != "" {
		note += ": " + feedback
	}
	rec := workspace.Entry{Time: time.Now().UTC().Format(mailbox.TimeFormat), Outcome: workspace.Answered, Agent: agent,
		ID: id, From: requester, Type: typ, File: mailbox.FileName(id),
		Path: filepath.Join(workspace.MailboxesDir, agent, mailbox.Done, mailbox.FileName(id)), Sent: respID, Note: note}
	if err := workspace.AppendJournal(ws.JournalPath(), rec); err != nil {
		// The answer is sent: failing now would have a script send it
		// again.
		fmt.Fprintf(e.stderr, "parley: warning: the answer is sent, but the journal was not written: %v\n", err)
	}
	fmt.Fprintf(e.stdout, "%s %s's %s (%s): answer %s sent to %s\n", word, strings.TrimSpace(requester), typ, requestID, respID, requester)
	return nil
}
