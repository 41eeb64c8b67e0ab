// Package llm is the openai driver: an agent that is a model behind an
// OpenAI-compatible chat-completions endpoint (OpenAI, or a local
// llama.cpp server, Ollama, vLLM). For each message delivered to the
// agent it sends the model its prompt (the role's prompt file, the
// protocol it speaks, the files its role may see), its conversation so
// far (a file in its mailbox, trimmed to a token budget) and the message;
// it runs the tools the model calls (the game master's campaign tools,
// given by the caller) for up to max_tool_rounds rounds; and it checks
// the model's answer with the workspace's Check, sending a refusal back
// to the model to repair, up to max_repairs times. Every model call and
// tool call is journaled; tokens are counted per agent and per session
// against the budgets of parley.yaml.
//
// The package knows nothing of the runner nor of campaigns: cmd/parley
// makes an Agent for each agent with driver: openai and hands it to the
// runner as a handler, with the campaign tools as Tools.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Tool is a tool the model may call: its name, what it does, its
// arguments as a JSON schema, and the Go function that runs it.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Call runs the tool with the arguments as the model wrote them and
	// returns its result, as JSON text; an error is told to the model as
	// the tool's result ({"success": false, "message": "Error: ..."}).
	Call func(ctx context.Context, args json.RawMessage) (string, error)
	// ReadOnly says the tool changes nothing (a roll, reading a sheet).
	// Once a tool that changes files has run for a message, a failure of
	// the endpoint is not tried again: the model would be asked anew, and
	// could make the same change twice.
	ReadOnly bool
	// Journaled, when set, returns what the journal keeps of a result
	// (parley log's tool line): what the call did, when the result is
	// long (a whole character sheet). Unset, the result is kept whole.
	// The model is told the result whole either way.
	Journaled func(result string) string
}

// Options make an Agent.
type Options struct {
	// Agent is the agent's name; its entry in Workspace.Config has the
	// endpoint (Model) and the budget.
	Agent     string
	Workspace *workspace.Workspace
	// Protocol is what the agent is told of the protocol it speaks: the
	// message types, their fields, who sends them to whom.
	Protocol string
	// Files are the files the agent's role may see, read at each call
	// (a missing one is left out): a player's sheet and journal, the
	// party's knowledge, the world primer.
	Files []string
	// Tools are the tools the model may call; none for most agents.
	Tools []Tool
	// Session counts the tokens of every agent of a run against the
	// session's budget; nil counts this agent's alone.
	Session *Session
	// HTTPClient sends the requests, as a copy whose Timeout is
	// openai.timeout (one attempt); nil is a plain http.Client.
	HTTPClient *http.Client
	// Getenv reads the key's environment variable; nil is os.Getenv.
	Getenv func(string) string
	// Logger receives what the agent does; nil discards it.
	Logger *slog.Logger
	// Now returns the current time; nil is time.Now.
	Now func() time.Time
	// Endpoints is what the run knows of its endpoints, shared by its
	// agents: an endpoint down or rate-limiting holds the messages of
	// every agent that calls it (see OutageError); nil is the agent's
	// own.
	Endpoints *Endpoints
}

// Agent is an openai agent. Handle may be called from any goroutine; the
// runner calls it for one message at a time.
type Agent struct {
	opts   Options
	agent  workspace.Agent
	model  workspace.Model
	client openai.Client
	tools  []openai.ChatCompletionToolUnionParam
	// toolsJSON is tools as the request carries them, encoded once.
	toolsJSON json.RawMessage
	byName    map[string]Tool
	price     *workspace.Price
	key       string // the key sent (openai.key_env's value); "" for none
	conv      string // the conversation file
	changed   string // the record of a change a tool made (changeRecord)

	mu       sync.Mutex // guards notified and note
	notified map[string]bool
	note     string // what parley status says of the agent (Note)
	memory   memory
	encoded  encoded
}

// encoded keeps the JSON of the conversation's turns from one call to the
// next: each call sends them all again, and encoding every turn anew was
// a fifth of the driver's time on a full memory.
type encoded struct {
	mu   sync.Mutex
	json map[Turn]json.RawMessage
}

// turns returns the turns as messages for the endpoint, keeping the
// encoding of these turns only.
func (e *encoded) turns(turns []Turn) []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := make(map[Turn]json.RawMessage, len(turns))
	out := make([]json.RawMessage, len(turns))
	for i, t := range turns {
		j, ok := e.json[t]
		if !ok {
			j = text(t.Role, t.Text)
		}
		next[t], out[i] = j, j
	}
	e.json = next
	return out
}

// Errors callers branch on.
var (
	// ErrBudget: a budget of parley.yaml is used up; the agent calls its
	// model no more in this session (see BudgetError).
	ErrBudget = errors.New("budget used up")
	// ErrToolRounds: the model was still calling tools after
	// max_tool_rounds rounds.
	ErrToolRounds = errors.New("still calling tools after max_tool_rounds rounds")
	// ErrRefused: the model's answer was refused, and its repairs too.
	ErrRefused = errors.New("answer refused")
)

