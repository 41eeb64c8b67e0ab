#!/bin/sh
# A worker: "implements" its step by writing work/step-N.md, and submits.
. agents/lib.sh
case "$PARLEY_TYPE" in
task_assignment|revision_request)
  step=$(field step)
  mkdir -p work
  printf 'Step %s, attempt by %s (%s).\n' "$step" "$PARLEY_AGENT" "$PARLEY_TYPE" >> "work/step-$step.md"
  envelope worker_submission rfr
  printf 'files_changed: [work/step-%s.md]\nqa_check: pass\n---\n' "$step"
  printf '## Result\n\nStep %s is in work/step-%s.md.\n\n## Self-Assessment\n\nAC1: pass.\n' "$step" "$step"
  ;;
esac
