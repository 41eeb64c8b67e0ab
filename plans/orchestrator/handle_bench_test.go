package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// handling is a workspace whose orchestrator, orch, has n messages in
// its mailbox (benchHistory's pipelines), and the runner's part of
// handling a message: each is handed to Handle, then filed in done/ with
// what it sent in sent/, as the runner does, so that the history grows
// as it does in a run.
type handling struct {
	ws  *workspace.Workspace
	o   *Orchestrator
	ids *mailbox.IDs
	n   int
}

func newHandling(tb testing.TB, n int) *handling {
	tb.Helper()
	ws := newWorkspace(tb, config)
	box := ws.Mailbox("orch")
	for _, r := range benchHistory(n).all {
		state := mailbox.Done
		if r.sent {
			state = mailbox.Sent
		}
		if err := os.WriteFile(box.Path(state, mailbox.FileName(r.get("id"))), r.m.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// Later than every id of benchHistory's.
	now := time.Now()
	ids := &mailbox.IDs{Now: func() time.Time { now = now.Add(time.Millisecond); return now }}
	return &handling{ws: ws, o: &Orchestrator{Workspace: ws}, ids: ids, n: n}
}

// next is a message for orch: a worker's submission that names no
// request (models leave out reply_to and thread), as benchHistory's.
func (h *handling) next() *mailbox.Message {
	m := mailbox.New([]byte("Done: the step's change, with its tests.\n"))
	m.Set("id", h.ids.New("worker-1"))
	m.Set("from", "worker-1")
	m.Set("to", "orch")
	m.Set("type", WorkerSubmission)
	return m
}

// handle hands in to the orchestrator, then files it and what it sent
// as the runner does.
func (h *handling) handle(tb testing.TB, in *mailbox.Message) {
	tb.Helper()
	out, err := h.o.Handle(context.Background(), "orch", in)
	if err != nil {
		tb.Fatal(err)
	}
	h.file(tb, in, out)
}

// file files in, handled, in done/, and out, what was sent for it, in
// sent/, as the runner does.
func (h *handling) file(tb testing.TB, in *mailbox.Message, out []*mailbox.Message) {
	tb.Helper()
	box := h.ws.Mailbox("orch")
	if err := os.WriteFile(box.Path(mailbox.Done, mailbox.FileName(get(in, "id"))), in.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	for _, m := range out {
		m.Set("id", h.ids.New("orch"))
		m.Set("from", "orch")
		if err := os.WriteFile(box.Path(mailbox.Sent, mailbox.FileName(get(m, "id"))), m.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkHandle is one message handled by a running runner's
// orchestrator whose mailbox holds 1,000 and 10,000 messages: the cost
// of a message should not grow with the history. It reports the time
// Handle took (handle-ns/op; ns/op counts the runner's part too: the
// files written for it), the files looked at (stat'ed or read) a
// message, and the live heap after the last message handled (what the
// orchestrator keeps of its history).
func BenchmarkHandle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			h := newHandling(b, n)
			looks := 0
			h.o.index().look = func(string) { looks++ }
			h.handle(b, h.next()) // the first after a start reads every file
			looks = 0
			b.ResetTimer()
			var spent time.Duration
			for b.Loop() {
				in := h.next()
				start := time.Now()
				out, err := h.o.Handle(context.Background(), "orch", in)
				spent += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				h.file(b, in, out) // the runner's part, not timed
			}
			b.StopTimer()
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "handle-ns/op")
			b.ReportMetric(float64(looks)/float64(b.N), "files/op")
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
			runtime.KeepAlive(h.o)
		})
	}
}

// BenchmarkPipeline runs whole pipelines (plan's three steps in two
// waves: a request, its triage, the plan, each step's task, submission,
// review and audit, the approvals and the summary) on an orchestrator
// whose mailbox holds 1,000 and 10,000 messages before, and reports the
// time Handle takes a message (handle-ns/msg).
func BenchmarkPipeline(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			h := newHandling(b, n)
			if err := os.MkdirAll(filepath.Join(h.ws.Root, "plans"), 0o755); err != nil {
				b.Fatal(err)
			}
			h.handle(b, h.next()) // the first after a start reads every file
			var spent time.Duration
			msgs, runs := 0, 0
			for b.Loop() {
				runs++
				pf := "plans/bench-" + strconv.Itoa(runs) + ".md"
				if err := os.WriteFile(filepath.Join(h.ws.Root, pf), []byte(plan), 0o644); err != nil {
					b.Fatal(err)
				}
				queue := []*mailbox.Message{h.from("you", "Retry failed deliveries.")}
				summaries := 0
				for len(queue) > 0 {
					in := queue[0]
					queue = queue[1:]
					start := time.Now()
					out, err := h.o.Handle(context.Background(), "orch", in)
					spent += time.Since(start)
					msgs++
					if err != nil {
						b.Fatal(err)
					}
					h.file(b, in, out)
					for _, m := range out {
						if get(m, "signal") == SignalDone {
							summaries++
						}
						if a := h.reply(m, pf); a != nil {
							queue = append(queue, a)
						}
					}
				}
				if summaries != 1 {
					b.Fatalf("pipeline %d: %d summaries, want 1", runs, summaries)
				}
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(msgs), "handle-ns/msg")
			b.ReportMetric(float64(msgs)/float64(runs), "msgs/pipeline")
		})
	}
}

