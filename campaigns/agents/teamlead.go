package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/campaigns/journal"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Message types the team lead sends or acts on.
const (
	SessionCommandType    = "SESSION_COMMAND"
	SessionEndType        = "SESSION_END"
	ContextRefreshType    = "CONTEXT_REFRESH"
	AwaitPlayersType      = "AWAIT_PLAYERS"
	PlayerResponsesType   = "PLAYER_RESPONSES"
	GMToPlayerType        = campaigns.GMToPlayerType
	JournalCheckpointType = campaigns.JournalCheckpointType
	NarrativeType         = "NARRATIVE"
)

// DefaultJoinWait is how long the team lead waits for the players' answers
// to an [AWAIT_PLAYERS] when parley.yaml sets no timeout for
// [GM_TO_PLAYER].
const DefaultJoinWait = 2 * time.Minute

// TeamLead is the D&D table's team lead as a built-in agent: the part of
// the team lead's job that needs no person. (What needs one — answering
// [ASK_PLAYER] and [RELAY_TO_HUMAN], rolling the human's dice, save, end,
// stepping away — the human's seat, `parley play`, sends as the team lead.)
//
//   - When the runner starts it sends [SESSION_COMMAND] command: start to
//     the game master, with the campaign, the human's character and the
//     narrative style from preferences.md and the AI-played characters;
//     when a session was already under way (the runner was restarted),
//     it sends [CONTEXT_REFRESH] to every program at the table instead
//     (a person's memory is not reset by a restart: people get none, nor
//     does an agent of another workspace with the role human). An agent
//     that joins the table while the runner runs (parley.yaml reloaded
//     with it, put back after being left out) gets the same (Joined).
//   - [AWAIT_PLAYERS] (phase 1): one [GM_TO_PLAYER] to each character
//     listed, all at once, each in the await's thread; the players' replies
//     are joined into one [PLAYER_RESPONSES] to the game master, vetoes
//     apart, once every player has answered or Wait has passed (the
//     players who did not answer are then named in it).
//   - [STATE_UPDATED]: applies the game master's deltas (as StateWriter
//     does), asks every player to write their journal
//     ([JOURNAL_CHECKPOINT]) and, with Git, commits the campaign.
//   - [SESSION_END]: writes an entry in the decision log; with Git and
//     state_saved: true, commits the campaign; asks the players to write
//     their journals, when a [NARRATIVE] came since the session's start,
//     and every agent that runs a program to shut down.
//   - [NARRATIVE] sent to it directly (a split party): kept in the scene
//     file, never passed on.
//
// Everything it knows it reads back from the mailboxes, so a team lead
// killed at any point picks up where it was.
type TeamLead struct {
	Campaigns
	// Workspace is the table: its agents, their roles and characters,
	// and the mailboxes the team lead reads its state from.
	Workspace *workspace.Workspace
	// Wait bounds a join of the players' answers (DefaultJoinWait).
	Wait time.Duration
	// Git commits the campaign at saves and at the session's end.
	Git bool
	// GitEnviron is the environment git runs with; nil: the process's.
	GitEnviron []string
	// Now is the clock (time.Now).
	Now func() time.Time
	// Log receives what it does not answer for (nil: discarded).
	Log *slog.Logger

	// reloaded is the workspace as the runner loaded it again after
	// parley.yaml changed (Reload); nil: Workspace.
	reloaded atomic.Pointer[workspace.Workspace]

	mu    sync.Mutex
	ended map[string]bool                 // agents that closed a saved session in this run
	joins map[string]map[string]time.Time // agent -> await id -> deadline
	// joined holds, for each await whose [PLAYER_RESPONSES] was made,
	// the characters whose answers it carried: known before the file is
	// in the outbox.
	joined map[string]map[string]bool
}

// join is what the mailboxes say of one [AWAIT_PLAYERS].
type join struct {
	await    *mailbox.Message
	id       string
	asker    string
	listed   []string                    // characters, in the await's order
	agents   map[string]string           // character -> the agent prompted
	answers  map[string]*mailbox.Message // character -> its answer
	asked    time.Time                   // when its prompts went out (the await's time, before)
	closed   bool                        // a [PLAYER_RESPONSES] went out
	included map[string]bool             // the characters whose answers it carried
}

// Reload has the team lead go on with the workspace as loaded again
// after parley.yaml changed: an agent removed is no longer asked for its
// journal nor to shut down, one added is.
func (t *TeamLead) Reload(ws *workspace.Workspace) { t.reloaded.Store(ws) }

// ws is the workspace as last loaded.
func (t *TeamLead) ws() *workspace.Workspace {
	if ws := t.reloaded.Load(); ws != nil {
		return ws
	}
	return t.Workspace
}

func (t *TeamLead) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *TeamLead) log() *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (t *TeamLead) wait() time.Duration {
	if t.Wait > 0 {
		return t.Wait
	}
	return DefaultJoinWait
}

// Handle acts on one message delivered to the team lead, agent.
func (t *TeamLead) Handle(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, error) {
	out, _, err := t.HandleNoted(ctx, agent, in)
	return out, err
}

// HandleNoted is Handle, and says what the record of the message handled
// should note of it, where nothing the team lead sends says so ("" for
// nothing): a [SESSION_END] of a session that ended already, taken for a
// repeat.
func (t *TeamLead) HandleNoted(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, string, error) {
	if typeOf(in) == SessionEndType {
		if prev := t.endedBefore(agent, in); prev != "" {
			id, _ := in.Header().Get("id")
			note := fmt.Sprintf("a repeat: the session ended already with %s (no start since); no journals asked for again, nobody asked to shut down", prev)
			t.log().Warn("a second SESSION_END of a session already ended, taken for a repeat", "id", id, "ended", prev)
			return nil, note, nil
		}
	}
	return t.handle(ctx, agent, in)
}

