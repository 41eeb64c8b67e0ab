package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// Programs that answer every message with a message to the agent named
// in $1.
const (
	// plainLoop writes a fresh header.
	plainLoop = `cat >/dev/null; printf -- '---\nto: %s\n---\nagain\n' "$1"` + "\n"
	// copyLoop copies the header it was given (hops: included), but for
	// who sends it and to whom.
	copyLoop = `msg=$(cat)
printf -- '---\nto: %s\n' "$1"
printf '%s\n' "$msg" | sed -n '2,/^---$/p' | grep -v '^\(id\|from\|to\|created\):'
echo again
`
	// zeroLoop says its answer is the first of its chain.
	zeroLoop = `cat >/dev/null; printf -- '---\nto: %s\nhops: 0\n---\nagain\n' "$1"` + "\n"
	// sessionLoop is a session that writes each answer into its outbox
	// itself, with hops: 0, and prints nothing.
	sessionLoop = `rs=$(printf '\036')
n=0
while true; do
  got=no
  while IFS= read -r line; do got=yes; [ "$line" = "$rs" ] && break; done
  [ "$got" = no ] && exit 0
  n=$((n+1))
  printf -- '---\nto: %s\nhops: 0\n---\nagain\n' "$1" > "$PARLEY_OUTBOX/.$n.tmp"
  mv "$PARLEY_OUTBOX/.$n.tmp" "$PARLEY_OUTBOX/answer-$n.md"
  printf '%s\n' "$rs" # nothing printed: done
done
`
)

// TestLoopStopped: two programs answering each other for ever are
// stopped at hop_limit messages in a row, whatever they write in hops:,
// and however they send; the message past it goes to rejected/ with the
// reason, and a notice from parley tells the sender (filed, not handed to
// its program) and every person.
func TestLoopStopped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		ping, pong       string
		driver           string
		pingRun, pongRun string
	}{
		{name: "fresh headers", ping: plainLoop, pong: plainLoop},
		{name: "copied headers", ping: copyLoop, pong: copyLoop},
		{name: "hops: 0", ping: zeroLoop, pong: zeroLoop},
		{name: "one copies, one says 0", ping: copyLoop, pong: zeroLoop},
		{name: "sessions writing into their outboxes", ping: sessionLoop, pong: sessionLoop, driver: workspace.DriverSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWorkspace(t, "starter")
			script(t, ws, "ping.sh", tt.ping)
			script(t, ws, "pong.sh", tt.pong)
			driver := tt.driver
			if driver == "" {
				driver = workspace.DriverCommand
			}
			ws = reconfigure(t, ws, fmt.Sprintf(`hop_limit: 5
agents:
  - starter
  - {name: ping, driver: %[1]s, run: [./ping.sh, pong]}
  - {name: pong, driver: %[1]s, run: [./pong.sh, ping]}
  - you
`, driver))
			send(t, ws, "starter", "ping", "go")
			stats, err := runIdle(t, ws, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// starter's message, then 5 between ping and pong; the 6th is
			// stopped.
			if stats.Routed != 6 || stats.Rejected != 1 || stats.Loops != 1 {
				t.Errorf("stats = %+v, want 6 routed (the first message and 5 answers), 1 rejected, 1 loop", stats)
			}
			var stopped string // the agent whose message was stopped
			var reasons []string
			for _, a := range []string{"ping", "pong"} {
				rej, _ := ws.Mailbox(a).List(mailbox.Rejected)
				for _, r := range rej {
					stopped = a
					reasons = append(reasons, r.Reason)
				}
			}
			if len(reasons) != 1 || !strings.Contains(reasons[0], ": loop stopped: it would be message 6 in a row between ") || !strings.Contains(reasons[0], "(hop_limit: 5 in parley.yaml)") {
				t.Fatalf("reasons = %q", reasons)
			}
			other := map[string]string{"ping": "pong", "pong": "ping"}[stopped]
			// The copies the two got count 1 to 5.
			var hops []int
			for _, a := range []string{"ping", "pong"} {
				for _, n := range names(t, ws, a, mailbox.Done) {
					m := readMessage(t, ws.Mailbox(a).Path(mailbox.Done, n))
					if from, _ := m.Header().Get("from"); from == workspace.Runner {
						continue
					}
					h, _ := m.Header().Get("hops")
					if h == "" {
						continue // starter's
					}
					k, _ := strconv.Atoi(h)
					hops = append(hops, k)
				}
			}
			slices.Sort(hops)
			if want := []int{1, 2, 3, 4, 5}; !slices.Equal(hops, want) {
				t.Errorf("hops: of the copies ping and pong handled = %v, want %v", hops, want)
			}
			// The notice: filed in the stopped agent's done/, unanswered;
			// waiting in each person's inbox.
			var notice *mailbox.Message
			for _, n := range names(t, ws, stopped, mailbox.Done) {
				m := readMessage(t, ws.Mailbox(stopped).Path(mailbox.Done, n))
				if typ, _ := m.Header().Get("type"); typ == workspace.LoopNotice {
					notice = m
				}
			}
			if notice == nil {
				t.Fatalf("%s's done/ holds no notice: %v", stopped, names(t, ws, stopped, mailbox.Done))
			}
			id, _ := notice.Header().Get("id")
			for _, person := range []string{"starter", "you"} {
				if got := names(t, ws, person, mailbox.Inbox); !slices.Contains(got, mailbox.FileName(id)) {
					t.Errorf("%s's inbox = %v, want the notice %s", person, got, id)
				}
			}
			if to, _ := notice.Header().Names("to"); !slices.Equal(to, []string{stopped, "starter", "you"}) {
				t.Errorf("notice to: = %q, want %s, starter, you", to, stopped)
			}
			for k, want := range map[string]string{"from": workspace.Runner, "agent": stopped, "with": other, "limit": "5"} {
				if got := notice.Header().Text(k); got != want {
					t.Errorf("notice %s: = %q, want %q", k, got, want)
				}
			}
			if got := notice.Header().Text("stopped"); !strings.HasPrefix(got, "mailboxes/"+stopped+"/rejected/") {
				t.Errorf("notice stopped: = %q, want the rejected file", got)
			}
			if body := string(notice.Body); !strings.Contains(body, "have sent each other 5 messages in a row") {
				t.Errorf("notice body = %q", body)
			}
			// Journaled: the loop stopped, with its reason, then the notice.
			var outcomes []string
			for _, e := range journalEntries(t, ws) {
				if e.Outcome == workspace.Refused || e.Outcome == workspace.LoopStopped || e.From == workspace.Runner {
					outcomes = append(outcomes, e.From+" "+e.Outcome)
				}
			}
			if want := []string{stopped + " " + workspace.LoopStopped, workspace.Runner + " " + workspace.Delivered}; !slices.Equal(outcomes, want) {
				t.Errorf("journal = %q, want %q", outcomes, want)
			}
		})
	}
}

