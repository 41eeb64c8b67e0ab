package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestUnresponsiveSticks checks that an agent marked unresponsive stays so
// while it handles other messages (a nudge it does not answer), and is
// idle again once it sends something.
func TestUnresponsiveSticks(t *testing.T) {
	ws := newWorkspace(t, "lead")
	s := loadStateBook(ws, time.Now, nil)
	defer s.close()
	s.set("mute", workspace.StateUnresponsive, "ask-1")
	s.set("mute", workspace.StateWorking, "nudge-1")
	s.set("mute", workspace.StateIdle, "")
	if a := s.agents["mute"]; a.State != workspace.StateUnresponsive || a.Message != "ask-1" {
		t.Errorf("after handling a nudge without answering: %+v, want unresponsive about ask-1", a)
	}
	s.spoke("mute")
	if a := s.agents["mute"]; a.State != workspace.StateIdle {
		t.Errorf("after it spoke: %+v, want idle", a)
	}
	s.set("mute", workspace.StateWorking, "ask-2")
	s.set("mute", workspace.StateIdle, "")
	if a := s.agents["mute"]; a.State != workspace.StateIdle {
		t.Errorf("after handling a message: %+v, want idle", a)
	}
}

// TestStateBookCoalesces: an agent at work changes state twice a message;
// the book is written at most once per stateEvery however fast it
// changes (each write replaces the file with a rename, which on ext4
// starts a write to the disk that the next flush waits for), and the
// last change is in the file once the runner stops.
func TestStateBookCoalesces(t *testing.T) {
	ws := newWorkspace(t, "worker")
	s := loadStateBook(ws, time.Now, nil)
	start := time.Now()
	base := s.writes.Load() // the book a runner starts with
	const changes = 40
	for i := range changes {
		state := workspace.StateWorking
		if i%2 == 1 {
			state = workspace.StateIdle
		}
		s.set("worker", state, fmt.Sprintf("msg-%d", i))
		time.Sleep(time.Millisecond) // an agent's pace, not a wait for the writer
	}
	s.close()
	elapsed := time.Since(start)
	writes := s.writes.Load() - base
	if most := 2 + int64(elapsed/stateEvery); writes > most {
		t.Errorf("%d changes in %v written %d times, want at most %d (one per %v, and the last at close)", changes, elapsed, writes, most, stateEvery)
	}
	if a := bookOf(t, ws)["worker"]; a.State != workspace.StateIdle || a.Message != fmt.Sprintf("msg-%d", changes-1) {
		t.Errorf("the book after close says %+v, want the last change (idle, msg-%d)", a, changes-1)
	}
}

// TestStateBookAttempt checks that agents.json says which attempt at a
// message failed (a seat beside the runner tells a second failure, not
// every first one), and forgets it once the agent is idle.
func TestStateBookAttempt(t *testing.T) {
	ws := newWorkspace(t, "lead")
	s := loadStateBook(ws, time.Now, nil)
	s.setAttempt("tor", workspace.StateWorking, "m-1", 1)
	s.setAttempt("tor", workspace.StateRetrying, "m-1", 1)
	s.setAttempt("tor", workspace.StateWorking, "m-1", 2)
	s.setAttempt("tor", workspace.StateRetrying, "m-1", 2)
	s.close()
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if a := runs["tor"]; a.State != workspace.StateRetrying || a.Message != "m-1" || a.Attempt != 2 {
		t.Errorf("agents.json after a second failure: %+v, want retrying m-1, attempt 2", a)
	}
	s = loadStateBook(ws, time.Now, nil)
	s.setAttempt("tor", workspace.StateRetrying, "m-1", 2)
	s.set("tor", workspace.StateIdle, "")
	if a := s.run("tor"); a.Attempt != 0 {
		t.Errorf("idle after a retry: %+v, want no attempt", a)
	}
	s.close()
}

