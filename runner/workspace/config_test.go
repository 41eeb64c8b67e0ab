package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig("parley.yaml", []byte(`
agents:
  - name: gm
    role: gm
  - aria            # short form
router:
  rescan_interval: 5s
  settle: 50ms
  max_message_size: 64KiB
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Agents: []Agent{
			{Name: "gm", Roles: []string{"gm"}, Driver: DriverHuman, Timeout: DefaultTimeout, Retries: DefaultRetries, Line: 3},
			{Name: "aria", Driver: DriverHuman, Timeout: DefaultTimeout, Retries: DefaultRetries, Line: 5},
		},
		HopLimit:  DefaultHopLimit,
		MaxOutput: DefaultMaxOutput,
		Router:    RouterConfig{RescanInterval: 5 * time.Second, Settle: 50 * time.Millisecond, MaxMessageSize: 64 << 10},
	}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("ParseConfig (-want +got):\n%s", d)
	}
	empty, err := ParseConfig("parley.yaml", []byte("# nothing yet\n"))
	if err != nil {
		t.Fatal(err)
	}
	if empty.Router.MaxMessageSize != DefaultMaxMessageSize || empty.Router.Settle != DefaultSettle || empty.Router.RescanInterval != DefaultRescanInterval {
		t.Errorf("defaults = %+v", empty.Router)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unknown top key", "agents: [gm]\nrouters: {}\n", "parley.yaml:2: routers: unknown key (known here: agents, campaign, concurrency, git, hop_limit, max_output, phase, router, routes, skills, stop_on, strict, timeouts)"},
		{"bad role", "agents:\n  - name: gm\n    role: Game Master\n", `parley.yaml:3: agents[0].role: "Game Master" is not a valid name`},
		{"bad phase", "phase: two\n", `parley.yaml:1: phase: "two" is not a phase`},
		{"bad git", "agents: [gm]\ngit: always\n", `parley.yaml:2: git: "always" is not auto or off`},
		{"bad skill name", "skills: [dnd team]\n", `parley.yaml:1: skills: "dnd team" is not a valid name`},
		{"unknown agent key", "agents:\n  - name: gm\n    nmae: x\n", "parley.yaml:3: agents[0].nmae: unknown key (known here: character, driver, handler, isolate, name, retries, role, roles, run, timeout)"},
		{"unknown driver", "agents:\n  - name: gm\n    driver: robot\n", `parley.yaml:3: agents[0].driver: unknown driver "robot" (drivers: human, command, session, builtin)`},
		{"command without a program", "agents:\n  - name: gm\n    driver: command\n", "parley.yaml:2: agents[0].run: missing: a command agent needs the program to run"},
		{"builtin without a handler", "agents:\n  - name: dice\n    driver: builtin\n", "parley.yaml:2: agents[0].handler: missing"},
		{"run for a human", "agents:\n  - name: gm\n    run: [x]\n", "parley.yaml:2: agents[0].run: only command and session agents run a program"},
		{"bad timeout", "agents:\n  - name: gm\n    timeout: soon\n", `parley.yaml:3: agents[0].timeout: "soon" is not a duration`},
		{"bad campaign name", "campaign: the/rot\nagents: [gm]\n", `parley.yaml:1: campaign: "the/rot" is not a valid name`},
		{"route to a missing agent", "agents: [gm]\nroutes:\n  - match: {type: X}\n    to: zed\n", `parley.yaml:3: routes[0]: routes to "zed", which is no agent and no agent's role`},
		{"route to nowhere", "agents: [gm]\nroutes:\n  - match: {type: X}\n", "parley.yaml:3: routes[0]: sends nowhere"},
		{"route from a missing agent", "agents: [gm]\nroutes:\n  - match: {from: zed}\n    to: gm\n", `parley.yaml:3: routes[0].match.from: "zed" is no agent`},
		{"cycle of routes", "agents:\n  - {name: a, driver: command, run: [x]}\n  - {name: b, driver: command, run: [x]}\nroutes:\n  - match: {from: a}\n    to: b\n  - match: {from: b}\n    to: a\n", "parley.yaml:5: routes[0]: routes send every message around a circle of agents that answer by program (a -> b -> a)"},
		{"bad concurrency", "concurrency: -1\n", `parley.yaml:1: concurrency: "-1" is not a whole number`},
		{"a character played twice", "agents:\n  - {name: a, character: tilda}\n  - {name: b, character: tilda}\n", `parley.yaml:3: agents[1].character: "tilda" is played by a already (line 2): a message to it could not say which agent it is for`},
		{"a character named like an agent", "agents:\n  - {name: a, character: b}\n  - b\n", `parley.yaml:2: agents[0].character: "b" is the name of another agent (line 3): a message to it could not say which agent it is for`},
		{"bad agent name", "agents:\n  - name: Game Master\n", `parley.yaml:2: agents[0].name: "Game Master" is not a valid name`},
		{"path as a name", "agents:\n  - ../etc\n", `parley.yaml:2: agents[0].name: "../etc" is not a valid name`},
		{"duplicate agent", "agents:\n  - gm\n  - aria\n  - gm\n", `parley.yaml:4: agents[2].name: "gm" is already the name of the agent on line 2`},
		{"agent without name", "agents:\n  - role: gm\n", "parley.yaml:2: agents[0]: name: missing"},
		{"agents not a list", "agents: gm\n", "parley.yaml:1: agents: expected a list of agents"},
		{"bad duration", "router:\n  settle: soon\n", `parley.yaml:2: router.settle: "soon" is not a duration`},
		{"no rescan", "router:\n  rescan_interval: 0s\n", "parley.yaml:2: router.rescan_interval: must be more than 0"},
		{"bad size", "router:\n  max_message_size: big\n", `parley.yaml:2: router.max_message_size: "big" is not a size`},
		{"not yaml", "agents: [gm\n", "parley.yaml: line 1: did not find expected ',' or ']'"},
		{"not a mapping", "- gm\n", "parley.yaml:1: expected keys such as agents:, skills: and router:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("parley.yaml", []byte(tt.text))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig = %v, want a *ConfigError", err)
			}
			if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("ParseConfig error = %q, want it to start with %q", got, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1MiB": 1 << 20, "512KiB": 512 << 10, "65536": 65536, "2mb": 2000000, "1 GiB": 1 << 30, "10B": 10} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1 parsec", "1.5MiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", in)
		}
	}
}

