package orchestrator

import (
	"bytes"
	"cmp"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// history is what the orchestrator's mailbox holds: the messages it sent
// (outbox/, sent/) and those it handled (done/), oldest first, and the
// message being handled last. Every decision is made from it.
type history struct {
	all    []*record
	byID   map[string]*record
	cur    *record // the message being handled
	remote bool    // a remote sender's, as its recipient here holds it (remoteHistory)
	// inDead reports whether the message id is still in agent's dead/
	// (nil: never); a message given up here that is not was handed back
	// by `parley retry`, and is open to an answer again.
	inDead func(agent, id string) bool
	// ix, of a live history, finds records without a look at every one
	// (nil: the lookups go through all); all holds first its nbase
	// records, then cur, then those the decisions added (add).
	ix    *liveIndex
	nbase int
}

// added is the records the decisions added to h since it was read
// (add): those after cur.
func (h *history) added() []*record {
	if h.ix == nil {
		return nil
	}
	return h.all[h.nbase+1:]
}

// liveIndex is a live history's records by what its lookups ask (see
// live): each list oldest first, none holding the message being
// handled (cur) but answered.
type liveIndex struct {
	threads     map[string][]*record  // by thread()
	notices     []*record             // parley's notices (from the runner)
	escalations []*record             // sent with an escalation field
	tasks       map[string][]*record  // task_assignments sent, by cleanPlan(plan_file)
	answered    map[*record][]*record // a request -> the records correlate found answer it
}

// allLess is h.all's order of two of a live history's records: the
// message being handled last.
func allLess(a, b *record) bool {
	switch {
	case a.isCur:
		return false
	case b.isCur:
		return true
	}
	return less(a, b)
}

// since is the records of h sent or received after at, and perhaps some
// before: all of them when h has no index.
func (h *history) since(at time.Time) []*record {
	if h.ix == nil {
		return h.all
	}
	base := h.all[:h.nbase]
	i, _ := slices.BinarySearchFunc(base, at, func(r *record, t time.Time) int {
		if r.at.After(t) {
			return 1
		}
		return -1
	})
	return h.all[i:]
}

// runnerNotices is the notices from parley h holds, and cur when it is
// one, oldest first: all of h's records when h has no index.
func (h *history) runnerNotices() []*record {
	if h.ix == nil {
		return h.all
	}
	if c := h.cur; c != nil && !c.sent && c.from() == workspace.Runner {
		return append(slices.Clip(h.ix.notices), c) // the records added are sent
	}
	return h.ix.notices
}

// escalations is the escalations h holds, oldest first: all of h's
// records when h has no index.
func (h *history) escalations() []*record {
	if h.ix == nil {
		return h.all
	}
	if len(h.added()) > 0 {
		return slices.Concat(h.ix.escalations, h.added())
	}
	return h.ix.escalations
}

type record struct {
	// m is the message: one in memory (the message being handled), or
	// the file of e as read when a decision first needs more than its
	// header (see msg).
	m    *mailbox.Message
	e    *entry            // of a file: its header as listed (see index)
	x    *index            // that reads e's file
	over map[string]string // fields set over e's: an id from its name, a from
	// Of a live history's record (see live): where its file is, or that
	// it is the message being handled; and the records whose message
	// was read (msg), forgotten once the decisions are made.
	state int
	file  string
	isCur bool
	loads *[]*record
	sent  bool // sent by the orchestrator; else received
	at    time.Time
	// Of a received message, as correlate finds them: req is the
	// request of ours it answers, dup an answer received before it to
	// the same request, thr the thread it belongs to when it names none.
	req, dup *record
	thr      string
	k        *keys // what correlate looks at of m (see keys)
}

// keys is what correlate looks at of a message, read from its header
// once: a history of thousands of messages has each request looked at
// for each answer to its agent.
type keys struct {
	id, typ, thread, planFile, topic, submission string
	step                                         int
	kind                                         string  // of a request, the answer it asks (see kindOf)
	answer                                       *record // of a request, its first answer, as correlate finds it
}

// keys is what correlate looks at of r's message, read the first time.
func (r *record) keys() *keys {
	if r.k == nil {
		r.k = &keys{
			id: r.get("id"), typ: r.typ(), thread: r.get("thread"),
			planFile: r.get("plan_file"), step: atoi(r.get("step")),
			topic: r.get("topic"), submission: r.get("submission"),
		}
		if r.k.planFile != "" {
			r.k.planFile = cleanPlan(r.k.planFile)
		}
		r.k.kind = kindOf(r.k.typ, r.k.submission)
	}
	return r.k
}

// threadKey is r.thread() from its keys.
func (r *record) threadKey() string { return cmp.Or(r.keys().thread, r.thr, r.k.id) }

func (r *record) typ() string { return r.get("type") }

func (r *record) from() string { return r.get("from") }

// get is the header field key of r's message, as get reads it: from the
// entry its file was listed with until the message was read.
func (r *record) get(key string) string {
	if r.m != nil || r.e == nil {
		return get(r.m, key)
	}
	if v, ok := r.over[key]; ok {
		return v
	}
	return r.e.field(key)
}

// toNames is the names of r's to: field.
func (r *record) toNames() []string {
	if r.e == nil && r.m == nil {
		return nil
	}
	if r.m != nil {
		names, _ := r.m.Header().Names("to")
		return names
	}
	return r.e.to
}

// msg is r's message, read from its file the first time (a history keeps
// of the files it lists only their headers: see index).
func (r *record) msg() *mailbox.Message {
	if r.m == nil && r.e != nil {
		m := r.x.message(r.e)
		for k, v := range r.over {
			m.Set(k, v)
		}
		r.m = m
		if r.loads != nil {
			*r.loads = append(*r.loads, r)
		}
	}
	return r.m
}

func (r *record) thread() string {
	if t := r.get("thread"); t != "" {
		return t
	}
	if r.thr != "" {
		return r.thr
	}
	return r.get("id")
}

// replyTo is the id of the message r answers: the request of ours
// correlate found for it, else its reply_to.
func (r *record) replyTo() string {
	if r.req != nil {
		return r.req.get("id")
	}
	return r.get("reply_to")
}

// to reports whether the record was sent to agent.
func (r *record) to(agent string) bool {
	return slices.Contains(r.toNames(), agent)
}

// history reads the orchestrator's mailbox. A file that cannot be read
// as a message is skipped.
func (o *Orchestrator) history(agent string, in *mailbox.Message) *history {
	h := &history{byID: map[string]*record{}, inDead: o.inDead}
	curID := get(in, "id")
	o.readRecords(h, agent, []string{mailbox.Outbox, mailbox.Sent}, func(r *record) (bool, bool) {
		return r.get("id") != curID, true
	})
	o.readRecords(h, agent, []string{mailbox.Done}, func(r *record) (bool, bool) {
		return r.get("id") != curID, false
	})
	h.sort()
	h.cur = &record{m: in}
	h.add(h.cur)
	h.correlate()
	return h
}

// remoteHistory is what sender, an agent of another workspace, did with
// agent of this one, as agent's mailbox holds it: the messages sender
// sent it (in its inbox, cur/, done/ and dead/) as sent, and what agent
// sent to sender (its outbox and sent/) as received. No message is
// being handled.
func (o *Orchestrator) remoteHistory(sender, agent string) *history {
	h := &history{byID: map[string]*record{}, remote: true}
	o.readRecords(h, agent, []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead}, func(r *record) (bool, bool) {
		return r.from() == sender && r.to(agent), true
	})
	o.readRecords(h, agent, []string{mailbox.Outbox, mailbox.Sent}, func(r *record) (bool, bool) {
		if !r.to(sender) {
			return false, false
		}
		if r.from() == "" {
			// What an outbox holds is its agent's (the router stamps
			// from: on the copies it delivers, not on the original).
			r.set("from", agent)
		}
		return true, false
	})
	h.sort()
	h.correlate()
	h.cur = &record{m: mailbox.New(nil)}
	return h
}

