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
// durably (one sync per batch), per message: files named by their id, as
// parley send writes them, and files written by hand, without an id.
func BenchmarkRoute(b *testing.B) {
	b.Run("id-named", func(b *testing.B) { benchmarkRoute(b, false) })
	b.Run("hand-written", func(b *testing.B) { benchmarkRoute(b, true) })
}

func benchmarkRoute(b *testing.B, handWritten bool) {
	ws, err := workspace.Init(b.TempDir(), workspace.AgentsNamed("alice", "bob"), nil)
	if err != nil {
		b.Fatal(err)
	}
	ids := &mailbox.IDs{}
	body := strings.Repeat("x", 900) + "\n"
	box := ws.Mailbox("alice")
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("note-%d.md", i)
		data := "---\nto: bob\ntype: BENCH\n---\n" + body
		if !handWritten {
			id := ids.New("alice")
			name = id + ".md"
			data = fmt.Sprintf("---\nid: %s\nfrom: alice\nto: bob\ntype: BENCH\n---\n%s", id, body)
		}
		tmp := box.Path(mailbox.Tmp, name)
		if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, box.Path(mailbox.Outbox, name)); err != nil {
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
