package skills

import (
	"strings"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// BenchmarkLoadBuiltin measures reading every shipped skill, as a runner
// does at start (target: under 20 ms).
func BenchmarkLoadBuiltin(b *testing.B) {
	for b.Loop() {
		lib, err := LoadLibrary("")
		if err != nil || len(lib.List()) != 3 {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck measures checking a 1 KiB message against the D&D
// protocol, which the router adds to each hop (target: under 20 us). The
// message is parsed once: parsing is part of routing with or without a
// protocol.
func BenchmarkCheck(b *testing.B) {
	lib, err := LoadLibrary("")
	if err != nil {
		b.Fatal(err)
	}
	set, err := lib.Set([]string{"dnd-team"})
	if err != nil {
		b.Fatal(err)
	}
	text := "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number: 005\nscene_slug: the-warehouse-heist\n\n## Scene\n" +
		strings.Repeat("The rain keeps falling on the warehouse roof. ", 20) + "\n"
	m, err := mailbox.Parse([]byte(text[:1024]))
	if err != nil {
		b.Fatal(err)
	}
	env := Envelope{
		Sender:     Party{Name: "gm", Roles: []string{"gm"}},
		Recipients: []Party{{Name: "aria", Roles: []string{"player"}}},
	}
	b.SetBytes(1024)
	for b.Loop() {
		if _, vs := set.Check(m, env); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
}
