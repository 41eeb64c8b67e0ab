package main

import "syscall"

// dieWithParent asks the kernel to kill the program parley session runs
// when parley session dies, however it dies (PR_SET_PDEATHSIG): the
// program only, not what it starts, which the runner ends (its mark, its
// cgroup; after a runner was killed, the next runner).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