// GaveUpRefused reports whether reason, the reason of a message given up
// as written beside it in dead/ (the error's text, the type lost),
// says its model's answers were refused past max_repairs (ErrRefused),
// as Handle words it: "AGENT: answer refused after N repairs: ...".
func GaveUpRefused(reason string) bool {
	return strings.Contains(reason, ": "+ErrRefused.Error()+" after ")
}

// New makes the agent named in opts.
func New(opts Options) (*Agent, error) {
	a, ok := opts.Workspace.Agent(opts.Agent)
	if !ok {
		return nil, &workspace.UnknownAgentError{Name: opts.Agent, Agents: opts.Workspace.AgentNames()}
	}
	if a.Model == nil {
		return nil, fmt.Errorf("openai: missing (the endpoint of an openai agent)")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Session == nil {
		opts.Session = NewSession("")
	}
	if opts.Endpoints == nil {
		opts.Endpoints = NewEndpoints()
	}
	m := *a.Model
	ag := &Agent{opts: opts, agent: a, model: m, byName: map[string]Tool{}, notified: map[string]bool{},
		conv: conversationPath(opts.Workspace, a.Name), changed: changedPath(opts.Workspace, a.Name)}
	if p, ok := opts.Workspace.Config.PriceOf(m.Model); ok {
		ag.price = &p
	}
	// openai.timeout bounds each attempt, as the http.Client's Timeout:
	// the client's retries take a request that timed out as one that
	// had no answer, and try it again. A deadline of the request's
	// context (option.WithRequestTimeout) is not tried again: the
	// client returns as soon as its context is done.
	hc := http.Client{}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	hc.Timeout = m.Timeout
	copts := []option.RequestOption{
		option.WithMaxRetries(m.MaxRetries),
		option.WithHTTPClient(&hc),
		option.WithAPIKey(""),
	}
	if m.BaseURL != "" {
		copts = append(copts, option.WithBaseURL(m.BaseURL))
	}
	if m.KeyEnv != "" {
		key := opts.Getenv(m.KeyEnv)
		if key == "" {
			return nil, fmt.Errorf("openai.key_env: the environment variable %s holds no key", m.KeyEnv)
		}
		copts = append(copts, option.WithAPIKey(key))
		ag.key = key
	}
	ag.client = openai.NewClient(copts...)
	for _, t := range opts.Tools {
		var params shared.FunctionParameters
		if err := json.Unmarshal(t.Parameters, &params); err != nil {
			return nil, fmt.Errorf("tool %s: its schema: %w", t.Name, err)
		}
		ag.tools = append(ag.tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: params,
		}))
		ag.byName[t.Name] = t
	}
	if len(ag.tools) > 0 {
		var err error
		if ag.toolsJSON, err = json.Marshal(ag.tools); err != nil {
			return nil, fmt.Errorf("the tools' schemas: %w", err)
		}
	}
	return ag, nil
}

// Endpoint returns the base URL the agent calls.
func (a *Agent) Endpoint() string {
	if a.model.BaseURL == "" {
		return "https://api.openai.com/v1"
	}
	return a.model.BaseURL
}

// EndpointError is a model call that failed: the endpoint could not be
// reached, timed out, or answered with an error status (after the
// client's own retries of a 429, a 5xx, a timeout or a lost connection,
// which wait as Retry-After says).
type EndpointError struct {
	URL    string
	Status int // the HTTP status; 0 when there was no answer
	Err    error
	// Timeout is openai.timeout when the endpoint did not answer within
	// it (Err is then context.DeadlineExceeded); 0 otherwise.
	Timeout time.Duration
	// Unreadable: what answered is not a chat completion (a gateway's
	// own page, a body cut short): Err says what it was.
	Unreadable bool
	// AgentTimeout is the agent's own timeout: (its time for a message,
	// in parley.yaml) when that cut the call short (Err is then
	// context.DeadlineExceeded); 0 otherwise.
	AgentTimeout time.Duration
	// CutShort: the call's context ended before the endpoint answered
	// (the agent's timeout:, or a caller's deadline).
	CutShort bool
	// RetryAfter is how long the endpoint asked to be left alone
	// (Retry-After) when that is longer than parley waits (MaxRetryAfter,
	// or openai.outage_limit when longer: see Waits): the call is then
	// given up, not tried again.
	RetryAfter time.Duration
	// RetryAt is when, by the clock, the endpoint asked to be called
	// again: the time of the answer plus RetryAfter.
	RetryAt time.Time
	// KeyEnv is the model's openai.key_env: the variable whose key was
	// sent; "" when no key was sent.
	KeyEnv string
	// Sent: the last attempt's request was written to the endpoint (a
	// connection was made).
	Sent bool
	// Waits is openai.outage_limit, set with RetryAfter: parley waits
	// for an endpoint that asks to be left alone up to the longer of it
	// and MaxRetryAfter.
	Waits time.Duration
}

// MaxRetryAfter is the longest Retry-After the client waits for before
// trying a request again (the openai client's own limit) when the agent
// holds no message for its endpoint (openai.outage_limit: 0s; else the
// message is held, see OutageError). An endpoint that asks for longer
// than that and openai.outage_limit is not tried again: the message is
// given up, saying what it asked for.
const MaxRetryAfter = 2 * time.Minute

