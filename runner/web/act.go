package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/internal/visible"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// ErrForbidden is the answer to a write without the token (a page with
// it and a stale CSRF token gets errStalePage).
var ErrForbidden = errors.New("not allowed: open the address parley serve printed, with its token, to write")

// errStalePage is the answer to a write with the token but not the
// page's CSRF token: a page opened before parley serve started again.
var errStalePage = errors.New("not allowed: this page is older than the parley serve it writes to (or the form is not the page's): reload the page and do it again")

// errOtherOrigin is the answer to a write from a page of another site.
var errOtherOrigin = errors.New("not allowed: the form came from a page of another site")

// act carries out what a form on the page asks: answer, seat (and roll,
// say, journal), approve, reject, reply, done, retry; and files what the
// Seat page showed (shown). It needs the token (in its cookie), the page's
// CSRF token, and, when the browser says where the form came from, this
// server. It answers with what the command line would have said, as
// text (control characters escaped, as on a page); an error with status
// 422. A form with a key (the page makes one for each action, and sends
// it again with the same action) is carried out once: the same key again
// is answered as the first was (see answered), and does nothing.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "a form that cannot be read: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.actions == nil {
		http.Error(w, "this view is read-only", http.StatusForbidden)
		return
	}
	switch {
	case !s.authorised(r):
		http.Error(w, ErrForbidden.Error(), http.StatusForbidden)
		return
	case !sameOrigin(r):
		http.Error(w, errOtherOrigin.Error(), http.StatusForbidden)
		return
	case subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1:
		// The token is right: the page is older than this server (each
		// start makes a new CSRF token), or the form was not the page's.
		http.Error(w, errStalePage.Error(), http.StatusForbidden)
		return
	}
	if err := once(r.PostForm); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key := r.PostForm.Get("key")
	if key != "" && !keyPattern.MatchString(key) {
		http.Error(w, errKey.Error(), http.StatusBadRequest)
		return
	}
	// One write at a time, as one person at a terminal; a post that
	// comes again with its key (the browser sent it again when the
	// connection dropped its answer, the person tapped again after
	// "not sent") finds the answer to the first, even while the first is
	// carried out, and nothing is done twice.
	s.writing.Lock()
	form := formOf(r.PostForm)
	ans, again := s.answered.find(key, form)
	if key == "" || !again {
		// Not cut off with the connection: a dropped connection is what
		// the key is for, and its retry gets this answer.
		ans = s.carryOut(context.WithoutCancel(r.Context()), r.PostForm)
		if key != "" {
			s.answered.keep(key, form, ans)
		}
	} else {
		s.log.Info("a post come again, answered as before", "kind", r.PostForm.Get("kind"), "key", key)
	}
	s.writing.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(ans.code)
	w.Write([]byte(ans.text))
}

// carryOut carries out form, if the seat may send it (playerMay), and
// returns what /act answers: what the command line would have said, or
// why nothing was sent.
func (s *Server) carryOut(ctx context.Context, form url.Values) answer {
	if err := s.playerMay(form); err != nil {
		s.log.Info("refused to a player", "kind", form.Get("kind"), "err", err)
		return answer{code: http.StatusForbidden, text: err.Error() + "\n"}
	}
	said, sends, err := s.do(ctx, form)
	if err != nil {
		s.log.Info("refused from the browser", "kind", form.Get("kind"), "err", err)
		return answer{code: http.StatusUnprocessableEntity, text: visible.Text(err.Error()) + "\n"}
	}
	s.log.Info("sent from the browser", "kind", form.Get("kind"))
	if sends && s.atTable() && s.ws().RunnerPID() == 0 {
		said = strings.TrimRight(said, "\n") + "\n" + noRunner + "\n"
	}
	return answer{code: http.StatusOK, text: visible.Text(said)}
}

// noRunner is what an answer sent at a table no runner routes says.
const noRunner = "(no runner routes this table now (no parley run, no parley play): it waits in an outbox until the host starts parley run)"

// atTable reports whether the workspace is a D&D table
// (workspace.AtTable decides, for the Seat page too).
func (s *Server) atTable() bool { return s.ws().AtTable() }

// once returns an error naming the first field (in name order) that the
// form gives more than once: no form of the page sends a field twice, and
// one that does is ambiguous (an option's button and a typed answer, both
// named text), so nothing is picked from it.
func once(f url.Values) error {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if len(f[k]) > 1 {
			return fmt.Errorf("a form that says %s %d times: nothing was sent (reload the page and do it again)", k, len(f[k]))
		}
	}
	return nil
}

