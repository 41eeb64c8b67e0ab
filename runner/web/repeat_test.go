package web

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// filingActions answers a question as parley answer does, as far as the
// seat's inbox can tell: the question leaves it (for done/); and
// counts, of the rest, what fakeActions counts.
type filingActions struct {
	fakeActions
	agent mailbox.Dir
}

func (f *filingActions) Answer(ctx context.Context, id, text string) (string, error) {
	if err := os.Rename(f.agent.Path(mailbox.Inbox, mailbox.FileName(id)), f.agent.Path(mailbox.Done, mailbox.FileName(id))); err != nil {
		return "", err
	}
	return f.fakeActions.Answer(ctx, id, text)
}

// TestActKeyOnce guards the posts of the page against repeats. Bug: at
// a phone's seat, one tap on "say" sent two [PLAYER_TO_GM] 13 ms apart:
// the Wi-Fi dropped the answer to the post and Chromium sent the post
// again, and /act could not tell a repeat from a new action (an answer
// to a question sent again was refused: "does not wait in the inbox").
// A post with the key the page made for the action is carried out once;
// the same key again is answered as the first was, and does nothing.
func TestActKeyOnce(t *testing.T) {
	ws := newWorkspace(t)
	mine := post(t, ws, "gm", "aria", "What does Aria do?\n")
	if err := os.Rename(ws.Mailbox("gm").Path(mailbox.Outbox, mine+".md"), ws.Mailbox("aria").Path(mailbox.Inbox, mine+".md")); err != nil {
		t.Fatal(err)
	}
	act := &filingActions{agent: ws.Mailbox("aria")}
	s := newServer(t, ws, Options{Spectator: true, Player: true, Person: "aria", Actions: act})
	type reply struct {
		Code int
		Said string
	}
	send := func(form url.Values) reply {
		t.Helper()
		code, said := postAct(t, s, form)
		return reply{code, said}
	}
	const k1, k2, k3 = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", "00000000000000000000000000000003"
	say := url.Values{"kind": {"say"}, "as": {"ACTION"}, "text": {"Corwin shouts at the archers"}, "key": {k1}}
	first := send(say)
	if again := send(say); again != first || first.Code != 200 {
		t.Errorf("a say sent again with its key = %+v, want 200 and the first's answer %+v", again, first)
	}
	answer := url.Values{"kind": {"answer"}, "id": {mine}, "text": {"She climbs the ivy"}, "key": {k2}}
	first = send(answer)
	if again := send(answer); again != first || first.Code != 200 {
		t.Errorf("an answer sent again with its key = %+v, want 200 and the first's answer %+v (the question is answered: not refused as gone)", again, first)
	}
	// The same words sent again with a new key are a new action.
	say.Set("key", k3)
	send(say)
	// A key that came with another action is refused; so is one the
	// page does not make.
	other := url.Values{"kind": {"say"}, "as": {"ACTION"}, "text": {"Something else"}, "key": {k1}}
	if got := send(other); got.Code != 422 || !strings.Contains(got.Said, "another action") {
		t.Errorf("a key that came with another action = %+v, want 422 saying so", got)
	}
	bad := url.Values{"kind": {"say"}, "as": {"ACTION"}, "text": {"x"}, "key": {"../../etc"}}
	if got := send(bad); got.Code != 400 {
		t.Errorf("a key the page does not make = %+v, want 400", got)
	}
	want := []string{"seat /say ACTION Corwin shouts at the archers", "answer " + mine + " She climbs the ivy", "seat /say ACTION Corwin shouts at the archers"}
	if diff := cmp.Diff(want, act.asked); diff != "" {
		t.Errorf("the actions asked (-want +got):\n%s", diff)
	}
}

// blockingActions holds a say until it is let go, so that a post can
// come again while the first is carried out.
type blockingActions struct {
	fakeActions
	mu      sync.Mutex
	started chan struct{}
	release chan struct{}
}

func (b *blockingActions) Seat(ctx context.Context, line string) (string, bool, error) {
	b.started <- struct{}{}
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, "seat "+line)
	return "(sent)\n", false, nil
}

// TestActKeyOnceWhileCarriedOut: the browser sends a post again while
// the first is still carried out (the connection dropped at once); the
// repeat waits for the first and is answered as it was.
func TestActKeyOnceWhileCarriedOut(t *testing.T) {
	act := &blockingActions{started: make(chan struct{}, 2), release: make(chan struct{})}
	s := newServer(t, newWorkspace(t), Options{Actions: act})
	say := url.Values{"kind": {"say"}, "text": {"I duck"}, "key": {"0123456789abcdef0123456789abcdef"}}
	type reply struct {
		code int
		said string
	}
	replies := make(chan reply, 2)
	for range 2 {
		go func() {
			code, said := postAct(t, s, url.Values{"kind": say["kind"], "text": say["text"], "key": say["key"]})
			replies <- reply{code, said}
		}()
	}
	<-act.started
	close(act.release)
	a, b := <-replies, <-replies
	if a != b || a.code != 200 {
		t.Errorf("two posts of one key = %+v and %+v, want the same 200", a, b)
	}
	if len(act.asked) != 1 {
		t.Errorf("two posts of one key asked %q, want one say", act.asked)
	}
}
