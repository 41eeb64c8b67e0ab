package llm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
)

// TestKeyMasked: an endpoint that repeats the key it was sent (a gateway
// echoing it in a 401's message, a proxy's error page, a model that says
// it) had parley copy the key into the journal, the key_refused notice
// in the people's inboxes, agents.json, status, log and the run's log
// (tryout). Every text that comes from the endpoint is masked first.
func TestKeyMasked(t *testing.T) {
	const key = "sk-SECRETKEY-12345"
	const masked = "sk-…2345"
	for _, tt := range []struct {
		name string
		step step
		// answered: the step is an answer, and its message is sent
		answered bool
	}{
		{"401 echoing the key", step{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: Bearer ` + key + `","type":"invalid_request_error"}}`}, false},
		{"a page that is no chat completion echoing the key", step{Status: 200, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>Bearer " + key + " refused</html>"}, false},
		{"an answer holding the key", step{Content: "Your key is " + key + "."}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStandin(t, tt.step)
			ws := table(t, s.URL(), "      key_env: STANDIN_KEY\n")
			a, err := llm.New(llm.Options{Agent: "gm", Workspace: ws, Getenv: func(k string) string {
				if k == "STANDIN_KEY" {
					return key
				}
				return ""
			}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Handle(context.Background(), incoming(t, "Hi."))
			if got := s.Headers()[0].Get("Authorization"); got != "Bearer "+key {
				t.Fatalf("Authorization = %q: the key was not sent", got)
			}
			var said []string
			if tt.answered {
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range out {
					said = append(said, string(m.Bytes()))
				}
			} else {
				if err == nil {
					t.Fatal("Handle = nil error, want the endpoint's")
				}
				said = append(said, err.Error())
			}
			if !strings.Contains(strings.Join(said, "\n"), masked) {
				t.Errorf("Handle said %q, want the key masked as %s", said, masked)
			}
			// Whatever was written: the journal, the notice in the
			// outbox, the conversation.
			var files []string
			filepath.WalkDir(ws.Root, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return nil
			})
			for _, f := range files {
				data, _ := os.ReadFile(f)
				said = append(said, string(data))
			}
			for i, s := range said {
				if strings.Contains(s, key) || strings.Contains(s, "SECRETKEY") {
					where := "Handle"
					if i >= len(said)-len(files) {
						where = files[i-(len(said)-len(files))]
					}
					t.Errorf("%s holds the key:\n%s", where, s)
				}
			}
			if !tt.answered && tt.step.Status == 401 {
				names, _ := ws.Mailbox("gm").Names(mailbox.Outbox)
				if len(names) != 1 {
					t.Errorf("gm's outbox = %v, want the key_refused notice", names)
				}
			}
		})
	}
}
