package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func sendCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "check a message and write it into an agent's outbox (the body comes from --body or stdin, or the whole message from --file)",
		UsageText: "parley send --from AGENT [--to AGENT] [--cc AGENT] [--type TYPE] [--signal SIGNAL] [--field KEY=VALUE]... [--body TEXT]\n" +
			"parley send --file MESSAGE.md [--from AGENT]\n" +
			"echo 'The door creaks open.' | parley send --from gm --type NARRATIVE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the sending `AGENT` (required, unless the --file names it)"},
			&cli.StringSliceFlag{Name: "to", Usage: "a recipient `AGENT` (or the character it plays), or '*' for every agent but the sender (repeat, or separate with commas)"},
			&cli.StringSliceFlag{Name: "cc", Usage: "a recipient `AGENT` to copy (repeat, or separate with commas)"},
			&cli.StringFlag{Name: "type", Usage: "the message `TYPE` (NARRATIVE, review_verdict, ...)"},
			&cli.StringFlag{Name: "signal", Usage: "the message `SIGNAL` (pass, fail, ...)"},
			&cli.StringSliceFlag{Name: "field", Aliases: []string{"f"}, Usage: "a protocol field `KEY=VALUE`; VALUE is YAML: true, 12, '\"001\"' (a string), [a, b], {k: v} (repeat)"},
			&cli.StringFlag{Name: "body", Usage: "the message body `TEXT` (default: read stdin)"},
			&cli.StringFlag{Name: "file", Usage: "send this message `FILE` as it is written (header and body), instead of building one from flags"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "check the message and say where it would go; write nothing"},
			&cli.BoolFlag{Name: "no-check", Usage: "write the message even if the router would refuse it (the refusal is then on record in rejected/)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := openWorkspace(c)
			if err != nil {
				return err
			}
			opts := sendOptions{
				From:    c.String("from"),
				To:      c.StringSlice("to"),
				CC:      c.StringSlice("cc"),
				Type:    strings.Trim(c.String("type"), "[]"),
				Signal:  c.String("signal"),
				Fields:  c.StringSlice("field"),
				File:    c.String("file"),
				DryRun:  c.Bool("dry-run"),
				NoCheck: c.Bool("no-check"),
				JSON:    c.Bool("json"),
			}
			if c.IsSet("body") {
				opts.Body = text(withNewline(c.String("body")))
			}
			return runSend(e, ws, opts)
		},
	}
}

type sendOptions struct {
	From, Type, Signal, File string
	To, CC, Fields           []string
	Body                     *string // nil: read stdin
	DryRun, NoCheck, JSON    bool
	// Answers, when set, is the message this one answers (parley reply):
	// it goes to that message's sender, with reply_to and thread set.
	Answers *mailbox.Message
	// Routed: the answer goes where its protocol sends its type (a
	// broadcast [NARRATIVE]), not to the sender of Answers by a to:
	// (see answerRecipients).
	Routed bool
	// Once: an answer that says the same as one From sent to Answers
	// already is not sent again (a client that retries): runSend returns
	// a *repeatedError naming that one (parley reply, the web seat and
	// the MCP server set it).
	Once bool
	// Edit opens $VISUAL or $EDITOR for the body when stdin is a
	// terminal, with Quote shown in a comment that is taken out.
	Edit  bool
	Quote string
	// Tool says that the options are an MCP tool's arguments: an error
	// names fields.KEY and the argument to, not --field KEY and --to.
	Tool bool
	// HandledNote is what the journal says when an answer (parley reply)
	// marks the message it answers handled: "" for "answered with parley
	// reply".
	HandledNote string
}

// fieldRef names a field as the sender wrote it: --field KEY, or, for an
// MCP tool, fields.KEY.
func (o sendOptions) fieldRef(k string) string {
	if o.Tool {
		return "fields." + k
	}
	return "--field " + k
}

// argRef names an option (to, cc, type, signal) as the sender gives it.
func (o sendOptions) argRef(k string) string {
	if o.Tool {
		return k
	}
	return "--" + k
}

