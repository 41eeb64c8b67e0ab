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
	"strings"
	"time"

	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/plans"
	"github.com/parley-dev/parley/runner"
	"github.com/parley-dev/parley/runner/workspace"
)

// `parley bench --pipeline`: the dev pipeline as a person runs it.

type pipelineBenchOptions struct {
	Dir  string
	Runs int
	JSON bool
}

// pipelineBenchReport is what `parley bench --pipeline` measured, in
// interleaved rounds: each round runs the scripted pipeline and one wave.
type pipelineBenchReport struct {
	Runs int `json:"runs"`
	// Demo is `parley demo pipeline` as a whole process: examples/pipeline
	// (3 waves, 7 steps) run to its end, the person's decision included,
	// from the copy of the example to the last line printed.
	DemoP50 float64 `json:"demo_p50_s"`
	DemoMin float64 `json:"demo_min_s"`
	DemoMax float64 `json:"demo_max_s"`
	// Messages is how many messages the scripted pipeline routed.
	Messages int `json:"messages"`
	// Wave is one wave of Steps steps, each worker taking Worker: from
	// the plan_result in the orchestrator's inbox to the plan done (every
	// step assigned, worked, reviewed, approved and ticked), by a fresh
	// runner.
	WaveP50 float64 `json:"wave_p50_s"`
	WaveMin float64 `json:"wave_min_s"`
	WaveMax float64 `json:"wave_max_s"`
	// Instant is the same wave with workers that answer at once: the
	// pipeline's own hops (assign, submit, review, approve, tick).
	InstantP50 float64 `json:"instant_p50_s"`
	InstantMin float64 `json:"instant_min_s"`
	InstantMax float64 `json:"instant_max_s"`
	// Added is what the workers' time added to the wave, round by round
	// (Wave - Instant): about Worker when the steps run at once, Steps
	// times it when one after the other.
	AddedP50 float64        `json:"added_p50_s"`
	AddedMin float64        `json:"added_min_s"`
	AddedMax float64        `json:"added_max_s"`
	Worker   float64        `json:"worker_s"`
	Steps    int            `json:"steps"`
	Targets  []targetResult `json:"targets"`
}

// benchWorker is how long each worker of the timed wave takes; benchSteps
// is how many steps the wave has, each given to a worker of its own.
const (
	benchWorker = 300 * time.Millisecond
	benchSteps  = 3
)

func runPipelineBench(ctx context.Context, e *env, opts pipelineBenchOptions) error {
	base, say, cleanup, err := startBench(e, opts.Dir, opts.JSON)
	if err != nil {
		return err
	}
	defer cleanup()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	say("the dev pipeline: parley demo pipeline (3 waves, 7 steps), and a wave of %d steps whose workers take %v each, interleaved: %d rounds ...", benchSteps, benchWorker, opts.Runs)
	rep := pipelineBenchReport{Runs: opts.Runs, Worker: benchWorker.Seconds(), Steps: benchSteps}
	var demos, waves, instants, added []float64
	for round := range opts.Runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := filepath.Join(base, fmt.Sprintf("demo-%d", round))
		t, err := pipelineDemo(ctx, self, dir)
		if err != nil {
			return err
		}
		if round == 0 {
			ws, err := workspace.Open(dir)
			if err != nil {
				return err
			}
			if rep.Messages, err = sentCount(ws); err != nil {
				return err
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		demos = append(demos, t)
		w, err := benchWave(ctx, filepath.Join(base, fmt.Sprintf("wave-%d", round)), benchWorker)
		if err != nil {
			return err
		}
		i, err := benchWave(ctx, filepath.Join(base, fmt.Sprintf("instant-%d", round)), 0)
		if err != nil {
			return err
		}
		waves, instants, added = append(waves, w), append(instants, i), append(added, w-i)
	}
	rep.DemoP50, rep.DemoMin, rep.DemoMax = percentile(demos, 0.5), percentile(demos, 0), percentile(demos, 1)
	rep.WaveP50, rep.WaveMin, rep.WaveMax = percentile(waves, 0.5), percentile(waves, 0), percentile(waves, 1)
	rep.InstantP50, rep.InstantMin, rep.InstantMax = percentile(instants, 0.5), percentile(instants, 0), percentile(instants, 1)
	rep.AddedP50, rep.AddedMin, rep.AddedMax = percentile(added, 0.5), percentile(added, 0), percentile(added, 1)
	sum := rep.Worker * float64(rep.Steps)
	rep.Targets = []targetResult{
		{Name: "parley demo pipeline (3 waves, 7 steps), whole process, p50", Got: secs(rep.DemoP50), Want: "< 5 s", Met: rep.DemoP50 < 5},
		{Name: fmt.Sprintf("a wave of %d steps: what the steps add, p50", rep.Steps), Got: secs(rep.AddedP50), Want: fmt.Sprintf("< %s (the slowest step's time, not the sum, %s)", secs(rep.Worker*1.5), secs(sum)), Met: rep.AddedP50 < rep.Worker*1.5},
	}
	return reportBench(e, opts.JSON, rep, rep.Targets, func(w io.Writer) {
		fmt.Fprintf(w, "parley bench --pipeline (%d interleaved rounds; median, min-max)\n\n", rep.Runs)
		fmt.Fprintf(w, "%-46s %s (%s-%s), %d messages\n", "parley demo pipeline (process)", secs(rep.DemoP50), secs(rep.DemoMin), secs(rep.DemoMax), rep.Messages)
		fmt.Fprintf(w, "%-46s %s (%s-%s)\n", fmt.Sprintf("a wave of %d steps: plan_result -> plan done", rep.Steps), secs(rep.WaveP50), secs(rep.WaveMin), secs(rep.WaveMax))
		fmt.Fprintf(w, "%-46s %s (%s-%s)\n", "the same wave, workers answering at once", secs(rep.InstantP50), secs(rep.InstantMin), secs(rep.InstantMax))
		fmt.Fprintf(w, "%-46s %s (%s-%s); each step %s, all %d in a row %s\n", "what the steps add (paired by round)", secs(rep.AddedP50), secs(rep.AddedMin), secs(rep.AddedMax), secs(rep.Worker), rep.Steps, secs(sum))
		printTargets(w, rep.Targets)
	})
}

// pipelineDemo runs `parley demo pipeline --dir dir` and returns how long
// it took.
func pipelineDemo(ctx context.Context, self, dir string) (float64, error) {
	cmd := exec.CommandContext(ctx, self, "demo", "--dir", dir, "pipeline")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("parley demo pipeline: %w: %s", err, stderr.String())
	}
	return time.Since(start).Seconds(), nil
}

