package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/campaigns/journal"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// seat is a person's place at a D&D table (`parley play`): it shows what
// arrives in the person's mailbox, and sends what they say — as the team
// lead (answers, dice, save, end, stepping away) or in character, as the
// agent that plays their character. Everything it sends goes through the
// one Check, as `parley send` does.
type seat struct {
	e    *env
	ws   *workspace.Workspace
	me   string // the person's agent
	lead string // the team lead of the table
	// host says that the seat speaks for the table as the team lead
	// (/save, /end, /away, /back, the session's start): the seat of a
	// person who plays no character of their own, or of the character
	// preferences.md names. A friend's seat, of another character
	// (openSeat), plays that character only.
	host      bool
	player    string // the agent that plays the person's character; "" when none does
	character string // the person's character; "" until preferences.md names one
	where     string // where answers are given, for the journal's note; "" for parley play
	camp      *campaigns.Campaign
	out       io.Writer
	width     int
	dice      dice.Source

	shown      map[string]bool // messages shown already, by id (questions stay until answered)
	waiting    []*waitingQ     // questions and relays waiting for the person, oldest first
	told       map[string]bool // agents the person was told are unresponsive
	dead       map[string]bool // messages given up the person knows of: agent/id
	deadBefore int             // how many were given up before the seat opened
	scene      string          // the scene last shown
	ended      bool            // the session's [SESSION_END] was shown
	// unsaved is what state_saved: the [SESSION_END] shown said when it
	// was not true ("missing" when it said nothing): nothing of the
	// session is committed, nor an entry written after it; "" when the
	// story was saved.
	unsaved string
	// ends decides, while show runs, which questions a session that has
	// ended left (pastQuestion) and which ends are of an earlier session
	// (pastEnd): the mailboxes read once a show.
	ends       *agents.Ends
	arrived    chan struct{} // the bridge delivered something (nil: no bridge)
	verbose    bool          // --verbose: the runner's log shows as it is (seatLogger)
	awaiting   string        // the reply the person was last told the table waits for: agent/id (tellAwaiting)
	checkpoint string        // the scene of a [JOURNAL_CHECKPOINT] whose entry is the person's to write, until /journal ENTRY writes one
	// owed are the [JOURNAL_CHECKPOINT]s shown that ask the person for
	// their entry (owesEntry), by id: left in the inbox until /journal
	// ENTRY writes one (journalAdd files them), as the web seat leaves
	// them, not filed as shown.
	owed map[string]bool
	// showed says that the last command showed what it was asked and
	// sent nothing (/status, /sheet, /help, /journal without an entry):
	// the web seat answers it as done, not as refused.
	showed bool
	// What the seat's inboxes hold in done/ (filedElsewhere): the names
	// known, and each done/'s modification time when last listed.
	doneKnown map[string]bool
	doneAt    map[string]time.Time
	// What the agent of the person's character sent (sentElsewhere):
	// the ids this seat sent itself, those known in its outbox/ and
	// sent/, and each directory's modification time when last listed.
	sentHere  map[string]bool
	sentKnown map[string]bool
	sentAt    map[string]time.Time
	// The seat's inboxes found missing (gone: since when, by agent; git
	// removes a directory it empties), and what the seat said of each
	// (goneSaid), so that it is said once (inboxGone).
	gone     map[string]time.Time
	goneSaid map[string]string
	// configSaid is why parley.yaml as saved does not load, as the seat
	// last said it (tellConfig); "" when it loads.
	configSaid string
	// routedBy is the pid of the runner the seat last saw route the
	// table while it played beside one.
	routedBy atomic.Int64

	// The runner's workers tell of a retry (tellRetrying) from their
	// goroutines, while the seat goes on in its own.
	mu       sync.Mutex
	retrying map[string]string // agent -> the message last told tried again (tellsRetry)
}

// waitingQ is a message that waits for the person's answer.
type waitingQ struct {
	agent  string   // the copy answered: the person's, or (a prompt) their character's agent's
	copies []string // every seat inbox that holds it (agent's first); all are handled with the answer
	id     string
	m      *mailbox.Message
	typ    string
}

// name names a waiting question in a few words, as the seat says which
// one a line answers: "the question Approach" (an [ASK_PLAYER], by its
// header), "mira-quickfoot's decision" (a relay), "gm's prompt to
// mira-quickfoot".
func (q *waitingQ) name() string {
	from, _ := q.m.Header().Get("from")
	switch q.typ {
	case "ASK_PLAYER":
		return "the question " + dashIf(field(q.m, "header"), dashIf(field(q.m, "question"), q.id))
	case "RELAY_TO_HUMAN":
		return dashIf(field(q.m, "character"), from) + "'s decision"
	}
	return fmt.Sprintf("%s's prompt to %s", from, dashIf(field(q.m, "to"), q.agent))
}

// seatPerson returns the agent that is the person at a seat: as, checked
// (an agent of the workspace that no program plays), else the one human
// agent that is no team lead and plays no character.
func seatPerson(ws *workspace.Workspace, as string) (string, error) {
	if as == "" {
		var candidates []string
		for _, a := range ws.Config.Agents {
			if !a.Driven() && a.Character == "" && !ws.HasRole(a.Name, "team-lead", "player", "human", "gm", "narrator") {
				candidates = append(candidates, a.Name)
			}
		}
		if len(candidates) != 1 {
			return "", usagef("say which agent is you: --as AGENT (agents without a program, a character or a role at the table: %s)", orNone(candidates))
		}
		as = candidates[0]
	}
	if err := ws.CheckAgent(as); err != nil {
		return "", usagef("--as: %v", err)
	}
	// The seat marks what it shows handled: sat at a program's mailbox,
	// it would take messages the program never handles.
	if a, _ := ws.Agent(as); !a.Person() {
		var people []string
		for _, b := range ws.Config.Agents {
			if b.Person() {
				people = append(people, b.Name)
			}
		}
		what := fmt.Sprintf("driver: %s in %s", a.Driver, workspace.ConfigFile)
		if a.Remote != "" {
			what = fmt.Sprintf("remote: %s in %s: it lives in another workspace", a.Remote, workspace.ConfigFile)
		}
		return "", usagef("--as %s: a program plays %s (%s), and the seat would take its messages: sit as an agent without one (%s)", as, as, what, orNone(people))
	}
	return as, nil
}

// openSeat finds the seat's agents: the person's (as, else the one human
// agent that is no team lead and plays no character), the team lead's
// (lead, else the one agent with that role), and the one that plays the
// person's character.
func openSeat(e *env, ws *workspace.Workspace, as, lead string) (*seat, error) {
	s := &seat{e: e, ws: ws, out: e.stdout, width: 78, shown: map[string]bool{}, told: map[string]bool{}, dead: map[string]bool{}, dice: dice.Random()}
	// What was given up before the person sat down is counted, and said
	// once (hello): it is in parley status; the seat tells what is given
	// up while they sit, each (tellGivenUp).
	s.givenUp(func(agent, id string) { s.deadBefore++ })
	as, err := seatPerson(ws, as)
	if err != nil {
		return nil, err
	}
	s.me = as
	if lead == "" {
		var leads []string
		for _, a := range ws.AgentNames() {
			if ws.HasRole(a, "team-lead") {
				leads = append(leads, a)
			}
		}
		if len(leads) != 1 {
			return nil, usagef("say which agent is the team lead you speak as: --lead AGENT (agents with the role team-lead: %s)", orNone(leads))
		}
		lead = leads[0]
	}
	if err := ws.CheckAgent(lead); err != nil {
		return nil, usagef("--lead: %v", err)
	}
	if !ws.HasRole(lead, "team-lead") {
		return nil, usagef("--lead %s: not a team lead (role team-lead in %s): the seat speaks as the table's team lead (see `parley init --template dnd`)", lead, workspace.ConfigFile)
	}
	s.lead = lead
	camp, err := campaigns.Find(ws.Root, ws.Config.Campaign)
	if err != nil {
		return nil, err
	}
	s.camp = camp
	// A character with no sheet would be found out at the first roll:
	// said now, as campaign check says it.
	if err := camp.CheckPrefs(); err != nil {
		var ns *campaigns.NoSheetError
		if !errors.As(err, &ns) {
			return nil, err
		}
		ns.Path = ws.Short(ns.Path)
		fix := fmt.Sprintf("write the sheet (`parley character new %s`) or name another character there", ns.Character)
		if ns.Near != "" {
			fix = fmt.Sprintf("set %s: to %s/%s.md there", ns.Field, campaigns.PartyDir, ns.Near)
			if ns.Field == "name" {
				fix = fmt.Sprintf("set name: to %s there", campaigns.Title(ns.Near))
			}
		}
		return nil, fmt.Errorf("%w; the seat does not open until it is set right: %s", ns, fix)
	}
	p, perr := camp.ReadPrefs()
	if a, _ := ws.Agent(as); a.Character != "" {
		// --as names the agent of a character: the seat is that
		// character's, whoever preferences.md names (a friend plays
		// tilda while the host plays corwin), and speaks as the team
		// lead only when it is the host's: the character preferences.md
		// names.
		if aiPlayers(ws)[a.Character] == as {
			return nil, usagef("--as %s: %s plays %s as an AI player (role player in %s), and the seat would take its prompts: give %s role human (and no driver) there for a person to play %s", as, as, a.Character, workspace.ConfigFile, as, a.Character)
		}
		s.character, s.player = a.Character, as
		// While preferences.md names no character, the seat asks
		// which is the person's (askPrefs) and starts the session: the
		// first to is the host's.
		s.host = perr != nil || p.Character == "" || p.Character == a.Character
		return s, nil
	}
	s.host = true
	if perr == nil {
		if by := aiPlayers(ws)[p.Character]; by != "" {
			return nil, fmt.Errorf("%s names %s as your character, but %s, an AI agent, plays it: name yours there, or give %s role human in %s", ws.Short(camp.Path(campaigns.Preferences)), p.Character, by, by, workspace.ConfigFile)
		}
		s.setCharacter(p.Character)
	}
	return s, nil
}

// notHost says, and reports true, that what (a command of the team lead:
// /save, /end, /away, /back) is not this seat's to send: it is a friend's
// seat, of a character preferences.md does not name (openSeat).
func (s *seat) notHost(what string) bool {
	if s.host {
		return false
	}
	s.printf("%s: the team lead's, sent from the host's seat (the one of the character preferences.md names): this seat plays %s only (nothing was sent)\n", what, s.character)
	return true
}