// optionFields are the header fields send takes as options of their own
// (--to, --type), not as --field KEY=VALUE.
var optionFields = []string{"to", "cc", "type", "signal"}

// givenRef names how the sender gives the field k: its option (--type),
// or --field k.
func (o sendOptions) givenRef(k string) string {
	if slices.Contains(optionFields, k) {
		return o.argRef(k)
	}
	return o.fieldRef(k)
}

// misspelt adds to err, when it is the workspace Check's refusal of a
// key the sender gave as a field (--field tpye=...) taken for a field
// parley reserves, misspelt (Refusal.Meant), the hint to give that field
// as send takes it: the refusal names the header key, not the flag.
func (o sendOptions) misspelt(err error) error {
	var refusal *workspace.Refusal
	if !errors.As(err, &refusal) {
		return err
	}
	for _, f := range refusal.Problems() { // the first of them that is such a key
		if f.Meant == "" {
			continue
		}
		for _, given := range o.Fields {
			if k, _, _ := strings.Cut(given, "="); k == f.Field {
				return hintedError{err: err, hint: fmt.Sprintf("use %s, not %s", o.givenRef(f.Meant), o.fieldRef(k))}
			}
		}
	}
	return err
}

var fieldKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// runSend checks the message the options describe, then writes it into
// the sender's outbox (or, with DryRun, says where it would go). The
// arguments are checked, and the message against the protocol and the
// routes, before the body is read (or typed in an editor), so that a
// message that cannot go is refused at once; a body given with --body is
// checked with them. Once read, the body is checked too (it may carry a
// secret a recipient may not know), and the bytes the file is written as
// are read as the router reads them (asWritten). A dry run reads the body
// as a send does, from --body, stdin or the editor, and shows the verdict
// on the message with it.
func runSend(e *env, ws *workspace.Workspace, opts sendOptions) error {
	if opts.File != "" {
		return sendFile(e, ws, opts)
	}
	m, err := buildMessage(ws, opts)
	if err != nil {
		return err
	}
	box := ws.Mailbox(opts.From)
	if opts.Body != nil {
		m.SetBody([]byte(*opts.Body))
		if err := opts.empty(m.Body); err != nil {
			return err
		}
	}
	read := opts.Body == nil
	if opts.NoCheck && opts.DryRun {
		return usagef("--dry-run checks the message: leave out --no-check")
	}
	if !read {
		if err := repeated(ws, opts, m); err != nil {
			return err
		}
	}
	if !opts.NoCheck {
		v, err := check(ws, box, m)
		if err != nil {
			return err
		}
		// A dry run whose body is still to be read shows the verdict on
		// the message as read, below, unless it is refused already.
		if !read || !opts.DryRun || !v.Accepted() {
			if err := judged(e, ws, v, opts.DryRun, opts.JSON); err != nil || opts.DryRun {
				return opts.misspelt(err)
			}
		}
	}
	if read {
		body, err := readBody(e, ws, opts)
		if err != nil {
			return err
		}
		m.SetBody(body)
		if err := opts.empty(body); err != nil {
			return err
		}
		if err := repeated(ws, opts, m); err != nil {
			return err
		}
		if opts.Answers != nil && !opts.Routed && opts.Type == "" {
			// An answer whose type is in its body's first line ([TAG])
			// goes where that type goes, as one given --type
			// (answerRecipients decides both; parley reply asked it
			// before the body was read).
			routed, note, err := answerRecipients(ws, opts, body)
			if err != nil {
				return err
			}
			if routed.Routed {
				if m, err = buildMessage(ws, routed); err != nil {
					return err
				}
				m.SetBody(body)
				if note != "" {
					fmt.Fprintf(e.stderr, "parley: note: %s\n", note)
				}
			}
		}
		if opts.DryRun {
			v, err := check(ws, box, m)
			if err != nil {
				return err
			}
			return judged(e, ws, v, true, opts.JSON)
		}
		read = len(body) > 0
	}
	// The id it is sent with: what is checked now is what is written.
	box.Stamp(m)
	if !opts.NoCheck {
		if read {
			v, err := check(ws, box, m)
			if err != nil {
				return err
			}
			if !v.Accepted() {
				return v.Refusal
			}
		}
	}
	return write(e, box, m, opts.JSON)
}

