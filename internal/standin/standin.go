// Package standin is an OpenAI-compatible chat-completions endpoint for
// tests: it replays a script of answers (plain answers, tool calls, error
// statuses with their headers, slow answers) and keeps every request it
// was sent, so that a test can say what parley sent as well as what it
// did. No model, no network beyond the loopback.
package standin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"
)

// Step is one scripted answer. With neither Status nor Body, it answers a
// chat.completion with Content or Calls.
type Step struct {
	Status  int               `json:"status,omitempty"` // 0: 200
	Header  map[string]string `json:"header,omitempty"` // extra response headers (Retry-After, Content-Type)
	Body    string            `json:"body,omitempty"`   // the response body, as it is
	Content string            `json:"content,omitempty"`
	Calls   []Call            `json:"calls,omitempty"`
	Delay   Duration          `json:"delay,omitempty"` // wait before answering; the request's end cuts it short
	In      int64             `json:"in,omitempty"`    // usage: prompt tokens
	Out     int64             `json:"out,omitempty"`   // usage: completion tokens
	// Finish is the answer's finish_reason ("length": cut off at
	// max_tokens); "" is "stop", or "tool_calls" with Calls.
	Finish string `json:"finish,omitempty"`
	// NoUsage answers "usage": null, as some endpoints do.
	NoUsage bool `json:"no_usage,omitempty"`
}

// Call is a tool call the model makes.
type Call struct {
	ID   string `json:"id,omitempty"` // default call_N
	Name string `json:"name"`
	Args string `json:"args"`
}

// Duration is a time.Duration written as "1s" in a script.
type Duration time.Duration

// UnmarshalJSON reads "1s", "250ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// ParseScript reads a script: one Step as JSON per line; blank lines and
// lines starting with # are skipped.
func ParseScript(data []byte) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var s Step
		if err := json.Unmarshal(line, &s); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		steps = append(steps, s)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("no steps")
	}
	return steps, sc.Err()
}

// Server is the stand-in endpoint. Past the script's end it repeats the
// last step, or starts again (Cycle). It keeps every request: a
// benchmark's thousands too.
type Server struct {
	*httptest.Server
	// Log, when set, receives every request body, one JSON line each.
	Log string
	// Cycle starts the script again past its end, instead of repeating
	// its last step (for benchmarks).
	Cycle bool
	// Forget keeps no request (for benchmarks: thousands of them).
	Forget bool

	mu       sync.Mutex
	script   []Step
	requests []map[string]any
	headers  []http.Header
	calls    int
	served   int
	last     []byte // the last request's body
}

// Last returns the body of the last request received.
func (s *Server) Last() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// New starts a stand-in replaying steps; Close stops it.
func New(steps ...Step) *Server {
	s := &Server{script: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Listen starts a stand-in replaying steps on l (an address of one's
// choosing, for a parley.yaml to name); Close stops it.
func Listen(l net.Listener, steps ...Step) *Server {
	s := &Server{script: steps}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.Listener.Close()
	s.Server.Listener = l
	s.Server.Start()
	return s
}

// URL returns the base URL a client is given (…/v1).
func (s *Server) URL() string { return s.Server.URL + "/v1" }

// Requests returns the requests received so far, decoded.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

// Headers returns the headers of the requests received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	var req map[string]any
	if !s.Forget {
		_ = json.Unmarshal(data, &req)
	}
	s.last = data
	n := s.served
	s.served++
	if !s.Forget {
		s.requests = append(s.requests, req)
		s.headers = append(s.headers, r.Header.Clone())
	}
	i := min(n, len(s.script)-1)
	if s.Cycle {
		i = n % len(s.script)
	}
	st := s.script[i]
	if s.Log != "" {
		if f, err := os.OpenFile(s.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			f.Write(append(bytes.TrimSpace(data), '\n'))
			f.Close()
		}
	}
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if st.Delay > 0 {
		select {
		case <-time.After(time.Duration(st.Delay)):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json") // unless Header says otherwise
	for k, v := range st.Header {
		w.Header().Set(k, v)
	}
	if st.Status != 0 && st.Status != http.StatusOK {
		w.WriteHeader(st.Status)
		body := st.Body
		if body == "" {
			body = fmt.Sprintf(`{"error":{"message":"scripted %d","type":"server_error"}}`, st.Status)
		}
		io.WriteString(w, body)
		return
	}
	if st.Body != "" {
		io.WriteString(w, st.Body)
		return
	}
	io.WriteString(w, s.completion(st))
}

// completion is a chat.completion answer of a step.
func (s *Server) completion(st Step) string {
	msg := map[string]any{"role": "assistant", "content": st.Content}
	finish := "stop"
	if len(st.Calls) > 0 {
		var calls []map[string]any
		for _, c := range st.Calls {
			s.mu.Lock()
			s.calls++
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", s.calls)
			}
			s.mu.Unlock()
			calls = append(calls, map[string]any{"id": id, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		msg["tool_calls"] = calls
		msg["content"] = nil
		finish = "tool_calls"
	}
	if st.Finish != "" {
		finish = st.Finish
	}
	var usage any = map[string]any{"prompt_tokens": st.In, "completion_tokens": st.Out, "total_tokens": st.In + st.Out}
	if st.NoUsage {
		usage = nil
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": "stand-in",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   usage,
	})
	return string(b)
}
