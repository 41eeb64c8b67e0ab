package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// tableWorkspace is a D&D table: a gm, a narrator, a team lead, two
// players with characters, routes of several kinds.
func tableWorkspace(t *testing.T) *Workspace {
	t.Helper()
	cfg, err := ParseConfig(ConfigFile, []byte(`skills: [dnd-team]
agents:
  - gm
  - narrator
  - {name: lead, role: team-lead}
  - {name: aria, role: player, character: tilda-brannock}
  - {name: bram, role: player, character: corwin-voss}
routes:
  - match: {type: SESSION_END}
    cc: [narrator]
  - match: {type: GM_TO_PLAYER}
    to: $character
`))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func parse(t *testing.T, text string) *mailbox.Message {
	t.Helper()
	m, err := mailbox.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recipient is a recipient and the kinds of the rules that send it there.
type recipient struct {
	Agent string
	Kinds []string
}

func recipientsOf(v *Verdict) []recipient {
	var out []recipient
	for _, r := range v.Recipients {
		var kinds []string
		for _, rule := range r.Rules {
			kinds = append(kinds, rule.Kind)
		}
		out = append(out, recipient{r.Agent, kinds})
	}
	return out
}

func TestCheckRecipients(t *testing.T) {
	ws := tableWorkspace(t)
	tests := []struct {
		name, sender, text string
		want               []recipient
	}{
		{"named", "gm", "---\nto: aria\ncc: narrator\n---\nHi.\n",
			[]recipient{{"aria", []string{RuleNamed}}, {"narrator", []string{RuleNamed}}}},
		{"a character reaches its player", "gm", "---\nto: corwin-voss\n---\nHi.\n",
			[]recipient{{"bram", []string{RuleNamed}}}},
		{"everyone but the sender", "gm", "---\nto: \"*\"\n---\nHi.\n",
			[]recipient{{"narrator", []string{RuleNamed}}, {"lead", []string{RuleNamed}}, {"aria", []string{RuleNamed}}, {"bram", []string{RuleNamed}}}},
		{"the protocol's broadcast", "gm", "[NARRATIVE]\n\nRain.\n",
			[]recipient{{"narrator", []string{RuleProtocol}}, {"lead", []string{RuleProtocol}}, {"aria", []string{RuleProtocol}}, {"bram", []string{RuleProtocol}}}},
		{"the protocol's one recipient", "narrator", "[NARRATOR_REQUEST]\nrequest: what happened?\n",
			[]recipient{{"gm", []string{RuleProtocol}}}},
		{"the protocol's visibility", "aria", "[PLAYER_TO_PLAYER]\nfrom: tilda-brannock\nto: corwin-voss\n\nPsst.\n",
			[]recipient{{"bram", []string{RuleNamed}}, {"gm", []string{RuleVisibility}}, {"narrator", []string{RuleVisibility}}}},
		{"a route beside the protocol", "gm", "[SESSION_END]\nsummary: done\nstate_saved: true\nnext_hook: later\n",
			[]recipient{{"lead", []string{RuleProtocol}}, {"narrator", []string{RuleRoute}}}},
		{"a $field route where the protocol cannot choose", "gm", "[GM_TO_PLAYER]\ncharacter: tilda-brannock\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n",
			[]recipient{{"aria", []string{RuleRoute}}}},
		{"named and routed", "gm", "[GM_TO_PLAYER]\nto: aria\ncharacter: tilda-brannock\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n",
			[]recipient{{"aria", []string{RuleNamed, RuleRoute}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parse(t, tt.text)
			before := string(m.Bytes())
			v, err := ws.Check(Input{File: "m.md", Sender: tt.sender, Message: m})
			if err != nil {
				t.Fatal(err)
			}
			if !v.Accepted() {
				t.Fatalf("Check refused it: %v", v.Refusal)
			}
			if d := cmp.Diff(tt.want, recipientsOf(v)); d != "" {
				t.Errorf("recipients (-want +got):\n%s", d)
			}
			if got := string(m.Bytes()); got != before {
				t.Errorf("Check changed the message it was given:\n%s\nwant\n%s", got, before)
			}
			if from, _ := v.Message.Header().Get("from"); from != tt.sender {
				t.Errorf("delivered from: = %q, want %q", from, tt.sender)
			}
		})
	}
}

// TestCheckStampsTo: a message that names no recipient says in its
// delivered copy where it went.
func TestCheckStampsTo(t *testing.T) {
	ws := tableWorkspace(t)
	for text, want := range map[string]string{
		"[NARRATIVE]\n\nRain.\n":                    "*",
		"[NARRATOR_REQUEST]\nrequest: what now?\n":  "gm",
		"[NARRATOR_REQUEST]\nto: gm\nrequest: hm\n": "gm",
	} {
		sender := "gm"
		if strings.Contains(text, "REQUEST") {
			sender = "narrator"
		}
		v, err := ws.Check(Input{Sender: sender, Message: parse(t, text)})
		if err != nil || !v.Accepted() {
			t.Fatalf("Check(%q) = %v, %v", text, v.Refusal, err)
		}
		if got := v.Message.Header().Text("to"); got != want {
			t.Errorf("Check(%q): delivered to: %q, want %q", text, got, want)
		}
	}
}

func TestCheckRefusals(t *testing.T) {
	ws := tableWorkspace(t)
	sent := "20261121-101500.000000Z-gm-00000a"
	if err := os.WriteFile(ws.Mailbox("gm").Path(mailbox.Sent, mailbox.FileName(sent)), []byte("---\nto: aria\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sender, text string
		want               Refusal
	}{
		{"not an agent", "zed", "---\nto: aria\n---\n", Refusal{File: "m.md", Field: "from", Reason: `unknown agent "zed" (agents: gm, narrator, lead, aria, bram)`}},
		{"a forged from", "aria", "---\nfrom: bram\nto: gm\n---\n", Refusal{File: "m.md", Line: 2, Field: "from", Anew: true, Reason: `"bram", but the file is in the outbox of "aria": an agent sends only from its own outbox`}},
		{"an id sent before", "gm", "---\nid: " + sent + "\nto: aria\n---\n", Refusal{File: "m.md", Line: 2, Field: "id", Anew: true, Reason: "duplicate: gm already sent a message with id " + sent + " (in mailboxes/gm/sent/)"}},
		{"nobody", "gm", "---\nnote: hi\n---\n", Refusal{File: "m.md", Field: "to", Reason: `missing: say who the message is for (to: <agent>, a list, or "*" for everyone)`}},
		{"another's character", "aria", "[PLAYER_TO_PLAYER]\nfrom: corwin-voss\nto: corwin-voss\n", Refusal{File: "m.md", Line: 2, Field: "from", Reason: `"corwin-voss" is the character bram plays, but the message comes from aria: an agent speaks only as itself or the character it plays`}},
		{"speaking for another character", "aria", "[PLAYER_TO_GM]\ntype: ACTION\ncharacter: corwin-voss\n\nI act.\n", Refusal{File: "m.md", Line: 3, Field: "character", Reason: `"corwin-voss", but aria plays tilda-brannock (parley.yaml): a player speaks for its own character`}},
		{"a character name that is none", "aria", "[PLAYER_TO_GM]\ntype: ACTION\ncharacter: tilda\n\nI act.\n", Refusal{File: "m.md", Line: 3, Field: "character", Reason: `"tilda", but aria plays tilda-brannock (parley.yaml): a player speaks for its own character`}},
		{"the protocol's type field, missing", "aria", "[PLAYER_TO_GM]\ncharacter: tilda-brannock\n", Refusal{File: "m.md", Field: "type", Reason: "missing: [PLAYER_TO_GM] needs one of ACTION, REACTION, VETO"}},
		{"a player narrating", "bram", "[NARRATIVE]\n\nA dragon.\n", Refusal{File: "m.md", Field: "from", Reason: "bram (role player) may not send [NARRATIVE]: it is sent by gm"}},
		// A type or a signal of a megabyte, under the size limit, went
		// into every journal line and page about the message.
		{"a type too long", "gm", "---\nto: aria\ntype: " + strings.Repeat("T", 201) + "\n---\n", Refusal{File: "m.md", Line: 3, Field: "type", Reason: "201 bytes long: a type is a word of at most 200 bytes"}},
		{"a signal too long", "gm", "---\nto: aria\nsignal: " + strings.Repeat("s", 900000) + "\n---\n", Refusal{File: "m.md", Line: 3, Field: "signal", Reason: "900000 bytes long: a signal is a word of at most 200 bytes"}},
		{"one of several", "gm", "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_number: \"001\"\nscene_slug: inn\n", Refusal{File: "m.md", Field: "to", Reason: "missing: [GM_TO_PLAYER] goes to one player or human, and there are several (aria, bram): name it with to:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ws.Check(Input{File: "m.md", Sender: tt.sender, Message: parse(t, tt.text)})
			if err != nil {
				t.Fatal(err)
			}
			if v.Accepted() {
				t.Fatalf("Check accepted it, to %v", v.Agents())
			}
			if d := cmp.Diff(&tt.want, v.Refusal); d != "" {
				t.Errorf("refusal (-want +got):\n%s", d)
			}
			if v.Message != nil || v.Recipients != nil {
				t.Errorf("a refused message has a message to deliver or recipients: %v", v.Agents())
			}
		})
	}
}

// TestCheckSizeCRLF checks that the size limit counts what parley adds
// to a CRLF message as it writes it: lines ending in CRLF, a byte longer
// each than in an LF message.
func TestCheckSizeCRLF(t *testing.T) {
	ws := tableWorkspace(t)
	text := "---\r\nfrom: gm\r\nto: aria\r\n---\r\n" + strings.Repeat("x", 500) + "\r\n"
	full := parse(t, text)
	full.Set("id", mailbox.IDAt("gm", time.Now()))
	full.Set("created", time.Now().UTC().Format(mailbox.TimeFormat))
	size := int64(len(full.Bytes()))
	for _, tt := range []struct {
		limit  int64
		refuse bool
	}{{size, false}, {size - 1, true}} {
		ws.Config.Router.MaxMessageSize = tt.limit
		v, err := ws.Check(Input{File: "m.md", Sender: "gm", Message: parse(t, text)})
		if err != nil {
			t.Fatal(err)
		}
		if refused := !v.Accepted(); refused != tt.refuse {
			t.Errorf("Check of a CRLF message of %d bytes as delivered, with a limit of %d: refused = %v, want %v (%v)", size, tt.limit, refused, tt.refuse, v.Refusal)
		}
	}
}

func TestCheckFile(t *testing.T) {
	ws := tableWorkspace(t)
	// In an outbox, the owner sends it; in sent/ it is itself, not a
	// duplicate; elsewhere, its from:.
	name := "20261121-101500.000000Z-aria-00000b"
	text := "---\nid: " + name + "\nto: gm\n---\nHi.\n"
	for _, path := range []string{
		ws.Mailbox("aria").Path(mailbox.Outbox, "hi.md"),
		ws.Mailbox("aria").Path(mailbox.Sent, mailbox.FileName(name)),
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := ws.CheckFile(ws.Mailbox("aria").Path(mailbox.Sent, mailbox.FileName(name)), FileCheck{})
	if err != nil || !v.Accepted() || v.From != "aria" {
		t.Errorf("CheckFile(sent copy) = %+v, %v, want accepted from aria", v, err)
	}
	v, err = ws.CheckFile(ws.Mailbox("aria").Path(mailbox.Outbox, "hi.md"), FileCheck{})
	if err != nil || v.Accepted() || v.Refusal.Field != "id" {
		t.Errorf("CheckFile(outbox file with a sent id) = %+v, %v, want a duplicate id", v, err)
	}
	// In rejected/, it is checked under the name it has back in the
	// outbox: the time of the refusal before a program's output name
	// ("output-1-answering-...") read as an id of another sender.
	if err := os.MkdirAll(ws.Mailbox("aria").Path(mailbox.Rejected, ""), 0o755); err != nil {
		t.Fatal(err)
	}
	rejected := ws.Mailbox("aria").Path(mailbox.Rejected, "20261128-124106.262889Z-output-1-answering-gm-56c078.md")
	if err := os.WriteFile(rejected, []byte("---\nto: gm\n---\nMended.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := ws.CheckFile(rejected, FileCheck{}); err != nil || !v.Accepted() {
		t.Errorf("CheckFile(a program's output in rejected/) = %+v, %v, want accepted", v, err)
	}
	loose := filepath.Join(t.TempDir(), "loose.md")
	if err := os.WriteFile(loose, []byte("---\nto: gm\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CheckFile(loose, FileCheck{}); err != ErrNoSender {
		t.Errorf("CheckFile(a file of nobody) = %v, want ErrNoSender", err)
	}
}

// lintOf returns the warnings Lint gives for a workspace of this
// parley.yaml.
func lintOf(t *testing.T, config string) []string {
	t.Helper()
	cfg, err := ParseConfig(ConfigFile, []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	got, err := ws.Lint()
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestLint(t *testing.T) {
	got := lintOf(t, `skills: [dnd-team]
agents:
  - gm
  - narrator
  - {name: aria, role: player}
routes:
  - match: {type: PLAYER_TO_PLAYER}
    to: [gm, narrator]
  - match: {type: NO_SUCH_TYPE}
    to: gm
  - match: {type: NARRATIVE, fields: {mood: grim}}
    to: gm
  - match: {from_role: bard}
    to: role:bard
  - match: {type: GM_TO_PLAYER}
    cc: [narrator]
`)
	want := []string{
		"parley.yaml:7: routes[0]: sends [PLAYER_TO_PLAYER] to gm (gm), which builtin:dnd-team.md:649 does not list among its recipients (player or human): delivered, as the route says",
		"parley.yaml:7: routes[0]: sends [PLAYER_TO_PLAYER] to narrator (narrator), which builtin:dnd-team.md:649 does not list among its recipients (player or human): delivered, as the route says",
		"parley.yaml:9: routes[1].match.type: no skill of this workspace defines NO_SUCH_TYPE",
		`parley.yaml:11: routes[2]: no type it matches (NARRATIVE) has a field "mood": the route applies only to messages that carry it anyway`,
		`parley.yaml:13: routes[3].match.from_role: no agent has the role "bard": the route matches nothing`,
		`parley.yaml:13: routes[3]: no agent has the role "bard": the route sends nothing to it`,
	}
	for i := range got {
		// The list of types is long: the start says enough.
		if before, _, ok := strings.Cut(got[i], " (types: "); ok {
			got[i] = before
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Lint (-want +got):\n%s", d)
	}
}

// TestLintUnheldRoles: a role the protocol names that no agent has is
// warned about only when a program or a built-in handler would send to
// it. The README's tour (gm, narrator and two players, all people, no
// team lead) warned at every run that nobody was team lead or human,
// though a person sending to them is refused at once, with the reason.
func TestLintUnheldRoles(t *testing.T) {
	for _, tt := range []struct {
		name, agents string
		want         []string
	}{
		{"a table of people", `
  - gm
  - narrator
  - {name: aria, role: player}
  - {name: bram, role: player}`, nil},
		{"a game master that is a program", `
  - {name: gm, driver: command, run: [sh, gm.sh]}
  - narrator
  - {name: aria, role: player}`, []string{"parley.yaml: skills: dnd-team names a role no agent has (team-lead): what it sends to it has nowhere to go unless named in to:"}},
		{"a team lead with no human to escalate to", `
  - gm
  - narrator
  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}
  - {name: aria, role: player}`, []string{"parley.yaml: skills: dnd-team names a role no agent has (human): what it sends to it has nowhere to go unless named in to:"}},
		{"a team lead and its human", `
  - gm
  - narrator
  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}
  - {name: you, role: human}`, nil},
		{"players that are programs, no narrator", `
  - gm
  - {name: lead, role: team-lead}
  - {name: aria, role: player, driver: command, run: [sh, aria.sh]}`, []string{"parley.yaml: skills: dnd-team names a role no agent has (narrator): what it sends to it has nowhere to go unless named in to:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := lintOf(t, "skills: [dnd-team]\nagents:"+tt.agents+"\n")
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Lint (-want +got):\n%s", d)
			}
		})
	}
}

// TestCheckCreated: created: is a time; left empty, it is left out, and
// the router writes when the message was sent (issue 11, item 16).
func TestCheckCreated(t *testing.T) {
	ws := tableWorkspace(t)
	for _, tt := range []struct {
		created string
		refused bool
		want    string // created: of the message delivered; "" for none
	}{
		{"2026-11-21T10:15:00.123456Z", false, "2026-11-21T10:15:00.123456Z"},
		{"2026-11-21T10:15:00+02:00", false, "2026-11-21T10:15:00+02:00"},
		{`""`, false, ""},
		{"", false, ""},
		{"yesterday", true, ""},
		{"2026-11-21", true, ""},
		{"[a, b]", true, ""},
	} {
		t.Run(tt.created, func(t *testing.T) {
			v, err := ws.Check(Input{File: "x.md", Sender: "gm", Message: parse(t, "---\nto: aria\ncreated: "+tt.created+"\n---\nHi.\n")})
			if err != nil {
				t.Fatal(err)
			}
			if tt.refused {
				if v.Accepted() || v.Refusal.Field != "created" || v.Refusal.Line != 3 {
					t.Errorf("Check(created: %s) = %+v, want refused on line 3, field created", tt.created, v.Refusal)
				}
				return
			}
			if !v.Accepted() {
				t.Fatalf("Check(created: %s) refused: %v", tt.created, v.Refusal)
			}
			got, ok := v.Message.Header().Get("created")
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Check(created: %s): created = %q, %v, want %q", tt.created, got, ok, tt.want)
			}
		})
	}
}

// TestLintRemoteSenders: what an agent of another workspace sends to a
// role is routed there, never here: a workspace of workers of a bridged
// pipeline, whose orchestrator lives elsewhere, is not warned at every
// start that nobody here is reviewer, architect, researcher or auditor.
func TestLintRemoteSenders(t *testing.T) {
	got := lintOf(t, `skills: [dev-pipeline]
bridge: {name: away, url: nats://127.0.0.1:4222}
agents:
  - {name: orch, role: orchestrator, remote: home}
  - {name: you, role: human, remote: home}
  - {name: worker-1, role: worker, driver: command, run: [sh, w.sh]}
`)
	if len(got) != 0 {
		t.Errorf("Lint = %q, want no warning", got)
	}
}