// clientWaits is the longest Retry-After the client waits for in a call
// when the agent holds its messages for an endpoint that cannot be used
// (openai.outage_limit): a longer one ends the call, and the message is
// held, which parley status says.
const clientWaits = 5 * time.Second

func (e *EndpointError) Error() string {
	if e.CutShort && e.AgentTimeout > 0 {
		s := fmt.Sprintf("timeout: %s in %s (the agent's time for a message) cut the call to model endpoint %s short", e.AgentTimeout, workspace.ConfigFile, e.URL)
		if e.Timeout > e.AgentTimeout {
			s += fmt.Sprintf(" (its openai.timeout, %s, is longer)", e.Timeout)
		}
		return s
	}
	if e.CutShort {
		return fmt.Sprintf("the call to model endpoint %s was cut short: %v", e.URL, e.Err)
	}
	if e.Status == 0 && e.Timeout > 0 {
		return fmt.Sprintf("model endpoint %s did not answer within %s (openai.timeout)", e.URL, e.Timeout)
	}
	if e.Status == 0 {
		return fmt.Sprintf("model endpoint %s unreachable: %v", e.URL, e.Err)
	}
	if e.StopAgent() && e.KeyEnv == "" {
		return fmt.Sprintf("model endpoint %s answered %d: %v (no key was sent: the model has no openai.key_env in %s; name the variable that holds the key there, then parley run again)", e.URL, e.Status, e.Err, workspace.ConfigFile)
	}
	if e.StopAgent() {
		return fmt.Sprintf("model endpoint %s answered %d: %v (the endpoint refuses the key: put the right one in %s, the variable openai.key_env names in %s, then parley run again)", e.URL, e.Status, e.Err, e.KeyEnv, workspace.ConfigFile)
	}
	s := fmt.Sprintf("model endpoint %s answered %d: %v", e.URL, e.Status, e.Err)
	if e.RetryAfter > 0 {
		waits := workspace.ShortDuration(max(e.Waits, MaxRetryAfter))
		if e.Waits > MaxRetryAfter {
			waits += ": openai.outage_limit"
		}
		s += fmt.Sprintf("; it asked (Retry-After) not to be called again %s, longer than parley waits (%s): not tried again (parley retry, once it is ready)", notBefore(e.RetryAt, e.RetryAfter), waits)
	}
	return s
}