// aiPlayers returns the characters AI agents play, each with its agent:
// an agent with the role player, or with a program, and not the role
// human. The person's seat does not take them: their prompts go to that
// agent.
func aiPlayers(ws *workspace.Workspace) map[string]string {
	ai := map[string]string{}
	for _, a := range ws.Config.Agents {
		if a.Character != "" && !ws.HasRole(a.Name, "human") &&
			(ws.HasRole(a.Name, "player") || a.Driven()) {
			ai[a.Character] = a.Name
		}
	}
	return ai
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// hello says where the person sits.
func (s *seat) hello() {
	who := "no character yet"
	if s.character != "" {
		who = s.character
		if a, ok := s.ws.Agent(s.player); ok && a.Person() {
			who += " (you answer its prompts, as " + s.player + ")"
		} else if ok {
			who += " (played by " + s.player + ")"
		}
	}
	speak := "you speak as the team lead, " + s.lead
	if !s.host {
		speak = "the host's seat speaks as the team lead (/save, /end, /away, /back are its)"
	}
	s.wrap(fmt.Sprintf("You sit at %s as %s: your character is %s; %s. /help lists the commands.", s.camp.Name, s.me, who, speak), "")
	// Agents of the table nobody plays: what is sent to them waits, and
	// the table with it; said once here, not discovered by waiting.
	var unplayed []string
	for _, a := range s.ws.Config.Agents {
		if a.Name != s.me && a.Name != s.player && a.Person() && s.ws.HasRole(a.Name, "gm", "narrator", "player") {
			unplayed = append(unplayed, a.Name)
		}
	}
	if len(unplayed) > 0 {
		s.wrap(fmt.Sprintf("(no program plays %s: the table waits on what is sent to them until %s gives them one (driver:), or a person answers for them with parley inbox and parley reply)", strings.Join(unplayed, ", "), workspace.ConfigFile), "")
	}
	if lack := s.camp.MissingRequired(); len(lack) > 0 {
		s.wrap(fmt.Sprintf("(campaign %s lacks %s, which the agents of the table read at every turn: `parley campaign fill` writes %s anew, with %s sections)", s.camp.Name, strings.Join(lack, ", "), plural(len(lack), "it", "them"), plural(len(lack), "its", "their")), "")
	}
	s.tellMalformed()
	if s.deadBefore > 0 {
		s.wrap(fmt.Sprintf("(%d %s given up before you sat down: nothing answers %s until retried; `parley status` lists %s, and `parley retry ID` hands one to its agent again)", s.deadBefore, plural(s.deadBefore, "message was", "messages were"), plural(s.deadBefore, "it", "them"), plural(s.deadBefore, "it", "them")), "")
	}
	if s.away() {
		if a, _ := s.ws.Agent(s.player); !a.Driven() {
			s.printf("you are away: %s has no program, so nobody plays %s meanwhile; /back to play on\n", s.player, s.character)
		} else {
			s.printf("you are away: %s plays %s until you are /back\n", s.player, s.character)
		}
	}
}

// tellMalformed says, as the person sits down, the files of the campaign
// that campaign check calls malformed (a sheet whose hit points read
// "twelve"): the tools cannot change them, and the story would go on
// without them. A required file missing is said apart, above.
func (s *seat) tellMalformed() {
	rep, err := s.camp.Check()
	if err != nil {
		s.wrap(fmt.Sprintf("(campaign %s could not be checked: %v)", s.camp.Name, err), "")
		return
	}
	var said []string
	for _, f := range rep.Findings {
		if f.Status != campaigns.Malformed {
			continue
		}
		d := f.Detail
		if !strings.HasPrefix(d, f.Path) {
			d = f.Path + ": " + d
		}
		said = append(said, d)
	}
	if len(said) > 0 {
		s.wrap(fmt.Sprintf("(campaign check finds %s malformed, which parley cannot change until %s set right: %s)", plural(len(said), "a file", fmt.Sprintf("%d files", len(said))), plural(len(said), "it is", "they are"), strings.Join(said, "; ")), "")
	}
}

// away reports whether the person stepped away: the last [MODE_SWITCH]
// sent for them to the agent that plays their character says AUTONOMOUS.
// It is read from the mailboxes, so a seat started again (after a crash,
// or the next evening) knows.
func (s *seat) away() bool {
	if s.player == "" {
		return false
	}
	box := s.ws.Mailbox(s.lead)
	var newest, mode string
	for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
		names, _, err := box.Newest(state, 200)
		if err != nil {
			continue
		}
		for i := len(names) - 1; i >= 0; i-- {
			id, ok := mailbox.IDFromName(names[i])
			if !ok || id <= newest {
				continue
			}
			m, err := mailbox.ReadMessage(box.Path(state, names[i]), s.ws.Config.Router.MaxMessageSize)
			if err != nil {
				continue
			}
			if typ, _ := m.Header().Get("type"); typ != "MODE_SWITCH" {
				continue
			}
			if to, _ := m.Header().Get("to"); to != s.player {
				continue
			}
			newest = id
			mode, _ = m.Payload().Get("mode")
			break
		}
	}
	return mode == "AUTONOMOUS"
}

// setCharacter notes the person's character and the agent that plays it.
func (s *seat) setCharacter(c string) {
	s.character = c
	s.player = ""
	if c == "" {
		return
	}
	for _, a := range s.ws.Config.Agents {
		if a.Character == c {
			s.player = a.Name
		}
	}
}

// printf writes a line for the person. What agents wrote is shown, never
// obeyed: control characters in it are escaped (printableText).
func (s *seat) printf(format string, args ...any) {
	s.mu.Lock()
	out := s.out
	s.mu.Unlock()
	fmt.Fprintf(textWriter{out}, format, args...)
}

// setOut makes w where the seat writes, while the runner's workers may
// be telling of a retry.
func (s *seat) setOut(w io.Writer) {
	s.mu.Lock()
	s.out = w
	s.mu.Unlock()
}

// wrap writes markdown text wrapped at the seat's width, indenting every
// line by indent: the lines of a paragraph are joined, blank lines kept,
// and each item of a list starts a line of its own.
func (s *seat) wrap(text, indent string) {
	var para []string
	lead := indent
	flush := func() {
		if len(para) == 0 {
			return
		}
		line := indent
		if lead != indent {
			line = lead[:len(lead)-2]
		}
		n := 0
		for _, w := range strings.Fields(strings.Join(para, " ")) {
			if n > 0 && len(line)+1+len(w) > s.width {
				s.printf("%s\n", line)
				line, n = lead, 0
			} else if n > 0 {
				line += " "
			}
			line += w
			n++
		}
		s.printf("%s\n", line)
		para, lead = nil, indent
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
			s.printf("\n")
		case strings.HasPrefix(t, "#"):
			// A heading (## Scene, ## Request) stands on its own line.
			flush()
			para = []string{t}
			flush()
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flush()
			para, lead = []string{t}, indent+"  "
		default:
			para = append(para, t)
		}
	}
	flush()
}

// show shows what arrived in the person's inbox since the last look: the
// story at once, questions added to what waits. A message shown and not
// waiting for an answer is marked handled.
// inboxes are the agents whose inboxes the seat shows: the person's,
// and that of the agent of their character when no program plays it —
// the game master's prompts to the character are the person's to answer
// then, or nobody would.
func (s *seat) inboxes() []string {
	boxes := []string{s.me}
	if p := s.prompted(); p != "" && p != s.me {
		boxes = append(boxes, p)
	}
	return boxes
}

// prompted is the agent whose prompts ([GM_TO_PLAYER]) are the person's
// to answer: the agent of their character, when no program plays it;
// "" when a program does, or the seat knows no character.
func (s *seat) prompted() string {
	if a, ok := s.ws.Agent(s.player); ok && a.Person() {
		return s.player
	}
	return ""
}

func (s *seat) show() error {
	s.ends = agents.NewEnds(s.ws)
	defer func() { s.ends = nil }()
	if !s.ended {
		// The questions the session leaves unanswered, when its end is
		// shown now: said, and filed.
		defer func() {
			if s.ended {
				s.leaveUnanswered()
			}
		}()
	}
	// The copies of each message in the seat's inboxes: a message to
	// both (a [NARRATIVE] to the players, copied to the person) is shown
	// once, and handled in both once shown (a question: once answered).
	first := map[string]mailbox.Entry{} // the copy read, in the first inbox holding it
	holders := map[string][]string{}    // the inboxes holding it
	var ids []string
	missing := map[string]bool{} // inboxes gone: their questions still wait
	for _, agent := range s.inboxes() {
		box := s.ws.Mailbox(agent)
		entries, err := box.List(mailbox.Inbox)
		if err != nil && box.CheckDirs(mailbox.Inbox) != nil {
			// Missing, or not a directory: made again.
			missing[agent] = true
			s.inboxGone(agent)
			continue
		}
		if err != nil {
			return err
		}
		delete(s.gone, agent)
		for _, en := range entries {
			if holders[en.ID] == nil {
				ids = append(ids, en.ID)
				first[en.ID] = en
			}
			holders[en.ID] = append(holders[en.ID], agent)
		}
	}
	// A checkpoint whose entry was written elsewhere (the web seat,
	// another terminal: filed there) waits no more.
	if len(missing) == 0 && len(s.owed) > 0 {
		for id := range s.owed {
			if holders[id] == nil {
				delete(s.owed, id)
			}
		}
		if len(s.owed) == 0 {
			s.checkpoint = ""
		}
	}
	// A question answered elsewhere (parley answer, another seat) is no
	// longer in the inbox: it waits no more.
	s.waiting = slices.DeleteFunc(s.waiting, func(q *waitingQ) bool {
		if !slices.Contains(holders[q.id], q.agent) && !missing[q.agent] {
			from, _ := q.m.Header().Get("from")
			said := ""
			if ans := s.answeredAlready(q.id, q.agent, from); ans != "" {
				said = s.answerSaid(ans, q)
			}
			s.printf("(%s, %s, was answered elsewhere%s)\n", q.id, q.name(), said)
			return true
		}
		return false
	})
	// What another seat of the same person (a second terminal, the web
	// Seat page) or parley done filed before this one showed it: shown
	// too, in its place, or the story told there is lost here.
	elsewhere := s.filedElsewhere(holders)
	for id := range elsewhere {
		ids = append(ids, id)
	}
	// What the person said in character at another seat of theirs:
	// shown here too, in its place among what answers it.
	sent := s.sentElsewhere()
	for id := range sent {
		if _, twice := elsewhere[id]; holders[id] == nil && !twice {
			ids = append(ids, id)
		}
	}
	// In id order across the inboxes: as the messages were sent.
	slices.Sort(ids)
	// A copy back from git of a message handled already is filed where
	// the message is: a question the person answered is not asked
	// again. Said once for all that came back at once (a git checkout of
	// the mailboxes brings back many).
	var back []string // copies of messages handled already, filed
	backWhere := ""   // where the first of them is handled
	ids = slices.DeleteFunc(ids, func(id string) bool {
		if _, filed := elsewhere[id]; filed {
			return false
		}
		if s.shown[id] && !s.cameBack(id, holders[id]) {
			return false
		}
		if _, said := sent[id]; said && holders[id] == nil {
			return false
		}
		where := s.fileHandled(id, holders[id])
		if where != "" {
			back = append(back, id)
			backWhere = dashIf(backWhere, where)
		}
		return where != ""
	})
	switch {
	case len(back) == 1:
		s.printf("(%s, handled already (%s), came back into your inbox: filed there, not shown again)\n", back[0], backWhere)
	case len(back) > 1:
		s.printf("(%d messages handled already came back into your inbox, %s the first: filed where they were handled (%s), not shown again)\n", len(back), back[0], backWhere)
	}
	for _, id := range ids {
		if s.shown[id] {
			// A copy delivered after the seat showed the message (the
			// router delivers to one inbox, then the other): the same
			// message, handled with it.
			if i := slices.IndexFunc(s.waiting, func(q *waitingQ) bool { return q.id == id }); i >= 0 {
				q := s.waiting[i]
				for _, agent := range holders[id] {
					if !slices.Contains(q.copies, agent) {
						q.copies = append(q.copies, agent)
					}
				}
				continue
			}
			if s.owed[id] {
				continue // waits for the person's entry
			}
			s.handledCopies(id, holders[id], "shown at parley play")
			continue
		}
		if c, filed := elsewhere[id]; filed {
			s.showFiled(id, c)
			continue
		}
		if m, said := sent[id]; said && holders[id] == nil {
			s.shown[id] = true
			s.showSent(m)
			continue
		}
		s.shown[id] = true
		data, err := mailbox.ReadFile(first[id].Path, s.ws.Config.Router.MaxMessageSize)
		if err != nil {
			s.shown[id] = false // moved on meanwhile: looked at again next time
			continue
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			s.printf("(a message that cannot be read: %s: %v)\n", s.ws.Short(first[id].Path), err)
			continue
		}
		if fold, later := s.foldsInGiveUp(m); later {
			s.shown[id] = false // looked at again once the message is in dead/
			continue
		} else if fold {
			s.handledCopies(id, holders[id], "told with the message given up")
			continue
		}
		typ := workspace.TypeOf(m)
		if typ == agents.SessionEndType && s.pastEnd(m) {
			// An earlier session's end, left unread (that session ran
			// with no seat) or brought by git: shown as past, filed, and
			// the session under way goes on.
			s.printf("\n(an earlier session's end, %s from %s, filed: a newer session is under way)\n", id, printable(m.Header().Text("from")))
			s.wrap(field(m, "summary"), "  ")
			s.handledCopies(id, holders[id], "an earlier session's end, shown as past at parley play")
			continue
		}
		agent := campaigns.SeatAnswerer(typ, holders[id], s.me, s.prompted())
		if agent != "" {
			if ans := s.answeredAlready(id, agent, m.Header().Text("from")); ans != "" {
				// Answered, and the seat stopped before it filed the
				// question (send, then handled): filed now, not asked
				// twice.
				s.handledCopies(id, holders[id], "answered already ("+ans+")")
				s.printf("(%s was answered already (%s): filed, not asked again)\n", id, ans)
				continue
			}
			if s.pastQuestion(m) {
				// Left unanswered by a session that has ended (the seat
				// left before its end, or it ran with no seat): told
				// once, filed, never asked: the person's next line is
				// not its answer.
				s.showUnanswered(&waitingQ{agent: agent, id: id, m: m, typ: typ})
				s.handledCopies(id, holders[id], unansweredNote+", shown at "+dashIf(s.where, "parley play"))
				continue
			}
		}
		s.display(id, m, agent != "" || s.owesEntry(typ))
		if agent != "" {
			others := slices.DeleteFunc(slices.Clone(holders[id]), func(a string) bool { return a == agent })
			if len(s.waiting) > 0 {
				// The question shown last is not the one a line answers:
				// said, or a person answers the older with the newer's
				// option.
				s.wrap(fmt.Sprintf("(%d questions wait for you: your next line answers the oldest, %s; this one after)", len(s.waiting)+1, s.waiting[0].name()), "")
			}
			s.waiting = append(s.waiting, &waitingQ{agent: agent, copies: append([]string{agent}, others...), id: id, m: m, typ: typ})
			continue
		}
		if s.owesEntry(typ) {
			// The person's journal entry: the checkpoint waits in the
			// inbox until /journal ENTRY writes it (journalAdd files it).
			if s.owed == nil {
				s.owed = map[string]bool{}
			}
			s.owed[id] = true
			continue
		}
		s.handledCopies(id, holders[id], "shown at parley play")
	}
	return nil
}

