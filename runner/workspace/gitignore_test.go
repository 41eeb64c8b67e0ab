package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/parley-dev/parley/campaigns/checkpoint"
	"github.com/parley-dev/parley/mailbox"
)

// TestGitignoreEditorScratch checks the .gitignore a workspace gets
// against mailbox.IsEditorScratch, which it restates by hand (a review:
// the two could drift): every example of a name IsEditorScratch accepts
// is ignored anywhere in the workspace, or, for vim's write probe, in the
// mailboxes. An example added to IsEditorScratch's kinds belongs in this
// table, and its pattern in gitignore.
func TestGitignoreEditorScratch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const (
		anywhere  = "anywhere"
		mailboxes = "mailboxes"
		// vim's later probes (5036, 5159, ...) live for a moment only,
		// when 4913 is taken: not in the .gitignore (see gitignore).
		none = "none"
	)
	tests := []struct {
		name  string
		where string
	}{
		{"overview.md~", anywhere},
		{"~", anywhere},
		{"#tor-ashgrove.md#", anywhere},
		{"##", anywhere},
		{".#tor-ashgrove.md", anywhere},
		{".story-state.md.swp", anywhere},
		{"story-state.md.swp", anywhere},
		{".story-state.md.swo", anywhere},
		{".story-state.md.swn", anywhere},
		{".story-state.md.swx", anywhere},
		{".story-state.md.swpx", anywhere},
		{"4913", mailboxes},
		{"5036", none},
	}
	git := gitignoreRepo(t)
	places := map[string][]string{
		anywhere:  {"", "campaigns/the-bell/", "campaigns/the-bell/party/", "plans/", "mailboxes/gm/outbox/"},
		mailboxes: {"mailboxes/gm/outbox/", "mailboxes/gm/inbox/"},
	}
	for _, tt := range tests {
		if !mailbox.IsEditorScratch(tt.name) {
			t.Errorf("IsEditorScratch(%q) = false: not an example of it", tt.name)
			continue
		}
		for _, at := range places[tt.where] {
			path := filepath.FromSlash(at + tt.name)
			err := git("check-ignore", "-q", "--no-index", "--", path)
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee) && ee.ExitCode() == 1:
				t.Errorf("%s is not ignored by the .gitignore a workspace gets (mailbox.IsEditorScratch(%q) = true)", path, tt.name)
			case err != nil:
				t.Fatalf("git check-ignore %s: %v", path, err)
			}
		}
	}
}

// TestGitignoreSecrets checks the .gitignore a workspace gets against
// checkpoint.MayHoldSecrets, the one list of names that may hold
// secrets: every .env file it names is ignored anywhere in the
// workspace, and no name it lets a checkpoint save is ignored (`.env.*`
// ignored .env.example, the template of the variables people commit on
// purpose). *.pem, *.key and *.creds are left to the checkpoint: git
// does not ignore them (a person may commit a public key by hand).
func TestGitignoreSecrets(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tests := []struct {
		name            string
		secret, ignored bool
	}{
		{".env", true, true},
		{".env.local", true, true},
		{".env.production", true, true},
		{".env.example", false, false},
		{".env.sample", false, false},
		{".env.template", false, false},
		{"server.pem", true, false},
		{"old.key", true, false},
		{"aws.creds", true, false},
		{"env.example", false, false},
		{"story-state.md", false, false},
	}
	inTable := map[string]bool{}
	for _, tt := range tests {
		inTable[tt.name] = true
	}
	for _, name := range checkpoint.EnvExamples {
		if !inTable[name] {
			t.Errorf("checkpoint.EnvExamples has %q, not in this test's table", name)
		}
	}
	git := gitignoreRepo(t)
	for _, tt := range tests {
		if got := checkpoint.MayHoldSecrets(tt.name); got != tt.secret {
			t.Errorf("checkpoint.MayHoldSecrets(%q) = %v, want %v", tt.name, got, tt.secret)
		}
		for _, at := range []string{"", "campaigns/the-bell/", "plans/"} {
			path := filepath.FromSlash(at + tt.name)
			err := git("check-ignore", "-q", "--no-index", "--", path)
			var ee *exec.ExitError
			ignored := err == nil
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
				t.Fatalf("git check-ignore %s: %v", path, err)
			}
			if ignored != tt.ignored {
				t.Errorf("%s ignored by the .gitignore a workspace gets = %v, want %v (checkpoint.MayHoldSecrets(%q) = %v)", path, ignored, tt.ignored, tt.name, tt.secret)
			}
		}
	}
}

// gitignoreRepo makes a git repository of a workspace's .gitignore and
// .gitattributes (writeGitFiles), and returns a function that
// runs git in it, the person's own configuration (its excludes) left
// out: they are not the workspace's.
func gitignoreRepo(t *testing.T) func(args ...string) error {
	t.Helper()
	dir := t.TempDir()
	if err := writeGitFiles(dir); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		return cmd.Run()
	}
	if err := git("init", "-q"); err != nil {
		t.Fatal(err)
	}
	return git
}
