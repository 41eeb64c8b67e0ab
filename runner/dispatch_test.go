package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// script writes an executable shell script in the workspace and returns
// its path.
func script(t *testing.T, ws *workspace.Workspace, name, body string) string {
	t.Helper()
	path := filepath.Join(ws.Root, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// runIdle runs the router and the drivers until nothing is left to do.
func runIdle(t *testing.T, ws *workspace.Workspace, opts Options) (Stats, error) {
	t.Helper()
	opts.UntilIdle = true
	r, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return r.Run(ctx)
}

// bodies returns the bodies of the messages in a mailbox state, in order.
func bodies(t *testing.T, ws *workspace.Workspace, agent, state string) []string {
	t.Helper()
	out := []string{}
	for _, n := range names(t, ws, agent, state) {
		m := readMessage(t, ws.Mailbox(agent).Path(state, n))
		out = append(out, strings.TrimSpace(string(m.Body)))
	}
	return out
}

func send(t *testing.T, ws *workspace.Workspace, from, to, body string, fields ...string) string {
	t.Helper()
	m := mailbox.New([]byte(body + "\n"))
	id := (&mailbox.IDs{}).New(from)
	m.Set("id", id)
	m.Set("to", to)
	for i := 0; i+1 < len(fields); i += 2 {
		m.Set(fields[i], fields[i+1])
	}
	stage(t, ws.Mailbox(from), m)
	return id
}

func TestCommandDriver(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "echo.sh", `
msg=$(cat)
body=$(printf '%s\n' "$msg" | sed '1,/^---$/d')
echo "heard: $body (from $PARLEY_FROM, id $PARLEY_MESSAGE_ID, agent $PARLEY_AGENT)"
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - name: echo\n    driver: command\n    run: [./echo.sh]\n")
	id := send(t, ws, "boss", "echo", "hello")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	want := []string{fmt.Sprintf("heard: hello (from boss, id %s, agent echo)", id)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	reply := readMessage(t, ws.Mailbox("boss").Path(mailbox.Inbox, names(t, ws, "boss", mailbox.Inbox)[0]))
	for k, v := range map[string]string{"from": "echo", "to": "boss", "reply_to": id, "thread": id} {
		if got, _ := reply.Header().Get(k); got != v {
			t.Errorf("reply %s = %q, want %q", k, got, v)
		}
	}
	if reply.Header().Has("hops") {
		t.Errorf("reply to a person has hops: %q: only a program's copy counts", reply.Header().Text("hops"))
	}
	if got := names(t, ws, "echo", mailbox.Done); len(got) != 1 || got[0] != id+".md" {
		t.Errorf("echo's done/ = %v, want the message it handled", got)
	}
	if tmp, _ := os.ReadDir(filepath.Join(string(ws.Mailbox("echo")), mailbox.Tmp)); len(tmp) != 0 {
		t.Errorf("echo's tmp/ holds %d entries after the run", len(tmp))
	}
}

// TestCommandOutputs: several envelopes separated by FrameEnd lines, or
// written one after the other (a second frontmatter header after a
// blank line: "four", then "five"), and files the program writes into
// its outbox, are all sent as the agent.
func TestCommandOutputs(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "multi.sh", `
cat > /dev/null
printf -- '---\nto: boss\ntype: NOTE\n---\none\n---\nstill one\n\036\n'
printf -- '[NOTE]\nto: boss\n\ntwo\n\036\n'
printf -- '---\nto: boss\ntype: NOTE\n---\nfour\n\n---\nto: boss\ntype: NOTE\n---\nfive\n'
printf -- '---\nto: boss\n---\nthree\n' > "$PARLEY_OUTBOX/file.md"
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - name: bot\n    driver: command\n    run: [./multi.sh]\n")
	send(t, ws, "boss", "bot", "go")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	want := []string{"three", "one\n---\nstill one", "two", "four", "five"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boss's inbox, in order (-want +got):\n%s", d)
	}
}

// TestCommandFailures: a program that fails, hangs, is missing, prints too
// much, or forges its sender.
func TestCommandFailures(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "fail.sh", "cat >/dev/null; echo 'no luck' >&2; exit 3\n")
	script(t, ws, "hang.sh", "cat >/dev/null; sleep 600 & echo $! > child.pid; sleep 600\n")
	script(t, ws, "flood.sh", "cat >/dev/null; yes flood | head -c 3000000\n")
	script(t, ws, "forge.sh", "cat >/dev/null; printf -- '---\\nfrom: boss\\nto: boss\\n---\\nI am boss\\n'\n")
	// As claude -p at its usage limit: the cause on stdout, nothing on
	// stderr (before: "the program failed", the cause kept nowhere).
	script(t, ws, "limit.sh", "cat >/dev/null; echo 'working'; printf 'You\\047ve hit your limit \\302\\267 resets 3am \\033[1m(Europe/Oslo)\\033[0m\\n\\n'; exit 1\n")
	ws = reconfigure(t, ws, `max_output: 1MiB
agents:
  - boss
  - {name: failer, driver: command, run: [./fail.sh], retries: 1}
  - {name: hanger, driver: command, run: [./hang.sh], timeout: 300ms, retries: 0}
  - {name: missing, driver: command, run: [./no-such-program]}
  - {name: flooder, driver: command, run: [./flood.sh], retries: 0}
  - {name: forger, driver: command, run: [./forge.sh]}
  - {name: limited, driver: command, run: [./limit.sh], retries: 0}
`)
	for _, a := range []string{"failer", "hanger", "missing", "flooder", "forger", "limited"} {
		send(t, ws, "boss", a, "work")
	}
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]string{
		"failer":  "failer: gave up after 2 attempts: exit code 3: no luck (the last line of its stderr)",
		"hanger":  "hanger: gave up after 1 attempt: timed out after 300ms: killed",
		"missing": "missing: gave up after 1 attempt: cannot start ./no-such-program",
		"flooder": "flooder: gave up after 1 attempt: printed more than max_output for one message (1 MiB; max_output in parley.yaml sets it): killed",
		"limited": `limited: gave up after 1 attempt: exit code 1: You've hit your limit · resets 3am \x1b[1m(Europe/Oslo)\x1b[0m (the last line of its stdout; it wrote nothing on stderr)`,
	} {
		dead, err := ws.Mailbox(agent).List(mailbox.Dead)
		if err != nil || len(dead) != 1 {
			t.Errorf("%s: dead/ = %+v, %v", agent, dead, err)
			continue
		}
		if !strings.HasPrefix(dead[0].Reason, want) {
			t.Errorf("%s: reason %q, want it to start with %q", agent, dead[0].Reason, want)
		}
	}
	reason, _ := os.ReadFile(ws.Mailbox("failer").Path(mailbox.Dead, names(t, ws, "failer", mailbox.Dead)[0]+".reason"))
	if !strings.Contains(string(reason), "no luck") {
		t.Errorf("the reason does not hold the program's stderr: %q", reason)
	}
	// The hung program's child went with it (a zombie waiting to be
	// reaped by init does not run).
	if pid, err := os.ReadFile(filepath.Join(ws.Root, "child.pid")); err != nil {
		t.Errorf("the hanging script did not start its child: %v", err)
	} else if n, err := strconv.Atoi(strings.TrimSpace(string(pid))); err != nil || n <= 0 {
		// An empty pid read as 0 would check /proc/0/stat, which never
		// exists: it would prove nothing.
		t.Errorf("the hanging script wrote child.pid %q, not a pid", pid)
	} else {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if fields := strings.Fields(string(stat)); err == nil && len(fields) > 2 && fields[2] != "Z" {
			t.Errorf("the child %d of a timed-out program still runs (%s)", n, fields[2])
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
	// A forged sender is refused by the router, like any bad message;
	// forger is told, and forges again each time, until it is told no
	// more (see Refusals).
	rejected, _ := ws.Mailbox("forger").List(mailbox.Rejected)
	if len(rejected) != 1+workspace.MaxRefusedNotices {
		t.Errorf("forger's rejected/ = %+v, want %d", rejected, 1+workspace.MaxRefusedNotices)
	}
	for _, r := range rejected {
		if !strings.Contains(r.Reason, `from: "boss", but the file is in the outbox of "forger"`) {
			t.Errorf("forger's rejected/ = %+v", r)
		}
	}
}

// TestSessionDriver: one program handles every message, in order; when it
// dies mid-message it is started again and the message redelivered.
func TestSessionDriver(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "session.sh", `
n=0
while true; do
  msg=""
  while IFS= read -r line; do
    [ "$line" = "$(printf '\036')" ] && break
    msg="$msg$line
"
  done
  [ -z "$msg" ] && exit 0
  n=$((n+1))
  case "$msg" in
    *die*) if [ ! -e died ]; then touch died; exit 1; fi ;;
  esac
  body=$(printf '%s' "$msg" | tail -n 1)
  printf 'reply %s to %s\n\036\n\036\n' "$n" "$body"
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: sess, driver: session, run: [./session.sh], timeout: 10s}\n")
	send(t, ws, "boss", "sess", "first")
	send(t, ws, "boss", "sess", "second")
	send(t, ws, "boss", "sess", "die please")
	send(t, ws, "boss", "sess", "after")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	got := bodies(t, ws, "boss", mailbox.Inbox)
	// One process for the first two; it dies on the third, which is
	// handled again by a new one, and so is the fourth.
	want := []string{"reply 1 to first", "reply 2 to second", "reply 1 to die please", "reply 2 to after"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
}

// TestSessionEnded: a session that exits before finishing its message
// is given up with the last line of its stderr, its cause, first in the
// reason (which the log and parley status show), and its exit code;
// before, only "the session ended its output before finishing the
// message", the cause left in the stderr kept in dead/. One that times
// out has the line after the timeout, and, timed out on its last attempt,
// no longer says that it "will be started again".
func TestSessionEnded(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "quit.sh", "echo 'starting' >&2; read -r line; echo 'half an answer'; echo 'session: claude: API Error: 529 overloaded' >&2; exit 3\n")
	script(t, ws, "mute.sh", "read -r line; exit 4\n")
	script(t, ws, "stuck.sh", "read -r line; echo 'warning: line 2 of its output is no JSON event' >&2; exec sleep 600\n")
	script(t, ws, "flood.sh", "read -r line; yes flood | head -c 3000000; exec sleep 600\n")
	ws = reconfigure(t, ws, `max_output: 1MiB
agents:
  - boss
  - {name: quitter, driver: session, run: [./quit.sh], retries: 0}
  - {name: mute, driver: session, run: [./mute.sh], retries: 0}
  - {name: stuck, driver: session, run: [./stuck.sh], retries: 0, timeout: 300ms}
  - {name: flooder, driver: session, run: [./flood.sh], retries: 0}
`)
	send(t, ws, "boss", "flooder", "work")
	send(t, ws, "boss", "quitter", "work")
	send(t, ws, "boss", "mute", "work")
	send(t, ws, "boss", "stuck", "work")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]string{
		"quitter": "quitter: gave up after 1 attempt: exit code 3: session: claude: API Error: 529 overloaded (the last line of its stderr; the session ended its output before finishing the message)",
		"mute":    "mute: gave up after 1 attempt: exit code 4: the session ended its output before finishing the message",
		// A session that times out: what it said last comes after; on
		// its last attempt, nothing says it will be started again.
		"stuck": "stuck: gave up after 1 attempt: timed out after 300ms: the session was killed; the last line of its stderr: warning: line 2 of its output is no JSON event",
		// Said as a command's is (before: no limit, nor where it is set).
		"flooder": "flooder: gave up after 1 attempt: printed more than max_output for one message (1 MiB; max_output in parley.yaml sets it): killed",
	} {
		dead, err := ws.Mailbox(agent).List(mailbox.Dead)
		if err != nil || len(dead) != 1 {
			t.Errorf("%s: dead/ = %+v, %v", agent, dead, err)
			continue
		}
		if got, _, _ := strings.Cut(dead[0].Reason, "\n"); got != want {
			t.Errorf("%s: reason %q, want %q", agent, got, want)
		}
	}
}

// TestSessionStderrOfItsMessage: the reason a session's message fails
// for quotes only what the session wrote on stderr once it was given
// that message. Before, a session that warned while it answered one
// message, then hung silently on the next, had the next one's timeout
// quote the warning as "the last line of its stderr", as if it said why.
func TestSessionStderrOfItsMessage(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "hush.sh", `n=0
while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] || continue
  n=$((n+1))
  if [ $n = 1 ]; then
    echo 'warning: message 1 had a stale cache' >&2
    printf 'answer one\n\036\n\036\n'
  else
    exec sleep 600
  fi
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: hushed, driver: session, run: [./hush.sh], retries: 0, timeout: 300ms}\n")
	send(t, ws, "boss", "hushed", "one")
	send(t, ws, "boss", "hushed", "two")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	// (and parley's notice of the second, given up: boss is a person's)
	if got := bodies(t, ws, "boss", mailbox.Inbox); len(got) != 2 || got[0] != "answer one" || !strings.HasPrefix(got[1], "parley gave up a message you sent to hushed") {
		t.Errorf("boss's inbox = %q, want the answer to the first message, and the notice of the second given up", got)
	}
	dead, err := ws.Mailbox("hushed").List(mailbox.Dead)
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead/ = %+v, %v", dead, err)
	}
	want := "hushed: gave up after 1 attempt: timed out after 300ms: the session was killed; it wrote nothing on stderr for this message"
	if got, _, _ := strings.Cut(dead[0].Reason, "\n"); got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if strings.Contains(dead[0].Reason, "stale cache") {
		t.Errorf("the reason quotes what the session wrote for the message before:\n%s", dead[0].Reason)
	}
}

