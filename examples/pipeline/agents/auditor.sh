#!/bin/sh
# The auditor: the build and the tests pass; one high finding, which does
# not fail the audit.
. agents/lib.sh
envelope audit_verdict pass_with_notes
printf 'security_findings: {critical: 0, high: 1, medium: 0, low: 0}\nbuild_status: pass\ntest_status: pass\n---\n'
printf 'HIGH: log each retry with its message id.\n\nRuntime: build pass, tests pass.\n'
