package orchestrator

import (
	"cmp"
	"maps"
	"slices"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// live is the history of the messages an orchestrator agent handles,
// kept from one to the next (Orchestrator.Handle): the records of its
// mailbox's files, oldest first, correlated (fold). A message handled
// costs what changed in the mailbox since the last: the records of the
// files that changed are put in or taken out, and the correlation is
// taken back to the oldest of them and done again from there, which
// touches the messages since then, not the whole history. Every
// decision is the one the history read afresh gives (history): the
// records are correlated in the same order, by the same steps.
type live struct {
	agent string
	built bool
	seen  [len(liveStates)]stamp // of each state's entries, as last applied
	recs  map[place]*record      // every file's record, by where it is
	// copies are the records of each id, first the one the history
	// holds (the first in liveStates' order, then name order): a second
	// copy of an id is left out, as history does.
	copies  map[string][]*record
	base    []*record            // the records the history holds, oldest first (less)
	h       *history             // over base; byID its records and cur's
	ix      liveIndex            // base by what the history's lookups ask; ix.notices: closedBy's
	closed  map[string]bool      // closedBy, as last folded
	fold    *fold                // base and cur, correlated
	waiting map[string][]*record // a reply_to no record had when folded -> its records
	cur     *record              // the message handled last, folded in
	loaded  []*record            // records whose file a decision read (msg), forgotten after it
}

// liveStates are the states a history reads, in its order.
var liveStates = [...]string{mailbox.Outbox, mailbox.Sent, mailbox.Done}

// stamp is where a state's entries were in their series (index.stamp).
type stamp struct {
	epoch, gen int
	ok         bool
}

// place is where a file is: its state (an index of liveStates) and name.
type place struct {
	state int
	name  string
}

// less is the order records are correlated in: by the time of their id,
// then as history reads them (states in order, names in order), the
// message being handled after the files of its time.
func less(a, b *record) bool { return compare(a, b) < 0 }

func compare(a, b *record) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	switch {
	case a.isCur != b.isCur:
		if a.isCur {
			return 1
		}
		return -1
	case a.state != b.state:
		return cmp.Compare(a.state, b.state)
	}
	return cmp.Compare(a.file, b.file)
}

// liveHistory is o.history(agent, in) for the message Handle is handed,
// from agent's live history; done forgets what the decisions read of
// the files, and must be called once they are made. A message whose id
// a file of the history holds (handled again after a crash) has its
// history read afresh.
func (o *Orchestrator) liveHistory(agent string, in *mailbox.Message) (h *history, done func()) {
	o.liveMu.Lock()
	if o.lives == nil {
		o.lives = map[string]*live{}
	}
	l := o.lives[agent]
	if l == nil {
		l = &live{agent: agent}
		o.lives[agent] = l
	}
	done = func() {
		for _, r := range l.loaded {
			if r.e != nil {
				r.m = nil
			}
		}
		l.loaded = l.loaded[:0]
		o.liveMu.Unlock()
	}
	x := o.index()
	x.mu.Lock()
	x.kept = true
	x.mu.Unlock()
	box := o.ws().Mailbox(agent)
	max := o.ws().Config.Router.MaxMessageSize
	var now [len(liveStates)]stamp
	var dirs [len(liveStates)]string
	var changed []place
	fresh := !l.built
	for i, state := range liveStates {
		dirs[i] = box.Path(state, "")
		s := &now[i]
		s.epoch, s.gen, s.ok = x.stamp(dirs[i], max)
		if fresh || *s == l.seen[i] {
			continue
		}
		names, ok := x.since(dirs[i], l.seen[i].epoch, l.seen[i].gen, s.gen)
		if !ok || !s.ok || !l.seen[i].ok {
			fresh = true
			continue
		}
		for _, n := range names {
			changed = append(changed, place{i, n})
		}
	}
	curID := get(in, "id")
	cur := &record{m: in, isCur: true}
	cur.at, _, _ = mailbox.ParseID(curID)
	if fresh {
		l.rebuild(o, x, dirs, max, now, cur)
	} else {
		l.apply(o, x, dirs, now, changed, cur)
	}
	if l.cur != cur {
		// Not one the live history can take (no id, or one a file
		// holds): read afresh.
		return o.history(agent, in), done
	}
	// The history's records are base's and cur after them, in the
	// room base keeps after its own.
	l.base = slices.Grow(l.base, 1)
	all := append(l.base, cur)
	return &history{all: all, byID: l.h.byID, cur: cur, inDead: o.inDead, ix: &l.ix, nbase: len(l.base)}, done
}

// rebuild makes the live history afresh from the listings now, with cur
// folded in.
func (l *live) rebuild(o *Orchestrator, x *index, dirs [len(liveStates)]string, max int64, now [len(liveStates)]stamp, cur *record) {
	l.seen = now
	l.recs = map[place]*record{}
	l.copies = map[string][]*record{}
	l.base = nil
	l.ix = liveIndex{threads: map[string][]*record{}, tasks: map[string][]*record{}, answered: map[*record][]*record{}}
	l.h = &history{byID: map[string]*record{}}
	l.waiting = map[string][]*record{}
	for i, dir := range dirs {
		ls := x.list(dir, max)
		if ls == nil {
			continue
		}
		for j, name := range ls.names {
			l.put(l.record(x, place{i, name}, ls.ents[j]))
		}
	}
	l.cur = nil
	l.built = true
	if id := cur.get("id"); id == "" || len(l.copies[id]) > 0 {
		cur = nil
	}
	l.take(cur)
	l.closed = l.closedNow(o)
	l.refold(nil)
}

