package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sweep kills, with SIGKILL, every live process but the runner that
// carries mark in its environment or descends from one that does,
// and returns how many it killed. It looks only at processes started
// after root (a larger pid; all of them when the kernel's pids have
// wrapped around since), through /proc: a few reads when the program
// started nothing. Processes of other users, whose environment the runner
// cannot read, are left alone.
func sweep(root int, mark string) int {
	last, known := lastPid()
	if known && last == root {
		// No process, nor thread, has been started on the machine (in
		// this pid namespace) since root: root started nothing, and
		// /proc need not be read.
		return 0
	}
	f, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	all := known && last < root // pids wrapped around since root
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

// lastPid returns the last pid the kernel gave out in the runner's pid
// namespace, and whether it could be read. It is smaller than a pid
// given out earlier when pids have wrapped around since.
func lastPid() (int, bool) {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return 0, false
	}
	last, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	return last, err == nil
}

// cgroups is where a driver gives each program it runs a cgroup (v2) of
// its own, so that every process the program starts, whatever it does
// with its session, environment or parent, is killed with it: under the
// runner's own cgroup, where the runner may make one (as root, or in a
// cgroup delegated to its user) and the kernel has cgroup.kill (5.14 and
// later). A nil *cgroups, or one disabled, makes none; the process group
// and sweep still apply.
type cgroups struct {
	dir string // the runner's cgroup; "" once disabled
}

// findCgroups returns the runner's cgroup v2 directory, or nil when it
// cannot be found.
func findCgroups() *cgroups {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	rel := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return nil
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(mi), "\n") {
		left, right, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(right, "cgroup2 ") {
			continue
		}
		f := strings.Fields(left)
		if len(f) < 5 {
			continue
		}
		root, mount := f[3], f[4]
		if root != "/" {
			p, ok := strings.CutPrefix(rel, root)
			if !ok {
				continue
			}
			rel = p
		}
		dir := filepath.Join(mount, rel)
		removeStale(dir)
		return &cgroups{dir: dir}
	}
	return nil
}

// removeStale removes the empty cgroups that runners killed before they
// could remove them left in dir: those named after a process that is no
// longer running. A cgroup that still holds processes is left alone.
func removeStale(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), "parley-")
		if !ok || !de.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not parley's, or its runner still runs
		}
		_ = unix.Rmdir(filepath.Join(dir, de.Name())) // EBUSY: not empty
	}
}

// make makes a cgroup for one run of a program, or returns nil (and
// makes no more) when it cannot.
func (c *cgroups) make() *cgroup {
	if c == nil || c.dir == "" {
		return nil
	}
	token := make([]byte, 6)
	rand.Read(token)
	dir := filepath.Join(c.dir, fmt.Sprintf("parley-%d-%s", os.Getpid(), hex.EncodeToString(token)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		c.disable()
		return nil
	}
	g := &cgroup{dir: dir, fd: -1}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		g.remove()
		c.disable()
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		g.remove()
		c.disable()
		return nil
	}
	g.fd = fd
	return g
}

// disable makes c make no more cgroups.
func (c *cgroups) disable() {
	if c != nil {
		c.dir = ""
	}
}

// cgroup is the cgroup of one run of a program.
type cgroup struct {
	dir string
	fd  int // open on dir, for clone3; -1 once closed
}

// apply makes the program start in g.
func (g *cgroup) apply(a *syscall.SysProcAttr) {
	if g != nil {
		a.UseCgroupFD, a.CgroupFD = true, g.fd
	}
}

// kill kills every process in g.
func (g *cgroup) kill() {
	if g != nil {
		_ = os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) // it may be empty already
	}
}

// remove kills what is left in g and removes it, once its processes are
// gone (they die a moment after the kill), waiting at most a second.
func (g *cgroup) remove() {
	if g == nil || g.dir == "" {
		return
	}
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	for i := 0; i < 200; i++ {
		err := unix.Rmdir(g.dir)
		if err != unix.EBUSY {
			break // removed, or it cannot be
		}
		if i == 0 {
			g.kill()
		}
		time.Sleep(5 * time.Millisecond)
	}
	g.dir = ""
}