// sameOrigin reports whether the request's Origin, when it has one, is
// this server.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// playerMay returns why a player's seat (Options.Player) may not send
// what form asks, or nil when it may: what it sends as an agent
// (a reply, a message marked handled, a request decided) must be in the
// inbox (or cur/) of the seat's agents, the person and the agent of their
// character when no program plays it, and be sent as one of them (a
// reply, a message marked handled and a request decided name the agent,
// whose copy it must be); a question answered must have come to one of
// them (in inbox/, cur/ or done/): one no longer waiting (answered or
// handled at another device, a page not refreshed) is the seat's to tell
// (Actions.Answer), as the host's seat tells it; a retry is the host's. The seat's own commands
// (say, roll, a seat line) act as the seat does at parley play, as its
// team lead and its character. Any other server may act as any agent
// the message went to: it is the host's.
func (s *Server) playerMay(f url.Values) error {
	if !s.player {
		return nil
	}
	person, prompted := s.seated()
	var mine []string
	for _, a := range []string{person, prompted} {
		if a != "" && !slices.Contains(mine, a) {
			mine = append(mine, a)
		}
	}
	if len(mine) == 0 {
		return errors.New("not allowed: this seat has no agent now (parley.yaml as read again names none): nothing was sent")
	}
	kind, id := f.Get("kind"), f.Get("id")
	// holds reports whether message id is in one of agents' mailboxes
	// in one of states. A copy goes from state to state in the order
	// given (inbox/, cur/, done/), and each is looked at in that order:
	// one filed meanwhile is found in the next.
	holds := func(states []string, agents ...string) bool {
		if _, _, err := mailbox.ParseID(id); err != nil {
			return false
		}
		for _, a := range agents {
			if s.ws().CheckAgent(a) != nil {
				continue
			}
			for _, state := range states {
				if exists(s.ws().Mailbox(a).Path(state, mailbox.FileName(id))) {
					return true
				}
			}
		}
		return false
	}
	waiting := []string{mailbox.Inbox, mailbox.Cur}
	seat := strings.Join(mine, " or ")
	switch kind {
	case "seat", "roll", "say", "journal", "shown":
		// (What shown files is what the seat's own Seat page tells
		// from its own inboxes: decided again here, not by the form.)
		return nil
	case "retry":
		return fmt.Errorf("not allowed: this is a player's seat (%s): putting a message back is the host's (parley retry, or the host's own parley serve)", seat)
	case "reply", "done", "approve", "reject":
		agent := f.Get("agent")
		if !slices.Contains(mine, agent) {
			if agent == "" {
				agent = "an agent not named"
			}
			return fmt.Errorf("not allowed: this is the seat of %s: it sends nothing as %s (nothing was sent)", seat, agent)
		}
		if !holds(waiting, agent) {
			return fmt.Errorf("not allowed: %s is not in the inbox of %s: this seat answers only what waits for it (nothing was sent)", id, agent)
		}
		return nil
	case "answer":
		// A question that came to the seat and waits no more is the
		// seat's to tell (answered elsewhere, handled), not refused:
		// the seat decides it, the same for the host's seat.
		if !holds(append(waiting, mailbox.Done), mine...) {
			return fmt.Errorf("not allowed: %s was not sent to %s: this seat answers only what was asked of it (nothing was sent)", id, seat)
		}
		return nil
	}
	return nil // refused by do, as unknown
}

