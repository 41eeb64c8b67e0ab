package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestAccepts: a message a command agent does not accept is delivered
// and filed in its done/ without waking its program; the next message it
// accepts comes with it, in the file of PARLEY_CONTEXT; the one after
// that comes with nothing kept.
func TestAccepts(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "bot.sh", `
cat > /dev/null
cp "$PARLEY_CONTEXT" "$PARLEY_WORKSPACE/context-$PARLEY_TYPE.md"
echo "answered $PARLEY_TYPE"
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - name: bot\n    driver: command\n    run: [./bot.sh]\n    accepts: {types: [PING]}\n")
	news := send(t, ws, "boss", "bot", "the bridge is out", "type", "NEWS")
	send(t, ws, "boss", "bot", "ping", "type", "PING")
	var mu sync.Mutex
	var woken []string
	opts := Options{OnHandled: func(h Handled) {
		mu.Lock()
		woken = append(woken, h.ID)
		mu.Unlock()
	}}
	if _, err := runIdle(t, ws, opts); err != nil {
		t.Fatal(err)
	}
	if len(woken) != 1 {
		t.Errorf("the program ran %d times, want once (for PING only)", len(woken))
	}
	if d := cmp.Diff([]string{"the bridge is out", "ping"}, bodies(t, ws, "bot", mailbox.Done)); d != "" {
		t.Errorf("bot's done/ (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"answered PING"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	ctx, err := os.ReadFile(filepath.Join(ws.Root, "context-PING.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Kept as context", "mailboxes/bot/done/" + news + ".md", "the bridge is out"} {
		if !strings.Contains(string(ctx), want) {
			t.Errorf("the context file lacks %q:\n%s", want, ctx)
		}
	}
	if _, err := os.Stat(ws.Mailbox("bot").Path(mailbox.Tmp, ContextFile)); err == nil {
		t.Errorf("the context file is left in tmp/ after the run")
	}
	var notes []string
	var all workspace.JournalFilter
	all.Read(ws.JournalPath(), func(e workspace.Entry, _ []byte) error {
		if e.Outcome == workspace.Handled && e.Agent == "bot" {
			notes = append(notes, e.Type+": "+e.Note)
		}
		return nil
	})
	if d := cmp.Diff([]string{"NEWS: " + KeptNote, "PING: "}, notes); d != "" {
		t.Errorf("journal (-want +got):\n%s", d)
	}

	// A second PING: nothing was kept since the first.
	send(t, ws, "boss", "bot", "ping again", "type", "PING")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, err = os.ReadFile(filepath.Join(ws.Root, "context-PING.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ctx), "Kept as context") {
		t.Errorf("the second call was given context again:\n%s", ctx)
	}
}

// TestAcceptsBuiltin: a builtin handler is given the messages kept for
// it in Delivery.Context, oldest first.
func TestAcceptsBuiltin(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: bot, driver: builtin, handler: h, accepts: [PING]}\n")
	var got []string
	handlers := Handlers{"h": HandlerFunc(func(_ context.Context, d *Delivery) ([]*mailbox.Message, error) {
		for _, k := range d.Context {
			got = append(got, strings.TrimSpace(string(k.Message.Body)))
		}
		got = append(got, "handling "+strings.TrimSpace(string(d.Message.Body)))
		return nil, nil
	})}
	send(t, ws, "boss", "bot", "one", "type", "NEWS")
	send(t, ws, "boss", "bot", "two", "type", "NEWS")
	send(t, ws, "boss", "bot", "ping", "type", "PING")
	if _, err := runIdle(t, ws, Options{Handlers: handlers}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"one", "two", "handling ping"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
