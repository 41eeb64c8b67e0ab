package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// Check is the one place that says whether a message is valid and where
// it goes. The router delivers by its verdict; `parley send`, `compose`,
// `validate` and `routes explain` show the same verdict, so that what
// they accept the router delivers, to the same agents, and what they
// refuse it refuses, for the same reason.

// Input is a message to check and what is known of it besides its text.
type Input struct {
	// File names the message in a refusal: its name in the outbox, or the
	// path a command was given. Empty for a message built in memory.
	File string
	// Name is the file's name in the outbox, when it is not File's last
	// element: a file in rejected/ is checked under the name it is put
	// back with (mailbox.UnrejectedName), not under the time of its
	// refusal and that name, which can read as an id. A file named by an
	// id is the message of that id (see checkSender).
	Name string
	// Sender is the agent that sends it: the owner of the outbox it is in.
	Sender string
	// Message is the parsed message. Check does not change it.
	Message *mailbox.Message
	// Sent reports whether the sender already sent a message with this
	// id. Nil looks in the sender's sent/ directory; the router also
	// counts the ids of the batch it is routing.
	Sent func(id string) bool
	// Answering, for a message a program agent says, is the message its
	// driver was handling then: the router knows it, and with it whether
	// the message continues an exchange between two programs (see
	// Loops). Nil for a message a person writes, or one parley writes on
	// an agent's behalf (a nudge).
	Answering *Answering
	// Workspace names the workspace a message came from over the bridge;
	// empty for a message sent here. An agent sends only from the
	// workspace it lives in (remote: in parley.yaml).
	Workspace string
}

// Verdict is what Check decided about a message: the agents it goes to,
// each with the rules that send it there, and warnings; or the refusal.
type Verdict struct {
	File   string `json:"file,omitempty"`
	From   string `json:"from"`
	ID     string `json:"id,omitempty"` // empty when the message has none yet
	Type   string `json:"type,omitempty"`
	Signal string `json:"signal,omitempty"`
	// Skill is the skill that defines its type, and the version of its
	// file (skills.Skill.Ref): what it was checked against.
	Skill string `json:"skill,omitempty"`
	// Recipients are the agents it goes to, in delivery order.
	Recipients []Recipient `json:"recipients,omitempty"`
	// Broadcast is set for a message to everyone but its sender.
	Broadcast bool `json:"broadcast,omitempty"`
	// Hops, for a message a program sends, is the hops: the router
	// writes into the copy of each program it goes to: how many messages
	// in a row the two have sent each other, this one included (see
	// Loops).
	Hops map[string]int `json:"hops,omitempty"`
	// Warnings are what the protocol and the workspace have to say about
	// a message they let through: a deprecated type, an informal tag...
	Warnings []string `json:"warnings,omitempty"`
	// Refusal, when set, is why the message is refused; it then goes
	// nowhere.
	Refusal *Refusal `json:"refusal,omitempty"`
	// Message is the message as the router delivers it: from: filled in
	// when it was left out, and to: when it named no recipient (the
	// agents it goes to, or "*"). Nil when the message is refused.
	Message *mailbox.Message `json:"-"`
}

// Accepted reports whether the message may be delivered.
func (v *Verdict) Accepted() bool { return v.Refusal == nil }

// Agents returns the names of the recipients, in delivery order.
func (v *Verdict) Agents() []string {
	out := make([]string, len(v.Recipients))
	for i, r := range v.Recipients {
		out[i] = r.Agent
	}
	return out
}

// Recipient is an agent a message goes to, and why.
type Recipient struct {
	Agent string `json:"agent"`
	Rules []Rule `json:"rules"`
}

// Kinds of rules that send a message to an agent.
const (
	RuleNamed      = "named"      // the message names it in to: or cc:
	RuleProtocol   = "protocol"   // the protocol sends the type to its role
	RuleVisibility = "visibility" // the protocol lets its role see every message of the type
	RuleRoute      = "route"      // a route in parley.yaml
)

// Rule is one reason a message goes to an agent.
type Rule struct {
	Kind string `json:"kind"`
	// Source is where the rule is written: "to", "cc", a skill file,
	// "routes[2]"; Line its line there (in the message for to and cc).
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	// Text says it as a person reads it.
	Text string `json:"text"`
}