// readRecords adds to h the messages named by their ids in agent's
// mailbox states that keep keeps (it may set fields over a record's:
// r.set), and whether each is one the history's agent sent. A file that
// cannot be read as a message is skipped, as is a second copy of an id.
// The files are listed through o's index: a history costs what changed
// in the mailbox since the last, not a look at every file.
func (o *Orchestrator) readRecords(h *history, agent string, states []string, keep func(r *record) (ok, sent bool)) {
	box := o.ws().Mailbox(agent)
	x := o.index()
	for _, state := range states {
		l := x.list(box.Path(state, ""), o.ws().Config.Router.MaxMessageSize)
		if l == nil {
			continue
		}
		for i, name := range l.names {
			r := &record{e: l.ents[i], x: x}
			id := r.get("id")
			if id == "" {
				// A file written by hand moves to sent/ as it is, under
				// the id the router gave it (only the copies it delivers
				// carry it): the name says it.
				id, _ = mailbox.IDFromName(name)
				r.set("id", id)
			}
			ok, sent := keep(r)
			if id == "" || !ok || h.byID[id] != nil {
				continue
			}
			r.sent = sent
			h.add(r)
		}
	}
}

// set sets the field key of r over its file's.
func (r *record) set(key, value string) {
	if r.over == nil {
		r.over = map[string]string{}
	}
	r.over[key] = value
	if r.m != nil {
		r.m = r.m.Clone()
		r.m.Set(key, value)
	}
}

// sort puts the records oldest first.
func (h *history) sort() {
	slices.SortStableFunc(h.all, func(a, b *record) int { return a.at.Compare(b.at) })
}

func (h *history) add(r *record) {
	id := r.get("id")
	r.at, _, _ = mailbox.ParseID(id)
	h.all = append(h.all, r)
	if id != "" {
		h.byID[id] = r
	}
}

// threadOf is the pipeline a message belongs to: its thread, else the
// one correlate found for it (see there); "" for a person's message that
// names none and answers nothing of ours: a new request.
func (h *history) threadOf(in *mailbox.Message) string {
	if t := get(in, "thread"); t != "" {
		return t
	}
	rec := h.byID[get(in, "id")]
	if rec == nil {
		rec = &record{m: in}
	}
	if rec.thr == "" && typeOf(in) == "" {
		return ""
	}
	return rec.thread()
}

// asks reports whether q, a message the orchestrator sent, is a request
// that an answer of type typ answers: a triage_request a triage_result,
// a task or revision a worker_submission, a review request (typed, or a
// submission forwarded) a verdict, and so on. False for a type that
// answers none.
func asks(q *record, typ string) bool {
	k := q.keys().kind
	return k != "" && k == answerKind(typ)
}

// kindOf is the answer a message of ours of type typ (of submission,
// when it names one) asks for, as answerKind names it: the one place
// that decides which messages ask an answer, and so which the pipeline
// waits on (asksAnswer, AwaitsAnswer). "" for one that asks none: an
// approval (the end of a step), a note, an escalation (a person's answer
// is a decision, see fromPerson), a shutdown response; and a message of
// no type that is no review request, a person's decision passed on (see
// passOn: what its agent answers answers the request it was blocked on).
func kindOf(typ, submission string) string {
	switch typ {
	case TriageRequest:
		return TriageResult
	case ResearchRequest:
		return ResearchResult
	case ArchitectureRequest:
		return PlanResult
	case TaskAssignment, RevisionRequest:
		return WorkerSubmission
	case ReviewRequest:
		return ReviewVerdict
	}
	if submission != "" {
		return ReviewVerdict // a review request of no type
	}
	return ""
}

