package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEStandin: the README's way to try an openai agent with no
// network works as written: the script it writes is answered, at the
// address it gives.
func TestREADMEStandin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	const script, command = `echo '{"content": "The door creaks open."}' > answers.jsonl`, "go run ./internal/standin/cmd/standin -addr 127.0.0.1:8088 answers.jsonl"
	for _, want := range []string{script, command, "base_url: http://127.0.0.1:8088/v1"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "answers.jsonl")
	if err := os.WriteFile(path, []byte(`{"content": "The door creaks open."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", path}, io.Discard, ready) }()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("run = %v before serving", err)
	}
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "The door creaks open.") {
		t.Errorf("POST chat/completions = %d %s, want the script's answer", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v after Ctrl-C, want nil", err)
	}
}

// TestBadScript: a script line that is no JSON is refused with its file
// and line.
func TestBadScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte("{\"content\": \"ok\"}\nnot json\n"), 0o644)
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", path}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl: line 2:") {
		t.Errorf("run(bad script) = %v, want the file and line 2", err)
	}
}
