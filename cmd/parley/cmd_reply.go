package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

func replyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "reply",
		Usage: "answer a message, as the agent that received it: to its sender, with reply_to and thread set; it is then marked handled",
		UsageText: "parley reply ID [--body TEXT] [--type TYPE] [--field KEY=VALUE]...   (a short id works)\n" +
			"echo 'On my way.' | parley reply 2f322e",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			agentFlag("whose copy it is, and who answers (default: the one agent that received it)"),
			&cli.StringSliceFlag{Name: "cc", Usage: "copy the answer to `AGENT` too"},
			&cli.StringFlag{Name: "type", Usage: "the answer's `TYPE` (default: none, an informal message); a type the protocol sends to everyone or to agents of its own (NARRATIVE) goes there, and to the sender answered (so does a body whose first line is the type's tag, [NARRATIVE])"},
			&cli.StringFlag{Name: "signal", Usage: "the answer's `SIGNAL`"},
			&cli.StringSliceFlag{Name: "field", Aliases: []string{"f"}, Usage: "a protocol field `KEY=VALUE`, as for send (repeat)"},
			&cli.StringFlag{Name: "body", Usage: "the answer's `TEXT` (default: stdin, or $VISUAL/$EDITOR at a terminal)"},
			&cli.BoolFlag{Name: "keep", Usage: "leave the message in the inbox: do not mark it handled"},
			&cli.BoolFlag{Name: "again", Usage: "send the answer even if this agent sent one that says the same to this message already (by default that one stands, and its id is printed)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check the answer and say where it would go; write nothing"},
			&cli.BoolFlag{Name: "no-check", Usage: "write the answer even if the router would refuse it, or its decision is none the orchestrator knows"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "the ID of the message to answer (a short id works)"); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			if err := checkAgentFlag(c, ws); err != nil {
				return err
			}
			opts := sendOptions{
				CC:      c.StringSlice("cc"),
				Type:    strings.Trim(c.String("type"), "[]"),
				Signal:  c.String("signal"),
				Fields:  c.StringSlice("field"),
				DryRun:  c.Bool("dry-run"),
				NoCheck: c.Bool("no-check"),
				JSON:    c.Bool("json"),
				Edit:    true,
				Once:    !c.Bool("again"),
			}
			if c.IsSet("body") {
				opts.Body = text(withNewline(c.String("body")))
			}
			note, err := runReply(e, ws, c.Args().First(), c.String("agent"), c.Bool("keep"), opts)
			if note != "" {
				fmt.Fprintf(e.stderr, "parley: note: %s\n", note)
			}
			var ud *unknownDecisionError
			if errors.As(err, &ud) {
				// The command line has a way past the check; the web
				// seat and the MCP server, which call runReply too, not.
				if ud.decision == "" && ud.field == "" {
					d := orchestrator.Decisions()
					return fmt.Errorf("%w (--field decision=%s gives one, or decision=%s; --no-check sends it even so)", err, d[0], strings.Join(d[1:], ", decision="))
				}
				return fmt.Errorf("%w (--no-check sends it even so)", err)
			}
			return err
		},
	}
}