// pastQuestion reports whether a session that has ended left m, a
// question waiting for the person (agents.PastQuestion decides): of the
// show under way's reading of the mailboxes, if any.
func (s *seat) pastQuestion(m *mailbox.Message) bool {
	if s.ends != nil {
		return s.ends.PastQuestion(m)
	}
	return agents.PastQuestion(s.ws, m)
}

// pastEnd reports whether end, a [SESSION_END] in the seat's inboxes,
// closed a session before the one under way (agents.PastEnd decides): of
// the show under way's reading of the mailboxes, if any.
func (s *seat) pastEnd(end *mailbox.Message) bool {
	if s.ends != nil {
		return s.ends.PastEnd(s.inboxes(), end)
	}
	return agents.PastEnd(s.ws, s.inboxes(), end)
}

// unansweredNote is the note of a question a session that has ended
// left unanswered, filed by a seat (agents.PastQuestion decides).
const unansweredNote = "from a session that has ended, unanswered"

// showUnanswered shows q, a question a session that has ended left
// unanswered (agents.PastQuestion): once, as from the last session, and
// not as a question: nothing answers it now.
func (s *seat) showUnanswered(q *waitingQ) {
	s.printf("\n")
	s.wrap(fmt.Sprintf("(from the last session, unanswered: %s, %s; that session is over, so it is filed, not asked)", q.name(), q.id), "")
	if q.typ == campaigns.AskPlayerType {
		s.wrap(field(q.m, "question"), "  ")
	}
	s.wrap(string(q.m.Body), "  ")
}

// leaveUnanswered files the questions that wait for the person when the
// session's end is shown, each said left unanswered: nothing answers a
// question of a session that is over (agents.PastQuestion decides, as
// at the next seat), and the person's next line (a journal entry the
// checkpoint asks for) is not its answer.
func (s *seat) leaveUnanswered() {
	for _, q := range slices.Clone(s.waiting) {
		if !s.pastQuestion(q.m) {
			continue
		}
		from, _ := q.m.Header().Get("from")
		s.wrap(fmt.Sprintf("(the session ended while [%s] %s from %s waited for your answer: it is left unanswered)", q.typ, q.id, printable(from)), "")
		s.handledCopies(q.id, q.copies, unansweredNote+", at "+dashIf(s.where, "parley play"))
		s.waiting = slices.DeleteFunc(s.waiting, func(w *waitingQ) bool { return w == q })
	}
}

// inboxGone makes again the inbox of agent, a seat inbox found missing
// (a git checkout or stash that empties a directory removes it), as the
// runner makes again the mailboxes people and git remove
// (mailbox.Dir.Remake): once it has been missing for the router's settle
// time, so that an `rm -rf` under way is not raced. Meanwhile nothing
// waits in it. What happened is said once: the inbox made again, or why
// it cannot be (tried again at each look, said again only when the
// reason changes).
func (s *seat) inboxGone(agent string) {
	if s.gone == nil {
		s.gone, s.goneSaid = map[string]time.Time{}, map[string]string{}
	}
	since, ok := s.gone[agent]
	if !ok {
		s.gone[agent] = time.Now()
		since = s.gone[agent]
	}
	if time.Since(since) < s.ws.Config.Router.Settle {
		return
	}
	box := s.ws.Mailbox(agent)
	path := s.ws.Short(box.Path(mailbox.Inbox, ""))
	if err := box.Remake(); err != nil {
		var nd *mailbox.NotDirError
		if errors.As(err, &nd) {
			short := *nd
			short.Path = s.ws.Short(nd.Path)
			err = &short
		}
		if said := err.Error(); s.goneSaid[agent] != said {
			s.goneSaid[agent] = said
			s.printf("(%s is gone and cannot be made again: %s; what is sent to %s waits until it can)\n", path, said, agent)
		}
		return
	}
	delete(s.gone, agent)
	delete(s.goneSaid, agent)
	s.printf("(%s had gone (a git checkout or stash removes a directory it empties): made again)\n", path)
}

// filedElsewhere returns the messages of the seat's inboxes filed in
// done/ since the seat first looked, that it has not shown and that no
// inbox of its holds (holders): filed by another seat of the same person
// (two terminals; the web Seat page) or by parley done, which showed them
// first. By id, with the path of one copy. A done/ whose modification
// time did not change is not listed again.
func (s *seat) filedElsewhere(holders map[string][]string) map[string]filedCopy {
	first := s.doneKnown == nil
	if first {
		s.doneKnown, s.doneAt = map[string]bool{}, map[string]time.Time{}
	}
	out := map[string]filedCopy{}
	for _, agent := range s.inboxes() {
		box := s.ws.Mailbox(agent)
		dir := box.Path(mailbox.Done, "")
		fi, err := os.Stat(dir)
		if err != nil || fi.ModTime().Equal(s.doneAt[agent]) {
			continue
		}
		names, err := box.NamesUnsorted(mailbox.Done)
		if err != nil {
			continue
		}
		if time.Since(fi.ModTime()) > time.Second {
			// A directory's time moves in ticks of the clock: one changed
			// within the last second may change again, a file filed
			// after this listing, and keep its time. Listed again
			// until it is older.
			s.doneAt[agent] = fi.ModTime()
		}
		for _, n := range names {
			key := agent + "/" + n
			if s.doneKnown[key] {
				continue
			}
			s.doneKnown[key] = true
			id, ok := mailbox.IDFromName(n)
			if _, twice := out[id]; first || !ok || s.shown[id] || holders[id] != nil || twice {
				continue
			}
			out[id] = filedCopy{agent: agent, path: box.Path(mailbox.Done, n)}
		}
	}
	return out
}

// sentElsewhere returns what the agent of the person's character (when
// no program plays it) sent in character since the seat first looked,
// and not from this seat: from another seat of the same person (the web
// Seat page, a second terminal) or parley send. Read from its outbox/
// and sent/, by id, each once; an answer (reply_to:) is left out, as the
// question it answers is said answered elsewhere (showFiled). A
// directory whose modification time did not change is not listed again.
func (s *seat) sentElsewhere() map[string]*mailbox.Message {
	agent := s.prompted()
	if agent == "" {
		return nil
	}
	first := s.sentKnown == nil
	if first {
		s.sentKnown, s.sentAt = map[string]bool{}, map[string]time.Time{}
	}
	box := s.ws.Mailbox(agent)
	out := map[string]*mailbox.Message{}
	for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
		dir := box.Path(state, "")
		fi, err := os.Stat(dir)
		if err != nil || fi.ModTime().Equal(s.sentAt[dir]) {
			continue
		}
		names, err := box.NamesUnsorted(state)
		if err != nil {
			continue
		}
		if time.Since(fi.ModTime()) > time.Second {
			s.sentAt[dir] = fi.ModTime() // as filedElsewhere: listed again until older
		}
		for _, n := range names {
			id, ok := mailbox.IDFromName(n)
			if !ok || s.sentKnown[id] {
				continue
			}
			if first || s.sentHere[id] || s.shown[id] {
				s.sentKnown[id] = true
				continue
			}
			data, err := mailbox.ReadFile(box.Path(state, n), s.ws.Config.Router.MaxMessageSize)
			if err != nil {
				continue // routed meanwhile: read in sent/ at the next look
			}
			s.sentKnown[id] = true
			m, err := mailbox.Parse(data)
			if err == nil && campaigns.SeatSaid(m) {
				out[id] = m
			}
		}
	}
	return out
}

// showSent shows what the person said in character at another seat
// (sentElsewhere), as this seat confirms what it sends itself.
func (s *seat) showSent(m *mailbox.Message) {
	who := dashIf(s.character, m.Header().Text("from"))
	switch workspace.TypeOf(m) {
	case "PLAYER_TO_GM":
		s.printf("\n(%s, %s, sent from another seat to the game master:)\n", who, strings.ToLower(dashIf(field(m, "type"), "action")))
	default:
		s.printf("\n(%s to %s, sent from another seat:)\n", who, dashIf(field(m, "to"), m.Header().Text("to")))
	}
	s.wrap(string(m.Body), "  ")
}

// filedCopy is a copy of a message filed in an agent's done/.
type filedCopy struct{ agent, path string }

