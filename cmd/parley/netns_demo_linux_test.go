package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/examples"
	"github.com/parley-dev/parley/internal/longtest"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// The D&D table of examples/dnd split over two hosts: the person's seat
// (you, Mira, the game master, the narrator, the team lead and the
// built-ins) in one workspace, the AI players Tor, Wren and Sel in
// another.
const (
	demoCommon = `skills: [dnd-team, team-requests]
phase: 2
campaign: the-sunken-bell
routes:
  - match: {type: [ASK_PLAYER, RELAY_TO_HUMAN, SESSION_END, NARRATIVE]}
    cc: [you]
`
	demoSeatAgents = `git: auto
stop_on: [SESSION_END]
bridge: {name: seat, url: nats://10.77.1.1:4222}
agents:
  - {name: gm, driver: command, run: [sh, agents/gm.sh]}
  - {name: narrator, driver: command, run: [sh, agents/narrator.sh]}
  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}
  - name: you
  - {name: mira, role: human, character: mira-quickfoot, driver: command, run: [sh, agents/mira.sh]}
  - {name: tor, role: player, character: tor-ashgrove, remote: players}
  - {name: wren, role: player, character: wren-halloway, remote: players}
  - {name: sel, role: player, character: sel-varga, remote: players}
  - {name: scribe, driver: builtin, handler: scribe}
  - {name: journal, driver: builtin, handler: journal}
  - {name: tools, driver: builtin, handler: tools}
`
	demoPlayersAgents = `bridge: {name: players, url: nats://10.77.2.1:4222}
agents:
  - {name: gm, remote: seat}
  - {name: narrator, remote: seat}
  - {name: lead, role: team-lead, remote: seat}
  - {name: you, remote: seat}
  - {name: mira, role: human, character: mira-quickfoot, remote: seat}
  - {name: tor, role: player, character: tor-ashgrove, driver: command, run: [sh, agents/player.sh]}
  - {name: wren, role: player, character: wren-halloway, driver: command, run: [sh, agents/player.sh]}
  - {name: sel, role: player, character: sel-varga, driver: command, run: [sh, agents/player.sh]}
  - {name: scribe, remote: seat}
  - {name: journal, remote: seat}
  - {name: tools, remote: seat}
`
)

// TestDemoAcrossHosts: the scripted D&D demo played by two workspaces on
// two hosts (network namespaces), bridged through a NATS server on a
// third: the person's seat (parley play, fed the demo's script) on one,
// the AI players on the other. The session runs to its end, and every
// player's answer came over the bridge.
func TestDemoAcrossHosts(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("the demo across network namespaces takes several seconds")
	}
	h := threeHosts(t, "parley-d")
	parley, hub, hostA, hostB := h.parley, h.hub, h.a, h.b

	root := t.TempDir()
	if _, err := workspace.InitConfig(filepath.Join(root, "hub"), "bridge: {name: hub}\n"); err != nil {
		t.Fatal(err)
	}
	make := func(name, config string) *workspace.Workspace {
		dir := filepath.Join(root, name)
		if err := copyExample(examples.DnD, "dnd", dir); err != nil {
			t.Fatal(err)
		}
		return newWorkspace(t, dir, demoCommon+config)
	}
	seat, players := make("seat", demoSeatAgents), make("players", demoPlayersAgents)
	gitInit(context.Background(), seat.Root)

	startIn(t, hub, parley, "-C", filepath.Join(root, "hub"), "bridge", "--serve", "--listen", "0.0.0.0:4222", "--quiet")
	table := startIn(t, hostB, parley, "-C", players.Root, "run", "--quiet")

	in, err := os.Open(filepath.Join(seat.Root, demoScripts["v2"]))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	play := exec.CommandContext(ctx, "ip", "netns", "exec", hostA, parley, "-C", seat.Root, "play", "--until-idle", "--seed", demoSeed)
	var out, stderr bytes.Buffer
	play.Stdin, play.Stdout, play.Stderr = in, &out, &stderr
	err = play.Run()
	table.stop(syscall.SIGINT)
	if err != nil {
		t.Fatalf("parley play at the seat: %v\n%s\nthe players' host said:\n%s", err, stderr.String(), table.stderr)
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("the seat logged errors:\n%s", s)
	}
	// The players answered, from their host: every answer came over the
	// bridge into the seat's workspace.
	log, err := os.ReadFile(seat.JournalPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tor", "wren", "sel"} {
		if !strings.Contains(string(log), `"from":"`+p+`","to":["gm"]`) && !strings.Contains(string(log), `"from":"`+p+`"`) {
			t.Errorf("the seat's journal has nothing from %s", p)
		}
		if n, _ := players.Mailbox(p).Count(mailbox.Sent); n == 0 {
			t.Errorf("%s sent nothing from the players' host", p)
		}
	}
	if !strings.Contains(string(log), `"outcome":"received"`) || !strings.Contains(string(log), `"workspace":"players"`) {
		t.Errorf("the seat's journal shows nothing received from the players' workspace")
	}
	// The person saw what they see at a table on one machine: the
	// transcript of `parley demo` line for line.
	local, err := exec.Command(parley, "demo", "--dir", filepath.Join(root, "local")).CombinedOutput()
	if err != nil {
		t.Fatalf("parley demo: %v\n%s", err, local)
	}
	want := string(local)
	if i := strings.Index(want, "(what you see at the table)\n"); i >= 0 {
		want = want[i+len("(what you see at the table)\n"):]
	}
	if i := strings.Index(want, "\n== what the session left"); i >= 0 {
		want = want[:i]
	}
	// Up to the person's last answer, line for line; after it the
	// closing messages of different senders (the team lead's summary,
	// Mira's note of what she did) may come in either order, as they may
	// on one machine: order is kept per sender.
	got, wantText := strings.TrimSpace(out.String()), strings.TrimSpace(want)
	cut := func(s string) (string, []string) {
		i := strings.Index(s, "\n> 2\n")
		if i < 0 {
			return s, nil
		}
		rest := strings.Split(s[i:], "\n\n")
		slices.Sort(rest)
		return s[:i], rest
	}
	gotHead, gotTail := cut(got)
	wantHead, wantTail := cut(wantText)
	if gotHead != wantHead || !slices.Equal(gotTail, wantTail) {
		t.Errorf("the seat across hosts saw (-one machine +two hosts):\n%s", cmp.Diff(wantText, got))
	}
	if !strings.Contains(out.String(), "=== the session is over ===") {
		t.Errorf("the session did not end")
	}
	for _, ws := range []*workspace.Workspace{seat, players} {
		for _, a := range ws.AgentNames() {
			if n, _ := ws.Mailbox(a).Count(mailbox.Dead); n > 0 {
				t.Errorf("%s: %s gave up %d messages", filepath.Base(ws.Root), a, n)
			}
			if n, _ := ws.Mailbox(a).Count(mailbox.Rejected); n > 0 {
				t.Errorf("%s: %s had %d files rejected", filepath.Base(ws.Root), a, n)
			}
		}
	}
}