// Refusal says why a message is refused: the file, the line and field
// concerned (when known), and a reason a person can act on.
type Refusal struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
	// Meant is, for a key refused as a misspelling of a field parley
	// reserves (tpye: for type:, see skills.Set.MisspeltKey), that
	// field, for a caller that says how to give it.
	Meant string `json:"meant,omitempty"`
	// Quote is, for a message refused for carrying a secret, what it
	// holds of the secret (see checkSecrets): for the sender, who wrote
	// it, alone (Quoted). Reason and Error never hold it, and it is
	// never encoded: a refusal is shown to people who may not know the
	// secret (a notice at a player's seat, parley status, the journal).
	Quote string `json:"-"`
	// Hint is the end of Reason ("; " and it) that says how to do on
	// purpose what the message was refused for: to tell a secret, take
	// it out of its secret part first. Quoted puts the Quote before it.
	Hint string `json:"-"`
	// Loop is set when the message is refused to stop a loop between two
	// programs; the refusal is then ErrLoop (errors.Is).
	Loop *Loop `json:"loop,omitempty"`
	// More are the other problems Check found in the message, after
	// this one, in line order: a problem of no line, of the file as a
	// whole (a field missing), last, but a loop stopped, or a problem
	// Check left out other checks for (no to:), first; at most
	// MaxProblems in all, with Left the number left out.
	More []*Refusal `json:"more,omitempty"`
	Left int        `json:"left,omitempty"`
	// Rename is set when the file's name is part of the problem: a name
	// that is a message id, taken for the message's id (of another
	// sender, or sent already). Sent under another name, it goes.
	Rename bool `json:"rename,omitempty"`
	// Anew is set when only a new id mends the message: an id it sent
	// already, an id of another sender, a from: of another agent. Put
	// back as it is, it is refused again; `parley retry --as` sends it
	// as its agent's, under an id of its own.
	Anew bool `json:"anew,omitempty"`
}

// MaxProblems is how many problems of one message a refusal lists; it
// says how many more there are.
const MaxProblems = 20

// Error formats the refusal as "file:line: field: reason", leaving out
// what is not known, as every error about a message file reads; each
// further problem (More) on a line of its own, and, when some were left
// out, a last line saying how many.
func (f *Refusal) Error() string { return f.format(false) }

// Quoted formats the refusal as Error does, with, after a problem that
// carries a secret, what the message holds of it (Quote): for the
// sender alone, who wrote those words, to mend its message (a model's
// repair prompt), never for a notice or a file others read.
func (f *Refusal) Quoted() string { return f.format(true) }

// format formats the refusal for Error, and, quoting, for Quoted.
func (f *Refusal) format(quoting bool) string {
	var b strings.Builder
	for i, p := range f.Problems() {
		if i > 0 {
			b.WriteString("\n")
		}
		if !quoting || p.Quote == "" {
			b.WriteString(p.first())
			continue
		}
		// The Quote goes after the reason, before its Hint.
		q, hint := *p, ""
		if p.Hint != "" && strings.HasSuffix(p.Reason, "; "+p.Hint) {
			hint = "; " + p.Hint
			q.Reason = strings.TrimSuffix(p.Reason, hint)
		}
		fmt.Fprintf(&b, "%s: %q%s", q.first(), p.Quote, hint)
	}
	if f.Left > 0 {
		fmt.Fprintf(&b, "\n%s", (&mailbox.ParseError{Path: f.File, Err: fmt.Errorf("and %d more %s", f.Left, plural(f.Left, "problem", "problems"))}).Error())
	}
	return b.String()
}

// first formats the refusal's own problem, without More.
func (f *Refusal) first() string {
	return (&mailbox.ParseError{Path: f.File, Line: f.Line, Field: f.Field, Err: errors.New(f.Reason)}).Error()
}

// Problems returns the refusal's problems one by one: itself (without
// More) and then each of More.
func (f *Refusal) Problems() []*Refusal {
	one := *f
	one.More, one.Left = nil, 0
	return append([]*Refusal{&one}, f.More...)
}

// Stopped returns the loop the refusal stops, when one of its problems
// is that (ErrLoop); nil otherwise.
func (f *Refusal) Stopped() *Loop {
	for _, p := range f.Problems() {
		if p.Loop != nil {
			return p.Loop
		}
	}
	return nil
}