// repeatedError is runSend's error for an answer not sent because its
// sender sent one that says the same to that message already (opts.Once).
type repeatedError struct {
	ID, Path string // the answer sent before
	answered string // the id of the message it answers
}

func (e *repeatedError) Error() string {
	return fmt.Sprintf("%s was answered so already (%s): the same answer is not sent twice", e.answered, e.ID)
}

// repeated returns a *repeatedError when opts.Once and opts.From sent
// an answer to opts.Answers that says what m says (mailbox.SameSaying).
func repeated(ws *workspace.Workspace, opts sendOptions, m *mailbox.Message) error {
	if !opts.Once || opts.Answers == nil {
		return nil
	}
	id, _ := opts.Answers.Header().Get("id")
	for r := range ws.Replies(id, opts.From) {
		if r.Sender == opts.From && mailbox.SameSaying(r.Message, m) {
			return &repeatedError{ID: r.ID, Path: r.Path, answered: id}
		}
	}
	return nil
}

// empty refuses a message that says nothing: an informal one (no type,
// no signal) with no fields and a blank body. Sent, it would reach its
// recipient as a bare header, and a reply would file the message it
// answers in done/ (a cron job's empty stdin loses the question so). A
// protocol message may well need no body.
func (o sendOptions) empty(body []byte) error {
	if o.Type != "" || o.Signal != "" || len(o.Fields) > 0 || strings.TrimSpace(string(body)) != "" {
		return nil
	}
	what := "message"
	if o.Answers != nil {
		what = "reply"
	}
	if o.Tool {
		return usagef("nothing to send: the %s has no body and no fields; give body (its text), fields or type (nothing was sent)", what)
	}
	return usagef("nothing to send: the %s has no body and no fields; give --body TEXT, the text on stdin, or --field KEY=VALUE (nothing was sent)", what)
}

// check checks a message built from flags as the router will check the
// file send writes: the bytes it is written as (asWritten), then the
// workspace's Check.
func check(ws *workspace.Workspace, box mailbox.Dir, m *mailbox.Message) (*workspace.Verdict, error) {
	read, headerLines, f := asWritten(box, m)
	if f != nil {
		typ, _ := m.Header().Get("type")
		return &workspace.Verdict{From: box.Agent(), Type: typ, Refusal: f}, nil
	}
	if sameKind(read, m) {
		// Checked as built, its problems named by the flags.
		return ws.Check(workspace.Input{Sender: box.Agent(), Message: m})
	}
	// The router reads it otherwise than it was built: a body that
	// begins with a [TAG] line makes it of that type (a tagged message
	// on stdin). Checked as the router will read it.
	v, err := ws.Check(workspace.Input{Sender: box.Agent(), Message: read})
	if err == nil && v.Refusal != nil {
		relined(v.Refusal, headerLines)
	}
	return v, err
}

// sameKind says whether two messages are of one type and signal.
func sameKind(a, b *mailbox.Message) bool {
	for _, key := range []string{"type", "signal"} {
		x, _ := a.Header().Get(key)
		y, _ := b.Header().Get(key)
		if x != y {
			return false
		}
	}
	return true
}

// asWritten reads the bytes m is written as (stamped as Post stamps it,
// when it is not yet) as the router reads a file in an outbox, with
// mailbox.Parse: a body that is not UTF-8 text, or holds a NUL byte, is
// refused by send, with the router's reason and the name the file would
// have, instead of by the router once it is written. Nil when they read.
func asWritten(box mailbox.Dir, m *mailbox.Message) (read *mailbox.Message, headerLines int, f *workspace.Refusal) {
	c := m.Clone()
	id := box.Stamp(c)
	data := c.Bytes()
	read, err := mailbox.Parse(data)
	if err != nil {
		return nil, 0, workspace.RefusalOf(mailbox.FileName(id), err)
	}
	if bytes.HasSuffix(data, c.Body) {
		headerLines = bytes.Count(data[:len(data)-len(c.Body)], []byte("\n"))
	}
	return read, headerLines, nil
}

