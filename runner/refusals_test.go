package runner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// A program that writes to an agent that does not exist, and, told by
// parley's refusal notice, writes to boss instead, saying what it was
// told.
const mendsScript = `msg=$(cat)
if [ "$PARLEY_TYPE" = message_refused ]; then
  field() { printf '%s\n' "$msg" | sed -n "/^---\$/,/^---\$/s/^$1: *//p" | head -n 1; }
  printf -- '---\nto: boss\n---\nmended: %s; field %s; line %s; notice %s\n' "$(field refused)" "$(field field)" "$(field line)" "$(field hops)"
else
  printf -- '---\nto: zed\n---\nhello?\n'
fi
`

// TestRefusedNotice: a program whose message is refused is told, by a
// notice from parley in its inbox that names the refused file, the field,
// the line and the reason, and is woken for it, so it can send the
// message again, mended; one that keeps sending refused messages is told
// MaxRefusedNotices times in a row, then no more; people and built-in
// handlers are not sent notices.
func TestRefusedNotice(t *testing.T) {
	t.Parallel()
	t.Run("mended", func(t *testing.T) {
		ws := newWorkspace(t, "boss")
		script(t, ws, "mends.sh", mendsScript)
		ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: prog, driver: command, run: [./mends.sh]}\n")
		send(t, ws, "boss", "prog", "write to a friend", "thread", "t-1")
		stats, err := runIdle(t, ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if stats.Rejected != 1 {
			t.Errorf("stats = %+v, want 1 rejected", stats)
		}
		rejected := names(t, ws, "prog", mailbox.Rejected)
		if len(rejected) != 1 {
			t.Fatalf("prog's rejected/ = %v, want the refused file, kept", rejected)
		}
		want := []string{"mended: mailboxes/prog/rejected/" + rejected[0] + "; field to; line 3; notice 1"}
		if d := cmp.Diff(want, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
			t.Errorf("boss's inbox (-want +got):\n%s", d)
		}
		// The notice was handed to the program, then filed in done/.
		var notice *mailbox.Message
		for _, n := range names(t, ws, "prog", mailbox.Done) {
			m := readMessage(t, ws.Mailbox("prog").Path(mailbox.Done, n))
			if typ, _ := m.Header().Get("type"); typ == workspace.RefusedNotice {
				notice = m
			}
		}
		if notice == nil {
			t.Fatal("no refusal notice in prog's done/")
		}
		h := notice.Header()
		for k, want := range map[string]string{"from": workspace.Runner, "to": "prog", "thread": "t-1", "field": "to", "line": "3", "hops": "1", "reason": `unknown agent "zed" (agents: boss, prog)`} {
			if got, _ := h.Get(k); got != want {
				t.Errorf("notice %s: = %q, want %q", k, got, want)
			}
		}
		if !strings.Contains(string(notice.Body), "to: zed") {
			t.Errorf("the notice does not quote the refused message:\n%s", notice.Body)
		}
		// The journal tells of the notice, and the refusal says prog is told.
		var told, refused bool
		if err := (&workspace.JournalFilter{}).Read(ws.JournalPath(), func(e workspace.Entry, _ []byte) error {
			told = told || e.Type == workspace.RefusedNotice && e.Outcome == workspace.Delivered
			refused = refused || e.Outcome == workspace.Refused && strings.Contains(e.Note, "prog is told")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !told || !refused {
			t.Errorf("journal: notice delivered %v, refusal notes the notice %v; want both", told, refused)
		}
	})

	t.Run("never mended", func(t *testing.T) {
		ws := newWorkspace(t, "boss")
		script(t, ws, "lost.sh", "cat >/dev/null; printf -- '---\\nto: zed\\n---\\nhello?\\n'\n")
		ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: lost, driver: command, run: [./lost.sh]}\n")
		send(t, ws, "boss", "lost", "write to a friend")
		stats, err := runIdle(t, ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The first refusal, then one for each answer to a notice.
		if want := 1 + workspace.MaxRefusedNotices; stats.Rejected != want {
			t.Errorf("stats = %+v, want %d rejected", stats, want)
		}
		var hops []string
		for _, n := range names(t, ws, "lost", mailbox.Done) {
			m := readMessage(t, ws.Mailbox("lost").Path(mailbox.Done, n))
			if from, _ := m.Header().Get("from"); from == workspace.Runner {
				h, _ := m.Header().Get("hops")
				hops = append(hops, h)
			}
		}
		if d := cmp.Diff([]string{"1", "2", "3"}, hops); d != "" {
			t.Errorf("notices handled by lost, by hops: (-want +got):\n%s", d)
		}
		if got := names(t, ws, "lost", mailbox.Inbox); len(got) != 0 {
			t.Errorf("lost's inbox = %v, want nothing left", got)
		}
	})

	t.Run("not text", func(t *testing.T) {
		// The refused file is not quoted: the notice is itself a message
		// the program can be handed.
		ws := newWorkspace(t, "boss")
		script(t, ws, "garble.sh", "cat >/dev/null; printf 'GIF89a\\000\\001\\002\\003'\n")
		ws = reconfigure(t, ws, "agents:\n  - boss\n  - {name: garbler, driver: command, run: [./garble.sh]}\n")
		send(t, ws, "boss", "garbler", "draw me something")
		stats, err := runIdle(t, ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 + workspace.MaxRefusedNotices; stats.Rejected != want {
			t.Errorf("stats = %+v, want %d rejected", stats, want)
		}
		if dead := names(t, ws, "garbler", mailbox.Dead); len(dead) != 0 {
			t.Errorf("garbler's dead/ = %v, want every notice handled", dead)
		}
		var said bool
		for _, b := range bodies(t, ws, "garbler", mailbox.Done) {
			said = said || strings.Contains(b, "The refused file is not text: it is not quoted here.")
		}
		if !said {
			t.Errorf("no notice in garbler's done/ says the file is not quoted")
		}
	})

	t.Run("quoted, cut between characters", func(t *testing.T) {
		var b strings.Builder
		quote(&b, []byte(strings.Repeat("a", quoteLimit-1)+"é and more"))
		if !utf8.ValidString(b.String()) || strings.Contains(b.String(), "é") || !strings.Contains(b.String(), "(its first 8 KiB)") {
			t.Errorf("quote of a long file cut inside a character: valid %v, tail %q", utf8.ValidString(b.String()), b.String()[len(b.String())-20:])
		}
	})

	t.Run("plain text", func(t *testing.T) {
		// An answer without a header, to the notice, goes where the
		// refused message was going, not to parley.
		ws := newWorkspace(t, "boss")
		script(t, ws, "plain.sh", `cat >/dev/null
if [ "$PARLEY_TYPE" = message_refused ]; then echo "Sorry: from me this time."
else printf -- '---\nfrom: someone\nto: boss\n---\nforged\n'; fi
`)
		ws = reconfigure(t, ws, "agents:\n  - boss\n  - someone\n  - {name: plain, driver: command, run: [./plain.sh]}\n")
		send(t, ws, "boss", "plain", "hello")
		stats, err := runIdle(t, ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if stats.Rejected != 1 {
			t.Errorf("stats = %+v, want the forged message refused, and only it", stats)
		}
		if d := cmp.Diff([]string{"Sorry: from me this time."}, bodies(t, ws, "boss", mailbox.Inbox)); d != "" {
			t.Errorf("boss's inbox (-want +got):\n%s", d)
		}
	})

	t.Run("a person", func(t *testing.T) {
		ws := newWorkspace(t, "boss", "you")
		drop(t, ws, "you", "bad.md", "---\nto: zed\n---\nhello?\n")
		stats := routeAll(t, ws)
		if stats.Rejected != 1 {
			t.Errorf("stats = %+v, want 1 rejected", stats)
		}
		if got := names(t, ws, "you", mailbox.Inbox); len(got) != 0 {
			t.Errorf("you's inbox = %v, want no notice: a person reads rejected/ and parley status", got)
		}
	})
}