// showFiled shows a message another seat filed before this one showed
// it (filedElsewhere): as it is, or, a question, as answered there.
func (s *seat) showFiled(id string, c filedCopy) {
	s.shown[id] = true
	m, err := mailbox.ReadMessage(c.path, s.ws.Config.Router.MaxMessageSize)
	if err != nil {
		return
	}
	typ := workspace.TypeOf(m)
	if agent := campaigns.SeatAnswerer(typ, []string{c.agent}, s.me, s.prompted()); agent != "" {
		q := &waitingQ{agent: agent, id: id, m: m, typ: typ}
		from, _ := m.Header().Get("from")
		said := ""
		if ans := s.answeredAlready(id, agent, from); ans != "" {
			said = s.answerSaid(ans, q)
		} else if s.pastQuestion(m) {
			// Filed unanswered there: its session is over.
			s.showUnanswered(q)
			return
		}
		s.printf("(%s, %s, was answered elsewhere%s)\n", id, q.name(), said)
		return
	}
	s.display(id, m, false)
}

// cameBack reports whether a copy of message id, shown at this seat,
// came back into an inbox of holders that holds it handled (in done/ or
// dead/): the seat filed it, or the question was answered, and git
// brought the inbox's copy back (`git stash`, a checkout). A question
// still waiting did not, nor a copy delivered to one inbox after the
// seat showed and filed the message from the other (the router
// delivers to one, then the other).
func (s *seat) cameBack(id string, holders []string) bool {
	if slices.ContainsFunc(s.waiting, func(q *waitingQ) bool { return q.id == id }) {
		return false
	}
	return slices.ContainsFunc(holders, func(agent string) bool {
		return s.ws.Mailbox(agent).HandledIn(id) != ""
	})
}

// fileHandled files the copies of message id in the seat inboxes of
// holders when the message was handled already: one of the seat's inboxes
// holds it in done/ or dead/ (mailbox.HandledIn), and a copy came back
// (git checkout, git stash pop, a backup restored), which is never asked
// or answered again. Each copy is filed where its mailbox holds the
// message (mailbox.FileHandled), or marked handled where its mailbox
// does not. It returns where the message is handled (a path, for the
// person), or "" when it was not handled.
func (s *seat) fileHandled(id string, holders []string) string {
	where := ""
	for _, agent := range s.inboxes() {
		box := s.ws.Mailbox(agent)
		if st := box.HandledIn(id); st != "" {
			where = s.ws.Short(box.Path(st, mailbox.FileName(id)))
			break
		}
	}
	if where == "" {
		return ""
	}
	var unfiled []string // holders whose own mailbox has not handled it
	for _, agent := range holders {
		var h *mailbox.HandledError
		err := s.ws.Mailbox(agent).FileHandled(id, mailbox.Inbox)
		switch {
		case errors.As(err, &h), errors.Is(err, mailbox.ErrNotFound):
			// Filed, or moved meanwhile (parley done, another seat).
		case err != nil:
			s.printf("(could not file %s for %s: %v)\n", id, agent, err)
		default:
			unfiled = append(unfiled, agent)
		}
	}
	s.handledCopies(id, unfiled, "handled already, in "+where)
	return where
}

// answeredAlready returns the id of an answer to message id the seat sent
// already, as the team lead or as agent (the one whose copy the person
// answers): a message in their outbox/ or sent/ whose reply_to is id, or
// "" when there is none. A seat stopped between sending its answer and
// filing the question (answer: send, then handled) finds it so when it
// starts again, and files the question rather than ask it twice. Only
// the files named by an id after id are read: an answer is sent after
// its question.
func (s *seat) answeredAlready(id, agent, asker string) string {
	return s.ws.AnsweredBy(id, asker, s.lead, agent)
}

// takeQuestion takes q for this seat to answer: the lock on its copy in
// q.agent's inbox, which every seat of the person (a terminal, the web
// Seat page, parley answer) takes before it answers, so that one answer
// goes when two are given at once. It returns the unlock while q still
// waits for an answer; otherwise nil, and what the answer given was
// (answerSaid), when one is found.
func (s *seat) takeQuestion(q *waitingQ) (unlock func(), gone string) {
	from, _ := q.m.Header().Get("from")
	path := s.ws.Mailbox(q.agent).Path(mailbox.Inbox, mailbox.FileName(q.id))
	unlock, err := mailbox.LockFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		// No lock to be had here (a filesystem without flock): the
		// question is answered as before there were locks, looked at
		// once more below.
		unlock = func() {}
	default:
		// Handled while this seat waited for the lock, or before.
		if _, err = os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			unlock()
		} else {
			err = nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		if ans := s.answeredAlready(q.id, q.agent, from); ans != "" {
			return nil, s.answerSaid(ans, q)
		}
		return nil, ""
	}
	if ans := s.answeredAlready(q.id, q.agent, from); ans != "" {
		unlock()
		s.handled(q)
		return nil, s.answerSaid(ans, q)
	}
	return unlock, ""
}

// answerSaid says what the answer id to q said, for a seat that finds it
// answered elsewhere: `: "The marsh"`, or "" when it cannot be read.
func (s *seat) answerSaid(id string, q *waitingQ) string {
	from, _ := q.m.Header().Get("from")
	for r := range s.ws.Replies(q.id, s.lead, q.agent) {
		if r.ID != id || r.Sender == from {
			continue
		}
		said := field(r.Message, "answer")
		if said == "" {
			said, _, _ = strings.Cut(strings.TrimSpace(string(r.Message.Body)), "\n")
		}
		if said = shorten(printable(said), 80); said != "" {
			return fmt.Sprintf(": %q", said)
		}
	}
	return ""
}

// handledCopies marks the copies of message id in the agents' inboxes
// handled. One handled meanwhile (parley done, another seat) is left as
// it is; any other failure is said.
func (s *seat) handledCopies(id string, agents []string, note string) {
	for _, agent := range agents {
		if _, err := s.ws.Received(id, agent, mailbox.Inbox); err != nil {
			continue // not in that inbox any more
		}
		if err := markDone(s.e.quiet(), s.ws, agent, []string{id}, note); err != nil && !errors.Is(err, mailbox.ErrHandled) {
			s.printf("(could not mark %s handled for %s: %v)\n", id, agent, err)
		}
	}
}

// field returns a message's field, trimmed.
func field(m *mailbox.Message, key string) string {
	v, _ := m.Payload().Get(key)
	return strings.TrimSpace(v)
}

// display shows one message; asks says whether it waits for the
// person's answer (campaigns.SeatAnswerer decides; for a
// [JOURNAL_CHECKPOINT], owesEntry).
func (s *seat) display(id string, m *mailbox.Message, asks bool) {
	from, _ := m.Header().Get("from")
	body := string(m.Body)
	switch workspace.TypeOf(m) {
	case "NARRATIVE":
		if n := field(m, "scene_number"); n != "" {
			scene := n + " " + strings.ReplaceAll(field(m, "scene_slug"), "-", " ")
			if scene != s.scene {
				s.scene = scene
				s.printf("\n--- scene %s ---\n", scene)
			}
		}
		to, _ := m.Header().Names("to")
		if len(to) == 1 && to[0] == s.lead {
			s.printf("(told to you alone: your group is apart from the others)\n")
		}
		s.printf("\n")
		s.wrap(body, "")
	case "ASK_PLAYER":
		s.printf("\n? %s: %s\n", dashIf(field(m, "header"), "Question"), field(m, "question"))
		// What the game master wrote beside the question (the web seat
		// shows it too): the seat marks the question handled once it is
		// answered, so a body not shown here would never be read.
		if strings.TrimSpace(body) != "" {
			s.wrap(body, "  ")
		}
		for i, o := range askOptions(m) {
			if o[1] != "" {
				s.printf("  %d) %s — %s\n", i+1, o[0], o[1])
			} else {
				s.printf("  %d) %s\n", i+1, o[0])
			}
		}
		s.printf("  (a number, or your own answer)\n")
	case "RELAY_TO_HUMAN":
		who := dashIf(field(m, "character"), from)
		s.printf("\n? %s (played by %s) needs your decision:\n", who, from)
		n := 0
		for _, l := range campaigns.RelayLines(body) {
			switch {
			case l.Heading != "":
				s.printf("  %s:\n", l.Heading)
			case l.Option > 0:
				n = l.Option
				s.printf("    %d) %s\n", n, l.Text)
			default:
				s.wrap(l.Text, "    ")
			}
		}
		if n > 0 {
			s.printf("  (a number, or say what %s does)\n", who)
		} else {
			s.printf("  (say what %s does)\n", who)
		}
	case "SESSION_END":
		s.ended = true
		s.printf("\n=== the session is over ===\n")
		s.wrap(field(m, "summary"), "")
		if hook := field(m, "next_hook"); hook != "" {
			s.printf("\nNext time: %s\n", hook)
		}
		s.unsaved = ""
		if !agents.StateSaved(m) {
			s.unsaved = dashIf(field(m, "state_saved"), "missing")
			s.printf("\nwarning: the game master did not save the story (state_saved: %s): nothing of it was committed, and what changed since the last save may be lost\n", s.unsaved)
		}
	case "":
		s.printf("\n%s: ", from)
		s.wrap(body, "")
	case "GM_TO_PLAYER":
		who := dashIf(field(m, "to"), dashIf(s.character, "your character"))
		kind := strings.ToLower(strings.ReplaceAll(field(m, "request_type"), "_", " "))
		if !asks {
			// A prompt to another's character, copied to the person by
			// a route: shown, not theirs to answer.
			s.printf("\n[GM_TO_PLAYER] from %s to %s (%s):\n", from, who, dashIf(kind, "a prompt"))
			s.wrap(body, "  ")
			return
		}
		// A prompt to the person's character, which no program plays:
		// the whole of it, and it waits for the person's answer.
		s.printf("\n? %s asks %s (%s):\n", from, who, dashIf(kind, "a prompt"))
		s.wrap(body, "  ")
		s.printf("  (say what %s does; veto, then why, asks for the full scene)\n", who)
	case "PLAYER_TO_PLAYER":
		// Another character speaks to the person's: the whole of it.
		s.printf("\n%s to %s:\n", dashIf(field(m, "from"), from), dashIf(field(m, "to"), dashIf(s.character, "you")))
		s.wrap(body, "  ")
		if s.character != "" {
			s.printf("  (/whisper %s TEXT answers)\n", dashIf(field(m, "from"), from))
		}
	case campaigns.JournalCheckpointType:
		scene := checkpointScene(m)
		s.printf("\n[JOURNAL_CHECKPOINT] from %s (scene %s):\n", from, scene)
		s.wrap(body, "  ")
		if !asks {
			return // a program keeps the character's journal, or the entry was written elsewhere
		}
		// No program plays the person's character: no program writes
		// its entry either, and the checkpoint asks the person.
		s.checkpoint = scene
		s.wrap(fmt.Sprintf("(yours to answer: no program writes %s's journal. /journal ENTRY writes what happened here; `parley journal add %s` at a shell takes every part: --title, --happened, --did, --learned, --feel)", s.character, s.character), "  ")
	default:
		s.printf("\n[%s] from %s: %s\n", workspace.TypeOf(m), from, summaryOf(m))
	}
}

// owesEntry reports whether a message of type typ asks the person for
// their character's journal entry: a [JOURNAL_CHECKPOINT] when no
// program plays the character (campaigns.SeatJournals decides, for the
// web Seat page too).
func (s *seat) owesEntry(typ string) bool {
	return s.character != "" && campaigns.SeatJournals(typ, s.prompted())
}