func TestFindWorkspace(t *testing.T) {
	ws := newWorkspace(t, "gm")
	deep := filepath.Join(ws.Root, "mailboxes", "gm", "inbox")
	got, err := Find(deep)
	if err != nil || got != ws.Root {
		t.Errorf("Find(%s) = %q, %v, want %q", deep, got, err, ws.Root)
	}
	if _, err := Find(t.TempDir()); !errors.Is(err, ErrNoWorkspace) {
		t.Errorf("Find outside a workspace = %v, want ErrNoWorkspace", err)
	}
}

func TestInitWorkspace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	ws, err := Init(dir, AgentsNamed("gm", "aria"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"parley.yaml", ".gitignore", ".parley", "mailboxes/gm/outbox", "mailboxes/aria/inbox", "mailboxes/aria/dead"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("init did not create %s: %v", p, err)
		}
	}
	if d := cmp.Diff([]string{"gm", "aria"}, ws.AgentNames()); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if _, err := Init(dir, AgentsNamed("gm"), nil); !errors.Is(err, ErrWorkspaceExists) {
		t.Errorf("second init = %v, want ErrWorkspaceExists", err)
	}
	for _, bad := range [][]string{nil, {"Bad Name"}, {"gm", "gm"}, {"a/b"}} {
		if _, err := Init(t.TempDir(), AgentsNamed(bad...), nil); err == nil {
			t.Errorf("Init(%q) succeeded, want an error", bad)
		}
	}
}

// newWorkspace creates a workspace with these agents in a fresh directory.
func newWorkspace(t *testing.T, agents ...string) *Workspace {
	t.Helper()
	ws, err := Init(t.TempDir(), AgentsNamed(agents...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