// endedBefore returns the id of a [SESSION_END] the team lead agent
// received before in, another that says the same (its summary,
// next_hook and state_saved), since its last start of a session; ""
// when there is none (in ends the session). An end that says otherwise
// (the game master sent it again with state_saved: true, or a mended
// summary) is not a repeat: it is handled, saved and logged.
func (t *TeamLead) endedBefore(agent string, in *mailbox.Message) string {
	id, _ := in.Header().Get("id")
	at, started := idTime(in), t.started(agent)
	says := func(m *mailbox.Message) [3]string {
		return [3]string{strings.TrimSpace(field(m, "summary")), strings.TrimSpace(field(m, "next_hook")), strings.TrimSpace(field(m, "state_saved"))}
	}
	prev := ""
	t.scan(agent, receivedStates, func(_ string, m *mailbox.Message) bool {
		mid, _ := m.Header().Get("id")
		if typeOf(m) == SessionEndType && mid != id && idTime(m).Before(at) && idTime(m).After(started) && says(m) == says(in) {
			prev = mid
			return false
		}
		return true
	})
	return prev
}

// handle acts on one message, and says what its record should note.
func (t *TeamLead) handle(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, string, error) {
	var out []*mailbox.Message
	var err error
	switch typeOf(in) {
	case AwaitPlayersType:
		out, err = t.fanOut(agent, in)
		return out, "", err
	case StateType:
		out, err = t.stateUpdated(ctx, agent, in)
		return out, "", err
	case SessionEndType:
		out, err = t.sessionEnd(ctx, agent, in)
		return out, "", err
	case NarrativeType:
		if direct(in) {
			// A split party: the story of one group, for the human
			// only. It is kept in the scene file; the seat shows it.
			s := &Scribe{Campaigns: t.Campaigns}
			out, err = s.Handle(ctx, in)
			return out, "", err
		}
		return nil, "", nil
	}
	if cp := t.checkpointOf(agent, in); cp != "" {
		if why := t.notEntry(agent, cp, in); why != "" {
			from, _ := in.Header().Get("from")
			id, _ := in.Header().Get("id")
			t.log().Info("a plain message about a journal checkpoint, not taken as a journal entry", "from", from, "checkpoint", cp, "message", id, "why", why)
			return nil, fmt.Sprintf("not taken as a journal entry: %s", why), nil
		}
		return nil, "", t.plainEntry(agent, cp, in)
	}
	if thread, _ := in.Header().Get("thread"); thread != "" {
		out, err = t.answered(agent, thread, in)
		return out, "", err
	}
	return nil, "", nil
}

// notEntry says why in, a plain message of a player about the
// [JOURNAL_CHECKPOINT] checkpoint, is not its journal entry ("" when it
// is): it is the entry only when it replies to the checkpoint itself
// (reply_to, not only its thread), is the player's first plain reply to
// it, and the player has no entry for it yet (a [JOURNAL_ENTRY]
// answering it, or an entry written for it). A "Done, thanks." after
// the entry is no second entry.
func (t *TeamLead) notEntry(agent, checkpoint string, in *mailbox.Message) string {
	from, _ := in.Header().Get("from")
	id, _ := in.Header().Get("id")
	if to, _ := in.Header().Get("reply_to"); to != checkpoint {
		return fmt.Sprintf("in the thread of the %s %s, but no reply to it", JournalCheckpointType, checkpoint)
	}
	answers := func(m *mailbox.Message) bool {
		if f, _ := m.Header().Get("from"); f != from {
			return false
		}
		to, _ := m.Header().Get("reply_to")
		thread, _ := m.Header().Get("thread")
		return to == checkpoint || thread == checkpoint
	}
	at := idTime(in)
	why := ""
	var ids []string
	look := func(_ string, m *mailbox.Message) bool {
		mid, _ := m.Header().Get("id")
		if mid == id || !answers(m) {
			return true
		}
		switch to, _ := m.Header().Get("reply_to"); {
		case typeOf(m) == JournalType:
			why = fmt.Sprintf("%s sent its [%s] %s for the %s %s already", from, JournalType, mid, JournalCheckpointType, checkpoint)
			return false
		case typeOf(m) == "" && to == checkpoint && idTime(m).Before(at):
			why = fmt.Sprintf("%s replied to the %s %s before, with %s, the journal entry", from, JournalCheckpointType, checkpoint, mid)
			return false
		}
		ids = append(ids, mid)
		return true
	}
	t.scan(agent, receivedStates, look)
	// The player's own [JOURNAL_ENTRY] went to the journal agent, not
	// to the team lead: the player's mailbox says so, or the journal
	// agent's (a player at another machine).
	if why == "" {
		t.scanBox(from, sentStates, look)
	}
	for _, a := range t.ws().Config.Agents {
		if why == "" && a.Handler == "journal" {
			t.scanBox(a.Name, receivedStates, look)
		}
	}
	if why != "" {
		return why
	}
	camp, err := t.For(in)
	if err != nil {
		return ""
	}
	players := map[string]string{}
	for _, a := range t.ws().Config.Agents {
		if a.Character != "" {
			players[a.Name] = a.Character
		}
	}
	character := characterOf(in, players)
	if character == "" {
		character = playerOf(in, players, camp)
	}
	if character == "" {
		return ""
	}
	for _, mid := range ids {
		if journal.Has(camp.JournalPath(character), mid) {
			return fmt.Sprintf("%s's journal holds its entry %s for the %s %s already", character, mid, JournalCheckpointType, checkpoint)
		}
	}
	return ""
}

// checkpointOf returns the id of the [JOURNAL_CHECKPOINT] the team lead
// sent the sender of in, when in is a plain message (no type) replying
// to it or in its thread; else "". Whether it is the entry is notEntry's.
func (t *TeamLead) checkpointOf(agent string, in *mailbox.Message) string {
	if typeOf(in) != "" {
		return ""
	}
	from, _ := in.Header().Get("from")
	if from == "" {
		return ""
	}
	to, _ := in.Header().Get("reply_to")
	thread, _ := in.Header().Get("thread")
	found := ""
	for _, id := range []string{to, thread} {
		if id == "" || found != "" {
			continue
		}
		t.scan(agent, sentStates, func(_ string, m *mailbox.Message) bool {
			if mid, _ := m.Header().Get("id"); mid != id {
				return true
			}
			if names, _ := m.Header().Names("to"); typeOf(m) == JournalCheckpointType && slices.Contains(names, from) {
				found = id
			}
			return false
		})
	}
	return found
}

