package mailbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seedsDir holds the protocol documents users already have. It sits beside
// the checkout in CI and is absent from a user's clone.
const seedsDir = "../../shared/seeds"

var (
	fence       = regexp.MustCompile("(?m)^```[a-z]*\\n((?s:.*?))^```")
	topLevelKey = regexp.MustCompile(`(?m)^([a-z_]+):`)
)

// TestSeedExamples parses every example message in the reference
// protocols: each tag-first payload of the D&D protocols and each envelope
// of the pipeline schema must read as a message with its tag (or type) and
// every top-level field it shows.
func TestSeedExamples(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(seedsDir, "*.md"))
	if len(docs) == 0 {
		t.Skipf("no protocol documents in %s (it is beside the checkout in CI)", seedsDir)
	}
	seen := 0
	for _, doc := range docs {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllSubmatchIndex(src, -1) {
			block := src[m[2]:m[3]]
			line := bytes.Count(src[:m[2]], []byte("\n")) + 1
			first, _, _ := strings.Cut(string(block), "\n")
			isTag := tagLine.MatchString(first)
			if !isTag && first != "---" {
				continue
			}
			if first == "---" && !bytes.Contains(block, []byte("\ntype:")) {
				continue // the schema's outline, not an example
			}
			seen++
			name := fmt.Sprintf("%s:%d", filepath.Base(doc), line)
			t.Run(name, func(t *testing.T) {
				msg, err := Parse(block)
				if err != nil {
					t.Fatalf("%s: Parse = %v\n%s", name, err, block)
				}
				header := block
				if isTag {
					if want := strings.Trim(first, "[]"); msg.Tag != want {
						t.Errorf("Tag = %q, want %q", msg.Tag, want)
					}
					if typ, _ := msg.Header().Get("type"); typ != msg.Tag {
						t.Errorf("type = %q, want the tag", typ)
					}
					header = block[:len(block)-len(msg.Body)]
				}
				want := []string{}
				for _, k := range topLevelKey.FindAllSubmatch(header, -1) {
					want = append(want, string(k[1]))
				}
				got := msg.Payload().Keys()
				sort.Strings(want)
				sort.Strings(got)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("field keys (-want +got):\n%s\n%s", d, block)
				}
				// Written out and read back, nothing changes.
				again, err := Parse(msg.Bytes())
				if err != nil {
					t.Fatalf("Parse(Bytes()) = %v", err)
				}
				if d := cmp.Diff(summarize(msg), summarize(again)); d != "" {
					t.Errorf("after Bytes (-before +after):\n%s", d)
				}
			})
		}
	}
	if seen < 40 {
		t.Errorf("found %d example messages in %s, want the 40 or more the documents hold", seen, seedsDir)
	}
}
