package web

import (
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/campaigns/agents"
	"github.com/parley-dev/parley/campaigns/scenes"
	"github.com/parley-dev/parley/campaigns/sheet"
	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/plans/orchestrator"
	"github.com/parley-dev/parley/runner/workspace"
)

// lanesWindow is how many steps the lanes page draws at a time.
const lanesWindow = 300

// lanesData is the lanes page: an SVG sequence diagram.
type lanesData struct {
	Lanes         Lanes
	Width, Height int
	X             map[string]int
	Rows          []laneRow
	Before        int // the entry the window ends before
	Older         int // where the older window ends; -1 when there is none
	Newer         int // -1 when this is the newest
}

type laneRow struct {
	Step
	Y       int
	Arrows  []laneArrow
	Refusal bool
	LabelX  int
	Clipped string
}

type laneArrow struct{ X1, X2, Y int }

const (
	laneW = 150
	rowH  = 26
	headH = 40
)

// lanesAll is the lanes of the whole journal, for an exported copy.
func (s *Server) lanesAll() lanesData {
	return s.lanesWindow(0, s.feed.len())
}

func (s *Server) lanesData(before int) lanesData {
	total := s.feed.len()
	if before <= 0 || before > total {
		before = total
	}
	// Take entries back from before until the window holds lanesWindow
	// steps.
	first, steps := before, 0
	entries := s.feed.slice(0, before)
	for first > 0 && steps < lanesWindow {
		first--
		if e := entries[first]; e.Arrived() || e.Outcome == workspace.Refused {
			steps++
		}
	}
	d := s.lanesWindow(first, before)
	if before < total {
		d.Newer = min(total, before+lanesWindow*2)
	}
	return d
}

