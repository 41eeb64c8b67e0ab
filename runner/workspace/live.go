package workspace

import (
	"context"
	"sync"
	"time"
)

// Live is a workspace kept as its configuration is on disk, for a
// command that runs for long beside the runner (parley mcp, the web
// server): it reads parley.yaml and the skills again when they changed
// (StampConfig), as a running runner does (runner/reload.go), once they
// have been left alone for the settle time. A configuration that does
// not load leaves the one read before in place. This is the one place
// such commands read it again.
//
// A Live is safe for use by several goroutines.
type Live struct {
	mu    sync.Mutex
	ws    *Workspace
	stamp ConfigStamp // of the files last read, or tried
	err   error       // why the files as stamped did not load, or nil
}

// NewLive returns ws kept live; ws is as its files are now.
func NewLive(ws *Workspace) *Live {
	return &Live{ws: ws, stamp: StampConfig(ws.Root)}
}

// maxSettleWait bounds how long Current waits for files being written to
// settle, as the runner's routing waits (its maxConfigHold).
const maxSettleWait = 2 * time.Second

// Last returns the workspace as it was read last, reading nothing.
func (l *Live) Last() *Workspace {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ws
}

// Current returns the workspace as its configuration is on disk now,
// reading it again when its files changed since they were last read. It
// waits, when they changed less than the settle time ago, until they
// have been left alone for it (at most two seconds, or until ctx is
// done), so that a call made just after parley.yaml was saved sees what
// was saved. When the files as they are do not load, it returns the
// workspace read before and why they do not (the error, not nil, until
// they load again).
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
	start := time.Now()
	for {
		stamp := StampConfig(l.ws.Root)
		if stamp.Equal(l.stamp) {
			return l.ws, false, nil
		}
		if at := stamp.SettledAt(time.Now(), l.ws.Config.Router.Settle); !at.IsZero() {
			if !wait {
				return l.ws, false, nil // being written, perhaps: read at a later look
			}
			if time.Since(start) < maxSettleWait {
				t := time.NewTimer(time.Until(at))
				select {
				case <-ctx.Done():
					t.Stop()
					return l.ws, false, nil
				case <-t.C:
				}
				continue
			}
			// Still changing: read as they are, as the runner routes
			// past its hold.
		}
		l.stamp = stamp
		fresh, err := Open(l.ws.Root)
		if err != nil {
			l.err = err
			return l.ws, true, err
		}
		l.ws, l.err = fresh, nil
		return fresh, true, nil
	}
}
