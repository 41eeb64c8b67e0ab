package llm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// BenchmarkHandle is one message handled with one model call, against a
// stand-in endpoint that answers at once: the conversation read (8000
// tokens of memory, full), the prompt built, the request encoded, the
// answer decoded and checked, the conversation written and the call
// journaled (both fsynced). The endpoint's own time is measured after,
// as a bare HTTP client posting the same request (the last one) the
// same number of times; overhead-ms/op is the difference: the driver's
// cost per model call beyond the endpoint's time.
func BenchmarkHandle(b *testing.B) {
	s := newStandin(b, step{Content: "You find a trapdoor in the floor, under a rotten rug; it is locked.", In: 100, Out: 10})
	s.Forget = true
	ws := table(b, s.URL(), "")
	a := agent(b, ws)
	in := incoming(b, "I search the room, every corner of it, for a way down.")
	for range 200 { // the memory full: its steady state
		if _, err := a.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := a.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		n++
	}
	handle := time.Since(start)
	b.StopTimer()
	body := s.Last()
	start = time.Now()
	for range n {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	endpoint := time.Since(start)
	b.ReportMetric(float64(endpoint.Microseconds())/1000/float64(n), "endpoint-ms/op")
	b.ReportMetric(float64((handle-endpoint).Microseconds())/1000/float64(n), "overhead-ms/op")
	b.ReportMetric(float64(len(body))/1024, "request-KiB")
}
