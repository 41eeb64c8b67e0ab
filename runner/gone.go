package runner

import (
	"slices"

	"github.com/parley-dev/parley/runner/workspace"
)

// arrival is a copy of a message put into an agent's inbox.
type arrival struct{ agent, id string }

// maxArrivals bounds the copies a runner remembers delivering (noteGone
// looks for them): a runner that routes for months keeps the last tens
// of thousands, a few MB, not every copy it ever made.
const maxArrivals = 50_000

// arrivals returns the copies this runner put into inboxes so far.
func (j *journal) arrivals() []arrival {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.arrived)
}

// noteGone looks for every copy this runner delivered in its recipient's
// mailbox (inbox/, cur/, done/, dead/), and says those it finds in none:
// removed outside parley, by git most likely (a reset or a checkout of
// the workspace puts the mailboxes back as committed; see
// workspace.Gone). A warning in the log for each agent, once for each
// message, and .parley/gone.json for parley status. It is called when the
// journal was found replaced or removed (git's doing, most often: the
// journal is tracked, and differs from what was committed once the
// runner wrote to it, so a reset or checkout that takes mailbox files
// back replaces it too): a stat or four a copy, at that moment alone.
func (r *Runner) noteGone() {
	if r.journal == nil {
		return
	}
	ws := r.ws()
	found := workspace.Gone{Found: r.opts.Now().UTC(), Agents: map[string][]string{}}
	fresh := map[string][]string{}
	local := map[string]bool{} // agent -> its mailbox is here (asked once)
	for _, a := range r.journal.arrivals() {
		here, asked := local[a.agent]
		if !asked {
			ag, ok := ws.Agent(a.agent)
			here = ok && ag.Remote == ""
			local[a.agent] = here
		}
		if !here {
			continue // forwarded to another workspace, or no agent now
		}
		held, err := ws.Mailbox(a.agent).Holds(a.id)
		if err == nil && !held {
			// Looked for again: Holds looks in inbox/, cur/, done/
			// and dead/ in turn, and a retry moving it from dead/ to
			// inbox/ between two looks hides it from both.
			held, err = ws.Mailbox(a.agent).Holds(a.id)
		}
		if err != nil || held || slices.Contains(found.Agents[a.agent], a.id) {
			continue
		}
		found.Agents[a.agent] = append(found.Agents[a.agent], a.id)
		if r.toldGone == nil {
			r.toldGone = map[arrival]bool{}
		}
		if !r.toldGone[a] {
			r.toldGone[a] = true
			fresh[a.agent] = append(fresh[a.agent], a.id)
		}
	}
	for _, agent := range (workspace.Gone{Agents: fresh}).Names() {
		ids := fresh[agent]
		r.log.Warn(workspace.GoneText(agent, len(ids)), "agent", agent, "ids", workspace.GoneIDs(ids, 5), "list", "parley status --json")
	}
	if len(fresh) == 0 && found.Count() == 0 {
		return
	}
	if err := ws.WriteGone(found); err != nil {
		r.log.Warn("cannot write the record of messages gone from their mailboxes", "path", ws.GonePath(), "err", err)
	}
}
