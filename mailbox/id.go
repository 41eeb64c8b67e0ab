package mailbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
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

var (
	idPattern   = regexp.MustCompile(`^(\d{8}-\d{6}\.\d{6}Z)-([a-z0-9]+(?:-[a-z0-9]+)*)-([0-9a-f]{6})$`)
	namePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
)

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
	if !namePattern.MatchString(name) {
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

// IDFor returns an id for a message sent by from at time t (to the
// microsecond) whose suffix is derived from key instead of drawn at
// random: the same sender, time and key give the same id. The router
// gives it to a file it cannot write an id into, so that routed again
// after a crash the file is the same message.
func IDFor(from string, t time.Time, key []byte) string {
	sum := sha256.Sum256(key)
	return formatID(t.UTC().Truncate(time.Microsecond), from, hex.EncodeToString(sum[:3]))
}

func formatID(t time.Time, from, suffix string) string {
	return t.Format(idTimeLayout) + "-" + from + "-" + suffix
}

// ParseID splits a message id into the time it was sent and its sender.
func ParseID(id string) (sent time.Time, from string, err error) {
	m := idPattern.FindStringSubmatch(id)
	if m == nil {
		return time.Time{}, "", fmt.Errorf("%q is not a parley message id (like 20261121-101500.123456Z-alice-3fa9c2); leave id out and parley assigns one", id)
	}
	t, err := time.Parse(idTimeLayout, m[1])
	if err != nil {
		return time.Time{}, "", fmt.Errorf("%q is not a parley message id: %v", id, err)
	}
	return t, m[2], nil
}

// IsID reports whether s has the form of a message id.
func IsID(s string) bool { return idPattern.MatchString(s) }

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
