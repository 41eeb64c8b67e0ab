package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Outcomes of a routing decision.
const (
	Delivered = "delivered" // every recipient has the message
	Refused   = "rejected"  // moved to rejected/, with the reason beside it
)

// Entry is one line of the routing journal (.parley/journal.jsonl): one
// routing decision, written once it is durable.
type Entry struct {
	Time    string   `json:"time"`              // when the decision became durable (UTC)
	ID      string   `json:"id,omitempty"`      // message id; empty when the file could not be read
	From    string   `json:"from"`              // the agent whose outbox held the file
	To      []string `json:"to,omitempty"`      // every recipient
	Type    string   `json:"type,omitempty"`    // the message's type
	Signal  string   `json:"signal,omitempty"`  // the message's signal
	Outcome string   `json:"outcome"`           // delivered or rejected
	Reason  string   `json:"reason,omitempty"`  // why it was rejected: "file:line: field: reason"
	Line    int      `json:"line,omitempty"`    // the line of the file the refusal is about
	Field   string   `json:"field,omitempty"`   // the field the refusal is about
	File    string   `json:"file"`              // the file's name in the outbox
	Already []string `json:"already,omitempty"` // recipients that held it already (a re-route after a crash)
	// Warnings are what the protocol had to say about a message it let
	// through: a deprecated or wrong-phase type, an informal tag.
	Warnings []string `json:"warnings,omitempty"`
	// Note is what the runner did about a message: an agent stopped
	// after approving its shutdown, a refusal, a session ended.
	Note string `json:"note,omitempty"`
}

// JournalError is a journal line that could not be read; reading goes on
// after it.
type JournalError struct {
	Line int
	Err  error
}

func (e *JournalError) Error() string { return fmt.Sprintf("journal line %d: %v", e.Line, e.Err) }

// ReadJournal calls fn for every entry of the journal at path, in order.
// Lines that are not entries (a line cut short by a crash) are skipped and
// returned together, as *JournalError values, after the whole file is read.
// A missing journal has no entries.
func ReadJournal(path string, fn func(Entry) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = readEntries(f, 0, fn)
	return err
}

// readEntries reads complete lines from r, starting at line number line
// (0-based count of lines already read), and returns the number of complete
// lines read. A trailing line without a newline is left unread.
func readEntries(r io.Reader, line int, fn func(Entry) error) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var bad []error
	n := 0
	for {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return n, errors.Join(bad...)
		}
		if err != nil {
			return n, err
		}
		n++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			bad = append(bad, &JournalError{Line: line + n, Err: err})
			continue
		}
		if err := fn(e); err != nil {
			return n, err
		}
	}
}

// FollowJournal calls fn for every entry of the journal, then for every
// entry appended later, until ctx is done. It returns nil when ctx ends it.
func FollowJournal(ctx context.Context, path string, fn func(Entry) error) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	// Watch the directory before reading, so no append falls between the
	// read and the watch.
	if err := w.Add(filepath.Dir(path)); err != nil {
		return err
	}
	var off int64
	lines := 0
	catchUp := func() error {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.Size() < off {
			off, lines = 0, 0 // the journal was replaced: start over
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		cr := &countingReader{r: f}
		n, err := readEntries(cr, lines, fn)
		lines += n
		off += cr.complete
		var je *JournalError
		if errors.As(err, &je) {
			return nil // unreadable lines are skipped when following
		}
		return err
	}
	if err := catchUp(); err != nil {
		return err
	}
	// A periodic look covers filesystems that deliver no events.
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// Whatever was written before the end is shown.
			return catchUp()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) != filepath.Clean(path) {
				continue
			}
		case err := <-w.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return err
			}
		case <-tick.C:
		}
		if err := catchUp(); err != nil {
			return err
		}
	}
}

// countingReader counts the bytes of complete lines read through it.
type countingReader struct {
	r        io.Reader
	read     int64
	complete int64 // bytes up to and including the last newline seen
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		c.complete = c.read + int64(i) + 1
	}
	c.read += int64(n)
	return n, err
}