// from is a message to orch from an agent.
func (h *handling) from(agent, body string, fields ...string) *mailbox.Message {
	m := mailbox.New([]byte(body))
	m.Set("id", h.ids.New(agent))
	m.Set("from", agent)
	m.Set("to", "orch")
	for i := 0; i+1 < len(fields); i += 2 {
		m.SetValue(fields[i], fields[i+1])
	}
	return m
}

// reply is what an agent that does its work at once answers to m, a
// message orch sent (pf: the plan the architect writes); nil for none.
func (h *handling) reply(m *mailbox.Message, pf string) *mailbox.Message {
	to, _ := m.Header().Names("to")
	answer := func(typ, signal, body string, fields ...string) *mailbox.Message {
		a := h.from(to[0], body, append([]string{"type", typ, "signal", signal}, fields...)...)
		a.Set("thread", get(m, "thread"))
		a.Set("reply_to", get(m, "id"))
		return a
	}
	switch typeOf(m) {
	case TriageRequest:
		return answer(TriageResult, "triage_complete", "Tier 2.", "tier", "2", "research_needed", "false")
	case ArchitectureRequest:
		return answer(PlanResult, "plan_complete", "The plan.", "plan_file", pf, "wave_count", "2", "has_blockers", "false")
	case TaskAssignment:
		files := map[string]string{"1": "[a.go]", "2": "[b.go]", "3": "[c.go]"}[get(m, "step")]
		return answer(WorkerSubmission, "rfr", "## Result\n\nDone.", "files_changed", files, "qa_check", "pass")
	case ReviewRequest:
		if to[0] == "auditor" {
			return answer(AuditVerdict, "pass", "Audit: pass", "build_status", "pass", "test_status", "pass")
		}
		return answer(ReviewVerdict, "pass", "Fine.", "critical_count", "0", "moderate_count", "0", "minor_count", "0")
	}
	return nil
}

