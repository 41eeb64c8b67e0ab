//go:build !linux

package runner

import "syscall"

// sweep finds the processes a program started outside its process group
// only on Linux (through /proc); elsewhere the process group is all that
// is ended.
func sweep(root int, mark string) int { return 0 }

// cgroups gives programs cgroups of their own only on Linux.
type cgroups struct{}

func findCgroups() *cgroups      { return nil }
func (c *cgroups) make() *cgroup { return nil }
func (c *cgroups) disable()      {}

// cgroup is a program's cgroup: never made here.
type cgroup struct{}

func (g *cgroup) apply(*syscall.SysProcAttr) {}
func (g *cgroup) kill()                      {}
func (g *cgroup) remove()                    {}

// DieWithParent does nothing here: only Linux has a parent-death signal.
func DieWithParent(*syscall.SysProcAttr) {}

// startTime is not known here.
func startTime(int) uint64 { return 0 }

// bootID is not known here.
func bootID() string { return "" }

// endLeft cannot tell here whether a process is still the one a record
// names (no start time, no environment to read): what a killed runner's
// programs left is not ended, and the records are dropped.
func endLeft([]leftover, string) ([]int, error) { return nil, nil }

func (g *cgroup) path() string { return "" }