func TestBuiltinDriver(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: upper, driver: builtin, handler: shout}\n")
	handlers := Handlers{"shout": HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
		from, _ := d.Message.Header().Get("from")
		m := mailbox.New([]byte(strings.ToUpper(string(d.Message.Body))))
		m.Set("to", from)
		return []*mailbox.Message{m}, nil
	})}
	send(t, ws, "boss", "upper", "quiet please")
	if _, err := runIdle(t, ws, Options{Handlers: handlers}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"QUIET PLEASE"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := Open(ws, Options{}); err == nil || !strings.Contains(err.Error(), `unknown handler "shout"`) {
		t.Errorf("Open without the handler = %v", err)
	}
}

// TestBuiltinErrors: a built-in handler's error that comes again with
// the same message goes to dead/ at once; one that may pass (the disk
// failing for now) is tried again, and passes.
func TestBuiltinErrors(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: picky, driver: builtin, handler: picky, retries: 2}\n")
	tries := map[string]int{}
	handlers := Handlers{"picky": HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
		body := strings.TrimSpace(string(d.Message.Body))
		tries[body]++
		switch {
		case body == "malformed":
			return nil, errors.New("scene_number: \"five\" is not a scene number")
		case body == "disk" && tries[body] == 1:
			return nil, &fs.PathError{Op: "write", Path: "story-state.md", Err: syscall.ENOSPC}
		}
		return nil, nil
	})}
	send(t, ws, "boss", "picky", "malformed")
	send(t, ws, "boss", "picky", "disk")
	if _, err := runIdle(t, ws, Options{Handlers: handlers}); err != nil {
		t.Fatal(err)
	}
	if tries["malformed"] != 1 || tries["disk"] != 2 {
		t.Errorf("tries = %v, want malformed once (no retry can fix it), disk twice", tries)
	}
	if d := cmp.Diff([]string{"malformed"}, bodies(t, ws, "picky", mailbox.Dead)); d != "" {
		t.Errorf("dead/ (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"disk"}, bodies(t, ws, "picky", mailbox.Done)); d != "" {
		t.Errorf("done/ (-want +got):\n%s", d)
	}
}

