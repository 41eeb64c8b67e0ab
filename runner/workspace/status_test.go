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

// TestAnsweredBy: an answer to a question is a reply to it from one of
// the agents that answer it, in its outbox or sent/; a reply from the
// one who asked (a nudge, by timeouts:) is none.
func TestAnsweredBy(t *testing.T) {
	ws, err := Init(t.TempDir(), AgentsNamed("gm", "lead"), nil)
	if err != nil {
		t.Fatal(err)
	}
	const q = "20261126-100000.000000Z-gm-aaaaaa"
	write := func(agent, state, id, from string) {
		t.Helper()
		text := "---\nid: " + id + "\nfrom: " + from + "\nto: x\nreply_to: " + q + "\n---\nbody\n"
		if err := os.WriteFile(ws.Mailbox(agent).Path(state, id+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gm", mailbox.Sent, "20261126-100001.000000Z-gm-bbbbbb", "gm")
	if got := ws.AnsweredBy(q, "gm", "gm", "lead"); got != "" {
		t.Errorf("AnsweredBy = %q with only the asker's nudge, want none", got)
	}
	write("lead", mailbox.Outbox, "20261126-100002.000000Z-lead-cccccc", "lead")
	if got := ws.AnsweredBy(q, "gm", "gm", "lead"); got != "20261126-100002.000000Z-lead-cccccc" {
		t.Errorf("AnsweredBy = %q, want lead's answer", got)
	}
}
