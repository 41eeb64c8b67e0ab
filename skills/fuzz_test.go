package skills

import (
	"bytes"
	"testing"

	"github.com/parley-dev/parley/mailbox"
)

// FuzzParse reads arbitrary skill documents: parley must never panic on
// one, every problem must point at a line of the document, and no type may
// be listed twice.
func FuzzParse(f *testing.F) {
	f.Add([]byte(newProtocol))
	f.Add([]byte("---\nname: x\ndescription: y\n---\n### `[A]`\n\n| Field | Required |\n|---|---|\n| `a` | Yes |\n\n**Hard rule:** `a > 1` or `b: c` requires `d: e`.\n"))
	f.Add([]byte("# no frontmatter\n\n```json\n{\"to\": \"x\", \"message\": {\"type\": \"ping_request\", \"request_id\": \"1\"}}\n```\n"))
	f.Add([]byte("---\nname: x\n---\n| Tag | Sender | Recipient |\n|---|---|---|\n| `[A]` | gm | all (broadcast) |\n"))
	f.Add([]byte("## A → B\n\n```ts\ninterface P { type: 'p'; x?: 'a' | 'b'; y: Array<{ z: string;\n }>; }\ninterface Q {\n```\n"))
	f.Add([]byte("Values of `x`:\n\n- `a`\n- `b`\n\n### `[T]`\n\n| Field | Required | Description |\n|---|---|---|\n| `x` | Yes | (`a`/`b`) |\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Parse("fuzz.md", data)
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, p := range s.Problems {
			if p.Line < 1 || p.Line > lines {
				t.Errorf("problem on line %d of a %d-line document: %v", p.Line, lines, p)
			}
		}
		seen := map[string]bool{}
		for _, ty := range s.Types {
			if seen[ty.Name] {
				t.Errorf("type %s listed twice", ty.Name)
			}
			seen[ty.Name] = true
		}
	})
}

// FuzzCheck checks arbitrary message files against the shipped protocols:
// validation must never panic, and every violation must name a reason.
func FuzzCheck(f *testing.F) {
	lib, err := LoadLibrary("")
	if err != nil {
		f.Fatal(err)
	}
	set, err := lib.Set([]string{"dnd-team", "dev-pipeline", "team-requests"})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_number: 5\nscene_slug: x\n\nbody\n",
		"[AWAIT_PLAYERS]\ncharacters:\n  - name: a\n    request_type: X\nscene_number: 1\n",
		"[SESSION_COMMAND]\ncommand: start\n",
		"---\ntype: review_verdict\nsignal: pass\ncritical_count: 3\nac_coverage:\n  AC1: PASS\n---\n",
		"---\ntype: audit_verdict\nsignal: pass\nsecurity_findings: [1, 2]\nbuild_status: fail\n---\n",
		"---\ntype: audit_verdict\nsecurity_findings:\n  critical: {a: b}\n---\n",
		"---\ntype: shutdown_response\nrequest_id: [x]\napprove: maybe\n---\n",
		"[UNKNOWN]\n\nhi\n",
	} {
		f.Add([]byte(seed), "player", true, 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, role string, broadcast bool, phase int) {
		m, err := mailbox.Parse(data)
		if err != nil {
			return
		}
		env := Envelope{
			Sender:     Party{Name: "a", Roles: []string{role}},
			Recipients: []Party{{Name: "b", Roles: []string{"gm"}}, {Name: "c"}},
			Broadcast:  broadcast,
			Phase:      phase % 4,
		}
		_, vs := set.Check(m, env)
		for _, v := range vs {
			if v.Reason == "" {
				t.Errorf("violation without a reason: %+v", v)
			}
		}
	})
}