// notBefore says when an endpoint asked to be called again, as a person
// reads it: the time by the clock, in UTC, rounded up to the minute (with
// its date when that is not the day it asked on), and how long from
// then, rounded: "before 23:59 UTC (in 15h30m)". Without the time, the
// wait alone: "for 15h30m".
func notBefore(at time.Time, in time.Duration) string {
	wait := roughly(in)
	if at.IsZero() {
		return "for " + wait
	}
	asked := at.Add(-in).UTC()
	at = at.UTC()
	if t := at.Truncate(time.Minute); !t.Equal(at) {
		at = t.Add(time.Minute)
	}
	clock := at.Format("15:04")
	if y, m, d := at.Date(); y != asked.Year() || m != asked.Month() || d != asked.Day() {
		clock = at.Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("before %s UTC (in %s)", clock, wait)
}

// roughly says a wait as a person reads it: to the second under an
// hour ("5m", "4m30s"), to the minute under two days ("15h30m"), else
// in days ("3 days").
func roughly(d time.Duration) string {
	switch {
	case d < time.Hour:
		return workspace.ShortDuration(d.Round(time.Second))
	case d < 48*time.Hour:
		return workspace.ShortDuration(d.Round(time.Minute))
	}
	return fmt.Sprintf("%d days", d.Round(24*time.Hour)/(24*time.Hour))
}

func (e *EndpointError) Unwrap() error { return e.Err }

// StopAgent reports whether the endpoint refused the key (401, 403): it
// would refuse every message alike, so the agent stops for the rest of
// the run, as for a budget used up, its messages waiting for the next,
// rather than each going to dead/.
func (e *EndpointError) StopAgent() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// Temporary reports whether trying again later may help: no answer, a
// timeout, 408, 429, a server error, or an answer that is not a chat
// completion (a gateway's page in the model's stead). A 4xx (a wrong
// key, an unknown model) comes again.
func (e *EndpointError) Temporary() bool {
	if e.RetryAfter > 0 {
		return false // not before it is ready, which is longer than parley waits
	}
	return e.Status == 0 || e.Unreadable || e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// TranscriptError is a message the agent gave up on, with the transcript
// of its exchange with the model: what goes to dead/ beside the reason.
type TranscriptError struct {
	Err        error
	Transcript string
}

func (e *TranscriptError) Error() string { return e.Err.Error() }
func (e *TranscriptError) Unwrap() error { return e.Err }

// Temporary reports false: a message given up with its transcript is not
// tried again by itself, whatever error it wraps (a person may, with
// parley retry).
func (e *TranscriptError) Temporary() bool { return false }

// Detail returns the transcript.
func (e *TranscriptError) Detail() string { return "transcript:\n\n" + e.Transcript }

// KeptPrefix starts the turn of a message kept as context: the model
// reads it, and answers only the message after it.
const KeptPrefix = "(Kept as context, not to be answered: a message your accepts: leave out.)\n\n"

// Handle answers a message: the model's answer, checked, as a message to
// send. It returns an error when the endpoint fails (an *EndpointError),
// a budget is used up (ErrBudget), the model called tools past
// max_tool_rounds (ErrToolRounds) or its answer was refused past
// max_repairs (ErrRefused); the last two as a *TranscriptError. The
// conversation file is written once an answer is accepted.
//
// kept are messages the agent did not accept (accepts: in parley.yaml)
// that arrived since its last call, oldest first: each goes into the
// conversation, before the message to answer, as a turn that says it is
// context, not to be answered.
func (a *Agent) Handle(ctx context.Context, in *mailbox.Message, kept ...*mailbox.Message) ([]*mailbox.Message, error) {
	inID, _ := in.Header().Get("id")
	if rec, ok := a.readChange(); ok {
		// A tool changed the campaign for a message whose handling then
		// did not end with an answer sent: that message is given up, not
		// asked anew; a record of another is done with.
		a.dropChange()
		if rec.ID == inID {
			return nil, &TranscriptError{Err: &ChangedError{Agent: a.agent.Name, Tool: rec.Tool}, Transcript: rec.Transcript}
		}
	}
	if answer := approveShutdown(in); answer != nil {
		return []*mailbox.Message{answer}, nil
	}
	conv, err := a.memory.load(a.conv, a.agent.Name)
	if err != nil {
		return nil, err
	}
	received := string(in.Bytes())
	system, err := a.system()
	if err != nil {
		return nil, err
	}
	past := *conv
	past.Turns = append([]Turn(nil), conv.Turns...)
	for _, k := range kept {
		past.Turns = append(past.Turns, Turn{Role: RoleUser, Text: KeptPrefix + string(k.Bytes())})
	}
	past.Turns = append(past.Turns, Turn{Role: RoleUser, Text: received})
	past.Trim(a.model.MemoryTokens)
	msgs := []json.RawMessage{text("system", system)}
	if s := past.Summary(); s != "" {
		msgs = append(msgs, text("system", "Earlier turns of this conversation were "+s+"."))
	}
	msgs = append(msgs, a.encoded.turns(past.Turns)...)
	tr := &transcript{}
	tr.add("system", system)
	for _, t := range past.Turns {
		tr.add(t.Role, t.Text)
	}
	rounds, repairs := 0, 0
	changed := ""              // the first tool that changed files, if any ran
	var pending sync.WaitGroup // an answer's journal entry being written
	defer pending.Wait()
	for {
		if err := a.withinBudget(); err != nil {
			if changed != "" {
				// The agent stops, the message waiting in cur/; the
				// record of the change has the next run give it up.
				return nil, fmt.Errorf("%w; %s already changed the campaign for this message: the next run gives it up rather than ask the model anew", err, changed)
			}
			return nil, err
		}
		pending.Wait()
		resp, called, err := a.call(ctx, inID, msgs)
		if oe := (*OutageError)(nil); changed != "" && errors.As(err, &oe) {
			err = oe.Err // not held: the model would be asked anew
		}
		if err != nil && changed != "" && !errors.Is(ctx.Err(), context.Canceled) {
			// A failed call, or the agent's own timeout: given up now.
			// A runner stopping leaves the message in cur/, and the
			// record of the change has the next run give it up.
			return nil, a.giveUp(&ChangedError{Agent: a.agent.Name, Tool: changed, Err: err}, tr)
		}
		if err != nil {
			return nil, err
		}
		choice := resp.Choices[0].Message
		if len(choice.ToolCalls) > 0 {
			tr.add("assistant", "(tool calls)")
			if rounds == a.model.MaxToolRounds {
				err := fmt.Errorf("%s: %w (%d)", a.agent.Name, ErrToolRounds, a.model.MaxToolRounds)
				a.tell(ToolRoundsNotice, inID, fmt.Sprintf("%s stopped answering %s: its model was still calling tools after %d rounds (max_tool_rounds in %s). The message is in %s/%s/dead/, with the transcript.",
					a.agent.Name, dash(inID), a.model.MaxToolRounds, workspace.ConfigFile, workspace.MailboxesDir, a.agent.Name))
				return nil, a.giveUp(err, tr)
			}
			rounds++
			asked, err := json.Marshal(choice.ToParam())
			if err != nil {
				return nil, fmt.Errorf("%s: the model's tool calls: %w", a.agent.Name, err)
			}
			msgs = append(msgs, asked)
			for _, call := range choice.ToolCalls {
				args := a.masked(call.Function.Arguments)
				if t, known := a.byName[call.Function.Name]; known && !t.ReadOnly && changed == "" {
					// Written down before the change is made: an
					// attempt cut short after it is not asked anew.
					tr.add("tool "+call.Function.Name, args+"\n→ (running when this was written down)")
					err := a.writeChange(inID, call.Function.Name, tr)
					tr.turns = tr.turns[:len(tr.turns)-1]
					if err != nil {
						return nil, fmt.Errorf("writing down that %s changes the campaign: %w", call.Function.Name, err)
					}
					changed = call.Function.Name
				}
				result, _ := a.runTool(ctx, inID, call.Function.Name, args)
				tr.add("tool "+call.Function.Name, args+"\n→ "+result)
				msgs = append(msgs, toolResult(call.ID, result))
			}
			continue
		}
		said := a.masked(choice.Content)
		shown := quoted(said, a.opts.Workspace.Config.Router.MaxMessageSize) // to repair, in dead/
		tr.add("assistant", shown)
		var out []*mailbox.Message
		var refused refusal
		again := "Answer again with the message corrected."
		if resp.Choices[0].FinishReason == "length" {
			// Cut off: what it meant to say is not all there, and a
			// message cut short is not sent as if it were whole.
			refused, again = refusalOf(a.cutOff()), "Answer again, shorter."
		} else {
			out, refused = a.answers(in, said)
		}
		back := called.Note // the endpoint answers again, after an outage
		called.Note = "answered"
		if refused.reason != "" {
			called.Note = "answer refused: " + refused.reason
		}
		if back != "" {
			called.Note += "; " + back
		}
		// Written while the conversation is saved: the two fsyncs
		// overlap. Handle waits for it before anything else is
		// journaled, and before it returns.
		pending.Go(func() { a.journal(called) })
		if refused.reason == "" {
			// As the file keeps them: each text ends with a newline.
			for _, k := range kept {
				conv.Turns = append(conv.Turns, Turn{Role: RoleUser, Text: endLine(KeptPrefix + string(k.Bytes()))})
			}
			conv.Turns = append(conv.Turns, Turn{Role: RoleUser, Text: endLine(received)}, Turn{Role: RoleAssistant, Text: endLine(said)})
			conv.Trim(a.model.MemoryTokens)
			if err := a.memory.save(a.conv, conv); err != nil {
				return nil, fmt.Errorf("writing the conversation: %w", err)
			}
			return out, nil
		}
		if repairs == a.model.MaxRepairs {
			err := fmt.Errorf("%s: %w after %d %s: %s", a.agent.Name, ErrRefused, repairs, plural(repairs, "repair", "repairs"), refused.reason)
			return nil, a.giveUp(err, tr)
		}
		repairs++
		feedback := "parley refused your answer: " + refused.told + "\n" + again
		tr.add("user", feedback)
		msgs = append(msgs, text(RoleAssistant, shown), text(RoleUser, feedback))
	}
}

// giveUp returns err with the transcript, for the message to go to dead/;
// the record of a change made for it goes: parley retry asks anew.
func (a *Agent) giveUp(err error, tr *transcript) error {
	a.dropChange()
	return &TranscriptError{Err: err, Transcript: tr.String()}
}

// text is a message of a role with a text, as the endpoint reads it.
//
// The request is encoded by parley with encoding/json and handed to the
// client as it is (option.WithRequestBody, the client's own way to send a
// body it did not encode): the client's reflective encoder validates and
// compacts each message's JSON again at each level of nesting, which for
// a conversation of 8000 tokens cost more than a millisecond a call.
// The client still sends it, retries it (the body is replayable), reads
// Retry-After and decodes the answer.
func text(role, text string) json.RawMessage {
	b, _ := json.Marshal(struct { // a string always encodes
		Role    string `json:"role"`
		Content string `json:"content"`
	}{role, text})
	return b
}

// toolResult is a tool's result for the model.
func toolResult(id, result string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}{"tool", id, result})
	return b
}

