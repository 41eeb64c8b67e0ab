package textfile

import "testing"

// TestMergeAppended: two clones' journal entries that share a line
// ("**How I feel:** Tired.") are kept whole, one clone's then the
// other's; git's union merge kept the shared line once, at the end, and
// ran the first entry into the second's heading.
func TestMergeAppended(t *testing.T) {
	const base = "# Tor — Journal\n\n## 2026-11-28 — Zero\n\n**How I feel:** Curious.\n"
	const bob = "\n## 2026-11-29 — Bob's night\n\n**What I did:** Kept watch.\n\n**How I feel:** Tired.\n"
	const alice = "\n## 2026-11-29 — Alice's night\n\n**What I did:** Kept watch.\n\n**How I feel:** Tired.\n"
	for _, tt := range []struct {
		name               string
		base, ours, theirs string
		want               string
		ok                 bool
	}{
		{"both appended", base, base + bob, base + alice, base + bob + alice, true},
		{"only ours", base, base + bob, base, base + bob, true},
		{"only theirs", base, base, base + alice, base + alice, true},
		{"the same entry on both", base, base + bob, base + bob, base + bob, true},
		{"theirs has ours and more", base, base + bob, base + bob + alice, base + bob + alice, true},
		{"ours without a last newline", "a\n", "a\nb", "a\nc\n", "a\nb\nc\n", true},
		{"an earlier entry edited", base, "# Tor\n" + bob, base + alice, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MergeAppended([]byte(tt.base), []byte(tt.ours), []byte(tt.theirs))
			if ok != tt.ok || string(got) != tt.want {
				t.Errorf("MergeAppended() = %q, %v, want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