// runReply answers a message as the agent that received it, through the
// same check and write as send, then marks the message handled. An
// error means nothing was sent; once the answer is sent, a failure to
// mark the message handled is no error but the note returned (see
// markAnswered).
func runReply(e *env, ws *workspace.Workspace, arg, agent string, keep bool, opts sendOptions) (note string, err error) {
	id, err := ws.ResolveID(arg)
	if err != nil {
		return "", err
	}
	c, err := ws.Handling(id, agent)
	if err != nil {
		return "", err
	}
	// Replies to one message take turns, by a lock on its file (as the
	// seats' answers do): a second call made at the same moment (a form
	// sent twice, a client that calls again) looks once the first has
	// sent, and finds its answer (opts.Once).
	unlock, err := mailbox.LockFile(c.Path)
	for try := 0; errors.Is(err, fs.ErrNotExist) && try < 5; try++ {
		// Moved meanwhile (a done called at once, the reply before
		// marking it handled, a move or two): found where it is now.
		if c, err = ws.Handling(id, agent); err != nil {
			return "", err
		}
		unlock, err = mailbox.LockFile(c.Path)
	}
	if err != nil {
		return "", err
	}
	defer unlock()
	// The lock is on the file, wherever it moved while this call waited
	// for it (inbox/ to done/, by the call before): where it is now.
	if c, err = ws.Handling(id, agent); err != nil {
		return "", err
	}
	data, err := mailbox.ReadFile(c.Path, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return "", err
	}
	in, err := mailbox.Parse(data)
	if err != nil {
		return "", workspace.RefusalOf(c.Path, err)
	}
	if from, _ := in.Header().Get("from"); from == "" {
		return "", fmt.Errorf("%s: says nobody sent it (no from:): there is no one to answer", ws.Short(c.Path))
	}
	if err := checkDecision(in, id, opts); err != nil {
		return "", err
	}
	opts.From, opts.Answers = c.Agent, in
	opts.Quote = quote(in)
	opts, routed, err := answerRecipients(ws, opts, nil)
	if err != nil {
		return "", err
	}
	err = runSend(e, ws, opts)
	var rep *repeatedError
	if errors.As(err, &rep) {
		// A retry: the answer stands as sent the first time, and is
		// told as then (its id), the message marked handled if it is
		// not yet.
		note = rep.Error()
		if opts.DryRun {
			return note + "; nothing would be sent", nil
		}
		if opts.JSON {
			err = e.printJSON(map[string]string{"id": rep.ID, "path": rep.Path})
		} else {
			_, err = fmt.Fprintln(e.stdout, rep.ID)
		}
	} else if err != nil || opts.DryRun {
		return "", err
	}
	if err != nil {
		return note, err
	}
	if routed != "" && note == "" {
		note = routed // (an answer sent before was told so then)
	}
	if keep || c.State == mailbox.Done {
		return note, nil
	}
	if marked := markAnswered(e, ws, c.Agent, id, opts.HandledNote); marked != "" {
		note = strings.TrimPrefix(note+"; "+marked, "; ")
	}
	return note, nil
}