// request is the body of a chat-completions request.
func (a *Agent) request(msgs []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":`)
	m, _ := json.Marshal(a.model.Model)
	b.Write(m)
	b.WriteString(`,"messages":[`)
	for i, msg := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(msg)
	}
	b.WriteByte(']')
	if len(a.tools) > 0 {
		b.WriteString(`,"tools":`)
		b.Write(a.toolsJSON)
	}
	if t := a.model.Temperature; t != nil {
		fmt.Fprintf(&b, `,"temperature":%s`, strconv.FormatFloat(*t, 'g', -1, 64))
	}
	if a.model.MaxTokens > 0 {
		fmt.Fprintf(&b, `,"max_tokens":%d`, a.model.MaxTokens)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// call makes one model call, journaled with its usage; but for an answer
// (no tool calls) it returns the journal entry for the caller to note
// whether the answer was accepted and write.
func (a *Agent) call(ctx context.Context, inID string, msgs []json.RawMessage) (*openai.ChatCompletion, workspace.Entry, error) {
	entry := workspace.Entry{Outcome: workspace.ModelCalled, Agent: a.agent.Name, ID: inID, Model: a.model.Model, Session: a.opts.Session.ID}
	held, probe := a.opts.Endpoints.held(a.endpointKey(), a.opts.Now(), a.model.OutageLimit, a.longestCall())
	if held != nil {
		return nil, entry, held // not called: it asked to be left alone, or is down, or another agent's call probes it
	}
	defer a.opts.Endpoints.probed(a.endpointKey(), probe)
	got := answered{holds: a.model.OutageLimit > 0}
	resp, err := a.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", a.request(msgs)), option.WithMiddleware(got.middleware))
	if got.requests > 1 {
		entry.Attempts = got.requests // the client tried it again
	}
	if err == nil && len(resp.Choices) == 0 {
		// No answer, but what the endpoint says it used counts (for
		// usage and the budget): it may bill it.
		if resp.JSON.Usage.Valid() {
			entry.TokensIn, entry.TokensOut = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
			u := workspace.Usage{Calls: 1, Failed: 1, TokensIn: entry.TokensIn, TokensOut: entry.TokensOut}
			if a.price != nil {
				u.Cost = a.price.Cost(u.TokensIn, u.TokensOut)
			}
			a.opts.Session.add(a.agent.Name, u)
		}
		err = &EndpointError{URL: a.Endpoint(), Status: http.StatusOK, Err: errors.New("an answer with no choices")}
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			// Shutting down. A call in flight is journaled all the
			// same: the endpoint may have got it, and counted it.
			if got.sent != nil && got.sent.Load() {
				entry.Interrupted, entry.Note = true, InterruptedNote
				a.opts.Session.add(a.agent.Name, workspace.Usage{Calls: 1, Failed: 1, Interrupted: 1})
				a.journal(entry)
			}
			return nil, entry, ctx.Err()
		}
		var apiErr *openai.Error
		if ctx.Err() != nil {
			// The agent's own timeout: (the runner's deadline for the
			// message) ran out while the endpoint had not answered: a
			// failed call, said as such.
			err = &EndpointError{URL: a.Endpoint(), Err: ctx.Err(), AgentTimeout: a.agent.Timeout, Timeout: a.model.Timeout, CutShort: true}
		} else if errors.As(err, &apiErr) {
			ee := &EndpointError{URL: a.Endpoint(), Status: apiErr.StatusCode, Err: errors.New(firstLine(apiErr.Message, http.StatusText(apiErr.StatusCode))), KeyEnv: a.model.KeyEnv, Sent: true}
			err = ee
		} else if ee := (*EndpointError)(nil); !errors.As(err, &ee) {
			ee = &EndpointError{URL: a.Endpoint(), Err: err, Sent: got.wrote != nil && got.wrote.Load()}
			if errors.Is(err, context.DeadlineExceeded) {
				ee.Timeout = a.model.Timeout // ctx is alive: the last attempt's own deadline
			} else if got.status != 0 {
				// Reached: what answered was not a chat completion.
				ee.Status, ee.Err, ee.Unreadable = got.status, got.unreadable(err), true
			}
			err = ee
		}
		if ee := (*EndpointError)(nil); errors.As(err, &ee) {
			// What the endpoint said (its error's message, the start
			// of a body that is no chat completion) may repeat the key.
			ee.Err = a.maskedErr(ee.Err)
			if ee.StopAgent() {
				a.keyRefused(ee)
			}
		}
		var quiet bool
		err, quiet = a.unavailable(err, got.retryAfter, &entry)
		entry.Reason = err.Error()
		if !quiet {
			a.journal(entry)
		}
		return nil, entry, err
	}
	entry.Note, entry.FailedCalls = a.answeredAgain()
	if !resp.JSON.Usage.Valid() {
		a.noUsage()
	}
	u := workspace.Usage{Calls: 1, TokensIn: resp.Usage.PromptTokens, TokensOut: resp.Usage.CompletionTokens}
	if a.price != nil {
		u.Cost = a.price.Cost(u.TokensIn, u.TokensOut)
	}
	a.opts.Session.add(a.agent.Name, u)
	entry.TokensIn, entry.TokensOut = u.TokensIn, u.TokensOut
	if n := len(resp.Choices[0].Message.ToolCalls); n > 0 {
		entry.Note = strings.TrimSuffix(fmt.Sprintf("%d tool %s; %s", n, plural(n, "call", "calls"), entry.Note), "; ")
		a.journal(entry) // before the tool calls' entries
		return resp, entry, nil
	}
	entry.Time = a.opts.Now().UTC().Format(mailbox.TimeFormat)
	return resp, entry, nil
}

