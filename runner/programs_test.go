package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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
printf -- '%s\n---\nid: `+dupID+`\nto: boss\n---\nsecond\n%s\n' '`+"```"+`markdown' '`+"```"+`'
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
		"scratch": {".hidden.md: a scratch name", "x.tmp: a scratch name"},
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
	// The duplicate is kept as the program wrote it, out of the code
	// fence it printed it in: given an id of its own and moved back into
	// the outbox, it is sent. (Kept in its fence, it was refused again as
	// having no header, mended or not.)
	rejected, _ := ws.Mailbox("twice").List(mailbox.Rejected)
	if len(rejected) == 1 {
		box := ws.Mailbox("twice")
		data, _ := os.ReadFile(box.Path(mailbox.Rejected, rejected[0].Name))
		if !strings.HasPrefix(string(data), "---\nid: "+dupID+"\n") || !strings.Contains(string(data), "second") {
			t.Errorf("the rejected duplicate holds %q, want the second answer, out of its fence", data)
		}
		mended := strings.Replace(string(data), "id: "+dupID+"\n", "", 1)
		if err := os.WriteFile(box.Path(mailbox.Outbox, "mended.md"), []byte(mended), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runIdle(t, ws, Options{}); err != nil {
			t.Fatal(err)
		}
		if got := bodies(t, ws, "boss", mailbox.Inbox); !slices.Contains(got, "second") {
			t.Errorf("the mended duplicate was not delivered: boss's inbox %q", got)
		}
	}
	if runs, _ := os.ReadFile(filepath.Join(ws.Root, "big.runs")); string(runs) != "run\n" {
		t.Errorf("big ran %q, want once", runs)
	}
	if stats.Rejected != 4 || stats.Dead != 0 {
		t.Errorf("stats: rejected %d, dead %d, want 4, 0", stats.Rejected, stats.Dead)
	}
}

// TestHungAgentsDoNotStarve (issue 11, item 12): programs that wait —
// here, as many hung programs as the machine has CPUs, at least two —
// hold no slot another agent needs, with the default concurrency. Before,
// the default was one slot per CPU, and a healthy agent's message waited
// until a hung program timed out. The healthy agent must be handled while
// every hung program still runs: before any of them times out (which the
// journal of events would show first).
func TestHungAgentsDoNotStarve(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "hang.sh", `cat >/dev/null
echo started > "$PARLEY_AGENT.fifo"
exec sleep 600
`)
	script(t, ws, "echo.sh", "cat >/dev/null; echo fine\n")
	hung := min(max(2, runtime.NumCPU()), 16)
	var config strings.Builder
	config.WriteString("agents:\n  - boss\n  - {name: healthy, driver: command, run: [./echo.sh]}\n")
	for i := range hung {
		fmt.Fprintf(&config, "  - {name: hung-%d, driver: command, run: [./hang.sh], timeout: 15s, retries: 0}\n", i)
	}
	ws = reconfigure(t, ws, config.String())
	for i := range hung {
		fifo(t, filepath.Join(ws.Root, fmt.Sprintf("hung-%d.fifo", i)))
	}
	handled := make(chan Handled, 2*hung+2)
	r, err := Open(ws, Options{OnHandled: func(h Handled) { handled <- h }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for i := range hung {
		send(t, ws, "boss", fmt.Sprintf("hung-%d", i), "wait forever")
	}
	// Every hung program runs: each says so through its FIFO.
	started := make(chan error, 1)
	go func() {
		for i := range hung {
			b, err := os.ReadFile(filepath.Join(ws.Root, fmt.Sprintf("hung-%d.fifo", i)))
			if err != nil || strings.TrimSpace(string(b)) != "started" {
				started <- fmt.Errorf("hung-%d: %q, %v", i, b, err)
				return
			}
		}
		started <- nil
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case h := <-handled:
		t.Fatalf("%s was handled (%v) before every hung program started", h.Agent, h.Err)
	case <-time.After(time.Minute):
		t.Fatal("the hung programs did not all start")
	}
	send(t, ws, "boss", "healthy", "are you there")
	select {
	case h := <-handled:
		if h.Agent != "healthy" || h.Err != nil {
			t.Fatalf("first handled: %s (%v), want healthy, while %d hung programs still run", h.Agent, h.Err, hung)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the healthy agent was never handled")
	}
}