// asksAnswer reports whether q, a message the orchestrator sent, asks
// its recipient for an answer (see kindOf): a request, which the
// pipeline waits on.
func (q *record) asksAnswer() bool { return q.keys().kind != "" }

// name is what the orchestrator calls q, a message it sent, to a
// person: its type, "review request" for one forwarded as an informal
// message (a protocol that lacks the type), else "no type".
func (q *record) name() string {
	if q.typ() == "" && q.asksAnswer() {
		return "review request"
	}
	return orNone(q.typ())
}

// asksNone reports whether q, a message the orchestrator sent, is one of
// the protocol's that asks no answer (see kindOf): an approval, a note.
// Whatever its recipient says to it ("Thanks for the approval!", its
// submission printed again) answers no request of ours, and is filed.
func (q *record) asksNone() bool { return q.typ() != "" && !q.asksAnswer() }

// answerKind is the kind of answer of type typ: its type, a verdict's
// ReviewVerdict (a review request asks either); "" for no answer.
func answerKind(typ string) string {
	switch typ {
	case AuditVerdict:
		return ReviewVerdict
	case TriageResult, ResearchResult, PlanResult, WorkerSubmission, ReviewVerdict:
		return typ
	}
	return ""
}

// isAnswer reports whether a message of type typ answers a request of
// the pipeline (see asks).
func isAnswer(typ string) bool { return answerKind(typ) != "" }

// correlate finds, for each message received, the request of ours it
// answers (req), whether an answer to that request came before it
// (dup), and the thread it belongs to when it names none (thr). It is
// the one rule every decision correlates by; models often leave out
// thread: and reply_to:, so neither is needed:
//
//   - an answer (see asks) answers the request its reply_to names, when
//     that is one of ours it answers, unless an answer to it came
//     already and a request of ours to its sender is open to it: of the
//     kind it answers, not answered, not closed (below), of the named
//     one's thread, and its plan_file and step, or topic, when it has
//     them (the revision of its step, it sent again), and of the
//     answer's plan_file and step, topic, and (a verdict) submission,
//     each when it names it; then the oldest such (a worker's revision
//     that names the task it revises answers the revision_request open
//     for it);
//   - when its reply_to names a message of ours to its sender that asks
//     no answer (asksNone: an approval): none when it repeats what that
//     approved (see repeats), or names no step and no request below is
//     open to it; else the request below;
//   - else the oldest request of ours to its sender, sent before it, of
//     the kind it answers, that nothing answered yet, that is not closed:
//     given up (unless handed back since by parley retry) or left
//     unanswered, or its agent replied to it otherwise (a worker's
//     untyped "Done."); else the newest not answered, else the newest (a
//     second answer to it); among those in its thread, when it names
//     one, and of its plan_file and step, its topic, or (a verdict) the
//     submission reviewed, when it names them and one of them is;
//   - its thread is then the request's; another message's, the thread of
//     the message it replies to, else, when it has a type, the thread of
//     the last triage_request sent before it (the pipeline under way),
//     else its own id.
//
// A second answer to one request (dup) is set aside, never acted on
// twice: a worker that printed its submission twice is reviewed once,
// a triage written twice sends its research requests once. A second
// plan_result is none: acted on again, it sends nothing twice (no step
// in hand is assigned again: see assigned and run.inHand), and an
// architect may well mend a plan that did not check.
func (h *history) correlate() {
	recs := slices.Clone(h.all)
	slices.SortStableFunc(recs, func(a, b *record) int { return a.at.Compare(b.at) })
	for _, r := range recs {
		r.k = nil // read again: a message may have changed since
	}
	f := newFold(h, closedBy(recs, h.inDead))
	for _, r := range recs {
		f.step(r)
	}
}

// closedBy is the requests parley closed (see fold), as the notices
// among recs, oldest first, tell: those nothing answers (given up, left
// unanswered). A request given up and handed back since (`parley
// retry`: here, it left its agent's dead/ (inDead); in another
// workspace, that one's runner told us) is open again.
func closedBy(recs []*record, inDead func(agent, id string) bool) map[string]bool {
	closed := map[string]bool{}
	for _, r := range recs {
		if r.sent || r.from() != workspace.Runner {
			continue
		}
		switch id := r.get("given_up"); {
		case r.typ() == workspace.RetriedNotice:
			delete(closed, r.get("retried"))
		case id != "" && r.get("workspace") == "" && inDead != nil && !inDead(r.get("agent"), id):
			// Handed back here.
		default:
			closed[cmp.Or(id, r.get("unanswered"))] = true
		}
	}
	return closed
}

// fold is what correlate knows as it goes through the records, oldest
// first: each record is correlated from what came before it (step).
type fold struct {
	h *history
	// Requests closed, not open to an answer that names none: those
	// parley closed (notices: closedBy), and, as they come (byReply,
	// each by the first that closed it), those their agent replied to
	// with a message of another kind ("Done.").
	notices map[string]bool
	byReply map[string]*record
	// agent and answerKind -> the requests sent it so far that ask that
	// kind of answer, oldest first
	sentTo  map[[2]string][]*record
	triages []*record // the triage_requests sent so far
}

func newFold(h *history, notices map[string]bool) *fold {
	return &fold{h: h, notices: notices, byReply: map[string]*record{}, sentTo: map[[2]string][]*record{}}
}

// closed reports whether the request id is closed so far.
func (f *fold) closed(id string) bool { return f.notices[id] || f.byReply[id] != nil }

