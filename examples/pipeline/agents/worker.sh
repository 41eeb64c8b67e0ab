#!/bin/sh
# A worker: "implements" its step (a note in work/step-N.md, not the
# files the step names), and submits the files the task allows
# (files: [...]), as a worker that kept to its step would.
. agents/lib.sh
case "$PARLEY_TYPE" in
task_assignment|revision_request)
  step=$(field step)
  mkdir -p work
  printf 'Step %s, attempt by %s (%s).\n' "$step" "$PARLEY_AGENT" "$PARLEY_TYPE" >> "work/step-$step.md"
  envelope worker_submission rfr
  printf 'files_changed: %s\nqa_check: pass\n---\n' "$(field files)"
  printf '## Result\n\nStep %s: see work/step-%s.md.\n\n## Self-Assessment\n\nAC1: pass.\n' "$step" "$step"
  ;;
esac