// ShutdownApprovedReason is the reason of the shutdown_response an
// openai agent answers a shutdown_request with.
const ShutdownApprovedReason = "approved by parley: an openai agent stops when asked, between two messages (its model is not asked)"

// approveShutdown returns the answer to in when it is a shutdown_request:
// approved, without a call to the model. `parley stop` means stop: a
// model asked would cost a call (none could be made while its endpoint
// is down), and might answer anything but a shutdown_response; an openai
// agent has no work in hand between two messages. Nil for any other
// message.
func approveShutdown(in *mailbox.Message) *mailbox.Message {
	if typ, _ := in.Header().Get("type"); typ != workspace.ShutdownRequest {
		return nil
	}
	m := mailbox.New([]byte("Stopping, as asked.\n"))
	if from, _ := in.Header().Get("from"); from != "" {
		m.Set("to", from)
	}
	m.Set("type", workspace.ShutdownResponse)
	if rid, ok := in.Header().Get("request_id"); ok {
		m.Set("request_id", rid)
	} else if rid, ok := in.Payload().Get("request_id"); ok {
		m.Set("request_id", rid)
	}
	m.Set("approve", "true")
	m.Set("reason", ShutdownApprovedReason)
	return m
}

// InterruptedNote is the note of a model call cut short by the runner
// stopping (workspace.Entry.Interrupted).
const InterruptedNote = "interrupted: parley run stopped while the call was in flight (the endpoint may have answered it and counted its tokens, unknown here); the next run takes the message up again"

