package workspace

import (
	"strings"
	"testing"

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