// relined makes the lines of a refusal of a message built from flags
// (asWritten) the user's: a header field is the flag's, of no line, and a
// line of the body is counted in the body ("body:3:"), not in a file that
// was never written.
func relined(f *workspace.Refusal, headerLines int) {
	for _, p := range append([]*workspace.Refusal{f}, f.More...) {
		switch {
		case p.Line == 0:
		case p.Line <= headerLines:
			p.Line = 0
		default:
			p.Line -= headerLines
			p.File = "body"
		}
	}
}

// sendFile sends a message file as it is written, after the check
// validate makes of it.
func sendFile(e *env, ws *workspace.Workspace, opts sendOptions) error {
	if len(opts.To)+len(opts.CC)+len(opts.Fields) > 0 || opts.Type != "" || opts.Signal != "" || opts.Body != nil {
		return usagef("--file sends the file as it is written: put its recipients, type and fields in the file")
	}
	if opts.From != "" {
		if err := ws.CheckAgent(opts.From); err != nil {
			return usagef("--from: %v", err)
		}
	}
	if opts.NoCheck && opts.DryRun {
		return usagef("--dry-run checks the message: leave out --no-check")
	}
	agent, state, inMailbox := ws.Locate(opts.File)
	if inMailbox && !opts.DryRun {
		// A file parley keeps would stay where it is, and go again.
		switch state {
		case mailbox.Outbox:
			return usagef("%s is in %s's outbox already: the router sends it as it is (parley run); sent with --file too, it would go twice (--dry-run checks it)", opts.File, agent)
		case mailbox.Rejected:
			return usagef("%s is in %s's rejected/: `parley retry %s` checks it and puts it back into the outbox; sent with --file, it would stay there, and a retry would send it again", opts.File, agent, opts.File)
		}
	}
	// A draft parley compose kept (tmp/compose-ID.md) is sent under the id
	// in its name, and is gone once sent: sending it again finds nothing,
	// and a copy of it is a duplicate of that id.
	draftID := ""
	if inMailbox && state == mailbox.Tmp {
		if id, ok := strings.CutPrefix(strings.TrimSuffix(filepath.Base(opts.File), ".md"), "compose-"); ok && mailbox.IsID(id) {
			if _, from, _ := mailbox.ParseID(id); from == agent {
				draftID = id
			}
		}
	}
	v, err := ws.CheckFile(opts.File, workspace.FileCheck{Sender: opts.From, Sending: true})
	if errors.Is(err, workspace.ErrNoSender) {
		return usagef("say who sends it: --from AGENT (%s is in no outbox and has no from:)", opts.File)
	}
	if err != nil {
		return err
	}
	if !opts.NoCheck || !v.Accepted() && v.Message == nil {
		if err := judged(e, ws, v, opts.DryRun, opts.JSON); err != nil || opts.DryRun {
			return err
		}
	}
	m, err := mailbox.ReadMessage(opts.File, ws.Config.Router.MaxMessageSize)
	if err != nil {
		return err
	}
	if draftID != "" && !m.Header().Has("id") {
		box := ws.Mailbox(v.From)
		if _, err := os.Lstat(box.Path(mailbox.Outbox, mailbox.FileName(draftID))); err == nil || box.IsSent(draftID) {
			return fmt.Errorf("%s: sent already, as %s (the id in its name)", opts.File, draftID)
		}
		m.Set("id", draftID)
		sent, _, _ := mailbox.ParseID(draftID)
		m.Set("created", sent.Format(mailbox.TimeFormat))
	}
	if err := write(e, ws.Mailbox(v.From), m, opts.JSON); err != nil {
		return err
	}
	if draftID != "" {
		return os.Remove(opts.File)
	}
	return nil
}