// Unwrap returns ErrLoop for a refusal that stops a loop, and each
// further problem (More), so that errors.Is and errors.As find a kind of
// problem wherever it is listed.
func (f *Refusal) Unwrap() []error {
	var errs []error
	if f.Loop != nil {
		errs = append(errs, ErrLoop)
	}
	for _, o := range f.More {
		errs = append(errs, o)
	}
	return errs
}

// refusalOf joins the problems Check found into one refusal of file: in
// line order (see problemOrder; skippedFor is the problem, if any, for
// which other checks were left out), a problem found twice, or a key
// taken for a misspelt field, said once, at most MaxProblems of them.
// Nil when there are none.
func refusalOf(file string, problems []*Refusal, skippedFor *Refusal) *Refusal {
	var list []*Refusal
	var first *Refusal // skippedFor as listed
	seen := map[[2]string]bool{}
	said := map[[3]string]bool{}
	for _, p := range problems {
		if p == nil {
			continue
		}
		key := [2]string{strconv.Itoa(p.Line), p.Field}
		if seen[key] {
			continue // ot:, told once as a misspelt to:, not again as why it goes nowhere
		}
		if p.Meant != "" {
			seen[key] = true
		}
		if said[[3]string{key[0], key[1], p.Reason}] {
			continue // a sender the protocol refuses: where it goes and the protocol both say so
		}
		said[[3]string{key[0], key[1], p.Reason}] = true
		p.File = file
		if p == skippedFor {
			first = p.Problems()[0]
			list = append(list, first)
			list = append(list, p.More...)
			continue
		}
		list = append(list, p.Problems()...)
	}
	if len(list) == 0 {
		return nil
	}
	slices.SortStableFunc(list, func(a, b *Refusal) int {
		return cmp.Compare(problemOrder(a, a == first), problemOrder(b, b == first))
	})
	left := 0
	if len(list) > MaxProblems {
		list, left = list[:MaxProblems], len(list)-MaxProblems
	}
	f := list[0]
	f.More, f.Left = list[1:], left
	if len(f.More) == 0 {
		f.More = nil
	}
	return f
}

// problemOrder places a problem among those of its file: by its line, as
// a person reads the file from the top and mends it, and a problem of no
// line (a field missing) after them, as it is mended at the end of the
// header. Two come first: a loop stopped, which is what became of the
// message (the journal's loop entry) and no mistake in the file, and a
// problem for which the checks that needed what it refuses (where the
// message goes) were left out (skipped): it says why no more was found,
// and a sender who may not send the message at all.
func problemOrder(p *Refusal, skipped bool) int {
	switch {
	case p.Loop != nil:
		return -1
	case p.Line > 0:
		return p.Line
	case skipped, p.Field == "from":
		// The sender itself refused (implied by its mailbox: no line)
		// is why the rest is wrong too: a reporter sending a fact
		// report may not give its signal either.
		return 0
	}
	return math.MaxInt
}

// RefusalOf turns the error of reading or parsing a message file into a
// refusal of that file.
func RefusalOf(file string, err error) *Refusal {
	var pe *mailbox.ParseError
	if errors.As(err, &pe) {
		return &Refusal{File: file, Line: pe.Line, Field: pe.Field, Reason: pe.Err.Error()}
	}
	var fe *fs.PathError
	if errors.As(err, &fe) && fe.Path == file {
		// "x.md: no such file or directory", not "x.md: open x.md: ...".
		return &Refusal{File: file, Reason: fe.Err.Error()}
	}
	return &Refusal{File: file, Reason: err.Error()}
}

