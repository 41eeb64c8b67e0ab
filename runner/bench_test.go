package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// BenchmarkRoute measures routing 1 KiB messages 1 -> 1 from a backlog,
// durably (one sync per batch), per message.
func BenchmarkRoute(b *testing.B) {
	ws, err := workspace.Init(b.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
	if err != nil {
		b.Fatal(err)
	}
	ids := &mailbox.IDs{}
	body := strings.Repeat("x", 900) + "\n"
	box := ws.Mailbox("alice")
	for i := 0; i < b.N; i++ {
		id := ids.New("alice")
		data := fmt.Sprintf("---\nid: %s\nfrom: alice\nto: bob\ntype: BENCH\n---\n%s", id, body)
		tmp := box.Path(mailbox.Tmp, id+".md")
		if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, box.Path(mailbox.Outbox, id+".md")); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Open(ws, Options{UntilIdle: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(1024)
	b.ResetTimer()
	stats, err := r.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if stats.Routed != b.N {
		b.Fatalf("routed %d of %d", stats.Routed, b.N)
	}
}
