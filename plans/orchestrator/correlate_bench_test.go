package orchestrator

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// benchHistory is a history of n messages: pipelines of one triage, one
// plan and steps, each step a task, a submission that names no request,
// two review requests and their verdicts, as models write them (bare);
// the last message is being handled.
func benchHistory(n int) *history {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ids := &mailbox.IDs{Now: func() time.Time { now = now.Add(time.Millisecond); return now }}
	h := &history{byID: map[string]*record{}}
	add := func(sent bool, from, to, typ string, fields ...string) *record {
		m := mailbox.New([]byte("text\n"))
		m.Set("id", ids.New(from))
		m.Set("from", from)
		m.Set("to", to)
		m.Set("type", typ)
		for i := 0; i+1 < len(fields); i += 2 {
			m.SetValue(fields[i], fields[i+1])
		}
		r := &record{m: m, sent: sent}
		h.add(r)
		return r
	}
	for p := 0; len(h.all) < n; p++ {
		tr := add(true, "orch", "architect", TriageRequest)
		thread := tr.get("id")
		tr.m.Set("thread", thread)
		add(false, "architect", "orch", TriageResult)
		add(true, "orch", "architect", ArchitectureRequest, "thread", thread)
		pf := fmt.Sprintf("plans/p%d.md", p)
		add(false, "architect", "orch", PlanResult, "plan_file", pf)
		for s := 1; s <= 10 && len(h.all) < n; s++ {
			w := "worker-" + strconv.Itoa(s%2+1)
			add(true, "orch", w, TaskAssignment, "thread", thread, "plan_file", pf, "step", strconv.Itoa(s))
			sub := add(false, w, "orch", WorkerSubmission)
			add(true, "orch", "reviewer", ReviewRequest, "thread", thread, "plan_file", pf, "step", strconv.Itoa(s), "submission", sub.get("id"))
			add(true, "orch", "auditor", ReviewRequest, "thread", thread, "plan_file", pf, "step", strconv.Itoa(s), "submission", sub.get("id"))
			add(false, "reviewer", "orch", ReviewVerdict)
			add(false, "auditor", "orch", AuditVerdict)
		}
	}
	h.cur = h.all[len(h.all)-1]
	return h
}

func BenchmarkCorrelate(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000} {
		h := benchHistory(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				h.correlate()
			}
		})
	}
}

// BenchmarkHistory reads a mailbox of the orchestrator's holding n
// messages (benchHistory's), and correlates them, as each message
// handled does: by the orchestrator of a running runner, and by one
// just started.
func BenchmarkHistory(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ws := newWorkspace(b, config)
			box := ws.Mailbox("orch")
			for _, r := range benchHistory(n).all {
				state := mailbox.Done
				if r.sent {
					state = mailbox.Sent
				}
				if err := os.WriteFile(box.Path(state, r.get("id")+".md"), r.m.Bytes(), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			in := mailbox.New(nil)
			b.Run("runner", func(b *testing.B) {
				// One orchestrator, as a runner has: each file parsed
				// once (Orchestrator.files), then an lstat a look.
				o := &Orchestrator{Workspace: ws}
				for b.Loop() {
					o.history("orch", in)
				}
			})
			b.Run("started", func(b *testing.B) {
				// A new one each time: the first message after a start.
				for b.Loop() {
					(&Orchestrator{Workspace: ws}).history("orch", in)
				}
			})
		})
	}
}
