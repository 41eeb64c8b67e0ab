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

// TestContextFile: the context file of a command agent holds the thread
// so far (what it received and what it said in the message's thread),
// the protocol and the files Options.Brief names, and no file that is
// missing.
func TestContextFile(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "bot.sh", `
cat > /dev/null
cp "$PARLEY_CONTEXT" "$PARLEY_WORKSPACE/context-$PARLEY_MESSAGE_ID.md"
echo "answer to $PARLEY_MESSAGE_ID"
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - name: bot\n    driver: command\n    run: [./bot.sh]\n")
	sheet := filepath.Join(ws.Root, "sheet.md")
	if err := os.WriteFile(sheet, []byte("# Aria\nHP 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := 0
	opts := Options{Brief: func(_ *workspace.Workspace, agent string) (Briefing, error) {
		asked++
		return Briefing{Protocol: "(the protocol of " + agent + ")\n", Files: []string{sheet, filepath.Join(ws.Root, "missing.md")}}, nil
	}}
	q := send(t, ws, "boss", "bot", "first question")
	if _, err := runIdle(t, ws, opts); err != nil {
		t.Fatal(err)
	}
	answer := names(t, ws, "bot", mailbox.Sent)[0]
	q2 := send(t, ws, "boss", "bot", "a follow-up", "thread", q, "reply_to", strings.TrimSuffix(answer, ".md"))
	if _, err := runIdle(t, ws, opts); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(ws.Root, "context-"+q+".md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(first), "## The thread so far") {
		t.Errorf("the first message of a thread has a thread so far:\n%s", first)
	}
	got, err := os.ReadFile(filepath.Join(ws.Root, "context-"+q2+".md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"# Context for bot\n\nThe message to answer: mailboxes/bot/cur/" + q2 + ".md\n",
		"## The thread so far\n\nThe 2 messages of its thread you received or sent before it, oldest first.\n",
		"### mailboxes/bot/done/" + q + ".md\n",
		"first question",
		"### mailboxes/bot/sent/" + answer + "\n",
		"answer to " + q,
		"## The protocol\n\n(the protocol of bot)\n",
		"## Files your role may see\n\n### sheet.md\n\n```\n# Aria\nHP 12\n```\n",
	}
	last := 0
	for _, w := range want {
		i := strings.Index(string(got), w)
		if i < last {
			t.Errorf("the context file lacks %q after offset %d:\n%s", w, last, got)
			continue
		}
		last = i
	}
	if strings.Contains(string(got), "missing.md") {
		t.Errorf("the context file names a missing file:\n%s", got)
	}
	if strings.Contains(string(got), "a follow-up") {
		t.Errorf("the context file's thread holds the message being answered:\n%s", got)
	}
	if asked != 2 {
		t.Errorf("Brief asked %d times, want once per run (per loaded parley.yaml)", asked)
	}
}

// TestSessionContext: a session is given PARLEY_CONTEXT when it starts;
// the file is written again before each message with what that message
// brings.
func TestSessionContext(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "session.sh", `
while true; do
  msg=""
  while IFS= read -r line; do
    [ "$line" = "$(printf '\036')" ] && break
    msg="$msg$line
"
  done
  [ -z "$msg" ] && exit 0
  grep -c 'Kept as context' "$PARLEY_CONTEXT" >> "$PARLEY_WORKSPACE/kept.log"
  printf '\036\n'
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: sess, driver: session, run: [./session.sh], timeout: 10s, accepts: [PING]}\n")
	send(t, ws, "boss", "sess", "one", "type", "PING")
	send(t, ws, "boss", "sess", "news", "type", "NEWS")
	send(t, ws, "boss", "sess", "two", "type", "PING")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(ws.Root, "kept.log"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("0\n1\n", string(got)); d != "" {
		t.Errorf("what the session found kept, per message (-want +got):\n%s", d)
	}
}

// TestNoticeWakesWhateverAccepts: parley's notice about an agent's own
// message (here a message_given_up to the built-in that sent it) is
// handed to its driver whatever its accepts: say; before, it was kept as
// context, and the sender waited for ever.
func TestNoticeWakesWhateverAccepts(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "fail.sh", "cat >/dev/null; exit 3\n")
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: lead, driver: builtin, handler: lead, retries: 0, accepts: [go]}
  - {name: failer, driver: command, run: [./fail.sh], retries: 0}
`)
	lead := &noticed{takes: true}
	send(t, ws, "boss", "lead", "failer", "type", "go")
	if _, err := runIdle(t, ws, Options{Handlers: Handlers{"lead": lead}}); err != nil {
		t.Fatal(err)
	}
	if len(lead.notices) != 1 {
		t.Fatalf("lead, with accepts: [go], was handed %d notices, want the one of its message given up", len(lead.notices))
	}
	for _, e := range journalEntries(t, ws) {
		if e.Type == workspace.GivenUpNotice && e.Note == KeptNote {
			t.Errorf("the notice was %q", e.Note)
		}
	}
}
