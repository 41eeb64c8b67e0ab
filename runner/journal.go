package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// journal appends entries to the journal file. The router and the
// agents' workers write to it at once: each append is one write of whole
// lines, under a lock.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

// openJournal opens the journal for appending. A last line cut short by a
// crash is ended, so the next entry starts on a line of its own.
func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if n := info.Size(); n > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, n-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	return &journal{f: f}, nil
}

// append writes entries, one JSON line each, in one write; they are
// durable once s.Sync returns.
func (j *journal) append(entries []workspace.Entry, s *mailbox.Syncer) error {
	if len(entries) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return err
		}
	}
	j.mu.Lock()
	_, err := j.f.Write(b.Bytes())
	j.mu.Unlock()
	s.Wrote(j.f)
	return err
}

func (j *journal) close() error { return j.f.Close() }

// journalTime formats a time for the journal.
func journalTime(t time.Time) string {
	return t.UTC().Format(mailbox.TimeFormat)
}