// TestStateBookHolding: an agent that waits on a message through no
// fault of the message's (its endpoint down, the disk full) after an
// attempt at it failed keeps that attempt, and why it failed, in
// agents.json: a runner that starts again goes on counting from there,
// and says why. Before, waiting wrote attempt 0, which a restart read as
// no attempt failed: a message that failed between outages was tried for
// ever.
func TestStateBookHolding(t *testing.T) {
	ws := newWorkspace(t, "lead")
	s := loadStateBook(ws, time.Now, nil)
	s.setAttempt("tor", workspace.StateWorking, "m-1", 1)
	s.retrying("tor", "m-1", 1, "exit code 3: broken")
	s.holding("tor", "m-1") // the stage cannot be opened: disk full
	s.setAttempt("tor", workspace.StateWorking, "m-1", 2)
	s.holding("tor", "m-1") // its endpoint is down
	s.close()
	runs, err := ws.AgentRuns()
	if err != nil {
		t.Fatal(err)
	}
	if a := runs["tor"]; a.State != workspace.StateRetrying || a.Message != "m-1" || a.Attempt != 1 || a.Failed != "exit code 3: broken" {
		t.Errorf("agents.json while holding after a failure: %+v, want retrying m-1, attempt 1, failed \"exit code 3: broken\"", a)
	}
	s = loadStateBook(ws, time.Now, nil)
	if n, why := s.failedBefore("tor", "m-1"); n != 1 || why != "exit code 3: broken" {
		t.Errorf("failedBefore after a restart = %d, %q; want 1, \"exit code 3: broken\"", n, why)
	}
	s.holding("tor", "m-2") // another message: none failed
	if a := s.run("tor"); a.Attempt != 0 || a.Failed != "" {
		t.Errorf("holding another message: %+v, want no attempt, no failure", a)
	}
	s.close()
}

// TestStateBookFlush: after flush the file holds the last change, whether
// the writer was pausing after a write (the change waits in its kick) or
// waiting for a change (the kick handed to it, the write not made yet).
// A seat's /status, read once the table is idle, showed an agent working
// whose program had ended.
func TestStateBookFlush(t *testing.T) {
	ws := newWorkspace(t, "worker")
	s := loadStateBook(ws, time.Now, nil)
	defer s.close()
	read := func() workspace.AgentRun { return bookOf(t, ws)["worker"] }
	for i := range 20 {
		msg := fmt.Sprintf("msg-%d", i)
		s.set("worker", workspace.StateWorking, msg)
		if i%2 == 1 {
			// The writer waits for a change: the next one is handed
			// to it as it comes.
			time.Sleep(2 * stateEvery)
		}
		s.set("worker", workspace.StateIdle, "")
		s.flush()
		if a := read(); a.State != workspace.StateIdle {
			t.Fatalf("round %d: after flush the file says %+v, want idle", i, a)
		}
	}
}

// TestLateWhileBusy: an agent late on the message its program works on,
// or is tried again on, stays working (or retrying), with Late naming the
// message; unresponsive once done without an answer; not late once it
// answers; and a late message given up waits for no answer: the next
// message handled without one does not make it unresponsive.
func TestLateWhileBusy(t *testing.T) {
	ws := newWorkspace(t, "lead")
	s := loadStateBook(ws, time.Now, nil)
	defer s.close()
	check := func(what, state, late string) {
		t.Helper()
		if a := s.run("w"); a.State != state || a.Late != late {
			t.Errorf("%s: %+v, want %s, late %q", what, a, state, late)
		}
	}
	s.set("w", workspace.StateWorking, "ask-1")
	s.setNoted("w", workspace.StateUnresponsive, "ask-1", "no answer to ask-1 from lead within 1s")
	check("late at work", workspace.StateWorking, "ask-1")
	s.setAttempt("w", workspace.StateRetrying, "ask-1", 1)
	check("tried again", workspace.StateRetrying, "ask-1")
	s.setAttempt("w", workspace.StateWorking, "ask-1", 2)
	check("at it again", workspace.StateWorking, "ask-1")
	s.set("w", workspace.StateIdle, "")
	check("done without an answer", workspace.StateUnresponsive, "")

	// Late again, then it answers.
	s.spoke("w")
	s.set("w", workspace.StateWorking, "ask-2")
	s.setNoted("w", workspace.StateUnresponsive, "ask-2", "no answer to ask-2 from lead within 1s")
	s.spoke("w")
	check("answered late", workspace.StateWorking, "")
	if a := s.run("w"); a.Note != "" {
		t.Errorf("answered late, the note stays: %q", a.Note)
	}
	s.set("w", workspace.StateIdle, "")
	check("done after answering", workspace.StateIdle, "")

	// Late, then given up.
	s.set("w", workspace.StateWorking, "ask-3")
	s.setNoted("w", workspace.StateUnresponsive, "ask-3", "no answer to ask-3 from lead within 1s")
	s.set("w", workspace.StateFailed, "ask-3")
	check("given up", workspace.StateFailed, "")
	s.set("w", workspace.StateWorking, "other")
	s.set("w", workspace.StateIdle, "")
	check("the next message, handled", workspace.StateIdle, "")
}

