package workspace

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// TestResolveOwnID: a program acting as an agent finds a message among
// the agent's own alone, and its errors name no other mailbox's message
// nor where one lies; ResolveID and Received, for a person, look
// everywhere and say where.
func TestResolveOwnID(t *testing.T) {
	ws := tableWorkspace(t)
	put := func(agent, state, id string) {
		t.Helper()
		p := ws.Mailbox(agent).Path(state, mailbox.FileName(id))
		if err := os.WriteFile(p, []byte("---\nid: "+id+"\nfrom: gm\n---\nx\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		gms    = "20261129-080000.000000Z-bram-f15f14"
		own1   = "20261129-090000.000000Z-gm-aaaaaa"
		own2   = "20261129-090100.000000Z-gm-bbbbbb"
		mySent = "20261129-091000.000000Z-aria-cccccc"
	)
	put("gm", mailbox.Inbox, gms)
	put("aria", mailbox.Inbox, own1)
	put("aria", mailbox.Done, own2)
	put("aria", mailbox.Sent, mySent)
	received := []string{mailbox.Inbox, mailbox.Cur, mailbox.Done, mailbox.Dead}

	tests := []struct {
		arg, want, err string
	}{
		{"bbbbbb", own2, ""},
		{"2026", "", `"2026" could be any of 2 messages: ` + own1 + ", " + own2},
		{"f15f14", "", `"f15f14": not among the messages of aria (in its inbox/, cur/, done/, dead/)`},
		{"cccccc", "", `"cccccc": not among the messages of aria (in its inbox/, cur/, done/, dead/)`},
		{gms, gms, ""}, // a full id is taken as it is: Held says it is not hers
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := ws.ResolveOwnID(tt.arg, "aria", received...)
			if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
				t.Errorf("ResolveOwnID(%q) = %q, %v; want %q, %s", tt.arg, got, err, tt.want, tt.err)
			}
		})
	}

	if c, err := ws.Held(own2, "aria", received...); err != nil || c.State != mailbox.Done || c.Agent != "aria" {
		t.Errorf("Held(own) = %+v, %v; want aria's copy in done/", c, err)
	}
	_, err := ws.Held(gms, "aria", received...)
	if !errors.Is(err, ErrMessageNotFound) || strings.Contains(err.Error(), "mailboxes/gm") || strings.Contains(err.Error(), "it is in") {
		t.Errorf("Held(another's) = %v, want not found, saying nothing of gm's mailbox", err)
	}
	_, err = ws.Held(mySent, "aria", received...)
	if want := "it is in mailboxes/aria/sent/" + mailbox.FileName(mySent); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Held(her sent) = %v, want it to end %q", err, want)
	}
	// A person at the workspace: every mailbox, and where.
	if _, err := ws.ResolveID("2026"); err == nil || !strings.Contains(err.Error(), gms) {
		t.Errorf("ResolveID(2026) = %v, want every mailbox's named, the gm's too", err)
	}
	if _, err := ws.Received(gms, "aria", received...); err == nil || !strings.Contains(err.Error(), "it is in mailboxes/gm/inbox/") {
		t.Errorf("Received(another's) = %v, want it to say where it is", err)
	}
}
