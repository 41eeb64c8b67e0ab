package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength is the longest line Stdio reads as one message: the
// SDK's own bound.
const MaxLineLength = mcp.DefaultMaxLineLength

// Stdio is the transport parley mcp serves on: newline-delimited
// JSON-RPC read from In and written to Out, as the SDK's IOTransport
// speaks it, with two promises more:
//
//   - A line that is not JSON is answered with a parse error (-32700, id
//     null), and a line that is JSON but no JSON-RPC message with an
//     invalid-request error (-32600); the session goes on. The SDK's own
//     transport ends the session at the first such line, and drops the
//     answers to the requests still being handled.
//   - A batch (a line holding a list of messages) is answered with an
//     invalid-request error (id null), and the session goes on, when it
//     names an id twice or the id of a call still being answered, or
//     when the session's protocol version is 2025-06-18 or later, which
//     has no batches; a batch read while initialize is being answered
//     waits for the version it agrees on. (The SDK ends the session at
//     the first two, and cannot learn the version through a connection
//     of another package.)
//   - At the end of In (or a failure to read it), or once Stop is
//     called, every request read before is answered before the
//     connection ends: a client never sees a side effect of a call
//     without its answer. Ended tells when that end is reached, so that
//     a wait in progress (Options.Stop) can answer at once rather than
//     run its time.
//
// A Stdio is connected once.
type Stdio struct {
	in    io.ReadCloser
	out   io.Writer
	ended chan struct{}

	stopOnce sync.Once
	stop     chan struct{}
}

// NewStdio returns a transport reading in and writing out.
func NewStdio(in io.ReadCloser, out io.Writer) *Stdio {
	return &Stdio{in: in, out: out, ended: make(chan struct{}), stop: make(chan struct{})}
}

// Ended is closed when the input has been read to its end (or could not
// be read further), or Stop was called.
func (t *Stdio) Ended() <-chan struct{} { return t.ended }

// Stop ends the input where it is, as its end would: no line more is
// taken, the calls taken are answered, then the session ends (the
// server's Run returns nil). It is how a server stops in good order at
// an interrupt: the SDK's own stop, ending Run's context, drops the
// answers to the calls in flight, whose work may be done. Stop may be
// called more than once, and before Connect.
func (t *Stdio) Stop() { t.stopOnce.Do(func() { close(t.stop) }) }

// Connect implements [mcp.Transport].
func (t *Stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.out}
	calls := &calls{pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{})}
	lines := &lineFilter{r: bufio.NewReader(t.in), c: t.in, out: out, calls: calls, lines: make(chan lineRead), stop: t.stop, ended: t.ended}
	// The input is read by a goroutine of its own, so that Stop need not
	// wait for a line more. It ends at the input's end, or at Stop once
	// its read returns: a read of a terminal or a pipe cannot be
	// interrupted portably, and such a read ends with the process, as
	// the SDK's own reader does.
	go lines.readLines()
	// The lines are bounded here: the SDK's bound would end the session.
	inner, err := (&mcp.IOTransport{Reader: lines, Writer: out, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: inner, calls: calls, closed: make(chan struct{})}, nil
}

// calls are the calls passed on to the SDK and not yet answered, and the
// protocol version the session agreed on.
type calls struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	changed chan struct{} // closed, and replaced, when an answer is written

	initialize jsonrpc.ID // the id of the initialize call, once read
	version    string     // the protocol version, once initialize is answered
}

// add records the calls among msgs as in flight.
func (c *calls) add(msgs ...jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.pending[req.ID] = true
			if req.Method == "initialize" {
				c.initialize = req.ID
			}
		}
	}
}

// answered records an answer written.
func (c *calls) answered(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, resp.ID)
	if resp.ID.IsValid() && resp.ID == c.initialize && resp.Error == nil {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &res) == nil {
			c.version = res.ProtocolVersion
		}
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// awaitInitialize waits, while the initialize call read is not answered
// yet, until it is (or stop is closed): the version it agrees on decides
// whether a batch read after it is taken. The SDK handles initialize
// while the next lines are read, so a batch piped right behind it was
// read before the version was known, and taken now and then.
func (c *calls) awaitInitialize(stop <-chan struct{}) {
	for {
		c.mu.Lock()
		waiting, changed := c.initialize.IsValid() && c.pending[c.initialize], c.changed
		c.mu.Unlock()
		if !waiting {
			return
		}
		select {
		case <-changed:
		case <-stop:
			return
		}
	}
}

// batchless is the first protocol version without JSON-RPC batches.
const batchless = "2025-06-18"

