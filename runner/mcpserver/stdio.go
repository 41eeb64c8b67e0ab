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
//   - At the end of In (or a failure to read it), every request read
//     before it is answered before the connection ends: a client never
//     sees a side effect of a call without its answer. Ended tells when
//     that end is read, so that a wait in progress (Options.Stop) can
//     answer at once rather than run its time.
//
// A Stdio is connected once.
type Stdio struct {
	in    io.ReadCloser
	out   io.Writer
	ended chan struct{}
}

// NewStdio returns a transport reading in and writing out.
func NewStdio(in io.ReadCloser, out io.Writer) *Stdio {
	return &Stdio{in: in, out: out, ended: make(chan struct{})}
}

// Ended is closed when the input has been read to its end (or could not
// be read further).
func (t *Stdio) Ended() <-chan struct{} { return t.ended }

// Connect implements [mcp.Transport].
func (t *Stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.out}
	lines := &lineFilter{r: bufio.NewReader(t.in), c: t.in, out: out, ended: t.ended}
	// The lines are bounded here: the SDK's bound would end the session.
	inner, err := (&mcp.IOTransport{Reader: lines, Writer: out, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: inner, pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{}), closed: make(chan struct{})}, nil
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
	r   *bufio.Reader
	c   io.Closer
	out io.Writer
	buf []byte // what is left of the line being passed on
	err error  // the input's end, once read

	ended chan struct{} // closed when err is set
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.line()
		if err != nil {
			f.err = err // the last line, if any, is still passed on
			close(f.ended)
		}
		if tooLong {
			f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line longer than %d bytes", MaxLineLength))
			continue
		}
		if f.check(line) {
			f.buf = append(line, '\n')
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
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
		for _, raw := range raws {
			if _, err := jsonrpc.DecodeMessage(raw); err != nil {
				f.answer(nil, jsonrpc.CodeInvalidRequest, "invalid request: in a batch: "+err.Error())
				return false
			}
		}
		return true
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
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

// drainConn keeps the input's end from the SDK until every request read
// is answered: the SDK's connection stops writing answers as soon as its
// reading ends.
type drainConn struct {
	mcp.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // the requests read and not yet answered
	changed chan struct{}       // closed, and replaced, when an answer is written

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain()
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return msg, nil
}

// drain waits until every request read is answered, or the connection
// is closed (an interrupt: the SDK then answers nothing more).
func (c *drainConn) drain() {
	for {
		c.mu.Lock()
		n, changed := len(c.pending), c.changed
		c.mu.Unlock()
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
		c.mu.Lock()
		delete(c.pending, resp.ID)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