// step correlates r, the next record, oldest first.
func (f *fold) step(r *record) {
	h := f.h
	if r.sent {
		if kind := r.keys().kind; kind != "" {
			for _, n := range r.toNames() {
				f.sentTo[[2]string{n, kind}] = append(f.sentTo[[2]string{n, kind}], r)
			}
		}
		if r.typ() == TriageRequest {
			f.triages = append(f.triages, r)
		}
		return
	}
	r.req, r.dup, r.thr = nil, nil, ""
	q := h.byID[r.get("reply_to")]
	if isAnswer(r.typ()) && r.from() != workspace.Runner {
		cands := f.sentTo[[2]string{r.from(), answerKind(r.typ())}]
		switch {
		case q != nil && q.sent && asks(q, r.typ()):
			r.req = q
			if q.keys().answer != nil {
				// Answered already: a worker's revision that
				// names the task it revises answers the
				// revision_request open for it.
				r.req = cmp.Or(openRequestOf(r, q, cands, f.closed), q)
			}
		case q != nil && q.sent && q.to(r.from()) && q.asksNone():
			// Said to an approval, which a model is often handed
			// with its next task: a repeat of what it approved (a
			// submission printed again) answers no request, not
			// the next step's task sent with it; anything more (a
			// submission for another step, or one open to it) is
			// correlated as any answer that names none.
			if !h.repeats(r, q) {
				o := requestOf(r, cands, f.closed)
				if o != nil && (namesStep(r) || o.keys().answer == nil && !f.closed(o.k.id)) {
					r.req = o
				}
			}
		default:
			r.req = requestOf(r, cands, f.closed)
		}
		switch {
		case r.req == nil:
		case r.req.keys().answer == nil:
			r.req.k.answer = r
		case r.typ() != PlanResult:
			// A plan_result again is the plan again (its first
			// escalated, say): acted on as the plan, nothing of it
			// is sent twice.
			r.dup = r.req.k.answer
		}
	}
	if q != nil && q.sent && q.to(r.from()) && f.byReply[q.get("id")] == nil {
		f.byReply[q.get("id")] = r
	}
	switch {
	case r.req != nil:
		r.thr = r.req.thread()
	case q != nil && q != r:
		r.thr = q.thread()
	case r.typ() != "" && len(f.triages) > 0:
		r.thr = f.triages[len(f.triages)-1].thread()
	}
}

// repeats reports whether a, an answer whose reply_to names ok, an
// approval of ours, repeats what ok approved: it names the step approved
// (plan_file and step), or, naming no step, is the approved submission
// printed again byte for byte (type, signal, payload fields and body).
func (h *history) repeats(a, ok *record) bool {
	sub, planFile, step := h.approved(ok)
	if namesStep(a) {
		return a.k.planFile == planFile && a.k.step == step
	}
	return sub != nil && reprint(a.msg(), sub.msg())
}

// namesStep reports whether a names a step of a plan (plan_file and
// step).
func namesStep(a *record) bool { return a.keys().planFile != "" && a.k.step != 0 }

// approved is what ok, an approval of ours, approved: the submission
// its reply_to names (of a review's approval), and the step, as that
// submission, the request it answers, or (of the person's approval) the
// escalation the person answered names it. Empty when unknown.
func (h *history) approved(ok *record) (sub *record, planFile string, step int) {
	at := h.byID[ok.get("reply_to")]
	if at == nil || at.sent {
		return nil, "", 0
	}
	if at.typ() == WorkerSubmission {
		sub = at
	}
	for _, c := range []*record{at, at.req, h.byID[at.get("reply_to")]} {
		if c != nil && c.keys().planFile != "" && c.k.step != 0 {
			return sub, c.k.planFile, c.k.step
		}
	}
	return sub, "", 0
}

// reprint reports whether a is b printed again: the same type, signal,
// payload fields and body, byte for byte (its id, addressing, thread
// and reply_to may differ).
func reprint(a, b *mailbox.Message) bool {
	if typeOf(a) != typeOf(b) || get(a, "signal") != get(b, "signal") || !bytes.Equal(a.Body, b.Body) {
		return false
	}
	payload := func(m *mailbox.Message) map[string]string {
		f := map[string]string{}
		for _, k := range m.Header().Keys() {
			if !mailbox.IsReserved(k) {
				f[k] = m.Header().Text(k)
			}
		}
		return f
	}
	return maps.Equal(payload(a), payload(b))
}

// requestOf is the request of cands (the requests of the kind a
// answers sent to a's sender before it, oldest first) that the answer a
// answers, by the rule correlate tells (closed: those not open); nil
// when there is none.
func requestOf(a *record, cands []*record, closed func(id string) bool) *record {
	match := cands
	if t := a.keys().thread; t != "" {
		match = nil
		for _, q := range cands {
			if q.threadKey() == t {
				match = append(match, q)
			}
		}
	}
	narrow := func(keep func(q *record) bool) {
		var some []*record
		for _, q := range match {
			if keep(q) {
				some = append(some, q)
			}
		}
		if len(some) > 0 {
			match = some
		}
	}
	for _, same := range sameAs(a) {
		narrow(same)
	}
	for _, q := range match {
		if q.k.answer == nil && !closed(q.k.id) {
			return q
		}
	}
	for i := len(match) - 1; i >= 0; i-- {
		if match[i].k.answer == nil {
			return match[i]
		}
	}
	if len(match) > 0 {
		return match[len(match)-1]
	}
	return nil
}

// sameAs is what the answer a names of the request it answers, each as
// a test of a request: its plan_file and step, its topic, and, of a
// verdict, the submission reviewed.
func sameAs(a *record) []func(q *record) bool {
	var same []func(q *record) bool
	k := a.keys()
	if k.planFile != "" && k.step != 0 {
		same = append(same, func(q *record) bool { return q.keys().planFile == k.planFile && q.k.step == k.step })
	}
	if k.topic != "" {
		same = append(same, func(q *record) bool { return q.keys().topic == k.topic })
	}
	if k.submission != "" && answerKind(k.typ) == ReviewVerdict {
		same = append(same, func(q *record) bool { return q.keys().submission == k.submission })
	}
	return same
}

