package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a NATS server Serve runs in this process. It watches its
// JetStream store: when a write finds no room (the disk is full, a quota
// is used up, or the store reached its limit, which NATS sets when it
// starts to 3/4 of the disk space free then), NATS refuses every publish
// from then on, until the server is started again, even once room is
// made. So the Server says it once in its log, and Full says it for the
// bridge's state (parley status), with what to do: make room, then
// restart. (Starting JetStream again inside the running server, which
// nats-server allows, races with its request handlers: not done.)
type Server struct {
	*server.Server
	dir string
	log *slog.Logger

	mu   sync.Mutex
	full string // what the server said when its store ran out of room; "" when it did not
}

// Full says why the server's store is out of room, naming its directory
// and what to do; "" when it is not.
func (s *Server) Full() string {
	s.mu.Lock()
	full := s.full
	s.mu.Unlock()
	if full == "" {
		return ""
	}
	reason := "no space left on the disk"
	switch {
	case strings.Contains(full, "quota exceeded"):
		reason = "the disk quota is used up"
	case !strings.Contains(full, "no space left"):
		limit := int64(0)
		if c := s.JetStreamConfig(); c != nil {
			limit = c.MaxStore
		}
		reason = fmt.Sprintf("the store reached its limit of %d bytes (3/4 of the disk space free when the server started)", limit)
	}
	return s.dir + ": " + reason
}

// noteFull notes that the store is out of room, as the server said in
// msg. Called from the server's logger, it asks the server nothing (Full
// does, later): the server may hold its own locks.
func (s *Server) noteFull(msg string) {
	s.mu.Lock()
	first := s.full == ""
	if first {
		s.full = msg
	}
	s.mu.Unlock()
	if first {
		s.log.Warn("the NATS server's store is out of room: it refuses what the workspaces publish (which waits in their inboxes) until it is started again: make room there, then restart parley run --serve (or parley bridge --serve)",
			"store", s.dir, "err", msg)
	}
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

// outOfRoom reports whether an error the NATS server logged, or
// answered the bridge beside it, says its file store is out of room: the
// disk is full or its quota used up, or the store reached the server's
// limit ("insufficient resources").
func outOfRoom(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "no space left on device") ||
		strings.Contains(m, "disk quota exceeded") ||
		strings.Contains(m, "insufficient resources") ||
		strings.Contains(m, "jetstream file resource limits exceeded") ||
		strings.Contains(m, "out of file resources")
}
