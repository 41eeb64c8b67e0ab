package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

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
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := exactArgs(c, 1, "an AGENT"); err != nil {
				return err
			}
			opts := inboxOptions{State: c.String("state"), JSON: c.Bool("json"), Limit: c.Int("limit")}
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
			ws, err := openWorkspace(c)
			if err != nil {
				return err
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
	State string
	Limit int // the newest Limit messages; 0: every one
	JSON  bool
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
}

func runInbox(e *env, ws *workspace.Workspace, agent string, opts inboxOptions) error {
	state := opts.State
	if err := ws.CheckAgent(agent); err != nil {
		return usagef("%v", err)
	}
	known := false
	for _, s := range mailbox.States {
		known = known || s == state
	}
	if !known {
		return usagef("--state %q: use one of %s", state, strings.Join(mailbox.States, ", "))
	}
	box := ws.Mailbox(agent)
	// Names only, then only the files listed are read: a mailbox of
	// 100,000 messages costs its directory, not 100,000 reads.
	files, total, err := box.Newest(state, opts.Limit)
	if err != nil {
		return err
	}
	list := make([]listedMessage, 0, len(files))
	for _, name := range files {
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
		list = append(list, l)
	}
	if opts.JSON {
		return e.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "%s/%s is empty\n", agent, state)
		return nil
	}
	if older := total - len(list); older > 0 {
		fmt.Fprintf(e.stdout, "%s/%s: the newest %d of %d messages (--all lists every one)\n", agent, state, len(list), total)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFROM\tTYPE\tSUMMARY")
	for _, l := range list {
		id := l.ID
		if id == "" {
			id = l.File
		}
		sum := l.Summary
		if l.Problem != "" {
			sum = shorten(printable(l.Problem), 160)
		}
		// Printable: escaped, and without tabs, which tabwriter would
		// take for a column break.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(id), printable(dash(l.From)), printable(dash(l.Type)), printable(sum))
	}
	return tw.Flush()
}

// summaryOf returns a message's summary field, or the first line of its
// body, shortened.
func summaryOf(m *mailbox.Message) string {
	s, _ := m.Payload().Get("summary") // a [SESSION_END] has one of its own
	if s == "" {
		s, _ = m.Header().Get("summary")
	}
	if s == "" {
		for _, line := range strings.Split(string(m.Body), "\n") {
			if line = strings.TrimSpace(strings.TrimLeft(line, "# ")); line != "" {
				s = line
				break
			}
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
