package delta_test

import (
	"fmt"
	"testing"

	"github.com/parley-dev/parley/campaigns/delta"
)

func TestZZShow(t *testing.T) {
	story, party := benchDocs(&testing.B{})
	d, _ := delta.Parse("s", []byte(benchStoryDelta))
	out, res := delta.ApplyStory(story, d)
	fmt.Println(string(out))
	for _, c := range res.Applied { fmt.Println(c) }
	d, _ = delta.Parse("p", []byte(benchPartyDelta))
	out, res = delta.ApplyParty(party, d)
	fmt.Println(string(out))
	for _, c := range res.Applied { fmt.Println(c) }
}