// oneLine keeps what a person typed on one line, as the seat reads it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// do carries out form, and reports whether it sent something (not a
// message marked handled, a retry, nor a seat command that only showed,
// as the seat decides it: Actions.Seat).
func (s *Server) do(ctx context.Context, f url.Values) (said string, sends bool, err error) {
	id := f.Get("id")
	switch f.Get("kind") {
	case "answer":
		if strings.TrimSpace(f.Get("text")) == "" {
			return "", false, errors.New("answer: say something, or pick an option")
		}
		said, err := s.actions.Answer(ctx, id, oneLine(f.Get("text")))
		return said, true, err
	case "seat":
		line := oneLine(f.Get("line"))
		if !strings.HasPrefix(line, "/") {
			return "", false, errors.New("seat: a command starts with / (/roll 1d20, /say ...)")
		}
		return s.seatLine(ctx, line)
	case "journal":
		// A [JOURNAL_CHECKPOINT]'s entry, as /journal ENTRY writes it.
		if strings.TrimSpace(f.Get("text")) == "" {
			return "", false, errors.New("journal: say what happened")
		}
		return s.seatLine(ctx, "/journal "+oneLine(f.Get("text")))
	case "roll":
		line := "/roll " + oneLine(f.Get("dice"))
		if dc := oneLine(f.Get("dc")); dc != "" {
			line += " --dc " + dc
		}
		if c := oneLine(f.Get("check")); c != "" {
			line += " " + c
		}
		return s.seatLine(ctx, line)
	case "say":
		kind := strings.ToUpper(f.Get("as"))
		if kind != "ACTION" && kind != "REACTION" && kind != "VETO" {
			kind = "ACTION"
		}
		return s.seatLine(ctx, "/say "+kind+" "+oneLine(f.Get("text")))
	case "approve", "reject":
		said, err := s.actions.Decide(ctx, id, f.Get("agent"), f.Get("kind") == "approve", f.Get("text"))
		return said, true, err
	case "reply":
		// An escalation is answered with a decision and the reasons for
		// it, which may be left out.
		decision := strings.TrimSpace(f.Get("decision"))
		text := f.Get("text")
		if strings.TrimSpace(text) == "" {
			if decision == "" {
				return "", false, errors.New("reply: the answer is empty")
			}
			text = ""
		} else {
			text = withNewline(text)
		}
		said, err := s.actions.Reply(ctx, id, f.Get("agent"), decision, text)
		return said, true, err
	case "done":
		said, err := s.actions.Done(ctx, id, f.Get("agent"))
		return said, false, err
	case "shown":
		return "", false, s.shown(ctx, strings.Fields(f.Get("ids")))
	case "retry":
		n, err := strconv.Atoi(f.Get("n"))
		e, ok := s.feed.at(n)
		if err != nil || !ok {
			return "", false, errors.New("retry: no such journal entry")
		}
		said, err := s.retry(ctx, e)
		return said, false, err
	}
	return "", false, errors.New("unknown action " + strconv.Quote(f.Get("kind")))
}

// shown files the messages ids that the Seat page showed, of those it
// tells from the seat's inboxes now (tell decides, as for the page):
// an id it does not tell (a question, another's message, one filed
// meanwhile) is left as it is.
func (s *Server) shown(ctx context.Context, ids []string) error {
	d := s.seatData()
	file := map[string][]string{}
	for _, id := range ids {
		if holders, ok := d.file[id]; ok {
			file[id] = holders
		}
	}
	if len(file) == 0 {
		return nil
	}
	return s.actions.Shown(ctx, file)
}

// seatLine carries out a line as the seat does; it sent something unless
// the seat says the line only showed.
func (s *Server) seatLine(ctx context.Context, line string) (string, bool, error) {
	said, showed, err := s.actions.Seat(ctx, line)
	return said, !showed, err
}

// retry puts back what a journal entry refused or gave up on: the file
// it names in rejected/, or the message by id in dead/.
func (s *Server) retry(ctx context.Context, e workspace.Entry) (string, error) {
	switch e.Outcome {
	case workspace.Refused:
		if e.Path == "" || !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			return "", errors.New("retry: the journal names no file in rejected/ for it")
		}
		p := filepath.Join(s.ws().Root, filepath.FromSlash(e.Path))
		if _, state, ok := s.ws().Locate(p); !ok || state != mailbox.Rejected {
			return "", errors.New("retry: " + e.Path + " is not in an agent's rejected/")
		}
		return s.actions.Retry(ctx, p)
	case workspace.GivenUp:
		if _, _, err := mailbox.ParseID(e.ID); err != nil {
			return "", errors.New("retry: the journal names no message id for it")
		}
		// The dead letter of this entry's agent, not another agent's
		// copy of the same message.
		if f, ok := putKey(&e); ok && s.ws().CheckAgent(f.agent) == nil {
			if p := s.ws().Mailbox(f.agent).Path(f.state, f.name); exists(p) {
				return s.actions.Retry(ctx, p)
			}
		}
		return s.actions.Retry(ctx, e.ID)
	}
	return "", errors.New("retry: only a refused message or one given up on can go again")
}

func withNewline(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
