// Package mcpserver gives one agent of a workspace its mailbox as tools of
// the Model Context Protocol, so that an MCP client (Claude Code, Codex,
// an editor) can act as that agent: send (checked as the router checks),
// read its inbox, read a message, reply, mark handled, wait for the next
// message, and learn the message types of its protocol. The actions are
// the Mailbox's: the server only describes them to the client, and turns
// a refusal into a tool error carrying its reason.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-dev/parley/internal/toolargs"
)

// Outgoing is a message the agent sends.
type Outgoing struct {
	To     Names          `json:"to,omitempty" jsonschema:"the agents (or characters) it is for, by name (one name alone is taken too); leave out to let the protocol choose; [\"*\"] for everyone" want:"a list of agent names"`
	CC     Names          `json:"cc,omitempty" jsonschema:"agents that get a copy, by name" want:"a list of agent names"`
	Type   string         `json:"type,omitempty" jsonschema:"the message type, as the protocol tool lists it; leave out for an informal message"`
	Signal string         `json:"signal,omitempty" jsonschema:"the signal, for protocols that route by it (the protocol tool lists each type's)"`
	Fields map[string]any `json:"fields,omitempty" jsonschema:"the protocol's fields of the type, by name (a dotted name, a.b, is the field b inside a)"`
	Body   string         `json:"body,omitempty" jsonschema:"the free text of the message"`
}

// Names are agents' names. A client may give one name alone, as a
// string: a model asked for a list often writes "to": "gm".
type Names []string

// UnmarshalJSON takes a list of names, or one name.
func (n *Names) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	var one string
	if json.Unmarshal(b, &one) == nil {
		*n = Names{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return &json.UnmarshalTypeError{Value: "value of another kind", Type: reflect.TypeFor[Names]()}
	}
	*n = list
	return nil
}