// Check checks a message from in.Sender and works out where it goes: the
// sender's own fields (from, id, a protocol's from naming a character),
// its recipients (what it names, what its protocol says, routes), whether
// it goes round a loop, then the protocol. Every problem found is listed
// in the refusal (Refusal.More), in line order, at most MaxProblems: a
// check that needs what an earlier one refused (where the message goes,
// who sends it) is left out. An error is returned only when the
// workspace's skills cannot be read.
func (w *Workspace) Check(in Input) (*Verdict, error) {
	protocol, err := w.Protocol()
	if err != nil {
		return nil, err
	}
	m := in.Message.Clone()
	v := &Verdict{File: in.File, From: in.Sender}
	v.ID, _ = m.Header().Get("id")
	v.Type, _ = m.Header().Get("type")
	v.Signal, _ = m.Header().Get("signal")
	if _, sk := typeOf(protocol, m); sk != nil {
		v.Skill = sk.Ref()
	}
	refuse := func(f *Refusal) (*Verdict, error) {
		v.Refusal, v.Recipients, v.Broadcast, v.Hops = f, nil, false, nil
		return v, nil
	}
	if in.Sender == Runner && in.Workspace != "" {
		// The runner of another workspace: it sends only its notice of
		// a give-up (see checkRemoteNotice), which no protocol defines.
		r, f := w.checkRemoteNotice(in, m)
		if f == nil {
			f = w.checkSize(in.Sender, m)
		}
		if f != nil {
			return refuse(refusalOf(in.File, []*Refusal{f}, nil))
		}
		v.Recipients = []Recipient{r}
		v.Message = m
		return v, nil
	}
	if f := w.checkOrigin(in); f != nil {
		// Of a sender that is not one, nothing else can be judged.
		return refuse(refusalOf(in.File, []*Refusal{f}, nil))
	}
	// Every problem found is noted, and the checks go on as far as what
	// they need holds: a person mends them all at once.
	var problems []*Refusal
	var skippedFor *Refusal // the problem other checks were left out for
	note := func(f *Refusal) {
		if f != nil { // a message that passes, the most of them, allocates nothing for it
			problems = append(problems, f)
		}
	}
	fs := checkFields(m.Header(), "from")
	problems = append(problems, fs...)
	if !slices.ContainsFunc(fs, func(f *Refusal) bool { return f.Field == "from" || f.Field == "id" }) {
		// Who sends it, and its id, cannot be judged from a from: or
		// an id: that is no single value.
		note(w.checkSender(in, m))
	}
	for _, mv := range protocol.MisspeltKeys(m, func(name string) bool { _, ok := w.Agent(name); return ok }) {
		// Said before where it goes: ot: for to: would send it
		// elsewhere, tpye: for type: as an informal message.
		note(&Refusal{Line: mv.Line, Field: mv.Field, Reason: mv.Reason, Meant: mv.Meant})
	}
	v.ID, _ = m.Header().Get("id") // the file's name, when it does not carry one
	f, warning := w.checkSpeaker(in.Sender, m)
	note(f)
	if warning != "" {
		v.Warnings = append(v.Warnings, warning)
	}
	note(w.checkCharacter(protocol, in.Sender, m))
	a, f := w.address(protocol, in.Sender, m)
	if f != nil {
		// Where it goes is not known: what depends on it (secrets,
		// loops, the protocol's recipients) is not checked; the
		// protocol's fields are.
		note(f)
		skippedFor = f
		a = &addressing{}
	} else {
		v.Recipients, v.Broadcast = a.list, a.broadcast
		f, err = w.checkSecrets(m, v.Agents())
		if err != nil {
			return nil, fmt.Errorf("reading the campaign's secrets: %w", err)
		}
		note(f)
		v.Hops, f = w.checkLoop(in, m, v.Agents())
		note(f)
		if !a.named {
			// Where it goes is written into the copy each recipient
			// gets, and is the protocol's to: when it has one.
			if a.broadcast {
				m.Set("to", "*")
			} else {
				m.SetNames("to", v.Agents())
			}
		}
	}
	note(w.checkSize(in.Sender, m))
	fs, warnings := w.checkProtocol(protocol, in.Sender, m, a)
	problems = append(problems, slices.DeleteFunc(fs, func(f *Refusal) bool {
		// A type or signal refused as too long is not quoted again.
		return (f.Field == "type" || f.Field == "signal") && tooLong(m.Header(), f.Field)
	})...)
	if f := refusalOf(in.File, problems, skippedFor); f != nil {
		return refuse(f)
	}
	v.Warnings = append(v.Warnings, warnings...)
	v.Message = m
	return v, nil
}

// singleValued are the header fields that hold one value, never a list or
// a mapping.
var singleValued = []string{"id", "type", "signal", "thread", "reply_to", "request_id", "created"}

