package main

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The tests of this package mostly wait: on fsync, on the programs and
// runners they start, on a browser, tmux, network namespaces. Measured on
// a 2-core machine, `go test`'s default of GOMAXPROCS tests at a time kept
// about one core busy. So, unless -parallel is given or the race detector
// (which makes them compute) is on, twice as many run at once. TestMain
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
		_ = f.Value.Set(strconv.Itoa(2 * runtime.GOMAXPROCS(0)))
	}
}
