package llm_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// step is one scripted answer of the stand-in endpoint.
type step struct {
	status  int               // 0: 200
	header  map[string]string // extra response headers
	body    string            // the response body; empty: an answer built from content/calls
	content string            // the assistant's text
	calls   []call            // tool calls
	delay   time.Duration     // wait before answering (the request's context cuts it short)
	in, out int64             // usage
}

type call struct{ id, name, args string }

// standin is an OpenAI-compatible chat-completions endpoint replaying a
// script, and keeping every request it was sent. Past the script's end
// it repeats the last step.
type standin struct {
	*httptest.Server
	mu       sync.Mutex
	script   []step
	requests []map[string]any
	headers  []http.Header
}

func newStandin(t testing.TB, script ...step) *standin {
	t.Helper()
	s := &standin{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *standin) URL() string { return s.Server.URL + "/v1" }

func (s *standin) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(data, &req)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.headers = append(s.headers, r.Header.Clone())
	st := s.script[min(n, len(s.script)-1)]
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range st.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if st.status != 0 && st.status != http.StatusOK {
		w.WriteHeader(st.status)
		body := st.body
		if body == "" {
			body = fmt.Sprintf(`{"error":{"message":"scripted %d","type":"server_error"}}`, st.status)
		}
		io.WriteString(w, body)
		return
	}
	if st.body != "" {
		io.WriteString(w, st.body)
		return
	}
	io.WriteString(w, completion(st))
}

// completion is a chat.completion answer.
func completion(st step) string {
	msg := map[string]any{"role": "assistant", "content": st.content}
	finish := "stop"
	if len(st.calls) > 0 {
		var calls []map[string]any
		for _, c := range st.calls {
			calls = append(calls, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = calls
		msg["content"] = nil
		finish = "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "stand-in",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": st.in, "completion_tokens": st.out, "total_tokens": st.in + st.out},
	})
	return string(b)
}

// request returns the i-th request the stand-in was sent.
func (s *standin) request(t testing.TB, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.requests) {
		t.Fatalf("the stand-in got %d requests, want at least %d", len(s.requests), i+1)
	}
	return s.requests[i]
}

func (s *standin) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// messages returns the role and content of each message of a request.
func messages(req map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range req["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}
