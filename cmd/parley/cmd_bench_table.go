package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// `parley bench --table`: a D&D session as a person runs it.

type tableBenchOptions struct {
	Dir  string
	Runs int
	JSON bool
}

// tableBenchReport is what `parley bench --table` measured, in interleaved
// rounds: each round runs the demo session (protocol v2), the phase 1
// demo, and one fan-out beat.
type tableBenchReport struct {
	Runs int `json:"runs"`
	// Demo is `parley demo` as a whole process: a scripted session of
	// examples/dnd played to its end, from the copy of the example to the
	// last line printed.
	DemoP50 float64 `json:"demo_p50_s"`
	DemoMin float64 `json:"demo_min_s"`
	DemoMax float64 `json:"demo_max_s"`
	// DemoV1 is `parley demo --protocol v1` the same way.
	DemoV1P50 float64 `json:"demo_v1_p50_s"`
	DemoV1Min float64 `json:"demo_v1_min_s"`
	DemoV1Max float64 `json:"demo_v1_max_s"`
	// Messages is how many messages the demo session routed.
	Messages int `json:"messages"`
	// Beat is one phase 1 beat: from an [AWAIT_PLAYERS] for three
	// players, each of which takes Player to answer, to the joined
	// [PLAYER_RESPONSES] in the gm's inbox, by a fresh runner.
	BeatP50 float64        `json:"beat_p50_s"`
	BeatMin float64        `json:"beat_min_s"`
	BeatMax float64        `json:"beat_max_s"`
	Player  float64        `json:"player_s"`
	Players int            `json:"players"`
	Targets []targetResult `json:"targets"`
}

// benchPlayer is how long each player of the fan-out beat takes.
const benchPlayer = 300 * time.Millisecond

func runTableBench(ctx context.Context, e *env, opts tableBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	demo := func(round int, args ...string) (float64, error) {
		dir := filepath.Join(base, fmt.Sprintf("demo-%d-%d", round, len(args)))
		cmd := exec.CommandContext(ctx, self, append([]string{"demo", "--dir", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("parley demo %v: %w: %s", args, err, stderr.String())
		}
		took := time.Since(start).Seconds()
		return took, os.RemoveAll(dir)
	}
	say("a D&D session: parley demo, parley demo --protocol v1, and a phase 1 beat of %d players taking %v each, interleaved: %d rounds ...", 3, benchPlayer, opts.Runs)
	rep := tableBenchReport{Runs: opts.Runs, Player: benchPlayer.Seconds(), Players: 3}
	var demos, demosV1, beats []float64
	for round := range opts.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := demo(round)
		if err != nil {
			return err
		}
		demos = append(demos, t)
		if t, err = demo(round, "--protocol", "v1"); err != nil {
			return err
		}
		demosV1 = append(demosV1, t)
		b, n, err := fanOutBeat(ctx, filepath.Join(base, fmt.Sprintf("beat-%d", round)))
		if err != nil {
			return err
		}
		beats = append(beats, b)
		rep.Messages = max(rep.Messages, n)
	}
	if n, err := demoMessages(ctx, self, filepath.Join(base, "count")); err == nil {
		rep.Messages = n
	} else {
		return err
	}
	rep.DemoP50, rep.DemoMin, rep.DemoMax = percentile(demos, 0.5), percentile(demos, 0), percentile(demos, 1)
	rep.DemoV1P50, rep.DemoV1Min, rep.DemoV1Max = percentile(demosV1, 0.5), percentile(demosV1, 0), percentile(demosV1, 1)
	rep.BeatP50, rep.BeatMin, rep.BeatMax = percentile(beats, 0.5), percentile(beats, 0), percentile(beats, 1)
	sum := rep.Player * float64(rep.Players)
	rep.Targets = []targetResult{
		{Name: "parley demo, whole process, p50", Got: secs(rep.DemoP50), Want: "< 5 s", Met: rep.DemoP50 < 5},
		{Name: "parley demo: messages in the session", Got: fmt.Sprint(rep.Messages), Want: ">= 40", Met: rep.Messages >= 40},
		{Name: "parley demo --protocol v1, whole process, p50", Got: secs(rep.DemoV1P50), Want: "< 5 s", Met: rep.DemoV1P50 < 5},
		{Name: fmt.Sprintf("phase 1 beat of %d players, p50", rep.Players), Got: secs(rep.BeatP50), Want: fmt.Sprintf("< %s (the slowest player's time, not the sum, %s)", secs(rep.Player*1.5), secs(sum)), Met: rep.BeatP50 < rep.Player*1.5},
	}
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --table (%d interleaved rounds; median, min-max)\n\n", rep.Runs)
		fmt.Fprintf(w, "%-46s %s (%s-%s), %d messages\n", "parley demo (process)", secs(rep.DemoP50), secs(rep.DemoMin), secs(rep.DemoMax), rep.Messages)
		fmt.Fprintf(w, "%-46s %s (%s-%s)\n", "parley demo --protocol v1 (process)", secs(rep.DemoV1P50), secs(rep.DemoV1Min), secs(rep.DemoV1Max))
		fmt.Fprintf(w, "%-46s %s (%s-%s); each player %s, all %d in a row %s\n", "phase 1 beat: await -> joined answers", secs(rep.BeatP50), secs(rep.BeatMin), secs(rep.BeatMax), secs(rep.Player), rep.Players, secs(sum))
		printTargets(w, rep.Targets)
	})
}