// answerRecipients decides where an answer of a protocol's type goes.
// The workspace Check says it, as for a message of that type sent with
// no to:: a type the protocol sends to everyone (a [NARRATIVE]) or to
// agents of its own (a [STATE_UPDATED] to the team lead) goes there, and
// to the sender of the message answered besides, named when the protocol
// would leave it out; addressed to that sender alone, a narrative would
// miss the scribe and the rest of the table. An answer of no type, or of
// a type the protocol sends to whoever the sender names (a
// [GM_TO_PLAYER] at a table of several players), or one the Check
// refuses (it says why when sent), goes to the sender answered, as
// opts.Answers says. It returns the options to send the answer with, and
// a note saying where it goes when that is not the sender alone.
//
// body is the answer's body when known (nil: opts.Body's, if any): a body
// whose first line is a tag ([NARRATIVE], a whole message piped in) makes
// the answer of that type, as the router reads it.
func answerRecipients(ws *workspace.Workspace, opts sendOptions, body []byte) (sendOptions, string, error) {
	if len(opts.To) > 0 || opts.Answers == nil || opts.NoCheck {
		return opts, "", nil
	}
	if body == nil && opts.Body != nil {
		body = []byte(*opts.Body)
	}
	probe := opts
	probe.Routed, probe.CC = true, nil
	m, err := answerMessage(ws, probe, body)
	if err != nil {
		return opts, "", nil // said when sent
	}
	if workspace.TypeOf(m) == "" {
		return opts, "", nil // no type: to the sender answered, as a reply goes
	}
	v, err := ws.Check(workspace.Input{Sender: opts.From, Message: m})
	if err != nil {
		return opts, "", err
	}
	if !v.Accepted() {
		if slices.ContainsFunc(v.Refusal.Problems(), func(f *workspace.Refusal) bool { return f.Field == "to" }) {
			// The protocol sends the type nowhere of itself: to the
			// sender answered, as a reply goes.
			return opts, "", nil
		}
		// Refused for something else (a field it requires): sent as
		// probed, the refusal says only what is wrong, not also that
		// the sender answered may not receive the type.
		routed := opts
		routed.Routed = true
		return routed, "", nil
	}
	var byProtocol []string
	for _, r := range v.Recipients {
		if slices.ContainsFunc(r.Rules, func(r workspace.Rule) bool { return r.Kind == workspace.RuleProtocol }) {
			byProtocol = append(byProtocol, r.Agent)
		}
	}
	answered, _ := opts.Answers.Header().Get("from")
	if agent, ok := ws.Resolve(answered); ok {
		answered = agent
	}
	if len(byProtocol) == 0 || len(byProtocol) == 1 && byProtocol[0] == answered {
		return opts, "", nil // to the sender answered, as a reply goes
	}
	label := v.Type
	if m.Tag != "" {
		label = "[" + v.Type + "]"
	}
	where := "to " + strings.Join(byProtocol, ", ")
	if v.Broadcast {
		where = "to everyone"
	}
	note := fmt.Sprintf("%s goes where the protocol sends it: %s", label, where)
	sent := opts
	sent.Routed = true
	switch {
	case answered == opts.From:
	case slices.Contains(v.Agents(), answered):
		note += fmt.Sprintf(" (%s included)", answered)
	default:
		with := named(sent, byProtocol, v.Broadcast, answered)
		m, err := answerMessage(ws, with, body)
		if err != nil {
			return opts, "", nil // said when sent
		}
		if w, err := ws.Check(workspace.Input{Sender: opts.From, Message: m}); err == nil && !w.Accepted() {
			// The protocol does not let the sender answered receive
			// the type (a [STATE_UPDATED] goes to the team lead
			// alone): left out, and said.
			return named(sent, byProtocol, v.Broadcast, ""), note + fmt.Sprintf(" (not to %s, whose message it answers: the protocol does not send %s to it)", answered, label), nil
		}
		return with, note + fmt.Sprintf(", and to %s, whose message it answers", answered), nil
	}
	return named(sent, byProtocol, v.Broadcast, ""), note, nil
}

// answerMessage builds the answer opts says, with body (when not nil),
// as the router will read it: a body that begins with a [TAG] line makes
// it of that type.
func answerMessage(ws *workspace.Workspace, opts sendOptions, body []byte) (*mailbox.Message, error) {
	m, err := buildMessage(ws, opts)
	if err != nil || body == nil {
		return m, err
	}
	m.SetBody(body)
	if read, err := mailbox.Parse(m.Bytes()); err == nil {
		return read, nil
	}
	return m, nil
}

// named returns the options of an answer that goes to the agents the
// protocol sends its type to (byProtocol, or everyone for a broadcast)
// and is copied to also (when not ""), and to the agents opts.CC names.
// A message that names someone goes to those it names alone: the
// protocol's recipients are named too, then.
func named(opts sendOptions, byProtocol []string, broadcast bool, also string) sendOptions {
	if also != "" {
		opts.CC = append(slices.Clone(opts.CC), also)
	}
	if len(opts.CC) > 0 {
		opts.To = byProtocol
		if broadcast {
			opts.To = []string{"*"}
		}
	}
	return opts
}

