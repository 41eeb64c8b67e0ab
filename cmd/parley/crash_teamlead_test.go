package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// TestCrashTeamLead kills `parley run` with SIGKILL, again and again,
// while the built-in team lead fans [AWAIT_PLAYERS] out to three players
// and joins their answers, then lets a last runner finish. The team lead
// keeps nothing in memory that the mailboxes do not hold: every await is
// answered by exactly one [PLAYER_RESPONSES], carrying every player's
// answer.
func TestCrashTeamLead(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("kills runners while the team lead joins answers")
	}
	root := t.TempDir()
	cfg := "skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"
	players := []string{"aria", "bram", "cade"}
	for _, p := range players {
		cfg += fmt.Sprintf("  - {name: %s, role: player, driver: command, run: [sh, player.sh]}\n", p)
	}
	player := "cat >/dev/null\n[ \"$PARLEY_TYPE\" = GM_TO_PLAYER ] || exit 0\nsleep 0.05\necho \"$PARLEY_AGENT acts.\"\n"
	for name, data := range map[string]string{"parley.yaml": cfg, "player.sh": player} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	// A table has its campaign: without one the team lead's start fails,
	// and each run exits 5 saying so.
	if _, err := campaigns.New(root, "the-inn"); err != nil {
		t.Fatal(err)
	}
	const awaits = 12
	ids := &mailbox.IDs{}
	var sent []string
	for range awaits {
		text := "[AWAIT_PLAYERS]\nscene_number: \"001\"\nscene_slug: the-inn\ncharacters:\n"
		for _, p := range players {
			text += "  - {name: " + p + ", request_type: QUICK_REACTION, scene_context: The inn., just_happened: A door slams., request: React.}\n"
		}
		m, err := mailbox.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		id := ids.New("gm")
		m.Set("id", id)
		m.Set("from", "gm")
		if _, err := ws.Mailbox("gm").Send(m); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, id)
	}
	joins := func() int { n, _ := ws.Mailbox("gm").Count(mailbox.Inbox); return n }
	answers := func() int { n, _ := ws.Mailbox("lead").Count(mailbox.Done); return n }

	// Kill at moments of every kind: prompts going out, answers coming
	// in, joins going out.
	killRuns(t, root, 12, func(i int) (func() int, int) { return []func() int{answers, joins}[i%2], 1 + i%3 },
		func() bool { return joins() >= awaits })
	out, err := exec.Command("parley", "-C", root, "run", "--until-idle", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("the last run: %v\n%s", err, out)
	}

	answered := map[string]int{}
	entries, err := ws.Mailbox("gm").List(mailbox.Inbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mailbox.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if workspace.TypeOf(m) != "PLAYER_RESPONSES" {
			continue
		}
		re, _ := m.Header().Get("reply_to")
		answered[re]++
		text := string(data)
		if strings.Contains(text, "missing:") || strings.Count(text, "- character: ") != len(players) {
			t.Errorf("the join of %s does not carry every answer:\n%s", re, text)
		}
	}
	for _, id := range sent {
		if answered[id] != 1 {
			t.Errorf("await %s: %d joins, want exactly one", id, answered[id])
		}
	}
}
