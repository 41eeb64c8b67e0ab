package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeBox is a Mailbox whose sends wait until released, so a test can
// have calls in flight when the input ends.
type fakeBox struct {
	release <-chan struct{}
	mu      sync.Mutex
	sent    int
}

func (b *fakeBox) Send(ctx context.Context, m Outgoing) (string, error) {
	if b.release != nil {
		<-b.release
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent++
	return fmt.Sprintf("m%d", b.sent), nil
}
func (b *fakeBox) Inbox(ctx context.Context) ([]Summary, error)        { return nil, nil }
func (b *fakeBox) Read(ctx context.Context, id string) (string, error) { return "", nil }
func (b *fakeBox) Reply(ctx context.Context, id string, m Outgoing) (string, error) {
	return "", nil
}
func (b *fakeBox) Done(ctx context.Context, id string) error    { return nil }
func (b *fakeBox) Protocol(ctx context.Context) (string, error) { return "", nil }
func (b *fakeBox) Unrouted(ctx context.Context) string          { return "" }

// endSignal is an input that says when it has been read to its end.
type endSignal struct {
	r    io.Reader
	once sync.Once
	end  chan struct{}
}

func (e *endSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.end) })
	}
	return n, err
}
func (e *endSignal) Close() error { return nil }

const (
	initLine    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func sendLine(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send","arguments":{"to":["gm"],"body":"hi"}}}`, id)
}

// serve runs a server on Stdio over the lines given, to their end, and
// returns what it wrote, by id ("null" for an id null).
func serve(t *testing.T, box Mailbox, in io.ReadCloser) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	s := New(box, Options{Agent: "aria"})
	if err := s.Run(ctx, NewStdio(in, &out)); err != nil {
		t.Fatalf("Run = %v, want nil at the end of the input", err)
	}
	got := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line written is not JSON: %q", line)
		}
		id, _ := json.Marshal(m["id"])
		if got[string(id)] != nil && string(id) != "null" {
			t.Errorf("two answers to id %s", id)
		}
		if string(id) == "null" {
			id = fmt.Appendf(nil, "null%d", len(got))
		}
		got[string(id)] = m
	}
	return got
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestStdioBadLine: a line that is not JSON is answered with a parse
// error (id null), one that is JSON but no JSON-RPC message with an
// invalid request, and the session goes on: the calls around them are
// answered. The SDK's stdio transport ended the session at the bad line
// and dropped the answers in flight (parley mcp exited 1).
func TestStdioBadLine(t *testing.T) {
	lines := []string{initLine, initialized, sendLine(2), `{oops`, "", `42`, `{"jsonrpc":"1.0","id":"x","method":"ping"}`, sendLine(3), `[]`}
	got := serve(t, &fakeBox{}, io.NopCloser(strings.NewReader(strings.Join(lines, "\n")+"\n")))
	for _, id := range []string{"1", "2", "3"} {
		if got[id] == nil || got[id]["error"] != nil {
			t.Errorf("id %s: answer %v, want a result", id, got[id])
		}
	}
	var codes []float64
	for id, m := range got {
		if strings.HasPrefix(id, "null") {
			codes = append(codes, errorCode(m))
		}
	}
	if len(codes) != 3 {
		t.Errorf("%d answers with id null (%v), want 3: {oops, 42, []", len(codes), codes)
	}
	if c := errorCode(got[`"x"`]); c != -32600 {
		t.Errorf("JSON-RPC 1.0 with id x: error code %v, want -32600 with its id", c)
	}
	parse := 0
	for _, c := range codes {
		if c == -32700 {
			parse++
		} else if c != -32600 {
			t.Errorf("error code %v, want -32700 or -32600", c)
		}
	}
	if parse != 1 {
		t.Errorf("%d parse errors, want 1 (for {oops)", parse)
	}
	if m := got["null0"]; m != nil && !strings.Contains(fmt.Sprint(m["error"]), "parse error: invalid character 'o'") {
		t.Errorf("the parse error says %v", m["error"])
	}
}

// TestStdioAnswersBeforeEnd: every call read before the input ends is
// answered before the session ends, though the calls are still running
// when the end is read. The SDK's transport dropped them: the message
// was sent and the client never heard.
func TestStdioAnswersBeforeEnd(t *testing.T) {
	lines := []string{initLine, initialized}
	for id := 2; id <= 12; id++ {
		lines = append(lines, sendLine(id))
	}
	in := &endSignal{r: strings.NewReader(strings.Join(lines, "\n") + "\n"), end: make(chan struct{})}
	box := &fakeBox{release: in.end}
	got := serve(t, box, in)
	for id := 2; id <= 12; id++ {
		m := got[fmt.Sprint(id)]
		if m == nil || m["error"] != nil {
			t.Errorf("id %d: answer %v, want a result", id, m)
		}
	}
	if box.sent != 11 {
		t.Errorf("%d sent, want 11", box.sent)
	}
}