// judged shows a verdict with dryRun, and otherwise turns a refusal into
// the error to exit with, after saying the warnings.
// A message naming an agent the running runner has not loaded is refused
// when the runner could not load parley.yaml (it would reject it), and
// otherwise sent with a warning.
func judged(e *env, ws *workspace.Workspace, v *workspace.Verdict, dryRun, asJSON bool) error {
	var gap *workspace.RunnerGap
	if v.Accepted() {
		gap = ws.RunnerGap(v)
	}
	if dryRun {
		if gap != nil {
			v.Warnings = append(v.Warnings, gap.Error())
		}
		if err := showVerdict(e, v, asJSON); err != nil {
			return err
		}
		if gap != nil && gap.ConfigError != "" {
			return gap
		}
		return nil
	}
	if !v.Accepted() {
		return v.Refusal
	}
	if gap != nil && gap.ConfigError != "" {
		return gap
	}
	if gap != nil {
		v.Warnings = append(v.Warnings, gap.Error())
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(e.stderr, "parley: warning: %s\n", w)
	}
	return nil
}

// write gives a message its id, sender and time where it has none, and
// writes it durably into the outbox; it prints the id (--json: id and
// path).
func write(e *env, box mailbox.Dir, m *mailbox.Message, asJSON bool) error {
	id, path, err := box.Post(m)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(map[string]string{"id": id, "path": path})
	}
	fmt.Fprintln(e.stdout, id)
	return nil
}

// noteUnrouted says on stderr, when no runner routes the workspace (no
// parley run, no parley play) and files wait in outboxes, how many: they
// go nowhere until one starts. A person who sent a message and forgot
// parley run was told its recipient's inbox is empty, and --follow
// waited for ever. (parley send says nothing of it: sending, then
// starting parley run, is the usual way.)
func noteUnrouted(e *env, ws *workspace.Workspace) {
	if ws.RunnerPID() != 0 {
		return
	}
	waiting := 0
	for _, a := range ws.AgentNames() {
		n, _ := ws.Mailbox(a).Count(mailbox.Outbox)
		waiting += n
	}
	if waiting > 0 {
		fmt.Fprintf(e.stderr, "parley: no runner is running here: %d %s in outboxes until `parley run` (or `parley play`) routes them\n", waiting, plural(waiting, "message waits", "messages wait"))
	}
}

// showVerdict prints a verdict (send and compose --dry-run); a refused
// message exits 1.
func showVerdict(e *env, v *workspace.Verdict, asJSON bool) error {
	if asJSON {
		if err := e.printJSON(jsonVerdict(v)); err != nil {
			return err
		}
	} else {
		printVerdict(e.stdout, v)
	}
	if !v.Accepted() {
		return errSilent
	}
	return nil
}

// readBody returns the body given with --body, or reads it from stdin,
// saying so when stdin is a terminal; with opts.Edit and a terminal, it
// opens $VISUAL or $EDITOR instead, when one is set.
func readBody(e *env, ws *workspace.Workspace, opts sendOptions) ([]byte, error) {
	if opts.Body != nil {
		return []byte(*opts.Body), nil
	}
	if isTerminal(e.stdin) {
		if editor := editorOf(e); opts.Edit && editor != "" {
			return editBody(e, ws.Mailbox(opts.From), editor, opts.Quote)
		}
		fmt.Fprintln(e.stderr, "parley: reading the message body from the terminal; end it with Ctrl-D")
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the body from stdin: %w", err)
	}
	return b, nil
}

// editorOf returns the editor a person chose: $VISUAL, else $EDITOR.
func editorOf(e *env) string {
	if v := e.getenv("VISUAL"); v != "" {
		return v
	}
	return e.getenv("EDITOR")
}

