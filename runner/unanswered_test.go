package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// asker is a built-in handler that, for a person's message "AGENT TYPE",
// sends AGENT a message of that type, and keeps the notices it is
// handed. It waits for an answer only to a message of type task.
type asker struct {
	mu      sync.Mutex
	notices []*mailbox.Message
}

func (a *asker) Handle(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
	if from, _ := d.Message.Header().Get("from"); from == workspace.Runner {
		a.mu.Lock()
		a.notices = append(a.notices, d.Message)
		a.mu.Unlock()
		return nil, nil
	}
	to, typ, _ := strings.Cut(strings.TrimSpace(string(d.Message.Body)), " ")
	m := mailbox.New([]byte("do it\n"))
	m.Set("to", to)
	m.Set("type", typ)
	return []*mailbox.Message{m}, nil
}

func (a *asker) HandlesNotice(typ string) bool { return typ == workspace.UnansweredNotice }
func (a *asker) AwaitsAnswer(typ string) bool  { return typ == "task" }

func (a *asker) told() []*mailbox.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.notices
}

func (a *asker) forget() {
	a.mu.Lock()
	a.notices = nil
	a.mu.Unlock()
}

func header(m *mailbox.Message, k string) string {
	v, _ := m.Header().Get(k)
	return v
}

// TestUnansweredNotice: a program agent that handles a message and says
// nothing leaves its sender waiting; a built-in sender that handles the
// notice is told, by a message_unanswered notice from parley naming the
// message, the agent and why, and only of the messages it waits on
// (AnswerWaiter). A program that answered by writing into its outbox
// itself, or through its driver, answered: its sender is not told. Told
// again (the next runner), nothing new is delivered.
func TestUnansweredNotice(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "silent.sh", "cat >/dev/null\n")
	script(t, ws, "talker.sh", "cat >/dev/null; printf -- '---\\nto: boss\\n---\\ndone\\n'\n")
	// Writes its answer into its mailbox's outbox, as `parley send`
	// would, and prints nothing.
	script(t, ws, "selfsend.sh", `cat >/dev/null
out="$PARLEY_WORKSPACE/mailboxes/$PARLEY_AGENT/outbox"
printf -- '---\nto: boss\n---\ndone, by hand\n' > "$out/.answer.tmp"
mv "$out/.answer.tmp" "$out/answer.md"
`)
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: lead, driver: builtin, handler: lead}
  - {name: silent, driver: command, run: [./silent.sh]}
  - {name: talker, driver: command, run: [./talker.sh]}
  - {name: selfsend, driver: command, run: [./selfsend.sh]}
`)
	lead := &asker{}
	handlers := Handlers{"lead": lead}
	send(t, ws, "boss", "lead", "silent task")
	send(t, ws, "boss", "lead", "silent note") // not waited on
	send(t, ws, "boss", "lead", "talker task")
	send(t, ws, "boss", "lead", "selfsend task")
	if _, err := runIdle(t, ws, Options{Handlers: handlers}); err != nil {
		t.Fatal(err)
	}
	told := lead.told()
	if len(told) != 1 {
		var got []string
		for _, n := range told {
			got = append(got, header(n, "agent")+" "+header(n, "unanswered"))
		}
		t.Fatalf("lead was handed %d notices (%v), want 1: silent's task", len(told), got)
	}
	n := told[0]
	var task string
	for _, name := range names(t, ws, "silent", mailbox.Done) {
		m := readMessage(t, ws.Mailbox("silent").Path(mailbox.Done, name))
		if header(m, "type") == "task" {
			task = header(m, "id")
		}
	}
	got := map[string]string{}
	for _, k := range []string{"from", "to", "type", "unanswered", "unanswered_type", "agent", "reason"} {
		got[k] = header(n, k)
	}
	want := map[string]string{
		"from": workspace.Runner, "to": "lead", "type": workspace.UnansweredNotice,
		"unanswered": task, "unanswered_type": "task", "agent": "silent",
		"reason": "its program said nothing in answer",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the notice's header (-want +got):\n%s", d)
	}
	if !strings.Contains(string(n.Body), "mailboxes/silent/done/"+mailbox.FileName(task)) {
		t.Errorf("the notice's body does not say where the message is:\n%s", n.Body)
	}
	inbox := bodies(t, ws, "boss", mailbox.Inbox)
	slices.Sort(inbox) // the two programs answer in either order
	if d := cmp.Diff([]string{"done", "done, by hand"}, inbox); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}

	// The next runner finds nothing to tell: the notice was told once.
	lead.forget()
	if _, err := runIdle(t, ws, Options{Handlers: handlers}); err != nil {
		t.Fatal(err)
	}
	if len(lead.told()) != 0 {
		t.Errorf("a second runner handed lead %d notices, want none", len(lead.told()))
	}
	var journaled int
	for _, e := range journalEntries(t, ws) {
		if e.Type == workspace.UnansweredNotice && e.Outcome == workspace.Delivered {
			journaled++
		}
	}
	if journaled != 1 {
		t.Errorf("%d journal lines deliver a notice of a message unanswered, want 1", journaled)
	}
}

// TestUnansweredStepToldToAnySender: bug: a step of a plan (plan_file:
// and step:) that a program agent handled and answered nothing was told
// to its sender only when the sender was a built-in (or of another
// workspace); a person who sent it, or a program agent, was told
// nothing, and the plan waited for ever. Now they get the notice the
// others get: the person in the inbox, the program agent filed in its
// done/. A message that is no step is still told to neither.
func TestUnansweredStepToldToAnySender(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "silent.sh", "cat >/dev/null\n")
	// Hands silent a step of the plan when boss asks it.
	script(t, ws, "planner.sh", `cat >/dev/null
