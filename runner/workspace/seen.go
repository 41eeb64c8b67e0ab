package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/parley-dev/parley/mailbox"
)

// SeenPath returns the path of the file that says, for each agent, which
// messages of its inbox a person was shown (.parley/seen.json): runtime
// state, so that `parley inbox` can say what is new.
func (w *Workspace) SeenPath() string { return filepath.Join(w.Root, StateDir, "seen.json") }

// Seen is what a person was shown of an agent's inbox: every message up
// to an id, and some newer ones besides. Ids sort in the order messages
// were sent, so a listing that shows the newest few of many leaves older
// ones it did not show unseen, newer ones than those it did.
type Seen struct {
	// Upto is the id up to which (itself included) every message was
	// shown; "" when none was.
	Upto string `json:"upto"`
	// Also lists the ids newer than Upto that were shown, sorted: a
	// listing cut short (--limit) showed them, not the older ones it
	// left out.
	Also []string `json:"also,omitempty"`
}

// New reports whether the message id was not shown yet.
func (s Seen) New(id string) bool {
	if id <= s.Upto {
		return false
	}
	_, found := slices.BinarySearch(s.Also, id)
	return !found
}

// UnmarshalJSON reads a Seen written as its id alone (a mark with
// nothing newer shown, and the form of the first seen.json) or whole.
func (s *Seen) UnmarshalJSON(data []byte) error {
	var upto string
	if json.Unmarshal(data, &upto) == nil {
		*s = Seen{Upto: upto}
		return nil
	}
	type plain Seen
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*s = Seen(p)
	slices.Sort(s.Also)
	return nil
}

// MarshalJSON writes a Seen with nothing shown beyond Upto as its id
// alone.
func (s Seen) MarshalJSON() ([]byte, error) {
	if len(s.Also) == 0 {
		return json.Marshal(s.Upto)
	}
	type plain Seen
	return json.Marshal(plain(s))
}

// Seen returns what a person was shown of an agent's inbox.
func (w *Workspace) Seen(agent string) Seen {
	return w.seen()[agent]
}

func (w *Workspace) seen() map[string]Seen {
	out := map[string]Seen{}
	if data, err := os.ReadFile(w.SeenPath()); err == nil {
		if json.Unmarshal(data, &out) != nil {
			return map[string]Seen{} // a damaged file: nothing was seen
		}
	}
	return out
}

// MarkSeen records that a person was shown the messages shown of an
// agent's inbox (ids). unshown holds the ids of the messages the inbox
// holds that the listing left out: those not seen yet stay new, so that
// the mark moves up only to the oldest of them.
func (w *Workspace) MarkSeen(agent string, shown, unshown []string) error {
	all := w.seen()
	before := all[agent]
	after := before.with(shown, unshown)
	if slices.Equal(after.Also, before.Also) && after.Upto == before.Upto {
		return nil
	}
	all[agent] = after
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	err = mailbox.WriteFileAtomic(w.SeenPath(), append(data, '\n'))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a workspace without .parley/: nothing to remember in
	}
	return err
}

// with returns s with the ids shown added: the mark moves up to the
// newest id seen below the oldest unshown message still new, and the
// ids seen above it are kept in Also.
func (s Seen) with(shown, unshown []string) Seen {
	var ids []string
	for _, id := range append(slices.Clone(s.Also), shown...) {
		if id != "" && id > s.Upto {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var oldestNew string // the oldest message left out and not seen: the mark stays below it
	for _, id := range unshown {
		if id == "" || !s.New(id) {
			continue
		}
		if _, found := slices.BinarySearch(ids, id); found {
			continue
		}
		if oldestNew == "" || id < oldestNew {
			oldestNew = id
		}
	}
	n := len(ids)
	if oldestNew != "" {
		n, _ = slices.BinarySearch(ids, oldestNew)
	}
	out := Seen{Upto: s.Upto}
	if n > 0 {
		out.Upto = ids[n-1]
	}
	if n < len(ids) {
		out.Also = ids[n:]
	}
	return out
}
