package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// newSyncer returns a Syncer for the filesystem holding dir.
func newSyncer(t *testing.T, dir string) *mailbox.Syncer {
	t.Helper()
	s, err := mailbox.NewSyncer(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFollowJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	s := newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if err := j.append([]workspace.Entry{{ID: "first", Outcome: workspace.Delivered}}, s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan error)
	go func() {
		done <- workspace.FollowJournal(ctx, path, func(e workspace.Entry) error { got <- e.ID; return nil })
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case id := <-got:
			if id != want {
				t.Errorf("followed entry %q, want %q", id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("entry %q never arrived", want)
		}
	}
	expect("first")
	// A line written in two parts is read once it is whole.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"sec`)
	f.Close()
	if err := j.append([]workspace.Entry{{ID: "third"}}, s); err != nil {
		t.Fatal(err)
	}
	// The half line and "third" were joined into one bad line: skipped.
	if err := j.append([]workspace.Entry{{ID: "fourth"}}, s); err != nil {
		t.Fatal(err)
	}
	expect("fourth")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("FollowJournal = %v, want nil when cancelled", err)
	}
}

func TestOpenJournalEndsCutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a"}`+"\n"+`{"id":"b`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSyncer(t, filepath.Dir(path))
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.append([]workspace.Entry{{ID: "c"}}, s); err != nil {
		t.Fatal(err)
	}
	j.close()
	var ids []string
	err = workspace.ReadJournal(path, func(e workspace.Entry) error { ids = append(ids, e.ID); return nil })
	if len(ids) != 2 || ids[0] != "a" || ids[1] != "c" {
		t.Errorf("entries after a cut line = %v, want [a c]", ids)
	}
	if err == nil {
		t.Errorf("ReadJournal did not report the cut line")
	}
}