// TestStdioLastLineWithoutNewline: a last line with no newline after it
// is still read, and answered.
func TestStdioLastLineWithoutNewline(t *testing.T) {
	in := strings.Join([]string{initLine, initialized, sendLine(2)}, "\r\n")
	got := serve(t, &fakeBox{}, io.NopCloser(strings.NewReader(in)))
	if got["2"] == nil || got["2"]["error"] != nil {
		t.Errorf("id 2: answer %v, want a result", got["2"])
	}
}

// TestStdioWaitEndsWithInput: a wait in progress when the input ends
// answers at once, with Stop the transport's Ended, and the session
// ends: it held parley mcp up to the wait's 300 seconds.
func TestStdioWaitEndsWithInput(t *testing.T) {
	lines := []string{initLine, initialized, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"seconds":300}}}`}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	st := NewStdio(io.NopCloser(strings.NewReader(strings.Join(lines, "\n")+"\n")), &out)
	s := New(&fakeBox{}, Options{Agent: "aria", Stop: st.Ended()})
	if err := s.Run(ctx, st); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if !strings.Contains(out.String(), `"id":2,"result":{"content":[{"type":"text","text":"no message came: the session is ending"}]`) {
		t.Errorf("the wait was answered %q, want that no message came", out.String())
	}
}

// session is a server on Stdio over pipes, for tests that write a line
// after reading an answer.
type session struct {
	t    *testing.T
	st   *Stdio
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func startSession(t *testing.T, box Mailbox) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, st: NewStdio(inR, outW), in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		err := New(box, Options{Agent: "aria", Stop: s.st.Ended()}).Run(ctx, s.st)
		outW.Close()
		s.done <- err
	}()
	return s
}

// call writes line and returns the next line written.
func (s *session) call(line string) string {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
	if !s.out.Scan() {
		s.t.Fatalf("after %s: no answer (%v)", line, s.out.Err())
	}
	return s.out.Text()
}

// end closes the input and waits for the session to end.
func (s *session) end() {
	s.t.Helper()
	s.in.Close()
	for s.out.Scan() {
		s.t.Errorf("a line after the end: %s", s.out.Text())
	}
	if err := <-s.done; err != nil {
		s.t.Errorf("Run = %v, want nil", err)
	}
}

func initVersion(v string) string {
	return strings.Replace(initLine, "2025-06-18", v, 1)
}

// TestStdioBatchDuplicateIDs: a batch that names an id twice is answered
// with an invalid-request error, and the session goes on. The SDK ended
// the session (parley mcp exited 1, its calls unanswered).
func TestStdioBatchDuplicateIDs(t *testing.T) {
	box := &fakeBox{}
	s := startSession(t, box)
	if got := s.call(initVersion("2025-03-26")); !strings.Contains(got, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize = %s", got)
	}
	if _, err := io.WriteString(s.in, initialized+"\n"); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch with the id 2 twice"}}`
	if got := s.call("[" + sendLine(2) + "," + sendLine(2) + "]"); got != want {
		t.Errorf("a batch with id 2 twice:\n got %s\nwant %s", got, want)
	}
	// A batch is still taken in 2025-03-26, and answered as one.
	got := s.call("[" + sendLine(3) + "," + sendLine(4) + "]")
	var answers []map[string]any
	if err := json.Unmarshal([]byte(got), &answers); err != nil || len(answers) != 2 {
		t.Errorf("a batch of two sends answered %s, want a list of two answers", got)
	}
	if got := s.call(sendLine(5)); !strings.Contains(got, `"id":5,"result"`) {
		t.Errorf("send after the batches = %s, want its result", got)
	}
	s.end()
	if box.sent != 3 {
		t.Errorf("%d sent, want 3 (none of the refused batch)", box.sent)
	}
}

// TestStdioBatchRefusedSince20250618: a batch in a session of protocol
// version 2025-06-18, which has no batches, is answered with an error
// saying so, and the session goes on. It was taken (the SDK learns the
// version through a method of its own package, which Stdio cannot have).
func TestStdioBatchRefusedSince20250618(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			box := &fakeBox{}
			s := startSession(t, box)
			if got := s.call(initVersion(v)); !strings.Contains(got, `"protocolVersion":"`+v+`"`) {
				t.Fatalf("initialize = %s", got)
			}
			if _, err := io.WriteString(s.in, initialized+"\n"); err != nil {
				t.Fatal(err)
			}
			want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch, which protocol version ` + v + ` has not (batches ended with 2025-06-18): send each message on a line of its own"}}`
			if got := s.call("[" + sendLine(2) + "," + sendLine(3) + "]"); got != want {
				t.Errorf("a batch:\n got %s\nwant %s", got, want)
			}
			if got := s.call(sendLine(4)); !strings.Contains(got, `"id":4,"result"`) {
				t.Errorf("send after the batch = %s, want its result", got)
			}
			s.end()
			if box.sent != 1 {
				t.Errorf("%d sent, want 1 (none of the batch)", box.sent)
			}
		})
	}
}

