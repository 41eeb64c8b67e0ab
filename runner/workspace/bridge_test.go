package workspace

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

func TestParseBridge(t *testing.T) {
	cfg, err := ParseConfig("parley.yaml", []byte(`bridge:
  name: tavern
  url: [nats://10.0.0.1:4222, tls://hub.example:4222]
  token_env: PARLEY_NATS_TOKEN
  max_deliver: 3
  listen: 0.0.0.0:4222
agents:
  - gm
  - name: aria
    remote: home
    role: player
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Bridge{Name: "tavern", URLs: []string{"nats://10.0.0.1:4222", "tls://hub.example:4222"}, Stream: DefaultStream,
		TokenEnv: "PARLEY_NATS_TOKEN", MaxDeliver: 3, Listen: "0.0.0.0:4222", Line: 2}
	if d := cmp.Diff(want, cfg.Bridge); d != "" {
		t.Errorf("Bridge (-want +got):\n%s", d)
	}
	if got := cfg.Remotes(); !cmp.Equal(got, []string{"home"}) {
		t.Errorf("Remotes() = %v, want [home]", got)
	}
	def, err := ParseConfig("parley.yaml", []byte("bridge: {name: inn}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := def.Bridge.URLs; !cmp.Equal(got, []string{DefaultBridgeURL}) {
		t.Errorf("default URLs = %v", got)
	}
}

func TestParseBridgeErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"inline token", "bridge: {name: inn, token: s3cret}\n", "parley.yaml:1: bridge.token: inline credentials are refused: parley.yaml is committed to git; name an environment variable (token_env: PARLEY_NATS_TOKEN)"},
		{"inline password", "bridge:\n  name: inn\n  password: s3cret\n", "parley.yaml:3: bridge.password: inline credentials are refused"},
		{"password in the url", "bridge: {name: inn, url: 'nats://me:s3cret@hub:4222'}\n", `parley.yaml:1: bridge.url: "nats://me:xxxxx@hub:4222": inline credentials are refused`},
		{"env not a name", "bridge: {name: inn, token_env: 'abc def'}\n", `parley.yaml:1: bridge.token_env: "abc def" is not the name of an environment variable`},
		{"no name", "bridge: {url: nats://h:4222}\n", "parley.yaml:1: bridge.name: missing"},
		{"bad url", "bridge: {name: inn, url: 'http://h:80'}\n", `parley.yaml:1: bridge.url: "http://h:80": scheme "http" is not nats, tls, ws or wss`},
		{"bad port", "bridge: {name: inn, url: 'nats://127.0.0.1:99999'}\n", `parley.yaml:1: bridge.url: "nats://127.0.0.1:99999": port 99999 is not a port (1 to 65535)`},
		{"bad listen", "bridge: {name: inn, listen: everywhere}\n", `parley.yaml:1: bridge.listen: "everywhere" is not HOST:PORT`},
		{"user without password", "bridge: {name: inn, user_env: U}\n", "parley.yaml:1: bridge.user_env: user_env and password_env go together"},
		{"remote without bridge", "agents:\n  - {name: aria, remote: home}\n", `parley.yaml:2: agents[0].remote: aria lives in workspace "home", but parley.yaml has no bridge: section`},
		{"remote is this one", "bridge: {name: inn}\nagents:\n  - {name: aria, remote: inn}\n", `parley.yaml:3: agents[0].remote: "inn" is this workspace's own name`},
		{"remote with a driver", "bridge: {name: inn}\nagents:\n  - {name: aria, remote: home, driver: command, run: [x]}\n", `parley.yaml:3: agents[0].driver: aria lives in workspace "home": its driver is set in that workspace's parley.yaml`},
		{"remote bad name", "bridge: {name: inn}\nagents:\n  - {name: aria, remote: Home Base}\n", `parley.yaml:3: agents[0].remote: "Home Base" is not a valid name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("parley.yaml", []byte(tt.text))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("ParseConfig error = %v, want it to start with %q", err, tt.want)
			}
		})
	}
}

// TestCheckRemoteSender: an agent that lives in another workspace sends
// only from there, and a workspace sends only as its own agents.
func TestCheckRemoteSender(t *testing.T) {
	root := t.TempDir()
	ws, err := InitConfig(root, "bridge: {name: inn}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: away}\n")
	if err != nil {
		t.Fatal(err)
	}
	msg := func(from string) *mailbox.Message {
		m, err := mailbox.Parse([]byte("---\nfrom: " + from + "\nto: gm\n---\nhello\n"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		sender, workspace, refusal string
	}{
		{"gm", "", ""},
		{"aria", "home", ""},
		{"aria", "", `aria lives in workspace "home" (remote: in parley.yaml): it sends from there`},
		{"aria", "away", `aria lives in workspace "home", but the message came over the bridge from workspace "away"`},
		{"gm", "home", `gm lives in this workspace, but the message came over the bridge from workspace "home"`},
	}
	for _, tt := range tests {
		v, err := ws.Check(Input{Sender: tt.sender, Workspace: tt.workspace, Message: msg(tt.sender), Sent: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if v.Refusal != nil {
			got = v.Refusal.Reason
		}
		if tt.refusal == "" && got != "" || !strings.HasPrefix(got, tt.refusal) {
			t.Errorf("Check(from %s via %q) refusal = %q, want %q", tt.sender, tt.workspace, got, tt.refusal)
		}
	}
}

// TestCheckRemoteNotice: the runner of another workspace sends only its
// notices that it gave up, or that a program of its left unanswered, a
// message an agent of this workspace sent to one of its own; those go to
// the sender alone, and anything else from it is refused, naming the
// field.
func TestCheckRemoteNotice(t *testing.T) {
	root := t.TempDir()
	ws, err := InitConfig(root, "bridge: {name: inn}\nagents:\n  - gm\n  - pat\n  - {name: aria, remote: home}\n  - {name: bram, remote: away}\n")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	notice := mailbox.IDOf(Runner, at, "aria", []byte("x"))
	gmID := mailbox.IDOf("gm", at, "", []byte("task"))
	patID := mailbox.IDOf("pat", at, "", []byte("task"))
	toPat := mailbox.IDOf("gm", at.Add(time.Second), "", []byte("local task"))
	toNobody := mailbox.IDOf("gm", at.Add(2*time.Second), "", []byte("never sent"))
	// gmID went to aria and to bram through this workspace: the bridge
	// forwarded their copies and filed them in done/. toPat went to pat,
	// who lives here.
	for _, c := range []struct{ agent, state, id string }{{"aria", mailbox.Done, gmID}, {"bram", mailbox.Done, gmID}, {"pat", mailbox.Inbox, toPat}} {
		p := ws.Mailbox(c.agent).Path(c.state, mailbox.FileName(c.id))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\nid: "+c.id+"\nfrom: gm\nto: "+c.agent+"\n---\ntask\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := map[string]string{"id": notice, "from": Runner, "to": "gm", "type": GivenUpNotice, "given_up": gmID, "agent": "aria", "workspace": "home"}
	msg := func(change map[string]string) *mailbox.Message {
		f := maps.Clone(good)
		maps.Copy(f, change)
		var b strings.Builder
		b.WriteString("---\n")
		for _, k := range []string{"id", "from", "to", "cc", "type", "signal", "thread", "created", "given_up", "unanswered", "retried", "agent", "workspace"} {
			if v, ok := f[k]; ok && v != "-" {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		b.WriteString("---\nparley gave up the task_assignment you sent to aria\n")
		m, err := mailbox.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name      string
		workspace string
		change    map[string]string
		field     string
		refusal   string
	}{
		{"accepted", "home", nil, "", ""},
		{"from a workspace no remote: names", "elsewhere", nil, "from", `the runner of workspace "elsewhere", which no agent of parley.yaml lives in`},
		{"another type", "home", map[string]string{"type": "task_assignment"}, "type", `"task_assignment", but the message came from the runner of workspace "home", which sends only its notice`},
		{"no type", "home", map[string]string{"type": "-"}, "type", `"", but the message came from the runner`},
		{"another from", "home", map[string]string{"from": "aria"}, "from", `"aria", but the message came from the runner`},
		{"an id of another", "home", map[string]string{"id": mailbox.IDOf("aria", at, "", nil)}, "id", `is no id of parley`},
		{"no id", "home", map[string]string{"id": "-"}, "id", `"" is no id of parley`},
		{"two recipients", "home", map[string]string{"to": "[gm, pat]"}, "to", `a notice of a message given up goes to exactly one agent, the message's sender, not to gm, pat`},
		{"a cc", "home", map[string]string{"cc": "pat"}, "to", `goes to exactly one agent`},
		{"to everyone", "home", map[string]string{"to": `"*"`}, "to", `unknown agent`},
		{"to a remote agent", "home", map[string]string{"to": "bram", "given_up": mailbox.IDOf("bram", at, "", nil)}, "to", `bram lives in workspace "away"`},
		{"given_up of another agent", "home", map[string]string{"given_up": patID}, "given_up", `is no id of gm: a notice of a message given up goes to the message's sender`},
		{"given_up no id", "home", map[string]string{"given_up": "-"}, "given_up", `"" is no id of gm`},
		{"agent of this workspace", "home", map[string]string{"agent": "pat"}, "agent", `"pat" is no agent that lives in workspace "home"`},
		{"agent of another remote workspace", "home", map[string]string{"agent": "bram"}, "agent", `"bram" is no agent that lives in workspace "home"`},
		{"workspace names another", "home", map[string]string{"workspace": "away"}, "workspace", `"away", but the notice came from workspace "home"`},
		{"no workspace", "home", map[string]string{"workspace": "-"}, "workspace", `"", but the notice came from workspace "home"`},
		{"agent from away is bram", "away", map[string]string{"agent": "bram", "workspace": "away"}, "", ""},
		// A forged notice: given_up is gm's, but went to pat, here; a
		// retry decided on it would send pat's task to aria.
		{"given_up sent to a local agent", "home", map[string]string{"given_up": toPat}, "given_up", toPat + ` never went to aria from this workspace: the mailbox of aria here, whose copies the bridge forwards, holds none (it is in mailboxes/pat/inbox/`},
		// The bridge delivers the bytes it carried: from: is not
		// filled in, and the orchestrator takes a notice only from
		// parley.
		{"no from", "home", map[string]string{"from": "-"}, "from", `"", but the message came from the runner of workspace "home", which sends only its notices of a message given up (type message_given_up), left unanswered (type message_unanswered) or retried (type message_retried), from: parley`},
		{"a signal", "home", map[string]string{"signal": "escalate"}, "signal", `"escalate", but the message came from the runner of workspace "home", which sends only its notices of a message given up (type message_given_up), left unanswered (type message_unanswered) or retried (type message_retried), which carry no signal`},
		{"a thread that is a list", "home", map[string]string{"thread": "[a, b]"}, "thread", `must be a single value`},
		{"a created that is a list", "home", map[string]string{"created": "[a, b]"}, "created", `must be a single value`},
		{"a created that is no time", "home", map[string]string{"created": "yesterday"}, "created", `"yesterday" is not a time`},
		{"a created", "home", map[string]string{"created": "2026-11-27T10:00:00.5Z", "thread": gmID}, "", ""},
		{"given_up never sent", "home", map[string]string{"given_up": toNobody}, "given_up", toNobody + ` never went to aria from this workspace`},
		// Its notice that a program of its left a message unanswered,
		// checked the same way, unanswered: naming the message.
		{"unanswered", "home", map[string]string{"type": UnansweredNotice, "given_up": "-", "unanswered": gmID}, "", ""},
		{"unanswered with given_up only", "home", map[string]string{"type": UnansweredNotice}, "unanswered", `"" is no id of gm: a notice of a message left unanswered goes to the message's sender`},
		{"unanswered of another agent", "home", map[string]string{"type": UnansweredNotice, "given_up": "-", "unanswered": patID}, "unanswered", `is no id of gm: a notice of a message left unanswered`},
		{"unanswered to two", "home", map[string]string{"type": UnansweredNotice, "given_up": "-", "unanswered": gmID, "to": "[gm, pat]"}, "to", `a notice of a message left unanswered goes to exactly one agent`},
		{"retried", "home", map[string]string{"type": RetriedNotice, "given_up": "-", "retried": gmID}, "", ""},
		{"retried of another agent", "home", map[string]string{"type": RetriedNotice, "given_up": "-", "retried": patID}, "retried", `is no id of gm: a notice of a message retried goes to the message's sender`},
		{"unanswered never sent", "home", map[string]string{"type": UnansweredNotice, "given_up": "-", "unanswered": toNobody}, "unanswered", toNobody + ` never went to aria from this workspace: the mailbox of aria here, whose copies the bridge forwards, holds none; a notice tells only of a message sent from here to the agent that left it unanswered`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ws.Check(Input{Sender: Runner, Workspace: tt.workspace, Message: msg(tt.change), Sent: func(string) bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			if tt.refusal == "" {
				if !v.Accepted() {
					t.Fatalf("refused: %v", v.Refusal)
				}
				if got := v.Agents(); !slices.Equal(got, []string{"gm"}) {
					t.Errorf("recipients = %v, want [gm]", got)
				}
				if to, _ := v.Message.Header().Get("to"); to != "gm" {
					t.Errorf("to: %q in the copy delivered, want gm", to)
				}
				return
			}
			if v.Accepted() {
				t.Fatalf("accepted, to %v; want refused: %s", v.Agents(), tt.refusal)
			}
			if v.Refusal.Field != tt.field || !strings.Contains(v.Refusal.Reason, tt.refusal) {
				t.Errorf("refusal = %s: %q, want %s: %q", v.Refusal.Field, v.Refusal.Reason, tt.field, tt.refusal)
			}
		})
	}
	// The runner of this workspace sends through no Check: one that
	// claims to be it, from here, is refused as before.
	v, err := ws.Check(Input{Sender: Runner, Message: msg(nil), Sent: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if v.Accepted() {
		t.Errorf("a notice from this workspace's own runner, through Check, accepted to %v", v.Agents())
	}
}

// TestOutgoing: what waits here for other workspaces is what waits in
// the inboxes of their agents, agent by agent in parley.yaml's order;
// a local agent's inbox is not counted.
func TestOutgoing(t *testing.T) {
	ws, err := InitConfig(t.TempDir(), "bridge: {name: inn}\nagents:\n  - gm\n  - {name: aria, remote: home}\n  - {name: bram, remote: away}\n  - {name: cleo, remote: home}\n")
	if err != nil {
		t.Fatal(err)
	}
	put := func(agent, id string) {
		t.Helper()
		if err := os.WriteFile(ws.Mailbox(agent).Path(mailbox.Inbox, mailbox.FileName(id)), []byte("---\nfrom: gm\n---\nhi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("gm", "20261128-045200.000001Z-gm-aaaaaa")
	put("aria", "20261128-045200.000003Z-gm-cccccc")
	put("aria", "20261128-045200.000002Z-gm-bbbbbb")
	put("cleo", "20261128-045200.000004Z-gm-dddddd")
	out, err := ws.Outgoing()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, o.Agent.Name+"@"+o.Agent.Remote+": "+strings.Join(o.IDs, " "))
	}
	want := []string{
		"aria@home: 20261128-045200.000002Z-gm-bbbbbb 20261128-045200.000003Z-gm-cccccc",
		"cleo@home: 20261128-045200.000004Z-gm-dddddd",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Outgoing() (-want +got):\n%s", diff)
	}
}

// TestSameBridge: a reload tells a changed bridge: section (which the
// running bridge does not follow) from one only moved in parley.yaml.
func TestSameBridge(t *testing.T) {
	base := Bridge{Name: "hub", URLs: []string{"nats://a:4222"}, Stream: DefaultStream, MaxDeliver: DefaultMaxDeliver, Line: 1}
	moved := base
	moved.Line = 9
	renamed := base
	renamed.Name = "inn"
	other := base
	other.URLs = []string{"nats://b:4222"}
	tests := []struct {
		name string
		a, b *Bridge
		want bool
	}{
		{"both none", nil, nil, true},
		{"one added", nil, &base, false},
		{"one removed", &base, nil, false},
		{"moved to another line", &base, &moved, true},
		{"renamed", &base, &renamed, false},
		{"another server", &base, &other, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameBridge(tt.a, tt.b); got != tt.want {
				t.Errorf("SameBridge() = %v, want %v", got, tt.want)
			}
		})
	}
}
