package checkpoint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repo makes a git repository with no identity configured, as on a fresh
// machine, and returns its path.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSave(t *testing.T) {
	top := repo(t)
	ws := filepath.Join(top, "table") // the workspace may sit inside a larger repository
	write(t, ws, map[string]string{
		"parley.yaml":                           "agents: [gm]\n",
		"campaigns/rot/story-state.md":          "# Story\n",
		"campaigns/rot/party/tilda-brannock.md": "| **Hit Points** | 12/12 |\n",
		"campaigns/rot/tmp/gm-state-delta.md":   "- NPC: x\n",
		"campaigns/rot/party/sel.md.4k2j9.tmp":  "being written\n", // a sheet replaced atomically, caught half way
		"plans/plan-1.md":                       "# Plan\n",
		"mailboxes/gm/inbox/20261121-x.md":      "hi\n",
		".parley/journal.jsonl":                 "{}\n",
		"notes.txt":                             "mine\n",
	})
	gitIn(t, top, "add", "table/notes.txt") // staged by the person: not ours to commit
	res, err := Save(context.Background(), ws, Options{Describe: func(changed []string) string { return "save: rot, " + changed[0] }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"campaigns/rot/party/tilda-brannock.md", "campaigns/rot/story-state.md", "plans/plan-1.md"}
	if d := cmp.Diff(want, res.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(res.Message, "save: rot, campaigns/rot/party/tilda-brannock.md\n\n- campaigns/rot/party/tilda-brannock.md\n") {
		t.Errorf("message = %q", res.Message)
	}
	committed := gitIn(t, top, "show", "--name-only", "--format=%an", "HEAD")
	if !strings.HasPrefix(committed, "parley\n") || strings.Contains(committed, "tmp/") || strings.Contains(committed, ".tmp") || strings.Contains(committed, "notes.txt") || strings.Contains(committed, "mailboxes") {
		t.Errorf("the commit holds:\n%s", committed)
	}
	if staged := gitIn(t, top, "diff", "--cached", "--name-only"); staged != "table/notes.txt\n" {
		t.Errorf("still staged = %q, want the person's file", staged)
	}

	// Nothing new: said so, and no commit.
	if _, err := Save(context.Background(), ws, Options{}); !errors.Is(err, ErrNothing) {
		t.Errorf("Save with nothing changed = %v", err)
	}
	// A removed file and an edited one; a message of our own.
	os.Remove(filepath.Join(ws, "plans/plan-1.md"))
	write(t, ws, map[string]string{"campaigns/rot/story-state.md": "# Story\nmore\n"})
	res, err = Save(context.Background(), ws, Options{Message: "before the boss fight"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"campaigns/rot/story-state.md", "plans/plan-1.md"}, res.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if log := gitIn(t, top, "log", "--format=%s"); log != "before the boss fight\nsave: rot, campaigns/rot/party/tilda-brannock.md\n" {
		t.Errorf("history = %q", log)
	}
}

func TestSaveNotRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	dir := t.TempDir()
	write(t, dir, map[string]string{"campaigns/rot/story-state.md": "x\n"})
	if _, err := Save(context.Background(), dir, Options{}); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Save outside a repository = %v, want ErrNotRepo", err)
	}
}

// TestSaveEnviron: git runs with the environment Options gives, not the
// process's: a command line run inside another program (a test) commits
// as its own environment says.
func TestSaveEnviron(t *testing.T) {
	top := repo(t)
	write(t, top, map[string]string{"parley.yaml": "agents: [gm]\n", "campaigns/rot/story-state.md": "# Story\n"})
	environ := append(os.Environ(), "GIT_AUTHOR_NAME=Given Author", "GIT_COMMITTER_NAME=Given Author")
	if _, err := Save(context.Background(), top, Options{Message: "given", Environ: environ}); err != nil {
		t.Fatal(err)
	}
	if author := gitIn(t, top, "log", "-1", "--format=%an"); author != "Given Author\n" {
		t.Errorf("the commit's author = %q, want the one the environment names", author)
	}
}