// lanesWindow draws the lanes of entries [first, before).
func (s *Server) lanesWindow(first, before int) lanesData {
	entries := s.feed.slice(first, before)
	l := LanesOf(s.ws().AgentNames(), entries, first)
	d := lanesData{Lanes: l, X: map[string]int{}, Before: before, Older: -1, Newer: -1}
	for i, a := range l.Agents {
		d.X[a] = laneW/2 + i*laneW
	}
	d.Width = max(laneW*len(l.Agents), laneW)
	for i, st := range l.Steps {
		y := headH + 20 + i*rowH
		lr := laneRow{Step: st, Y: y, Refusal: st.Refused}
		from := d.X[st.From]
		lr.LabelX = from + 6
		for _, to := range st.To {
			lr.Arrows = append(lr.Arrows, laneArrow{X1: from, X2: d.X[to], Y: y + 6})
		}
		if len(st.To) > 0 {
			lo, hi := from, from
			for _, a := range lr.Arrows {
				lo, hi = min(lo, a.X2), max(hi, a.X2)
			}
			lr.LabelX = lo + 6
		}
		lr.Clipped = clip(st.Label, 40)
		d.Rows = append(d.Rows, lr)
	}
	d.Height = headH + 40 + len(l.Steps)*rowH
	if first > 0 {
		d.Older = first
	}
	return d
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (s *Server) lanes(w http.ResponseWriter, r *http.Request) {
	before, _ := strconv.Atoi(r.URL.Query().Get("before"))
	p := s.newPage(r, "Lanes", "/lanes", s.lanesData(before))
	p.Live = before == 0
	s.render(w, r, "lanes", p)
}

// agentRow is one agent on the agents page.
type agentRow struct {
	workspace.AgentStatus
	Last    string
	Calls   int
	Tokens  int64
	Cost    string
	HasCost bool
	// Awaits are the replies awaited from it (timeouts:), in parley
	// status's words.
	Awaits  []string
	settled map[string]string // dead letter's path -> what settled it (Options.Settled)
}

// SettledOf says what settled the dead letter at path (its step went on
// without it since), in parley status's words; "" when nothing did.
func (a agentRow) SettledOf(path string) string { return a.settled[path] }

func (s *Server) agentsData() ([]agentRow, string) {
	st, err := s.ws().Status(workspace.StatusOptions{Problems: 3})
	if err != nil {
		return nil, err.Error()
	}
	usage, _ := s.ws().Usage()
	now := time.Now()
	settled := s.settledLook()
	var out []agentRow
	for _, a := range st {
		ar := agentRow{AgentStatus: a, Last: "never", settled: map[string]string{}}
		for _, w := range a.Awaited {
			ar.Awaits = append(ar.Awaits, w.Text(now))
		}
		for _, f := range a.DeadFiles {
			if since := settled(a.Name, strings.TrimSuffix(filepath.Base(f.Path), ".md")); since != "" {
				ar.settled[f.Path] = since
			}
		}
		if !a.LastActivity.IsZero() {
			ar.Last = a.LastActivity.UTC().Format("2006-01-02 15:04:05") + " (" + now.Sub(a.LastActivity).Round(time.Second).String() + " ago)"
		}
		if usage != nil {
			if u, ok := usage.Agent(a.Name); ok {
				ar.Calls = u.Calls
				ar.Tokens = u.Tokens()
				if u.Cost > 0 {
					ar.HasCost, ar.Cost = true, fmt.Sprintf("%.4f", u.Cost)
				}
			}
		}
		out = append(out, ar)
	}
	return out, ""
}

func (s *Server) agents(w http.ResponseWriter, r *http.Request) {
	rows, errText := s.agentsData()
	s.render(w, r, "agents", s.newPage(r, "Agents", "/agents", struct {
		Agents []agentRow
		Err    string
	}{rows, errText}))
}

// storyData is a campaign as a story.
type storyData struct {
	Err       string
	Name      string
	Spectator bool
	Static    bool // an exported copy, or a spectators' server: no link to the other view
	Scenes    []doc
	Sheets    []doc
	Journals  []doc
	Knowledge template.HTML
	State     template.HTML // story-state.md: not in the spectator's view
}

// doc is a markdown file, rendered.
type doc struct {
	Title string
	Badge string // a sheet's hit points and items, at a glance
	Path  string
	HTML  template.HTML
}

// hpBadge says a sheet's hit points at a glance: "HP 8/12", and its
// temporary hit points when it has some, "HP 8/12 +3 temp".
func hpBadge(sh *sheet.Doc) string {
	s := fmt.Sprintf("HP %d/%d", sh.HP, sh.MaxHP)
	if sh.TempHP > 0 {
		s += fmt.Sprintf(" +%d temp", sh.TempHP)
	}
	return s
}

// readDoc reads a markdown file of the campaign and renders it; for
// spectators (a non-nil secrets), without what they may not read (see
// forSpectators).
func (s *Server) readDoc(path, title string, secrets *workspace.Secrets) (doc, bool) {
	data, err := readSmall(path)
	if err != nil {
		return doc{}, false
	}
	data = withoutFrontmatter(data)
	if secrets != nil {
		data = forSpectators(secrets, data)
	}
	return doc{Title: title, Path: s.ws().Short(path), HTML: markdownFile(data)}, true
}

// forSpectators returns a campaign file's text without what no spectator
// may read: what the message guard keeps from the players (a heading
// that says "secret" and what is under it, such as a sheet's "Secrets",
// and any sentence copied out of one), and the notes for the game master
// that a scene never holds (comments, lines and asides marked secret or
// for the GM).
func forSpectators(secrets *workspace.Secrets, data []byte) []byte {
	return []byte(scenes.WithoutNotes(secrets.Withhold(string(data))))
}

// readSmall reads a regular file (never through a symbolic link) of at
// most 4 MiB.
func readSmall(path string) ([]byte, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if info.Size() > 4<<20 {
		return nil, fmt.Errorf("%s: larger than 4 MiB", path)
	}
	return os.ReadFile(path)
}

// storyData reads the campaign: its scenes, the party's sheets and
// journals, what the party knows and, unless spectator, the story state;
// for spectators, each file without what they may not read
// (forSpectators).
func (s *Server) storyData(spectator bool) storyData {
	d := storyData{Spectator: spectator}
	c, err := campaigns.Find(s.ws().Root, s.ws().Config.Campaign)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Name = c.Name
	var secrets *workspace.Secrets // nil: the game master's view
	if spectator {
		if secrets, err = s.ws().Secrets(); err != nil {
			d.Err = err.Error() // nothing shown rather than a secret
			return d
		}
	}
	list, err := scenes.List(c.Path(campaigns.ScenesDir))
	if err != nil {
		d.Err = err.Error()
	}
	for _, sc := range list {
		if dc, ok := s.readDoc(sc.Path, sc.Slug, secrets); ok {
			d.Scenes = append(d.Scenes, dc)
		}
	}
	chars, _ := c.Characters()
	for _, ch := range chars {
		if dc, ok := s.readDoc(c.SheetPath(ch), ch, secrets); ok {
			if data, err := readSmall(c.SheetPath(ch)); err == nil {
				// One side's values of a merge conflict are no one's.
				err := textfile.CheckConflict(c.SheetPath(ch), data)
				var sh *sheet.Doc
				if err == nil {
					sh, err = sheet.Parse(c.SheetPath(ch), data)
				}
				switch {
				case err != nil && spectator:
					// An error may quote the sheet, and so a secret of it.
					dc.Badge = "the sheet does not read"
					var se *sheet.Error
					if errors.As(err, &se) && se.Line > 0 {
						dc.Badge += fmt.Sprintf(" (line %d)", se.Line)
					}
				case err != nil:
					dc.Badge = "the sheet does not read: " + c.Short(err).Error()
				case sh.Invalid != nil:
					dc.Badge = fmt.Sprintf("%s · %d items · %v", hpBadge(sh), len(sh.Items), c.Short(sh.Invalid))
				case sh.MaxHP > 0:
					dc.Badge = fmt.Sprintf("%s · %d items", hpBadge(sh), len(sh.Items))
				}
				if err == nil {
					// What could not be read, as parley character show
					// says it; to spectators, where and not what (so
					// too a note may quote the sheet).
					for _, n := range sh.UnreadNotes(!spectator) {
						dc.Badge += " · " + c.Short(errors.New(n)).Error()
					}
				}
			}
			d.Sheets = append(d.Sheets, dc)
		}
		if dc, ok := s.readDoc(c.JournalPath(ch), ch, secrets); ok {
			d.Journals = append(d.Journals, dc)
		}
	}
	if dc, ok := s.readDoc(c.Path(campaigns.PartyKnowledge), "party knowledge", secrets); ok {
		d.Knowledge = dc.HTML
	}
	if !spectator {
		if dc, ok := s.readDoc(c.Path(campaigns.StoryState), "story state", nil); ok {
			d.State = dc.HTML
		}
	}
	return d
}

func (s *Server) story(w http.ResponseWriter, r *http.Request) {
	d := s.storyData(s.watcher || r.URL.Query().Get("view") == "spectator")
	d.Static = s.watcher // no way to the game master's view
	s.render(w, r, "story", s.newPage(r, "Story", "/story", d))
}

// planData is the plans of a pipeline workspace, with what the
// orchestrator's messages say of each step.
type planData struct {
	Err         string
	Plans       []planView
	Escalations []escalation
}

type planView struct {
	Path     string
	Title    string
	Status   string
	Done     int
	Total    int
	Waves    []waveView
	Problems []string
}

type waveView struct {
	plans.Wave
	Steps []stepView
}

type stepView struct {
	plans.Step
	Iterations int           // the attempts in all, over every run
	Runs       []attemptRun  // the runs of attempts: the first, and each after a person's retry
	Rounds     []reviewRound // the verdicts of each iteration reviewed
}

// attemptRun is a run of attempts at a step, from the task_assignment
// that started it (at its iteration; 1 without one) to the last attempt
// before the next run. A run that starts after attempt 1 was retried
// after an escalation.
type attemptRun struct {
	First, Last int
}

// String says the run as the Plan page shows it: "attempts 1-5",
// "retried after escalation; attempts 6-7".
func (r attemptRun) String() string {
	s := fmt.Sprintf("attempts %d-%d", r.First, r.Last)
	if r.Last <= r.First {
		s = fmt.Sprintf("attempt %d", r.First)
	}
	if r.First > 1 {
		s = "retried after escalation; " + s
	}
	return s
}

// runs are the runs of attempts of a step that took iterations attempts
// in all, each started at one of starts.
func runs(starts []int, iterations int) []attemptRun {
	slices.Sort(starts)
	starts = slices.Compact(starts)
	var out []attemptRun
	for i, first := range starts {
		last := iterations
		if i+1 < len(starts) {
			last = starts[i+1] - 1
		}
		out = append(out, attemptRun{First: first, Last: max(last, first)})
	}
	return out
}

// reviewRound is the verdicts on one iteration of a step.
type reviewRound struct {
	Iteration int
	Verdicts  []string // reviewer: pass, auditor: fail, ... as they came
}

type escalation struct {
	ID, Kind, Summary, To string
	// State is where it stands (orchestrator.Escalations): "waiting" for
	// a decision (in a person's inbox or cur/, or answered with a
	// decision the orchestrator does not know), "settled" (waiting, but
	// its step went on without a decision: answering it sends nothing)
	// or "handled" (answered, or marked handled; a copy of it come back
	// into an inbox by git waits for nothing).
	State string
}

// stepKey names a step of a plan file.
type stepKey struct {
	plan string
	step int
}

func (s *Server) planData() planData {
	var d planData
	list, err := plans.List(filepath.Join(s.ws().Root, plans.Dir))
	if err != nil {
		d.Err = err.Error()
	}
	iters := map[stepKey]int{}
	starts := map[stepKey][]int{} // the iteration each task_assignment of a step started at
	rounds := map[stepKey][]reviewRound{}
	type review struct {
		key       stepKey
		iteration int
	}
	reviewOf := map[string]review{} // review_request id -> step and iteration
	var answers []*mailbox.Message
	escs := orchestrator.Escalations(s.ws(), nil)
	var sent []*mailbox.Message // what the orchestrators sent
	for _, agent := range s.ws().AgentNames() {
		if !s.ws().HasRole(agent, workspace.OrchestratorRole) {
			continue
		}
		box := s.ws().Mailbox(agent)
		for _, state := range []string{mailbox.Sent, mailbox.Outbox, mailbox.Done, mailbox.Cur, mailbox.Inbox} {
			dir := box.Path(state, "")
			names, _ := box.Names(state)
			s.files.Keep(dir, names)
			for _, name := range names {
				m, err := s.files.Read(dir, name, s.ws().Config.Router.MaxMessageSize)
				if err != nil {
					continue
				}
				typ := workspace.TypeOf(m)
				switch {
				case state == mailbox.Sent || state == mailbox.Outbox:
					sent = append(sent, m)
				case typ == "review_verdict" || typ == "audit_verdict":
					answers = append(answers, m)
				}
			}
		}
	}
	// A plan taken up again by a new pipeline (another request, another
	// thread) counts the steps of the newest: the page shows where the
	// plan stands, not the two runs added up.
	newest := map[string][2]string{} // plan file -> the id and thread of its newest step message
	for _, m := range sent {
		pf, id, th := m.Header().Text("plan_file"), m.Header().Text("id"), m.Header().Text("thread")
		if pf == "" || m.Header().Text("step") == "" || th == "" {
			continue
		}
		if n, ok := newest[pf]; !ok || id > n[0] {
			newest[pf] = [2]string{id, th}
		}
	}
	for _, m := range sent {
		typ := workspace.TypeOf(m)
		key := stepKey{plan: m.Header().Text("plan_file"), step: atoi(m.Header().Text("step"))}
		id := m.Header().Text("id")
		if n, ok := newest[key.plan]; ok && m.Header().Text("thread") != n[1] {
			typ = "" // an earlier pipeline's: its escalations are listed still
		}
		switch typ {
		case "task_assignment", "revision_request":
			it := max(atoi(m.Header().Text("iteration")), 1)
			iters[key] = max(iters[key], it)
			if typ == "task_assignment" {
				starts[key] = append(starts[key], it)
			}
		case "review_request":
			reviewOf[id] = review{key: key, iteration: max(atoi(m.Header().Text("iteration")), 1)}
		}
		if esc := m.Header().Text("escalation"); esc != "" {
			to := m.Header().Text("to")
			d.Escalations = append(d.Escalations, escalation{ID: id, Kind: esc, Summary: m.Header().Text("summary"), To: to, State: escalationState(id, escs)})
		}
	}
	slices.SortFunc(answers, func(a, b *mailbox.Message) int { return strings.Compare(a.Header().Text("id"), b.Header().Text("id")) })
	for _, m := range answers {
		rv, ok := reviewOf[m.Header().Text("reply_to")]
		if !ok {
			continue
		}
		rs := rounds[rv.key]
		i := slices.IndexFunc(rs, func(r reviewRound) bool { return r.Iteration == rv.iteration })
		if i < 0 {
			rs = append(rs, reviewRound{Iteration: rv.iteration})
			i = len(rs) - 1
		}
		rs[i].Verdicts = append(rs[i].Verdicts, m.Header().Text("from")+": "+m.Header().Text("signal"))
		rounds[rv.key] = rs
	}
	slices.SortFunc(d.Escalations, func(a, b escalation) int { return strings.Compare(a.ID, b.ID) })
	for _, p := range list {
		rel := s.ws().Short(p.Path)
		pv := planView{Path: rel, Title: p.Title, Status: p.Status}
		pr := p.Progress()
		pv.Done, pv.Total = pr.Done, pr.Total
		for _, pb := range p.Check() {
			pv.Problems = append(pv.Problems, pb.Error())
		}
		for _, wv := range p.Waves {
			v := waveView{Wave: wv}
			for _, st := range wv.Steps {
				key := stepKey{plan: filepath.ToSlash(rel), step: st.Number}
				rs := rounds[key]
				slices.SortFunc(rs, func(a, b reviewRound) int { return a.Iteration - b.Iteration })
				v.Steps = append(v.Steps, stepView{Step: st, Iterations: iters[key], Runs: runs(starts[key], iters[key]), Rounds: rs})
			}
			pv.Waves = append(pv.Waves, v)
		}
		d.Plans = append(d.Plans, pv)
	}
	return d
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "plan", s.newPage(r, "Plan", "/plan", s.planData()))
}

