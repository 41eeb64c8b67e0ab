package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestAnswersNeverLost (issue 11, item 10): what a program says that
// cannot be sent goes to its rejected/ with the reason and a journal
// line, on its own: the program's other answers are sent, and the
// message is not handled again. Before, a second answer with the id of
// the first replaced it, one file over max_message_size failed the whole
// message (run again, then dead/), and scratch names in $PARLEY_OUTBOX
// were moved into the outbox, where the router never looks at them.
func TestAnswersNeverLost(t *testing.T) {
	ws := newWorkspace(t, "boss")
	const dupID = "20261124-060000.000001Z-twice-0000a1"
	script(t, ws, "twice.sh", `cat >/dev/null
printf -- '---\nid: `+dupID+`\nto: boss\n---\nfirst\n\036\n'
printf -- '---\nid: `+dupID+`\nto: boss\n---\nsecond\n'
`)
	script(t, ws, "big.sh", `cat >/dev/null
echo run >> big.runs
printf -- '---\nto: boss\n---\nsmall file\n' > "$PARLEY_OUTBOX/a.md"
head -c 3000 /dev/zero | tr '\0' x > "$PARLEY_OUTBOX/big.md"
echo printed
`)
	script(t, ws, "scratch.sh", `cat >/dev/null
printf -- '---\nto: boss\n---\nhidden\n' > "$PARLEY_OUTBOX/.hidden.md"
printf -- '---\nto: boss\n---\ntemporary\n' > "$PARLEY_OUTBOX/x.tmp"
echo visible
`)
	ws = reconfigure(t, ws, `router:
  max_message_size: 2KiB
agents:
  - boss
  - {name: twice, driver: command, run: [./twice.sh]}
  - {name: big, driver: command, run: [./big.sh]}
  - {name: scratch, driver: command, run: [./scratch.sh]}
`)
	ids := map[string]string{}
	for _, a := range []string{"twice", "big", "scratch"} {
		ids[a] = send(t, ws, "boss", a, "go")
	}
	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	slices.Sort(got)
	want := []string{"first", "printed", "small file", "visible"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	for agent, reasons := range map[string][]string{
		"twice":   {"duplicate: id " + dupID + " is already on message 1 it printed"},
		"big":     {"big.md: file is 2.9 KiB, over the 2 KiB limit"},
		"scratch": {`.hidden.md: ".hidden.md" is a scratch name`, `x.tmp: "x.tmp" is a scratch name`},
	} {
		rejected, err := ws.Mailbox(agent).List(mailbox.Rejected)
		if err != nil || len(rejected) != len(reasons) {
			t.Errorf("%s: rejected/ = %+v, %v, want %d files", agent, rejected, err, len(reasons))
			continue
		}
		for i, r := range rejected {
			if !strings.HasPrefix(r.Reason, reasons[i]) {
				t.Errorf("%s: rejected %s: reason %q, want it to start with %q", agent, r.Name, r.Reason, reasons[i])
			}
		}
		if got := names(t, ws, agent, mailbox.Done); !slices.Equal(got, []string{mailbox.FileName(ids[agent])}) {
			t.Errorf("%s: done/ = %v, want the message handled", agent, got)
		}
		if got := names(t, ws, agent, mailbox.Outbox); len(got) != 0 {
			t.Errorf("%s: outbox/ = %v, want it empty", agent, got)
		}
		n := 0
		for _, e := range journalEntries(t, ws) {
			if e.Outcome == workspace.Refused && e.From == agent {
				n++
				if !strings.HasPrefix(e.Reason, reasons[0]) && !strings.HasPrefix(e.Reason, reasons[len(reasons)-1]) {
					t.Errorf("%s: journal refusal %q", agent, e.Reason)
				}
			}
		}
		if n != len(reasons) {
			t.Errorf("%s: %d refusals in the journal, want %d", agent, n, len(reasons))
		}
	}
	// The duplicate is kept as the program printed it.
	rejected, _ := ws.Mailbox("twice").List(mailbox.Rejected)
	if len(rejected) == 1 {
		data, _ := os.ReadFile(ws.Mailbox("twice").Path(mailbox.Rejected, rejected[0].Name))
		if !strings.Contains(string(data), "second") {
			t.Errorf("the rejected duplicate holds %q, want the second answer", data)
		}
	}
	if runs, _ := os.ReadFile(filepath.Join(ws.Root, "big.runs")); string(runs) != "run\n" {
		t.Errorf("big ran %q, want once", runs)
	}
	if stats.Rejected != 4 || stats.Dead != 0 {
		t.Errorf("stats: rejected %d, dead %d, want 4, 0", stats.Rejected, stats.Dead)
	}
}
