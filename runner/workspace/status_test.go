package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// TestUnknownMailboxes: a mailbox left by an agent renamed in
// parley.yaml is found, with what waits in it (issue 11, item 16).
func TestUnknownMailboxes(t *testing.T) {
	ws := tableWorkspace(t)
	old := mailbox.Dir(filepath.Join(ws.Root, MailboxesDir, "tilda"))
	if err := old.Init(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old.Path(mailbox.Outbox, "a.md"), old.Path(mailbox.Inbox, "20261121-101500.000001Z-gm-000001.md"), old.Path(mailbox.Inbox, "20261121-101500.000002Z-gm-000002.md")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Neither a file nor a dot directory is a mailbox.
	if err := os.WriteFile(filepath.Join(ws.Root, MailboxesDir, "README"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws.Root, MailboxesDir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ws.UnknownMailboxes()
	if err != nil {
		t.Fatal(err)
	}
	want := []Unknown{{Path: filepath.Join(MailboxesDir, "tilda"), Outbox: 1, Inbox: 2}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("UnknownMailboxes() (-want +got):\n%s", d)
	}
}
