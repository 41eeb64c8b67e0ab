// Package longtest decides which tests `go test ./...` leaves out: the
// long end-to-end ones — whole sessions played by scripted agents, kill
// -9 loops, benches, a real browser, network namespaces, a real MCP
// client. Each starts hundreds of processes or waits on them for tens of
// seconds. Without them `go test ./...` takes about two minutes on a
// 2-core machine (it took five to seven with them).
// PARLEY_LONG_TESTS=1 runs them too, and CI (.ci/run) always does.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long tests on.
const Env = "PARLEY_LONG_TESTS"

// Enabled reports whether the long tests run: Env is set to something
// other than 0.
func Enabled() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Reason is what a skipped long test says.
const Reason = "a long end-to-end test: " + Env + "=1 runs it (CI does)"

// Skip skips t unless the long tests run.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip(Reason)
	}
}
