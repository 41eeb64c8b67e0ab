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

// BenchmarkRoute measures routing 1 KiB messages from a backlog, durably
// (one sync per batch), per message: files named by their id, as parley
// send writes them, and files written by hand, without an id; 1 -> 1, and
// 4 -> 1 as parley bench floods an inbox (senders' messages are delivered
// at once, each sender's in order).
func BenchmarkRoute(b *testing.B) {
	b.Run("id-named", func(b *testing.B) { benchmarkRoute(b, false, 1) })
	b.Run("hand-written", func(b *testing.B) { benchmarkRoute(b, true, 1) })
	b.Run("4-senders/id-named", func(b *testing.B) { benchmarkRoute(b, false, 4) })
	b.Run("4-senders/hand-written", func(b *testing.B) { benchmarkRoute(b, true, 4) })
}

func benchmarkRoute(b *testing.B, handWritten bool, senders int) {
	agents := []string{"bob"}
	for s := range senders {
		agents = append(agents, fmt.Sprintf("sender%d", s))
	}
	if senders == 1 {
		agents = []string{"alice", "bob"}
	}
	ws, err := workspace.Init(b.TempDir(), workspace.AgentsNamed(agents...), nil)
	if err != nil {
		b.Fatal(err)
	}
	ids := &mailbox.IDs{}
	body := strings.Repeat("x", 900) + "\n"
	for i := 0; i < b.N; i++ {
		from := agents[1+i%senders] // turn by turn, as the bench's senders write
		box := ws.Mailbox(from)
		name := fmt.Sprintf("note-%d.md", i)
		data := "---\nto: bob\ntype: BENCH\n---\n" + body
		if !handWritten {
			id := ids.New(from)
			name = id + ".md"
			data = fmt.Sprintf("---\nid: %s\nfrom: %s\nto: bob\ntype: BENCH\n---\n%s", id, from, body)
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
