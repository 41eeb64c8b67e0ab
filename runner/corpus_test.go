package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestCorpusRouted routes the messages of the conformance corpus
// (skills/testdata/corpus, see skills.TestCorpusSchemas) end to end: each
// protocol document is a workspace's skill, each ok/ message is delivered,
// and each bad/ message is refused with the reason its .reason file gives.
func TestCorpusRouted(t *testing.T) {
	paths, err := filepath.Glob("../skills/testdata/corpus/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			reasons := map[string]string{} // sender/file -> a line of the reason
			var ok []string
			for _, f := range a.Files {
				switch {
				case f.Name == "parley.yaml":
					write(t, filepath.Join(root, "parley.yaml"), f.Data)
				case f.Name == "skill.md":
					write(t, filepath.Join(root, "skills", name+".md"), f.Data)
				case strings.HasSuffix(f.Name, ".reason"):
					reasons[strings.TrimSuffix(strings.TrimPrefix(f.Name, "bad/"), ".reason")] = strings.TrimSpace(string(f.Data))
				case strings.HasPrefix(f.Name, "ok/"):
					ok = append(ok, strings.TrimPrefix(f.Name, "ok/"))
				}
			}
			ws, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.MakeDirs(); err != nil {
				t.Fatal(err)
			}
			for _, f := range a.Files {
				for _, dir := range []string{"ok/", "bad/"} {
					if rest, found := strings.CutPrefix(f.Name, dir); found && strings.HasSuffix(rest, ".md") {
						sender, file, _ := strings.Cut(rest, "/")
						drop(t, ws, sender, file, string(f.Data))
					}
				}
			}
			if _, err := runIdle(t, ws, Options{}); err != nil {
				t.Fatal(err)
			}
			sent := map[string]int{}
			for _, m := range ok {
				sender, _, _ := strings.Cut(m, "/")
				sent[sender]++
			}
			for sender, n := range sent {
				if got := len(names(t, ws, sender, mailbox.Sent)); got != n {
					t.Errorf("%s sent %d messages, want its %d ok/ messages delivered", sender, got, n)
				}
			}
			for _, m := range ok {
				sender, file, _ := strings.Cut(m, "/")
				for _, r := range rejectedReasons(t, ws, sender) {
					if strings.HasPrefix(r, file+":") {
						t.Errorf("ok/%s was refused: %s", m, r)
					}
				}
			}
			for m, want := range reasons {
				sender, file, _ := strings.Cut(m, "/")
				found := ""
				for _, r := range rejectedReasons(t, ws, sender) {
					if strings.HasPrefix(r, file+":") {
						found = r
					}
				}
				if !strings.Contains(found, want) {
					t.Errorf("bad/%s: refused with %q, want a reason holding %q", m, found, want)
				}
			}
		})
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rejectedReasons returns the reasons of the files in an agent's rejected/.
func rejectedReasons(t *testing.T, ws *workspace.Workspace, agent string) []string {
	t.Helper()
	entries, err := ws.Mailbox(agent).List(mailbox.Rejected)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Reason)
	}
	return out
}
