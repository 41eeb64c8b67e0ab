package workspace

import (
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// BenchmarkCheck measures the whole check the router makes of each
// message (sender, hops, recipients, routes, the dnd-team protocol) for a
// 1 KiB [GM_TO_PLAYER] (target: under 20 us a hop). The message is parsed
// once: parsing is part of routing with or without a check.
func BenchmarkCheck(b *testing.B) {
	ws := fuzzWorkspace(b)
	text := "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: \"005\"\nscene_slug: the-warehouse-heist\n\n## Scene\n" +
		strings.Repeat("The rain keeps falling on the warehouse roof. ", 20) + "\n"
	m, err := mailbox.Parse([]byte(text[:1024]))
	if err != nil {
		b.Fatal(err)
	}
	in := Input{File: "m.md", Sender: "gm", Message: m, Sent: func(string) bool { return false }}
	if _, err := ws.Protocol(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	for b.Loop() {
		if v, err := ws.Check(in); err != nil || !v.Accepted() {
			b.Fatal(err, v.Refusal)
		}
	}
}
