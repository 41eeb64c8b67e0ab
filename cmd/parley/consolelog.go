package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// consoleHandler writes a log for a person at a terminal: the time of
// day, the level unless it is INFO, the message, then the record's
// key=value pairs, a record a line:
//
//	21:04:05 WARN rejected agent=aria file=x.md reason="x.md:2: to: ..."
//	21:04:06 agent stopped agent=narrator
//
// A log written to a file or a pipe keeps slog's text format (time=...
// level=... msg=...), for tools. Values are quoted, with control
// characters escaped, when they hold anything but printable characters
// other than spaces, quotes and '='.
type consoleHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Leveler
	prefix string // the group of the attributes to come, "a.b."
	attrs  string // " k=v" of WithAttrs, formatted once
}

func newConsoleHandler(w io.Writer, level slog.Leveler) *consoleHandler {
	return &consoleHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if !r.Time.IsZero() {
		b.WriteString(r.Time.Local().Format(time.TimeOnly))
		b.WriteByte(' ')
	}
	if r.Level != slog.LevelInfo {
		b.WriteString(r.Level.String())
		b.WriteByte(' ')
	}
	b.WriteString(consoleText(r.Message, false))
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeConsoleAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *consoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range attrs {
		writeConsoleAttr(&b, h.prefix, a)
	}
	h2 := *h
	h2.attrs += b.String()
	return &h2
}

func (h *consoleHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix += name + "."
	return &h2
}

// writeConsoleAttr writes " key=value" (a group's attributes with the
// group's name before their keys); nothing for an empty attribute.
func writeConsoleAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup || a.Equal(slog.Attr{}) {
		return
	}
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			writeConsoleAttr(b, prefix, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(consoleText(prefix+a.Key, true))
	b.WriteByte('=')
	var s string
	switch v.Kind() {
	case slog.KindTime:
		s = v.Time().Local().Format(time.TimeOnly)
	case slog.KindDuration:
		s = v.Duration().String()
	default:
		s = fmt.Sprint(v.Any())
	}
	b.WriteString(consoleText(s, true))
}

// consoleText is s as a log line shows it: quoted when it is a value
// (or key) that would not read back as one word, or when it holds a
// character that is not printable; a message is quoted only then.
func consoleText(s string, word bool) string {
	quote := word && s == ""
	for _, r := range s {
		if !unicode.IsPrint(r) || word && (r == ' ' || r == '"' || r == '=') {
			quote = true
			break
		}
	}
	if quote {
		return strconv.Quote(s)
	}
	return s
}

var _ slog.Handler = (*consoleHandler)(nil)
