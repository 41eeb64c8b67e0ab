package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestJournalOutcomes: every outcome the runner sees gets its journal
// line, with the fields its constant promises, and the run's stats name
// what was refused and given up.
func TestJournalOutcomes(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "lead")
	script(t, ws, "echo.sh", "cat >/dev/null; echo got it\n")
	script(t, ws, "fail.sh", "cat >/dev/null; echo 'no luck' >&2; exit 3\n")
	script(t, ws, "answer.sh", answerShutdown)
	ws = reconfigure(t, ws, `agents:
  - {name: lead, role: team-lead}
  - silent
  - {name: echo, driver: command, run: [./echo.sh]}
  - {name: failer, driver: command, run: [./fail.sh], retries: 1}
  - {name: yes, driver: command, run: [./answer.sh, "true", done]}
timeouts:
  - match: {type: ASK}
    after: 200ms
    nudge: {type: NUDGE}
`)
	echoed := send(t, ws, "lead", "echo", "Hello.")
	failed := send(t, ws, "lead", "failer", "Work.")
	asked := send(t, ws, "lead", "silent", "Where are you?", "type", "ASK")
	send(t, ws, "lead", "yes", "Please shut down.", "type", workspace.ShutdownRequest, "request_id", "r-yes")
	drop(t, ws, "lead", "bad.md", "---\nto: zed\n---\nhi\n")

	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]workspace.Entry{}
	for _, e := range journalEntries(t, ws) {
		if e.Time == "" {
			t.Errorf("entry without a time: %+v", e)
		}
		e.Time = ""
		by[e.Outcome] = append(by[e.Outcome], e)
	}
	one := func(outcome string, match func(workspace.Entry) bool) workspace.Entry {
		t.Helper()
		for _, e := range by[outcome] {
			if match(e) {
				return e
			}
		}
		t.Errorf("no %s line in the journal; lines: %+v", outcome, by)
		return workspace.Entry{}
	}
	ofID := func(id string) func(workspace.Entry) bool { return func(e workspace.Entry) bool { return e.ID == id } }

	handled := one(workspace.Handled, ofID(echoed))
	want := workspace.Entry{Outcome: workspace.Handled, Agent: "echo", ID: echoed, From: "lead", File: mailbox.FileName(echoed),
		Path: filepath.Join("mailboxes", "echo", "done", mailbox.FileName(echoed)), Attempts: 1}
	if d := cmp.Diff(want, handled); d != "" {
		t.Errorf("handled line (-want +got):\n%s", d)
	}

	dead := one(workspace.GivenUp, ofID(failed))
	deadPath := filepath.Join("mailboxes", "failer", "dead", mailbox.FileName(failed))
	want = workspace.Entry{Outcome: workspace.GivenUp, Agent: "failer", ID: failed, From: "lead", File: mailbox.FileName(failed),
		Path: deadPath, Attempts: 2, Reason: "failer: gave up after 2 attempts: exit code 3: no luck (the last line of its stderr)"}
	if d := cmp.Diff(want, dead); d != "" {
		t.Errorf("dead line (-want +got):\n%s", d)
	}

	nudged := one(workspace.Nudged, ofID(asked))
	if nudged.Agent != "silent" || nudged.From != "lead" || nudged.Type != "ASK" || !mailbox.IsID(nudged.Sent) || !strings.Contains(nudged.Note, "silent did not answer "+asked) {
		t.Errorf("nudged line = %+v", nudged)
	}
	// The nudge itself is delivered, and its line says why.
	if d := one(workspace.Delivered, ofID(nudged.Sent)); d.Note == "" {
		t.Errorf("the nudge's delivered line has no note: %+v", d)
	}

	stopped := one(workspace.Stopped, func(e workspace.Entry) bool { return e.Agent == "yes" })
	if !strings.Contains(stopped.Note, "approved a shutdown request") || len(by[workspace.Stopped]) != 1 {
		t.Errorf("stopped lines = %+v", by[workspace.Stopped])
	}

	rejected := one(workspace.Refused, func(e workspace.Entry) bool { return e.File == "bad.md" })
	if !strings.HasPrefix(rejected.Path, filepath.Join("mailboxes", "lead", "rejected")+"/") || !strings.HasSuffix(rejected.Path, "-bad.md") {
		t.Errorf("rejected line's path = %q", rejected.Path)
	}

	// The stats count and name them.
	if stats.Rejected != 1 || stats.Dead != 1 || stats.Handled < 2 {
		t.Errorf("stats = %+v, want 1 rejected, 1 dead, 2 or more handled", stats)
	}
	wantDead := []workspace.Problem{{Agent: "failer", Path: deadPath, Reason: dead.Reason}}
	if d := cmp.Diff(wantDead, stats.DeadFiles); d != "" {
		t.Errorf("stats.DeadFiles (-want +got):\n%s", d)
	}
	wantRejected := []workspace.Problem{{Agent: "lead", Path: rejected.Path, Reason: rejected.Reason}}
	if d := cmp.Diff(wantRejected, stats.RejectedFiles); d != "" {
		t.Errorf("stats.RejectedFiles (-want +got):\n%s", d)
	}
	if !stats.Refused() {
		t.Errorf("stats.Refused() = false, want true")
	}
}