// openRequestOf is the oldest request of cands (see requestOf) open to
// the answer a, whose reply_to names q, a request answered already: not
// answered, not closed, and about what q was about (its thread,
// and its plan_file and step, or its topic, when it has them: the
// revision of q's step, q sent again) and what a names (sameAs). Nil when
// none is: a is a second answer to q.
func openRequestOf(a, q *record, cands []*record, closed func(id string) bool) *record {
	k := q.keys()
	same := append(sameAs(a), func(o *record) bool { return o.threadKey() == q.threadKey() })
	if k.planFile != "" && k.step != 0 {
		same = append(same, func(o *record) bool { return o.keys().planFile == k.planFile && o.k.step == k.step })
	} else if k.topic != "" {
		same = append(same, func(o *record) bool { return o.keys().topic == k.topic })
	}
	for _, o := range cands {
		if o.keys().answer != nil || closed(o.k.id) {
			continue
		}
		if !slices.ContainsFunc(same, func(f func(*record) bool) bool { return !f(o) }) {
			return o
		}
	}
	return nil
}

// replied is the message a message answers: for one received, the
// request correlate found for it; else the one its reply_to names.
func (h *history) replied(m *mailbox.Message) *record {
	if rec := h.byID[get(m, "id")]; rec != nil && rec.req != nil {
		return rec.req
	}
	return h.byID[get(m, "reply_to")]
}

// started reports whether the orchestrator has sent anything in thread:
// a pipeline is under way there, or was.
func (h *history) started(thread string) bool {
	if thread == "" {
		return false
	}
	rs := h.all
	if h.ix != nil {
		rs = slices.Concat(h.ix.threads[thread], h.added())
	}
	for _, r := range rs {
		if r.sent && r.thread() == thread {
			return true
		}
	}
	return false
}

// driving is the thread of another pipeline than thread that drives
// planFile: the last to assign one of its steps, unless it has ended (its
// summary sent). Empty when there is none.
func (h *history) driving(thread, planFile string) string {
	var last string
	rs := h.all
	if h.ix != nil {
		rs = slices.Concat(h.ix.tasks[planFile], h.added())
	}
	for _, r := range rs {
		if r.sent && r.typ() == TaskAssignment && cleanPlan(r.get("plan_file")) == planFile {
			last = r.thread()
		}
	}
	if last == "" || last == thread || h.sentSummary(last, planFile) {
		return ""
	}
	return last
}

// cleanPlan is a plan_file as readPlan names it: relative, with slashes.
func cleanPlan(name string) string {
	return filepath.ToSlash(filepath.Clean(filepath.FromSlash(name)))
}

// each calls fn with the records of thread, oldest first.
func (h *history) each(thread string, fn func(r *record)) {
	if h.ix != nil && thread != "" {
		for _, r := range h.ix.threads[thread] {
			fn(r)
		}
		if h.cur.thread() == thread {
			fn(h.cur)
		}
		for _, r := range h.added() {
			if r.thread() == thread {
				fn(r)
			}
		}
		return
	}
	for _, r := range h.all {
		if thread == "" || r.thread() == thread {
			fn(r)
		}
	}
}

// pendingEscalation is the escalation in thread that the person's
// message being handled answers: the one it replies to, unless answered
// already (then none); else the last one sent, unless a person's message
// handled since answered it. A reply answers the escalation it names
// only, not a later one; a reply to a note of ours answers the
// escalation the note says waits (WaitingEscalation), and a reply to
// any other note answers none.
func (h *history) pendingEscalation(thread string) *mailbox.Message {
	if thread == "" {
		return nil // a message in no thread answers nothing: a new request
	}
	to := h.cur.get("reply_to")
	if q := h.noteRepliedTo(h.cur); q != nil {
		if to = q.get(WaitingEscalation); to == "" {
			return nil
		}
	}
	return h.waitingEscalation(thread, to)
}

// waitingEscalation is the escalation in thread that a person's message
// replying to the message replyTo answers: that one if it is an
// escalation, unless answered already; else the last one sent, unless a
// person's message handled since answered it. Nil when none waits.
func (h *history) waitingEscalation(thread, replyTo string) *mailbox.Message {
	isEscalation := func(id string) bool {
		r := h.byID[id]
		return r != nil && r.sent && r.get("escalation") != "" && r.thread() == thread
	}
	answered := map[*record]bool{}
	var last *record
	h.each(thread, func(r *record) {
		switch {
		case r.sent && r.get("escalation") != "":
			last = r
		case !r.sent && r != h.cur && r.typ() == "" && h.decides(r):
			// A person's answer; one with no decision (or one misspelt)
			// was refused, and answers nothing.
			to := r.get("reply_to")
			if q := h.noteRepliedTo(r); q != nil {
				to = q.get(WaitingEscalation)
				if to == "" {
					return // a reply to a note answers nothing
				}
			}
			if isEscalation(to) {
				answered[h.byID[to]] = true
			} else if last != nil && !r.at.Before(last.at) {
				answered[last] = true
			}
		}
	})
	if isEscalation(replyTo) {
		if esc := h.byID[replyTo]; !answered[esc] {
			return esc.msg()
		}
		return nil
	}
	if last == nil || answered[last] {
		return nil
	}
	return last.msg()
}

// noteRepliedTo is the message the orchestrator sent that asked no
// decision (a note) to which a person's message replies; nil when it
// replies to an escalation, to none, or to a message not ours.
func (h *history) noteRepliedTo(r *record) *record {
	q := h.byID[r.get("reply_to")]
	if q == nil || !q.sent || q.get("escalation") != "" {
		return nil
	}
	return q
}

