package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModelProblem: what an openai section names outside parley.yaml
// (the prompt file, the key's variable) is checked, and a problem names
// the line and the key.
func TestModelProblem(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "prompts", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "prompts", "gm.md"), []byte("Be the GM.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SET_KEY": "sk-1"}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		name, section, want string
	}{
		{"nothing outside", "{model: m}", ""},
		{"a prompt and a key", "{model: m, prompt: prompts/gm.md, key_env: SET_KEY}", ""},
		{"a missing prompt", "{model: m,\n  prompt: prompts/nope.md}", "parley.yaml:5: agents[0].openai.prompt: prompts/nope.md: no such file (the role's prompt, relative to the workspace)"},
		{"a prompt that is a directory", "{model: m, prompt: prompts/dir}", "parley.yaml:4: agents[0].openai.prompt: prompts/dir: a directory, not a file (the role's prompt, relative to the workspace)"},
		{"a key not set", "{model: m,\n  key_env: NO_KEY}", "parley.yaml:5: agents[0].openai.key_env: the environment variable NO_KEY holds no key (set it where parley runs, or leave key_env out for an endpoint that takes no key)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig(ConfigFile, []byte("agents:\n  - name: gm\n    driver: openai\n    openai: "+tt.section+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := cfg.Agents[0].Model.Problem(root, getenv); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Problem() = %q, want %q", got, tt.want)
			}
		})
	}
}