// TestStdioStop: Stop ends the session in good order: the calls taken
// are answered (a wait at once, a send when it is done), no line more is
// taken, and Run returns nil. The SDK's own stop (Run's context ended)
// refused to write the answers of the calls in flight.
func TestStdioStop(t *testing.T) {
	release := make(chan struct{})
	box := &fakeBox{release: release}
	s := startSession(t, box)
	if got := s.call(initLine); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize = %s", got)
	}
	for _, line := range []string{initialized, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"seconds":300}}}`, sendLine(3)} {
		if _, err := io.WriteString(s.in, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// A ping answered: the lines before it are taken.
	if got := s.call(`{"jsonrpc":"2.0","id":4,"method":"ping"}`); !strings.Contains(got, `"id":4`) {
		t.Fatalf("ping = %s", got)
	}
	s.st.Stop()
	if got := s.call(`{"jsonrpc":"2.0","id":5,"method":"ping"}`); !strings.Contains(got, `"id":2,"result":{"content":[{"type":"text","text":"no message came: the session is ending"}]}`) {
		t.Errorf("after Stop: %s, want the wait's answer", got)
	}
	close(release)
	if !s.out.Scan() || !strings.Contains(s.out.Text(), `"id":3,"result"`) {
		t.Errorf("after the send is done: %s, want its answer", s.out.Text())
	}
	s.in.Close()
	for s.out.Scan() {
		t.Errorf("a line more: %s (the ping after Stop is not taken)", s.out.Text())
	}
	if err := <-s.done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

// TestStdioBatchPipedBehindInitialize: a batch piped right behind
// initialize and initialized, all at once, is refused in 2025-06-18 as
// it is with pauses between. It was taken now and then (1 run in 3):
// the SDK reads the next lines while it handles initialize, and the
// batch was judged before the version was agreed.
func TestStdioBatchPipedBehindInitialize(t *testing.T) {
	for i := 0; i < 50; i++ {
		in := initLine + "\n" + initialized + "\n" + `[{"jsonrpc":"2.0","id":5,"method":"ping"}]` + "\n"
		got := serve(t, &fakeBox{}, &endSignal{r: strings.NewReader(in), end: make(chan struct{})})
		if got["5"] != nil {
			t.Fatalf("run %d: the batch was answered: %v", i, got["5"])
		}
		if errorCode(got["null1"]) != -32600 {
			t.Fatalf("run %d: no invalid-request error for the batch: %v", i, got)
		}
	}
}

// TestSDKTransportBatchPipedBehindInitialize shows the same race in the
// SDK's own transport, which parley mcp does not serve on (Stdio wraps
// it, and decides batches itself): the SDK's ioConn.Read (go-sdk v1.8.0,
// mcp/transport.go:706, "JSON-RPC batching is not supported") reads the
// version its sessionUpdated (transport.go:590) sets, and that is called
// only as the initialize call is handled (mcp/server.go:2090 and 1575),
// while the reader has gone on to the next lines. It is
// skipped while the SDK takes such a batch, and passes once it does not.
func TestSDKTransportBatchPipedBehindInitialize(t *testing.T) {
	in := initLine + "\n" + initialized + "\n" + `[{"jsonrpc":"2.0","id":5,"method":"ping"}]` + "\n"
	taken := 0
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		pr, pw := io.Pipe()
		out := &watchWriter{seen: `"id":5`, hit: make(chan struct{})}
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			New(&fakeBox{}, Options{Agent: "aria"}).Run(ctx, &mcp.IOTransport{Reader: pr, Writer: out})
		}()
		if _, err := io.WriteString(pw, in); err != nil {
			t.Fatal(err)
		}
		select {
		case <-out.hit: // the batch answered: the session waits for more
			taken++
		case <-ran: // the batch refused: the SDK ends the session
		}
		pw.Close()
		<-ran
		cancel()
	}
	if taken > 0 {
		t.Skipf("the SDK's IOTransport answered a batch piped behind an initialize of 2025-06-18 in %d runs of 50: its version is set as initialize is handled, after the batch is read (parley's Stdio waits for the answer to initialize)", taken)
	}
}

// watchWriter is an output that says when a write holding seen is made.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen string
	once sync.Once
	hit  chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.seen)) {
		w.once.Do(func() { close(w.hit) })
	}
	return w.buf.Write(p)
}

func (w *watchWriter) Close() error { return nil }