// bookOf reads agents.json of ws as the state book wrote it.
func bookOf(t *testing.T, ws *workspace.Workspace) map[string]workspace.AgentRun {
	t.Helper()
	data, err := os.ReadFile(ws.AgentsPath())
	if err != nil {
		t.Fatal(err)
	}
	var book map[string]workspace.AgentRun
	if err := json.Unmarshal(data, &book); err != nil {
		t.Fatal(err)
	}
	return book
}

// TestNoteOver: a built-in handler's note (a budget that cannot be kept)
// takes the place of none, or of its own last one, never of another's:
// it wiped the note that the agent did not answer in time, and spoke()
// then misread what was there.
func TestNoteOver(t *testing.T) {
	ws := newWorkspace(t, "gm")
	s := loadStateBook(ws, time.Now, nil)
	defer s.close()
	s.noteOver("gm", "no usage figures", "")
	if got := s.run("gm").Note; got != "no usage figures" {
		t.Fatalf("note = %q, want the handler's", got)
	}
	s.noteOver("gm", "no usage figures, again", "no usage figures")
	if got := s.run("gm").Note; got != "no usage figures, again" {
		t.Fatalf("note = %q, want the handler's new one in place of its old", got)
	}
	s.setNoted("gm", workspace.StateUnresponsive, "m1", lateNote("m1")+" from p1 within 1s")
	s.noteOver("gm", "no usage figures", "no usage figures, again")
	if got := s.run("gm").Note; got != lateNote("m1")+" from p1 within 1s" {
		t.Errorf("note = %q: the handler's note took the place of the runner's", got)
	}
}

// TestWaitBegunWrittenAtOnce: a reply awaited (timeouts:) is in the book
// as soon as the wait begins, not at the writer's next turn (within
// stateEvery): a runner killed meanwhile left the next one awaiting
// nothing, and the silent agent was never nudged.
func TestWaitBegunWrittenAtOnce(t *testing.T) {
	ws := newWorkspace(t, "gm", "p1", "p2")
	r := &Runner{state: loadStateBook(ws, time.Now, nil)}
	defer r.state.close()
	rule := &workspace.Timeout{Key: "timeouts[0]", To: []string{"p1", "p2"}, After: time.Hour}
	wait := func(agent, id string) *expectation {
		return &expectation{agent: agent, waiting: "gm", message: id, asked: mailbox.New([]byte("Your move.\n")), policy: rule, deadline: time.Now().Add(time.Hour)}
	}
	r.expected = append(r.expected, wait("p1", "m-1"))
	r.saveAwaited(false)
	// The writer wrote the first wait; it pauses now before the next.
	for deadline := time.Now().Add(20 * time.Second); r.state.writes.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first wait was never written")
		}
		time.Sleep(time.Millisecond)
	}
	r.expected = append(r.expected, wait("p2", "m-2"))
	r.saveAwaited(false)
	if got := bookOf(t, ws)["p2"].Awaited; len(got) != 1 || got[0].Message != "m-2" {
		t.Errorf("the book right after p2's wait began: p2 awaits %+v, want its answer to m-2", got)
	}
}