[ "$PARLEY_FROM" = boss ] || exit 0
printf -- '---\nto: silent\nplan_file: plans/p.md\nstep: "2"\n---\nstep 2\n'
`)
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: silent, driver: command, run: [./silent.sh]}
  - {name: planner, driver: command, run: [./planner.sh]}
`)
	step := send(t, ws, "boss", "silent", "step 1", "plan_file", "plans/p.md", "step", "1")
	send(t, ws, "boss", "silent", "no step")
	send(t, ws, "boss", "planner", "plan")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	noticesIn := func(agent, state string) []*mailbox.Message {
		var out []*mailbox.Message
		for _, n := range names(t, ws, agent, state) {
			if m := readMessage(t, ws.Mailbox(agent).Path(state, n)); header(m, "type") == workspace.UnansweredNotice {
				out = append(out, m)
			}
		}
		return out
	}
	told := noticesIn("boss", mailbox.Inbox)
	if len(told) != 1 || header(told[0], "unanswered") != step || header(told[0], "agent") != "silent" {
		var got []string
		for _, n := range told {
			got = append(got, header(n, "unanswered"))
		}
		t.Errorf("boss was told of %v, want of its step %s only", got, step)
	}
	var step2 string
	for _, n := range names(t, ws, "silent", mailbox.Done) {
		if m := readMessage(t, ws.Mailbox("silent").Path(mailbox.Done, n)); header(m, "step") == "2" {
			step2 = header(m, "id")
		}
	}
	told = noticesIn("planner", mailbox.Done)
	if len(told) != 1 || header(told[0], "unanswered") != step2 || header(told[0], "reason") != "its program said nothing in answer" {
		t.Errorf("planner's done/ holds %d notices of a message unanswered, want 1, of its step 2", len(told))
	}
}

// TestUnansweredEarlierAnswerWaiting: bug: a program agent's answer to
// one message, still waiting in its outbox to be routed (a router
// behind, under load), was taken for its answer to the next message, to
// which its program said nothing: its sender was not told, and a step
// of a dev pipeline waited for ever with nobody told (a reviewer whose
// verdict was refused, silent to parley's notice, its verdict on
// another step waiting in its outbox). Routing is held back here by
// running no router: the worker handles the two messages itself.
func TestUnansweredEarlierAnswerWaiting(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "first.sh", `body=$(cat | sed '1,/^---$/d')
[ "$body" = "answer this" ] && printf -- '---\nto: lead\n---\nanswered\n'
exit 0
`)
	ws = reconfigure(t, ws, `agents:
  - boss
  - {name: lead, driver: builtin, handler: lead}
  - {name: bot, driver: command, run: [./first.sh]}
`)
	lead := &asker{}
	r, err := Open(ws, Options{Handlers: Handlers{"lead": lead}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := r.workers["bot"]
	if w == nil {
		t.Fatal("no worker for bot")
	}
	box := ws.Mailbox("bot")
	handle := func(body string) string {
		t.Helper()
		id := (&mailbox.IDs{}).New("lead")
		m := mailbox.New([]byte(body + "\n"))
		m.Set("id", id)
		m.Set("from", "lead")
		m.Set("to", "bot")
		m.Set("type", "task")
		if _, err := box.Deliver(id, m.Bytes(), r.syncer); err != nil {
			t.Fatal(err)
		}
		if err := box.Claim(id); err != nil {
			t.Fatal(err)
		}
		w.handle(context.Background(), id)
		return id
	}
	handle("answer this")
	if got := names(t, ws, "bot", mailbox.Outbox); len(got) != 1 {
		t.Fatalf("bot's outbox holds %v, want its answer, waiting to be routed", got)
	}
	silent := handle("say nothing")
	var told []string
	for _, n := range names(t, ws, "lead", mailbox.Inbox) {
		if m := readMessage(t, ws.Mailbox("lead").Path(mailbox.Inbox, n)); header(m, "type") == workspace.UnansweredNotice {
			told = append(told, header(m, "unanswered"))
		}
	}
	if d := cmp.Diff([]string{silent}, told); d != "" {
		t.Errorf("lead was told of messages unanswered (-want +got):\n%s", d)
	}
}