// markAnswered marks message id, answered, handled for agent. The answer
// is sent by then: whatever befalls the marking, the reply has
// succeeded, and is not to be sent again. So it returns no error but a
// note: "" when the message is marked, else what became of it (marked
// handled meanwhile by another call, a parley done or the MCP done
// tool; or left unmarked, and why). parley reply, the web seat and the
// MCP server all answer through here: this is the one place that
// decides. note is what the journal says of the marking ("" for
// "answered with parley reply").
func markAnswered(e *env, ws *workspace.Workspace, agent, id, note string) string {
	if note == "" {
		note = "answered with parley reply"
	}
	err := markDone(e.quiet(), ws, agent, []string{id}, note)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, mailbox.ErrHandled):
		return fmt.Sprintf("%s was marked handled meanwhile, by another call: the answer is sent once", id)
	}
	return fmt.Sprintf("the answer is sent, but %s is not marked handled: %v (done marks it; replying again would send a second answer)", id, err)
}

// unknownDecisionError is checkDecision's refusal of a decision the
// orchestrator does not know. The parley reply command adds that
// --no-check sends it even so; the callers without that flag (the web
// seat, the MCP server) say it as it is.
type unknownDecisionError struct {
	decision string // a decision given, none of the orchestrator's
	field    string // a field given for decision (decison)
	id       string
}

func (e *unknownDecisionError) Error() string {
	known := strings.Join(orchestrator.Decisions(), ", ")
	switch {
	case e.field != "":
		return fmt.Sprintf("--field %s: did you mean decision? the orchestrator reads its decision from the field decision (%s); without one it would do nothing, and %s would still wait; nothing was sent", e.field, known, e.id)
	case e.decision == "":
		return fmt.Sprintf("the answer gives no decision (%s: its decision, or its first word); without one the orchestrator would do nothing, and %s would still wait; nothing was sent", known, e.id)
	}
	return fmt.Sprintf("--field decision=%s: the orchestrator knows the decisions %s; with any other it would do nothing, and %s would still wait; nothing was sent",
		e.decision, known, e.id)
}

// checkDecision refuses an answer to an escalation that would decide
// nothing: a decision the orchestrator does not know (decision=aprove), a
// field that looks like a misspelt decision (decison=approve), or no
// decision at all in a body given on the command line ("ok, ship it"):
// nothing would be done, and the escalation would still wait. --no-check
// (opts.NoCheck) sends it even so. (A body read later, from stdin or an
// editor, is judged by the orchestrator, which says so in a note.)
func checkDecision(esc *mailbox.Message, id string, opts sendOptions) error {
	if kind, _ := esc.Header().Get("escalation"); kind == "" || opts.NoCheck || opts.Type != "" {
		return nil
	}
	// The answer as the orchestrator will read it: its fields written as
	// send writes them (a YAML value: "stop", 'stop' and stop are one
	// decision), and its body.
	m := mailbox.New(nil)
	for _, f := range opts.Fields {
		k, v, _ := strings.Cut(f, "=")
		if k = strings.TrimSpace(k); k != "" {
			m.SetValue(k, v)
		}
	}
	given := m.Header().Has("decision")
	if k := orchestrator.MisspeltDecisionKey(m); k != "" && !given {
		return &unknownDecisionError{field: k, id: id}
	}
	if given {
		if d, ok := orchestrator.DecisionOf(m); !ok {
			return &unknownDecisionError{decision: d, id: id}
		}
		return nil
	}
	if opts.Body == nil || !orchestrator.NeedsDecision(esc) {
		return nil // read later; or an answer passed on, whatever it says
	}
	m.SetBody([]byte(*opts.Body))
	if _, ok := orchestrator.DecisionOf(m); !ok {
		return &unknownDecisionError{id: id}
	}
	return nil
}

// quote is what an editor shows of the message being answered.
func quote(m *mailbox.Message) string {
	from, _ := m.Header().Get("from")
	typ, _ := m.Header().Get("type")
	var b strings.Builder
	fmt.Fprintf(&b, "answering %s", from)
	if typ != "" {
		fmt.Fprintf(&b, " (%s)", typ)
	}
	b.WriteString(":\n")
	for _, line := range strings.Split(strings.TrimRight(string(m.Content()), "\n"), "\n") {
		b.WriteString("> " + line + "\n")
	}
	return b.String()
}

// withNewline ends a non-empty text with a line break.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
