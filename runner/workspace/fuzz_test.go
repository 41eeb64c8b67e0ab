package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// FuzzParseConfig: no parley.yaml a person writes makes the parser panic,
// and every error names the file and a line.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"agents: [gm, aria]\n",
		"agents:\n  - {name: lead, role: team-lead, driver: command, run: [sh, lead.sh], timeout: 30s, retries: 1}\n",
		"agents: [a, b]\nroutes:\n  - match: {type: X, from_role: a}\n    to: $character\n    cc: [reply]\n",
		"agents: [a]\ntimeouts:\n  - match: {type: ASK}\n    after: 1s\n    nudge: {type: N, fields: {k: v}, body: hi}\n",
		"stop_on: [SESSION_END]\nconcurrency: 2\nhop_limit: 5\nmax_output: 1MiB\nagents: [a]\n",
		"router: {rescan_interval: 5s, settle: 50ms, max_message_size: 64KiB}\n",
		"agents:\n  - name: x\n    driver: robot\n",
		"agents:\n  - name: gm\n    driver: openai\n    openai: {base_url: http://x/v1, model: m, key_env: K, temperature: 0.7, max_tokens: 9, timeout: 1s, max_tool_rounds: 2, memory_tokens: 100}\n    budget: {tokens: 5, cost: 1.5}\nbudget: {tokens: 9}\nprices: {m: {input: 1, output: 2}}\n",
		"agents: &a [a]\nroutes: *a\n",
		"- just a list\n",
		"agents:\n\t- tab\n",
		"bridge: {name: inn, url: [nats://a:4222, tls://b:4222], stream: S, token_env: T, max_deliver: 3, listen: 0.0.0.0:4222}\nagents:\n  - gm\n  - {name: aria, remote: home, role: player}\n",
		"bridge: {name: inn, password: hunter2}\n",
		"bridge: {name: inn, url: nats://u:p@h:4222}\n",
		"agents:\n  - {name: aria, remote: home}\n",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile(filepath.Join("..", "..", "examples", "teams", ConfigFile)); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParseConfig("parley.yaml", data)
		if err != nil && !strings.HasPrefix(err.Error(), "parley.yaml") {
			t.Errorf("error does not name the file: %v", err)
		}
	})
}

// FuzzCheck: no message, however odd, makes the Check panic; a refusal
// always says why, and an accepted message goes to agents of the
// workspace, each for a rule.
func FuzzCheck(f *testing.F) {
	corpus, _ := filepath.Glob(filepath.Join("..", "..", "cmd", "parley", "testdata", "parity", "corpus", "*", "*.md"))
	for _, path := range corpus {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(filepath.Base(filepath.Dir(path)), data)
		}
	}
	f.Add("gm", []byte("[NARRATIVE]\n\nRain.\n"))
	f.Add("aria", []byte("[PLAYER_TO_PLAYER]\nfrom: tilda-brannock\nto: [corwin-voss, seat]\n\nPsst.\n"))
	f.Add("lead", []byte("---\nto: \"*\"\ntype: shutdown_request\n---\n"))
	ws := fuzzWorkspace(f)
	f.Fuzz(func(t *testing.T, sender string, data []byte) {
		m, err := mailbox.Parse(data)
		if err != nil {
			return
		}
		v, err := ws.Check(Input{File: "m.md", Sender: sender, Message: m, Sent: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Accepted() {
			if v.Refusal.Reason == "" {
				t.Errorf("a refusal without a reason: %+v", v.Refusal)
			}
			return
		}
		if v.Message == nil || len(v.Recipients) == 0 {
			t.Errorf("accepted with no recipients or no message: %+v", v)
		}
		for _, r := range v.Recipients {
			if _, ok := ws.Agent(r.Agent); !ok || len(r.Rules) == 0 {
				t.Errorf("recipient %q: not an agent, or no rule sends it there", r.Agent)
			}
		}
	})
}

// fuzzWorkspace is the workspace of the parity corpus.
func fuzzWorkspace(tb testing.TB) *Workspace {
	data, err := os.ReadFile(filepath.Join("..", "..", "cmd", "parley", "testdata", "parity", ConfigFile))
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := ParseConfig(ConfigFile, data)
	if err != nil {
		tb.Fatal(err)
	}
	ws := &Workspace{Root: tb.TempDir(), Config: cfg}
	if err := ws.MakeMailboxes(); err != nil {
		tb.Fatal(err)
	}
	return ws
}