// plainEntry takes a player's plain reply to a [JOURNAL_CHECKPOINT] (a
// model that wrote its entry without the [JOURNAL_ENTRY] tag) as its
// journal entry, written as the journal agent writes one (Journaler).
// What cannot be written is the error, and the reply is kept with it.
func (t *TeamLead) plainEntry(agent, checkpoint string, in *mailbox.Message) error {
	players := map[string]string{}
	for _, a := range t.ws().Config.Agents {
		if a.Character != "" {
			players[a.Name] = a.Character
		}
	}
	j := &Journaler{Campaigns: t.Campaigns, Players: players, Now: t.Now}
	from, _ := in.Header().Get("from")
	if err := j.add(in); err != nil {
		return fmt.Errorf("%s answered the %s %s without a [%s]; its reply, taken as its journal entry, was not written: %w", from, JournalCheckpointType, checkpoint, JournalType, err)
	}
	id, _ := in.Header().Get("id")
	t.log().Info("a plain reply to a journal checkpoint, taken as the journal entry", "from", from, "checkpoint", checkpoint, "message", id)
	return nil
}

// Start starts the session, or refreshes the table's context after a
// restart.
func (t *TeamLead) Start(ctx context.Context, agent string) error {
	t.recoverJoins(agent)
	camp, err := t.For(mailbox.New(nil))
	if err != nil {
		return err
	}
	if id := t.closing(agent); id != "" {
		// A runner stopped while the session closed: the end is handled
		// now (the players' journals, the shutdowns), and the next run
		// starts the next session. A start sent now would open a session
		// that the end being handled shuts down at once, and a refresh
		// of a session under way would ask the table to go on with it.
		t.log().Info("the session is closing: its end is handled now, and the next run starts the next session", "end", id)
		return nil
	}
	if t.underWay(agent) {
		return t.refresh(agent, camp, nil, restartedText)
	}
	if err := camp.CheckPrefs(); err != nil {
		// The person's character has no sheet: the seat would refuse to
		// open beside a session started so (campaign check says why).
		return fmt.Errorf("the session does not start: %w: set it right (parley campaign check says so), then restart", camp.Short(err))
	}
	m, err := SessionStart(t.ws(), camp, agent)
	if errors.Is(err, campaigns.ErrNoPreferences) || errors.Is(err, errNoCharacter) {
		t.log().Info("the session waits for preferences.md: the human's seat (parley play) asks for it", "campaign", camp.Name, "why", err)
		return nil
	}
	if err != nil {
		return err
	}
	return t.send(agent, m)
}

// Resume goes on with the table when a runner takes over from one that
// stopped (a seat whose parley run stopped): the joins are found again,
// and a session under way has the table's context refreshed, as Start
// does; but no session is started: a session over stays over.
func (t *TeamLead) Resume(ctx context.Context, agent string) error {
	t.recoverJoins(agent)
	if !t.underWay(agent) {
		return nil
	}
	camp, err := t.For(mailbox.New(nil))
	if err != nil {
		return err
	}
	return t.refresh(agent, camp, nil, restartedText)
}

// Joined gives the agents that joined the table while the runner runs
// (parley.yaml reloaded with agents it did not have: new ones, or ones
// put back after being left out, who missed what was told meanwhile) the
// catch-up a restart gives: a [CONTEXT_REFRESH] each, while a session is
// under way. People are skipped, as after a restart.
func (t *TeamLead) Joined(ctx context.Context, agent string, joined []string) error {
	if !t.underWay(agent) {
		return nil
	}
	camp, err := t.For(mailbox.New(nil))
	if err != nil {
		return err
	}
	return t.refresh(agent, camp, joined, joinedText)
}

// The texts of a [CONTEXT_REFRESH]: after a restart of the runner, and
// to an agent that joined the table while it ran.
const (
	restartedText = "The runner was restarted: read the campaign files again and go on from where the story is.\n"
	joinedText    = "You join the table while the session is under way (parley.yaml did not have you until now): read the campaign files again and go on from where the story is.\n"
)

var errNoCharacter = errors.New("preferences.md names no player character or no narrative style")

// SessionStart returns the [SESSION_COMMAND] command: start that begins a
// session of camp, sent by agent (the team lead): the human's character
// and the narrative style from preferences.md, the characters the AI
// players play (the agents with the role player, by their characters;
// else every other sheet in party/).
func SessionStart(ws *workspace.Workspace, camp *campaigns.Campaign, agent string) (*mailbox.Message, error) {
	p, err := camp.ReadPrefs()
	if err != nil {
		return nil, err
	}
	if p.Character == "" || p.Style == "" {
		return nil, fmt.Errorf("%s: %w", camp.Path(campaigns.Preferences), errNoCharacter)
	}
	var ai []string
	for _, a := range ws.Config.Agents {
		if !ws.HasRole(a.Name, "player") {
			continue
		}
		c := a.Character
		if c == "" {
			c = a.Name
		}
		if c != p.Character {
			ai = append(ai, c)
		}
	}
	if len(ai) == 0 {
		all, err := camp.Characters()
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c != p.Character {
				ai = append(ai, c)
			}
		}
	}
	body := fmt.Sprintf("Begin the session of %s. The human plays %s.\n", campaigns.Title(camp.Name), p.Character)
	if last := lastEnd(camp); last != "" {
		body += fmt.Sprintf("\nHow the last session ended (%s):\n\n%s\n", ws.Short(camp.Path(campaigns.DecisionLog)), last)
	}
	m := mailbox.New([]byte(body))
	m.Set("id", (&mailbox.IDs{}).New(agent))
	m.Set("from", agent)
	m.Set("type", SessionCommandType)
	m.Set("command", "start")
	m.Set("campaign", camp.Name)
	m.Set("player_character", p.Character)
	m.Set("narrative_style", p.Style)
	m.SetNode("ai_characters", nameList(ai))
	return m, nil
}

// send writes m into agent's outbox, with an id if it has none.
func (t *TeamLead) send(agent string, m *mailbox.Message) error {
	if !m.Header().Has("id") {
		m.Set("id", (&mailbox.IDs{Now: t.now}).New(agent))
	}
	m.Set("from", agent)
	_, err := t.ws().Mailbox(agent).Send(m)
	if errors.Is(err, mailbox.ErrExists) {
		return nil // sent already, by the other path
	}
	return err
}

func nameList(names []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range names {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	}
	return n
}

// scan calls fn with each message of the agent's mailbox states, oldest
// first in each; fn returns false to stop.
func (t *TeamLead) scan(agent string, states []string, fn func(state string, m *mailbox.Message) bool) {
	t.scanBox(agent, states, fn)
}