// waiting is a message in a person's inbox that asks something of them.
type waiting struct {
	ID       string
	Agent    string // whose inbox
	From     string
	Type     string
	Question string
	Options  []option
	Decide   []orchestrator.Choice // an escalation's decisions, each a button
	Body     template.HTML
	Kind     string // "ask" (options or own words), "relay", "prompt" (own words, as the character), "journal" (a checkpoint's entry, as /journal ENTRY), "request" (approve/reject), "escalation" (a decision and reasons), "message" (reply)
}

type option struct {
	N                  int
	Label, Description string
}

// seatData is the person's seat.
type seatData struct {
	Waiting  []waiting
	Campaign bool
	Person   string
	Err      string
	// Table is the seat of a person at a D&D table (workspace.AtTable
	// decides, for the answers too): what asks nothing of the person is
	// told in Told, as parley play shows it, and filed.
	Table bool
	// Told is the story as it came to the seat's inboxes, newest first:
	// the messages that ask nothing of the person (campaigns.SeatAnswerer
	// decides, for parley play too), every one still in inbox/ (filed
	// once shown), and of done/ the newest, up to storyShown in all;
	// Earlier says that older ones were left out.
	Told    []told
	Earlier bool
	// NoRunner says that no runner routes the table (no parley run, no
	// parley play holds the workspace): what the seat sends waits in an
	// outbox until one starts.
	NoRunner bool
	// file is what Told tells from an inbox, by id with the seat's
	// inboxes holding it: filed once the page says it showed it (act,
	// kind shown), never on a GET.
	file map[string][]string
	// unanswered are the questions in the seat's inboxes that a session
	// that has ended left unanswered (agents.PastQuestion): told, not
	// asked.
	unanswered map[string]bool
	// ends decides, for every question of the page, whether a session
	// that has ended left it, and for every [SESSION_END] whether it is
	// of an earlier session: the mailboxes read once a page.
	ends *agents.Ends
}

