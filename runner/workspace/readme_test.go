package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEConfig reads every yaml example of the README as a
// parley.yaml, as written, with the shipped skills: each parses, its
// skills load, and every warning parley gives at start is one the README
// shows.
func TestREADMEConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	blocks := 0
	for off := 0; ; {
		start := strings.Index(readme[off:], "\n```yaml\n")
		if start < 0 {
			break
		}
		begin := off + start + len("\n```yaml\n")
		end := strings.Index(readme[begin:], "\n```")
		if end < 0 {
			t.Fatal("a yaml block of the README is never closed")
		}
		block := readme[begin : begin+end+1]
		off = begin + end
		blocks++
		line := strings.Count(readme[:begin], "\n") + 1
		cfg, err := ParseConfig(ConfigFile, []byte(block))
		if err != nil {
			t.Errorf("README.md:%d: the example is not a parley.yaml: %v", line, err)
			continue
		}
		ws := &Workspace{Root: t.TempDir(), Config: cfg}
		if cfg.Campaign != "" {
			// The README shows parley.yaml; the campaign it names goes
			// with it (an example's directory, `parley campaign new`).
			if err := os.MkdirAll(filepath.Join(ws.Root, CampaignsDir, cfg.Campaign), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ws.Protocol(); err != nil {
			t.Errorf("README.md:%d: %v", line, err)
			continue
		}
		warnings, err := ws.Lint()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range warnings {
			if !strings.Contains(readme, w) {
				t.Errorf("README.md:%d: parley warns about the example, and the README does not show it:\n%s", line, w)
			}
		}
	}
	if blocks < 5 {
		t.Errorf("found %d yaml examples in the README, want the README's several", blocks)
	}
}

// TestREADMEOutcomes: the README's table of journal outcomes has a row
// for every outcome parley writes (it lacked the bridge's and the
// models'), and no row for one it does not.
func TestREADMEOutcomes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "| outcome | written by | when |")
	if start < 0 {
		t.Fatal("the README has no table of journal outcomes")
	}
	table := readme[start:]
	table = table[:strings.Index(table, "\n\n")]
	var rows []string
	for _, line := range strings.Split(table, "\n")[2:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		rows = append(rows, name)
	}
	slices.Sort(rows)
	want := slices.Sorted(slices.Values(Outcomes))
	if !slices.Equal(rows, want) {
		t.Errorf("the README's outcomes table lists %v, parley writes %v", rows, want)
	}
}
