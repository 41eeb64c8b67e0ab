package mailbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A message id reads, in `ls`, as the UTC time it was sent, the sender and
// six hex digits that tell apart messages sent in the same microsecond:
//
//	20261121-101500.123456Z-alice-3fa9c2
//
// Ids sort by time, and a message is stored under "<id>.md" in every
// mailbox state, so a directory listing is in sending order.
const idTimeLayout = "20060102-150405.000000Z"

// Ids and names are read by hand, not by regular expressions: the router
// reads several ids per message, and a regexp costs more than the rest of
// the reading. id_test.go holds the patterns they match, as the reference.

// isName reports whether s is lower-case kebab-case: letters and digits in
// runs joined by single hyphens.
func isName(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-':
			if s[i-1] == '-' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// splitID reads the parts of an id: its time as written, its sender and
// its six hex digits. ok is false when s does not have the form of an id.
func splitID(s string) (stamp, from, suffix string, ok bool) {
	const n = len(idTimeLayout)
	if len(s) < n+1+1+1+6 || s[n] != '-' || s[len(s)-7] != '-' {
		return "", "", "", false
	}
	stamp, from, suffix = s[:n], s[n+1:len(s)-7], s[len(s)-6:]
	for i := 0; i < n; i++ {
		c, want := stamp[i], idTimeLayout[i]
		if '0' <= want && want <= '9' {
			if c < '0' || c > '9' {
				return "", "", "", false
			}
		} else if c != want {
			return "", "", "", false
		}
	}
	for i := 0; i < len(suffix); i++ {
		if c := suffix[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", "", "", false
		}
	}
	if !isName(from) {
		return "", "", "", false
	}
	return stamp, from, suffix, true
}

// stampTime reads the time part of an id (digits already checked by
// splitID), refusing what time.Parse with idTimeLayout refuses.
func stampTime(stamp string) (time.Time, error) {
	num := func(i, j int) int {
		v := 0
		for _, c := range []byte(stamp[i:j]) {
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(4, 6), num(6, 8)
	hour, minute, sec, micro := num(9, 11), num(11, 13), num(13, 15), num(16, 22)
	var bad string
	switch {
	case month < 1 || month > 12:
		bad = "month"
	case day < 1 || day > daysIn(time.Month(month), year):
		bad = "day"
	case hour > 23:
		bad = "hour"
	case minute > 59:
		bad = "minute"
	case sec > 59:
		bad = "second"
	}
	if bad != "" {
		return time.Time{}, fmt.Errorf("%s out of range", bad)
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, micro*1000, time.UTC), nil
}

// daysIn is the number of days of a month.
func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// maxNameLen bounds agent names, which are used as directory names.
const maxNameLen = 64

// ErrBadName is the error for a name that is not lower-case kebab-case.
var ErrBadName = errors.New("not a valid name: use lower-case letters, digits and single hyphens (like team-lead)")

// CheckName returns an error unless name is lower-case kebab-case: letters,
// digits and single inner hyphens, at most 64 characters. Names checked this
// way are safe to use as file and directory names.
func CheckName(name string) error {
	if len(name) > maxNameLen {
		return fmt.Errorf("%q is longer than %d characters: %w", name, maxNameLen, ErrBadName)
	}
	if !isName(name) {
		return fmt.Errorf("%q is %w", name, ErrBadName)
	}
	return nil
}

// IDs hands out message ids. Ids from one IDs value are strictly
// increasing, even when the clock stands still or steps back. The zero value
// is ready to use and reads the system clock.
type IDs struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	last time.Time
}

// New returns a fresh id for a message sent by from, which must be a valid
// name (see CheckName).
func (g *IDs) New(from string) string {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	t := now().UTC().Truncate(time.Microsecond)
	g.mu.Lock()
	if !t.After(g.last) {
		t = g.last.Add(time.Microsecond)
	}
	g.last = t
	g.mu.Unlock()
	return IDAt(from, t)
}

// IDAt returns an id for a message sent by from at time t (to the
// microsecond), with a random suffix.
func IDAt(from string, t time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
	return formatID(t.UTC().Truncate(time.Microsecond), from, hex.EncodeToString(r[:]))
}

// IDOf returns the id parley gives a file that came without one: sent by
// from at time t (to the microsecond), its six hex digits drawn from the
// file's name and content. A file routed once, then put back in its
// outbox as it was (`git checkout`, `git stash pop`), gets ids ending the
// same way: see IDSuffix.
func IDOf(from string, t time.Time, name string, content []byte) string {
	return formatID(t.UTC().Truncate(time.Microsecond), from, ContentSuffix(name, content))
}

// ContentSuffix returns the six hex digits IDOf draws from a file's name
// and content.
func ContentSuffix(name string, content []byte) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil)[:3])
}

// IDSuffix returns the six hex digits that end an id.
func IDSuffix(id string) string {
	if len(id) < 6 {
		return ""
	}
	return id[len(id)-6:]
}

// IDLen is the length of the ids parley gives a sender's messages.
func IDLen(from string) int {
	return len(formatID(time.Time{}, from, "000000"))
}

func formatID(t time.Time, from, suffix string) string {
	return t.Format(idTimeLayout) + "-" + from + "-" + suffix
}

// ParseID splits a message id into the time it was sent and its sender.
func ParseID(id string) (sent time.Time, from string, err error) {
	stamp, from, _, ok := splitID(id)
	if !ok {
		return time.Time{}, "", fmt.Errorf("%q is not a parley message id (like 20261121-101500.123456Z-alice-3fa9c2); leave id out and parley assigns one", id)
	}
	t, err := stampTime(stamp)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("%q is not a parley message id: %v", id, err)
	}
	return t, from, nil
}

// IsID reports whether s has the form of a message id.
func IsID(s string) bool {
	_, _, _, ok := splitID(s)
	return ok
}

// messageExt ends the file name of every message named by its id.
const messageExt = ".md"

// FileName returns the file name a message with this id has in every
// mailbox state: "<id>.md". IDFromName reads it back.
func FileName(id string) string { return id + messageExt }

// IDFromName returns the id of the message a file name names: id for
// "<id>.md". ok is false for any other name (a reason file, a scratch
// file, a file a person named, a name whose stem is not an id).
func IDFromName(name string) (id string, ok bool) {
	id, ok = strings.CutSuffix(name, messageExt)
	if !ok || !IsID(id) {
		return "", false
	}
	return id, true
}

// TimeFormat is how parley writes times in headers (the created field) and
// in its journal: RFC 3339, UTC, microseconds.
const TimeFormat = "2006-01-02T15:04:05.000000Z"
