package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/runner/workspace"
)

// `parley bench --send`: what a person or a script waits for when it sends
// a message.

type sendBenchOptions struct {
	Dir  string
	Runs int
	JSON bool
}

// sendBenchReport is what `parley bench --send` measured, in interleaved
// rounds: each round runs once each of the three, so that the disk's
// swings touch them alike.
type sendBenchReport struct {
	Runs int `json:"runs"`
	// Send is `parley send` of a checked 1 KiB [GM_TO_PLAYER] (body on
	// stdin) as a whole process: start, open the workspace, read the
	// protocol, check, write durably into the outbox, exit.
	SendP50 float64 `json:"send_p50_ms"`
	SendP10 float64 `json:"send_p10_ms"`
	SendP90 float64 `json:"send_p90_ms"`
	// Start is `parley roll 1d20` as a whole process: what any parley
	// command costs to start and stop.
	StartP50 float64 `json:"start_p50_ms"`
	// Durable is this disk writing the same 1 KiB durably the way send
	// does, in-process: write and fsync a file, link it, fsync the
	// directory.
	DurableP50 float64        `json:"durable_p50_ms"`
	Targets    []targetResult `json:"targets"`
}

func runSendBench(ctx context.Context, e *env, opts sendBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	agents := []workspace.Agent{{Name: "gm"}, {Name: "narrator"}, {Name: "aria", Roles: []string{"player"}}, {Name: "bram", Roles: []string{"player"}}}
	ws, err := workspace.Init(filepath.Join(base, "table"), agents, []string{"dnd-team"})
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	body := strings.Repeat("The stranger's eyes find yours. ", 1024/32)
	sendArgs := []string{"-C", ws.Root, "send", "--from", "gm", "--to", "aria", "--type", "GM_TO_PLAYER",
		"--field", "request_type=QUICK_REACTION", "--field", `scene_number="001"`, "--field", "scene_slug=the-inn"}
	raw := filepath.Join(base, "raw")
	if err := mailbox.Dir(raw).Init(); err != nil {
		return err
	}
	process := func(stdin string, args ...string) (float64, error) {
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("parley %s: %w: %s", args[2], err, stderr.String())
		}
		return float64(time.Since(start)) / float64(time.Millisecond), nil
	}
	say("parley send of a checked 1 KiB message, interleaved with a bare start and the disk's own durable write: %d rounds ...", opts.Runs)
	rep := sendBenchReport{Runs: opts.Runs}
	var sends, starts, durable []float64
	ids := &mailbox.IDs{Now: time.Now}
	for range opts.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, err := process(body, sendArgs...)
		if err != nil {
			return err
		}
		sends = append(sends, t)
		if t, err = process("", "roll", "--seed", "1", "1d20"); err != nil {
			return err
		}
		starts = append(starts, t)
		m := mailbox.New([]byte(body))
		m.Set("id", ids.New("raw"))
		start := time.Now()
		if _, err := mailbox.Dir(raw).Send(m); err != nil {
			return err
		}
		durable = append(durable, float64(time.Since(start))/float64(time.Millisecond))
	}
	rep.SendP50, rep.SendP10, rep.SendP90 = percentile(sends, 0.5), percentile(sends, 0.1), percentile(sends, 0.9)
	rep.StartP50, rep.DurableP50 = percentile(starts, 0.5), percentile(durable, 0.5)
	rep.Targets = []targetResult{{Name: "parley send, checked 1 KiB, whole process, p50", Got: ms(rep.SendP50), Want: "< 15 ms", Met: rep.SendP50 < 15}}
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --send (%d interleaved rounds)\n\n", rep.Runs)
		fmt.Fprintf(w, "%-44s p50 %s (p10 %s, p90 %s)\n", "parley send, checked 1 KiB (process)", ms(rep.SendP50), ms(rep.SendP10), ms(rep.SendP90))
		fmt.Fprintf(w, "%-44s p50 %s\n", "a bare parley process (roll 1d20)", ms(rep.StartP50))
		fmt.Fprintf(w, "%-44s p50 %s\n", "the disk: 1 KiB written durably as send does", ms(rep.DurableP50))
		printTargets(w, rep.Targets)
	})
}