// told is a message the seat shows and that asks nothing of the person.
type told struct {
	ID       string
	From     string
	Type     string
	Question string // an [ASK_PLAYER] since answered: its question
	Body     template.HTML
	// A [SESSION_END]: its summary and next hook, and, when the game
	// master did not save (state_saved: not true), what it said.
	End     bool
	Summary string
	Hook    string
	Unsaved string
	// Past says that the [SESSION_END] closed a session before the one
	// under way (agents.PastEnd): told as past, it ends nothing.
	Past bool
	// Unanswered says that the question (an [ASK_PLAYER], a relay, a
	// prompt to the person's character) was left unanswered by a
	// session that has ended (agents.PastQuestion): told, not asked.
	Unanswered bool
	Received   bool // still in an inbox: filed once shown
	// Said, when set, says that the person's character said this, at
	// this seat or another (parley play, parley send as its agent): who,
	// how and to whom, as parley play shows it (saidBy).
	Said string
}

// storyShown is how many messages the Seat page tells at most: the page
// is fetched again every few seconds, and a night's 3,000 messages made
// it 660 KB. A refresh that sends fewer than the page told takes none
// away: app.js keeps what the page told until a reload (restory).
const storyShown = 30

// escalationState says where the escalation id stands, as
// orchestrator.Escalations decides it for parley pipeline too: see
// escalation.State.
func escalationState(id string, escs []orchestrator.Escalation) string {
	state := "handled"
	for _, x := range escs {
		if x.ID != id {
			continue
		}
		if x.Waiting() {
			return "waiting"
		}
		state = "settled"
	}
	return state
}

