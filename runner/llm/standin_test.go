package llm_test

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/standin"
)

// step and call are the stand-in's, shortened for the tables below.
type step = standin.Step

type call = standin.Call

func delay(d time.Duration) standin.Duration { return standin.Duration(d) }

// stand is the stand-in endpoint of a test.
type stand struct{ *standin.Server }

func newStandin(t testing.TB, script ...step) stand {
	t.Helper()
	s := standin.New(script...)
	t.Cleanup(s.Close)
	return stand{s}
}

// request returns the i-th request the stand-in was sent.
func (s stand) request(t testing.TB, i int) map[string]any {
	t.Helper()
	reqs := s.Requests()
	if i >= len(reqs) {
		t.Fatalf("the stand-in got %d requests, want at least %d", len(reqs), i+1)
	}
	return reqs[i]
}

func (s stand) count() int { return len(s.Requests()) }

// messages returns the messages of a request.
func messages(req map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range req["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}
