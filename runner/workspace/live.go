package workspace

import (
	"context"
	"sync"
	"time"
)

// MaxHold is how long whoever needs the configuration as it was saved
// (the runner's routing, Live.Current) waits for its files, being
// written, to settle: an editor that saves every few hundred
// milliseconds, or a sync tool, would hold it for as long as it goes
// on. Past it, one goes on with the configuration read before; the
// files are read once they settle.
const MaxHold = 2 * time.Second

// Settling follows the files of a workspace's configuration (parley.yaml
// and the skills: StampConfig) and decides when, changed, they are read
// again: once they have been left alone for the settle time
// (ConfigStamp.SettledAt), and meanwhile whether who looks waits for
// them: for MaxHold at most since they were first found changing. It is
// the one place that decides it: a running runner (runner/reload.go)
// and Live both ask it.
//
// A Settling is not safe for use by several goroutines.
type Settling struct {
	stamp ConfigStamp // of the files last read, or tried
	// changing is when the files were first found changed too recently
	// to be read, while they go on changing (zero once they settled).
	changing time.Time
}

// NewSettling returns a Settling of the configuration of the workspace at
// root, whose files, as they are now, count as read.
func NewSettling(root string) *Settling {
	return &Settling{stamp: StampConfig(root)}
}

// Look stamps the configuration's files of the workspace at root, at now,
// settle being its router.settle. read says they changed since they were
// last read and have settled: the caller reads them now, and later looks
// compare with them as they are (Stamp). Otherwise at is when they will
// have settled, zero when they did not change, and hold whether to wait
// till then for them: while they have been changing for less than
// MaxHold.
func (s *Settling) Look(root string, now time.Time, settle time.Duration) (read bool, at time.Time, hold bool) {
	stamp := StampConfig(root)
	if stamp.Equal(s.stamp) {
		s.changing = time.Time{}
		return false, time.Time{}, false
	}
	if at := stamp.SettledAt(now, settle); !at.IsZero() {
		if s.changing.IsZero() {
			s.changing = now
		}
		return false, at, now.Sub(s.changing) < MaxHold
	}
	s.stamp, s.changing = stamp, time.Time{}
	return true, time.Time{}, false
}

// Stamp returns the stamp of the files as they were last read, or tried.
func (s *Settling) Stamp() ConfigStamp { return s.stamp }

// Live is a workspace kept as its configuration is on disk, for a
// command that runs for long beside the runner (parley mcp, the web
// server): it reads parley.yaml and the skills again when they changed,
// when a running runner does (Settling decides for both). A
// configuration that does not load leaves the one read before in place.
// This is the one place such commands read it again.
//
// A Live is safe for use by several goroutines.
type Live struct {
	mu       sync.Mutex
	ws       *Workspace
	settling *Settling
	now      func() time.Time
	err      error // why the files last read did not load, or nil
}

// NewLive returns ws kept live; ws is as its files are now. now is the
// clock it decides by; nil is time.Now.
func NewLive(ws *Workspace, now func() time.Time) *Live {
	if now == nil {
		now = time.Now
	}
	return &Live{ws: ws, settling: NewSettling(ws.Root), now: now}
}

// Last returns the workspace as it was read last, reading nothing.
func (l *Live) Last() *Workspace {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ws
}

// Current returns the workspace as its configuration is on disk now,
// reading it again when its files changed since they were last read. It
// waits, when they changed less than the settle time ago, until they
// have been left alone for it, as the runner's routing waits (for
// MaxHold at most since they were found changing, or until ctx is done:
// then it returns the workspace read before), so that a call made just
// after parley.yaml was saved sees what was saved. When the files as
// they are do not load, it returns the workspace read before and why
// they do not (the error, not nil, until they load again).
func (l *Live) Current(ctx context.Context) (*Workspace, error) {
	ws, _, err := l.look(ctx, true)
	if err == nil {
		l.mu.Lock()
		err = l.err
		l.mu.Unlock()
	}
	return ws, err
}

// Look reads the configuration again when its files changed, as Current
// does, but waits for no file being written: files changed less than the
// settle time ago are read at a later look. read says whether the files
// were read now; err is why they did not load then (the workspace is
// the one read before), nil at the looks that read nothing.
func (l *Live) Look() (ws *Workspace, read bool, err error) {
	return l.look(context.Background(), false)
}

func (l *Live) look(ctx context.Context, wait bool) (ws *Workspace, read bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		now := l.now()
		read, at, hold := l.settling.Look(l.ws.Root, now, l.ws.Config.Router.Settle)
		if read {
			break
		}
		if at.IsZero() || !wait || !hold {
			return l.ws, false, nil // unchanged, or read at a later look
		}
		t := time.NewTimer(at.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return l.ws, false, nil
		case <-t.C:
		}
	}
	fresh, err := Open(l.ws.Root)
	if err != nil {
		l.err = err
		return l.ws, true, err
	}
	l.ws, l.err = fresh, nil
	return fresh, true, nil
}