// lastFanOut is the research_requests sent for the last triage_result.
func (h *history) lastFanOut(thread string) []*mailbox.Message {
	var group string
	var reqs []*mailbox.Message
	h.each(thread, func(r *record) {
		if !r.sent || r.typ() != ResearchRequest {
			return
		}
		if g := r.get("reply_to"); g != group {
			group, reqs = g, nil
		}
		// One sent again (the first was given up) replaces it.
		reqs = slices.DeleteFunc(reqs, func(q *mailbox.Message) bool { return h.gaveUp(get(q, "id")) && get(q, "topic") == r.get("topic") })
		reqs = append(reqs, r.msg())
	})
	return reqs
}

// fanOutStart is the message the research requests reqs of one fan-out
// were sent for (the triage_result they reply to), else the first of
// them: whatever is sent after it in their thread was sent after the
// fan-out began.
func (h *history) fanOutStart(reqs []*mailbox.Message) *mailbox.Message {
	if t := h.byID[get(reqs[0], "reply_to")]; t != nil {
		return t.msg()
	}
	return reqs[0]
}

// answers matches the received messages of type typ to reqs, the
// requests of one fan-out in thread: each counts for the request it
// answers as correlate finds it (the one its reply_to names, else the
// oldest open one to its sender, in its thread and of its topic when it
// names them), and only when that is one of reqs, or one of reqs
// replaced (the same topic, in thread: sent again after it was given
// up). An answer to a request of another pipeline counts for none here,
// whatever its topic: two requests that ask the same questions each
// wait for their own answers. One that answers no request of ours
// counts for the request of its topic in thread, if its thread is.
func (h *history) answers(thread string, reqs []*mailbox.Message, typ string) map[string]*mailbox.Message {
	got := map[string]*mailbox.Message{}
	byTopic := map[string]string{} // a topic -> the id of the request of reqs that asks it
	for _, q := range reqs {
		if t := get(q, "topic"); t != "" {
			byTopic[t] = get(q, "id")
		}
	}
	for _, r := range h.answerers(thread, reqs) {
		if r.sent || r.typ() != typ {
			continue
		}
		id := ""
		switch {
		case r.req != nil && slices.ContainsFunc(reqs, func(q *mailbox.Message) bool { return q == r.req.msg() }):
			id = r.req.get("id")
		case r.req != nil:
			if r.req.thread() == thread && r.req.get("topic") != "" {
				id = byTopic[r.req.get("topic")]
			}
		case r.thread() == thread && r.get("topic") != "":
			id = byTopic[r.get("topic")]
		}
		if id != "" && got[id] == nil {
			got[id] = r.msg()
		}
	}
	return got
}

// answerers is the records that may answer reqs, the requests of one
// fan-out in thread, as answers takes them, in h.all's order: those that
// answer one of reqs or a request of thread, and those of thread; all
// of h's records when h has no index.
func (h *history) answerers(thread string, reqs []*mailbox.Message) []*record {
	if h.ix == nil {
		return h.all
	}
	seen := map[*record]bool{}
	var rs []*record
	add := func(some []*record) {
		for _, r := range some {
			if !seen[r] {
				seen[r] = true
				rs = append(rs, r)
			}
		}
	}
	for _, q := range reqs {
		if qr := h.byID[get(q, "id")]; qr != nil {
			add(h.ix.answered[qr])
		}
	}
	h.each(thread, func(r *record) {
		add([]*record{r})
		if r.sent {
			add(h.ix.answered[r])
		}
	})
	slices.SortFunc(rs, func(a, b *record) int {
		switch {
		case a == b:
			return 0
		case allLess(a, b):
			return -1
		}
		return 1
	})
	return rs
}

// sentAfter reports whether a message of type typ was sent in thread
// after the message after.
func (h *history) sentAfter(thread, typ string, after *mailbox.Message) bool {
	at, _, _ := mailbox.ParseID(get(after, "id"))
	found := false
	h.each(thread, func(r *record) {
		if r.sent && r.typ() == typ && r.at.After(at) {
			found = true
		}
	})
	return found
}

// forStep reports whether a record is about a step of a plan.
func (r *record) forStep(planFile string, step int) bool {
	return r.get("plan_file") == planFile && atoi(r.get("step")) == step
}

// assigned reports whether the step was given to a worker since the last
// plan_result. (One given before and still in hand is not given again
// either: see run.inHand.)
func (h *history) assigned(thread, planFile string, step int) bool {
	found := false
	h.each(thread, func(r *record) {
		switch {
		case !r.sent && r.typ() == PlanResult:
			found = false
		case r.sent && r.typ() == TaskAssignment && r.forStep(planFile, step):
			found = true
		}
	})
	return found
}

// attempts is which attempt at the step is under way, and the first
// attempt of its current round. Attempts count on over the step's
// rounds: the task_assignment starts round one at attempt 1, each
// revision_request is one attempt more, and a task_assignment sent again
// on a person's retry starts a new round at the attempt it names (its
// iteration field), so attempts 6-10 follow 1-5. Both are 0 when the
// step was never assigned.
func (h *history) attempts(thread, planFile string, step int) (attempt, roundStart int) {
	h.each(thread, func(r *record) {
		if !r.sent || !r.forStep(planFile, step) {
			return
		}
		switch r.typ() {
		case TaskAssignment:
			attempt = max(atoi(r.get("iteration")), 1)
			roundStart = attempt
		case RevisionRequest:
			attempt++
		}
	})
	return attempt, roundStart
}

// failures is the revision requests of the step's current round of
// attempts, as history lines for the person.
func (h *history) failures(thread, planFile string, step int) []string {
	var out []string
	h.each(thread, func(r *record) {
		if !r.sent || !r.forStep(planFile, step) {
			return
		}
		switch r.typ() {
		case TaskAssignment:
			out = nil
		case RevisionRequest:
			out = append(out, "- iteration "+r.get("iteration")+" ("+r.get("fix_severity")+"): "+firstText(string(r.msg().Body)))
		}
	})
	return out
}