// TestSaveLeavesOut checks that editors' scratch files and files that may
// hold secrets, left among the campaign files, are never saved, new or
// tracked and changed or staged, and that the result and the message say
// so (a tryout: the team lead's saves committed a vim swap file and an
// API key in .env).
func TestSaveLeavesOut(t *testing.T) {
	top := repo(t)
	ws := filepath.Join(top, "table")
	write(t, ws, map[string]string{
		"campaigns/rot/story-state.md":  "# Story\n",
		"campaigns/rot/.gitignore":      "/tmp/\n",
		"campaigns/rot/party/.gitkeep":  "",
		"campaigns/rot/old.key":         "tracked before\n",
		"campaigns/rot/unchanged.pem":   "tracked before\n",
		"campaigns/rot/party/notes.txt": "\n",
	})
	gitIn(t, top, "add", "-A")
	gitIn(t, top, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "base")
	write(t, ws, map[string]string{
		"campaigns/rot/story-state.md":        "# Story\nMore.\n",
		"campaigns/rot/.story-state.md.swp":   "swap",
		"campaigns/rot/party/#tor.md#":        "autosave",
		"campaigns/rot/overview.md~":          "backup",
		"campaigns/rot/.env":                  "OPENAI_API_KEY=sk-live-123\n",
		"campaigns/rot/.env.local":            "KEY=1\n",
		"campaigns/rot/aws.creds":             "secret\n",
		"campaigns/rot/old.key":               "changed\n",
		"plans/staged.pem":                    "secret\n",
		"campaigns/rot/party/.#tor.md":        "lock",
		"campaigns/rot/party/tor-ashgrove.md": "# Tor\n",
	})
	gitIn(t, top, "add", "table/plans/staged.pem") // staged by hand: still not saved
	res, err := Save(context.Background(), ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"campaigns/rot/party/tor-ashgrove.md", "campaigns/rot/story-state.md"}, res.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	want := []Skipped{
		{"campaigns/rot/.env", ReasonSecret},
		{"campaigns/rot/.env.local", ReasonSecret},
		{"campaigns/rot/.story-state.md.swp", ReasonScratch},
		{"campaigns/rot/aws.creds", ReasonSecret},
		{"campaigns/rot/old.key", ReasonSecret},
		{"campaigns/rot/overview.md~", ReasonScratch},
		{"campaigns/rot/party/#tor.md#", ReasonScratch},
		{"campaigns/rot/party/.#tor.md", ReasonScratch},
		{"plans/staged.pem", ReasonSecret},
	}
	if d := cmp.Diff(want, res.LeftOut); d != "" {
		t.Errorf("left out (-want +got):\n%s", d)
	}
	if !strings.Contains(res.Message, "\n\nLeft out:\n- campaigns/rot/.env (may hold secrets)\n") {
		t.Errorf("message = %q, want it to list what was left out", res.Message)
	}
	committed := gitIn(t, top, "show", "--name-only", "--format=", "HEAD")
	if d := cmp.Diff("table/campaigns/rot/party/tor-ashgrove.md\ntable/campaigns/rot/story-state.md\n", committed); d != "" {
		t.Errorf("the commit holds (-want +got):\n%s", d)
	}

	// A message of one's own lists them under it too (a review: with -m
	// they were not, though the README said so).
	write(t, ws, map[string]string{"campaigns/rot/story-state.md": "# Story\nMore still.\n"})
	res, err = Save(context.Background(), ws, Options{Message: "before the boss fight\n"})
	if err != nil {
		t.Fatal(err)
	}
	msg := gitIn(t, top, "log", "-1", "--format=%B")
	if want := "before the boss fight\n\nLeft out:\n- campaigns/rot/.env (may hold secrets)\n"; !strings.HasPrefix(msg, want) || !strings.Contains(msg, "\n- plans/staged.pem (may hold secrets)\n") {
		t.Errorf("message = %q, want %q, then the others left out", msg, want)
	}

	// Nothing else changed: nothing to save, and what is left out is said.
	res, err = Save(context.Background(), ws, Options{})
	if !errors.Is(err, ErrNothing) || res == nil || len(res.LeftOut) != len(want) {
		t.Errorf("Save again = %+v, %v, want ErrNothing and %d left out", res, err, len(want))
	}
}
