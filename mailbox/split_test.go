package mailbox

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitAnswer(t *testing.T) {
	narrative := "---\nto: \"*\"\ntype: NARRATIVE\n---\nThe chapel floods.\n"
	secret := "---\nto: sel\ntype: GM_TO_PLAYER\n---\nOnly you see the door.\n"
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"one", narrative, []string{narrative}},
		{"record separator", narrative + "\x1e\n" + secret, []string{narrative, secret}},
		{"second header after a blank line", narrative + "\n" + secret, []string{narrative, secret}},
		{"blank lines between", narrative + "\n\n \n" + secret + "\n", []string{narrative, secret + "\n"}},
		{"three", narrative + "\n" + secret + "\n" + secret, []string{narrative, secret, secret}},
		{"empty body", "---\nto: a\n---\n" + secret, []string{"---\nto: a\n---\n", secret}},
		// Not a second message.
		{"rule in the body", "---\nto: a\n---\nOne.\n\n---\n\nStill one.\n", []string{"---\nto: a\n---\nOne.\n\n---\n\nStill one.\n"}},
		{"right after a line", narrative + secret, []string{narrative, secret}},
		{"setext heading, or a message right after", "---\nto: a\n---\nOne\n---\nto: b\n---\n", []string{"---\nto: a\n---\nOne\n", "---\nto: b\n---\n"}},
		{"a heading underlined, then text", "---\nto: a\n---\nTitle\n---\nText.\n", []string{"---\nto: a\n---\nTitle\n---\nText.\n"}},
		{"tag-first then a message", "[NARRATIVE]\n\nRain.\n\n" + secret, []string{"[NARRATIVE]\n\nRain.\n", secret}},
		{"both in one fence", "```markdown\n" + narrative + "\n" + secret + "```\n", []string{narrative, secret}},
		{"no to: nor type:", "---\nto: a\n---\nOne.\n\n---\nhp: 7\n---\nx\n", []string{"---\nto: a\n---\nOne.\n\n---\nhp: 7\n---\nx\n"}},
		{"quoted in a fence", "---\nto: a\n---\nHe wrote:\n\n```\n\n" + secret + "```\n", []string{"---\nto: a\n---\nHe wrote:\n\n```\n\n" + secret + "```\n"}},
		{"plain text quoting", "He wrote:\n\n" + secret, []string{"He wrote:\n\n" + secret}},
		{"only separators", "\x1e\n\n\x1e\n", nil},
		{"a type alone right after text", "---\nto: a\n---\nThe manifest:\n---\ntype: Opaque\n---\ndata\n", []string{"---\nto: a\n---\nThe manifest:\n---\ntype: Opaque\n---\ndata\n"}},
		{"a type alone after a blank line", "---\nto: a\n---\nOne.\n\n---\ntype: NOTE\n---\nTwo.\n", []string{"---\nto: a\n---\nOne.\n", "---\ntype: NOTE\n---\nTwo.\n"}},
		{"a letter quoted", "---\nto: a\n---\nThe letter reads:\n\n---\nto: whom it may concern\n---\nMeet me at dawn.\n", []string{"---\nto: a\n---\nThe letter reads:\n\n---\nto: whom it may concern\n---\nMeet me at dawn.\n"}},
		{"a message passed on", "---\nto: a\n---\nFrom b:\n\n---\nid: 20261129-040000.000000Z-b-abcdef\nfrom: b\nto: c\n---\nHi.\n", []string{"---\nto: a\n---\nFrom b:\n\n---\nid: 20261129-040000.000000Z-b-abcdef\nfrom: b\nto: c\n---\nHi.\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range SplitAnswer([]byte(tc.in)) {
				got = append(got, string(p))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("SplitAnswer(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func FuzzSplitAnswer(f *testing.F) {
	for _, s := range []string{
		"---\nto: a\ntype: NOTE\n---\none\n\n---\nto: b\n---\ntwo\n",
		"---\nto: a\n---\none\n\x1e\n[NOTE]\nto: a\n\ntwo\n",
		"---\nto: a\n---\n```\n\n---\nto: b\n---\n```\n",
		"plain\n\n---\nto: b\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		text := 0
		for _, p := range SplitAnswer(out) {
			if len(bytes.TrimSpace(p)) == 0 {
				t.Errorf("an empty part was kept: %q", p)
			}
			for _, line := range bytes.Split(p, []byte("\n")) {
				if string(bytes.TrimRight(line, "\r")) == FrameEnd {
					t.Errorf("part %q holds a separator line", p)
				}
			}
			text += len(bytes.TrimSpace(p))
		}
		if text > len(out) {
			t.Errorf("parts hold more text (%d) than the output (%d)", text, len(out))
		}
	})
}

// TestOpensSplitAnswer: with what the workspace knows (Workspace.Opens),
// a header opens a message only when its to: names agents that are not
// the sender alone, and a type alone is one of the protocol's: a GM
// showing the format of a player's answer (to: gm) is one message.
func TestOpensSplitAnswer(t *testing.T) {
	o := Opens{
		Recipient: func(n string) bool { return n == "*" || n == "sel" || n == "tor" },
		Type:      func(typ string) bool { return typ == "NARRATIVE" },
	}
	template := "---\nto: \"*\"\ntype: NARRATIVE\n---\nAnswer in this format:\n---\nto: gm\ntype: PLAYER_TO_GM\n---\nwhat you do\n"
	secret := "---\nto: sel\n---\nOnly you.\n"
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"a template to the sender", template, 1},
		{"a secret to a player", "---\nto: \"*\"\n---\nRain.\n" + secret, 2},
		{"a type of the protocol", "---\nto: sel\n---\nOne.\n\n---\ntype: NARRATIVE\n---\nTwo.\n", 2},
		{"a type of none", "---\nto: sel\n---\nOne.\n\n---\ntype: trap\n---\nTwo.\n", 1},
	} {
		if got := len(o.SplitAnswer([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: %d messages, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSplitAnswerManyRules: a long text of many '---' lines (YAML
// documents, a log) is read as a header at a few of them only: every
// one was parsed with all that followed it, minutes for a few
// megabytes.
func TestSplitAnswerManyRules(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[REPORT]\nto: ops\n\n")
	for range 20000 {
		b.WriteString("---\nkind: ConfigMap\n")
	}
	b.WriteString("---\nto: ops\n---\nlate\n")
	if got := len(SplitAnswer(b.Bytes())); got != 1 {
		t.Errorf("%d messages, want 1: a header past the first tries is not looked for", got)
	}
}
