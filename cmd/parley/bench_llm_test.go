package main

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/internal/standin"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/llm"
	"github.com/parley-dev/parley/runner/workspace"
)

// gmTable is a workspace whose openai gm calls a stand-in replaying
// steps, with a campaign and one character sheet.
func gmTable(b *testing.B, steps ...standin.Step) *llm.Agent {
	b.Helper()
	s := standin.New(steps...)
	s.Cycle, s.Forget = true, true
	b.Cleanup(s.Close)
	dir := b.TempDir()
	ws, err := workspace.InitConfig(dir, "agents:\n  - name: gm\n    role: gm\n    driver: openai\n    openai: {base_url: \""+s.URL()+"\", model: m, max_retries: 0}\n  - {name: ann, role: human}\n")
	if err != nil {
		b.Fatal(err)
	}
	camp, err := campaigns.New(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	sheet := "# Mira Voss\n\n| | |\n|---|---|\n| **Level** | 2 |\n| **Hit Points** | 11/14 |\n\n## Equipment\n\n### Pack Contents\n- 3 torches\n"
	if err := os.WriteFile(camp.SheetPath("mira-voss"), []byte(sheet), 0o644); err != nil {
		b.Fatal(err)
	}
	a, err := openaiAgent(ws, "gm", llm.NewSession(""), nil, slog.New(slog.DiscardHandler), os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkToolRound is one message handled with one round of a tool
// call on a character sheet (update_character: the sheet read, changed
// and written durably; the call journaled, fsynced) then an answer,
// against a stand-in that answers at once. The same message answered
// without a tool call is timed after, as many times; tool-round-ms/op is
// the difference: what a tool round costs beyond a model call.
func BenchmarkToolRound(b *testing.B) {
	tool := gmTable(b,
		standin.Step{Calls: []standin.Call{{Name: "update_character", Args: `{"hp": 9}`}}},
		standin.Step{Content: "Mira winces."})
	plain := gmTable(b, standin.Step{Content: "Mira winces."})
	in := mailbox.New([]byte("The trap bites.\n"))
	in.Set("id", (&mailbox.IDs{}).New("ann"))
	in.Set("from", "ann")
	in.Set("to", "gm")
	for range 20 {
		if _, err := tool.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		if _, err := plain.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	start := time.Now()
	for b.Loop() {
		if _, err := tool.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		n++
	}
	withTool := time.Since(start)
	b.StopTimer()
	start = time.Now()
	for range n {
		if _, err := plain.Handle(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	without := time.Since(start)
	b.ReportMetric(float64((withTool-without).Microseconds())/1000/float64(n), "tool-round-ms/op")
}