// lastSentTo is the last message of one of types sent to agent in
// thread.
func (h *history) lastSentTo(thread, agent string, types ...string) *mailbox.Message {
	var last *mailbox.Message
	h.each(thread, func(r *record) {
		if r.sent && r.to(agent) && slices.Contains(types, r.typ()) {
			last = r.msg()
		}
	})
	return last
}

// reviewRound is the review requests sent for one submission: the last
// to each reviewer (one sent again, after the first was given up,
// replaces it).
func (h *history) reviewRound(thread, submission string) []*mailbox.Message {
	var out []*mailbox.Message
	h.each(thread, func(r *record) {
		if !r.sent || r.get("submission") != submission {
			return
		}
		out = slices.DeleteFunc(out, func(q *mailbox.Message) bool { return h.gaveUp(get(q, "id")) && sameTo(q, r.msg()) })
		out = append(out, r.msg())
	})
	return out
}

// gaveUp reports whether parley told us that nothing answers the message
// id we sent: it was given up (a message_given_up notice naming it), or
// its program left it unanswered (message_unanswered).
func (h *history) gaveUp(id string) bool {
	for _, r := range h.runnerNotices() {
		if r.sent || r.from() != workspace.Runner {
			continue
		}
		if r.typ() == workspace.GivenUpNotice && r.get("given_up") == id || r.typ() == workspace.UnansweredNotice && r.get("unanswered") == id {
			return true
		}
	}
	return false
}

// escalatedGiveUp reports whether the give-up of the message id by agent
// that the notice being handled tells of was escalated already: an
// escalation given_up of that message and agent was sent since it was
// given up. parley's notice has an id of the time of the give-up, and
// is told at least once (a runner killed before it told, the next tells
// it), so the same give-up may be told again; a message given up again
// after a retry is a new give-up, after the escalation of the last.
func (h *history) escalatedGiveUp(id, agent string) bool {
	for _, r := range h.escalations() {
		if r.sent && r.get("escalation") == EscalateGivenUp && r.get("given_up") == id && r.get("agent") == agent && !r.at.Before(h.cur.at) {
			return true
		}
	}
	return false
}

// escalated reports whether an escalation of kind was sent about the
// message id (in field) of agent: one told again is escalated once.
func (h *history) escalated(kind, field, id, agent string) bool {
	for _, r := range h.escalations() {
		if r.sent && r.get("escalation") == kind && r.get(field) == id && r.get("agent") == agent {
			return true
		}
	}
	return false
}

// escalatedAbout reports whether an escalation of kind was sent about
// the message id (its about: field).
func (h *history) escalatedAbout(kind, id string) bool {
	for _, r := range h.escalations() {
		if r.sent && r.get("escalation") == kind && r.get("about") == id {
			return true
		}
	}
	return false
}

// givenUpIn is the workspace the newest give-up of the message id by
// agent was told from, by parley's notice (workspace:) or the
// given_up escalation that passed it on: empty when it was given up
// here, or never told.
func (h *history) givenUpIn(id, agent string) string {
	ws := ""
	rs := h.all
	if h.ix != nil {
		rs = slices.Concat(h.ix.notices, h.ix.escalations)
		slices.SortFunc(rs, compare)
		rs = append(append(rs, h.cur), h.added()...)
	}
	for _, r := range rs {
		told := !r.sent && r.from() == workspace.Runner && r.typ() == workspace.GivenUpNotice
		asked := r.sent && r.get("escalation") == EscalateGivenUp
		if (told || asked) && r.get("given_up") == id && r.get("agent") == agent {
			ws = r.get("workspace")
		}
	}
	return ws
}

// retriedThere reports whether parley of the workspace the message id
// was given up in told us, after the newest give-up it told of, that
// `parley retry` there handed it back to agent (a message_retried
// notice): agent has it again, out of our sight.
func (h *history) retriedThere(id, agent string) bool {
	var givenUp time.Time
	retried := false
	for _, r := range h.runnerNotices() { // oldest first
		if r.sent || r.from() != workspace.Runner || r.get("agent") != agent {
			continue
		}
		switch {
		case r.typ() == workspace.GivenUpNotice && r.get("given_up") == id:
			givenUp, retried = r.at, false
		case r.typ() == workspace.RetriedNotice && r.get("retried") == id && !r.at.Before(givenUp):
			retried = true
		}
	}
	return retried
}

// sameTo reports whether two messages went to the same agents.
func sameTo(a, b *mailbox.Message) bool {
	x, _ := a.Header().Names("to")
	y, _ := b.Header().Names("to")
	return slices.Equal(x, y)
}

// answeredSince reports whether agent answered the record since it was
// sent (by reply_to, or about the same step): it was handled after all
// (a person's `parley retry` of it, given up).
func (h *history) answeredSince(rec *record, agent string) bool {
	found := false
	h.each(rec.thread(), func(r *record) {
		if r.sent || r == h.cur || r.from() != agent || !r.at.After(rec.at) {
			return
		}
		if r.replyTo() == rec.get("id") || rec.get("step") != "" && r.forStep(rec.get("plan_file"), atoi(rec.get("step"))) {
			found = true
		}
	})
	return found
}