// answered keeps what the endpoint answered to the last attempt of a
// request: its status, its content type and the start of its body, to
// say what answered when the answer is not a chat completion; and
// whether a request went out at all.
type answered struct {
	sent     *atomic.Bool // an attempt's request was written to the endpoint
	wrote    *atomic.Bool // the last attempt's request was
	requests int          // HTTP requests made: attempts
	// holds: a long Retry-After is waited out by the runner, the
	// message held (see OutageError), not by the client in the call.
	holds      bool
	status     int
	ctype      string
	retryAfter string // its Retry-After header
	head       []byte
	readErr    error
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs {
			return 0, false
		}
		if secs > float64(1<<62)/float64(time.Second) {
			return 1 << 62, true // for ever, as good as
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// headLen is how much of an answer that is not a chat completion is told.
const headLen = 100

// middleware is the client's middleware that fills in got.
func (got *answered) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	sent := got.sent
	if sent == nil {
		sent = new(atomic.Bool)
	}
	wrote := new(atomic.Bool)
	*got = answered{sent: sent, wrote: wrote, requests: got.requests + 1, holds: got.holds}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(w httptrace.WroteRequestInfo) {
			if w.Err == nil {
				sent.Store(true)
				wrote.Store(true)
			}
		},
	}))
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	got.status, got.ctype, got.retryAfter = res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Retry-After")
	if d, ok := retryAfter(got.retryAfter, time.Now()); ok && got.holds && d > clientWaits && res.Header.Get("x-should-retry") == "" {
		// Not waited for inside the call, where parley status could
		// only say the agent is working: the message is held.
		res.Header.Set("x-should-retry", "false")
	}
	res.Body = &headReader{ReadCloser: res.Body, got: got}
	return res, nil
}

// unreadable is the error of an answer the client could not read as a
// chat completion (err): what answered, the start of its body escaped.
func (got *answered) unreadable(err error) error {
	ctype := got.ctype
	if ctype == "" {
		ctype = "no content type"
	}
	if got.readErr != nil {
		return fmt.Errorf("an answer (%s) that broke off after %d bytes: %w", ctype, len(got.head), got.readErr)
	}
	head, more := got.head, ""
	if len(head) == headLen {
		more = "..."
		i := len(head) - 1
		for i > 0 && len(head)-i < utf8.UTFMax && !utf8.RuneStart(head[i]) {
			i--
		}
		if !utf8.FullRune(head[i:]) {
			head = head[:i] // not half a character
		}
	}
	if len(head) == 0 {
		return fmt.Errorf("an empty answer (%s), not a chat completion", ctype)
	}
	return fmt.Errorf("an answer (%s) that is not a chat completion: %q%s", ctype, head, more)
}

// headReader keeps the first headLen bytes of a body as it is read.
type headReader struct {
	io.ReadCloser
	got *answered
}

func (r *headReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if room := headLen - len(r.got.head); room > 0 {
		r.got.head = append(r.got.head, p[:min(n, room)]...)
	}
	if err != nil && err != io.EOF {
		r.got.readErr = err
	}
	return n, err
}

