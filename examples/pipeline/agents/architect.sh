#!/bin/sh
# The architect: triage with two research questions, then the plan. A
# script cannot design, so its plan is the one already in plans/.
. agents/lib.sh
case "$PARLEY_TYPE" in
triage_request)
  envelope triage_result triage_complete
  printf 'tier: 2\nresearch_needed: true\nresearch_count: 2\n---\n'
  printf '## Triage\n\nTier 2: the router and the journal change; nothing leaves the machine.\n\n'
  printf '## Research Questions\n\n'
  printf -- '- Which delivery errors are worth a retry: is ENOSPC transient?\n'
  printf -- '- How long to back off: bounds and jitter that avoid a storm?\n'
  ;;
architecture_request)
  envelope plan_result plan_complete
  printf 'plan_file: plans/retry-failed-deliveries.md\nwave_count: 3\nstep_count: 7\nrisk_tags: [data-mutation, concurrent]\nhas_blockers: false\n---\n'
  printf 'Retry failed deliveries with capped backoff, journaled, in three waves.\n'
  ;;
esac
