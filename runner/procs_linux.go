package runner

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sweep kills, with SIGKILL, every live process but the runner that
// carries mark in its environment or descends from one that does,
// and returns how many it killed. It looks only at processes started
// after root (a larger pid; all of them when the kernel's pids have
// wrapped around since), through /proc: a few reads when the program
// started nothing. Processes of other users, whose environment the runner
// cannot read, are left alone.
func sweep(root int, mark string) int {
	f, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	all := wrapped(root)
	self := os.Getpid()
	want := []byte(mark)
	seen := make(map[int]int) // pid -> ppid, of the live processes looked at
	marked := make(map[int]bool)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self || (!all && pid < root) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		state, ppid := statOf(stat)
		if state == "Z" || state == "X" {
			continue // dead, waiting for its parent to reap it
		}
		if ppid == self && pid != root {
			continue // another program of this runner: not root's
		}
		seen[pid] = ppid
		env, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				marked[pid] = true
				break
			}
		}
	}
	// Descendants of the marked that cleared their environment.
	for grew := true; grew; {
		grew = false
		for pid, ppid := range seen {
			if !marked[pid] && marked[ppid] {
				marked[pid], grew = true, true
			}
		}
	}
	killed := 0
	for pid := range marked {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed
}

// statOf returns the state and the parent pid in a /proc/<pid>/stat
// line: the two fields after the command name, which is in parentheses
// and may hold anything.
func statOf(stat []byte) (state string, ppid int) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	return string(f[0]), ppid
}

// wrapped reports whether the kernel has given out pids smaller than root
// since root started: its last pid is smaller.
func wrapped(root int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return false
	}
	last, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	return err == nil && last < root
}
