package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

func sendCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "write a message into an agent's outbox (the body comes from --body or stdin)",
		UsageText: "parley send --from AGENT --to AGENT [--cc AGENT] [--type TYPE] [--signal SIGNAL] [--field KEY=VALUE]... [--body TEXT]\n" +
			"   echo 'The door creaks open.' | parley send --from gm --to '*' --type NARRATIVE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the sending `AGENT` (required)"},
			&cli.StringSliceFlag{Name: "to", Usage: "a recipient `AGENT`, or '*' for every agent but the sender (repeat, or separate with commas)"},
			&cli.StringSliceFlag{Name: "cc", Usage: "a recipient `AGENT` to copy (repeat, or separate with commas)"},
			&cli.StringFlag{Name: "type", Usage: "the message `TYPE` (NARRATIVE, review_verdict, ...)"},
			&cli.StringFlag{Name: "signal", Usage: "the message `SIGNAL` (pass, fail, ...)"},
			&cli.StringSliceFlag{Name: "field", Aliases: []string{"f"}, Usage: "a header field `KEY=VALUE`; VALUE is read as YAML (true, 12, [a, b]) (repeat)"},
			&cli.StringFlag{Name: "body", Usage: "the message body `TEXT` (default: read stdin)"},
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
				From:   c.String("from"),
				To:     c.StringSlice("to"),
				CC:     c.StringSlice("cc"),
				Type:   c.String("type"),
				Signal: c.String("signal"),
				Fields: c.StringSlice("field"),
				JSON:   c.Bool("json"),
			}
			if c.IsSet("body") {
				opts.Body = c.String("body")
				if opts.Body != "" && !strings.HasSuffix(opts.Body, "\n") {
					opts.Body += "\n"
				}
			} else {
				if f, ok := e.stdin.(*os.File); ok {
					if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
						fmt.Fprintln(e.stderr, "parley: reading the message body from the terminal; end it with Ctrl-D")
					}
				}
				b, err := io.ReadAll(e.stdin)
				if err != nil {
					return fmt.Errorf("reading the body from stdin: %w", err)
				}
				opts.Body = string(b)
			}
			return runSend(e, ws, opts)
		},
	}
}

type sendOptions struct {
	From, Type, Signal, Body string
	To, CC, Fields           []string
	JSON                     bool
}

var fieldKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// buildMessage checks the options against the workspace and makes the
// message.
func buildMessage(ws *workspace.Workspace, opts sendOptions, ids *mailbox.IDs) (*mailbox.Message, error) {
	if opts.From == "" {
		return nil, usagef("say who sends the message: --from AGENT")
	}
	if err := ws.CheckAgent(opts.From); err != nil {
		return nil, usagef("--from: %v", err)
	}
	to, err := recipientList(ws, "--to", opts.To)
	if err != nil {
		return nil, err
	}
	cc, err := recipientList(ws, "--cc", opts.CC)
	if err != nil {
		return nil, err
	}
	if len(to)+len(cc) == 0 && !hasDefaultRecipients(ws, opts.Type) {
		return nil, usagef("say who the message is for: --to AGENT (or --to '*' for everyone)")
	}
	m := mailbox.New([]byte(opts.Body))
	id := ids.New(opts.From)
	m.Set("id", id)
	m.Set("from", opts.From)
	if len(to) > 0 {
		m.SetNames("to", to)
	}
	if len(cc) > 0 {
		m.SetNames("cc", cc)
	}
	if opts.Type != "" {
		m.Set("type", opts.Type)
	}
	if opts.Signal != "" {
		m.Set("signal", opts.Signal)
	}
	sent, _, _ := mailbox.ParseID(id)
	m.Set("created", sent.Format(mailbox.TimeFormat))
	for _, f := range opts.Fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !fieldKey.MatchString(k) {
			return nil, usagef("--field %q: write KEY=VALUE, with a KEY of letters, digits, _ and -", f)
		}
		switch k {
		case "id", "from", "created":
			return nil, usagef("--field %s: parley sets %s itself", k, k)
		case "to", "cc", "type", "signal":
			return nil, usagef("--field %s: use --%s", k, k)
		}
		if m.Header().Has(k) {
			return nil, usagef("--field %s: given twice", k)
		}
		m.SetValue(k, v)
	}
	return m, nil
}

func recipientList(ws *workspace.Workspace, flag string, values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if n != "*" {
				if err := ws.CheckAgent(n); err != nil {
					return nil, usagef("%s: %v", flag, err)
				}
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func runSend(e *env, ws *workspace.Workspace, opts sendOptions) error {
	m, err := buildMessage(ws, opts, &mailbox.IDs{Now: time.Now})
	if err != nil {
		return err
	}
	path, err := ws.Mailbox(opts.From).Send(m)
	if err != nil {
		return err
	}
	id, _ := m.Header().Get("id")
	if opts.JSON {
		return e.printJSON(map[string]string{"id": id, "path": path})
	}
	fmt.Fprintln(e.stdout, id)
	return nil
}

// hasDefaultRecipients reports whether the workspace's protocol says where
// a message of this type goes, so that it may leave out --to.
func hasDefaultRecipients(ws *workspace.Workspace, typ string) bool {
	if typ == "" {
		return false
	}
	set, err := ws.Protocol()
	if err != nil || set == nil {
		return false
	}
	t, _, ok := set.Type(typ)
	if !ok || len(t.Recipients) == 0 {
		return false
	}
	for _, r := range t.Recipients {
		if r == "any" {
			return false // it may go to anyone: it must say whom
		}
	}
	return true
}
