package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/sys/unix"
)

// Server is a NATS server Serve runs in this process. It watches its
// JetStream store: when a write finds no room (the disk is full, or the
// store reached its limit, which NATS sets when it starts to 3/4 of the
// disk space free then), NATS refuses every publish from then on, until
// JetStream is started again, even once room is made. So the Server
// notes it (Full, said once in its log), and Mend, called now and then
// by the bridge beside it, starts JetStream again over the same store
// once the disk has more room than when it filled: the limit is set
// afresh, and what the store held is kept.
type Server struct {
	*server.Server
	dir string
	log *slog.Logger
	// free is the room left on the disk of dir; tests replace it.
	free func(dir string) (uint64, error)

	mu         sync.Mutex
	full       string // why the store is out of room; "" when it is not
	freeAtFull uint64 // the room left on the disk when it was seen full
}

// mendRoom is how much more room than when the store filled the disk
// must have for Mend to start JetStream again.
const mendRoom = 1 << 20

// Full says why the server's store is out of room, naming its
// directory; "" when it is not.
func (s *Server) Full() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full == "" {
		return ""
	}
	return s.dir + ": " + s.full
}

// noteFull notes that the store is out of room, for the reason the
// server gave in msg.
func (s *Server) noteFull(msg string) {
	reason := "no space left on the disk"
	if !strings.Contains(msg, "no space left") {
		limit := int64(0)
		if c := s.JetStreamConfig(); c != nil {
			limit = c.MaxStore
		}
		reason = fmt.Sprintf("the store reached its limit of %d bytes (3/4 of the disk space free when the server started)", limit)
	}
	free, _ := s.free(s.dir)
	s.mu.Lock()
	first := s.full == ""
	if first || free < s.freeAtFull {
		s.freeAtFull = free
	}
	if first {
		s.full = reason
	}
	s.mu.Unlock()
	if first {
		s.log.Warn("the NATS server's store is out of room: it refuses what the workspaces publish (which waits in their inboxes) until there is room; once room is made, it takes it again by itself",
			"store", s.dir, "reason", reason, "err", msg)
	}
}

// Mend starts JetStream again, over the same store, when it ran out of
// room and the disk has more room now than when it did (mendRoom). It
// reports whether it did; an error when starting again failed (the
// server then serves no stream: it must be restarted).
func (s *Server) Mend() (bool, error) {
	s.mu.Lock()
	full, was := s.full, s.freeAtFull
	s.mu.Unlock()
	if full == "" {
		return false, nil
	}
	free, err := s.free(s.dir)
	if err != nil || free < was+mendRoom {
		return false, nil
	}
	if err := s.ShutdownJetStream(); err != nil {
		return false, s.mendFailed(free, err)
	}
	// No MaxStore: NATS sets the limit afresh from the room there is now.
	if err := s.EnableJetStream(&server.JetStreamConfig{StoreDir: s.dir}); err != nil {
		return false, s.mendFailed(free, err)
	}
	s.mu.Lock()
	s.full, s.freeAtFull = "", 0
	s.mu.Unlock()
	s.log.Info("the NATS server's store has room again: JetStream started again over it, and takes what the workspaces publish", "store", s.dir, "free", free)
	return true, nil
}

func (s *Server) mendFailed(free uint64, err error) error {
	err = fmt.Errorf("starting JetStream again over %s: %w: restart parley run --serve (or parley bridge --serve)", s.dir, err)
	s.mu.Lock()
	s.full = err.Error()
	s.freeAtFull = free // not tried again until there is more room still
	s.mu.Unlock()
	s.log.Warn("the NATS server's store has room again, but JetStream could not start again", "err", err)
	return err
}

// diskFree is the room left, for an unprivileged writer, on the disk
// dir is on.
func diskFree(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// serverLog takes what the NATS server logs: a store out of room is
// noted (Server.noteFull); the rest is debug detail (a client's failed
// login, refused four times a second while it retries, is no news).
type serverLog struct{ s *Server }

func (l serverLog) Noticef(format string, v ...any) { l.debug(format, v...) }
func (l serverLog) Debugf(format string, v ...any)  {}
func (l serverLog) Tracef(format string, v ...any)  {}

// Warnf notes a store out of room too: a stream that cannot be made
// for want of room ("Stream create failed ... no space left on
// device") is a warning of the server's.
func (l serverLog) Warnf(format string, v ...any) { l.Errorf(format, v...) }

// Fatalf logs: the server's own logger would end the process.
func (l serverLog) Fatalf(format string, v ...any) {
	l.s.log.Error("NATS server", "err", fmt.Sprintf(format, v...))
}

func (l serverLog) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if outOfRoom(msg) {
		l.s.noteFull(msg)
		return
	}
	l.debug("%s", msg)
}

func (l serverLog) debug(format string, v ...any) {
	if l.s.log.Enabled(context.Background(), slog.LevelDebug) {
		l.s.log.Debug("NATS server: " + fmt.Sprintf(format, v...))
	}
}

// outOfRoom reports whether an error the NATS server logged says its
// file store is out of room: the disk is full, or the store reached the
// server's limit.
func outOfRoom(msg string) bool {
	return strings.Contains(msg, "no space left on device") ||
		strings.Contains(msg, "JetStream file resource limits exceeded") ||
		strings.Contains(msg, "JetStream out of file resources")
}
