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
		p, ok := readProc(pid)
		if !ok || p.zombie {
			continue // gone, or dead and waiting for its parent to reap it
		}
		if p.ppid == self && pid != root {
			continue // another program of this runner: not root's
		}
		seen[pid] = p.ppid
		env, err := environOf(p)
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

// DieWithParent asks the kernel to kill the program when the process
// that starts it dies, however it dies (PR_SET_PDEATHSIG): the program
// only, not what it starts, which the next runner ends (see records).
// The signal comes when the OS thread that started the program ends:
// start it, and wait for it, from a goroutine locked to its thread. The
// runner's drivers and parley session ask it of their programs.
func DieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// proc is what /proc/<pid>/stat says of a process.
type proc struct {
	pid, ppid, pgid int
	start           uint64 // clock ticks after boot
	zombie          bool
	kernel          bool   // a kernel thread, which has no environment
	envStart        uint64 // where its environment is in its memory; 0 when the
	envEnd          uint64 // kernel does not say (or, in the midst of an exec, has none yet)
}

// readProc reads /proc/<pid>/stat: the fields after the command name,
// which is in parentheses and may hold anything.
func readProc(pid int) (proc, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{pid: pid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgid, _ = strconv.Atoi(string(f[2]))
	p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	flags, _ := strconv.ParseUint(string(f[6]), 10, 64)
	p.kernel = flags&pfKthread != 0
	if len(f) > 48 { // env_start and env_end, fields 50 and 51 (Linux 3.5 and later)
		p.envStart, _ = strconv.ParseUint(string(f[47]), 10, 64)
		p.envEnd, _ = strconv.ParseUint(string(f[48]), 10, 64)
	}
	return p, true
}

// pfKthread is the flag /proc/<pid>/stat gives a kernel thread.
const pfKthread = 0x00200000

// execWait bounds how long environOf waits for a process in the midst of
// an exec to have its environment.
const execWait = time.Second

// environOf reads the environment of the live process p. A process in
// the midst of an exec has none for a moment, between the kernel's
// replacing its memory and its copying the environment into the new
// memory (a few reads of the new program's file, longer on a busy disk):
// read then, it would seem to have cleared its environment, and a
// program's daemon caught mid-exec would escape its sweep. So an empty
// environment is believed only once the process's memory has a place for
// one and that place is empty (it cleared its environment), or of a
// kernel thread; until then environOf reads it again, up to execWait.
func environOf(p proc) ([]byte, error) {
	name := "/proc/" + strconv.Itoa(p.pid) + "/environ"
	deadline := time.Now().Add(execWait)
	for {
		env, err := os.ReadFile(name)
		if err != nil || len(env) > 0 || p.kernel {
			return env, err
		}
		now, ok := readProc(p.pid)
		if !ok || now.zombie || now.start != p.start {
			return nil, os.ErrNotExist // gone
		}
		if now.envEnd != 0 && now.envStart == now.envEnd || time.Now().After(deadline) {
			return env, nil
		}
		time.Sleep(time.Millisecond)
	}
}

// startTime returns when the process pid started, in clock ticks after
// boot, or 0 when it cannot be read.
func startTime(pid int) uint64 {
	p, _ := readProc(pid)
	return p.start
}

// bootID returns the kernel's id of this boot, or "".
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// endLeft kills every process of the programs left, waits until they are
// gone, and removes their cgroups. It returns the pids it killed, and an
// error naming the processes it could not kill or that did not end.
//
// A process is a program's when it carries the program's mark; when it
// is the program (its pid, and the start time recorded: a process that
// took the pid over later started later); when it is in the program's
// process group while that group is the program's (the program, or a
// process that carries its mark, is in it: while one of the group's
// processes lives, the kernel gives its number to no other process nor
// group); when it is in the program's cgroup; or when it descends from
// one of these. What cleared its environment and left the program's
// process group and cgroup, or whose group lost every process that would
// say whose it is, is not found.
func endLeft(left []leftover, boot string) ([]int, error) {
	var live []leftover
	marks := make(map[string]bool)
	for _, l := range left {
		if l.boot != "" && boot != "" && l.boot != boot {
			continue // started before the machine started again: gone
		}
		live = append(live, l)
		marks[MarkVar+"="+l.token] = true
	}
	self := os.Getpid()
	killed := make(map[int]uint64) // pid -> its start time
	var stubborn []int
	for round := 0; round < 10; round++ {
		for _, l := range live {
			if l.cgroup != "" {
				_ = os.WriteFile(filepath.Join(l.cgroup, "cgroup.kill"), []byte("1"), 0) // gone already, maybe
			}
		}
		procs := listProcs(self, marks)
		ours := make(map[int]bool)
		for _, p := range procs {
			if p.marked {
				ours[p.pid] = true
			}
		}
		for _, l := range live {
			if l.pid == 0 || l.start == 0 {
				continue
			}
			leader, alive := procs[l.pid]
			group := alive && leader.start == l.start
			if group {
				ours[l.pid] = true
			}
			if !alive {
				for _, p := range procs {
					if p.pgid == l.pid && p.marked {
						group = true
						break
					}
				}
			}
			if group {
				for _, p := range procs {
					if p.pgid == l.pid {
						ours[p.pid] = true
					}
				}
			}
		}
		for grew := true; grew; {
			grew = false
			for _, p := range procs {
				if !ours[p.pid] && ours[p.ppid] {
					ours[p.pid], grew = true, true
				}
			}
		}
		n := 0
		stubborn = stubborn[:0]
		for pid := range ours {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed[pid] = procs[pid].start
				n++
			} else if err != syscall.ESRCH {
				stubborn = append(stubborn, pid)
			}
		}
		if n == 0 {
			break
		}
	}
	// They die a moment after the kill; a process in the midst of a
	// system call that cannot be interrupted (a disk, NFS) may take
	// longer.
	var ended []int
	for pid := range killed {
		ended = append(ended, pid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pid, start := range killed {
		for {
			p, ok := readProc(pid)
			if !ok || p.zombie || p.start != start {
				break
			}
			if time.Now().After(deadline) {
				stubborn = append(stubborn, pid)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, l := range live {
		if l.cgroup != "" {
			g := &cgroup{dir: l.cgroup, fd: -1}
			g.remove() // waits for it to be empty
		}
	}
	if len(stubborn) > 0 {
		return ended, fmt.Errorf("cannot end process %v", stubborn)
	}
	return ended, nil
}

// listed is a process as endLeft lists it.
type listed struct {
	proc
	marked bool // it carries one of the marks looked for
}

// listProcs lists the live processes but self, each saying whether it
// carries one of marks in its environment.
func listProcs(self int, marks map[string]bool) map[int]listed {
	procs := make(map[int]listed)
	f, err := os.Open("/proc")
	if err != nil {
		return procs
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		p, ok := readProc(pid)
		if !ok || p.zombie {
			continue
		}
		l := listed{proc: p}
		if env, err := environOf(p); err == nil {
			for _, kv := range bytes.Split(env, []byte{0}) {
				if bytes.HasPrefix(kv, []byte(MarkVar+"=")) && marks[string(kv)] {
					l.marked = true
					break
				}
			}
		}
		procs[pid] = l
	}
	return procs
}

// path returns g's directory, or "" for no cgroup.
func (g *cgroup) path() string {
	if g == nil {
		return ""
	}
	return g.dir
}