// requestTypes are the structured requests a person approves or rejects.
var requestTypes = []string{workspace.PlanApprovalRequest, workspace.ShutdownRequest}

func (s *Server) seatData() seatData {
	person, prompted := s.seated()
	d := seatData{Person: person, ends: agents.NewEnds(s.ws())}
	if _, err := campaigns.Find(s.ws().Root, s.ws().Config.Campaign); err == nil {
		d.Campaign = true
	}
	var people []string
	if person != "" {
		people = []string{person}
		if prompted != "" && prompted != person {
			people = append(people, prompted)
		}
	} else {
		for _, a := range s.ws().Config.Agents {
			if a.Person() {
				people = append(people, a.Name)
			}
		}
	}
	// Which escalations wait is decided once, for parley pipeline too.
	escs := orchestrator.Escalations(s.ws(), nil)
	var leads []string // who answers the person's questions at a table
	for _, a := range s.ws().Config.Agents {
		if s.ws().HasRole(a.Name, workspace.TeamLeadRole) {
			leads = append(leads, a.Name)
		}
	}
	d.Table = person != "" && s.atTable()
	inboxes := map[string][]string{} // message id -> the seat's inboxes holding it
	for _, agent := range people {
		entries, err := s.ws().Mailbox(agent).List(mailbox.Inbox)
		if err != nil {
			d.Err = err.Error()
			continue
		}
		for _, en := range entries {
			inboxes[en.ID] = append(inboxes[en.ID], agent)
			m, err := mailbox.ReadMessage(en.Path, s.ws().Config.Router.MaxMessageSize)
			if err != nil {
				continue
			}
			wt := waiting{ID: en.ID, Agent: agent, From: m.Header().Text("from"), Type: workspace.TypeOf(m), Body: markdown(m.Body), Kind: "message"}
			esc := -1 // the escalation that waits, if it is one (parley pipeline lists it)
			if m.Header().Text("escalation") != "" {
				esc = slices.IndexFunc(escs, func(x orchestrator.Escalation) bool { return x.Agent == agent && x.ID == en.ID })
			}
			// Whether it asks the person is decided as parley play decides
			// it, of this copy.
			asks := campaigns.SeatAnswerer(wt.Type, []string{agent}, person, prompted) != ""
			answered := ""
			if asks {
				// An answer sent already, by a seat stopped before it
				// filed the question (parley play and parley answer
				// file it and send nothing).
				answered = s.ws().AnsweredBy(en.ID, wt.From, append([]string{person, prompted}, leads...)...)
			}
			if asks && answered == "" && d.Table && d.ends.PastQuestion(m) {
				// Left unanswered by a session that has ended: told as
				// such, and filed once shown, as parley play does;
				// never asked (agents.PastQuestion decides, for both).
				asks = false
				if d.unanswered == nil {
					d.unanswered = map[string]bool{}
				}
				d.unanswered[en.ID] = true
			}
			switch {
			case esc < 0 && s.ws().Mailbox(agent).HandledIn(en.ID) != "":
				// A copy come back into the inbox (git stash, git
				// checkout) of one handled already asks nothing (parley
				// play files it, parley answer refuses it): it says so,
				// a message to file.
				wt.Question = "Handled already: this copy came back into the inbox; answering it sends nothing. Mark it handled."
			case answered != "":
				wt.Question = "Answered already (" + answered + " was sent): answering it again sends nothing. Mark it handled."
			case asks && wt.Type == campaigns.AskPlayerType:
				wt.Kind = "ask"
				wt.Question = m.Payload().Text("question")
				wt.Options = askOptions(m)
			case asks && wt.Type == campaigns.RelayToHumanType:
				wt.Kind = "relay"
				for i, o := range campaigns.RelayOptions(string(m.Body)) {
					wt.Options = append(wt.Options, option{N: i + 1, Label: o})
				}
			case asks && wt.Type == campaigns.GMToPlayerType:
				// To the person's character, which no program plays:
				// theirs to answer (see Options.Prompted).
				wt.Kind = "prompt"
				kind := strings.ToLower(strings.ReplaceAll(m.Payload().Text("request_type"), "_", " "))
				who := m.Payload().Text("to") // the character, in the protocol's own to:
				if who == "" {
					who = m.Header().Text("to")
				}
				wt.Question = fmt.Sprintf("%s asks %s (%s)", wt.From, who, kind)
			case campaigns.SeatJournals(wt.Type, prompted) && d.Campaign:
				// The character's journal entry, which no program
				// writes (parley play decides it so too): it waits
				// until /journal ENTRY writes one, and is filed then.
				wt.Kind = "journal"
				wt.Question = "Yours to answer: no program writes your character's journal. Say what happened (/journal ENTRY at the seat's line does the same)."
			case slices.Contains(requestTypes, wt.Type):
				wt.Kind = "request"
			case esc >= 0:
				// (An escalation that does not wait, one parley pipeline
				// does not list, is a message to file, as parley done
				// files it.)
				decide(&wt, escs[esc])
			}
			d.Waiting = append(d.Waiting, wt)
		}
		// The escalations that wait elsewhere: in cur/, or answered with
		// a decision the orchestrator does not know (in done/).
		for _, x := range escs {
			if x.Agent != agent || x.State == mailbox.Inbox || x.State == mailbox.Done && !x.Waiting() {
				continue
			}
			wt := waiting{ID: x.ID, Agent: agent, From: x.Message.Header().Text("from"), Type: workspace.TypeOf(x.Message), Body: markdown(x.Message.Body), Kind: "message"}
			decide(&wt, x)
			d.Waiting = append(d.Waiting, wt)
		}
	}
	// A message in two of the seat's inboxes (a prompt to the person's
	// character that a route copies to the person) waits once: as what
	// it asks of the person (answering it handles both copies), else as
	// the first copy.
	var once []waiting
	at := map[string]int{}
	for _, w := range d.Waiting {
		i, twice := at[w.ID]
		switch {
		case !twice:
			at[w.ID] = len(once)
			once = append(once, w)
		case once[i].Kind == "message" && w.Kind != "message":
			once[i] = w
		}
	}
	d.Waiting = once
	if d.Table {
		s.tell(&d, people, inboxes)
	}
	return d
}