// record is the record of the file at p, of entry e.
func (l *live) record(x *index, p place, e *entry) *record {
	r := &record{e: e, x: x, state: p.state, file: p.name, sent: p.state != 2, loads: &l.loaded}
	if r.get("id") == "" {
		// A file written by hand moves to sent/ as it is, under the id
		// the router gave it: the name says it.
		id, _ := mailbox.IDFromName(p.name)
		r.set("id", id)
	}
	r.at, _, _ = mailbox.ParseID(r.get("id"))
	return r
}

// put adds r, a file's record.
func (l *live) put(r *record) {
	id := r.get("id")
	l.recs[place{r.state, r.file}] = r
	if id == "" {
		return
	}
	cs := l.copies[id]
	i, _ := slices.BinarySearchFunc(cs, r, func(a, b *record) int {
		return cmp.Or(cmp.Compare(a.state, b.state), cmp.Compare(a.file, b.file))
	})
	l.copies[id] = slices.Insert(cs, i, r)
	if i == 0 {
		if len(cs) > 0 {
			l.drop(cs[0])
		}
		l.hold(r)
	}
}

// remove takes out r, a file's record.
func (l *live) remove(r *record) {
	id := r.get("id")
	delete(l.recs, place{r.state, r.file})
	if id == "" {
		return
	}
	cs := l.copies[id]
	i := slices.Index(cs, r)
	if i < 0 {
		return
	}
	l.copies[id] = slices.Delete(cs, i, i+1)
	if len(l.copies[id]) == 0 {
		delete(l.copies, id)
	}
	if i == 0 {
		l.drop(r)
		if next := l.copies[id]; len(next) > 0 {
			l.hold(next[0])
		}
	}
}

// hold puts r in the history.
func (l *live) hold(r *record) {
	i, _ := slices.BinarySearchFunc(l.base, r, compare)
	l.base = slices.Insert(l.base, i, r)
	l.h.byID[r.get("id")] = r
	if !r.sent && r.from() == workspace.Runner {
		l.ix.notices = insert(l.ix.notices, r)
	}
	if r.sent {
		// A received record is indexed by thread once correlated
		// (refold).
		l.ix.threads[r.thread()] = insert(l.ix.threads[r.thread()], r)
		if r.get("escalation") != "" {
			l.ix.escalations = insert(l.ix.escalations, r)
		}
		if r.typ() == TaskAssignment {
			pf := cleanPlan(r.get("plan_file"))
			l.ix.tasks[pf] = insert(l.ix.tasks[pf], r)
		}
	}
}

// insert puts r in rs, a list in compare's order.
func insert(rs []*record, r *record) []*record {
	i, _ := slices.BinarySearchFunc(rs, r, compare)
	return slices.Insert(rs, i, r)
}

// without takes r out of rs, a list in compare's order.
func without(rs []*record, r *record) []*record {
	if i, ok := slices.BinarySearchFunc(rs, r, compare); ok && rs[i] == r {
		return slices.Delete(rs, i, i+1)
	}
	return rs
}

// drop takes r out of the history.
func (l *live) drop(r *record) {
	if i, ok := slices.BinarySearchFunc(l.base, r, compare); ok && l.base[i] == r {
		l.base = slices.Delete(l.base, i, i+1)
	}
	if l.h.byID[r.get("id")] == r {
		delete(l.h.byID, r.get("id"))
	}
	l.ix.notices = without(l.ix.notices, r)
	if r.sent {
		l.unthread(r)
		l.ix.escalations = without(l.ix.escalations, r)
		pf := cleanPlan(r.get("plan_file"))
		if l.ix.tasks[pf] = without(l.ix.tasks[pf], r); len(l.ix.tasks[pf]) == 0 {
			delete(l.ix.tasks, pf)
		}
	}
}

// unthread takes r out of the index of its thread.
func (l *live) unthread(r *record) {
	t := r.thread()
	if l.ix.threads[t] = without(l.ix.threads[t], r); len(l.ix.threads[t]) == 0 {
		delete(l.ix.threads, t)
	}
}

// take makes cur the message being handled (nil: none), in place of the
// last: it is folded in at its time.
func (l *live) take(cur *record) {
	if l.cur != nil && l.h.byID[l.cur.get("id")] == l.cur {
		delete(l.h.byID, l.cur.get("id"))
	}
	l.cur = cur
	if cur != nil {
		l.h.byID[cur.get("id")] = cur
	}
}