// checkFields checks what the header of a message must be whoever sends
// it: the fields that hold one value (singleValued, and more) do, a type
// and a signal are at most MaxWordLen bytes, and created:, unless left
// empty, is a time. It returns a problem for each
// field that is not (none: nil).
func checkFields(h mailbox.Fields, more ...string) []*Refusal {
	var fs []*Refusal
	for _, key := range append(more, singleValued...) {
		if _, ok := h.Get(key); h.Has(key) && !ok {
			fs = append(fs, &Refusal{Line: h.Line(key), Field: key, Reason: "must be a single value, not a list or a set of fields"})
		}
	}
	for _, key := range []string{"type", "signal"} {
		if tooLong(h, key) {
			v, _ := h.Get(key)
			fs = append(fs, &Refusal{Line: h.Line(key), Field: key, Reason: fmt.Sprintf("%d bytes long: a %s is a word of at most %d bytes", len(v), key, MaxWordLen)})
		}
	}
	if created, _ := h.Get("created"); created != "" {
		if _, err := time.Parse(time.RFC3339Nano, created); err != nil {
			fs = append(fs, &Refusal{Line: h.Line("created"), Field: "created", Reason: fmt.Sprintf("%q is not a time (like 2026-11-21T10:15:00.123456Z): leave it out and parley writes when it was sent", created)})
		}
	}
	return fs
}

// tooLong reports whether the header's key (type, signal) is longer than
// MaxWordLen. A type or a signal is a word: one of a megabyte, under the
// size limit, would be written into every journal line and every page
// about the message.
func tooLong(h mailbox.Fields, key string) bool {
	v, _ := h.Get(key)
	return len(v) > MaxWordLen
}

// checkOrigin checks that the sender is an agent of the workspace that
// sends from where the message came: this workspace, or the one its
// remote: names.
func (w *Workspace) checkOrigin(in Input) *Refusal {
	a, ok := w.Agent(in.Sender)
	if !ok {
		return &Refusal{Field: "from", Reason: (&UnknownAgentError{Name: in.Sender, Agents: w.AgentNames()}).Error()}
	}
	switch {
	case a.Remote == in.Workspace:
	case a.Remote == "":
		return &Refusal{Field: "from", Reason: fmt.Sprintf("%s lives in this workspace, but the message came over the bridge from workspace %q: a workspace sends only as its own agents", in.Sender, in.Workspace)}
	case in.Workspace == "":
		return &Refusal{Field: "from", Reason: fmt.Sprintf("%s lives in workspace %q (remote: in %s): it sends from there, not from this workspace", in.Sender, a.Remote, ConfigFile)}
	default:
		return &Refusal{Field: "from", Reason: fmt.Sprintf("%s lives in workspace %q, but the message came over the bridge from workspace %q: a workspace sends only as its own agents", in.Sender, a.Remote, in.Workspace)}
	}
	return nil
}