// tell moves what asks nothing of the person out of what waits, into the
// story told (d.Told), as parley play shows it: once, whichever of the
// seat's inboxes hold it; and notes it (d.file) to file there, handled in
// every one of them, as play does (Actions.Shown), once the page posts
// that it showed it. The story
// told is all of those (nothing is filed untold), and, up to storyShown
// in all, the newest of what the seat's inboxes filed before (done/), so
// that it reads the same after a reload.
func (s *Server) tell(d *seatData, people []string, inboxes map[string][]string) {
	waits := map[string]bool{}
	var left []waiting
	file := map[string][]string{} // id -> the inboxes to file it in
	for _, w := range d.Waiting {
		if w.Kind == "message" && w.Question == "" && w.Decide == nil {
			file[w.ID] = inboxes[w.ID]
			continue
		}
		waits[w.ID] = true
		left = append(left, w)
	}
	d.Waiting = left
	where := map[string]string{} // id -> a file of it
	whose := map[string]string{} // id -> the seat's inbox it was filed from
	for _, agent := range people {
		box := s.ws().Mailbox(agent)
		names, total, _ := box.Newest(mailbox.Done, storyShown)
		d.Earlier = d.Earlier || total > len(names)
		for _, n := range names {
			if id, ok := strings.CutSuffix(n, ".md"); ok && !waits[id] && where[id] == "" {
				where[id], whose[id] = box.Path(mailbox.Done, n), agent
			}
		}
	}
	// What the person's character said, at this seat or another (parley
	// play, a page reloaded since, parley send as its agent): told in
	// its place, as parley play shows it (sentElsewhere), read from the
	// outbox/ and sent/ of its agent.
	said := s.saidBy(file, where)
	// What is filed now is all told, however many (the page shows what
	// it files: a tab closed through 50 narratives tells all 50); what
	// was filed before fills the story up to storyShown.
	history := slices.Sorted(maps.Keys(where))
	history = slices.DeleteFunc(history, func(id string) bool { _, now := file[id]; return now })
	if keep := max(storyShown-len(file), 0); len(history) > keep {
		d.Earlier = true
		history = history[len(history)-keep:]
	}
	for id, holders := range file {
		where[id] = s.ws().Mailbox(holders[0]).Path(mailbox.Inbox, mailbox.FileName(id))
	}
	ids := slices.Sorted(slices.Values(append(history, slices.Collect(maps.Keys(file))...)))
	for _, id := range ids {
		if m, ok := said[id]; ok {
			t := toldOf(id, m, false)
			t.Said = saidLine(m)
			d.Told = append(d.Told, t)
			continue
		}
		m, err := mailbox.ReadMessage(where[id], s.ws().Config.Router.MaxMessageSize)
		if err != nil {
			continue
		}
		_, received := file[id]
		t := toldOf(id, m, received)
		// An earlier session's end (left unread by a session run with no
		// seat, or brought by git) ends nothing: agents.PastEnd decides,
		// as for parley play.
		t.Past = t.End && d.ends.PastEnd(people, m)
		t.Unanswered = d.unanswered[id]
		if !received && s.filedUnanswered(d.ends, id, m, whose[id]) {
			t.Unanswered, t.Question = true, m.Payload().Text("question")
		}
		d.Told = append(d.Told, t)
	}
	slices.Reverse(d.Told)
	d.file = file
	d.NoRunner = s.ws().RunnerPID() == 0
}