// scanBox is scan, of any agent's mailbox (a player's, to see what it
// sent); an agent with no mailbox here has nothing to scan.
func (t *TeamLead) scanBox(agent string, states []string, fn func(state string, m *mailbox.Message) bool) {
	box := t.ws().Mailbox(agent)
	for _, state := range states {
		names, err := box.Names(state)
		if err != nil {
			continue
		}
		for _, name := range names {
			if _, ok := mailbox.IDFromName(name); !ok {
				continue
			}
			data, err := mailbox.ReadFile(box.Path(state, name), t.ws().Config.Router.MaxMessageSize)
			if err != nil {
				continue // moved on meanwhile, or not a message
			}
			m, err := mailbox.Parse(data)
			if err != nil {
				continue
			}
			if !fn(state, m) {
				return
			}
		}
	}
}

// The states of what an agent sent, and of what it received, each listed
// in the order a file moves through them: a file that moves on while they
// are read is then read in the next state, never missed.
var (
	sentStates     = []string{mailbox.Outbox, mailbox.Sent}
	receivedStates = []string{mailbox.Inbox, mailbox.Cur, mailbox.Done}
)

func idTime(m *mailbox.Message) time.Time {
	id, _ := m.Header().Get("id")
	at, _, _ := mailbox.ParseID(id)
	return at
}

// underWay reports whether a session is under way: the team lead sent a
// start, and no [SESSION_END] came after it.
func (t *TeamLead) underWay(agent string) bool {
	started := t.started(agent)
	ended := t.lastReceived(agent, SessionEndType)
	return !started.IsZero() && ended.Before(started)
}

// closing returns the id of a [SESSION_END] the team lead received and
// has not handled yet (in its inbox or cur/), or one still waiting in an
// outbox to be routed (the game master ended the session as the runner
// stopped: the next run routes it), or "".
func (t *TeamLead) closing(agent string) string {
	var id string
	found := func(_ string, m *mailbox.Message) bool {
		if typeOf(m) == SessionEndType {
			id, _ = m.Header().Get("id")
			return false
		}
		return true
	}
	t.scan(agent, []string{mailbox.Inbox, mailbox.Cur}, found)
	for _, sender := range t.ws().AgentNames() {
		if id != "" {
			break
		}
		if sender == agent {
			continue
		}
		t.scanBox(sender, []string{mailbox.Outbox}, func(state string, m *mailbox.Message) bool {
			if typeOf(m) != SessionEndType {
				return true
			}
			// One the team lead holds already (a runner killed after it
			// was delivered, before it moved to sent/) is routed again
			// to nobody: handled, or being handled.
			endID, _ := m.Header().Get("id")
			if held, err := t.ws().Mailbox(agent).Holds(endID); err == nil && held {
				return true
			}
			id = endID
			return false
		})
	}
	return id
}

// started returns when the team lead last sent a start to the game
// master ([SESSION_COMMAND] command: start); zero when it never did.
func (t *TeamLead) started(agent string) time.Time {
	var started time.Time
	t.scan(agent, sentStates, func(_ string, m *mailbox.Message) bool {
		if typeOf(m) == SessionCommandType && field(m, "command") == "start" {
			if at := idTime(m); at.After(started) {
				started = at
			}
		}
		return true
	})
	return started
}

// lastReceived returns when the last message of type typ the team lead
// received was written; zero when none.
func (t *TeamLead) lastReceived(agent, typ string) time.Time {
	if m := t.lastOf(agent, typ); m != nil {
		return idTime(m)
	}
	return time.Time{}
}

// lastOf returns the last message of type typ the team lead received
// (the latest written); nil when none.
func (t *TeamLead) lastOf(agent, typ string) *mailbox.Message {
	var last *mailbox.Message
	t.scan(agent, receivedStates, func(_ string, m *mailbox.Message) bool {
		if typeOf(m) == typ && (last == nil || idTime(m).After(idTime(last))) {
			last = m
		}
		return true
	})
	return last
}

// refresh sends [CONTEXT_REFRESH] to every agent at the table that a
// program plays (of those named in only, when it is not nil), with text:
// the campaign, the scene being told, and the start of the last
// narrative. People are skipped, here or in the workspace they live
// in (Agent.PersonThere: an agent of another workspace with the role
// human): a restart of the runner does not reset what a person remembers
// (the protocol means the message for a program's recovery after it lost
// its context).
func (t *TeamLead) refresh(agent string, camp *campaigns.Campaign, only []string, text string) error {
	scene := ""
	if s, ok, _ := scenes.Current(camp.Path(campaigns.ScenesDir)); ok {
		scene = fmt.Sprintf("%03d - %s", s.Number, s.Slug)
	}
	last := ""
	t.scan(agent, []string{mailbox.Done}, func(_ string, m *mailbox.Message) bool {
		if typeOf(m) == NarrativeType {
			last = summaryOf(string(m.Body))
		}
		return true
	})
	for _, a := range t.ws().AgentNames() {
		if a == agent || !t.ws().HasRole(a, "gm", "player", "human", "narrator") || only != nil && !slices.Contains(only, a) {
			continue
		}
		if ag, ok := t.ws().Agent(a); ok && ag.PersonThere() {
			continue
		}
		m := mailbox.New([]byte(text))
		m.Set("type", ContextRefreshType)
		m.Set("to", a)
		m.Set("campaign", camp.Name)
		if scene != "" {
			m.Set("current_scene", scene)
		}
		if last != "" {
			m.Set("last_narrative_summary", last)
		}
		if err := t.send(agent, m); err != nil {
			return err
		}
	}
	return nil
}