// checkpoints returns the [JOURNAL_CHECKPOINT]s that wait in the seat's
// inboxes for the person's entry (owesEntry decides, as show does), by
// id with the inboxes holding each, and makes the newest the checkpoint
// /journal says waits. They wait in the inbox until an entry is written
// (journalAdd files them), at parley play and at the web seat, which
// keeps no seat between requests, alike.
func (s *seat) checkpoints() map[string][]string {
	if !s.owesEntry(campaigns.JournalCheckpointType) {
		return nil
	}
	out := map[string][]string{}
	newest := ""
	for _, agent := range s.inboxes() {
		entries, _ := s.ws.Mailbox(agent).List(mailbox.Inbox)
		for _, en := range entries {
			m, err := mailbox.ReadMessage(en.Path, s.ws.Config.Router.MaxMessageSize)
			if err != nil || !s.owesEntry(workspace.TypeOf(m)) {
				continue
			}
			out[en.ID] = append(out[en.ID], agent)
			if en.ID > newest {
				newest, s.checkpoint = en.ID, checkpointScene(m)
			}
		}
	}
	return out
}

// checkpointScene is the scene a [JOURNAL_CHECKPOINT] names (its number
// and slug), or "-".
func checkpointScene(m *mailbox.Message) string {
	return dashIf(strings.TrimSpace(field(m, "scene_number")+" "+strings.ReplaceAll(field(m, "scene_slug"), "-", " ")), "-")
}

func dashIf(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// askOptions returns the options of an [ASK_PLAYER]: label and
// description each.
func askOptions(m *mailbox.Message) [][2]string {
	var out [][2]string
	for _, o := range campaigns.AskOptions(m) {
		out = append(out, [2]string{o.Label, o.Description})
	}
	return out
}

// tellTable tells the person what went wrong at the table since they
// were last told: messages given up, agents that did not answer in time.
func (s *seat) tellTable() {
	s.givenUp(s.tellGivenUp)
	s.tellUnresponsive()
	s.tellConfig()
}

// tellConfig says, once, that parley.yaml (or a skill it names) as saved
// while the person plays does not load, and why (file:line: field:
// reason), and that the table goes on with the configuration loaded
// before; and, once again, that it loads once it is mended. The runner
// that routes the table decides (the seat's own, or a parley run beside
// it): what it says of the files as they are now (.parley/runner.json,
// as parley status reads it).
func (s *seat) tellConfig() {
	info := workspace.ReadRunnerInfo(s.ws.Root)
	if info == nil || workspace.StampConfig(s.ws.Root).String() != info.Files {
		return // no runner routes the table, or it has not read the files as they are
	}
	switch {
	case info.ConfigError != "" && info.ConfigError != s.configSaid:
		s.configSaid = info.ConfigError
		s.printf("\n")
		s.wrap(fmt.Sprintf("(parley: WARN %s as saved now is NOT loaded, and what you changed there does not take effect: the table goes on with the configuration loaded before (at %s) until it is mended, as parley status says:", workspace.ConfigFile, info.Loaded.Local().Format("15:04:05")), "")
		s.printf("  %s)\n", strings.ReplaceAll(strings.TrimSpace(info.ConfigError), "\n", "\n  "))
	case info.ConfigError == "" && s.configSaid != "":
		s.configSaid = ""
		s.printf("\n(parley: %s is mended: loaded again, the table goes on with it)\n", workspace.ConfigFile)
	}
}

// givenUp calls tell with each message given up (in an agent's dead/)
// the seat did not know of yet, and notes it known.
func (s *seat) givenUp(tell func(agent, id string)) {
	for _, a := range s.ws.AgentNames() {
		ids, err := s.ws.Mailbox(a).IDs(mailbox.Dead)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if !s.dead[a+"/"+id] {
				s.dead[a+"/"+id] = true
				tell(a, id)
			}
		}
	}
}

// tellGivenUp tells the person, once, that agent gave up the message id:
// who failed, on what, who gets no answer because of it, and what they
// can do. The runner logs it too; the seat's log leaves that out.
func (s *seat) tellGivenUp(agent, id string) {
	box := s.ws.Mailbox(agent)
	why, _ := box.Reason(mailbox.Dead, mailbox.FileName(id))
	why = strings.TrimPrefix(why, agent+": ")
	what, from := s.describe(agent, mailbox.Dead, id)
	text := fmt.Sprintf("(%s could not handle %s %s, and it was given up: %s.", agent, what, id, dashIf(why, "see parley status"))
	if from != "" && from != workspace.Runner {
		text += fmt.Sprintf(" If %s waits for %s's answer to it, none comes.", from, agent)
	}
	if mend := s.mend(agent, id, why); mend != "" {
		text += fmt.Sprintf(" %s, then `parley retry %s` hands it to %s again; `parley status` says more.)", mend, id, agent)
	} else {
		text += fmt.Sprintf(" `parley retry %s` hands it to %s again; `parley status` says more.)", id, agent)
	}
	s.printf("\n")
	s.wrap(text, "")
}

// mend says what to mend before message id, which agent gave up, is
// handed to it again, as fits its driver: a program's run:; an openai
// agent's memory (mailboxes/<agent>/conversation.md) when an edit broke
// it, its max_tool_rounds when its model was still calling tools (its
// notice about id says so), its prompt or max_repairs when its answers
// were refused past its repairs (why, the reason given up, says so),
// else its endpoint. "" for an agent that runs no program of the
// person's (built in).
func (s *seat) mend(agent, id, why string) string {
	a, ok := s.ws.Agent(agent)
	switch {
	case !ok || !a.RunsProgram():
		return ""
	case a.Driver != workspace.DriverOpenAI:
		return fmt.Sprintf("Mend %s's program (run: in %s)", agent, workspace.ConfigFile)
	}
	var ce *llm.ConversationError
	if errors.As(llm.CheckConversation(s.ws, agent), &ce) {
		return fmt.Sprintf("Mend %s's memory, %s, at line %d (a line of your own goes inside a turn's fence)", agent, s.ws.Short(ce.Path), ce.Line)
	}
	for r := range s.ws.Replies(id, agent) {
		if r.Sender == agent && field(r.Message, "notice") == llm.ToolRoundsNotice {
			return fmt.Sprintf("%s's model was still calling tools when its rounds ran out: raise max_tool_rounds (openai: in %s) or mend its prompt (the transcript is beside the message in %s)", agent, workspace.ConfigFile, s.ws.Short(s.ws.Mailbox(agent).Path(mailbox.Dead, "")))
		}
	}
	if llm.GaveUpRefused(why) {
		return fmt.Sprintf("%s's model kept answering what parley refuses, as said above: mend its prompt, or raise max_repairs (openai: in %s)", agent, workspace.ConfigFile)
	}
	return fmt.Sprintf("Mend %s's model endpoint (its server, or base_url, model and key_env under openai: in %s)", agent, workspace.ConfigFile)
}

// foldsInGiveUp reports what becomes of m, a message to the people: the
// runner's notice of a message of theirs given up (GivenUpNotice), and
// an openai agent's notice (notice:) about a message of the agent's it
// gave up (reply_to), which the seat's own notice of the give-up tells
// (tellGivenUp, with what to mend), are filed unshown; an openai
// agent's notice about a message the agent still holds in cur/ (moved
// to dead/ a moment after the notice is sent) waits for the next look.
// Any other is shown.
func (s *seat) foldsInGiveUp(m *mailbox.Message) (fold, later bool) {
	from, _ := m.Header().Get("from")
	if from == workspace.Runner && workspace.TypeOf(m) == workspace.GivenUpNotice {
		return true, false // the runner's notice to a person: told by tellGivenUp
	}
	about, _ := m.Header().Get("reply_to")
	if a, ok := s.ws.Agent(from); !ok || a.Driver != workspace.DriverOpenAI || field(m, "notice") == "" || workspace.TypeOf(m) != "" || !mailbox.IsID(about) {
		return false, false
	}
	box := s.ws.Mailbox(from)
	if box.HandledIn(about) == mailbox.Dead {
		return true, false
	}
	_, err := os.Lstat(box.Path(mailbox.Cur, mailbox.FileName(about)))
	return false, err == nil
}

// describe says what message id in agent's mailbox (in state) is: its
// type and sender ("[PLAYER_TO_GM] from mira", "a message" when it
// cannot be read), and who sent it.
func (s *seat) describe(agent, state, id string) (what, from string) {
	box := s.ws.Mailbox(agent)
	what = "a message"
	if data, err := mailbox.ReadFile(box.Path(state, mailbox.FileName(id)), s.ws.Config.Router.MaxMessageSize); err == nil {
		if m, err := mailbox.Parse(data); err == nil {
			if t := workspace.TypeOf(m); t != "" {
				what = "[" + t + "]"
			}
			from, _ = m.Header().Get("from")
		}
	}
	if from != "" {
		what += " from " + from
	}
	return what, from
}

// tellsRetry is the seat's one rule for saying that an agent's program
// failed on a message and is tried again (tellRetrying, from the seat's
// own runner's log and from agents.json alike): the first retry of an
// agent is told; after it, only a message that failed twice (its retry
// failed too) is told; a message is told once. told is the message last
// told of that agent ("" for none), id the one that failed, attempt the
// attempt that failed (1 for the first; 0 when not known, as from an
// older runner's agents.json).
//
// A program that fails now and then, and answers when tried again,
// holds the table up for a second or two: told once, the person knows
// why the table waits when it does; told at every message, a whole
// evening of it, they learn nothing more. A retry that fails too is
// what may end in a message given up (tellGivenUp): that is said.
func tellsRetry(told, id string, attempt int) bool {
	return told == "" || told != id && attempt >= 2
}

// tellRetrying tells the person that agent's program failed attempt
// (1 for the first) at message id and is tried again, when tellsRetry
// says so: the table waits, and why. Nothing more is said of it until it
// is answered or given up (tellGivenUp). No line says it answered: what
// comes of the answer shows at the seat (the answer, or what the table
// does next, as the gm's next prompt), and a line at every answer would
// be as chatty as a notice at every retry was. It is called
// by the runner's workers (seatLogger), as they retry, and by
// tellUnresponsive, from agents.json.
func (s *seat) tellRetrying(agent, id string, attempt int) {
	s.mu.Lock()
	tell := tellsRetry(s.retrying[agent], id, attempt)
	if tell {
		if s.retrying == nil {
			s.retrying = map[string]string{}
		}
		s.retrying[agent] = id
	}
	s.mu.Unlock()
	if !tell {
		return
	}
	who := agent
	if a, ok := s.ws.Agent(agent); ok && a.Character != "" {
		who = fmt.Sprintf("%s's agent, %s,", a.Character, agent)
	} else if agent == s.gm() {
		who = "the game master, " + agent + ","
	}
	what, _ := s.describe(agent, mailbox.Cur, id)
	s.printf("\n")
	failed := "failed"
	if attempt >= 2 {
		failed = fmt.Sprintf("failed %d times", attempt)
	}
	// A model is no program of the person's: its call failed.
	doer := "its program"
	if a, ok := s.ws.Agent(agent); ok && a.Model != nil {
		doer = "the call to its model"
	}
	s.wrap(fmt.Sprintf("(%s is slow to answer: %s %s on %s, and is being tried again; please wait)", who, doer, failed, what), "")
}

// tellUnresponsive says once of each agent marked unresponsive, or late
// while its program is still at work: it did not answer in time (after a
// nudge, when its timeout has one), as the runner noted. An agent the runner notes retrying is told too, as
// tellsRetry says (tellRetrying): the seat's own runner tells it as it
// retries, a `parley run` beside the seat only there.
func (s *seat) tellUnresponsive() {
	runs, err := s.ws.AgentRuns()
	if err != nil {
		return
	}
	for _, name := range s.ws.AgentNames() {
		if r := runs[name]; r.State == workspace.StateRetrying && r.Message != "" {
			s.tellRetrying(name, r.Message, r.Attempt)
		}
		if runs[name].State == workspace.StateUnresponsive || runs[name].Late != "" {
			// Late, its program still at work on the message: told as
			// the runner marks it (a script's seat hears it then too).
			s.tellSilent(name, runs[name].Note)
		}
	}
}