// apply puts in the records of the files that changed (changed, as the
// listings now have them) and cur in place of the last message handled,
// and folds again from the oldest record either touched.
func (l *live) apply(o *Orchestrator, x *index, dirs [len(liveStates)]string, now [len(liveStates)]stamp, changed []place, cur *record) {
	var pivot *record // the oldest record whose correlation may change
	lower := func(r *record) {
		if r != nil && (pivot == nil || less(r, pivot)) {
			pivot = r
		}
	}
	lower(l.cur)
	curID := cur.get("id")
	lower(cur)
	for _, r := range l.waiting[curID] {
		lower(r)
	}
	type change struct {
		old, new *record
	}
	var cs []change
	for _, p := range changed {
		old := l.recs[p]
		e := x.entry(dirs[p.state], p.name)
		if old != nil && old.e == e {
			continue
		}
		var nr *record
		if e != nil {
			nr = l.record(x, p, e)
		}
		cs = append(cs, change{old, nr})
		for _, r := range []*record{old, nr} {
			if r == nil {
				continue
			}
			lower(r)
			if held := l.h.byID[r.get("id")]; held != nil && held != l.cur {
				lower(held)
			}
			for _, w := range l.waiting[r.get("id")] {
				lower(w)
			}
		}
	}
	l.seen = now
	if pivot == nil {
		return
	}
	l.rollback(pivot)
	for _, c := range cs {
		if c.old != nil {
			l.remove(c.old)
		}
		if c.new != nil {
			l.put(c.new)
		}
	}
	if curID == "" || len(l.copies[curID]) > 0 {
		cur = nil
	}
	l.take(cur)
	if closed := l.closedNow(o); !maps.Equal(closed, l.closed) {
		l.closed = closed
		l.refold(nil)
		return
	}
	l.refold(pivot)
}

// closedNow is closedBy of the notices the history holds, and cur's.
func (l *live) closedNow(o *Orchestrator) map[string]bool {
	ns := l.ix.notices
	if c := l.cur; c != nil && !c.sent && c.from() == workspace.Runner {
		ns = slices.Clone(ns)
		i, _ := slices.BinarySearchFunc(ns, c, compare)
		ns = slices.Insert(ns, i, c)
	}
	return closedBy(ns, o.inDead)
}

// rollback takes back the fold of the records from pivot on.
func (l *live) rollback(pivot *record) {
	f := l.fold
	if f == nil {
		return
	}
	l.each(pivot, func(r *record) {
		if r.sent {
			return
		}
		if !r.isCur {
			l.unthread(r)
		}
		if r.req != nil {
			if r.req.k != nil && r.req.k.answer == r {
				r.req.k.answer = nil
			}
			as := slices.DeleteFunc(l.ix.answered[r.req], func(a *record) bool { return a == r })
			if l.ix.answered[r.req] = as; len(as) == 0 {
				delete(l.ix.answered, r.req)
			}
		}
		r.req, r.dup, r.thr = nil, nil, ""
	})
	from := func(rs []*record) []*record {
		i := len(rs)
		for i > 0 && !less(rs[i-1], pivot) {
			i--
		}
		return rs[:i]
	}
	for k, rs := range f.sentTo {
		f.sentTo[k] = from(rs)
	}
	f.triages = from(f.triages)
	for id, r := range f.byReply {
		if !less(r, pivot) {
			delete(f.byReply, id)
		}
	}
}

// refold folds the records from pivot on (nil: all, afresh).
func (l *live) refold(pivot *record) {
	if pivot == nil || l.fold == nil {
		for _, r := range l.base {
			if r.k != nil {
				r.k = nil
			}
			r.req, r.dup, r.thr = nil, nil, ""
		}
		if l.cur != nil {
			l.cur.k = nil
		}
		l.fold = newFold(l.h, l.closed)
		l.waiting = map[string][]*record{}
		pivot = nil
		clear(l.ix.answered)
		clear(l.ix.threads)
		for _, r := range l.base {
			if r.sent {
				l.ix.threads[r.thread()] = append(l.ix.threads[r.thread()], r)
			}
		}
	}
	f := l.fold
	f.h = l.h
	f.notices = l.closed
	l.each(pivot, func(r *record) {
		f.step(r)
		if !r.sent && !r.isCur {
			l.ix.threads[r.thread()] = insert(l.ix.threads[r.thread()], r)
		}
		if !r.sent && r.req != nil {
			l.ix.answered[r.req] = append(l.ix.answered[r.req], r)
		}
		if id := r.get("reply_to"); !r.sent && id != "" && l.h.byID[id] == nil && !slices.Contains(l.waiting[id], r) {
			l.waiting[id] = append(l.waiting[id], r)
		}
	})
}

// each calls fn with the records of base and cur from pivot on (nil:
// all), oldest first.
func (l *live) each(pivot *record, fn func(r *record)) {
	i := 0
	if pivot != nil {
		i, _ = slices.BinarySearchFunc(l.base, pivot, compare)
	}
	cur := l.cur
	if cur != nil && pivot != nil && less(cur, pivot) {
		cur = nil
	}
	for _, r := range l.base[i:] {
		if cur != nil && less(cur, r) {
			fn(cur)
			cur = nil
		}
		fn(r)
	}
	if cur != nil {
		fn(cur)
	}
}