// summaryOf returns the first sentence of a narrative, on one line.
func summaryOf(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if i := strings.IndexAny(text, ".!?"); i >= 0 {
		text = text[:i+1]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return text
}

// characterOfAgent returns the character an agent plays: its character:
// in parley.yaml, else its name.
func (t *TeamLead) characterOfAgent(agent string) string {
	if a, ok := t.ws().Agent(agent); ok && a.Character != "" {
		return a.Character
	}
	return agent
}

// fanOut sends the prompt of each character an [AWAIT_PLAYERS] lists to
// the agent that plays it, all at once.
func (t *TeamLead) fanOut(agent string, in *mailbox.Message) ([]*mailbox.Message, error) {
	id, _ := in.Header().Get("id")
	list, err := awaited(in)
	if err != nil {
		return nil, err
	}
	var out []*mailbox.Message
	for _, c := range list {
		player, ok := t.ws().Resolve(c.name)
		if !ok {
			t.log().Warn("AWAIT_PLAYERS lists a character nobody plays", "character", c.name, "await", id)
			continue
		}
		var body strings.Builder
		fmt.Fprintf(&body, "## Scene\n%s\n\n## Just Happened\n%s\n\n## Request\n%s\n", c.scene, c.happened, c.request)
		m := mailbox.New([]byte(body.String()))
		m.Set("type", GMToPlayerType)
		m.Set("to", player)
		m.Set("thread", id)
		m.Set("request_type", c.requestType)
		m.Set("scene_number", field(in, "scene_number"))
		m.Set("scene_slug", field(in, "scene_slug"))
		out = append(out, m)
	}
	t.mu.Lock()
	t.openJoin(agent, id, t.now())
	t.mu.Unlock()
	if len(out) == 0 {
		// Nobody to ask: the answer is that nobody answered.
		j := t.load(agent, id)
		return []*mailbox.Message{t.responses(agent, j)}, nil
	}
	return out, nil
}

// awaitedCharacter is one entry of an [AWAIT_PLAYERS] characters list.
type awaitedCharacter struct {
	name, requestType, scene, happened, request string
}

// awaited reads the characters list of an [AWAIT_PLAYERS].
func awaited(in *mailbox.Message) ([]awaitedCharacter, error) {
	items, ok := in.Payload().Value("characters").([]any)
	if !ok {
		return nil, fmt.Errorf("characters: expected a list of {name, request_type, scene_context, just_happened, request}")
	}
	var out []awaitedCharacter
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("characters[%d]: expected name, request_type, scene_context, just_happened and request", i)
		}
		s := func(k string) string { v, _ := m[k].(string); return strings.TrimSpace(v) }
		c := awaitedCharacter{name: campaigns.Kebab(s("name")), requestType: s("request_type"), scene: s("scene_context"), happened: s("just_happened"), request: s("request")}
		if c.name == "" {
			return nil, fmt.Errorf("characters[%d].name: missing", i)
		}
		out = append(out, c)
	}
	return out, nil
}

// openJoin notes the deadline of an await: Wait after its prompts went
// out, at. t.mu is held.
func (t *TeamLead) openJoin(agent, id string, at time.Time) {
	if t.joins == nil {
		t.joins = map[string]map[string]time.Time{}
	}
	if t.joins[agent] == nil {
		t.joins[agent] = map[string]time.Time{}
	}
	t.joins[agent][id] = at.Add(t.wait())
}