// TestHandleLooksAtWhatChanged guards the cost of a message handled by
// a running runner's orchestrator: it stat'ed every file of its
// mailbox's history for each (10,000 lstats at 10,000 messages), and
// allocated for each of its records (7,982 allocations a message at
// 1,000 messages, 30,651 at 4,000). The files it looks at for a message
// are those that changed since the last, and what it allocates is the
// same, whatever the size of the history.
func TestHandleLooksAtWhatChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 5,000 files")
	}
	looked, allocs := map[int]int{}, map[int]float64{}
	for _, n := range []int{1000, 4000} {
		h := newHandling(t, n)
		looks := 0
		h.o.index().look = func(string) { looks++ }
		h.handle(t, h.next()) // the first after a start reads every file
		if looks < n {
			t.Fatalf("%d messages: the first message handled looked at %d files, want every one", n, looks)
		}
		looks = 0
		const msgs = 5
		for range msgs {
			h.handle(t, h.next())
		}
		looked[n] = looks
		allocs[n] = testing.AllocsPerRun(5, func() { h.handle(t, h.next()) })
		if kept := h.o.index().len(); kept < n {
			t.Errorf("%d messages: the index holds %d", n, kept)
		}
	}
	if looked[4000] != looked[1000] || looked[1000] > 5*10 {
		t.Errorf("files looked at for 5 messages handled: %d at 1,000 messages of history, %d at 4,000; want the same, what changed (at most 10 a message)", looked[1000], looked[4000])
	}
	t.Logf("allocations a message handled (and filed): %.0f at 1,000 messages of history, %.0f at 4,000", allocs[1000], allocs[4000])
	if allocs[4000] > allocs[1000]*1.2+20 {
		t.Errorf("allocations a message handled (and filed): %.0f at 1,000 messages of history, %.0f at 4,000; want about the same", allocs[1000], allocs[4000])
	}
}

// sameHistory fails t unless live, a history kept from one message to
// the next (live), holds the records fresh, the history read afresh,
// does, in its order, correlated the same.
func sameHistory(t testing.TB, live, fresh *history) {
	t.Helper()
	id := func(r *record) string {
		if r == nil {
			return ""
		}
		return r.get("id")
	}
	var l, f []string
	show := func(r *record) string {
		answer := ""
		if r.k != nil {
			answer = id(r.k.answer)
		}
		return fmt.Sprintf("%s sent=%v req=%s dup=%s thr=%s thread=%s answer=%s", id(r), r.sent, id(r.req), id(r.dup), r.thr, r.thread(), answer)
	}
	for _, r := range live.all {
		l = append(l, show(r))
	}
	for _, r := range fresh.all {
		f = append(f, show(r))
	}
	if !slices.Equal(l, f) {
		t.Errorf("the live history differs from the history read afresh:\nlive:\n%s\nfresh:\n%s", strings.Join(l, "\n"), strings.Join(f, "\n"))
	}
	// Each lookup that the live history answers from its index finds
	// what a look at every record does.
	ids := func(rs []*record) string {
		var out []string
		for _, r := range rs {
			out = append(out, id(r))
		}
		return strings.Join(out, " ")
	}
	threads := map[string]bool{}
	for _, r := range fresh.all {
		threads[r.thread()] = true
	}
	for thread := range threads {
		var lt, ft []*record
		live.each(thread, func(r *record) { lt = append(lt, r) })
		fresh.each(thread, func(r *record) { ft = append(ft, r) })
		if ids(lt) != ids(ft) {
			t.Errorf("thread %s: live %s, afresh %s", thread, ids(lt), ids(ft))
		}
		if live.started(thread) != fresh.started(thread) {
			t.Errorf("started(%s) differs", thread)
		}
	}
	for _, r := range fresh.all {
		if !r.sent {
			continue
		}
		rid := r.get("id")
		if a, b := live.gaveUp(rid), fresh.gaveUp(rid); a != b {
			t.Errorf("gaveUp(%s): live %v, afresh %v", rid, a, b)
		}
		if a, b := live.verdictFor(r.msg()), fresh.verdictFor(r.msg()); get(a, "id") != get(b, "id") {
			t.Errorf("verdictFor(%s): live %s, afresh %s", rid, get(a, "id"), get(b, "id"))
		}
		if a, b := ids(live.since(r.at)), ids(fresh.since(r.at)); !strings.HasSuffix(b, a) {
			t.Errorf("since(%s): live %s, afresh %s", rid, a, b)
		}
	}
	if len(live.byID) != len(fresh.byID) {
		t.Errorf("the live history holds %d ids, the history read afresh %d", len(live.byID), len(fresh.byID))
	}
}

