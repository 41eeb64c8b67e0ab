package sandbox

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Available returns the Landlock ABI version the kernel offers; ok is
// false when it offers none.
func Available() (version int, ok bool) {
	v, err := ll.LandlockGetABIVersion()
	return v, err == nil && v > 0
}

// Restrict confines the calling process, every thread of it, and what it
// executes from now on, to r. It cannot be undone.
func Restrict(r Rules) error {
	if _, ok := Available(); !ok {
		return ErrUnavailable
	}
	var rules []landlock.Rule
	for _, p := range r.Read {
		if usable(p) {
			rules = append(rules, pathRule(p, false))
		}
	}
	for _, p := range r.Write {
		if usable(p) {
			rules = append(rules, pathRule(p, true))
		}
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// usable reports whether a path can be given a rule: it is a directory, a
// file or a device (not a pipe or a socket: those a program holds open
// already, and Landlock does not guard).
func usable(p string) bool {
	info, err := os.Stat(p)
	if err != nil {
		return true // missing: ignored by the rule
	}
	return info.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0
}

// pathRule is the rule for one path: a directory's or a file's, as the
// path is now; a missing one is ignored.
func pathRule(p string, write bool) landlock.Rule {
	dir := true
	if info, err := os.Stat(p); err == nil && !info.IsDir() {
		dir = false
	}
	switch {
	case dir && write:
		return landlock.RWDirs(p).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(p).IgnoreIfMissing()
	default:
		return landlock.ROFiles(p).IgnoreIfMissing()
	}
}