// recoverJoins finds the awaits not yet answered, after a restart.
func (t *TeamLead) recoverJoins(agent string) {
	var open []*mailbox.Message
	t.scan(agent, receivedStates, func(_ string, m *mailbox.Message) bool {
		if typeOf(m) == AwaitPlayersType {
			open = append(open, m)
		}
		return true
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range open {
		id, _ := m.Header().Get("id")
		if j := t.load(agent, id); !j.closed && t.joined[id] == nil {
			t.openJoin(agent, id, j.asked)
		}
	}
}

// load reads what the mailboxes say of an await: the prompts sent in its
// thread, the answers come back, and whether the join went out.
func (t *TeamLead) load(agent, id string) *join {
	j := &join{id: id, agents: map[string]string{}, answers: map[string]*mailbox.Message{}, included: map[string]bool{}}
	t.scan(agent, receivedStates, func(_ string, m *mailbox.Message) bool {
		if mid, _ := m.Header().Get("id"); mid == id {
			// Only an [AWAIT_PLAYERS] is joined: a thread begun by
			// another message (an [ASK_PLAYER] whose answer the game
			// master acknowledged) has no join.
			if typeOf(m) == AwaitPlayersType {
				j.await = m
			}
			return false
		}
		return true
	})
	if j.await != nil {
		j.asker, _ = j.await.Header().Get("from")
		if list, err := awaited(j.await); err == nil {
			for _, c := range list {
				j.listed = append(j.listed, c.name)
			}
		}
		j.asked = idTime(j.await)
	}
	byAgent := map[string]string{}
	t.scan(agent, sentStates, func(_ string, m *mailbox.Message) bool {
		typ := typeOf(m)
		if typ == GMToPlayerType {
			if th, _ := m.Header().Get("thread"); th == id {
				if at := idTime(m); at.After(j.asked) {
					j.asked = at
				}
				to, _ := m.Header().Names("to")
				for _, a := range to {
					c := t.characterOfAgent(a)
					j.agents[c] = a
					byAgent[a] = c
				}
			}
		}
		if typ == PlayerResponsesType {
			if r, _ := m.Header().Get("reply_to"); r == id {
				j.closed = true
				for _, key := range []string{"responses", "vetoes"} {
					items, _ := m.Payload().Value(key).([]any)
					for _, it := range items {
						if e, ok := it.(map[string]any); ok {
							c, _ := e["character"].(string)
							j.included[c] = true
						}
					}
				}
			}
		}
		return true
	})
	t.scan(agent, receivedStates, func(_ string, m *mailbox.Message) bool {
		if th, _ := m.Header().Get("thread"); th != id || typeOf(m) == AwaitPlayersType {
			return true
		}
		from, _ := m.Header().Get("from")
		if c, ok := byAgent[from]; ok && j.answers[c] == nil {
			j.answers[c] = m
		}
		return true
	})
	return j
}

// answered takes a player's answer in an await's thread: when it is the
// last one, the join goes to the game master.
func (t *TeamLead) answered(agent, thread string, in *mailbox.Message) ([]*mailbox.Message, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.load(agent, thread)
	if j.await == nil {
		return nil, nil // not a thread of an await: nothing to join
	}
	from, _ := in.Header().Get("from")
	if j.agents[t.characterOfAgent(from)] != from {
		// Not a prompted player's answer (the game master's word in
		// the thread): filed, no part of the join.
		return nil, nil
	}
	if j.closed || t.joined[thread] != nil {
		c := t.characterOfAgent(from)
		if j.included[c] || t.joined[thread][c] {
			return nil, nil // carried by the join already
		}
		// After the deadline: passed on by itself, so it is not lost.
		late := &join{id: j.id, asker: j.asker, await: j.await, agents: map[string]string{}, answers: map[string]*mailbox.Message{t.characterOfAgent(from): in}}
		late.listed = []string{t.characterOfAgent(from)}
		m := t.responses(agent, late)
		m.Delete("id") // a message of its own, not the join
		m.SetBody([]byte(fmt.Sprintf("%s answered after the others were sent on.\n", t.characterOfAgent(from))))
		return []*mailbox.Message{m}, nil
	}
	for _, c := range j.listed {
		if a, prompted := j.agents[c]; prompted && j.answers[c] == nil && a != "" {
			return nil, nil // still waiting for c
		}
	}
	delete(t.joins[agent], thread)
	t.markJoined(j)
	return []*mailbox.Message{t.responses(agent, j)}, nil
}

// markJoined notes that a join was made, and whose answers it carries.
// t.mu is held.
func (t *TeamLead) markJoined(j *join) {
	if t.joined == nil {
		t.joined = map[string]map[string]bool{}
	}
	carried := map[string]bool{}
	for c := range j.answers {
		carried[c] = true
	}
	t.joined[j.id] = carried
}

// Due returns the earliest deadline of the joins agent waits on.
func (t *TeamLead) Due(agent string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var next time.Time
	for _, d := range t.joins[agent] {
		if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	return next
}

// Tick sends the joins whose deadline has passed, naming the players who
// did not answer.
func (t *TeamLead) Tick(ctx context.Context, agent string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for id, d := range t.joins[agent] {
		if now.Before(d) {
			continue
		}
		delete(t.joins[agent], id) // once, even if sending fails: it is logged
		j := t.load(agent, id)
		if j.closed || j.await == nil || t.joined[id] != nil {
			continue
		}
		t.markJoined(j)
		if err := t.send(agent, t.responses(agent, j)); err != nil {
			errs = append(errs, fmt.Errorf("the answers to %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// responses makes the [PLAYER_RESPONSES] of a join. Its id is drawn from
// the await's, so that the join sent by the last answer and the one sent
// at the deadline are one message, never two.
func (t *TeamLead) responses(agent string, j *join) *mailbox.Message {
	responses := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	vetoes := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	var missing []string
	for _, c := range j.listed {
		a := j.answers[c]
		if a == nil {
			missing = append(missing, c)
			continue
		}
		text := strings.TrimSpace(string(a.Body))
		if reason, ok := veto(a, text); ok {
			vetoes.Content = append(vetoes.Content, pair("character", c, "reason", reason))
			continue
		}
		responses.Content = append(responses.Content, pair("character", c, "response", text))
	}
	var body strings.Builder
	fmt.Fprintf(&body, "%d of %d answered.", len(j.listed)-len(missing), len(j.listed))
	if len(missing) > 0 {
		fmt.Fprintf(&body, " No answer in time from %s.", strings.Join(missing, ", "))
	}
	body.WriteString("\n")
	m := mailbox.New([]byte(body.String()))
	at := idTime(j.await)
	if at.IsZero() {
		at = t.now()
	}
	m.Set("id", mailbox.IDOf(agent, at.Add(time.Microsecond), PlayerResponsesType, []byte(j.id)))
	m.Set("type", PlayerResponsesType)
	if j.asker != "" {
		m.Set("to", j.asker)
	}
	m.Set("reply_to", j.id)
	m.Set("thread", j.id)
	m.SetNode("responses", responses)
	if len(vetoes.Content) > 0 {
		m.SetNode("vetoes", vetoes)
	}
	if len(missing) > 0 {
		m.SetNode("missing", nameList(missing))
	}
	return m
}

// veto reports whether an answer vetoes, and why: a [PLAYER_TO_GM] with
// type: VETO, or text that begins with [VETO] or VETO:.
func veto(m *mailbox.Message, text string) (string, bool) {
	if typeOf(m) == "PLAYER_TO_GM" && strings.EqualFold(field(m, "type"), "VETO") {
		return text, true
	}
	upper := strings.ToUpper(text)
	for _, p := range []string{"[VETO]", "VETO:"} {
		if strings.HasPrefix(upper, p) {
			return strings.TrimSpace(text[len(p):]), true
		}
	}
	return "", false
}

func pair(k1, v1, k2, v2 string) *yaml.Node {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str(k1), str(v1), str(k2), str(v2)}}
}

// tablePlayers returns the agents that play a character (the roles
// player and human), in parley.yaml's order: workspace.TablePlayers,
// which parley's warnings of their accepts: ask too.
func (t *TeamLead) tablePlayers() []string {
	return t.ws().TablePlayers()
}

// currentScene is the scene the story is in: the scene of the last
// [NARRATIVE] the team lead agent was sent, when it is newer than the
// newest entry of the scene being told (scenes.Current: the story may go
// back to an earlier scene), else that scene; against a scene file that
// holds no message's entry (a person started it), the higher-numbered
// one. The scribe writes the scene
// file from that same [NARRATIVE], on its own worker: a [STATE_UPDATED]
// right behind it can reach the team lead before the file is written.
func (t *TeamLead) currentScene(agent string, camp *campaigns.Campaign) (scenes.Scene, bool) {
	s, ok, _ := scenes.Current(camp.Path(campaigns.ScenesDir))
	var last scenes.Scene
	var lastAt time.Time
	t.scan(agent, []string{mailbox.Done}, func(_ string, m *mailbox.Message) bool {
		if typeOf(m) != NarrativeType {
			return true
		}
		n, err := strconv.Atoi(field(m, "scene_number"))
		slug := field(m, "scene_slug")
		if at := idTime(m); err == nil && n > 0 && slug != "" && !at.Before(lastAt) {
			last, lastAt = scenes.Scene{Number: n, Slug: slug}, at
		}
		return true
	})
	switch {
	case lastAt.IsZero():
		return s, ok
	case !ok, !s.Told.IsZero() && lastAt.After(s.Told):
		return last, true
	case s.Told.IsZero() && last.Number >= s.Number:
		return last, true // a scene file with no entry of a message: by number
	}
	return s, ok
}

// journalCheckpoints asks every player to write their journal.
func (t *TeamLead) journalCheckpoints(agent string, camp *campaigns.Campaign, trigger string) []*mailbox.Message {
	s, ok := t.currentScene(agent, camp)
	if !ok {
		return nil // no scene yet: nothing to write about
	}
	var out []*mailbox.Message
	for _, a := range t.tablePlayers() {
		m := mailbox.New([]byte("Write your journal entry for what just happened.\n"))
		m.Set("type", JournalCheckpointType)
		m.Set("to", a)
		m.Set("campaign", camp.Name)
		m.Set("scene_number", fmt.Sprintf("%03d", s.Number))
		m.Set("scene_slug", s.Slug)
		m.Set("trigger", trigger)
		out = append(out, m)
	}
	return out
}

// stateUpdated applies the deltas, asks for journals and saves.
func (t *TeamLead) stateUpdated(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, error) {
	camp, err := t.For(in)
	if err != nil {
		return nil, err
	}
	out, err := (&StateWriter{Campaigns: t.Campaigns}).Handle(ctx, in)
	if err != nil {
		return nil, err
	}
	out = append(out, t.journalCheckpoints(agent, camp, "state_updated")...)
	t.save(ctx, agent, camp, "save", "state updated by "+senderOf(in))
	return out, nil
}

func senderOf(m *mailbox.Message) string {
	from, _ := m.Header().Get("from")
	return from
}

// save commits the campaign when Git is on, with the message a
// checkpoint gives: a first line naming the kind of save, the campaign,
// its current scene and what happened, then every file saved (a person's
// own edits to a sheet or a journal among them) and those left out.
// Nothing to commit, or no repository, is logged, not an error: the story
// is on disk either way.
func (t *TeamLead) save(ctx context.Context, agent string, camp *campaigns.Campaign, kind, what string) {
	if !t.Git {
		return
	}
	res, err := t.commit(ctx, agent, camp, kind, what)
	if res != nil && len(res.LeftOut) > 0 {
		left := make([]string, len(res.LeftOut))
		for i, s := range res.LeftOut {
			left[i] = s.Path + " (" + s.Reason + ")"
		}
		t.log().Warn("git checkpoint: left out", "files", strings.Join(left, ", "))
	}
	switch {
	case errors.Is(err, checkpoint.ErrNothing):
	case err != nil:
		t.log().Warn("git checkpoint", "err", err)
	default:
		t.log().Info("git checkpoint", "commit", res.Commit, "files", len(res.Files))
	}
}

// ErrUnsaved is why SaveAfterEnd commits nothing after a session whose
// end did not say the story was saved (state_saved: not true): what a
// player writes then is written, not committed, as the session's own
// saves were not.
var ErrUnsaved = errors.New("the session's end did not save the story")

// SaveAfterEnd commits, with Git, what a player wrote after the session's
// end once the run that closed it has stopped — a person's journal
// entry, written at their seat, which stays for it — as Stop commits
// what the players wrote before that run stopped: the same commit, a
// "session end" save of "the last journal entries". It commits only
// when no session is under way (the team lead's own decision, underWay:
// the newest [SESSION_END] it received came after its last start) and
// that end said the story was saved (state_saved: true), as Stop does;
// an end that did not say so is ErrUnsaved, nothing committed; else,
// and with Git off, it returns nil and no error. Nothing changed is
// checkpoint.ErrNothing.
func (t *TeamLead) SaveAfterEnd(ctx context.Context, agent string) (*checkpoint.Result, error) {
	if !t.Git {
		return nil, nil
	}
	if t.underWay(agent) {
		return nil, nil
	}
	end := t.lastOf(agent, SessionEndType)
	if end == nil {
		return nil, nil
	}
	if !StateSaved(end) {
		said := field(end, "state_saved")
		if said == "" {
			said = "missing"
		}
		return nil, fmt.Errorf("%w (state_saved: %s)", ErrUnsaved, said)
	}
	camp, err := t.For(end)
	if err != nil {
		return nil, err
	}
	return t.commit(ctx, agent, camp, "session end", "the last journal entries")
}

// commit commits the campaign, with the message a checkpoint gives: a
// first line naming the kind of save, the campaign, its current scene
// and what happened, then every file saved and those left out. It is
// the team lead's one way to commit (checkpoint.Save, as parley
// checkpoint commits).
func (t *TeamLead) commit(ctx context.Context, agent string, camp *campaigns.Campaign, kind, what string) (*checkpoint.Result, error) {
	describe := func(changed []string) string {
		title := kind + ": " + camp.Name
		if s, ok := t.currentScene(agent, camp); ok {
			title += fmt.Sprintf(", scene %03d %s", s.Number, s.Slug)
		}
		if what != "" {
			title += ", " + what
		}
		if len(changed) == 1 {
			return title + " (1 file)"
		}
		return fmt.Sprintf("%s (%d files)", title, len(changed))
	}
	return checkpoint.Save(ctx, t.ws().Root, checkpoint.Options{Describe: describe, Environ: t.GitEnviron})
}

// sessionEnd closes the session: the decision log, the last save, the
// journals, and every program agent asked to shut down.
func (t *TeamLead) sessionEnd(ctx context.Context, agent string, in *mailbox.Message) ([]*mailbox.Message, error) {
	camp, err := t.For(in)
	if err != nil {
		return nil, err
	}
	saved := StateSaved(in)
	var out []*mailbox.Message
	if err := appendDecision(camp, t.now(), field(in, "summary"), field(in, "next_hook"), saved); errors.Is(err, textfile.ErrConflict) {
		// Not written into a conflict git left: said to people, and the
		// session ends all the same.
		t.log().Warn("the session's end is not in the decision log", "campaign", camp.Name, "err", err)
		if m := decisionUnwritten(camp, err, field(in, "summary"), t.ws().Undriven()); m != nil {
			out = append(out, m)
		}
	} else if err != nil {
		return nil, err
	}
	if saved {
		t.save(ctx, agent, camp, "session end", "")
		t.mu.Lock()
		if t.ended == nil {
			t.ended = map[string]bool{}
		}
		t.ended[agent] = true
		t.mu.Unlock()
	} else {
		t.log().Warn("the session ended with state_saved: false: no git checkpoint of unsaved state", "campaign", camp.Name)
	}
	// Ids are given here, in order: the journals are asked for before
	// the shutdowns, and each player gets them in that order. A session
	// in which nothing was told (the game master ended it at once, as a
	// scripted one whose story is told does) leaves nothing to write
	// about: no journals are asked for, or every rerun would add an entry
	// of filler.
	ids := &mailbox.IDs{Now: t.now}
	if t.lastReceived(agent, NarrativeType).After(t.started(agent)) {
		out = append(out, t.journalCheckpoints(agent, camp, "session_end")...)
	}
	for _, m := range out {
		m.Set("id", ids.New(agent))
	}
	for _, a := range t.ws().Config.Agents {
		if a.Name == agent || (a.Driver != workspace.DriverCommand && a.Driver != workspace.DriverSession) {
			continue
		}
		m := mailbox.New([]byte("The session is over. Thank you for playing.\n"))
		id := ids.New(agent)
		m.Set("id", id)
		m.Set("type", workspace.ShutdownRequest)
		m.Set("to", a.Name)
		m.Set("request_id", id)
		m.Set("reason", "the session ended")
		out = append(out, m)
	}
	return out, nil
}

// Stop commits, when a saved session ended in this run, what the players
// wrote after its end (their last journal entries), once every agent has
// stopped.
func (t *TeamLead) Stop(ctx context.Context, agent string) error {
	t.mu.Lock()
	ended := t.ended[agent]
	t.mu.Unlock()
	if !ended {
		return nil
	}
	camp, err := t.For(mailbox.New(nil))
	if err != nil {
		return err
	}
	t.save(ctx, agent, camp, "session end", "the last journal entries")
	return nil
}

// StateSaved reports whether a [SESSION_END] says the game master made
// its final save (state_saved: true): the team lead commits the campaign
// then, and a person's seat warns when it did not.
func StateSaved(end *mailbox.Message) bool {
	return strings.EqualFold(field(end, "state_saved"), "true")
}

// DecisionNotice is the notice: field of the notice the team lead sends
// people when the session's end could not be added to the decision log.
const DecisionNotice = "decision_log_unchanged"

// decisionUnwritten returns the notice to people that the session's end
// was not added to the decision log for err, with the summary that was
// not written; nil when there are no people.
func decisionUnwritten(camp *campaigns.Campaign, err error, summary string, people []string) *mailbox.Message {
	if len(people) == 0 {
		return nil
	}
	text := fmt.Sprintf("The session's end is not in %s's decision log: %s.\n", camp.Name, camp.Short(err))
	if s := strings.TrimSpace(summary); s != "" {
		text += "\nThe summary that was not written:\n\n" + s + "\n"
	}
	m := mailbox.New([]byte(text))
	m.SetNames("to", people)
	m.SetValue("notice", DecisionNotice)
	m.Set("summary", fmt.Sprintf("the session's end is not in %s's decision log: it holds a merge conflict", camp.Name))
	return m
}

// lastEnd is the last session's end as the campaign's decision log holds
// it (appendDecision writes it; a person may have edited it): the text
// under its last "## Session ended" heading, up to the next heading,
// trimmed and cut to lastEndMax bytes; "" when there is none. The next
// session's start carries it: a game master that is a model knew how the
// last session ended only while it was in its memory.
func lastEnd(camp *campaigns.Campaign) string {
	data, err := os.ReadFile(camp.Path(campaigns.DecisionLog))
	if err != nil {
		return ""
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	k := strings.LastIndex(text, decisionHead)
	if k < 0 {
		return ""
	}
	_, rest, _ := strings.Cut(text[k+len(decisionHead):], "\n")
	if end := strings.Index(rest, "\n#"); end >= 0 {
		rest = rest[:end]
	}
	rest = strings.TrimSpace(rest)
	if len(rest) > lastEndMax {
		rest = strings.ToValidUTF8(rest[:lastEndMax], "") + " ..."
	}
	return rest
}

// lastEndMax bounds what a session's start quotes of the decision log.
const lastEndMax = 2000

// decisionHead begins each session's end in the decision log.
const decisionHead = "\n## Session ended "

// appendDecision adds the session's end to the campaign's decision log.
func appendDecision(camp *campaigns.Campaign, now time.Time, summary, hook string, saved bool) error {
	path := camp.Path(campaigns.DecisionLog)
	// A person may be writing the log meanwhile: textfile.Edit starts
	// again from their save.
	return textfile.Edit(path, func(data []byte) ([]byte, error) {
		if data == nil {
			data = []byte("# Decision Log: " + campaigns.Title(camp.Name) + "\n")
		}
		return decisionText(data, now, summary, hook, saved, path)
	})
}

// decisionText is data, the decision log at path, with the session's end
// added; nil when it holds that end already.
func decisionText(data []byte, now time.Time, summary, hook string, saved bool, path string) ([]byte, error) {
	var entry strings.Builder
	if summary != "" {
		entry.WriteString(strings.TrimSpace(summary) + "\n\n")
	}
	if hook != "" {
		fmt.Fprintf(&entry, "**Next**: %s\n", strings.TrimSpace(hook))
	}
	state := "saved"
	if !saved {
		state = "NOT saved (state_saved: false)"
	}
	fmt.Fprintf(&entry, "**State**: %s\n", state)
	// The same end said again (a [SESSION_END] handled again after a
	// crash, or each rerun of a table whose scripted game master has
	// told its story) is in the log already: it is not written twice.
	const head = decisionHead
	if k := strings.LastIndex(string(data), head); k >= 0 {
		last := string(data[k+len(head):])
		last = strings.ReplaceAll(last, "\r\n", "\n")
		if _, rest, ok := strings.Cut(last, "\n\n"); ok && strings.TrimSpace(rest) == strings.TrimSpace(entry.String()) {
			return nil, nil
		}
	}
	if err := textfile.CheckConflict(path, data); err != nil {
		return nil, err
	}
	// The entry follows the file's line ending (CRLF in a clone made
	// with core.autocrlf), never mixed ones.
	var add strings.Builder
	if !bytes.HasSuffix(data, []byte("\n")) {
		add.WriteString("\n")
	}
	fmt.Fprintf(&add, "%s%s\n\n", head, now.UTC().Format("2006-01-02 15:04 UTC"))
	add.WriteString(entry.String())
	b := append(slices.Clip(data), textfile.WithNewline(add.String(), textfile.Newline(data))...)
	return b, nil
}