// tellSilent tells the person, once, that agent did not answer in time
// (timeouts:), and why (the note agents.json keeps; "" says it plainly):
// as the runner marks it (a script's seat), or as agents.json says.
func (s *seat) tellSilent(agent, why string) {
	if s.told[agent] {
		return
	}
	s.told[agent] = true
	if why == "" {
		why = "it has not answered in time"
	}
	s.printf("\n")
	s.wrap(fmt.Sprintf("(%s: %s; the table waits for it, `parley status` says more)", agent, why), "")
}

// tellAwaiting tells the person, once for each, the reply the table waits
// for while nothing waits for them (awaited, the one due first first):
// who should answer what, and until when, before the agent is marked
// unresponsive (timeouts:); for an agent no program plays, how a person
// answers for it. A seat that says nothing for minutes looks hung.
func (s *seat) tellAwaiting(awaited []workspace.Awaited) {
	if len(awaited) == 0 {
		return
	}
	a := awaited[0]
	if key := a.Agent + "/" + a.Message; key != s.awaiting {
		s.awaiting = key
	} else {
		return
	}
	asked := fmt.Sprintf("[%s] %s from %s", a.Type, a.Message, printable(a.From))
	if a.From == s.me || a.From == s.player && s.player != "" {
		asked = fmt.Sprintf("your [%s] %s", a.Type, a.Message)
	}
	text := fmt.Sprintf("(the table waits until %s for %s's answer to %s (timeouts: after %v)", a.Until.Local().Format("15:04:05"), a.Agent, asked, a.After)
	if n := len(awaited) - 1; n > 0 {
		text += fmt.Sprintf(", and %d more %s", n, plural(n, "reply", "replies"))
	}
	if ag, ok := s.ws.Agent(a.Agent); ok && ag.Person() {
		text += fmt.Sprintf("; no program plays %s: a person answers for it with `parley inbox %s` and `parley reply`", a.Agent, a.Agent)
	}
	s.printf("\n")
	s.wrap(text+")", "")
}

// send checks and sends a message as an agent, as `parley send` does; a
// refusal is said, and nothing is sent.
func (s *seat) send(opts sendOptions) bool {
	empty := ""
	if opts.Body == nil {
		opts.Body = &empty
	}
	var id bytes.Buffer // runSend prints the id of what it sent
	e := s.e.quiet()
	e.stdout = &id
	if err := runSend(e, s.ws, opts); err != nil {
		s.printf("not sent: %v\n", err)
		return false
	}
	if s.sentHere == nil {
		s.sentHere = map[string]bool{}
	}
	s.sentHere[strings.TrimSpace(id.String())] = true // not shown again as sent elsewhere
	return true
}

// line acts on one line the person typed, and reports whether it sent
// something.
func (s *seat) line(ctx context.Context, text string) (sent bool, err error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return false, nil
	}
	if strings.HasPrefix(text, "//") {
		text = text[1:] // an answer that starts with a slash
	} else if strings.HasPrefix(text, "/") {
		return s.command(ctx, text)
	}
	if len(s.waiting) == 0 {
		s.printf("nothing waits for an answer: /say to act in character, /help for the commands\n")
		return false, nil
	}
	q := s.waiting[0]
	if !s.answer(q, text) {
		return false, nil
	}
	if len(s.waiting) > 0 {
		s.wrap(fmt.Sprintf("(still waiting for you: %s; your next line answers it)", s.waiting[0].name()), "")
	}
	return true, nil
}

// answer answers a question or a relay: [PLAYER_ANSWER] to the asker, or
// [HUMAN_DECISION] to the relaying agent, as the team lead; the question
// is then handled.
func (s *seat) answer(q *waitingQ, text string) bool {
	from, _ := q.m.Header().Get("from")
	unlock, gone := s.takeQuestion(q)
	if unlock == nil {
		s.printf("(%s, %s, was answered elsewhere%s: nothing was sent)\n", q.id, q.name(), gone)
		s.waiting = slices.DeleteFunc(s.waiting, func(w *waitingQ) bool { return w == q })
		return false
	}
	defer unlock()
	var ok bool
	switch q.typ {
	case "ASK_PLAYER":
		answer := text
		if n, err := strconv.Atoi(text); err == nil {
			opts := askOptions(q.m)
			if n < 1 || n > len(opts) {
				s.printf("there is no option %d: a number from 1 to %d, or your own answer\n", n, len(opts))
				return false
			}
			answer = opts[n-1][0]
		}
		ok = s.send(sendOptions{From: s.lead, To: []string{from}, Type: "PLAYER_ANSWER", Answers: q.m,
			Fields: []string{"question=" + yamlString(field(q.m, "question")), "answer=" + yamlString(answer)}})
		if ok {
			s.printf("(your answer to %s: sent)\n", s.named(from))
		}
	case "GM_TO_PLAYER":
		ok = s.answerPrompt(q, text)
	default: // RELAY_TO_HUMAN
		if n, err := strconv.Atoi(text); err == nil {
			opts := campaigns.RelayOptions(string(q.m.Body))
			if len(opts) > 0 {
				if n < 1 || n > len(opts) {
					s.printf("there is no option %d: a number from 1 to %d, or say what %s does\n", n, len(opts), dashIf(field(q.m, "character"), s.character))
					return false
				}
				text = opts[n-1]
			}
		}
		body := text + "\n"
		ok = s.send(sendOptions{From: s.lead, To: []string{from}, Type: "HUMAN_DECISION", Answers: q.m,
			Fields: []string{"character=" + dashIf(field(q.m, "character"), s.character)}, Body: &body})
		if ok {
			s.printf("(your decision to %s: sent)\n", s.named(from))
		}
	}
	if !ok {
		return false
	}
	s.handled(q)
	return true
}

// answerPrompt answers a [GM_TO_PLAYER] to the person's character, as
// the agent that plays it: with [PLAYER_TO_GM] to the game master (a
// veto when the answer starts with "veto"), or, to a prompt the team lead
// handed on (phase 1), with a plain reply to it ("[VETO] ..." for a veto).
func (s *seat) answerPrompt(q *waitingQ, text string) bool {
	from, _ := q.m.Header().Get("from")
	character := dashIf(field(q.m, "to"), s.character)
	if a, ok := s.ws.Agent(q.agent); ok && a.Character != "" {
		// The agent's own character: the prompt's to: may name the
		// agent rather than the character it plays.
		character = a.Character
	}
	kind := "ACTION"
	switch field(q.m, "request_type") {
	case "QUICK_REACTION", "OPTIONAL_REACTION", "REFLECTION":
		kind = "REACTION"
	}
	if first, rest, _ := strings.Cut(text, " "); strings.EqualFold(strings.TrimRight(first, ":,."), "veto") {
		kind, text = "VETO", dashIf(strings.TrimSpace(rest), "I need the full scene.")
	}
	body := text + "\n"
	var ok bool
	if s.ws.HasRole(from, "team-lead") {
		if kind == "VETO" {
			body = "[VETO] " + body
		}
		ok = s.send(sendOptions{From: q.agent, To: []string{from}, Answers: q.m, Body: &body})
	} else {
		ok = s.send(sendOptions{From: q.agent, To: []string{from}, Type: "PLAYER_TO_GM", Answers: q.m,
			Fields: []string{"type=" + kind, "character=" + character}, Body: &body})
	}
	if ok {
		s.printf("(%s, %s: sent to %s)\n", character, strings.ToLower(kind), s.named(from))
	}
	return ok
}

// named is how the seat names an agent it sent to: "the game master"
// for the gm, as /say says it, else the agent's name.
func (s *seat) named(agent string) string {
	if agent != "" && agent == s.gm() {
		return "the game master"
	}
	return agent
}

// handled marks a waiting question handled, every copy of it in the
// seat's inboxes, and stops waiting for it.
func (s *seat) handled(q *waitingQ) {
	copies := q.copies
	if len(copies) == 0 {
		copies = []string{q.agent}
	}
	s.handledCopies(q.id, copies, "answered at "+dashIf(s.where, "parley play"))
	s.waiting = slices.DeleteFunc(s.waiting, func(w *waitingQ) bool { return w == q })
}

// yamlString writes text as a --field value that reads back as the string
// text: as it is when it reads so, else quoted.
func yamlString(text string) string {
	if v := mailbox.ParseValue(text); v.Tag == "!!str" && v.Value == text {
		return text
	}
	return strconv.Quote(text)
}

// seatCommands are the commands of the seat, with what they do.
var seatCommands = []struct{ name, args, does string }{
	{"roll", "EXPR [--dc N] [CHECK]", "roll dice for your character and send the result to the game master"},
	{"say", "[ACTION|REACTION|VETO] TEXT", "act in character: your character tells the game master"},
	{"whisper", "CHARACTER TEXT", "talk in character to another character"},
	{"save", "[REASON]", "ask the game master to save the story"},
	{"end", "[REASON]", "ask the game master to end the session"},
	{"away", "[REASON]", "step away: your character's agent plays for you"},
	{"back", "", "come back: your character's agent asks you again when it has a decision to make"},
	{"status", "", "who is doing what at the table"},
	{"sheet", "", "your character's sheet (another's is not yours to see)"},
	{"journal", "[ENTRY]", "the last entries of your character's journal; with ENTRY, add it (what happened), as a checkpoint asks"},
	{"help", "", "these commands"},
	{"quit", "", "leave the seat (what you sent stays sent; programs answering are waited for)"},
}

// errQuit ends the seat at the person's word.
var errQuit = errors.New("quit")

// isQuit reports whether line is the command /quit.
func isQuit(line string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	return name == "/quit"
}

// command carries out a /command.
func (s *seat) command(ctx context.Context, text string) (bool, error) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	rest = strings.TrimSpace(rest)
	s.showed = false
	switch name {
	case "roll":
		return s.roll(rest), nil
	case "say":
		return s.say(rest), nil
	case "whisper":
		return s.whisper(rest), nil
	case "save", "end":
		return s.session(name, rest), nil
	case "away", "back":
		return s.mode(name, rest), nil
	case "status":
		s.status()
		s.showed = true
		return false, nil
	case "sheet":
		s.showed = s.sheet(rest)
		return false, nil
	case "journal":
		if rest != "" {
			return s.journalAdd(ctx, rest), nil
		}
		s.journal()
		s.showed = true
		return false, nil
	case "help":
		s.showed = true
		s.printf("commands:\n")
		for _, c := range seatCommands {
			// What a command does, under it, wrapped as the seat's
			// lines are: a row of both ran past a terminal's width.
			s.printf("  %s\n", strings.TrimSpace("/"+c.name+" "+c.args))
			s.wrap(c.does, "      ")
		}
		s.printf("anything else answers the oldest question waiting for you (// starts an answer with /)\n")
		return false, nil
	case "quit":
		return false, errQuit
	}
	names := make([]string, len(seatCommands))
	for i, c := range seatCommands {
		names[i] = c.name
	}
	if near := spell.Nearest(name, names, 2); near != "" {
		s.printf("unknown command /%s: did you mean /%s? (/help lists them; nothing was sent)\n", name, near)
	} else {
		s.printf("unknown command /%s (/help lists them; nothing was sent)\n", name)
	}
	return false, nil
}