// TestOnHandled: the hook hears of every run of a driver, in order for
// each agent, with the message, the attempt, the times and the error;
// human agents' messages are not handled, so not reported.
func TestOnHandled(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "echo.sh", "cat >/dev/null\n")
	script(t, ws, "fail.sh", "cat >/dev/null; exit 3\n")
	ws = reconfigure(t, ws, `agents:
  - boss
  - other
  - {name: echo, driver: command, run: [./echo.sh]}
  - {name: failer, driver: command, run: [./fail.sh], retries: 0}
`)
	type call struct {
		ID      string
		Attempt int
		Failed  bool
	}
	want := map[string][]call{}
	for _, body := range []string{"one", "two", "three"} {
		id := send(t, ws, "boss", "echo", body)
		want["echo"] = append(want["echo"], call{ID: id, Attempt: 1})
	}
	want["failer"] = []call{{ID: send(t, ws, "boss", "failer", "work"), Attempt: 1, Failed: true}}
	send(t, ws, "boss", "other", "for a person")

	var mu sync.Mutex // calls for different agents may come at once
	got := map[string][]call{}
	last := map[string]time.Time{}
	onHandled := func(h Handled) {
		mu.Lock()
		defer mu.Unlock()
		if h.Start.IsZero() || h.End.Before(h.Start) || h.Start.Before(last[h.Agent]) {
			t.Errorf("%s %s: start %v, end %v, after an earlier run that ended at %v", h.Agent, h.ID, h.Start, h.End, last[h.Agent])
		}
		last[h.Agent] = h.End
		got[h.Agent] = append(got[h.Agent], call{ID: h.ID, Attempt: h.Attempt, Failed: h.Err != nil})
	}
	if _, err := runIdle(t, ws, Options{OnHandled: onHandled}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("OnHandled calls (-want +got):\n%s", d)
	}
}