// editBody opens an editor on a draft in the sender's tmp/, holding quote
// in a comment, and returns what was written without the comment. An
// empty body means the person changed their mind: nothing is sent.
func editBody(e *env, box mailbox.Dir, editor, quote string) ([]byte, error) {
	comment := "<!-- write the message above; this note is taken out.\n" + strings.ReplaceAll(quote, "-->", "- ->") + "-->\n"
	path := box.Path(mailbox.Tmp, "draft-"+(&mailbox.IDs{Now: time.Now}).New(box.Agent())+".md")
	if err := os.WriteFile(path, []byte("\n"+comment), 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	if err := runEditor(e, editor, path); err != nil {
		return nil, fmt.Errorf("not sent: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body := strings.Replace(string(data), comment, "", 1)
	if strings.TrimSpace(body) == "" {
		return nil, errors.New("not sent: the message was left empty")
	}
	return []byte(strings.TrimLeft(body, "\n")), nil
}

// runEditor runs an editor, its command split at spaces, on path, with
// the command's streams (a person's terminal). Its error names the
// editor, and the variable that chose it.
func runEditor(e *env, editor, path string) error {
	args := strings.Fields(editor)
	cmd := exec.Command(args[0], append(args[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		chosen := "$EDITOR"
		if e.getenv("VISUAL") == editor {
			chosen = "$VISUAL"
		}
		return fmt.Errorf("the editor %s (%s) failed: %w", printable(editor), chosen, err)
	}
	return nil
}

// buildMessage makes the message the flags describe, with no body yet.
// A type of a tag-first protocol is written as such a message, after the
// envelope, so that its fields may share a name with a header field
// (--field type=ACTION in a [PLAYER_TO_GM]).
func buildMessage(ws *workspace.Workspace, opts sendOptions) (*mailbox.Message, error) {
	if opts.From == "" {
		return nil, usagef("say who sends the message: --from AGENT")
	}
	if err := ws.CheckAgent(opts.From); err != nil {
		return nil, usagef("--from: %v", err)
	}
	payload, err := protocolFields(ws, opts.Type)
	if err != nil {
		return nil, err
	}
	var m *mailbox.Message
	if payload != nil {
		m = mailbox.NewTagFirst(opts.Type, nil)
	} else {
		m = mailbox.New(nil)
		if opts.Type != "" {
			m.Set("type", opts.Type)
		}
	}
	if opts.Answers != nil {
		r := mailbox.Reply(opts.Answers, nil)
		for _, key := range []string{"to", "reply_to", "thread"} {
			if v, ok := r.Header().Get(key); ok && !(key == "to" && (len(opts.To) > 0 || opts.Routed)) {
				m.Set(key, v)
			}
		}
	}
	for _, to := range []struct {
		key    string
		values []string
	}{{"to", opts.To}, {"cc", opts.CC}} {
		if names := splitList(to.values); len(names) > 0 {
			m.SetNames(to.key, names)
		}
	}
	if opts.Signal != "" {
		m.Set("signal", opts.Signal)
	}
	seen := map[string]bool{}
	for _, f := range opts.Fields {
		k, v, ok := strings.Cut(f, "=")
		if opts.Tool && !fieldKey.MatchString(k) {
			return nil, usagef("fields: %q is no field name: use letters, digits, _ and -", k)
		}
		if !ok || !fieldKey.MatchString(k) {
			return nil, usagef("--field %q: write KEY=VALUE, with a KEY of letters, digits, _ and -", f)
		}
		if seen[k] {
			return nil, usagef("%s: given twice", opts.fieldRef(k))
		}
		seen[k] = true
		switch {
		case slices.Contains(payload, k):
			m.SetPayload(k, v) // the protocol's own field, even one named like a header field
		case k == "id" || k == "from" || k == "created" || k == "hops":
			return nil, usagef("%s: parley sets %s itself", opts.fieldRef(k), k)
		case slices.Contains(optionFields, k):
			return nil, usagef("%s: use %s", opts.fieldRef(k), opts.argRef(k))
		case payload != nil && !mailbox.IsReserved(k):
			m.SetPayload(k, v)
		default:
			m.SetValue(k, v)
		}
	}
	return m, nil
}

// protocolFields returns the top-level fields the protocol defines for a
// type of a tag-first protocol, or nil when the type is not one.
func protocolFields(ws *workspace.Workspace, typ string) ([]string, error) {
	if typ == "" {
		return nil, nil
	}
	set, err := ws.Protocol()
	if err != nil || set == nil {
		return nil, err
	}
	t, _, ok := set.Type(typ)
	if !ok || !t.Tagged {
		return nil, nil
	}
	fields := []string{}
	for _, f := range t.Fields {
		if !strings.ContainsAny(f.Name, ".[") {
			fields = append(fields, f.Name)
		}
	}
	return fields, nil
}

// text returns a pointer to s, for a body given in code.
func text(s string) *string { return &s }
