package main

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// raceExitAtOnce tells every process this one starts (`exec parley` in
// a script, the runners the crash tests kill, the programs a sandbox
// confines: this binary, each time) not to sleep when it exits. A
// program built with -race sleeps 1s on its way out by default (GORACE's
// atexit_sleep_ms), and the scripts alone start parley some 1,800 times:
// under -race that was half an hour of sleeping, most of this package's
// time. A race is still reported when it happens and still fails the
// process (exit 66); the sleep only gave threads still running a last
// moment to race. GORACE, when given, keeps its atexit_sleep_ms.
// testscript passes GORACE on to the scripts' commands.
func raceExitAtOnce() {
	if !raceEnabled {
		return
	}
	opts := os.Getenv("GORACE")
	if strings.Contains(opts, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(opts+" atexit_sleep_ms=10"))
}

// The tests of this package mostly wait: on fsync, on the programs and
// runners they start, on a browser, tmux, network namespaces, timeouts.
// Measured on a 2-core machine, `go test`'s default of GOMAXPROCS tests
// at a time kept about one core busy; twice as many, 104 s for the
// package; four times, 85 s. So, unless -parallel is given or the race
// detector (which makes them compute) is on, four times as many run at
// once. TestMain
// calls it: the testing flags exist from then on.
func runMoreAtOnce() {
	if raceEnabled {
		return
	}
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.parallel") || strings.HasPrefix(a, "--test.parallel") {
			return
		}
	}
	if f := flag.Lookup("test.parallel"); f != nil {
		_ = f.Value.Set(strconv.Itoa(4 * runtime.GOMAXPROCS(0)))
	}
}