// Summary is a line of the inbox.
type Summary struct {
	ID      string `json:"id"`
	From    string `json:"from"`
	Type    string `json:"type,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Mailbox is what the server does for its agent.
type Mailbox interface {
	// Send checks and sends a message; a refusal is an error saying why.
	Send(ctx context.Context, m Outgoing) (id string, err error)
	// Inbox lists the messages waiting, oldest first.
	Inbox(ctx context.Context) ([]Summary, error)
	// Read returns a message's text, by id (a short id works).
	Read(ctx context.Context, id string) (string, error)
	// Reply answers a message (to its sender, in its thread) and marks it
	// handled.
	Reply(ctx context.Context, id string, m Outgoing) (string, error)
	// Done marks a message handled.
	Done(ctx context.Context, id string) error
	// Protocol describes the message types the agent may send.
	Protocol(ctx context.Context) (string, error)
	// Unrouted says, when nothing routes the workspace's messages (no
	// runner is running), what waits unrouted; else "". A wait that
	// timed out adds it.
	Unrouted(ctx context.Context) string
}

// Extra is a tool of the agent's own beside the mailbox's: the game
// master's campaign tools, say.
type Extra struct {
	Name        string
	Description string
	// Schema is the JSON schema of the tool's arguments.
	Schema json.RawMessage
	// Call runs the tool; an error is the tool's error, told to the
	// client as such.
	Call func(ctx context.Context, args json.RawMessage) (string, error)
}

// Options configure a server.
type Options struct {
	// Extra are tools of the agent's own.
	Extra []Extra
	// Agent is the agent the client acts as.
	Agent string
	// Version is parley's, told to the client.
	Version string
	// Poll is how often wait looks at the inbox; 0 means 100ms.
	Poll time.Duration
	// Stop, when closed, ends a wait in progress at once: the client's
	// input has ended (Stdio.Ended), or the server is stopping. Nil: a
	// wait runs its time.
	Stop <-chan struct{}
	// Progress is how often a wait sends a progress notification to a
	// client that gave a progressToken; 0 means 15 seconds.
	Progress time.Duration
	// BareWait is the longest a wait runs for a client that gave no
	// progressToken; 0 means 55 seconds. Clients of the TypeScript SDK
	// (the MCP Inspector) fail a call after 60 seconds unless a progress
	// notification resets their clock: a wait cut short, saying so, is
	// better than a call that fails.
	BareWait time.Duration
	// ExampleTo and ExampleType are an agent the agent may write to and a
	// message type it may send, from its workspace, which the send and
	// reply tools' descriptions give as examples; empty: none is given.
	ExampleTo, ExampleType string
	// Warnings are told to each client as its session starts: in the
	// server's instructions, and as log messages (level warning) once
	// the client sets a log level.
	Warnings []string
}

type idArgs struct {
	ID string `json:"id" jsonschema:"the message's id (its last six hex digits are enough)"`
}

type inboxArgs struct {
	Limit *int `json:"limit,omitempty" jsonschema:"list at most this many messages, oldest first (left out: 50)"`
}

// inboxDefault is how many messages inbox lists when no limit is given.
const inboxDefault = 50

type replyArgs struct {
	ID string `json:"id" jsonschema:"the id of the message answered"`
	Outgoing
}

type waitArgs struct {
	// Seconds is nil when left out: 0 is a wait of no time, refused.
	Seconds *int `json:"seconds,omitempty" jsonschema:"how long to wait, in seconds: 1 to 300 (others are refused); left out: 30"`
}

// The seconds a wait may be given, and its default.
const (
	waitMost    = 300
	waitDefault = 30
)

// New returns an MCP server whose tools act on box as opts.Agent.
//
// What a session has been shown (the messages wait returned, inbox
// listed, read read) is kept per session: wait returns first the oldest
// message in the inbox the session has not been shown, so that a message
// that came in while the client handled the one before is not missed.
func New(box Mailbox, opts Options) *mcp.Server {
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	if opts.Progress <= 0 {
		opts.Progress = 15 * time.Second
	}
	if opts.BareWait <= 0 {
		opts.BareWait = 55 * time.Second
	}
	seen := &sessions{shown: map[*mcp.ServerSession]map[string]bool{}, warned: map[*mcp.ServerSession]bool{}}
	sopts := &mcp.ServerOptions{}
	if len(opts.Warnings) > 0 {
		sopts.Instructions = "Warning: " + strings.Join(opts.Warnings, "\nWarning: ")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "parley", Title: "parley: the mailbox of " + opts.Agent, Version: opts.Version}, sopts)
	if len(opts.Warnings) > 0 {
		// The warnings are logged once the client has set a log level:
		// the SDK sends no log message before (and most clients set it
		// after initialized, if ever).
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "logging/setLevel" && err == nil {
					seen.warn(ctx, ss, opts.Warnings)
				}
				return res, err
			}
		})
	}
	text := func(v any) (*mcp.CallToolResult, any, error) {
		var out string
		switch t := v.(type) {
		case string:
			out = t
		default:
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return nil, nil, err
			}
			out = string(b)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
	}
	addTool(s, &mcp.Tool{Name: "send", InputSchema: withExamples[Outgoing](opts), Description: "Send a message as " + opts.Agent + ". It is checked as parley's router checks it (protocol, recipients, fields); a refusal is returned with its reason, and nothing is sent."},
		func(ctx context.Context, _ *mcp.CallToolRequest, m Outgoing) (*mcp.CallToolResult, any, error) {
			id, err := box.Send(ctx, m)
			if err != nil {
				return nil, nil, err
			}
			return text("sent " + id)
		})
	addTool(s, &mcp.Tool{Name: "inbox", Description: fmt.Sprintf("List the messages waiting for %s, oldest first: id, sender, type, first line (at most limit of them, %d when left out).", opts.Agent, inboxDefault)},
		func(ctx context.Context, req *mcp.CallToolRequest, a inboxArgs) (*mcp.CallToolResult, any, error) {
			limit := inboxDefault
			if a.Limit != nil {
				limit = *a.Limit
			}
			if limit < 1 {
				return nil, nil, fmt.Errorf("limit: %d lists nothing: give 1 or more (left out: %d)", limit, inboxDefault)
			}
			list, err := box.Inbox(ctx)
			if err != nil {
				return nil, nil, err
			}
			if len(list) == 0 {
				return text("no messages waiting")
			}
			more := 0
			if len(list) > limit {
				list, more = list[:limit], len(list)-limit
			}
			for _, m := range list {
				seen.show(req.Session, m.ID)
			}
			if more == 0 {
				return text(list)
			}
			res, _, err := text(list)
			if err != nil {
				return nil, nil, err
			}
			res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("and %d %s, newer: handle these first (reply or done), or give a larger limit", more, plural(more, "message more", "messages more"))})
			return res, nil, nil
		})
	addTool(s, &mcp.Tool{Name: "read", Description: "Read a message, header and text, by its id."},
		func(ctx context.Context, req *mcp.CallToolRequest, a idArgs) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(a.ID) == "" {
				return nil, nil, errNoID
			}
			t, err := box.Read(ctx, a.ID)
			if err != nil {
				return nil, nil, err
			}
			if list, err := box.Inbox(ctx); err == nil {
				for _, m := range list {
					if strings.HasSuffix(m.ID, a.ID) || strings.HasPrefix(m.ID, a.ID) { // a short id is an end or a start of the id
						seen.show(req.Session, m.ID)
					}
				}
			}
			return text(t)
		})
	addTool(s, &mcp.Tool{Name: "reply", InputSchema: withExamples[replyArgs](opts), Description: "Answer a message: to its sender (an answer of a type the protocol sends to everyone, or to set recipients, goes there too, its sender included when the protocol lets it receive the type), in its thread, with reply_to set; it is then marked handled. Checked as send is."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a replyArgs) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(a.ID) == "" {
				return nil, nil, errNoID
			}
			id, err := box.Reply(ctx, a.ID, a.Outgoing)
			if err != nil {
				return nil, nil, err
			}
			return text("sent " + id)
		})
	addTool(s, &mcp.Tool{Name: "done", Description: "Mark a message handled (it moves from the inbox to done/)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a idArgs) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(a.ID) == "" {
				return nil, nil, errNoID
			}
			if err := box.Done(ctx, a.ID); err != nil {
				return nil, nil, err
			}
			return text("done " + a.ID)
		})
	addTool(s, &mcp.Tool{Name: "wait", Description: fmt.Sprintf("Return the oldest message in the inbox this session has not been shown yet (by wait, inbox or read), at once; if there is none, wait until one arrives, or the time runs out (seconds: 1 to %d, %d when left out), and say none came. A client that gives a progressToken is sent a progress notification every %s while it waits; for one that gives none, a wait is cut to %s (many clients give up on a call after 60 seconds).", waitMost, waitDefault, opts.Progress, opts.BareWait)},
		func(ctx context.Context, req *mcp.CallToolRequest, a waitArgs) (*mcp.CallToolResult, any, error) {
			secs := waitDefault
			if a.Seconds != nil {
				secs = *a.Seconds
			}
			// Refused, not taken for another wait: 0 waited the default 30
			// seconds, and 400 waited 300, saying nothing.
			switch {
			case secs < 1:
				return nil, nil, fmt.Errorf("seconds: %d is no time to wait: give 1 to %d (left out: %d)", secs, waitMost, waitDefault)
			case secs > waitMost:
				return nil, nil, fmt.Errorf("seconds: %d is longer than a wait may be: give 1 to %d (left out: %d)", secs, waitMost, waitDefault)
			}
			start := time.Now()
			// progress is nil, and never ready, for a client that gave no
			// progressToken: its wait is cut to opts.BareWait.
			var progress <-chan time.Time
			token := req.Params.GetProgressToken()
			limit, cut := time.Duration(secs)*time.Second, false
			if token != nil {
				pt := time.NewTicker(opts.Progress)
				defer pt.Stop()
				progress = pt.C
			} else if limit > opts.BareWait {
				limit, cut = opts.BareWait, true
			}
			wctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			tick := time.NewTicker(opts.Poll)
			defer tick.Stop()
			for {
				list, err := box.Inbox(wctx)
				if err != nil {
					return nil, nil, err
				}
				for _, m := range list {
					if seen.isShown(req.Session, m.ID) {
						continue
					}
					t, err := box.Read(wctx, m.ID)
					if err != nil {
						return nil, nil, err
					}
					seen.show(req.Session, m.ID)
					return text(t)
				}
				select {
				case <-opts.Stop:
					return text("no message came: the session is ending")
				case <-wctx.Done():
					msg := fmt.Sprintf("no message came in %d %s", secs, plural(secs, "second", "seconds"))
					if cut {
						n := int(limit / time.Second)
						unit := plural(n, "second", "seconds")
						msg = fmt.Sprintf("no message came in %d %s (of the %d asked: a wait is cut to %d %s for a client that gives no progressToken, as many give up on a call after 60; call wait again)", n, unit, secs, n, unit)
					}
					if n := len(list); n > 0 {
						msg += fmt.Sprintf("; the inbox holds %d %s shown before, not yet handled (reply or done marks one handled)", n, plural(n, "message", "messages"))
					}
					if note := box.Unrouted(ctx); note != "" {
						msg += "\n" + note
					}
					return text(msg)
				case <-progress:
					waited := int(time.Since(start).Round(time.Second) / time.Second)
					// A notification that cannot be sent is the
					// connection's failure, which the answer meets.
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(waited), Total: float64(secs),
						Message: fmt.Sprintf("waiting for a message: %d of %d seconds", waited, secs)})
				case <-tick.C:
				}
			}
		})
	addTool(s, &mcp.Tool{Name: "protocol", Description: "The message types " + opts.Agent + " may send, with where each goes and its fields (required first, allowed values)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			t, err := box.Protocol(ctx)
			if err != nil {
				return nil, nil, err
			}
			return text(t)
		})
	for _, x := range opts.Extra {
		s.AddTool(&mcp.Tool{Name: x.Name, Description: x.Description, InputSchema: x.Schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			out, err := x.Call(ctx, args)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}
			if err != nil {
				res.Content = []mcp.Content{&mcp.TextContent{Text: err.Error()}}
				res.IsError = true
			}
			return res, nil
		})
	}
	return s
}

// errNoID is the error for a call that gives no message id.
var errNoID = errors.New("id: missing: give the message's id (its last six hex digits are enough)")

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sessions is what each session was shown and told.
type sessions struct {
	mu     sync.Mutex
	shown  map[*mcp.ServerSession]map[string]bool // ids of inbox messages shown
	warned map[*mcp.ServerSession]bool            // sent the server's warnings
}

func (s *sessions) show(ss *mcp.ServerSession, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown[ss] == nil {
		s.shown[ss] = map[string]bool{}
	}
	s.shown[ss][id] = true
}

func (s *sessions) isShown(ss *mcp.ServerSession, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown[ss][id]
}

// warn sends the warnings to ss as log messages, once: the session has
// just set a log level (without one the SDK sends no log message).
func (s *sessions) warn(ctx context.Context, ss *mcp.ServerSession, warnings []string) {
	s.mu.Lock()
	send := !s.warned[ss]
	s.warned[ss] = true
	s.mu.Unlock()
	if !send {
		return
	}
	for _, w := range warnings {
		// A warning that cannot be sent is the connection's failure,
		// which the next answer meets.
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "parley", Data: w})
	}
}

// schemaOf returns the JSON schema of In, one of this file's types,
// whose schema is always made; were it not, any object goes, and
// toolargs.Decode still checks.
func schemaOf[In any]() any {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return schema
}

// withExamples returns the schema of In, a message sent, with the
// examples of opts (ExampleTo, ExampleType) in the descriptions of to
// and type: the workspace's own names, not another protocol's.
func withExamples[In any](opts Options) any {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return schemaOf[In]()
	}
	if p := schema.Properties["to"]; p != nil && opts.ExampleTo != "" {
		p.Description += fmt.Sprintf(" (e.g. [%q])", opts.ExampleTo)
	}
	if p := schema.Properties["type"]; p != nil && opts.ExampleType != "" {
		p.Description += fmt.Sprintf(" (e.g. %s)", opts.ExampleType)
	}
	return schema
}

// addTool adds a tool whose arguments are In, described to the client by
// In's JSON schema and read by toolargs.Decode, whose errors say the
// argument and what it wants (the SDK's own AddTool answers with its
// schema validator's words, or Go's). An error of h is the tool's error.
func addTool[In any](s *mcp.Server, t *mcp.Tool, h func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error)) {
	if t.InputSchema == nil {
		t.InputSchema = schemaOf[In]()
	}
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		err := toolargs.Decode(req.Params.Arguments, &in)
		var res *mcp.CallToolResult
		if err == nil {
			res, _, err = h(ctx, req, in)
		}
		if err != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}, IsError: true}, nil
		}
		return res, nil
	})
}
