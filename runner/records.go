package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parley-dev/parley/runner/workspace"
)

// The record of programs running. A runner killed with kill -9 ends none
// of the programs it started: on Linux, the program itself dies with it
// (its parent-death signal, see DieWithParent), but not what the program
// started, and elsewhere not even the program. The next runner must not
// hand the message, which it finds in cur/, to a second copy while the
// first one still works on it. So each program is written down, in
// .parley/programs/, before it starts: a file named after the token of
// its mark (see MarkVar), holding the machine's boot id and its cgroup,
// if it has one; once it has started, its pid and the time the kernel
// says it started (which a process that took the pid over later does not
// have). Once the program has ended, with what it started, its file is
// removed. A runner, before it hands any message to any program, ends
// every process of the programs the files name (see endLeft): those
// that carry the mark or descend from one that does, the program itself
// and its process group while they are the program's, and every process
// of its cgroup; it waits until they are gone, and only then removes the
// files.
//
// The files are not synced: they matter only while the machine is up,
// since the programs they name do not outlive it, and a process killed
// loses nothing of what it wrote to a file.

// programsDir is where the record is kept, under the workspace's
// runtime directory.
const programsDir = "programs"

// records is the record of the programs a runner has running. A nil
// *records records nothing.
type records struct {
	dir  string
	boot string // the machine's boot id; "" where it is unknown
}

// record is one program's entry in the record.
type record struct {
	f    *os.File
	path string
}

// openRecords ends what the programs of runners that were killed left
// running in ws (see endLeft) and returns the record of the programs
// this runner starts. A process that cannot be ended is an error: no
// message may be handled while it runs.
func openRecords(ws *workspace.Workspace, log *slog.Logger) (*records, error) {
	rs := &records{dir: filepath.Join(ws.Root, workspace.StateDir, programsDir), boot: bootID()}
	des, err := os.ReadDir(rs.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return rs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the record of programs running: %w", err)
	}
	var left []leftover
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		l := leftover{token: de.Name()}
		if b, err := os.ReadFile(filepath.Join(rs.dir, de.Name())); err == nil {
			l.parse(b)
		}
		left = append(left, l)
	}
	if len(left) == 0 {
		return rs, nil
	}
	ended, err := endLeft(left, rs.boot)
	if len(ended) > 0 {
		log.Warn("ended what programs of a runner that was killed left running", "programs", len(left), "pids", ended)
	}
	if err != nil {
		return nil, fmt.Errorf("a program a killed runner started is still running: %w; end it, then start parley again", err)
	}
	for _, l := range left {
		os.Remove(filepath.Join(rs.dir, l.token))
	}
	return rs, nil
}

// add writes a program down before it starts: its mark's token, the
// boot id and its cgroup.
func (rs *records) add(token string, g *cgroup) (*record, error) {
	if rs == nil {
		return nil, nil
	}
	path := filepath.Join(rs.dir, token)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// .parley/ was removed (git clean -fdX): made again.
		if err = os.MkdirAll(rs.dir, 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		}
	}
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if rs.boot != "" {
		fmt.Fprintf(&b, "boot %s\n", rs.boot)
	}
	if dir := g.path(); dir != "" {
		fmt.Fprintf(&b, "cgroup %s\n", dir)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &record{f: f, path: path}, nil
}

// started adds the program's pid, and when it started (0 where that
// cannot be known), in one write: a runner killed meanwhile leaves the
// line whole or not at all.
func (r *record) started(pid int, start uint64) {
	if r != nil {
		fmt.Fprintf(r.f, "pid %d %d\n", pid, start)
	}
}

// remove takes the program off the record.
func (r *record) remove() {
	if r != nil && r.f != nil {
		r.f.Close()
		os.Remove(r.path)
		r.f = nil
	}
}

// leftover is what a record a killed runner left says of its program.
type leftover struct {
	token  string // the token of its mark
	boot   string // the boot id it started under; "" when unknown
	cgroup string // its cgroup directory; "" when it had none
	pid    int    // 0 when it was not written (killed before it)
	start  uint64 // when the kernel says it started; 0 when unknown
}

// parse reads a record's lines; a line it does not know is passed over.
func (l *leftover) parse(b []byte) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "boot":
			l.boot = f[1]
		case len(f) == 2 && f[0] == "cgroup":
			l.cgroup = f[1]
		case len(f) == 3 && f[0] == "pid":
			pid, err1 := strconv.Atoi(f[1])
			start, err2 := strconv.ParseUint(f[2], 10, 64)
			if err1 == nil && err2 == nil && pid > 0 {
				l.pid, l.start = pid, start
			}
		}
	}
}
