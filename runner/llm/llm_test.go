package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// table makes a workspace with an openai agent gm calling url (its
// openai: section extended by extra lines) and a person, ann.
func table(t testing.TB, url, extra string) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	// A key of extra replaces the default (parley.yaml refuses a key
	// given twice).
	var defaults strings.Builder
	for _, l := range []string{"      max_retries: 0\n", "      timeout: 5s\n", "      prompt: gm-prompt.md\n"} {
		if key, _, _ := strings.Cut(l, ":"); !strings.Contains("\n"+extra, "\n"+key+":") {
			defaults.WriteString(l)
		}
	}
	cfg := fmt.Sprintf(`agents:
  - name: gm
    driver: openai
    openai:
      base_url: %s
      model: stand-in
%s%s  - name: ann
    role: human
`, url, defaults.String(), extra)
	ws, err := workspace.InitConfig(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gm-prompt.md"), []byte("You run the game.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func agent(t testing.TB, ws *workspace.Workspace, tools ...llm.Tool) *llm.Agent {
	t.Helper()
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Protocol: "(the protocol)", Tools: tools, Files: []string{filepath.Join(ws.Root, "gm-prompt.md"), filepath.Join(ws.Root, "missing.md")}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// incoming is a message from ann to gm.
func incoming(t testing.TB, body string) *mailbox.Message {
	t.Helper()
	id := (&mailbox.IDs{}).New("ann")
	m, err := mailbox.Parse([]byte("---\nid: " + id + "\nfrom: ann\nto: gm\n---\n" + body + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func journal(t testing.TB, ws *workspace.Workspace, outcome string) []workspace.Entry {
	t.Helper()
	var out []workspace.Entry
	err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		if e.Outcome == outcome {
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlainAnswer(t *testing.T) {
	s := newStandin(t, step{Content: "You find a trapdoor.", In: 120, Out: 8})
	ws := table(t, s.URL(), "      temperature: 0.5\n      max_tokens: 300\n")
	a := agent(t, ws)
	in := incoming(t, "I search the room.")
	out, err := a.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("Handle = %d messages, want 1", len(out))
	}
	inID, _ := in.Header().Get("id")
	if to, _ := out[0].Header().Get("to"); to != "ann" {
		t.Errorf("answer to = %q, want ann", to)
	}
	if r, _ := out[0].Header().Get("reply_to"); r != inID {
		t.Errorf("answer reply_to = %q, want %q", r, inID)
	}
	if got := string(out[0].Body); got != "You find a trapdoor." {
		t.Errorf("answer body = %q", got)
	}
	req := s.request(t, 0)
	if req["model"] != "stand-in" || req["temperature"] != 0.5 || req["max_tokens"] != 300.0 {
		t.Errorf("request model, temperature, max_tokens = %v, %v, %v", req["model"], req["temperature"], req["max_tokens"])
	}
	if _, ok := req["tools"]; ok {
		t.Errorf("request has tools, want none for an agent without tools")
	}
	msgs := messages(req)
	if len(msgs) != 2 || msgs[0]["role"] != "system" || msgs[1]["role"] != "user" {
		t.Fatalf("request messages = %v, want system then user", msgs)
	}
	system := msgs[0]["content"].(string)
	for _, want := range []string{"You are gm", "You run the game.", "(the protocol)", "## gm-prompt.md"} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "missing.md") {
		t.Errorf("system prompt names a missing file")
	}
	if user := msgs[1]["content"].(string); !strings.Contains(user, "I search the room.") || !strings.Contains(user, "from: ann") {
		t.Errorf("user message = %q, want the message delivered", user)
	}
	// Memory: the conversation file holds the exchange, and the next
	// call sends it.
	data, err := os.ReadFile(filepath.Join(ws.Root, "mailboxes", "gm", llm.ConversationFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.ParseConversation("conversation.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 2 || c.Turns[1].Text != "You find a trapdoor.\n" {
		t.Errorf("conversation = %+v", c.Turns)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "I open it.")); err != nil {
		t.Fatal(err)
	}
	if msgs := messages(s.request(t, 1)); len(msgs) != 4 || msgs[2]["content"] != "You find a trapdoor.\n" {
		t.Errorf("second request messages = %v, want system, the first exchange, the new message", msgs)
	}
	models := journal(t, ws, workspace.ModelCalled)
	if len(models) != 2 || models[0].TokensIn != 120 || models[0].TokensOut != 8 || models[0].ID != inID {
		t.Errorf("journal model entries = %+v", models)
	}
}

func TestMemoryTrimmed(t *testing.T) {
	s := newStandin(t, step{Content: strings.Repeat("word ", 40)})
	ws := table(t, s.URL(), "      memory_tokens: 150\n")
	a := agent(t, ws)
	for i := range 4 {
		if _, err := a.Handle(context.Background(), incoming(t, fmt.Sprintf("message %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(ws.Root, "mailboxes", "gm", llm.ConversationFile))
	c, err := llm.ParseConversation("conversation.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dropped == 0 || c.Tokens() > 150 || !strings.Contains(string(data), "dropped: ") {
		t.Errorf("conversation after 4 exchanges: dropped %d, %d tokens, want some dropped and at most 150:\n%s", c.Dropped, c.Tokens(), data)
	}
	msgs := messages(s.request(t, 3))
	if !strings.Contains(msgs[1]["content"].(string), "dropped: ") {
		t.Errorf("the request does not say what was dropped: %v", msgs[1])
	}
}

// dice is a stand-in tool.
func dice() llm.Tool {
	return llm.Tool{
		Name: "roll_dice", Description: "Roll dice.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"dice":{"type":"string"},"reason":{"type":"string"}},"required":["dice","reason"]}`),
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct{ Dice, Reason string }
			if err := json.Unmarshal(args, &a); err != nil {
				return "", fmt.Errorf("bad arguments: %v", err)
			}
			return fmt.Sprintf(`{"dice":%q,"total":15}`, a.Dice), nil
		},
	}
}

func TestToolCalls(t *testing.T) {
	s := newStandin(t,
		step{Calls: []call{{ID: "call_1", Name: "roll_dice", Args: `{"dice":"1d20+2","reason":"Investigation"}`}, {ID: "call_2", Name: "roll_dice", Args: `{"dice":`}}},
		step{Calls: []call{{ID: "call_3", Name: "no_such_tool", Args: `{}`}}},
		step{Content: "A 15: you find the trap."},
	)
	ws := table(t, s.URL(), "")
	a := agent(t, ws, dice())
	out, err := a.Handle(context.Background(), incoming(t, "I search for traps."))
	if err != nil {
		t.Fatal(err)
	}
	if string(out[0].Body) != "A 15: you find the trap." {
		t.Errorf("answer = %q", out[0].Body)
	}
	// The tools and their schemas were sent.
	tools := s.request(t, 0)["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "roll_dice" || fn["parameters"].(map[string]any)["required"].([]any)[0] != "dice" {
		t.Errorf("tools sent = %v", tools)
	}
	// The second request carries the call and both results: the good
	// one, and the malformed arguments' error.
	msgs := messages(s.request(t, 1))
	last := msgs[len(msgs)-3:]
	if last[0]["role"] != "assistant" || last[0]["tool_calls"] == nil {
		t.Errorf("second request: want the assistant's tool calls, got %v", last[0])
	}
	if last[1]["role"] != "tool" || last[1]["tool_call_id"] != "call_1" || !strings.Contains(last[1]["content"].(string), `"total":15`) {
		t.Errorf("first tool result = %v", last[1])
	}
	if last[2]["tool_call_id"] != "call_2" || !strings.Contains(last[2]["content"].(string), `"success":false`) || !strings.Contains(last[2]["content"].(string), "bad arguments") {
		t.Errorf("malformed call's result = %v", last[2])
	}
	msgs = messages(s.request(t, 2))
	if c := msgs[len(msgs)-1]["content"].(string); !strings.Contains(c, "unknown tool") {
		t.Errorf("unknown tool's result = %q", c)
	}
	calls := journal(t, ws, workspace.ToolCalled)
	if len(calls) != 3 || calls[0].Tool != "roll_dice" || calls[0].Args != `{"dice":"1d20+2","reason":"Investigation"}` || !strings.Contains(calls[0].Result, "15") || calls[1].Reason == "" {
		t.Errorf("journaled tool calls = %+v", calls)
	}
}

func TestToolRoundsCapped(t *testing.T) {
	s := newStandin(t, step{Calls: []call{{ID: "call_1", Name: "roll_dice", Args: `{"dice":"1d20","reason":"again"}`}}})
	ws := table(t, s.URL(), "      max_tool_rounds: 3\n")
	a := agent(t, ws, dice())
	_, err := a.Handle(context.Background(), incoming(t, "Roll forever."))
	if !errors.Is(err, llm.ErrToolRounds) {
		t.Fatalf("Handle = %v, want ErrToolRounds", err)
	}
	var te *llm.TranscriptError
	if !errors.As(err, &te) || !strings.Contains(te.Detail(), "## tool roll_dice") {
		t.Errorf("error carries no transcript: %v", err)
	}
	if n := s.count(); n != 4 {
		t.Errorf("the endpoint was called %d times, want 4 (3 rounds, then the answer still calling tools)", n)
	}
	if n := len(journal(t, ws, workspace.ToolCalled)); n != 3 {
		t.Errorf("journaled %d tool calls, want 3", n)
	}
	// ann is told, through gm's outbox.
	names, _ := ws.Mailbox("gm").Names(mailbox.Outbox)
	if len(names) != 1 {
		t.Fatalf("gm's outbox = %v, want the notice", names)
	}
	data, _ := os.ReadFile(ws.Mailbox("gm").Path(mailbox.Outbox, names[0]))
	if !strings.Contains(string(data), "notice: "+llm.ToolRoundsNotice) || !strings.Contains(string(data), "to: ann") {
		t.Errorf("notice = %s", data)
	}
}

func TestRepair(t *testing.T) {
	s := newStandin(t,
		step{Content: "---\nto: nobody\n---\nHello\n"},
		step{Content: "```markdown\n---\nto: ann\ntype: scene\n---\nHello, ann.\n```"},
	)
	ws := table(t, s.URL(), "")
	a := agent(t, ws)
	out, err := a.Handle(context.Background(), incoming(t, "Hi."))
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := out[0].Header().Get("type"); typ != "scene" || string(out[0].Body) != "Hello, ann.\n" {
		t.Errorf("repaired answer = %s", out[0].Bytes())
	}
	msgs := messages(s.request(t, 1))
	fb := msgs[len(msgs)-1]
	if fb["role"] != "user" || !strings.Contains(fb["content"].(string), "parley refused your answer") || !strings.Contains(fb["content"].(string), `"nobody"`) {
		t.Errorf("feedback = %v", fb)
	}
	if prev := msgs[len(msgs)-2]; prev["role"] != "assistant" || !strings.Contains(prev["content"].(string), "to: nobody") {
		t.Errorf("the refused answer is not in the request: %v", prev)
	}
}

func TestRefusedPastRepairs(t *testing.T) {
	s := newStandin(t, step{Content: "---\nto: nobody\n---\nHello\n"})
	ws := table(t, s.URL(), "      max_repairs: 1\n")
	_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
	var te *llm.TranscriptError
	if !errors.Is(err, llm.ErrRefused) || !errors.As(err, &te) {
		t.Fatalf("Handle = %v, want ErrRefused with a transcript", err)
	}
	if s.count() != 2 || strings.Count(te.Transcript, "parley refused your answer") != 1 {
		t.Errorf("%d calls, transcript:\n%s", s.count(), te.Transcript)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, "mailboxes", "gm", llm.ConversationFile)); !os.IsNotExist(err) {
		t.Errorf("a refused exchange was written to the conversation")
	}
	// The journal says each answer was refused, not "answered".
	for _, e := range journal(t, ws, workspace.ModelCalled) {
		if want := `answer refused: your answer:2: to: unknown agent "nobody"`; !strings.HasPrefix(e.Note, want) || e.Reason != "" {
			t.Errorf("journal's model entry = note %q, reason %q; want the note to start %q", e.Note, e.Reason, want)
		}
	}
}

// TestRefusalsSaidAlike: every refusal of an answer is told in one form,
// "your answer:LINE: ...", an empty answer as an empty answer (not an
// empty file), to the model and in the error.
func TestRefusalsSaidAlike(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"empty", "", "your answer: empty, where a message was expected"},
		{"white space", "\n  \n", "your answer: empty, where a message was expected"},
		{"bad header", "---\nto: ann\ntype: [\n---\nHello\n", "your answer:3: header: "},
		{"unknown recipient", "---\nto: nobody\n---\nHello\n", `your answer:2: to: unknown agent "nobody"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStandin(t, step{Content: c.content})
			ws := table(t, s.URL(), "      max_repairs: 1\n")
			_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
			if want := "answer refused after 1 repair: " + c.want; !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("Handle = %v, want it to say %q", err, want)
			}
			msgs := messages(s.request(t, 1))
			if fb := msgs[len(msgs)-1]["content"].(string); !strings.HasPrefix(fb, "parley refused your answer: "+c.want) {
				t.Errorf("the model was told %q, want %q", fb, c.want)
			}
		})
	}
}

func TestEndpointErrors(t *testing.T) {
	t.Run("429 Retry-After", func(t *testing.T) {
		s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "1"}}, step{Content: "ok"})
		ws := table(t, s.URL(), "      max_retries: 1\n")
		start := time.Now()
		if _, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi.")); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Errorf("answered after %v: the client did not wait as Retry-After: 1 says", d)
		}
		if s.count() != 2 {
			t.Errorf("%d requests, want 2", s.count())
		}
	})
	t.Run("500", func(t *testing.T) {
		s := newStandin(t, step{Status: 500})
		ws := table(t, s.URL(), "")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		var ee *llm.EndpointError
		if !errors.As(err, &ee) || ee.Status != 500 || !ee.Temporary() {
			t.Fatalf("Handle = %v, want a temporary EndpointError with status 500", err)
		}
		if e := journal(t, ws, workspace.ModelCalled); len(e) != 1 || !strings.Contains(e[0].Reason, "500") {
			t.Errorf("journal = %+v", e)
		}
	})
	t.Run("401", func(t *testing.T) {
		s := newStandin(t, step{Status: 401, Body: `{"error":{"message":"bad key"}}`})
		ws := table(t, s.URL(), "")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		var ee *llm.EndpointError
		if !errors.As(err, &ee) || ee.Status != 401 || ee.Temporary() || !strings.Contains(err.Error(), "bad key") {
			t.Fatalf("Handle = %v, want a lasting EndpointError saying bad key", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		s := newStandin(t, step{Delay: delay(5 * time.Second), Content: "late"})
		ws := table(t, s.URL(), "      timeout: 100ms\n")
		start := time.Now()
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		var ee *llm.EndpointError
		if !errors.As(err, &ee) || ee.Status != 0 || !ee.Temporary() {
			t.Fatalf("Handle = %v, want a temporary EndpointError", err)
		}
		// Reached, but too slow: not "unreachable: context deadline exceeded".
		if want := "did not answer within 100ms (openai.timeout)"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "unreachable") {
			t.Errorf("Handle = %q, want it to say %q", err, want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("gave up after %v, want about the timeout", d)
		}
	})
	t.Run("timeout tried again", func(t *testing.T) {
		// openai.timeout is one attempt: the client tries a request that
		// timed out again, max_retries times, as a 429 or a 5xx.
		s := newStandin(t, step{Delay: delay(5 * time.Second), Content: "late"}, step{Content: "ok"})
		ws := table(t, s.URL(), "      timeout: 100ms\n      max_retries: 1\n")
		if _, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi.")); err != nil {
			t.Fatalf("Handle = %v, want the second attempt's answer", err)
		}
		if s.count() != 2 {
			t.Errorf("%d requests, want 2", s.count())
		}
	})
	t.Run("timeouts past max_retries", func(t *testing.T) {
		s := newStandin(t, step{Delay: delay(5 * time.Second), Content: "late"})
		ws := table(t, s.URL(), "      timeout: 100ms\n      max_retries: 2\n")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		if want := "did not answer within 100ms (openai.timeout)"; !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("Handle = %v, want it to say %q", err, want)
		}
		if s.count() != 3 {
			t.Errorf("%d requests, want 3 (max_retries: 2)", s.count())
		}
	})
	t.Run("429 that never clears", func(t *testing.T) {
		s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "0"}})
		ws := table(t, s.URL(), "      max_retries: 2\n")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		var ee *llm.EndpointError
		if !errors.As(err, &ee) || ee.Status != 429 {
			t.Fatalf("Handle = %v, want an EndpointError with status 429", err)
		}
		if s.count() != 3 {
			t.Errorf("%d requests, want 3 (max_retries: 2)", s.count())
		}
	})
	t.Run("not a chat completion", func(t *testing.T) {
		// Reached: say what answered, not "unreachable".
		long := strings.Repeat("é", 60)
		for _, c := range []struct {
			name string
			step step
			want string
		}{
			{"html as json", step{Body: "<html>502 Bad Gateway</html>"},
				`answered 200: an answer (application/json) that is not a chat completion: "<html>502 Bad Gateway</html>"`},
			{"html", step{Body: "<html>\n502 Bad Gateway</html>", Header: map[string]string{"Content-Type": "text/html"}},
				`answered 200: an answer (text/html) that is not a chat completion: "<html>\n502 Bad Gateway</html>"`},
			{"502 html", step{Status: 502, Body: "<html>502 Bad Gateway</html>", Header: map[string]string{"Content-Type": "text/html"}},
				`answered 502: Bad Gateway`},
			{"long", step{Body: long}, `that is not a chat completion: "` + strings.Repeat("é", 50) + `"...`},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := newStandin(t, c.step)
				ws := table(t, s.URL(), "")
				_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
				if !strings.Contains(fmt.Sprint(err), c.want) || strings.Contains(fmt.Sprint(err), "unreachable") {
					t.Errorf("Handle = %v, want it to say %s", err, c.want)
				}
				// A gateway's page in the model's stead may pass: tried again.
				if ee := (*llm.EndpointError)(nil); !errors.As(err, &ee) || !ee.Temporary() {
					t.Errorf("Handle = %v, want a temporary EndpointError", err)
				}
			})
		}
	})
	t.Run("no choices", func(t *testing.T) {
		// The tokens it says it used count, though it answered nothing.
		s := newStandin(t, step{Body: `{"id":"x","object":"chat.completion","model":"m","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}}`})
		ws := table(t, s.URL(), "")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		if !strings.Contains(fmt.Sprint(err), "an answer with no choices") {
			t.Fatalf("Handle = %v, want an answer with no choices", err)
		}
		var in, out int64
		if err := workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
			if e.Outcome == workspace.ModelCalled {
				in, out = in+e.TokensIn, out+e.TokensOut
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if in != 1000 || out != 200 {
			t.Errorf("journaled %d in, %d out; want 1000, 200 (what the endpoint said it used)", in, out)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ws := table(t, "http://127.0.0.1:1/v1", "")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
		if !strings.Contains(fmt.Sprint(err), "unreachable") {
			t.Fatalf("Handle = %v, want the endpoint unreachable", err)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		s := newStandin(t, step{Delay: delay(5 * time.Second), Content: "late"})
		ws := table(t, s.URL(), "")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := agent(t, ws).Handle(ctx, incoming(t, "Hi."))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Handle = %v, want context.Canceled", err)
		}
	})
}

func TestKeyFromEnvironment(t *testing.T) {
	s := newStandin(t, step{Content: "ok"})
	ws := table(t, s.URL(), "      key_env: STANDIN_KEY\n")
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Getenv: func(k string) string {
		if k == "STANDIN_KEY" {
			return "sk-test"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
		t.Fatal(err)
	}
	if got := s.Headers()[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if _, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "STANDIN_KEY") {
		t.Errorf("New without the key = %v, want an error naming STANDIN_KEY", err)
	}
}

func TestBudget(t *testing.T) {
	s := newStandin(t, step{Content: "ok", In: 15, Out: 10})
	ws := table(t, s.URL(), "    budget:\n      tokens: 20\n")
	session := llm.NewSession("s1")
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.Handle(context.Background(), incoming(t, "Again.")); !errors.Is(err, llm.ErrBudget) {
			t.Fatalf("Handle past the budget = %v, want ErrBudget", err)
		}
	}
	if s.count() != 1 {
		t.Errorf("%d model calls, want 1", s.count())
	}
	if u := session.Agent("gm"); u.TokensIn != 15 || u.TokensOut != 10 || u.Calls != 1 {
		t.Errorf("session usage = %+v", u)
	}
	names, _ := ws.Mailbox("gm").Names(mailbox.Outbox)
	if len(names) != 1 {
		t.Errorf("gm's outbox = %v, want one notice, once", names)
	}
}

func TestSessionBudgetAndCost(t *testing.T) {
	s := newStandin(t, step{Content: "ok", In: 1000000, Out: 0})
	ws := table(t, s.URL(), "")
	ws.Config.Prices = map[string]workspace.Price{"stand-in": {Input: 2, Output: 8}}
	ws.Config.Budget = workspace.Budget{Cost: 1.5}
	session := llm.NewSession("s1")
	a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
		t.Fatal(err)
	}
	if u := session.Total(); u.Cost != 2 {
		t.Errorf("session cost = %v, want 2", u.Cost)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); !errors.Is(err, llm.ErrBudget) || !strings.Contains(err.Error(), "session") {
		t.Errorf("Handle past the session's budget = %v", err)
	}
}

// TestConversationEditedByHand: a person's edit of the conversation file
// is what the next call sends.
func TestConversationEditedByHand(t *testing.T) {
	s := newStandin(t, step{Content: "ok"})
	ws := table(t, s.URL(), "")
	a := agent(t, ws)
	if _, err := a.Handle(context.Background(), incoming(t, "One.")); err != nil {
		t.Fatal(err)
	}
	edited := &llm.Conversation{Agent: "gm", Turns: []llm.Turn{{Role: llm.RoleUser, Text: "Remember the dragon.\n"}, {Role: llm.RoleAssistant, Text: "I will.\n"}}}
	if err := os.WriteFile(filepath.Join(ws.Root, "mailboxes", "gm", llm.ConversationFile), edited.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Handle(context.Background(), incoming(t, "Two.")); err != nil {
		t.Fatal(err)
	}
	msgs := messages(s.request(t, 1))
	if len(msgs) != 4 || msgs[1]["content"] != "Remember the dragon.\n" {
		t.Errorf("after the edit, the request's messages = %v", msgs)
	}
}

// TestAgentsAtOnce: two openai agents sharing a session handle messages
// at the same time, as the runner's workers run them (go test -race): the
// session counts both, and each answer is checked by the one Check.
func TestAgentsAtOnce(t *testing.T) {
	s := newStandin(t, step{Content: "ok", In: 10, Out: 1})
	dir := t.TempDir()
	ws, err := workspace.InitConfig(dir, fmt.Sprintf(`agents:
  - {name: gm, driver: openai, openai: {base_url: %q, model: m, max_retries: 0}}
  - {name: sage, driver: openai, openai: {base_url: %q, model: m, max_retries: 0}}
  - {name: ann, role: human}
`, s.URL(), s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	session := llm.NewSession("s")
	errs := make(chan error, 20)
	var wg sync.WaitGroup
	for _, name := range []string{"gm", "sage"} {
		a, err := llm.New(llm.Options{Agent: name, Workspace: ws, Session: session})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range 10 {
				if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if u := session.Total(); u.Calls != 20 || u.TokensIn != 200 {
		t.Errorf("session = %+v, want 20 calls, 200 tokens in", u)
	}
	if n := len(journal(t, ws, workspace.ModelCalled)); n != 20 {
		t.Errorf("journaled %d model calls, want 20", n)
	}
}

// TestNoRetryAfterAChange: an endpoint failing after a tool changed the
// campaign is not tried again by itself (the model, asked anew, could
// make the change twice); after a read-only tool only, it is.
func TestNoRetryAfterAChange(t *testing.T) {
	changing := dice()
	changing.Name = "update_character"
	reading := dice()
	reading.ReadOnly = true
	for _, tc := range []struct {
		tool      llm.Tool
		temporary bool
	}{{changing, false}, {reading, true}} {
		t.Run(tc.tool.Name, func(t *testing.T) {
			s := newStandin(t, step{Calls: []call{{ID: "c1", Name: tc.tool.Name, Args: `{"dice":"1d4","reason":"x"}`}}}, step{Status: 500})
			ws := table(t, s.URL(), "")
			_, err := agent(t, ws, tc.tool).Handle(context.Background(), incoming(t, "Hit it."))
			var temp interface{ Temporary() bool }
			if !errors.As(err, &temp) || temp.Temporary() != tc.temporary {
				t.Fatalf("Handle = %v, want an error with Temporary() %v", err, tc.temporary)
			}
			var ee *llm.EndpointError
			if !errors.As(err, &ee) || ee.Status != 500 {
				t.Errorf("the endpoint's error is not kept: %v", err)
			}
		})
	}
}

// TestChangeMadeOnce: a tool's change to the campaign is made once for a
// message, whatever cuts its handling short after the tool ran: a failed
// call, the agent's own timeout, a budget used up (the next run), the
// runner stopped or killed (the next run). The message is given up with
// the transcript, not asked anew; parley retry (handling it again after
// that) asks anew.
func TestChangeMadeOnce(t *testing.T) {
	update := step{Calls: []call{{ID: "c1", Name: "update_character", Args: `{"character":"sel-varga","damage":3}`}}, In: 150, Out: 50}
	for _, tc := range []struct {
		name   string
		second step   // the model's second answer
		extra  string // parley.yaml lines of the agent
		// ctx makes the context of the first attempt, and the tool's
		// call may cancel it (the runner stopping).
		timeout time.Duration
		cancel  bool
		// first is what the first attempt returns.
		first func(error) bool
	}{
		{name: "failed call", second: step{Status: 500}, first: isChanged},
		{name: "the agent's timeout", second: step{Delay: delay(5 * time.Second), Content: "late"}, timeout: 300 * time.Millisecond, first: isChanged},
		{name: "budget", second: step{Content: "never asked"}, extra: "    budget: {tokens: 150}\n", first: func(err error) bool { return errors.Is(err, llm.ErrBudget) }},
		{name: "runner stopped", second: step{Content: "never asked"}, cancel: true, first: func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandin(t, update, tc.second, step{Content: "Asked anew."})
			ws := table(t, s.URL(), tc.extra)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			hp := 10
			tool := dice()
			tool.Name = "update_character"
			tool.Call = func(context.Context, json.RawMessage) (string, error) {
				hp -= 3
				if tc.cancel {
					cancel()
				}
				return fmt.Sprintf(`{"hp":%d}`, hp), nil
			}
			in := incoming(t, "The trap springs.")
			_, err := agent(t, ws, tool).Handle(ctx, in)
			if !tc.first(err) {
				t.Fatalf("first attempt: Handle = %v", err)
			}
			calls := s.count()
			if !isChanged(err) {
				// Not given up yet: the next attempt (a new agent: the
				// next run) gives it up, without asking the model.
				_, err = agent(t, ws, tool).Handle(context.Background(), in)
				if !isChanged(err) {
					t.Fatalf("next attempt: Handle = %v, want it given up (ChangedError)", err)
				}
				if s.count() != calls {
					t.Errorf("the next attempt called the model (%d calls, want %d)", s.count(), calls)
				}
			}
			var te *llm.TranscriptError
			if !errors.As(err, &te) || !strings.Contains(te.Detail(), "## tool update_character") {
				t.Errorf("given up without the transcript of the change: %v", err)
			}
			if !strings.Contains(err.Error(), "update_character changed the campaign for this message") || !strings.Contains(err.Error(), "; not asked again") {
				t.Errorf("reason = %q, want it to name the tool", err)
			}
			if hp != 7 {
				t.Errorf("HP = %d after the attempts, want 7: the change made once", hp)
			}
			// parley retry: the message handled again asks anew.
			if _, err := agent(t, ws, tool).Handle(context.Background(), in); err != nil {
				t.Fatalf("handled again after it was given up: %v", err)
			}
		})
	}
}

func isChanged(err error) bool {
	var ce *llm.ChangedError
	var temp interface{ Temporary() bool }
	return errors.As(err, &ce) && errors.As(err, &temp) && !temp.Temporary()
}

// TestAgentTimeoutNamed: the agent's own timeout: cutting a model call
// short is a failed call like any: said with its cause (the timeout: key
// and the endpoint, not "context deadline exceeded"), journaled, and
// tried again.
func TestAgentTimeoutNamed(t *testing.T) {
	s := newStandin(t, step{Delay: delay(5 * time.Second), Content: "late"})
	ws := table(t, s.URL(), "    timeout: 3s\n")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond) // as the runner does, for timeout:
	defer cancel()
	_, err := agent(t, ws).Handle(ctx, incoming(t, "Hello?"))
	want := "timeout: 3s in parley.yaml (the agent's time for a message) cut the call to model endpoint " + s.URL() + " short (its openai.timeout, 5s, is longer)"
	if err == nil || err.Error() != want {
		t.Fatalf("Handle = %v, want %q", err, want)
	}
	var temp interface{ Temporary() bool }
	if !errors.As(err, &temp) || !temp.Temporary() {
		t.Errorf("Handle = %v, want a temporary error (tried again)", err)
	}
	calls := journal(t, ws, workspace.ModelCalled)
	if len(calls) != 1 || calls[0].Reason != want {
		t.Fatalf("journaled model calls = %+v, want one failed, with the reason", calls)
	}
	u, err := ws.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := u.Agent("gm"); a.Calls != 1 || a.Failed != 1 || a.LastError != want {
		t.Errorf("usage = %+v, want 1 call, 1 failed, its reason", a)
	}
}

// TestCutOffAnswer: an answer the endpoint cut off at max_tokens
// (finish_reason "length") is not sent as if it were whole: the model is
// asked to answer again, shorter; cut off past max_repairs, the message
// is given up with a reason naming max_tokens.
func TestCutOffAnswer(t *testing.T) {
	cut := step{Content: "---\nto: ann\n---\nThe door opens onto a long hall, and at its end you see", Finish: "length"}
	t.Run("answered again", func(t *testing.T) {
		s := newStandin(t, cut, step{Content: "The door opens."})
		ws := table(t, s.URL(), "      max_tokens: 40\n")
		out, err := agent(t, ws).Handle(context.Background(), incoming(t, "I open the door."))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || string(out[0].Body) != "The door opens." {
			t.Errorf("sent %d messages, the first %q; want the whole answer alone", len(out), out[0].Body)
		}
		msgs := messages(s.request(t, 1))
		want := "parley refused your answer: your answer: cut off at max_tokens (40, openai.max_tokens in parley.yaml) before its end\nAnswer again, shorter."
		if got := msgs[len(msgs)-1]["content"]; got != want {
			t.Errorf("the model was told %q, want %q", got, want)
		}
	})
	t.Run("given up", func(t *testing.T) {
		s := newStandin(t, cut)
		ws := table(t, s.URL(), "      max_repairs: 1\n")
		_, err := agent(t, ws).Handle(context.Background(), incoming(t, "I open the door."))
		if !errors.Is(err, llm.ErrRefused) || !strings.Contains(err.Error(), "cut off at the endpoint's longest answer before its end (openai.max_tokens in parley.yaml is not set)") {
			t.Errorf("Handle = %v, want it refused as cut off", err)
		}
		if n := s.count(); n != 2 {
			t.Errorf("%d calls, want 2 (the answer, one repair)", n)
		}
	})
}

// TestNoUsageFigures: an endpoint that reports no usage ("usage": null)
// cannot have a budget kept: the agent says so once, in the log and in
// its note for parley status; with no budget, it says nothing.
func TestNoUsageFigures(t *testing.T) {
	for _, tc := range []struct {
		name, extra, note string
	}{
		{"budget", "    budget: {tokens: 10}\n", "gm's budget (budget: in parley.yaml) cannot be kept: model endpoint %s reports no usage figures in its answers, so its calls count no tokens"},
		{"no budget", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandin(t, step{Content: "ok", NoUsage: true})
			ws := table(t, s.URL(), tc.extra)
			var logged strings.Builder
			a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := a.Handle(context.Background(), incoming(t, "Hi.")); err != nil {
					t.Fatal(err)
				}
			}
			want := tc.note
			if want != "" {
				want = fmt.Sprintf(want, s.URL())
			}
			if got := a.Note(); got != want {
				t.Errorf("Note() = %q, want %q", got, want)
			}
			if n := strings.Count(logged.String(), "cannot be kept"); (want != "") != (n == 1) || n > 1 {
				t.Errorf("logged %d warnings, want %d:\n%s", n, min(len(want), 1), logged.String())
			}
		})
	}
}

// TestRetryAfterTooLong: an endpoint asking to be left alone longer than
// parley waits (Retry-After: 300, with openai.outage_limit: 0) is not
// asked again at once, nor by the runner a second later: the call fails
// for good, saying what the endpoint asked for.
func TestRetryAfterTooLong(t *testing.T) {
	s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": "300"}}, step{Content: "ok"})
	ws := table(t, s.URL(), "      outage_limit: 0s\n")
	ws.Config.Agents[0].Model.MaxRetries = 2
	start := time.Now()
	_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %v, want at once", d)
	}
	var ee *llm.EndpointError
	if !errors.As(err, &ee) || ee.Status != 429 || ee.RetryAfter != 5*time.Minute {
		t.Fatalf("Handle = %v, want a 429 with RetryAfter 5m", err)
	}
	if ee.Temporary() {
		t.Errorf("Temporary() = true, want false: not tried again before the endpoint is ready")
	}
	if want := "it asked (Retry-After) not to be called again before "; !strings.Contains(err.Error(), want) {
		t.Errorf("Handle = %v, want it to say %q", err, want)
	}
	if want := " UTC (in 5m), longer than parley waits (2m): not tried again"; !strings.Contains(err.Error(), want) {
		t.Errorf("Handle = %v, want it to say %q", err, want)
	}
	if n := s.count(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestRetryAfterSaid: when an endpoint asked to be called again is said
// as a person reads it, the time by the clock and the wait rounded. An
// HTTP date was said "called again in 15h30m13.234842056s".
func TestRetryAfterSaid(t *testing.T) {
	morning := time.Date(2026, 11, 29, 8, 28, 46, 765157944, time.UTC)
	tests := []struct {
		header string
		now    time.Time
		want   string
	}{
		{"Sun, 29 Nov 2026 23:59:00 GMT", morning, "not to be called again before 23:59 UTC (in 15h30m), longer"},
		{"300", morning, "not to be called again before 08:34 UTC (in 5m), longer"},
		{"4000", morning, "not to be called again before 09:36 UTC (in 1h7m), longer"},
		{"Mon, 30 Nov 2026 01:00:00 GMT", time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC), "not to be called again before 2026-11-30 01:00 UTC (in 3h), longer"},
		{"864000", morning, "not to be called again before 2026-12-09 08:29 UTC (in 10 days), longer"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			s := newStandin(t, step{Status: 429, Header: map[string]string{"Retry-After": tt.header}})
			ws := table(t, s.URL(), "      outage_limit: 0s\n") // not held: given up
			a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Protocol: "(the protocol)", Now: func() time.Time { return tt.now }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Handle(context.Background(), incoming(t, "Hi."))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Handle = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestAnswerOfSeveral: a model's answer holding several messages is
// several messages, split as a program's printed answer is; one refused
// sends the whole answer back, naming which message.
func TestAnswerOfSeveral(t *testing.T) {
	s := newStandin(t,
		step{Content: "---\nto: ann\n---\nThe chapel floods.\n\n---\nto: nobody\n---\nA secret.\n"},
		step{Content: "---\nto: ann\n---\nThe chapel floods.\n\n---\nto: ann\n---\nA secret.\n\x1e\nAnd a reply.\n"},
	)
	ws := table(t, s.URL(), "")
	out, err := agent(t, ws).Handle(context.Background(), incoming(t, "We enter."))
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out {
		bodies = append(bodies, string(m.Body))
	}
	if want := []string{"The chapel floods.\n", "A secret.\n", "And a reply.\n"}; strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Errorf("Handle sent %q, want %q", bodies, want)
	}
	msgs := messages(s.request(t, 1))
	if c := msgs[len(msgs)-1]["content"].(string); !strings.HasPrefix(c, "parley refused your answer: your answer's message 2:") || !strings.Contains(c, "nobody") {
		t.Errorf("the model was told %q, want the refusal of its second message", c)
	}
}

// TestInterruptedCall: a model call in flight when the runner stops
// (Ctrl-C on parley run) is journaled all the same, as a call made that
// got no answer, its tokens unknown: the endpoint got it, and usage and
// budgets count it. A call never made (stopped before) is not. (A tryout:
// the endpoint got two calls, parley log and parley usage showed one.)
func TestInterruptedCall(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done() // answers nothing until the caller gives up
	}))
	t.Cleanup(srv.Close)
	ws := table(t, srv.URL+"/v1", "")
	a := agent(t, ws)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Handle(ctx, incoming(t, "Too late.")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Handle after the stop = %v, want context.Canceled", err)
	}
	if calls := journal(t, ws, workspace.ModelCalled); len(calls) != 0 {
		t.Fatalf("a call never made journaled: %+v", calls)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	in := incoming(t, "What now?")
	done := make(chan error, 1)
	go func() {
		_, err := a.Handle(ctx, in)
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Handle = %v, want context.Canceled", err)
	}
	calls := journal(t, ws, workspace.ModelCalled)
	inID, _ := in.Header().Get("id")
	if len(calls) != 1 || !calls[0].Interrupted || calls[0].Note != llm.InterruptedNote || calls[0].ID != inID || calls[0].Reason != "" {
		t.Fatalf("journaled model calls = %+v, want one, interrupted, for %s", calls, inID)
	}
	u, err := ws.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := u.Agent("gm"); got.Calls != 1 || got.Failed != 1 || got.Interrupted != 1 || got.Session.Calls != 1 {
		t.Errorf("usage = %+v, want 1 call, failed and interrupted, in the session", got)
	}
}

// A tool whose answer is long (update_character answers the whole
// sheet) is journaled as its Journaled says: parley log's line held the
// sheet as JSON. The model is told the answer whole.
func TestToolJournaled(t *testing.T) {
	s := newStandin(t,
		step{Calls: []call{{ID: "call_1", Name: "update_character", Args: `{"damage":3}`}}},
		step{Content: "You bleed."},
	)
	ws := table(t, s.URL(), "")
	whole := `{"success":true,"message":"tor: HP 9 -> 6","inventory":[{"name":"Rope"}]}`
	tool := llm.Tool{
		Name: "update_character", Description: "Change a character.",
		Parameters: json.RawMessage(`{"type":"object"}`),
		Call:       func(context.Context, json.RawMessage) (string, error) { return whole, nil },
		Journaled:  func(string) string { return `{"success":true,"message":"tor: HP 9 -> 6"}` },
	}
	a := agent(t, ws, tool)
	if _, err := a.Handle(context.Background(), incoming(t, "I fall.")); err != nil {
		t.Fatal(err)
	}
	msgs := messages(s.request(t, 1))
	if c := msgs[len(msgs)-1]["content"].(string); c != whole {
		t.Errorf("the model was told %q, want the whole answer %q", c, whole)
	}
	calls := journal(t, ws, workspace.ToolCalled)
	if len(calls) != 1 || calls[0].Args != `{"damage":3}` || calls[0].Result != `{"success":true,"message":"tor: HP 9 -> 6"}` {
		t.Errorf("journaled tool calls = %+v, want the arguments and the short result", calls)
	}
}