// checkSender checks the header fields that say who sends the message:
// from: is the sender (filled in when left out), and an id is a parley
// id of that sender that it has not sent before.
func (w *Workspace) checkSender(in Input, m *mailbox.Message) *Refusal {
	h := m.Header()
	switch from, _ := h.Get("from"); {
	case from == "":
		m.Set("from", in.Sender) // left out, or left empty
	case from != in.Sender:
		return &Refusal{Line: h.Line("from"), Field: "from", Anew: true, Reason: fmt.Sprintf("%q, but the file is in the outbox of %q: an agent sends only from its own outbox", from, in.Sender)}
	}
	if created, ok := h.Get("created"); ok && created == "" {
		m.Delete("created") // left empty: parley writes when it was sent, as when left out
	}
	id, ok := h.Get("id")
	named := false // the id is the file's name
	name := in.Name
	if name == "" {
		name = filepath.Base(in.File)
	}
	nameID, nameIsID := mailbox.IDFromName(name)
	if !ok {
		// A file named by an id is the message of that id, though it
		// does not carry it: a message written by hand is kept in sent/
		// as written, and copying it back into the outbox (or sending it
		// with --file) is a second sending of its id, not a new message.
		if !nameIsID {
			return nil
		}
		id, named = nameID, true
		m.Set("id", id)
	}
	what := strconv.Quote(id)
	if named {
		what = "the file's name, id " + id + ","
	}
	sentAt, sender, err := mailbox.ParseID(id)
	if err != nil {
		return &Refusal{Line: h.Line("id"), Field: "id", Reason: err.Error()}
	}
	if sender != in.Sender {
		mend := "leave id: out"
		switch {
		case named:
			mend = "name the file otherwise (a name that is no id)"
		case nameIsID:
			// Its id: line left out, the name would be taken for
			// the id.
			mend = "leave id: out and name the file otherwise (a name that is no id)"
		}
		return &Refusal{Line: h.Line("id"), Field: "id", Rename: nameIsID, Anew: true, Reason: fmt.Sprintf("%s names %q as its sender, but the file is in the outbox of %q: to send it as %q, %s and parley gives it an id of its own", what, sender, in.Sender, in.Sender, mend)}
	}
	// An id that came over the bridge was dated by another machine's
	// clock, and checked there.
	if now := time.Now(); in.Workspace == "" && sentAt.After(now.Add(MaxIDAhead)) {
		return &Refusal{Line: h.Line("id"), Field: "id", Reason: fmt.Sprintf("%s is dated %s, after this machine's clock (%s): it would be listed before messages sent after it; leave id: out and parley gives one", what, sentAt.Format(time.RFC3339), now.UTC().Format(time.RFC3339))}
	}
	sent := in.Sent
	if sent == nil {
		sent = w.Mailbox(in.Sender).IsSent
	}
	if sent(id) {
		f := &Refusal{Line: h.Line("id"), Field: "id", Anew: true, Reason: fmt.Sprintf("duplicate: %s already sent a message with id %s (in %s)", in.Sender, id, MailboxesDir+"/"+in.Sender+"/"+mailbox.Sent+"/")}
		if named {
			f.Reason += ": the file is named by that id; to send it again, name it anew"
			f.Rename = true
		}
		return f
	}
	return nil
}