// TestRoutesDeliver: routes add copies (peer visibility), send to the
// agent named in a field, and back to the sender of the message answered.
func TestRoutesDeliver(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "gm"), `agents:
  - gm
  - narrator
  - {name: p1, role: player, character: tilda-brannock}
  - {name: p2, role: player}
routes:
  - match: {type: PLAYER_TO_PLAYER}
    cc: [gm, narrator]
  - match: {type: GM_TO_PLAYER}
    to: $character
  - match: {type: ACK}
    to: reply
  - match: {from_role: player, signal: oops}
    to: role:player
  - match: {type: ALARM}
    to: "*"
`)
	drop(t, ws, "p1", "whisper.md", "[PLAYER_TO_PLAYER]\nto: p2\n\nLeft flank.\n")
	drop(t, ws, "gm", "prompt.md", "[GM_TO_PLAYER]\ncharacter: tilda-brannock\n\nWhat now?\n")
	drop(t, ws, "p2", "ack.md", "---\ntype: ACK\nreply_to: 20261121-101500.000000Z-gm-000001\n---\nok\n")
	drop(t, ws, "p2", "oops.md", "---\nsignal: oops\n---\noops\n")
	drop(t, ws, "narrator", "alarm.md", "---\ntype: ALARM\n---\nFire!\n")
	routeAll(t, ws)
	got := outcomes(t, ws)
	for file, want := range map[string][]string{
		"whisper.md": {"p2", "gm", "narrator"},
		"prompt.md":  {"p1"},
		"ack.md":     {"gm"},
		"oops.md":    {"p1"},
		"alarm.md":   {"gm", "p1", "p2"},
	} {
		if d := cmp.Diff(want, got[file].To); d != "" {
			t.Errorf("%s went to (-want +got):\n%s (outcome %+v)", file, d, got[file])
		}
	}
}

// TestSessionOutbox: a session writes files into its own outbox, which
// outlives each message, and they are routed like files written by hand.
// A session that prints one separator too many when it is done has the
// stray dropped: the next message is not taken as done before the session
// has read it.
func TestSessionOutbox(t *testing.T) {
	t.Parallel()
	for name, done := range map[string]string{"one separator": `'\036\n'`, "a stray separator": `'\036\n\036\n'`} {
		t.Run(name, func(t *testing.T) {
			ws := newWorkspace(t, "boss")
			script(t, ws, "writer.sh", `
n=0
while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] || continue
  n=$((n+1))
  printf -- '---\nto: boss\n---\nnote %s\n' "$n" > "$PARLEY_OUTBOX/.note-$n.md"
  mv "$PARLEY_OUTBOX/.note-$n.md" "$PARLEY_OUTBOX/note-$n.md"
  printf `+done+` # nothing printed: done
done
`)
			ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: sess, driver: session, run: [./writer.sh]}\n")
			for _, body := range []string{"one", "two", "three"} {
				send(t, ws, "boss", "sess", body)
			}
			if _, err := runIdle(t, ws, Options{}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"note 1", "note 2", "note 3"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
				t.Errorf("boss's inbox (-want +got):\n%s", d)
			}
		})
	}
}