// refuseBatch says why a batch of msgs is not taken, or "" if it is.
func (c *calls) refuseBatch(msgs []jsonrpc.Message) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version >= batchless {
		return fmt.Sprintf("invalid request: a batch, which protocol version %s has not (batches ended with %s): send each message on a line of its own", c.version, batchless)
	}
	seen := map[jsonrpc.ID]bool{}
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		switch {
		case seen[req.ID]:
			return fmt.Sprintf("invalid request: a batch with the id %v twice", idText(req.ID))
		case c.pending[req.ID]:
			return fmt.Sprintf("invalid request: a batch with the id %v of a call still being answered", idText(req.ID))
		}
		seen[req.ID] = true
	}
	return ""
}

// idText is an id as JSON writes it.
func idText(id jsonrpc.ID) string {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return fmt.Sprint(id.Raw())
	}
	return string(b)
}

// lockedWriter writes one message at a time: the SDK's connection writes
// each message with one Write, and the line filter answers bad lines
// beside it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Close does nothing: stdout outlives the session.
func (w *lockedWriter) Close() error { return nil }

// lineFilter passes on the lines that are JSON-RPC messages, one line
// each, and answers the others itself.
type lineFilter struct {
	r     *bufio.Reader
	c     io.Closer
	out   io.Writer
	calls *calls
	lines chan lineRead   // the lines read by readLines
	stop  <-chan struct{} // closed: take no line more
	buf   []byte          // what is left of the line being passed on
	err   error           // the input's end, once reached

	ended chan struct{} // closed when err is set
}

// lineRead is a line read, or the input's end.
type lineRead struct {
	line    []byte
	tooLong bool
	err     error
}

// readLines reads the input line by line, until its end or stop.
func (f *lineFilter) readLines() {
	for {
		line, tooLong, err := f.line()
		select {
		case f.lines <- lineRead{line, tooLong, err}:
		case <-f.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		var l lineRead
		select {
		case <-f.stop:
			f.end(io.EOF)
			continue
		default:
		}
		select {
		case <-f.stop:
			f.end(io.EOF)
			continue
		case l = <-f.lines:
		}
		if l.err != nil {
			f.end(l.err) // the last line, if any, is still passed on
		}
		if l.tooLong {
			f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line longer than %d bytes", MaxLineLength))
			continue
		}
		if f.check(l.line) {
			f.buf = append(l.line, '\n')
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// end ends the input with err.
func (f *lineFilter) end(err error) {
	f.err = err
	close(f.ended)
}

func (f *lineFilter) Close() error { return f.c.Close() }

// line reads the next line, without its end; a line longer than
// MaxLineLength is read to its end and reported as too long.
func (f *lineFilter) line() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > MaxLineLength+2 {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, tooLong, err
	}
}

// check says whether line is a JSON-RPC message (or a batch of them) to
// pass on; a line that is not is answered here. A blank line is passed
// over.
func (f *lineFilter) check(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		f.answer(nil, jsonrpc.CodeParseError, "parse error: "+err.Error())
		return false
	}
	if batch, ok := v.([]any); ok {
		if len(batch) == 0 {
			f.answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
			return false
		}
		var raws []json.RawMessage
		json.Unmarshal(line, &raws) // it is an array: it decodes
		var msgs []jsonrpc.Message
		for _, raw := range raws {
			msg, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				f.answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: in a batch: "+err.Error())
				return false
			}
			msgs = append(msgs, msg)
		}
		f.calls.awaitInitialize(f.stop)
		if why := f.calls.refuseBatch(msgs); why != "" {
			f.answer(nil, jsonrpc.CodeInvalidRequest, why)
			return false
		}
		f.calls.add(msgs...)
		return true
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var id any
		if m, ok := v.(map[string]any); ok {
			switch m["id"].(type) {
			case string, float64:
				id = m["id"]
			}
		}
		f.answer(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return false
	}
	f.calls.add(msg)
	return true
}

// answer writes an error response; id nil is JSON-RPC's null, for a
// message whose id could not be read.
func (f *lineFilter) answer(id any, code int64, message string) {
	b, err := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		return // a string or a number and a string always marshal
	}
	// A failed write is the output's failure, which the SDK's own next
	// write meets and reports.
	f.out.Write(append(b, '\n'))
}

// drainConn keeps the input's end from the SDK until every call passed
// on is answered: the SDK's connection stops writing answers as soon as
// its reading ends.
type drainConn struct {
	mcp.Connection
	calls *calls

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain()
		return nil, err
	}
	return msg, nil
}

// drain waits until every call passed on is answered, or the connection
// is closed (the SDK then answers nothing more).
func (c *drainConn) drain() {
	for {
		c.calls.mu.Lock()
		n, changed := len(c.calls.pending), c.calls.changed
		c.calls.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-c.closed:
			return
		}
	}
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.calls.answered(resp)
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