// needCharacter says so when the seat knows no character of the person's.
func (s *seat) needCharacter(what string) bool {
	if s.character == "" || s.player == "" {
		s.printf("%s: no agent plays your character (character: in parley.yaml, and your character in preferences.md); nothing was sent\n", what)
		return false
	}
	return true
}

// roll rolls for the person's character and sends [DICE_RESULT].
func (s *seat) roll(args string) bool {
	if !s.needCharacter("/roll") {
		return false
	}
	expr, check, dc, err := rollArgs(args)
	if err != nil {
		s.printf("/roll: %v (nothing was sent)\n", err)
		return false
	}
	if expr == "" {
		s.printf("/roll needs dice: /roll 1d20+5 --dc 12 Stealth (nothing was sent)\n")
		return false
	}
	res, err := dice.Roll(expr, s.dice)
	if err != nil {
		s.printf("/roll: %v\n(nothing was sent)\n", err)
		return false
	}
	line := res.Roll
	fieldsOut := []string{"character=" + s.character, "check=" + yamlString(dashIf(check, "Check")), "roll=" + yamlString(res.Roll)}
	if dc != "" {
		n, err := strconv.ParseInt(dc, 10, 64)
		if err != nil {
			s.printf("/roll: --dc %q is not a whole number (nothing was sent)\n", dc)
			return false
		}
		outcome := res.Against(n)
		line += fmt.Sprintf(" vs DC %d: %s", n, outcome)
		fieldsOut = append(fieldsOut, "dc="+dc, "result="+string(outcome))
	}
	s.printf("you roll %s\n", line)
	gm := s.gm()
	if gm == "" {
		s.printf("no game master to tell (nothing was sent)\n")
		return false
	}
	return s.send(sendOptions{From: s.lead, To: []string{gm}, Type: "DICE_RESULT", Fields: fieldsOut})
}

// rollArgs reads the words of /roll: the dice (the words before the
// first that is not dice, joined: "1d20 + 5" is 1d20+5), --dc N, and the
// name of the check (the other words).
func rollArgs(args string) (expr, check, dc string, err error) {
	fields := strings.Fields(args)
	var dicew, checkw []string
	for i := 0; i < len(fields); i++ {
		switch {
		case fields[i] == "--dc" && i+1 < len(fields):
			dc = fields[i+1]
			i++
		case fields[i] == "--dc":
			return "", "", "", errors.New("--dc needs the difficulty: --dc 12")
		case strings.HasPrefix(fields[i], "--dc="):
			dc = strings.TrimPrefix(fields[i], "--dc=")
		case len(checkw) == 0 && looksLikeDice(fields[i]):
			dicew = append(dicew, fields[i])
		default:
			checkw = append(checkw, fields[i])
		}
	}
	return strings.Join(dicew, ""), strings.Join(checkw, " "), dc, nil
}