// TestCommandGarbage: output that is not text, or that is addressed to
// no one known, is not sent; the router refuses it with the reason, and
// keeps it, every piece of it.
func TestCommandGarbage(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "garble.sh", "cat >/dev/null; printf 'GIF89a\\000\\001\\002\\003'\n")
	script(t, ws, "lost.sh", "cat >/dev/null; printf -- '---\\nto: zed\\n---\\nhello?\\n'\n")
	script(t, ws, "garble2.sh", "cat >/dev/null; printf 'GIF89a\\000\\001\\n\\036\\nPNG\\000\\002\\n'\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: garbler, driver: command, run: [./garble.sh]}\n  - {name: garbler2, driver: command, run: [./garble2.sh]}\n  - {name: lost, driver: command, run: [./lost.sh]}\n")
	send(t, ws, "boss", "garbler", "draw me something")
	send(t, ws, "boss", "garbler2", "draw me two things")
	send(t, ws, "boss", "lost", "write to a friend")
	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	// garbler is told (see Refusals), and garbles again each time, until
	// it is told no more.
	rejected, _ := ws.Mailbox("garbler").List(mailbox.Rejected)
	if len(rejected) != 1+workspace.MaxRefusedNotices || !strings.Contains(rejected[0].Reason, "not a text file") {
		t.Fatalf("garbler's rejected/ = %+v, want the output refused as not text", rejected)
	}
	if got := len(names(t, ws, "garbler", mailbox.Done)); got != 1+workspace.MaxRefusedNotices {
		t.Errorf("garbler's done/ holds %d, want the message and the notices handled", got)
	}
	// Two outputs that are not text are both kept and refused; garbler2
	// is told of the first only, each time: 2 files at each of 4 steps.
	if rejected, _ := ws.Mailbox("garbler2").List(mailbox.Rejected); len(rejected) != 2*(1+workspace.MaxRefusedNotices) {
		t.Errorf("garbler2's rejected/ = %+v, want both outputs refused, %d times", rejected, 1+workspace.MaxRefusedNotices)
	}
	// To an agent that does not exist: refused with the reason, and kept.
	// lost is told, and writes to zed again, until it is told no more.
	lost, _ := ws.Mailbox("lost").List(mailbox.Rejected)
	if len(lost) != 1+workspace.MaxRefusedNotices || !strings.Contains(lost[0].Reason, `to: unknown agent "zed"`) {
		t.Errorf("lost's rejected/ = %+v", lost)
	}
	if got := len(names(t, ws, "boss", mailbox.Inbox)); got != 0 {
		t.Errorf("boss got %d messages, want none", got)
	}
}

// TestRecoverStages: a runner starts where a stopped one left an agent's
// work. Answers it had committed are sent once and their message
// finished, never handled again; answers it was still writing are
// dropped, and their message handled again.
func TestRecoverStages(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "again.sh", "cat >/dev/null; echo \"handled again: $PARLEY_MESSAGE_ID\"\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: bot, driver: command, run: [./again.sh]}\n")
	box := ws.Mailbox("bot")
	s, err := mailbox.NewSyncer(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := &mailbox.IDs{}
	claim := func() string {
		m := mailbox.New([]byte("work\n"))
		id := ids.New("boss")
		m.Set("id", id)
		m.Set("from", "boss")
		m.Set("to", "bot")
		if ok, err := box.Deliver(id, m.Bytes(), s); err != nil || !ok {
			t.Fatalf("Deliver = %v, %v", ok, err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := box.Claim(id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	committed, open := claim(), claim()
	st := box.Stage(committed, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	answer := mailbox.New([]byte("committed before the stop\n"))
	answerID := ids.New("bot")
	answer.Set("id", answerID)
	answer.Set("to", "boss")
	if err := st.Add(mailbox.FileName(answerID), answer.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	st = box.Stage(open, s)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Path(), "half.md"), []byte("---\nto: boss\n---\nhalf writ"), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := runIdle(t, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"committed before the stop", "handled again: " + open}
	if d := cmp.Diff(want, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{mailbox.FileName(committed), mailbox.FileName(open)}, names(t, ws, "bot", mailbox.Done)); d != "" {
		t.Errorf("bot's done/ (-want +got):\n%s", d)
	}
	if tmp, _ := os.ReadDir(filepath.Join(string(box), mailbox.Tmp)); len(tmp) != 0 {
		t.Errorf("bot's tmp/ holds %d entries after the run", len(tmp))
	}
	// The journal says how each was finished.
	var handled []string
	for _, e := range journalEntries(t, ws) {
		if e.Outcome == workspace.Handled {
			handled = append(handled, fmt.Sprintf("%s from %s, %d attempts, note %q", e.ID, e.From, e.Attempts, e.Note))
		}
	}
	want = []string{
		committed + ` from boss, 0 attempts, note "finished by a runner started after a crash"`,
		open + ` from boss, 1 attempts, note ""`,
	}
	if d := cmp.Diff(want, handled); d != "" {
		t.Errorf("handled lines (-want +got):\n%s", d)
	}
}

// flaky is an error that says whether it may pass, and what to keep.
type flaky struct {
	temporary bool
	detail    string
}

func (f *flaky) Error() string   { return "the endpoint failed" }
func (f *flaky) Temporary() bool { return f.temporary }
func (f *flaky) Detail() string  { return f.detail }

// TestOutsideDrivers: a driver given in Options.Drivers (driver: openai)
// runs as a handler; its error is tried again when it says it is
// temporary, and goes to dead/ with its detail when not. Without the
// driver, the runner does not start.
func TestOutsideDrivers(t *testing.T) {
	t.Parallel()
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: model, driver: openai, retries: 2, openai: {model: m}}\n")
	tries := map[string]int{}
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		if a.Model == nil || a.Model.Model != "m" {
			t.Errorf("driver made for %+v", a)
		}
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			body := strings.TrimSpace(string(d.Message.Body))
			tries[body]++
			switch {
			case body == "refused":
				return nil, &flaky{detail: "transcript:\nthe model said no"}
			case body == "busy" && tries[body] == 1:
				return nil, &flaky{temporary: true}
			}
			return nil, nil
		}), nil
	}}
	send(t, ws, "boss", "model", "refused")
	send(t, ws, "boss", "model", "busy")
	if _, err := runIdle(t, ws, Options{Drivers: drivers}); err != nil {
		t.Fatal(err)
	}
	if tries["refused"] != 1 || tries["busy"] != 2 {
		t.Errorf("tries = %v, want refused once, busy twice", tries)
	}
	dead, _ := ws.Mailbox("model").Names(mailbox.Dead)
	var reason string
	for _, n := range dead {
		if strings.HasSuffix(n, mailbox.ReasonSuffix) {
			data, _ := os.ReadFile(ws.Mailbox("model").Path(mailbox.Dead, n))
			reason = string(data)
		}
	}
	if !strings.Contains(reason, "the endpoint failed") || !strings.Contains(reason, "the model said no") {
		t.Errorf("dead reason = %q, want the error and its detail", reason)
	}
	if _, err := Open(ws, Options{}); err == nil || !strings.Contains(err.Error(), "driver openai is not available") {
		t.Errorf("Open without the driver = %v", err)
	}
}