// TestPipelineNoLoop: a pipeline through an orchestrator, five review
// rounds per step over sixteen steps, exchanges 322 messages between
// three programs without tripping even a hop_limit of 3: the
// orchestrator passes each answer on to someone else. Its messages go to
// the one it answered too, as a copy, and are still not a loop.
func TestPipelineNoLoop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 480 programs")
	}
	ws := newWorkspace(t, "you")
	// Each program reads the fields it needs with shell builtins only:
	// one process per message.
	const fields = `while IFS= read -r line; do
  case $line in
  'signal: '*) signal=${line#signal: } ;;
  'step: '*) step=${line#step: } ;;
  'round: '*) round=${line#round: } ;;
  'steps: '*) steps=${line#steps: } ;;
  esac
done
steps=${steps#\"}; steps=${steps%\"}
`
	script(t, ws, "orch.sh", fields+`
case "$PARLEY_FROM:$signal" in
you:*) to=worker; cc=reviewer; type=task; step=1; round=1 ;;
worker:done) to=reviewer; cc=worker; type=review ;;
reviewer:fail) to=worker; cc=reviewer; type=task; round=$((round+1)) ;;
reviewer:pass)
  if [ "$step" -ge "$steps" ]; then
    printf -- '---\nto: you\ntype: report\n---\nAll %s steps passed review.\n' "$steps"
    exit 0
  fi
  to=worker; cc=reviewer; type=task; step=$((step+1)); round=1 ;;
*) exit 0 ;;
esac
printf -- '---\nto: %s\ncc: %s\ntype: %s\nstep: %s\nround: %s\nsteps: %s\n---\nStep %s, round %s.\n' "$to" "$cc" "$type" "$step" "$round" "$steps" "$step" "$round"
`)
	script(t, ws, "worker.sh", fields+`
[ "$PARLEY_TYPE" = task ] || exit 0
printf -- '---\nto: orch\nsignal: done\nstep: %s\nround: %s\nsteps: %s\n---\nDone.\n' "$step" "$round" "$steps"
`)
	script(t, ws, "reviewer.sh", fields+`
[ "$PARLEY_TYPE" = review ] || exit 0
signal=fail
[ "$round" -ge 5 ] && signal=pass
printf -- '---\nto: orch\nsignal: %s\nstep: %s\nround: %s\nsteps: %s\n---\nReviewed.\n' "$signal" "$step" "$round" "$steps"
`)
	ws = reconfigure(t, ws, `hop_limit: 3
agents:
  - you
  - {name: orch, role: orchestrator, driver: command, run: [./orch.sh]}
  - {name: worker, driver: command, run: [./worker.sh]}
  - {name: reviewer, driver: command, run: [./reviewer.sh]}
`)
	send(t, ws, "you", "orch", "Build it.", "steps", "16")
	stats, err := runIdle(t, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// you -> orch; per round orch -> worker, worker -> orch, orch ->
	// reviewer, reviewer -> orch; orch -> you.
	if want := 1 + 16*5*4 + 1; stats.Routed != want || stats.Rejected != 0 || stats.Loops != 0 {
		t.Errorf("stats = %+v, want %d routed, nothing rejected, no loop", stats, want)
	}
	if got := bodies(t, ws, "you", mailbox.Inbox); !slices.Equal(got, []string{"All 16 steps passed review."}) {
		t.Errorf("you's inbox = %q, want the report", got)
	}
	top := 0
	for _, a := range []string{"orch", "worker", "reviewer"} {
		for _, n := range names(t, ws, a, mailbox.Done) {
			h, _ := readMessage(t, ws.Mailbox(a).Path(mailbox.Done, n)).Header().Get("hops")
			k, _ := strconv.Atoi(h)
			top = max(top, k)
		}
	}
	if top != 3 {
		t.Errorf("the highest hops: = %d, want 3 (a copy back to the one answered)", top)
	}
}