// saidBy returns what the agent of the person's character (when no
// program plays it: Options.Prompted) said in character, of the newest
// storyShown files of its outbox/ and sent/: its [PLAYER_TO_GM] and
// [PLAYER_TO_PLAYER], not an answer (reply_to:), whose question the story
// tells, as parley play leaves them out (sentElsewhere). By id; each is
// noted in where too (the story's history), unless the seat tells it
// already (file, where).
func (s *Server) saidBy(file map[string][]string, where map[string]string) map[string]*mailbox.Message {
	_, prompted := s.seated()
	if prompted == "" || s.ws().CheckAgent(prompted) != nil {
		return nil
	}
	box := s.ws().Mailbox(prompted)
	said := map[string]*mailbox.Message{}
	for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
		names, _, err := box.Newest(state, storyShown)
		if err != nil {
			continue
		}
		dir := box.Path(state, "")
		for _, n := range names {
			id, ok := mailbox.IDFromName(n)
			if _, told := file[id]; !ok || told || where[id] != "" || said[id] != nil {
				continue
			}
			if m, err := s.files.Read(dir, n, s.ws().Config.Router.MaxMessageSize); err == nil && campaigns.SeatSaid(m) {
				said[id] = m
				where[id] = box.Path(state, n)
			}
		}
	}
	return said
}

