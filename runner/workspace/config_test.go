package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
			{Name: "gm", Roles: []string{"gm"}, Driver: DriverHuman, Timeout: DefaultTimeout, Retries: DefaultRetries, Line: 3, Key: "agents[0]", RolesLine: 4, RolesKey: "agents[0].role"},
			{Name: "aria", Driver: DriverHuman, Timeout: DefaultTimeout, Retries: DefaultRetries, Line: 5, Key: "agents[1]"},
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
		{"unknown top key", "agents: [gm]\nrouters: {}\n", "parley.yaml:2: routers: unknown key (known here: agents, bridge, budget, campaign, concurrency, git, hop_limit, max_output, phase, prices, router, routes, skills, stop_on, strict, timeouts)"},
		{"bad role", "agents:\n  - name: gm\n    role: Game Master\n", `parley.yaml:3: agents[0].role: "Game Master" is not a valid name`},
		{"bad phase", "phase: two\n", `parley.yaml:1: phase: "two" is not a phase`},
		{"bad git", "agents: [gm]\ngit: always\n", `parley.yaml:2: git: "always" is not auto or off`},
		{"bad skill name", "skills: [dnd team]\n", `parley.yaml:1: skills: "dnd team" is not a valid name`},
		{"no message fits", "agents: [gm]\nrouter:\n  max_message_size: 0\n", `parley.yaml:3: router.max_message_size: "0": no message would fit; leave it out for the default, 1MiB`},
		{"a handler with no driver", "agents:\n  - gm\n  - {name: dice, handler: dice}\n", "parley.yaml:3: agents[1].driver: missing: an agent with a handler: needs driver: builtin"},
		{"a handler with another driver", "agents:\n  - gm\n  - {name: dice, driver: command, run: [x], handler: dice}\n", "parley.yaml:3: agents[1].handler: only builtin agents have a handler (driver: builtin)"},
		{"a key given twice", "agents:\n  - name: bram\n    role: player\n    role: gm\n", "parley.yaml:4: agents[0].role: given twice, here and on line 3: keep one"},
		{"a top key given twice", "skills: [dnd-team]\nagents: [gm]\nskills: [dev-pipeline]\n", "parley.yaml:3: skills: given twice, here and on line 1: keep one"},
		{"a route's field given twice", "agents: [gm, aria]\nroutes:\n  - match: {fields: {kind: a, kind: b}}\n    to: [aria]\n", "parley.yaml:3: routes[0].match.fields.kind: given twice, here and on line 3: keep one"},
		{"misspelt agent key", "agents:\n  - name: gm\n    nmae: x\n", "parley.yaml:3: agents[0].nmae: unknown key (did you mean name?)"},
		{"unknown agent key", "agents:\n  - name: gm\n    program: x\n", "parley.yaml:3: agents[0].program: unknown key (known here: accepts, budget, character, driver, handler, isolate, name, openai, remote, retries, role, roles, run, timeout)"},
		{"a name in capitals", "agents: [boss, w]\ntimeouts:\n  - match: {to: [Boss]}\n    after: 1s\n", `parley.yaml:3: timeouts[0].match.to: "Boss" is not a valid name: use lower-case letters, digits and single hyphens (like team-lead) (did you mean boss?)`},
		{"misspelt driver", "agents:\n  - name: gm\n    driver: comand\n", `parley.yaml:3: agents[0].driver: unknown driver "comand" (did you mean command?)`},
		{"unknown driver", "agents:\n  - name: gm\n    driver: robot\n", `parley.yaml:3: agents[0].driver: unknown driver "robot" (drivers: human, command, session, builtin, openai)`},
		{"command without a program", "agents:\n  - name: gm\n    driver: command\n", "parley.yaml:2: agents[0].run: missing: a command agent needs the program to run"},
		{"builtin without a handler", "agents:\n  - name: dice\n    driver: builtin\n", "parley.yaml:2: agents[0].handler: missing"},
		{"run with no driver", "agents:\n  - name: gm\n    run: [x]\n", "parley.yaml:2: agents[0].driver: missing: an agent that runs a program needs driver: command or session"},
		{"run for a human: the line of run:", "agents:\n  - name: gm\n    driver: human\n    run: [x]\n", "parley.yaml:4: agents[0].run: only command and session agents run a program"},
		{"run for a builtin: the line of run:", "agents:\n  - name: gm\n    driver: builtin\n    handler: dice\n    run: [x]\n", "parley.yaml:5: agents[0].run: only command and session agents run a program"},
		{"bad timeout", "agents:\n  - name: gm\n    timeout: soon\n", `parley.yaml:3: agents[0].timeout: "soon" is not a duration`},
		{"bad campaign name", "campaign: the/rot\nagents: [gm]\n", `parley.yaml:1: campaign: "the/rot" is not a valid name`},
		{"route to a missing agent: the line of to:", "agents: [gm]\nroutes:\n  - match: {type: X}\n    to: zed\n", `parley.yaml:4: routes[0].to: routes to "zed", which is no agent and no agent's role`},
		{"cc to a misspelt agent: the line of cc:", "agents: [me, bot]\nroutes:\n  - match: {type: X}\n    to: me\n    cc: [bott]\n", `parley.yaml:5: routes[0].cc: routes to "bott", which is no agent and no agent's role (did you mean bot?)`},
		{"an agent added after router:", "agents:\n  - name: gm\nrouter:\n  settle: 1s\n  - name: extra\n", `parley.yaml:5: did not find expected key (a list item that does not fit where it is: put it under its list, indented as the items there are)`},
		{"a key indented one space too far", "agents:\n  - name: gm\n    driver: command\n     run: [x]\n", `parley.yaml:4: mapping values are not allowed in this context (indented further than the line above: line its key up with the keys beside it)`},
		{"route to nowhere", "agents: [gm]\nroutes:\n  - match: {type: X}\n", "parley.yaml:3: routes[0].to: missing: the route sends nowhere"},
		{"route from a missing agent", "agents: [gm]\nroutes:\n  - match: {from: zed}\n    to: gm\n", `parley.yaml:3: routes[0].match.from: "zed" is no agent`},
		{"cycle of routes", "agents:\n  - {name: a, driver: command, run: [x]}\n  - {name: b, driver: command, run: [x]}\nroutes:\n  - match: {from: a}\n    to: b\n  - match: {from: b}\n    to: a\n", "parley.yaml:5: routes[0]: routes send every message around a circle of agents that answer by program (a -> b -> a)"},
		{"negative concurrency", "concurrency: -1\n", `parley.yaml:1: concurrency: -1: must be 0 or more`},
		{"concurrency not a number", "concurrency: two\n", `parley.yaml:1: concurrency: "two" is not a whole number`},
		{"a character played twice", "agents:\n  - {name: a, character: tilda}\n  - {name: b, character: tilda}\n", `parley.yaml:3: agents[1].character: "tilda" is played by a already (line 2): a message to it could not say which agent it is for`},
		{"a character named like an agent", "agents:\n  - {name: a, character: b}\n  - b\n", `parley.yaml:2: agents[0].character: "b" is the name of another agent (line 3): a message to it could not say which agent it is for`},
		{"bad agent name", "agents:\n  - name: Game Master\n", `parley.yaml:2: agents[0].name: "Game Master" is not a valid name`},
		{"path as a name", "agents:\n  - ../etc\n", `parley.yaml:2: agents[0].name: "../etc" is not a valid name`},
		{"duplicate agent", "agents:\n  - gm\n  - aria\n  - gm\n", `parley.yaml:4: agents[2].name: "gm" is already the name of the agent on line 2`},
		{"agent without name", "agents:\n  - role: gm\n", "parley.yaml:2: agents[0].name: missing"},
		{"agents not a list", "agents: gm\n", "parley.yaml:1: agents: expected a list of agents"},
		{"bad duration", "router:\n  settle: soon\n", `parley.yaml:2: router.settle: "soon" is not a duration`},
		{"no rescan", "router:\n  rescan_interval: 0s\n", "parley.yaml:2: router.rescan_interval: must be more than 0"},
		{"bad size", "router:\n  max_message_size: big\n", `parley.yaml:2: router.max_message_size: "big" is not a size`},
		{"not yaml", "agents: [gm\n", "parley.yaml:1: did not find expected ',' or ']'"},
		// An agent added at the end of the file, after the last key: the
		// parser names the line before the mapping it was reading (here
		// line 2, a comment), not the line it could not read.
		{"an agent after the last key", "# the table\n# its agents\nagents:\n  - gm\nstop_on: [SESSION_END]\n  - {name: corwin, role: human}\n", "parley.yaml:6: did not find expected key"},
		{"a key under a list item, too deep", "agents:\n  - name: gm\n    driver: command\n     run: [x]\n", "parley.yaml:4: "},
		{"openai without its endpoint", "agents:\n  - name: gm\n    driver: openai\n", "parley.yaml:2: agents[0].openai: missing: an openai agent needs its endpoint"},
		{"openai without a model", "agents:\n  - name: gm\n    driver: openai\n    openai:\n      base_url: http://x\n", "parley.yaml:5: agents[0].openai.model: missing"},
		{"openai for a command", "agents:\n  - name: gm\n    driver: command\n    run: [x]\n    openai: {model: m}\n", "parley.yaml:2: agents[0].openai: only an openai agent has an endpoint"},
		{"openai base_url without a scheme", "agents:\n  - name: gm\n    driver: openai\n    openai:\n      model: m\n      base_url: localhost:11434/v1\n", `parley.yaml:6: agents[0].openai.base_url: "localhost:11434/v1" is not an http:// or https:// URL (like http://localhost:11434/v1)`},
		{"openai base_url not http", "agents:\n  - name: gm\n    driver: openai\n    openai: {model: m, base_url: 'ftp://x/v1'}\n", `parley.yaml:4: agents[0].openai.base_url: "ftp://x/v1" is not an http:// or https:// URL`},
		{"openai base_url with a password", "agents:\n  - name: gm\n    driver: openai\n    openai: {model: m, base_url: 'https://me:sk-abc@x/v1'}\n", `parley.yaml:4: agents[0].openai.base_url: "https://me:xxxxx@x/v1": inline credentials are refused`},
		{"a key in key_env", "agents:\n  - name: gm\n    driver: openai\n    openai:\n      model: m\n      key_env: sk-abc123\n", `parley.yaml:6: agents[0].openai.key_env: "sk-abc123" is not the name of an environment variable`},
		{"unknown openai key", "agents:\n  - name: gm\n    driver: openai\n    openai:\n      model: m\n      api_key: x\n", "parley.yaml:6: agents[0].openai.api_key: unknown key (known here: base_url, key_env, max_repairs, max_retries, max_tokens, max_tool_rounds, memory_tokens, model, outage_limit, prompt, temperature, timeout)"},
		{"bad temperature", "agents:\n  - name: gm\n    driver: openai\n    openai: {model: m, temperature: hot}\n", `parley.yaml:4: agents[0].openai.temperature: "hot" is not a temperature`},
		{"no tool rounds", "agents:\n  - name: gm\n    driver: openai\n    openai: {model: m, max_tool_rounds: 0}\n", "parley.yaml:4: agents[0].openai.max_tool_rounds: must be 1 or more"},
		{"bad budget", "budget:\n  tokens: lots\n", `parley.yaml:2: budget.tokens: "lots" is not a number of tokens`},
		{"bad price", "prices:\n  m: {input: cheap}\n", `parley.yaml:2: prices.m.input: "cheap" is not an amount`},
		{"budget for a human", "agents:\n  - name: gm\n    budget: {tokens: 5}\n", "parley.yaml:2: agents[0].budget: only an openai agent has a budget"},
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
	// parley.yaml removed by mistake: the workspace is still found, and
	// said to miss it (it was "not in a parley workspace", hinting init).
	if err := os.Remove(filepath.Join(ws.Root, ConfigFile)); err != nil {
		t.Fatal(err)
	}
	got, err = Find(deep)
	var mce *MissingConfigError
	if got != ws.Root || !errors.As(err, &mce) || mce.Root != ws.Root {
		t.Errorf("Find(%s) without parley.yaml = %q, %v; want %q, a *MissingConfigError", deep, got, err, ws.Root)
	}
	if _, err := Open(ws.Root); !errors.As(err, &mce) {
		t.Errorf("Open without parley.yaml = %v; want a *MissingConfigError", err)
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

// TestInitGitignoreAddsMissing checks that init keeps a .gitignore already
// there (an example copied, a repository's own) and adds the lines it
// lacks, once (a tryout: a .env and a vim swap file among the campaign
// files were committed, the old .gitignore covering mailboxes/ only).
func TestInitGitignoreAddsMissing(t *testing.T) {
	dir := t.TempDir()
	old := "# mine\nnotes/\n.parley/*\nmailboxes/**/.*\n*~"
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := Init(dir, AgentsNamed("gm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeMailboxes(); err != nil { // again: nothing more to add
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if !strings.HasPrefix(got, old+"\n# parley: ") {
		t.Errorf(".gitignore = %q, want the old one kept, first", got)
	}
	for _, l := range []string{".env", ".env.*", `\#*\#`, "*.sw[nopx]", ".#*", "mailboxes/*/tmp/", ".parley/*", "*~"} {
		if n := strings.Count(got, "\n"+l+"\n"); n != 1 {
			t.Errorf(".gitignore has %q %d times, want once:\n%s", l, n, got)
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

func TestParseModelConfig(t *testing.T) {
	cfg, err := ParseConfig("parley.yaml", []byte(`
agents:
  - name: gm
    driver: openai
    openai:
      base_url: http://localhost:8080/v1
      model: llama3.1
      key_env: LOCAL_KEY
      temperature: 0.7
      max_tokens: 512
      timeout: 30s
      max_retries: 3
      outage_limit: 20m
      max_repairs: 1
      max_tool_rounds: 4
      memory_tokens: 2000
      prompt: prompts/gm.md
    budget:
      tokens: 100000
      cost: 1.25
budget:
  tokens: 500000
prices:
  llama3.1: {input: 0.5, output: 1.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.7
	want := &Model{BaseURL: "http://localhost:8080/v1", Model: "llama3.1", KeyEnv: "LOCAL_KEY", Temperature: &temp, MaxTokens: 512,
		Timeout: 30 * time.Second, MaxRetries: 3, OutageLimit: 20 * time.Minute, MaxRepairs: 1, MaxToolRounds: 4, MemoryTokens: 2000, Prompt: "prompts/gm.md", Line: 6,
		Key: "agents[0].openai", KeyEnvLine: 8, PromptLine: 17}
	gm := cfg.Agents[0]
	if d := cmp.Diff(want, gm.Model); d != "" {
		t.Errorf("openai: (-want +got):\n%s", d)
	}
	if gm.Budget != (Budget{Tokens: 100000, Cost: 1.25}) || cfg.Budget != (Budget{Tokens: 500000}) {
		t.Errorf("budgets = %+v, %+v", gm.Budget, cfg.Budget)
	}
	if p, ok := cfg.PriceOf("llama3.1"); !ok || p.Cost(1e6, 2e6) != 3.5 {
		t.Errorf("price = %+v, %v", p, ok)
	}
	defaults, err := ParseConfig("parley.yaml", []byte("agents:\n  - name: gm\n    driver: openai\n    openai: {model: m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := defaults.Agents[0].Model; m.Timeout != DefaultModelTimeout || m.MaxToolRounds != 8 || m.MaxRepairs != DefaultMaxRepairs || m.MaxRetries != DefaultMaxRetries || m.MemoryTokens != DefaultMemoryTokens || m.Temperature != nil {
		t.Errorf("defaults = %+v", m)
	}
}

// TestOpenRelative checks that a workspace opened by a relative path has
// an absolute root: the paths it gives (an agent's PARLEY_MESSAGE) are
// used by programs started in other directories.
func TestOpenRelative(t *testing.T) {
	dir := t.TempDir()
	if _, err := Init(filepath.Join(dir, "table"), AgentsNamed("gm", "aria"), nil); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ws, err := Open("table")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "table"); ws.Root != want {
		t.Errorf("Open(%q).Root = %q, want %q", "table", ws.Root, want)
	}
}

// TestOpenNoAgents checks that a parley.yaml listing no agents is refused
// with the line of agents: (line 1 when there is none), as InitConfig
// refuses to write one: such a workspace has no mailbox at all. A hub,
// a bridge: and no agents, is a workspace: it serves the bridge.
func TestOpenNoAgents(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
	}{
		{"empty file", "", 1},
		{"comments only", "# nothing yet\n", 1},
		{"empty list", "skills: [dnd-team]\nagents: []\n", 2},
		{"empty list after others", "router:\n  settle: 1s\nagents: []\n", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir)
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrNoAgents) || ce.Line != tt.line || ce.Key != "agents" || ce.Path != ConfigFile {
				t.Errorf("Open of %q = %v, want a *ConfigError for agents on line %d wrapping ErrNoAgents", tt.text, err, tt.line)
			}
			if _, err := InitConfig(t.TempDir(), tt.text); !errors.Is(err, ErrNoAgents) {
				t.Errorf("InitConfig(%q) = %v, want ErrNoAgents", tt.text, err)
			}
		})
	}
}

func TestOpenHub(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hub")
	if _, err := InitConfig(dir, "bridge: {name: hub}\n"); err != nil {
		t.Fatalf("InitConfig of a hub = %v, want no error", err)
	}
	if _, err := Open(dir); err != nil {
		t.Errorf("Open of a hub = %v, want no error", err)
	}
}

// Who plays each agent is decided by Agent.Person, Driven and
// RunsProgram, from parley.yaml as written: the seat, play, status, the
// refusal notices and the dispatcher all ask them.
func TestWhoPlaysAnAgent(t *testing.T) {
	cfg, err := ParseConfig("parley.yaml", []byte(`
bridge: {name: inn}
agents:
  - corwin
  - {name: mara, driver: human}
  - {name: lead, driver: builtin, handler: echo}
  - {name: bot, driver: command, run: [cat]}
  - {name: far, remote: home}
`))
	if err != nil {
		t.Fatal(err)
	}
	type who struct{ Person, Driven, RunsProgram bool }
	want := map[string]who{
		"corwin": {Person: true},
		"mara":   {Person: true},
		"lead":   {Driven: true},
		"bot":    {Driven: true, RunsProgram: true},
		"far":    {}, // another workspace's: nobody here plays it
	}
	for _, a := range cfg.Agents {
		if got := (who{a.Person(), a.Driven(), a.RunsProgram()}); got != want[a.Name] {
			t.Errorf("%s: %+v, want %+v", a.Name, got, want[a.Name])
		}
	}
	// An agent made in memory with no driver is a person too.
	if a := (Agent{Name: "x"}); !a.Person() || a.Driven() {
		t.Errorf("an agent with no driver: Person %v, Driven %v", a.Person(), a.Driven())
	}
}

// TestParseConfigSkipUnknown: read for a command that only reads, an
// unknown key is skipped and listed, in the words of the strict error;
// read strictly it is an error (ErrUnknownKey); a bad value of a known key
// is an error either way.
func TestParseConfigSkipUnknown(t *testing.T) {
	tests := []struct {
		name, text string
		skipped    []string // the errors listed in Skipped
		err        string   // the error, read with SkipUnknown
	}{
		{"newer router key", "agents: [gm]\nrouter: {speed: 3, settle: 1s}\n",
			[]string{"parley.yaml:2: router.speed: unknown key (known here: max_message_size, rescan_interval, settle)"}, ""},
		{"two typos", "agents:\n  - name: gm\n    rol: x\nhop_limt: 3\n",
			[]string{"parley.yaml:3: agents[0].rol: unknown key (did you mean role?)",
				"parley.yaml:4: hop_limt: unknown key (did you mean hop_limit?)"}, ""},
		{"bad value of a known key", "agents: [gm]\nrouter: {settle: soon}\n", nil, "parley.yaml:2: router.settle: "},
		{"both", "agents: [gm]\nrouter: {speed: 3, settle: soon}\n", nil, "parley.yaml:2: router.settle: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfigWith(ConfigFile, []byte(tt.text), LoadOptions{SkipUnknown: true})
			if tt.err != "" {
				if err == nil || len(err.Error()) < len(tt.err) || err.Error()[:len(tt.err)] != tt.err || errors.Is(err, ErrUnknownKey) {
					t.Fatalf("ParseConfigWith(SkipUnknown) = %v, want an error starting %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConfigWith(SkipUnknown) = %v, want the unknown keys skipped", err)
			}
			var got []string
			for _, k := range cfg.Skipped {
				if !errors.Is(k, ErrUnknownKey) {
					t.Errorf("skipped %v is not ErrUnknownKey", k)
				}
				got = append(got, k.Error())
			}
			if d := cmp.Diff(tt.skipped, got); d != "" {
				t.Errorf("Skipped (-want +got):\n%s", d)
			}
			_, strict := ParseConfig(ConfigFile, []byte(tt.text))
			// Read strictly, every unknown key is an error, and each
			// is said, as parley status lists them.
			if want := strings.Join(tt.skipped, "\n"); !errors.Is(strict, ErrUnknownKey) || strict.Error() != want {
				t.Errorf("ParseConfig = %v, want %q (ErrUnknownKey)", strict, want)
			}
		})
	}
}

// TestParseConfigMissingTypo: a key an entry needs, missing where the
// same mapping holds an unknown key, was said as "agents[5].run:
// missing" at the entry's line, never naming the typo (rnu:), and the
// commands that only read stopped on it. Read strictly, the unknown key
// is the error, with the key it most likely stands for; read with
// SkipUnknown, one error names both, at the typo's line, and every other
// entry is read. An agent with its name is kept, without a driver
// (ConfigError), with what else its entry says: a tryout found its inbox
// "unknown agent" and its mailbox called orphaned when it was left out.
// Any other entry is left out. A key missing with no unknown key beside
// it stays an error either way.
func TestParseConfigMissingTypo(t *testing.T) {
	const head = "agents:\n  - name: you\n"
	tests := []struct {
		name, text string
		strict     string // the error read strictly
		skipped    string // the one error in Skipped, read with SkipUnknown
		agents     int    // the agents read with SkipUnknown
		routes     int    // the routes read with SkipUnknown
		// kept is the agent kept without a driver, its roles after it;
		// nil: none.
		kept []string
	}{
		{"run", head + "  - name: w\n    driver: command\n    rnu: [sh, w.sh]\n",
			"parley.yaml:5: agents[1].rnu: unknown key (did you mean run?); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh])",
			"parley.yaml:5: agents[1].rnu: unknown key (did you mean run?); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh]); agents[1] (w) cannot be driven", 2, 0, []string{"w"}},
		{"name", head + "  - nmae: w\n    role: worker\n",
			"parley.yaml:3: agents[1].nmae: unknown key (did you mean name?); agents[1].name is missing: every agent has one (name: gm)",
			"parley.yaml:3: agents[1].nmae: unknown key (did you mean name?); agents[1].name is missing: every agent has one (name: gm); agents[1] left out", 1, 0, nil},
		{"handler", head + "  - name: o\n    driver: builtin\n    hadnler: orchestrator\n",
			"parley.yaml:5: agents[1].hadnler: unknown key (did you mean handler?); agents[1].handler is missing: a builtin agent needs the name of its handler",
			"parley.yaml:5: agents[1].hadnler: unknown key (did you mean handler?); agents[1].handler is missing: a builtin agent needs the name of its handler; agents[1] (o) cannot be driven", 2, 0, []string{"o"}},
		{"openai", head + "  - name: gm\n    driver: openai\n    opneai: {model: m}\n",
			"parley.yaml:5: agents[1].opneai: unknown key (did you mean openai?); agents[1].openai is missing: an openai agent needs its endpoint (openai: {base_url: ..., model: ...})",
			"parley.yaml:5: agents[1].opneai: unknown key (did you mean openai?); agents[1].openai is missing: an openai agent needs its endpoint (openai: {base_url: ..., model: ...}); agents[1] (gm) cannot be driven", 2, 0, []string{"gm"}},
		{"model", head + "  - name: gm\n    driver: openai\n    openai:\n      modle: m\n    role: narrator\n",
			"parley.yaml:6: agents[1].openai.modle: unknown key (did you mean model?); agents[1].openai.model is missing: name the model the endpoint serves (model: llama3.1)",
			"parley.yaml:6: agents[1].openai.modle: unknown key (did you mean model?); agents[1].openai.model is missing: name the model the endpoint serves (model: llama3.1); agents[1] (gm) cannot be driven", 2, 0, []string{"gm", "narrator"}},
		{"far from the key missing", head + "  - name: w\n    driver: command\n    program: [sh, w.sh]\n",
			"parley.yaml:5: agents[1].program: unknown key (known here: accepts, budget, character, driver, handler, isolate, name, openai, remote, retries, role, roles, run, timeout); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh])",
			"parley.yaml:5: agents[1].program: unknown key (known here: accepts, budget, character, driver, handler, isolate, name, openai, remote, retries, role, roles, run, timeout); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh]); agents[1] (w) cannot be driven", 2, 0, []string{"w"}},
		{"route", head + "routes:\n  - match: {type: X}\n    ot: [you]\n",
			"parley.yaml:5: routes[0].ot: unknown key (did you mean to?); routes[0].to is missing: the route sends nowhere (give to: or cc:)",
			"parley.yaml:5: routes[0].ot: unknown key (did you mean to?); routes[0].to is missing: the route sends nowhere (give to: or cc:); routes[0] left out", 1, 0, nil},
		{"timeout", head + "timeouts:\n  - match: {to: [you]}\n    aftr: 2m\n",
			"parley.yaml:5: timeouts[0].aftr: unknown key (did you mean after?); timeouts[0].after is missing: say how long to wait (after: 120s)",
			"parley.yaml:5: timeouts[0].aftr: unknown key (did you mean after?); timeouts[0].after is missing: say how long to wait (after: 120s); timeouts[0] left out", 1, 0, nil},
		{"bridge", head + "bridge:\n  nmae: tavern\n",
			"parley.yaml:4: bridge.nmae: unknown key (did you mean name?); bridge.name is missing: the name of this workspace on the bridge (name: tavern)",
			"parley.yaml:4: bridge.nmae: unknown key (did you mean name?); bridge.name is missing: the name of this workspace on the bridge (name: tavern); bridge left out", 1, 0, nil},
		// What refers to an entry left out is not checked against it:
		// the remote agent of the bridge left out. An agent kept is
		// there for the route to it.
		{"a route to the agent kept", head + "  - name: w\n    driver: command\n    rnu: [sh, w.sh]\nroutes:\n  - {match: {type: X}, to: [w]}\n",
			"parley.yaml:5: agents[1].rnu: unknown key (did you mean run?); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh])",
			"parley.yaml:5: agents[1].rnu: unknown key (did you mean run?); agents[1].run is missing: a command agent needs the program to run (run: [./agent.sh]); agents[1] (w) cannot be driven", 2, 1, []string{"w"}},
		{"an agent of the bridge left out", head + "  - {name: gm, remote: tavern}\nbridge:\n  nmae: hall\n",
			"parley.yaml:5: bridge.nmae: unknown key (did you mean name?); bridge.name is missing: the name of this workspace on the bridge (name: tavern)",
			"parley.yaml:5: bridge.nmae: unknown key (did you mean name?); bridge.name is missing: the name of this workspace on the bridge (name: tavern); bridge left out", 2, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(ConfigFile, []byte(tt.text))
			if err == nil || err.Error() != tt.strict || !errors.Is(err, ErrUnknownKey) {
				t.Errorf("ParseConfig = %v, want %q (ErrUnknownKey)", err, tt.strict)
			}
			cfg, err := ParseConfigWith(ConfigFile, []byte(tt.text), LoadOptions{SkipUnknown: true})
			if err != nil {
				t.Fatalf("ParseConfigWith(SkipUnknown) = %v, want the entry left out", err)
			}
			if len(cfg.Skipped) != 1 || cfg.Skipped[0].Error() != tt.skipped {
				t.Fatalf("Skipped = %q, want just %q", cfg.Skipped, tt.skipped)
			}
			if k := cfg.Skipped[0]; !errors.Is(k, ErrUnknownKey) || !errors.Is(k, ErrMissing) {
				t.Errorf("Skipped[0] = %v, want ErrUnknownKey and ErrMissing", k)
			}
			if len(cfg.Agents) != tt.agents || cfg.Agents[0].Name != "you" {
				t.Errorf("agents read = %+v, want %d, you first", cfg.Agents, tt.agents)
			}
			if len(cfg.Routes) != tt.routes || len(cfg.Timeouts) != 0 || cfg.Bridge != nil {
				t.Errorf("read %d routes, %d timeouts, bridge %+v; want %d routes, the rest left out", len(cfg.Routes), len(cfg.Timeouts), cfg.Bridge, tt.routes)
			}
			for i, a := range cfg.Agents {
				if a.ConfigError != nil && (tt.kept == nil || i != 1) {
					t.Errorf("agent %s: ConfigError = %v, want nil", a.Name, a.ConfigError)
				}
			}
			if tt.kept == nil {
				return
			}
			a := cfg.Agents[1]
			if got := append([]string{a.Name}, a.Roles...); !slices.Equal(got, tt.kept) {
				t.Errorf("agent kept: name and roles %q, want %q", got, tt.kept)
			}
			if a.ConfigError == nil || !strings.HasPrefix(tt.skipped, a.ConfigError.Error()+"; ") {
				t.Errorf("agent kept: ConfigError = %v, want the error in Skipped", a.ConfigError)
			}
			if !a.Driven() || a.Person() {
				t.Errorf("agent kept: Driven() = %v, Person() = %v; want driven, no person", a.Driven(), a.Person())
			}
		})
	}
	// Missing with no unknown key beside it: an error either way.
	text := head + "  - name: w\n    driver: command\n"
	want := "parley.yaml:3: agents[1].run: missing: a command agent needs the program to run (run: [./agent.sh])"
	for _, opts := range []LoadOptions{{}, {SkipUnknown: true}} {
		_, err := ParseConfigWith(ConfigFile, []byte(text), opts)
		if err == nil || err.Error() != want || !errors.Is(err, ErrMissing) || errors.Is(err, ErrUnknownKey) {
			t.Errorf("ParseConfigWith(%+v) = %v, want %q (ErrMissing only)", opts, err, want)
		}
	}
}

// TestParseConfigYAMLErrorLine: a parley.yaml that is not YAML is
// refused at the line to fix, however long the file. Past 500 lines it
// named yaml.v3's line: counted from 0 for a bracket left open (one line
// early), and the line before a block for an entry that does not fit in.
func TestParseConfigYAMLErrorLine(t *testing.T) {
	long := strings.Repeat("# a note\n", 600)
	for _, tt := range []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"bracket left open", "agents: [gm, aria\nskills: [x]\n", 1, "did not find expected ',' or ']'"},
		{"bracket left open, long", long + "skills: [x]\nagents: [gm, aria\nstrict: true\n", 602, "did not find expected ',' or ']'"},
		{"entry out of its block, long", long + "agents:\n  - gm\n  - aria\n x: 1\n", 604, "did not find expected key (indented unlike the keys beside it: line it up with them)"},
		{"mapping values, long", long + "agents: [gm]\nskills: a: b\n", 602, `mapping values are not allowed in this context (a value holding ": " must be quoted: key: "a: b")`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("parley.yaml", []byte(tt.text))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig = %v, want a *ConfigError", err)
			}
			if ce.Line != tt.line || ce.Err.Error() != tt.msg {
				t.Errorf("ParseConfig = line %d: %v; want line %d: %s", ce.Line, ce.Err, tt.line, tt.msg)
			}
		})
	}
}
