package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runner/llm"
)

// TestOversizedAnswerQuoted: an answer over max_message_size was sent
// back to the model whole for each repair, each request holding the
// answers before (a 3 MB answer: requests of 3 then 6 MB), and the
// transcript in dead/ held them all (9 MB) (tryout). The model is shown
// its first and last few KiB, with what was cut and the limit; so is the
// transcript.
func TestOversizedAnswerQuoted(t *testing.T) {
	huge := "B" + strings.Repeat("A", 300<<10) + "Z"
	s := newStandin(t, step{Content: huge})
	ws := table(t, s.URL(), "      max_repairs: 2\n")
	ws.Config.Router.MaxMessageSize = 64 << 10
	_, err := agent(t, ws).Handle(context.Background(), incoming(t, "Hi."))
	var te *llm.TranscriptError
	if !errors.Is(err, llm.ErrRefused) || !errors.As(err, &te) {
		t.Fatalf("Handle = %v, want ErrRefused with the transcript", err)
	}
	if s.count() != 3 {
		t.Fatalf("%d requests, want 3 (max_repairs: 2)", s.count())
	}
	for i := 1; i < 3; i++ {
		if n := len(s.Requests()[i]["messages"].([]any)); n != 2+2*i {
			t.Errorf("request %d has %d messages, want %d", i, n, 2+2*i)
		}
		for j, m := range messages(s.request(t, i)) {
			if m["role"] != "assistant" {
				continue
			}
			c := m["content"].(string)
			if len(c) > 10<<10 {
				t.Errorf("request %d, message %d: the answer shown again is %d bytes, want at most 10 KiB", i, j, len(c))
			}
			for _, want := range []string{"B", "Z", "cut here by parley: the answer was 300.0 KiB, over the 64 KiB limit of a message (router.max_message_size in parley.yaml)"} {
				if !strings.HasPrefix(c, want) && !strings.HasSuffix(c, want) && !strings.Contains(c, want) {
					t.Errorf("request %d: the answer shown again lacks %q", i, want)
				}
			}
		}
	}
	if d := te.Detail(); len(d) > 40<<10 {
		t.Errorf("transcript: %d bytes, want it bounded (three answers of 300 KiB)", len(d))
	}
}