// sentAgainSince reports whether what rec asked of agent was sent to
// agent again since: about a step, the step's task or revision (a
// person's retry sends the task), or a request of rec's type for the
// step; about no step, a research request of the same topic in its
// thread (a person's retry sends a copy). Another request about no step
// (a triage, an architecture request) is never taken for sent again: one
// of its type in a shared thread may be another's.
func (h *history) sentAgainSince(rec *record, agent string) bool {
	pf, n := rec.get("plan_file"), atoi(rec.get("step"))
	if pf == "" && (rec.typ() != ResearchRequest || rec.get("topic") == "") {
		return false
	}
	work := func(t string) bool { return t == TaskAssignment || t == RevisionRequest }
	for _, r := range h.since(rec.at) {
		if r == rec || r == h.cur || !r.sent || !r.at.After(rec.at) || !r.to(agent) || !r.forStep(pf, n) {
			continue
		}
		if pf == "" && (r.thread() != rec.thread() || r.get("topic") != rec.get("topic")) {
			continue
		}
		if r.typ() == rec.typ() || work(r.typ()) && work(rec.typ()) {
			return true
		}
	}
	return false
}

// plannedSince reports whether rec is a research request whose
// pipeline asked the architect for its plan since it was sent: the
// research was joined without it (its answer, or the answer of one sent
// again for it, joins nothing now: see researched).
func (h *history) plannedSince(rec *record) bool {
	if rec.typ() != ResearchRequest {
		return false
	}
	for _, r := range h.since(rec.at) {
		if r != h.cur && r.sent && r.typ() == ArchitectureRequest && r.at.After(rec.at) && r.thread() == rec.thread() {
			return true
		}
	}
	return false
}

func isVerdict(r *record) bool {
	return !r.sent && (r.typ() == ReviewVerdict || r.typ() == AuditVerdict)
}

// verdictFor is the first verdict received for a review request q: the
// first that answers it (see correlate).
func (h *history) verdictFor(q *mailbox.Message) *mailbox.Message {
	qr := h.byID[get(q, "id")]
	if qr == nil {
		return nil
	}
	rs := h.all
	if h.ix != nil {
		rs = h.ix.answered[qr]
	}
	for _, r := range rs {
		if isVerdict(r) && r.req == qr && r.dup == nil {
			return r.msg()
		}
	}
	return nil
}

// planFile is the plan of the last plan_result handled in thread.
func (h *history) planFile(thread string) string {
	pf := ""
	h.each(thread, func(r *record) {
		if !r.sent && r.typ() == PlanResult && r.get("plan_file") != "" {
			pf = r.get("plan_file")
		}
	})
	return pf
}

// sentSummary reports whether the summary of a finished plan was sent.
func (h *history) sentSummary(thread, planFile string) bool {
	found := false
	h.each(thread, func(r *record) {
		if r.sent && r.get("pipeline") == "done" && r.get("plan_file") == planFile {
			found = true
		}
	})
	return found
}

// workerOf is the worker the step was last assigned to.
func (h *history) workerOf(thread, planFile string, step int) string {
	w := ""
	h.each(thread, func(r *record) {
		if r.sent && r.typ() == TaskAssignment && r.forStep(planFile, step) {
			if names := r.toNames(); len(names) > 0 {
				w = names[0]
			}
		}
	})
	return w
}

// firstText is the first line of text that is no heading.
func firstText(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return ""
}

// assignedSteps is the title each step of the plan had when it was last
// assigned, since the last plan_result.
func (h *history) assignedSteps(thread, planFile string) map[int]string {
	steps := map[int]string{}
	h.each(thread, func(r *record) {
		switch {
		case !r.sent && r.typ() == PlanResult:
			clear(steps)
		case r.sent && r.typ() == TaskAssignment && r.get("plan_file") == planFile:
			steps[atoi(r.get("step"))] = r.get("task")
		}
	})
	return steps
}

// told reports whether a message sent in thread says text.
func (h *history) told(thread, text string) bool {
	found := false
	h.each(thread, func(r *record) {
		if r.sent && strings.Contains(string(r.msg().Body), text) {
			found = true
		}
	})
	return found
}

// decides reports whether a person's message r answers what it replies
// to as the orchestrator takes it: with a decision (DecisionOf), or to
// an escalation that needs none (its answer is passed on).
func (h *history) decides(r *record) bool {
	if _, ok := DecisionOf(r.msg()); ok {
		return true
	}
	esc := h.byID[r.get("reply_to")]
	return esc != nil && esc.get("escalation") != "" && !NeedsDecision(esc.msg())
}

// approval is how the pipeline approved the step, as the plan's summary
// tells it: by its review (by and kind ""), or by the person by, on an
// escalation of kind (iteration, blocked, given_up, unanswered); ok is
// false when no approval of the pipeline's was sent for it: a person
// ticked it by hand in the plan.
func (h *history) approval(thread, planFile string, step int) (by, kind string, ok bool) {
	h.each(thread, func(r *record) {
		if !r.sent || r.typ() != Approval {
			return
		}
		q := h.byID[r.get("reply_to")]
		switch {
		case q == nil || q.sent:
		case q.typ() == "":
			// A person's decision: about the step of the escalation
			// it answers.
			if esc := h.answered(q); esc != nil && esc.forStep(planFile, step) {
				by, kind, ok = q.from(), esc.get("escalation"), true
			}
		default:
			// A submission: about the step of its review requests.
			h.each(thread, func(rq *record) {
				if rq.sent && rq.get("submission") == q.get("id") && rq.forStep(planFile, step) {
					by, kind, ok = "", "", true
				}
			})
		}
	})
	return by, kind, ok
}

// answered is the escalation a person's message r answers: the one it
// replies to, or the one a note it replies to says waits
// (WaitingEscalation), else the last one sent in its thread before it;
// nil when none.
func (h *history) answered(r *record) *record {
	to := r.get("reply_to")
	if q := h.noteRepliedTo(r); q != nil {
		to = q.get(WaitingEscalation)
	}
	if esc := h.byID[to]; esc != nil && esc.sent && esc.get("escalation") != "" {
		return esc
	}
	var last *record
	h.each(r.thread(), func(q *record) {
		if q.sent && q.get("escalation") != "" && q.at.Before(r.at) {
			last = q
		}
	})
	return last
}