// saidLine says who said m (a [PLAYER_TO_GM] or [PLAYER_TO_PLAYER] of the
// person's character), how and to whom, as parley play does.
func saidLine(m *mailbox.Message) string {
	who := m.Payload().Text("character")
	if who == "" {
		who = m.Header().Text("from")
	}
	if workspace.TypeOf(m) == campaigns.PlayerToGMType {
		how := strings.ToLower(m.Payload().Text("type"))
		if how == "" {
			how = "action"
		}
		return who + ", " + how + ", to the game master"
	}
	to := m.Payload().Text("to")
	if to == "" {
		to = m.Header().Text("to")
	}
	return who + " to " + to
}

// filedUnanswered reports whether message id, filed in agent's done/, is
// a question of the person's that a session that has ended left
// unanswered (agents.PastQuestion, of ends; no answer sent): the story tells it
// so, not as answered.
func (s *Server) filedUnanswered(ends *agents.Ends, id string, m *mailbox.Message, agent string) bool {
	person, prompted := s.seated()
	if campaigns.SeatAnswerer(workspace.TypeOf(m), []string{agent}, person, prompted) == "" {
		return false
	}
	var leads []string
	for _, a := range s.ws().Config.Agents {
		if s.ws().HasRole(a.Name, workspace.TeamLeadRole) {
			leads = append(leads, a.Name)
		}
	}
	if s.ws().AnsweredBy(id, m.Header().Text("from"), append([]string{person, prompted}, leads...)...) != "" {
		return false
	}
	return ends.PastQuestion(m)
}

// toldOf is message id as the story told shows it.
func toldOf(id string, m *mailbox.Message, received bool) told {
	t := told{ID: id, From: m.Header().Text("from"), Type: workspace.TypeOf(m), Body: markdown(m.Body), Received: received}
	switch t.Type {
	case campaigns.AskPlayerType:
		t.Question = m.Payload().Text("question")
	case "SESSION_END":
		t.End = true
		t.Summary = strings.TrimSpace(m.Payload().Text("summary"))
		t.Hook = strings.TrimSpace(m.Payload().Text("next_hook"))
		if !agents.StateSaved(m) {
			t.Unsaved = strings.TrimSpace(m.Payload().Text("state_saved"))
			if t.Unsaved == "" {
				t.Unsaved = "missing"
			}
		}
	}
	return t
}

// decide makes wt the escalation x: the orchestrator asks a person to
// decide (approve, retry or stop, answered as parley reply --field
// decision=DECISION answers it), unless its step went on without a
// decision: then answering it sends nothing (parley pipeline counts it
// settled), and it is a message to read and file.
func decide(wt *waiting, x orchestrator.Escalation) {
	if x.Pending {
		wt.Question = "Settled: its step was ticked by hand; parley run goes on from it when it next looks (a running one within seconds, else the next one when it starts). Mark it handled."
		return
	}
	if !x.Waiting() {
		wt.Question = fmt.Sprintf("Settled: its step went on without a decision (%s); answering it sends nothing. Mark it handled.", x.Settled)
		return
	}
	wt.Kind = "escalation"
	wt.Decide = orchestrator.Choices(x.Kind)
	if x.Misspelt != "" {
		wt.Question = fmt.Sprintf("Your answer's decision %q is none of %s: nothing was done. Answer it again.", x.Misspelt, strings.Join(orchestrator.Decisions(), ", "))
	}
}

// askOptions returns the options of an [ASK_PLAYER], numbered from 1.
func askOptions(m *mailbox.Message) []option {
	var out []option
	for i, o := range campaigns.AskOptions(m) {
		out = append(out, option{N: i + 1, Label: o.Label, Description: o.Description})
	}
	return out
}

func (s *Server) seat(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "seat", s.newPage(r, "Seat", "/seat", s.seatData()))
}
