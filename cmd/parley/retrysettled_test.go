package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/parley-dev/parley/runner/workspace"
)

// TestServeRetrySettled: the web view's retry of a dead letter whose step
// went on without it (sent again and done since) is refused as parley
// retry refuses it, and the letter stays in dead/: the page asks the same
// question the command line does.
func TestServeRetrySettled(t *testing.T) {
	ar, err := txtar.ParseFile(testdataPath("retrysettled.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runUntilIdle := func(want int) {
		t.Helper()
		var out bytes.Buffer
		if code := runInProcess(context.Background(), []string{"parley", "-C", dir, "run", "--until-idle"}, strings.NewReader(""), &out, &out); code != want {
			t.Fatalf("parley run --until-idle: exit %d, want %d\n%s", code, want, out.String())
		}
	}
	only := func(state string) string {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(dir, "mailboxes", state, "*.md"))
		if len(names) != 1 {
			t.Fatalf("mailboxes/%s holds %d messages, want 1", state, len(names))
		}
		return strings.TrimSuffix(filepath.Base(names[0]), ".md")
	}
	parley(t, "-C", dir, "init")
	parley(t, "-C", dir, "send", "--from", "you", "--to", "orch", "--body", "Document the retry flag.")
	runUntilIdle(5) // worker-2 gives its step up
	dead := only("worker-2/dead")
	ok, err := os.ReadFile(filepath.Join(dir, "ok.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "worker-2.sh"), ok, 0o644); err != nil {
		t.Fatal(err)
	}
	parley(t, "-C", dir, "reply", only("you/inbox"), "--agent", "you", "--field", "decision=retry", "--body", "The quota is back.")
	runUntilIdle(0) // the step is sent again, and done

	said, err := (&browserActions{root: dir}).Retry(context.Background(), dead)
	if err == nil || !strings.Contains(err.Error(), "not retried: it was given up, and step 2 of plans/flag.md was sent to worker-2 again since") {
		t.Errorf("the web view's retry of a settled dead letter = %q, %v; want it refused, saying why", said, err)
	}
	if got := only("worker-2/dead"); got != dead {
		t.Errorf("worker-2's dead/ holds %s, want %s left there", got, dead)
	}

	// The timeline asks the same question: the dead letter's row offers
	// no retry, and says what settled it in parley status's words.
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	base, client, _ := servedWriting(t, ws)
	page := getPage(t, client, base)
	row := regexp.MustCompile(`<li class="row o-dead"[^>]*data-id="` + dead + `".*?</li>`).FindString(page)
	if row == "" {
		t.Fatalf("the timeline has no row of the dead letter %s:\n%s", dead, page)
	}
	if strings.Contains(row, `class="retry"`) {
		t.Errorf("the row of the settled dead letter offers retry:\n%s", row)
	}
	want := "settled: step 2 of plans/flag.md was sent to worker-2 again since; retrying it would do the step twice"
	if !strings.Contains(row, want) {
		t.Errorf("the row of the settled dead letter does not say %q:\n%s", want, row)
	}
	// The Agents page says so too, as parley status does.
	if agents := getPage(t, client, base+"agents"); !strings.Contains(agents, want) {
		t.Errorf("the Agents page does not say %q:\n%s", want, agents)
	}

	// Had the person not answered the given_up escalation (moved back
	// into the inbox here), its step went on all the same: the seat asks
	// no decision of it, as parley pipeline counts it settled.
	esc := ""
	names, _ := filepath.Glob(filepath.Join(dir, "mailboxes", "you", "done", "*.md"))
	for _, n := range names {
		if b, _ := os.ReadFile(n); strings.Contains(string(b), "\nescalation: given_up\n") {
			esc = n
		}
	}
	if esc == "" {
		t.Fatal("no given_up escalation in you's done/")
	}
	if err := os.Rename(esc, filepath.Join(dir, "mailboxes", "you", "inbox", filepath.Base(esc))); err != nil {
		t.Fatal(err)
	}
	seat := getPage(t, client, base+"seat")
	if !strings.Contains(seat, "Settled: its step went on without a decision") || strings.Contains(seat, `class="act decide"`) {
		t.Errorf("the seat offers a decision on the settled escalation:\n%s", seat)
	}
}