// checkRemoteNotice checks a message that came over the bridge from the
// runner of another workspace (in.Sender is Runner, in.Workspace names
// it). That runner sends three things: its notice that it gave up a
// message an agent of this workspace sent to one of its own (see the
// runner's GiveUps), so that the sender, which cannot see the other
// workspace's dead/, is told; its notice that one of its program agents
// handled such a message and answered nothing (the runner's Unanswered);
// and the notice `parley retry` there sends when it hands a message given
// up back to its agent (the runner's TellRetried). It is accepted only
// as one of those: from a workspace a remote: names, from: parley
// (written: the bridge delivers the bytes it carried), of type
// GivenUpNotice, UnansweredNotice or RetriedNotice and no signal, its
// header well formed (checkFields), with an id of parley's, to exactly
// one agent that lives here, about a message of that agent's (given_up:,
// unanswered: or retried:, an id whose sender is the recipient), given
// up, left unanswered or handed again to an agent that lives in the
// workspace it came from
// (agent:), which workspace: names; and that message went to that agent
// from here: its copy is in the agent's mailbox here, which the bridge
// forwards. It goes to that one agent; it is parley's own notice, so no
// protocol is checked.
func (w *Workspace) checkRemoteNotice(in Input, m *mailbox.Message) (Recipient, *Refusal) {
	h := m.Header()
	get := func(key string) string {
		v, _ := h.Get(key)
		return strings.TrimSpace(v)
	}
	if !slices.Contains(w.Config.Remotes(), in.Workspace) {
		return Recipient{}, &Refusal{Field: "from", Reason: fmt.Sprintf("the runner of workspace %q, which no agent of %s lives in (remote: names %s)", in.Workspace, ConfigFile, orNoneOf(w.Config.Remotes()))}
	}
	came := fmt.Sprintf("the message came from the runner of workspace %q, which sends only its notices of a message given up (type %s), left unanswered (type %s) or retried (type %s)", in.Workspace, GivenUpNotice, UnansweredNotice, RetriedNotice)
	typ := get("type")
	// The field naming the message, what became of it, and what the
	// agent did: the words of the refusals.
	about, became, did, didIt := "given_up", "given up", "gave up", "gave it up"
	switch typ {
	case UnansweredNotice:
		about, became, did, didIt = "unanswered", "left unanswered", "left unanswered", "left it unanswered"
	case RetriedNotice:
		about, became, did, didIt = "retried", "retried", "got back", "got it back"
	}
	if fs := checkFields(h, "from", about, "agent", "workspace"); len(fs) > 0 {
		return Recipient{}, fs[0]
	}
	// from: is written, not filled in: the bridge delivers the bytes it
	// carried, and the sender's handler (the orchestrator) takes a
	// notice only from parley.
	if from := get("from"); from != Runner {
		return Recipient{}, &Refusal{Line: h.Line("from"), Field: "from", Reason: fmt.Sprintf("%q, but %s, from: %s", from, came, Runner)}
	}
	if typ != GivenUpNotice && typ != UnansweredNotice && typ != RetriedNotice {
		return Recipient{}, &Refusal{Line: h.Line("type"), Field: "type", Reason: fmt.Sprintf("%q, but %s", typ, came)}
	}
	// A signal asks its recipient to act (an orchestrator escalates on
	// signal: escalate, whatever the type); a notice only tells.
	if h.Has("signal") {
		sig, _ := h.Get("signal")
		return Recipient{}, &Refusal{Line: h.Line("signal"), Field: "signal", Reason: fmt.Sprintf("%q, but %s, which carry no signal", sig, came)}
	}
	id := get("id")
	if _, sender, err := mailbox.ParseID(id); err != nil || sender != Runner {
		return Recipient{}, &Refusal{Line: h.Line("id"), Field: "id", Reason: fmt.Sprintf("%q is no id of %s, but %s", id, Runner, came)}
	}
	to, err := h.Names("to")
	if err != nil {
		return Recipient{}, RefusalOf("", err)
	}
	if len(to) != 1 || h.Has("cc") {
		return Recipient{}, &Refusal{Line: h.Line("to"), Field: "to", Reason: fmt.Sprintf("a notice of a message %s goes to exactly one agent, the message's sender, not to %s", became, orNoneOf(append(to, ccOf(m)...)))}
	}
	recipient := to[0]
	if a, ok := w.Agent(recipient); !ok {
		return Recipient{}, &Refusal{Line: h.Line("to"), Field: "to", Reason: (&UnknownAgentError{Name: recipient, Agents: w.AgentNames()}).Error()}
	} else if a.Remote != "" {
		return Recipient{}, &Refusal{Line: h.Line("to"), Field: "to", Reason: fmt.Sprintf("%s lives in workspace %q (remote: in %s), not in this one: a notice of a message %s goes to its sender, here", recipient, a.Remote, ConfigFile, became)}
	}
	givenUp := get(about)
	if _, sender, err := mailbox.ParseID(givenUp); err != nil || sender != recipient {
		return Recipient{}, &Refusal{Line: h.Line(about), Field: about, Reason: fmt.Sprintf("%q is no id of %s: a notice of a message %s goes to the message's sender", givenUp, recipient, became)}
	}
	agent := get("agent")
	if a, ok := w.Agent(agent); !ok || a.Remote != in.Workspace {
		return Recipient{}, &Refusal{Line: h.Line("agent"), Field: "agent", Reason: fmt.Sprintf("%q is no agent that lives in workspace %q (remote: %s in %s): its runner tells only of what its own agents %s", agent, in.Workspace, in.Workspace, ConfigFile, did)}
	}
	if ws := get("workspace"); ws != in.Workspace {
		return Recipient{}, &Refusal{Line: h.Line("workspace"), Field: "workspace", Reason: fmt.Sprintf("%q, but the notice came from workspace %q: it names the workspace the message was %s in", ws, in.Workspace, became)}
	}
	// The message went from here to agent: the router delivered its copy
	// into agent's mailbox here, which the bridge forwards (and then
	// files in done/). Without it the notice tells of a message that
	// never went to agent through this workspace: a retry decided on it
	// would send the message to an agent it was never meant for.
	if _, err := w.Received(givenUp, agent, mailbox.Inbox, mailbox.Cur, mailbox.Done); err != nil {
		reason := fmt.Sprintf("%s never went to %s from this workspace: the mailbox of %s here, whose copies the bridge forwards, holds none", givenUp, agent, agent)
		if where := w.where(givenUp); where != "" {
			reason += " (it is in " + where + ")"
		}
		return Recipient{}, &Refusal{Line: h.Line(about), Field: about, Reason: fmt.Sprintf("%s; a notice tells only of a message sent from here to the agent that %s", reason, didIt)}
	}
	return Recipient{Agent: recipient, Rules: []Rule{{Kind: RuleNamed, Source: "to", Line: h.Line("to"), Text: fmt.Sprintf("to: %s, the sender of %s, which %s %s in workspace %s", recipient, givenUp, agent, did, in.Workspace)}}}, nil
}

