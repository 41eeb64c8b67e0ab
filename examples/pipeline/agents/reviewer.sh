#!/bin/sh
# The reviewer: fails step 4 in its first two attempts, step 6 in every
# one; passes the rest. It decides from the review_request's fields, so a
# review asked again after a crash gets the same verdict.
. agents/lib.sh
step=$(field step)
n=$(field iteration)
if [ "$step" = 6 ] || { [ "$step" = 4 ] && [ "$n" -le 2 ]; }; then
  envelope review_verdict fail
  printf 'critical_count: 1\nmoderate_count: 0\nminor_count: 0\nac_coverage: {AC1: fail}\n---\n'
  printf 'CRITICAL: attempt %s at step %s drops the message when the retry fails.\n\nFails: AC2.\n' "$n" "$step"
else
  envelope review_verdict pass
  printf 'critical_count: 0\nmoderate_count: 0\nminor_count: 1\nac_coverage: {AC1: pass}\n---\n'
  printf 'MINOR: a comment could say why.\n\nPass.\n'
fi