// benchWave times one wave: the orchestrator, benchSteps workers that
// each take step (none: they answer at once), a reviewer that passes at once. It returns the
// seconds from the runner's start, with the plan_result in the
// orchestrator's inbox, to the plan done.
func benchWave(ctx context.Context, dir string, step time.Duration) (float64, error) {
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, plans.Dir), 0o755); err != nil {
		return 0, err
	}
	lib := `field() { sed -n "/^---\$/,/^---\$/s/^$1: *//p" "$PARLEY_MESSAGE" | head -n 1; }
envelope() { printf -- '---\nto: orch\ntype: %s\nsignal: %s\nthread: %s\nreply_to: %s\n' "$1" "$2" "$(field thread)" "$PARLEY_MESSAGE_ID"; }
`
	sleep := ""
	if step > 0 {
		sleep = fmt.Sprintf("sleep %.3f\n", step.Seconds())
	}
	worker := lib + `[ "$PARLEY_TYPE" = task_assignment ] || exit 0
` + sleep + `envelope worker_submission rfr
printf 'files_changed: %s\nqa_check: pass\n---\nDone.\n' "$(field files)"
`
	reviewer := lib + `[ "$PARLEY_TYPE" = review_request ] || exit 0
envelope review_verdict pass
printf 'critical_count: 0\nmoderate_count: 0\nminor_count: 0\nac_coverage: {AC1: pass}\n---\nClean.\n'
`
	cfg := "skills: [dev-pipeline]\nagents:\n  - {name: you, role: human}\n  - {name: orch, role: orchestrator, driver: builtin, handler: orchestrator}\n  - {name: architect, driver: command, run: [sh, -c, 'cat >/dev/null']}\n  - {name: reviewer, driver: command, run: [sh, reviewer.sh]}\n"
	var steps strings.Builder
	for i := 1; i <= benchSteps; i++ {
		cfg += fmt.Sprintf("  - {name: worker-%d, role: worker, driver: command, run: [sh, worker.sh]}\n", i)
		fmt.Fprintf(&steps, "- [ ] **Step %d: Part %d** — docs/part-%d.md: part %d.\n", i, i, i, i)
	}
	plan := "---\ndate: 2026-11-26\ntask: One wave\ntier: 1\nstatus: approved\n---\n\n# One wave\n\n## Summary\nOne wave.\n\n## Out of Scope\nNothing.\n\n## Approach\nIn parallel.\n\n## Risks\nNone.\n\n## Risk Tags\n- docs\n\n## Implementation Waves\n\n### Wave 1 — The parts\n" + steps.String() + "\n## Acceptance Criteria\n- AC1: every part is written.\n"
	for name, text := range map[string]string{workspace.ConfigFile: cfg, "worker.sh": worker, "reviewer.sh": reviewer, filepath.Join(plans.Dir, "wave.md"): plan} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return 0, err
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return 0, err
	}
	if err := ws.MakeMailboxes(); err != nil {
		return 0, err
	}
	m, err := mailbox.Parse([]byte(fmt.Sprintf("---\nto: orch\ntype: plan_result\nsignal: plan_complete\nplan_file: plans/wave.md\nwave_count: 1\nstep_count: %d\nrisk_tags: [docs]\nhas_blockers: false\n---\nOne wave.\n", benchSteps)))
	if err != nil {
		return 0, err
	}
	// A pipeline's messages share a thread (a person's request starts it):
	// the orchestrator recovers the pipeline's state by it.
	id := (&mailbox.IDs{}).New("architect")
	m.Set("id", id)
	m.Set("from", "architect")
	m.Set("thread", id)
	if _, err := ws.Mailbox("architect").Send(m); err != nil {
		return 0, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := runner.Open(ws, withUntilIdle(runnerOptions(&env{}, ws, quiet)))
	if err != nil {
		return 0, err
	}
	defer r.Close()
	start := time.Now()
	if _, err := r.Run(ctx); err != nil {
		return 0, err
	}
	took := time.Since(start).Seconds()
	p, err := plans.Read(filepath.Join(dir, plans.Dir, "wave.md"))
	if err != nil {
		return 0, err
	}
	if pr := p.Progress(); pr.Done != benchSteps || p.Status != "done" {
		return 0, fmt.Errorf("bench: the wave ended with %d/%d steps done, plan status %q; want every step, done", pr.Done, pr.Total, p.Status)
	}
	return took, nil
}