// spent is an error that asks the runner to stop its agent.
type spent struct{}

func (spent) Error() string   { return "budget used up" }
func (spent) StopAgent() bool { return true }

// TestDriverStopsAgent: a handler's error that asks to stop the agent (a
// budget used up) stops it for the run: the message it was handling
// stays in cur/ for the next runner, and the next waits in the inbox;
// the journal says why.
func TestDriverStopsAgent(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: model, driver: openai, openai: {model: m}}\n")
	calls := 0
	drivers := map[string]DriverFunc{workspace.DriverOpenAI: func(a workspace.Agent, ws *workspace.Workspace) (Handler, error) {
		return HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
			calls++
			return nil, spent{}
		}), nil
	}}
	send(t, ws, "boss", "model", "one")
	send(t, ws, "boss", "model", "two")
	stats, err := runIdle(t, ws, Options{Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("the handler ran %d times, want once: the agent stops", calls)
	}
	// The run's stats name it, with its message in cur/ and why.
	if len(stats.Stopped) != 1 || stats.Stopped[0].Agent != "model" || stats.Stopped[0].Reason != "budget used up" || !strings.HasPrefix(stats.Stopped[0].Path, "mailboxes/model/cur/") {
		t.Errorf("stats.Stopped = %+v, want model, its message in cur/ and why", stats.Stopped)
	}
	if d := cmp.Diff([]string{"one"}, bodies(t, ws, "model", mailbox.Cur)); d != "" {
		t.Errorf("cur/ (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"two"}, bodies(t, ws, "model", mailbox.Inbox)); d != "" {
		t.Errorf("inbox/ (-want +got):\n%s", d)
	}
	var notes []string
	workspace.ReadJournal(ws.JournalPath(), func(e workspace.Entry) error {
		if e.Outcome == workspace.Stopped {
			notes = append(notes, e.Note)
		}
		return nil
	})
	if len(notes) != 1 || !strings.Contains(notes[0], "model stopped for this run: budget used up") {
		t.Errorf("journal's stopped entries = %q", notes)
	}
}

// TestOldestListsAgain: a worker lists its inbox once for a backlog, and
// again as soon as something is delivered to it, so that a message with
// an earlier id than those waiting (a slow sender's) is still handled
// before them; an id listed that is gone since is passed over.
func TestOldestListsAgain(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	box := ws.Mailbox("bob")
	ids := &mailbox.IDs{}
	first, early, gone, last := ids.New("boss"), ids.New("boss"), ids.New("boss"), ids.New("boss")
	deliver := func(id string) {
		t.Helper()
		m := mailbox.New([]byte("hi\n"))
		m.Set("id", id)
		m.Set("to", "bob")
		if _, err := box.Deliver(id, m.Bytes(), r.syncer); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{first, gone, last} {
		deliver(id)
	}
	w := newWorker(r, workspace.Agent{Name: "bob"}, box, nil)
	r.workers["bob"] = w
	// take claims the oldest message as drain does, passing over one
	// that is gone.
	take := func(want string) {
		t.Helper()
		for {
			got, err := w.oldest()
			if err != nil || got == "" {
				if want != "" || err != nil {
					t.Fatalf("oldest() = %q, %v; want %q", got, err, want)
				}
				return
			}
			err = box.ClaimUntilSync(got, r.syncer)
			if errors.Is(err, mailbox.ErrNotFound) {
				w.taken(got)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			w.taken(got)
			if got != want {
				t.Fatalf("claimed %s, want %s", got, want)
			}
			return
		}
	}
	take(first)
	deliver(early) // an earlier id than two waiting, and bob is told
	r.notify("bob")
	take(early)
	if err := os.Remove(box.Path(mailbox.Inbox, mailbox.FileName(gone))); err != nil {
		t.Fatal(err) // removed by a person, with no word to the worker
	}
	take(last)
	take("")
}

// TestIdleWhileClaiming checks that a worker that claims a message while
// it is asked whether it is idle is never seen idle: a run until idle
// that saw it so ended before the message's answers were routed. The
// claim is made, as drain makes it, at the moment between idle's two
// looks (at the inbox and at busy).
func TestIdleWhileClaiming(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	box := ws.Mailbox("bob")
	id := (&mailbox.IDs{}).New("boss")
	m := mailbox.New([]byte("hi\n"))
	m.Set("id", id)
	m.Set("to", "bob")
	if _, err := box.Deliver(id, m.Bytes(), r.syncer); err != nil {
		t.Fatal(err)
	}
	w := newWorker(r, workspace.Agent{Name: "bob"}, box, nil)
	w.started = true
	w.betweenLooks = func() {
		w.setBusy(id) // as drain: busy, then claimed
		if err := box.ClaimUntilSync(id, r.syncer); err != nil {
			t.Fatal(err)
		}
	}
	if w.idle() {
		t.Fatal("idle() = true for a worker that claimed a message while asked: a run until idle would end before its answers")
	}
	w.betweenLooks = nil
	if w.idle() {
		t.Fatal("idle() = true while the worker handles a message")
	}
	w.setBusy("")
	if !w.idle() {
		t.Fatal("idle() = false with nothing handled and nothing waiting")
	}
}

// TestCommandBadHeader: output that starts as a message with a header (a
// first line "---" and a closing one) whose header does not parse was
// meant as a message: it is refused with the reason Check gives, kept in
// rejected/, and the program is told; it is never sent as plain text, as
// an untyped reply to the agent that asked. Told, the program sends it
// again, mended. Text whose first "---" is never closed is plain text
// (a horizontal rule), a reply as before.
func TestCommandBadHeader(t *testing.T) {
	ws := newWorkspace(t, "boss", "carol")
	script(t, ws, "status.sh", `cat >/dev/null
if [ "$PARLEY_TYPE" = message_refused ]; then
  printf -- '---\nto: carol\ntype: report\nsummary: "Status: all green"\n---\nFor carol only.\n'
else
  printf -- '---\nto: carol\ntype: report\nsummary: Status: all green\n---\nFor carol only.\n'
fi
`)
	script(t, ws, "rule.sh", "cat >/dev/null; printf -- '---\\nStatus: all green, and a rule above.\\n'\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - carol\n  - {name: bot, driver: command, run: [./status.sh]}\n  - {name: ruler, driver: command, run: [./rule.sh]}\n")
	send(t, ws, "boss", "bot", "status?")
	send(t, ws, "boss", "ruler", "status?")
	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Rejected != 1 {
		t.Errorf("stats = %+v, want the bad header refused, and only it", stats)
	}
	rejected, _ := ws.Mailbox("bot").List(mailbox.Rejected)
	if len(rejected) != 1 || !strings.Contains(rejected[0].Reason, ":4: header: mapping values are not allowed") {
		t.Fatalf("bot's rejected/ = %+v, want the output refused for its header, line 4", rejected)
	}
	var notice *mailbox.Message
	for _, n := range names(t, ws, "bot", mailbox.Done) {
		m := readMessage(t, ws.Mailbox("bot").Path(mailbox.Done, n))
		if typ, _ := m.Header().Get("type"); typ == workspace.RefusedNotice {
			notice = m
		}
	}
	if notice == nil {
		t.Fatal("no refusal notice in bot's done/")
	}
	for k, want := range map[string]string{"field": "header", "line": "4"} {
		if got, _ := notice.Header().Get(k); got != want {
			t.Errorf("notice %s: = %q, want %q", k, got, want)
		}
	}
	if d := cmp.Diff([]string{"For carol only."}, bodies(t, ws, "carol", mailbox.Inbox)); d != "" {
		t.Errorf("carol's inbox, the mended message (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"---\nStatus: all green, and a rule above."}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("boss's inbox, ruler's plain reply alone (-want +got):\n%s", d)
	}
}

// TestCommandPlainSecret: a game master's program that answers a player
// in plain text, with a sentence of the campaign's secrets in it, has its
// answer refused and kept, and is told; the player gets nothing of it.
// The guard read the protocol's four types alone, and a plain reply, of
// no type, took the secret to the player who asked.
func TestCommandPlainSecret(t *testing.T) {
	ws := newWorkspace(t, "aria")
	campaign := filepath.Join(ws.Root, workspace.CampaignsDir, "hollow")
	if err := os.MkdirAll(campaign, 0o755); err != nil {
		t.Fatal(err)
	}
	story := "# Story State\n\n## GM Notes (Secret)\n\n- The innkeeper poisoned the well last night.\n"
	if err := os.WriteFile(filepath.Join(campaign, "story-state.md"), []byte(story), 0o644); err != nil {
		t.Fatal(err)
	}
	script(t, ws, "gm.sh", "cat >/dev/null; [ \"$PARLEY_TYPE\" = message_refused ] || echo 'Between us: the innkeeper poisoned the well last night.'\n")
	ws = reconfigure(t, ws, "agents:\n  - {name: aria, role: player, character: tilda}\n  - {name: gm, driver: command, run: [./gm.sh]}\n")
	send(t, ws, "aria", "gm", "What is wrong with the water?")
	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Rejected != 1 {
		t.Errorf("stats = %+v, want the plain answer refused", stats)
	}
	rejected, _ := ws.Mailbox("gm").List(mailbox.Rejected)
	if len(rejected) != 1 || !strings.Contains(rejected[0].Reason, `body: carries a sentence of the game master's secrets (campaigns/hollow/story-state.md, the secret part at line 3) to aria`) {
		t.Errorf("gm's rejected/ = %+v, want the answer refused for the secret", rejected)
	}
	if got := names(t, ws, "aria", mailbox.Inbox); len(got) != 0 {
		t.Errorf("aria's inbox = %v, want nothing", got)
	}
}

// TestHandledAfterItsDeliveryLands: a worker may find a copy in its inbox
// before the batch that wrote it is journaled (it lists its inbox as it
// finishes a message); it waits for the batch to land before it hands
// the message to its driver, so that the journal tells of the delivery
// before anything the driver journals (a tryout saw `model bot ...
// answered` before `delivered you -> bot` of the same message).
func TestHandledAfterItsDeliveryLands(t *testing.T) {
	ws := newWorkspace(t, "boss", "bob")
	r, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	box := ws.Mailbox("bob")
	id := (&mailbox.IDs{}).New("boss")
	m := mailbox.New([]byte("hi\n"))
	m.Set("id", id)
	m.Set("from", "boss")
	m.Set("to", "bob")
	r.landing.add(id) // written, its batch not journaled yet
	if _, err := box.Deliver(id, m.Bytes(), r.syncer); err != nil {
		t.Fatal(err)
	}
	if err := box.Claim(id); err != nil {
		t.Fatal(err)
	}
	called := make(chan struct{})
	d := &builtinDriver{timeout: time.Minute, handler: HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
		close(called)
		return nil, nil
	})}
	w := newWorker(r, workspace.Agent{Name: "bob"}, box, d)
	r.workers["bob"] = w
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		w.handle(context.Background(), id)
	}()
	select {
	case <-called:
		t.Fatal("the driver was handed the message before its delivery was journaled")
	case <-time.After(100 * time.Millisecond):
	}
	r.landing.done(id)
	<-handled
	select {
	case <-called:
	default:
		t.Error("the driver was not handed the message once its delivery landed")
	}
	if len(r.landing.ids) != 0 {
		t.Errorf("landing = %v, want none", r.landing.ids)
	}
}

// TestProgramEnviron: an agent's program starts with the environment
// the runner is given (Options.Environ), not the runner's own, and the
// runner's variables after it.
func TestProgramEnviron(t *testing.T) {
	ws := newWorkspace(t, "boss")
	script(t, ws, "env.sh", "cat >/dev/null; echo \"given=$ONLY_GIVEN home=$HOME agent=$PARLEY_AGENT\"\n")
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: bot, driver: command, run: [./env.sh]}\n")
	send(t, ws, "boss", "bot", "what do you see?")
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=/given-home", "ONLY_GIVEN=yes", "PARLEY_AGENT=not-this"}
	if _, err := runIdle(t, ws, Options{Environ: environ}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"given=yes home=/given-home agent=bot"}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
		t.Errorf("what the program saw (-want +got):\n%s", d)
	}
}

