package workspace

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

// TestCheckConcurrent calls Check from many goroutines at once, as the
// router and the openai agents' drivers do: each verdict is the one a
// lone call gives. Run with -race, it shows Check shares no mutable
// state between calls (the protocol is read once, under a sync.Once;
// the rest is read from parley.yaml's Config, which nothing changes, and
// from files).
func TestCheckConcurrent(t *testing.T) {
	ws := tableWorkspace(t)
	type input struct{ sender, text string }
	inputs := []input{
		{"gm", "[NARRATIVE]\n\nThe door creaks.\n"},
		{"aria", "[NARRATIVE]\n\nA player may not narrate.\n"},
		{"gm", "---\nto: nobody\n---\nhi\n"},
		{"aria", "---\nto: gm\n---\nI look around.\n"},
		{"gm", "[GM_TO_PLAYER]\ncharacter: corwin-voss\n\nWhat do you do?\n"},
	}
	want := make([]*Verdict, len(inputs))
	for i, in := range inputs {
		v, err := ws.Check(Input{Sender: in.sender, Message: parse(t, in.text)})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v
	}
	// The same parsed messages for every goroutine: Check only reads
	// its input.
	msgs := make([]*mailbox.Message, len(inputs))
	for i, in := range inputs {
		msgs[i] = parse(t, in.text)
	}
	fresh := &Workspace{Root: ws.Root, Config: ws.Config} // its protocol not read yet
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(inputs))
	for g := range 8 {
		wg.Go(func() {
			for k := range len(inputs) * 4 {
				i := (g + k) % len(inputs)
				v, err := fresh.Check(Input{Sender: inputs[i].sender, Message: msgs[i]})
				if err != nil {
					errs <- err
					return
				}
				if d := cmp.Diff(want[i], v, cmp.Comparer(func(a, b *Verdict) bool {
					return fmt.Sprint(a.Recipients, a.Refusal, a.Warnings, a.Type) == fmt.Sprint(b.Recipients, b.Refusal, b.Warnings, b.Type)
				})); d != "" {
					errs <- fmt.Errorf("input %d: verdict differs (-alone +concurrent):\n%s", i, d)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