// looksLikeDice reports whether a word is (part of) a dice expression
// rather than the name of a check.
func looksLikeDice(w string) bool {
	if strings.HasPrefix(w, "--") {
		return false
	}
	return strings.IndexFunc(w, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 || strings.ContainsAny(w, "+-()")
}

// gm returns the game master: the agent with the role gm.
func (s *seat) gm() string {
	for _, a := range s.ws.AgentNames() {
		if s.ws.HasRole(a, "gm") {
			return a
		}
	}
	return ""
}

// say sends [PLAYER_TO_GM] in character.
func (s *seat) say(args string) bool {
	if !s.needCharacter("/say") {
		return false
	}
	kind := "ACTION"
	first, rest, _ := strings.Cut(args, " ")
	if k := strings.ToUpper(first); k == "ACTION" || k == "REACTION" || k == "VETO" {
		kind, args = k, strings.TrimSpace(rest)
	}
	if args == "" {
		s.printf("/say needs what your character does or says (nothing was sent)\n")
		return false
	}
	body := args + "\n"
	if !s.send(sendOptions{From: s.player, Type: "PLAYER_TO_GM", Fields: []string{"type=" + kind, "character=" + s.character}, Body: &body}) {
		return false
	}
	s.printf("(%s, %s: sent to the game master)\n", s.character, strings.ToLower(kind))
	return true
}

// whisper sends [PLAYER_TO_PLAYER] in character.
func (s *seat) whisper(args string) bool {
	if !s.needCharacter("/whisper") {
		return false
	}
	to, text, _ := strings.Cut(args, " ")
	to = strings.ToLower(strings.TrimSpace(to))
	if to == "" || strings.TrimSpace(text) == "" {
		s.printf("/whisper needs a CHARACTER and what to say (nothing was sent)\n")
		return false
	}
	agents, characters := s.whisperees()
	agent, ok := s.ws.Resolve(to)
	if i := slices.Index(agents, agent); ok && i >= 0 {
		// Another character, by its name or its agent's: the message,
		// and the scene's aside, name the character.
		to = characters[i]
	} else if ok && (agent == s.player || to == s.character) {
		s.printf("/whisper: %s is your own character: whisper to another (nothing was sent)\n", s.character)
		return false
	} else if ok || mailbox.CheckName(to) == nil {
		// The router would deliver to the gm, a built-in (scribe,
		// journal) or a person, whom no character whispers to; its
		// refusal of a name of no one would list them all: the seat
		// lists whom a player whispers to, with the same did-you-mean.
		if len(agents) == 0 {
			s.printf("/whisper: no other character at this table to talk to (nothing was sent)\n")
			return false
		}
		if ok {
			s.printf("/whisper: %s plays no character here: a whisper goes to another character (%s); /say speaks to the game master (nothing was sent)\n", agent, strings.Join(characters, ", "))
			return false
		}
		s.printf("not sent: to: %v\n", &workspace.UnknownAgentError{Name: to, Agents: agents, Characters: characters})
		return false
	}
	body := strings.TrimSpace(text) + "\n"
	if !s.send(sendOptions{From: s.player, Type: "PLAYER_TO_PLAYER", Fields: []string{"from=" + s.character, "to=" + to}, Body: &body}) {
		return false
	}
	s.printf("(%s to %s: sent)\n", s.character, to)
	return true
}

// whisperees returns whom the person may whisper to: the other
// characters of the table, and the agents that play them, in
// parley.yaml's order.
func (s *seat) whisperees() (agents, characters []string) {
	for _, a := range s.ws.Config.Agents {
		if a.Character != "" && a.Name != s.player {
			agents = append(agents, a.Name)
			characters = append(characters, a.Character)
		}
	}
	return agents, characters
}

// session sends [SESSION_COMMAND] save or end; an end asked once is not
// asked again.
func (s *seat) session(command, reason string) bool {
	if s.notHost("/" + command) {
		return false
	}
	if command == "end" {
		if at, ok := s.endAsked(); ok {
			s.printf("you asked to end the session already (%s): the game master is finishing (nothing was sent)\n", at.Local().Format("15:04:05"))
			return false
		}
	}
	gm := s.gm()
	if gm == "" {
		s.printf("no game master to tell (nothing was sent)\n")
		return false
	}
	fields := []string{"command=" + command}
	if reason != "" {
		fields = append(fields, "reason="+yamlString(reason))
	}
	if !s.send(sendOptions{From: s.lead, To: []string{gm}, Type: "SESSION_COMMAND", Fields: fields}) {
		return false
	}
	s.printf("you asked the game master to %s the session\n", command)
	return true
}

// endAsked reports whether the team lead asked to end the session since
// it last started one, and when.
func (s *seat) endAsked() (time.Time, bool) {
	var start, end time.Time
	box := s.ws.Mailbox(s.lead)
	for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
		names, _ := box.Names(state)
		for _, n := range names {
			data, err := mailbox.ReadFile(box.Path(state, n), s.ws.Config.Router.MaxMessageSize)
			if err != nil {
				continue
			}
			m, err := mailbox.Parse(data)
			if err != nil || workspace.TypeOf(m) != "SESSION_COMMAND" {
				continue
			}
			id, _ := m.Header().Get("id")
			at, _, _ := mailbox.ParseID(id)
			switch field(m, "command") {
			case "start":
				start = later(start, at)
			case "end":
				end = later(end, at)
			}
		}
	}
	return end, !end.IsZero() && !end.Before(start)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// mode sends [MODE_SWITCH] to the agent that plays the person's
// character: AUTONOMOUS when they step away (a relay waiting for them is
// then left to it), HUMAN_RELAY when they come back.
func (s *seat) mode(which, reason string) bool {
	if s.notHost("/" + which) {
		return false
	}
	if !s.needCharacter("/" + which) {
		return false
	}
	mode, said := "AUTONOMOUS", "you step away: "+s.player+" plays "+s.character+" until you are /back"
	a, _ := s.ws.Agent(s.player)
	program := a.Driven()
	if !program {
		said = "you step away: " + s.player + " has no program, so nobody plays " + s.character + " meanwhile; what waits for you waits until you are /back"
	}
	if which == "back" {
		mode, said = "HUMAN_RELAY", "you are back: "+s.player+" asks you again when "+s.character+" has a decision to make"
	}
	fields := []string{"mode=" + mode}
	if reason != "" {
		fields = append(fields, "reason="+yamlString(reason))
	}
	if !s.send(sendOptions{From: s.lead, To: []string{s.player}, Type: "MODE_SWITCH", Fields: fields}) {
		return false
	}
	s.printf("%s\n", said)
	if mode == "AUTONOMOUS" && program {
		for _, q := range slices.Clone(s.waiting) {
			if from, _ := q.m.Header().Get("from"); q.typ == "RELAY_TO_HUMAN" && from == s.player {
				s.printf("(%s decides what you were asked)\n", s.player)
				s.handled(q)
			}
		}
	}
	return true
}

// status shows who is doing what at the table.
func (s *seat) status() {
	st, err := s.ws.Status(workspace.StatusOptions{Problems: 1})
	if err != nil {
		s.printf("/status: %v\n", err)
		return
	}
	for _, a := range st {
		s.printf("  %-10s %-13s inbox %d\n", a.Name, a.State, a.Inbox)
	}
	if len(s.waiting) > 0 {
		s.printf("  waiting for you: %d\n", len(s.waiting))
	}
	if s.away() {
		s.printf("  you are away: %s plays %s\n", s.player, s.character)
	}
}

// sheet shows the person's character sheet.
//
// Another's sheet (/sheet NAME) is not the person's to see: it may hold
// what their character does not know (its Secrets); said so, and it
// reports false, as for a sheet that cannot be shown.
func (s *seat) sheet(who string) bool {
	if s.character == "" {
		s.printf("/sheet: preferences.md names no character of yours\n")
		return false
	}
	if who != "" && !s.isMine(who) {
		s.printf("/sheet %s: not yours to see: /sheet shows your character's sheet (%s); another's may hold what %s does not know\n", who, s.character, s.character)
		return false
	}
	path := s.camp.SheetPath(s.character)
	d, err := sheet.Read(path)
	if err != nil {
		s.printf("/sheet: %v\n", err)
		return false
	}
	if err := printSheet(&env{stdin: s.e.stdin, stdout: s.out, stderr: s.e.stderr}, d, s.ws.Short(path), false); err != nil {
		s.printf("/sheet: %v\n", err)
		return false
	}
	return true
}

// isMine reports whether who names the person's character: its name
// (mira-quickfoot, Mira Quickfoot), its first name (mira), or the agent
// that plays it.
func (s *seat) isMine(who string) bool {
	w := strings.ToLower(strings.Join(strings.Fields(who), "-"))
	return w == s.character || w == s.player || strings.HasPrefix(s.character, w+"-")
}

// journal shows the end of the person's character's journal.
func (s *seat) journal() {
	if s.character == "" {
		s.printf("/journal: preferences.md names no character of yours\n")
		return
	}
	path := s.camp.JournalPath(s.character)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.printf("/journal: %v\n", err)
		return
	}
	waits := ""
	if s.checkpoint != "" {
		waits = fmt.Sprintf(" (the checkpoint of scene %s waits for your entry: /journal ENTRY)", s.checkpoint)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// Missing, or empty as a sandbox leaves it (campaigns.View):
		// journal.Add starts either afresh.
		if s.prompted() != "" {
			// No program plays the character: none writes its entries.
			s.wrap(fmt.Sprintf("/journal: %s's journal has no entries yet (%s): no program writes it, you do. At each checkpoint, when the game master saves the story (/save asks it to) and at the session's end, the team lead asks you for one ([JOURNAL_CHECKPOINT]); /journal ENTRY writes one here, `parley journal add %s` at a shell%s",
				s.character, s.ws.Short(path), s.character, waits), "")
			return
		}
		s.wrap(fmt.Sprintf("/journal: %s's journal has no entries yet (%s): %s, the program that plays it, writes one at each checkpoint, when the game master saves the story (/save asks it to) and at the session's end: the team lead asks for it ([JOURNAL_CHECKPOINT]); `parley journal add %s` writes one now",
			s.character, s.ws.Short(path), dashIf(s.player, "the agent"), s.character), "")
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 24 {
		lines = lines[len(lines)-24:]
	}
	s.printf("%s\n", strings.Join(lines, "\n"))
	if waits != "" {
		s.printf("%s\n", strings.TrimSpace(waits))
	}
}

// journalAdd adds an entry to the person's character's journal, as
// `parley journal add` does: the text is what happened (labelled parts,
// journal.Parse, are read as such). It answers the checkpoints waiting
// for the person's entry: each is filed, in every inbox of the seat
// holding it. It is the one place that files them, for parley play and
// the web seat alike. An entry that answers a checkpoint once the
// session is over (the run that closed it may have stopped, and saved
// the session before it was written) is saved in git as that run's end
// saves the players' last entries (saveAfterEnd).
func (s *seat) journalAdd(ctx context.Context, text string) bool {
	if s.character == "" {
		s.printf("/journal: preferences.md names no character of yours (nothing was written)\n")
		return false
	}
	e := journal.Parse(text)
	e.Date = time.Now()
	path := s.camp.JournalPath(s.character)
	if _, err := journal.Add(path, s.character, e); err != nil {
		if ce := (*textfile.ConflictError)(nil); errors.As(err, &ce) {
			ce.Path = s.ws.Short(ce.Path)
			s.printf("/journal: %v (nothing was written)\n", err)
			return false
		}
		s.printf("/journal: %s: %v (nothing was written)\n", s.ws.Short(path), err)
		return false
	}
	s.printf("(an entry added to %s)\n", s.ws.Short(path))
	checkpoints := s.checkpoints()
	for _, id := range slices.Sorted(maps.Keys(checkpoints)) {
		s.handledCopies(id, checkpoints[id], "answered with /journal at "+dashIf(s.where, "parley play"))
		delete(s.owed, id)
	}
	s.checkpoint = ""
	if len(checkpoints) > 0 {
		s.saveAfterEnd(ctx)
	}
	return true
}

// saveAfterEnd saves in git, when the session is over and parley.yaml
// says git: auto, the journal entry the person wrote after the run that
// closed the session stopped: the team lead's save of the session's
// last journal entries (agents.TeamLead.SaveAfterEnd decides, and
// commits as the team lead commits the session's saves). What it saved
// is said, and why it could not.
func (s *seat) saveAfterEnd(ctx context.Context) {
	ws := s.ws
	if fresh, err := workspace.Open(s.ws.Root); err == nil {
		ws = fresh // git: as it is now
	}
	lead := newTeamLead(ws, nil, s.e.environ())
	res, err := lead.SaveAfterEnd(ctx, s.lead)
	switch {
	case errors.Is(err, checkpoint.ErrNothing):
	case errors.Is(err, agents.ErrUnsaved):
		s.wrap(fmt.Sprintf("(your entry is written, not committed in git: %v; `parley checkpoint` commits it)", err), "")
	case err != nil:
		s.printf("(your entry is written, but not saved in git: %v; `parley checkpoint` saves it)\n", err)
	case res != nil:
		first, _, _ := strings.Cut(res.Message, "\n")
		s.printf("(saved in git with the session: %s %s)\n", res.Commit[:min(12, len(res.Commit))], first)
	}
}

// owesAtEnd reports whether, the session over, a [JOURNAL_CHECKPOINT]
// waits for the person's entry (owesEntry decides, as show does): the
// seat stays for it (stayForEntry).
func (s *seat) owesAtEnd() bool {
	return s.ended && len(s.checkpoints()) > 0
}

// stayForEntry keeps the seat, the session over and the run that closed
// it stopped, while a [JOURNAL_CHECKPOINT] waits for the person's entry
// (owesAtEnd): it says so, and takes the person's lines (next returns
// each; false once the input ended: Ctrl-D) until /journal ENTRY writes
// the entry — journalAdd files the checkpoints and saves it in git with
// the session — or they leave (/quit, Ctrl-D). A command that only
// shows (/journal, /sheet, /status, /help) is carried out; nothing else
// is played: the session is over. bye is called before the seat's last
// words; it reports whether the person left with /quit.
func (s *seat) stayForEntry(ctx context.Context, next func() (string, bool), bye func()) (quit bool) {
	s.printf("\n")
	saved := "and it is saved with the session"
	if s.unsaved != "" {
		saved = fmt.Sprintf("but the session was not saved (state_saved: %s), so the entry is written and not committed (`parley checkpoint` commits it)", s.unsaved)
	}
	s.wrap(fmt.Sprintf("(the session is over, and the checkpoint of scene %s waits for %s's journal entry: /journal ENTRY writes it, %s; /quit or Ctrl-D leaves without it)", dashIf(s.checkpoint, "-"), s.character, saved), "")
	for {
		text, ok := next()
		if !ok {
			bye()
			s.leftUnwritten()
			return false
		}
		text = strings.TrimSpace(text)
		name, rest, _ := strings.Cut(text, " ")
		switch {
		case text == "":
			continue
		case name == "/quit":
			bye()
			s.leftUnwritten()
			return true
		case name == "/journal" && strings.TrimSpace(rest) != "":
			if s.journalAdd(ctx, strings.TrimSpace(rest)) {
				bye()
				return false
			}
		case name == "/journal", name == "/sheet", name == "/status", name == "/help":
			s.command(ctx, text)
		default:
			s.printf("the session is over: /journal ENTRY writes your entry, /quit leaves (nothing was sent)\n")
		}
	}
}

// leftUnwritten says, as the person leaves the seat with the entry a
// checkpoint asks for unwritten, where it waits and how to write it.
func (s *seat) leftUnwritten() {
	s.wrap(fmt.Sprintf("(the entry is not written: the checkpoint waits in your inbox, shown again at your next seat; `parley journal add %s` writes it at a shell, and `parley checkpoint` saves it in git)", s.character), "")
}

// askPrefs asks the person which character they play and the narrative
// style, when preferences.md does not say, writes them there, and starts
// the session as the team lead.
func (s *seat) askPrefs(ctx context.Context, in *lineSource) error {
	p, err := s.camp.ReadPrefs()
	if err != nil && !errors.Is(err, campaigns.ErrNoPreferences) {
		return err
	}
	if err == nil && p.Character != "" && p.Style != "" || !s.host {
		return nil // a friend's seat plays its character: the host's starts the session
	}
	chars, err := s.camp.Characters()
	if err != nil {
		return err
	}
	if len(chars) == 0 {
		return fmt.Errorf("%s: no character sheets yet: `parley character new NAME` writes one", s.ws.Short(s.camp.Path(campaigns.PartyDir)))
	}
	// A character an AI agent plays (role player, or one with a program)
	// is not offered: its prompts go to that agent, never to the seat.
	ai := aiPlayers(s.ws)
	var mine []string
	for _, c := range chars {
		if ai[c] == "" {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		return fmt.Errorf("every character of %s is played by an AI agent (%s): add one of yours, `parley character new NAME` and an agent with role human and character: NAME in %s", s.ws.Short(s.camp.Path(campaigns.PartyDir)), strings.Join(chars, ", "), workspace.ConfigFile)
	}
	s.printf("? Which character do you play?\n")
	for i, c := range mine {
		s.printf("  %d) %s\n", i+1, c)
	}
	character := ""
	for character == "" {
		text, ok := in.next(ctx)
		if ctx.Err() != nil {
			return errQuit
		}
		if !ok {
			return errors.New("no answer to which character you play: the session cannot start")
		}
		s.printf("> %s\n", text)
		if isQuit(text) {
			return errQuit
		}
		c := campaigns.Kebab(text)
		if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil && n >= 1 && n <= len(mine) {
			character = mine[n-1]
		} else if slices.Contains(mine, c) {
			character = c
		} else if ai[c] != "" {
			s.printf("%s is played by %s, an AI agent: a number from 1 to %d, or a name\n", c, ai[c], len(mine))
		} else {
			s.printf("not one of them: a number from 1 to %d, or a name\n", len(mine))
		}
	}
	s.printf("? Which narrative style? (%s; empty for hybrid)\n", strings.Join(narrativeStyles, ", "))
	style := ""
	for style == "" {
		text, ok := in.next(ctx)
		if ctx.Err() != nil {
			return errQuit
		}
		if !ok {
			style = "hybrid"
			break
		}
		s.printf("> %s\n", text)
		if isQuit(text) {
			return errQuit
		}
		text = strings.ToLower(strings.TrimSpace(text))
		switch {
		case text == "":
			style = "hybrid"
		case slices.Contains(narrativeStyles, text):
			style = text
		default:
			s.printf("not a style: %s (or empty for hybrid)\n", strings.Join(narrativeStyles, ", "))
		}
	}
	if err := s.camp.WritePrefs(character, "", style); err != nil {
		return err
	}
	s.setCharacter(character)
	s.printf("written to %s\n", s.ws.Short(s.camp.Path(campaigns.Preferences)))
	m, err := agents.SessionStart(s.ws, s.camp, s.lead)
	if err != nil {
		return err
	}
	if err := refusal(s.ws, s.ws.Mailbox(s.lead), m); err != nil {
		return fmt.Errorf("the session start was not sent: %w", err)
	}
	if _, err := s.ws.Mailbox(s.lead).Send(m); err != nil {
		return err
	}
	return nil
}

// narrativeStyles are the narrative styles the seat offers: a
// cinematic story, terse facts, or a mix.
var narrativeStyles = []string{"cinematic", "hybrid", "terse"}

// lineSource hands out the person's lines one at a time.
type lineSource struct {
	lines chan string
	held  []string // lines read ahead and not used yet, first first (hold)
}

// hold keeps a line read ahead for later: the next read returns it.
func (l *lineSource) hold(line string) {
	l.held = append(l.held, line)
}

// unhold returns the first line held, if there is one.
func (l *lineSource) unhold() (string, bool) {
	if len(l.held) == 0 {
		return "", false
	}
	line := l.held[0]
	l.held = l.held[1:]
	return line, true
}

// next returns the next line; false once the input has ended, or ctx
// has.
func (l *lineSource) next(ctx context.Context) (string, bool) {
	if line, ok := l.unhold(); ok {
		return line, true
	}
	select {
	case line, ok := <-l.lines:
		return line, ok
	case <-ctx.Done():
		return "", false
	}
}