// endLine returns s ending with a newline, unless it is empty.
func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func firstLine(s, otherwise string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return otherwise
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runTool runs a tool call and returns what the model is told: the
// tool's result, or its error as {"success": false, "message": "Error:
// ..."}; and whether it succeeded. Both are journaled.
func (a *Agent) runTool(ctx context.Context, inID, name, args string) (string, bool) {
	t, ok := a.byName[name]
	var result string
	var err error
	if !ok {
		names := make([]string, 0, len(a.opts.Tools))
		for _, t := range a.opts.Tools {
			names = append(names, t.Name)
		}
		err = fmt.Errorf("unknown tool %q (tools: %s)", name, strings.Join(names, ", "))
	} else {
		result, err = t.Call(ctx, json.RawMessage(args))
	}
	kept := result
	if ok && t.Journaled != nil && err == nil {
		kept = t.Journaled(result)
	}
	a.journal(workspace.ToolCall(a.agent.Name, inID, name, args, kept, err))
	if err != nil {
		b, _ := json.Marshal(map[string]any{"success": false, "message": "Error: " + err.Error()})
		result = string(b)
	}
	return result, err == nil
}

// journal writes an entry; a journal that cannot be written is logged,
// and the agent goes on.
func (a *Agent) journal(e workspace.Entry) {
	if e.Time == "" {
		e.Time = a.opts.Now().UTC().Format(mailbox.TimeFormat)
	}
	if err := workspace.AppendJournal(a.opts.Workspace.JournalPath(), e); err != nil {
		a.opts.Logger.Error("journaling", "agent", a.agent.Name, "outcome", e.Outcome, "err", err)
	}
}

// answerFile names the model's answer in a refusal, as a file's name
// heads the refusal of a file: "your answer:2: to: unknown agent".
const answerFile = "your answer"

// cutOff says why an answer the endpoint cut off (finish_reason
// "length") is refused.
func (a *Agent) cutOff() string {
	if a.model.MaxTokens > 0 {
		return fmt.Sprintf("%s: cut off at max_tokens (%d, openai.max_tokens in %s) before its end", answerFile, a.model.MaxTokens, workspace.ConfigFile)
	}
	return fmt.Sprintf("%s: cut off at the endpoint's longest answer before its end (openai.max_tokens in %s is not set)", answerFile, workspace.ConfigFile)
}

// refusal is why an answer of the model is refused, said twice: reason
// for the record (the journal, the error that gives the message up,
// which notices at a player's seat and parley status show), told for the
// model, in the repair prompt. They differ for an answer refused for
// carrying a secret: told quotes what the answer holds of it
// (workspace.Refusal.Quoted), reason never does.
type refusal struct{ reason, told string }

// refusalOf is a refusal said the same way twice.
func refusalOf(reason string) refusal { return refusal{reason, reason} }

// answers makes messages of the model's answer, split as a program's
// printed answer is (mailbox.SplitAnswer: at FrameEnd lines, and before
// a second frontmatter header), and checks each with the workspace's
// Check: the messages, or why one is refused (the answer is then
// repaired whole).
func (a *Agent) answers(in *mailbox.Message, text string) ([]*mailbox.Message, refusal) {
	parts := a.opts.Workspace.Opens(a.agent.Name).SplitAnswer([]byte(text))
	if len(parts) == 0 {
		return nil, refusalOf(answerFile + ": empty, where a message was expected")
	}
	out := make([]*mailbox.Message, 0, len(parts))
	for i, p := range parts {
		file := answerFile
		if len(parts) > 1 {
			file = fmt.Sprintf("%s's message %d", answerFile, i+1)
		}
		m, refused := a.answer(in, p, file)
		if refused.reason != "" {
			return nil, refused
		}
		out = append(out, m)
	}
	return out, refusal{}
}

// answer makes a message of one message of the model's answer, named
// file in a refusal, and checks it with the workspace's Check: the
// message, or why it is refused.
func (a *Agent) answer(in *mailbox.Message, text []byte, file string) (*mailbox.Message, refusal) {
	ans, err := mailbox.ParseAnswer(text)
	m := ans.Message
	if errors.Is(err, mailbox.ErrNoHeader) {
		m, err = mailbox.Reply(in, ans.Text), nil
		if ans.Late.Line > 0 {
			a.opts.Logger.Warn("sent as plain text", "agent", a.agent.Name, "why", "its answer has no header on line one, although "+ans.Late.String()+": a header counts only on line one")
		}
	}
	if errors.Is(err, mailbox.ErrEmpty) {
		return nil, refusalOf(file + ": empty, where a message was expected")
	}
	if pe := (*mailbox.ParseError)(nil); errors.As(err, &pe) && pe.Path == "" {
		pe.Path = file
	}
	if err != nil {
		return nil, refusalOf(err.Error())
	}
	v, err := a.opts.Workspace.Check(workspace.Input{File: file, Sender: a.agent.Name, Message: m})
	if err != nil {
		return nil, refusalOf(err.Error())
	}
	if !v.Accepted() {
		return nil, refusal{v.Refusal.Error(), v.Refusal.Quoted()}
	}
	return m, refusal{}
}

// system is the system prompt: who the agent is, how to answer, its
// role's prompt file, the protocol, and the files its role may see.
func (a *Agent) system() (string, error) {
	ws := a.opts.Workspace
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, an agent with the roles %s in a parley workspace: agents talk by sending each other messages.\n\n",
		a.agent.Name, strings.Join(ws.Roles(a.agent.Name), ", "))
	b.WriteString("Answer each message with a message: YAML frontmatter between --- lines (to:, type: and the protocol's fields), then the body. A plain text answer with no frontmatter is sent as a reply to the sender. To send several messages (a narration to everyone, then a prompt to one of them), write them one after another, each beginning with its own frontmatter after a blank line: each goes only to its own recipients. parley checks your messages against the protocol; if it refuses one, you are told why and answer again, all of them.\n")
	if len(a.tools) > 0 {
		b.WriteString("Use the tools for dice and for the characters' sheets: never invent a roll.\n")
	}
	if p := a.model.Prompt; p != "" {
		path := p
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws.Root, p)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: agent %s: openai.prompt: %w", workspace.ConfigFile, a.agent.Name, err)
		}
		b.WriteString("\n")
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	if a.opts.Protocol != "" {
		b.WriteString("\n# The protocol\n\n")
		b.WriteString(a.opts.Protocol)
	}
	first := true
	for _, f := range a.opts.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // not written yet
		}
		if first {
			b.WriteString("\n# Files you may see\n")
			first = false
		}
		text := string(data)
		fence := fenceFor(text)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n%s%s\n", ws.Short(f), fence, text, fence)
	}
	return b.String(), nil
}

// transcript is the exchange with the model on one message, for dead/:
// kept as it goes, written out only for a message given up.
type transcript struct{ turns []Turn }

func (t *transcript) add(role, text string) { t.turns = append(t.turns, Turn{Role: role, Text: text}) }

func (t *transcript) String() string {
	var b strings.Builder
	for _, turn := range t.turns {
		text := turn.Text
		fence := fenceFor(text)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n%s%s\n\n", turn.Role, fence, text, fence)
	}
	return b.String()
}