// ccOf are the names in a message's cc:, for a refusal that lists them.
func ccOf(m *mailbox.Message) []string {
	cc, _ := m.Header().Names("cc")
	return cc
}

func orNoneOf(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// MaxIDAhead is how far after this machine's clock an id may be dated:
// the clocks of the machines a workspace is written from may differ a
// little.
const MaxIDAhead = 5 * time.Minute

// checkCharacter refuses a protocol message whose character: names
// another character than the one its sender plays (an agent with
// character: in parley.yaml): a player speaks for its own character only.
// Informal messages (a tool call that reads another sheet) are not held to
// it.
func (w *Workspace) checkCharacter(protocol *skills.Set, sender string, m *mailbox.Message) *Refusal {
	a, ok := w.Agent(sender)
	if !ok || a.Character == "" {
		return nil
	}
	if t, _ := typeOf(protocol, m); t == nil {
		return nil
	}
	c, ok := m.Payload().Get("character")
	name := strings.ToLower(strings.Join(strings.Fields(c), "-"))
	if !ok || name == "" || name == a.Character {
		return nil
	}
	return &Refusal{Line: m.Payload().Line("character"), Field: "character", Reason: fmt.Sprintf("%q, but %s plays %s (%s): a player speaks for its own character", c, sender, a.Character, ConfigFile)}
}

// checkSize refuses a message whose copies would be over the size limit
// once parley has added what it adds (from, to, and the id and time it
// gives a message that came without them): a file under the limit in an
// outbox must not become one over it in sent/ and every inbox, nor, when
// its id is written into it before a crash, be refused on the next start.
func (w *Workspace) checkSize(sender string, m *mailbox.Message) *Refusal {
	// Measured with an id and a time of the length parley gives, in
	// lines ended as the copies' will be (CRLF in a CRLF message). Not by
	// writing them into a copy: this runs for every message routed.
	n := int64(len(m.Bytes()))
	eol := len(m.LineEnd())
	if !m.Header().Has("id") {
		n += int64(len("id: ") + mailbox.IDLen(sender) + eol)
	}
	if !m.Header().Has("created") {
		n += int64(len("created: ") + len(mailbox.TimeFormat) + eol)
	}
	if max := w.Config.Router.MaxMessageSize; n > max {
		return &Refusal{Reason: fmt.Sprintf("with the from, to, id and time parley adds it would be %s, over the %s limit (router.max_message_size in %s)", mailbox.SizeOver(n, max), mailbox.SizeString(max), ConfigFile)}
	}
	return nil
}

// checkSpeaker checks the from: a tag-first protocol writes among its
// fields ([PLAYER_TO_PLAYER], [NARRATOR_NOTE]): who speaks, the sender
// or the character it plays. Naming another agent, or another agent's
// character, is refused; a name the workspace does not know is let
// through with a warning, since nobody said who plays it.
func (w *Workspace) checkSpeaker(sender string, m *mailbox.Message) (*Refusal, string) {
	if m.Tag == "" {
		return nil, ""
	}
	p := m.Payload()
	speaker, ok := p.Get("from")
	if !ok || speaker == "" || speaker == sender {
		return nil, ""
	}
	if a, _ := w.Agent(sender); a.Character == speaker {
		return nil, ""
	}
	agent, known := w.Resolve(speaker)
	switch {
	case !known:
		return nil, fmt.Sprintf("from: %q is no agent and no character of this workspace, so parley cannot tell whether %s plays it (give %s character: %s in %s)", speaker, sender, sender, speaker, ConfigFile)
	case agent == speaker:
		return &Refusal{Line: p.Line("from"), Field: "from", Reason: fmt.Sprintf("%q, but the message comes from %s: an agent speaks only as itself or the character it plays", speaker, sender)}, ""
	}
	return &Refusal{Line: p.Line("from"), Field: "from", Reason: fmt.Sprintf("%q is the character %s plays, but the message comes from %s: an agent speaks only as itself or the character it plays", speaker, agent, sender)}, ""
}
