package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// Messages delivered and then removed outside parley. The workspace is
// often a git work tree, and an agent's git run in it acts on the
// mailboxes: a `git reset --hard` or `git checkout -- .` puts them back
// as they were committed, deleting every message delivered since, unread
// ones too. The journal, kept in git beside them, is put back with them,
// so it no longer says they were delivered. The runner remembers what it
// delivered in its run (the last 50,000), and looks for those copies
// when it finds the journal replaced or removed under it: those it does
// not find it says in its log, once, and writes to .parley/gone.json
// (left out of git: a reset does not take it back), which `parley status`
// reads, saying those still missing (a `git stash pop` may put them
// back). Only this run's deliveries are looked for: a stat each, at
// those moments alone.

// GonePath returns the path of .parley/gone.json: the messages a runner
// delivered that were gone from their recipients' mailboxes when it
// looked (see Gone).
func (w *Workspace) GonePath() string { return filepath.Join(w.Root, StateDir, "gone.json") }

// Gone is the content of .parley/gone.json: by agent, the ids of the
// messages a runner delivered to it that its mailbox held in none of
// inbox/, cur/, done/ and dead/ when the runner looked, at Found.
type Gone struct {
	Found  time.Time           `json:"found"`
	Agents map[string][]string `json:"agents"`
}

// Count is how many messages g holds.
func (g Gone) Count() int {
	n := 0
	for _, ids := range g.Agents {
		n += len(ids)
	}
	return n
}

// Names are the agents of g, sorted.
func (g Gone) Names() []string {
	names := make([]string, 0, len(g.Agents))
	for a, ids := range g.Agents {
		if len(ids) > 0 {
			names = append(names, a)
		}
	}
	slices.Sort(names)
	return names
}

// WriteGone replaces .parley/gone.json with g, adding to what it holds
// of messages still missing (StillGone); it removes the file when
// nothing is missing.
func (w *Workspace) WriteGone(g Gone) error {
	old, err := w.StillGone()
	if err != nil {
		return err
	}
	for a, ids := range old.Agents {
		for _, id := range ids {
			if !slices.Contains(g.Agents[a], id) {
				if g.Agents == nil {
					g.Agents = map[string][]string{}
				}
				g.Agents[a] = append(g.Agents[a], id)
			}
		}
	}
	if g.Count() == 0 {
		if err := os.Remove(w.GonePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if !old.Found.IsZero() && old.Found.Before(g.Found) {
		g.Found = old.Found
	}
	for _, ids := range g.Agents {
		slices.Sort(ids)
	}
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return mailbox.WriteFileAtomic(w.GonePath(), append(data, '\n'))
}

// StillGone reads .parley/gone.json and returns the messages it names
// that are still missing: of an agent of parley.yaml, held in none of its
// mailbox's received states (mailbox.Dir.Holds). A stat or four a
// message. No file: nothing is gone.
func (w *Workspace) StillGone() (Gone, error) {
	data, err := os.ReadFile(w.GonePath())
	if errors.Is(err, fs.ErrNotExist) {
		return Gone{}, nil
	}
	if err != nil {
		return Gone{}, err
	}
	var g Gone
	if err := json.Unmarshal(data, &g); err != nil {
		return Gone{}, fmt.Errorf("%s: %w", w.GonePath(), err)
	}
	still := Gone{Found: g.Found, Agents: map[string][]string{}}
	for a, ids := range g.Agents {
		if _, ok := w.Agent(a); !ok {
			continue
		}
		for _, id := range ids {
			if held, err := w.Mailbox(a).Holds(id); err == nil && !held {
				still.Agents[a] = append(still.Agents[a], id)
			}
		}
	}
	return still, nil
}

// GoneText says that n messages delivered to agent are gone from its
// mailbox, and how they likely went: the runner's log and parley status
// say it.
func GoneText(agent string, n int) string {
	what := fmt.Sprintf("%d messages delivered to %s are", n, agent)
	if n == 1 {
		what = fmt.Sprintf("1 message delivered to %s is", agent)
	}
	return what + " gone from its mailbox (removed outside parley: git reset, checkout, stash or clean?)"
}

// GoneIDs lists ids for a line of text: all of up to max, else the first
// max and how many more.
func GoneIDs(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:max], ", "), len(ids)-max)
}