func secs(v float64) string { return fmt.Sprintf("%.2f s", v) }

// demoMessages runs the demo once more, keeping its workspace, and counts
// the messages its journal says were delivered.
func demoMessages(ctx context.Context, self, dir string) (int, error) {
	cmd := exec.CommandContext(ctx, self, "demo", "--dir", dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("parley demo: %w: %s", err, stderr.String())
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Open(dir)
	if err != nil {
		return 0, err
	}
	return sentCount(ws)
}

// fanOutBeat times one phase 1 beat: a team lead, a gm, and three
// players that each take benchPlayer to answer. It returns the seconds
// from the runner's start to the joined answers' delivery, and the
// messages routed.
func fanOutBeat(ctx context.Context, dir string) (float64, int, error) {
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	player := fmt.Sprintf("cat >/dev/null\n[ \"$PARLEY_TYPE\" = GM_TO_PLAYER ] || exit 0\nsleep %.3f\necho \"$PARLEY_AGENT acts.\"\n", benchPlayer.Seconds())
	cfg := "skills: [dnd-team]\nphase: 1\nagents:\n  - gm\n  - {name: lead, role: team-lead, driver: builtin, handler: team-lead}\n"
	await := "[AWAIT_PLAYERS]\nscene_number: \"001\"\nscene_slug: the-inn\ncharacters:\n"
	for _, p := range []string{"aria", "bram", "cade"} {
		cfg += fmt.Sprintf("  - {name: %s, role: player, driver: command, run: [sh, player.sh]}\n", p)
		await += fmt.Sprintf("  - {name: %s, request_type: QUICK_REACTION, scene_context: The inn., just_happened: A door slams., request: React.}\n", p)
	}
	for name, text := range map[string]string{workspace.ConfigFile: cfg, "player.sh": player} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return 0, 0, err
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return 0, 0, err
	}
	if err := ws.MakeMailboxes(); err != nil {
		return 0, 0, err
	}
	m, err := mailbox.Parse([]byte(await))
	if err != nil {
		return 0, 0, err
	}
	m.Set("id", (&mailbox.IDs{}).New("gm"))
	m.Set("from", "gm")
	if _, err := ws.Mailbox("gm").Send(m); err != nil {
		return 0, 0, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := runner.Open(ws, withUntilIdle(runnerOptions(&env{}, ws, quiet)))
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	start := time.Now()
	stats, err := r.Run(ctx)
	took := time.Since(start).Seconds()
	if err != nil {
		return 0, 0, err
	}
	if n, _ := ws.Mailbox("gm").Count(mailbox.Inbox); n != 1 {
		return 0, 0, fmt.Errorf("bench: the beat left %d messages for the gm, want the joined answers", n)
	}
	return took, stats.Routed, nil
}