// TestHistorySeesEditInPlace: a message file rewritten in place (its
// name, and its directory, as they were) is read again as it is now,
// its header too, where the system tells of the change (Linux).
func TestHistorySeesEditInPlace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the index is told of a file changed in place by inotify")
	}
	h := newHandling(t, 1)
	box := h.ws.Mailbox("orch")
	in := h.from("you", "Add retries.", "thread", "t-1")
	path := box.Path(mailbox.Done, mailbox.FileName(get(in, "id")))
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour) // not racy: only the system can tell
	if err := os.Chtimes(box.Path(mailbox.Done, ""), old, old); err != nil {
		t.Fatal(err)
	}
	h.o.index().kept = true // a runner's, as Handle makes it
	thread := func() string {
		if r := h.o.history("orch", mailbox.New(nil)).byID[get(in, "id")]; r != nil {
			return r.get("thread")
		}
		return "(none)"
	}
	for range 2 {
		if got := thread(); got != "t-1" {
			t.Fatalf("thread %q, want t-1", got)
		}
	}
	edited := in.Clone()
	edited.Set("thread", "t-2")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(edited.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := thread(); got != "t-2" {
		t.Errorf("after an edit in place: thread %q, want t-2", got)
	}
}

// TestTickLooksAtWhatChanged: a Tick of a runner's orchestrator (once a
// plan file changed: at each step a pipeline ticks) looks for the
// escalations waiting in a person's inbox. It read every message there:
// with 20,000 notes left unread in a person's inbox, a night's pipeline
// run read each of them nine times, twice the CPU of the same run with
// the inbox emptied. Its cost should not grow with the notes waiting.
func TestTickLooksAtWhatChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,500 files")
	}
	ctx := context.Background()
	allocs := map[int]float64{}
	for _, n := range []int{500, 2000} {
		h := newHandling(t, 50)
		you := h.ws.Mailbox("you")
		for i := range n {
			m := mailbox.New([]byte(fmt.Sprintf("Status note %d: lorem ipsum dolor sit amet.\n", i)))
			m.Set("id", h.ids.New("worker-1"))
			m.Set("from", "worker-1")
			m.SetNames("to", []string{"you"})
			m.Set("summary", fmt.Sprintf("nightly note %d", i))
			if err := os.WriteFile(you.Path(mailbox.Inbox, mailbox.FileName(get(m, "id"))), m.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		esc := mailbox.New([]byte("Step 1 failed its review three times.\n"))
		esc.Set("id", h.ids.New("orch"))
		esc.Set("from", "orch")
		esc.SetNames("to", []string{"you"})
		esc.Set("escalation", EscalateLimit)
		esc.Set("plan_file", "plans/retry.md")
		esc.Set("step", "1")
		if err := os.WriteFile(you.Path(mailbox.Inbox, mailbox.FileName(get(esc, "id"))), esc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := len(Escalations(h.ws, nil)); got != 1 {
			t.Fatalf("%d notes: Escalations = %d, want 1", n, got)
		}
		h.handle(t, h.next()) // a runner's orchestrator: its index is kept
		tick := func() {
			if err := h.o.Tick(ctx, "orch", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		// A directory changed within a tick of the clock before a look
		// is listed again at the next: the first look after that window
		// reads every file, the next ones what changed.
		time.Sleep(2 * racyWindow)
		tick()
		allocs[n] = testing.AllocsPerRun(5, tick)
	}
	t.Logf("allocations a Tick: %.0f with 500 notes unread in a person's inbox, %.0f with 2,000", allocs[500], allocs[2000])
	if allocs[2000] > allocs[500]*1.2+20 {
		t.Errorf("allocations a Tick: %.0f with 500 notes unread in a person's inbox, %.0f with 2,000; want about the same", allocs[500], allocs[2000])
	}
}