// TestInterruptedNamed: a run stopped while an agent's driver handles a
// message names it in its figures (Stats.Interrupted), with where it
// waits, in cur/, for the next run. (A tryout: Ctrl-C during an openai
// agent's model call, and the run's summary did not say the message was
// cut off and would be handled again.)
func TestInterruptedNamed(t *testing.T) {
	ws := reconfigure(t, newWorkspace(t, "boss"), "agents:\n  - boss\n  - {name: slow, driver: builtin, handler: slow}\n")
	started := make(chan struct{}, 1)
	handlers := Handlers{"slow": HandlerFunc(func(ctx context.Context, d *Delivery) ([]*mailbox.Message, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})}
	id := send(t, ws, "boss", "slow", "take your time")
	r, err := Open(ws, Options{Handlers: handlers})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	stats, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []InterruptedMessage{{Agent: "slow", ID: id, Path: filepath.Join("mailboxes", "slow", "cur", mailbox.FileName(id))}}
	if d := cmp.Diff(want, stats.Interrupted); d != "" {
		t.Errorf("Stats.Interrupted (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(ws.Root, want[0].Path)); err != nil {
		t.Errorf("the message cut off does not wait in cur/: %v", err)
	}
}

// TestLastLine: the line a reason quotes of a program's output is its
// last one not blank, with its control characters escaped and cut at
// maxLastLine characters.
func TestLastLine(t *testing.T) {
	long := strings.Repeat("é", maxLastLine+10)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one\ntwo\n\n  \n", "two"},
		{"  padded  \r\n", "padded"},
		{"\x1b[31mred\x1b[0m\tand a bell\a", `\x1b[31mred\x1b[0m\tand a bell\a`},
		{"hit your limit · resets 3am", "hit your limit · resets 3am"},
		{long, strings.Repeat("é", maxLastLine) + "..."},
	} {
		if got := lastLine(tc.in); got != tc.want {
			t.Errorf("lastLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSessionAPIRetryNote: while a session's program retries its API
// (parley session's line for Claude Code's api_retry event), parley
// status shows the agent working, with a note that says so; the note
// goes once the session is done with the message. Before, a session
// waiting on a rate-limited API looked the same as one hung.
func TestSessionAPIRetryNote(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "boss")
	script(t, ws, "retry.sh", `while IFS= read -r line; do
  [ "$line" = "$(printf '\036')" ] || continue
  echo '`+APIRetryLine("claude", "attempt 1 of 10, in 1s (429 rate_limit)")+`' >&2
  while [ ! -e go ]; do sleep 0.01; done
  printf 'done\n\036\n\036\n'
done
`)
	ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: sess, driver: session, run: [./retry.sh], timeout: 60s}\n")
	send(t, ws, "boss", "sess", "work")
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx)
		done <- err
	}()
	want := APIRetryNote + "attempt 1 of 10, in 1s (429 rate_limit)"
	waitFor(t, 30*time.Second, func() bool { return r.state.run("sess").Note == want })
	if a := r.state.run("sess"); a.State != workspace.StateWorking {
		t.Errorf("sess's state while its program retries = %+v, want working", a)
	}
	if err := os.WriteFile(filepath.Join(ws.Root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a := r.state.run("sess"); a.State != workspace.StateIdle || a.Note != "" {
		t.Errorf("sess's state once it answered = %+v, want idle with no note", a)
	}
	log, _ := os.ReadFile(ws.StderrLogPath("sess"))
	if !strings.Contains(string(log), "parley: session: claude: retrying its API: attempt 1 of 10") {
		t.Errorf("sess's stderr log lacks the retry:\n%s", log)
	}
}
