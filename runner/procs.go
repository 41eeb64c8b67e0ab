package runner

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/parley-dev/parley/runner/sandbox"
)

// Programs and what they start. A command or session program runs in a
// process group of its own, with its standard input, output and error on
// pipes the runner owns (not os/exec's copying goroutines, whose Wait
// also waits for every process that inherited a pipe), and with
// MarkVar=<a token of its own> in its environment, which every process it
// starts inherits unless it clears its environment. When the program ends
// or is killed (a timeout, too much output, a session stopped), end kills
// its process group; on Linux, every process in its cgroup, when it has
// one (see cgroups), then every process that carries its mark or descends
// from one that does (see sweep), even in a session of its own (setsid);
// then it reads the pipes to their end, or gives up on them after
// endGrace. When the runner itself dies, on Linux the kernel kills the
// program (see DieWithParent), and the next runner, before it hands out
// any message, ends what the program started (see records).

// MarkVar is the environment variable that marks the processes a program
// started: parley sets it to a token of each run, and ends every process
// that carries it when the program ends.
const MarkVar = "PARLEY_PROCESS"

// endGrace bounds how long end waits, after killing what the program
// started, for the program's pipes to close: what holds them after that
// (a process that cleared its environment and left the program's
// session) is no longer waited for.
const endGrace = 2 * time.Second

// Confinement is what an isolated agent's program is confined to: the
// files it may use, and what its environment adds (its TMPDIR, which the
// runner makes again before each run when it is gone). The
// program is confined from the thread that starts it (sandbox.Restrict),
// which then ends with the program: no program runs in between, so a
// confined program starts as fast as any other.
type Confinement struct {
	Rules sandbox.Rules
	Env   []string
}

// makeTmpDir makes the TMPDIR the confinement hands the program, when it
// is gone, before each run, as the mailboxes' tmp/ are made again: a
// person's `git clean -fdX` removes it while the runner runs, and a
// confined program may not make it again itself.
func (c *Confinement) makeTmpDir() error {
	for _, kv := range c.Env {
		if dir, ok := strings.CutPrefix(kv, "TMPDIR="); ok && dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("making the program's TMPDIR: %w", err)
			}
		}
	}
	return nil
}

// program is a started agent program and the pipes to it.
type program struct {
	cmd    *exec.Cmd
	mark   string   // MarkVar=token
	stdin  *os.File // the write end of its standard input
	stdout *os.File // the read ends of its standard output and error
	stderr *os.File
	group  *cgroup // its cgroup; nil when it has none
	record *record // its entry in the record of programs running

	// exited is closed once the program has exited and was reaped; err
	// is then what cmd.Wait returned.
	exited chan struct{}
	err    error

	endOnce sync.Once
}

// startProgram starts the program name with args, in dir, with env, in
// a process group of its own, marked, with pipes for its standard
// streams, and in a cgroup of its own when cg can make one (see
// cgroups). It is put on rs's record before it starts (see records).
// It is confined to conf when that is not nil. The caller reads stdout
// and stderr to their end, and calls end once the program has exited
// (p.exited) or is to be killed, then close.
func startProgram(name string, args []string, dir string, env []string, conf *Confinement, cg *cgroups, rs *records) (*program, error) {
	token := make([]byte, 8)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	mark := MarkVar + "=" + hex.EncodeToString(token)
	env = append(env[:len(env):len(env)], mark)
	var rules *sandbox.Rules
	if conf != nil {
		if err := conf.makeTmpDir(); err != nil {
			return nil, err
		}
		env = append(env, conf.Env...)
		rules = &conf.Rules
	}
	if group := cg.make(); group != nil {
		p, err := startIn(name, args, dir, env, rules, mark, group, rs)
		if err == nil {
			return p, nil
		}
		// Not into the cgroup (clone3 or the cgroup refused): parley
		// makes no more, and starts the program without one.
		group.remove()
		cg.disable()
	}
	return startIn(name, args, dir, env, rules, mark, nil, rs)
}

// startIn starts a program, in group when it is not nil, confined to
// rules when they are not nil.
func startIn(name string, args []string, dir string, env []string, rules *sandbox.Rules, mark string, group *cgroup, rs *records) (*program, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	group.apply(cmd.SysProcAttr)
	DieWithParent(cmd.SysProcAttr)
	p := &program{cmd: cmd, mark: mark, group: group, exited: make(chan struct{})}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	rec, err := rs.add(strings.TrimPrefix(mark, MarkVar+"="), group)
	if err != nil {
		return nil, &recordError{err}
	}
	p.record = rec
	inR, inW, err := os.Pipe()
	if err != nil {
		rec.remove()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		rec.remove()
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		rec.remove()
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	child := []*os.File{inR, outW, errW} // the child's ends, closed here once it has them
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// The program is started, and waited for, from one goroutine locked
	// to its OS thread: the kernel sends a child its parent-death signal
	// when the thread that started it ends, not the process, and the Go
	// runtime ends a thread that a goroutine leaves locked. Locked from
	// before the start until the program is reaped, the thread is no
	// other goroutine's to end meanwhile (golang/go#27505). A confined
	// program's thread is confined first, and so is the program it
	// starts; that thread is never unlocked, so the runtime ends it with
	// the goroutine rather than run other goroutines on it confined (the
	// process's main thread, which it cannot end, it parks for good), and
	// starts no thread from a locked one, which would inherit the
	// confinement.
	started := make(chan error, 1)
	recorded := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if rules == nil {
			defer runtime.UnlockOSThread()
		} else if err := sandbox.Restrict(*rules); err != nil {
			started <- fmt.Errorf("confining the program: %w", err)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		<-recorded // not reaped before: the pid is still the program's
		p.err = cmd.Wait()
		// Exited: what is being written to it waits no more, though a
		// process it started may hold its stdin open and read nothing
		// (a session's next message, bigger than a pipe holds, waited
		// so for its timeout).
		inW.SetWriteDeadline(time.Now())
		close(p.exited)
	}()
	if err := <-started; err != nil {
		rec.remove()
		closeAll(append(child, inW, outR, errR)...)
		return nil, err
	}
	rec.started(cmd.Process.Pid, startTime(cmd.Process.Pid))
	close(recorded)
	closeAll(child...)
	p.stdin, p.stdout, p.stderr = inW, outR, errR
	return p, nil
}

// killGroup kills the program's process group.
func (p *program) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // it may be gone already
}

// end kills what is left of the program: its process group, and every
// process it started that carries its mark (see sweep). It closes the
// program's standard input and, once endGrace has passed, stops reads of
// its output that are still waiting. The caller still waits for the
// program itself (cmd.Wait).
func (p *program) end() {
	p.endOnce.Do(func() {
		p.killGroup()
		p.group.kill()
		for range 5 {
			if sweep(p.cmd.Process.Pid, p.mark) == 0 {
				break
			}
		}
		p.stdin.Close()
		// A process that escaped both still holds a pipe: reads stop at
		// the deadline rather than waiting for it.
		deadline := time.Now().Add(endGrace)
		p.stdout.SetReadDeadline(deadline)
		p.stderr.SetReadDeadline(deadline)
	})
}

// close releases the pipes, once their readers are done, removes the
// program's cgroup and takes it off the record of programs running. The
// program has exited and end was called.
func (p *program) close() {
	p.group.remove()
	p.record.remove()
	p.stdin.Close()
	p.stdout.Close()
	p.stderr.Close()
}

// drain reads r to its end into w; once w fails, what follows is read
// and dropped, so that no writer blocks on a full pipe. A read stopped by
// end's deadline is not an error.
func drain(w io.Writer, r io.Reader) {
	if _, err := io.Copy(w, r); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		io.Copy(io.Discard, r)
	}
}

// feed writes data to the program's standard input and closes it. A
// program that exits without reading it all is no error.
func (p *program) feed(data []byte) {
	p.stdin.Write(data)
	p.stdin.Close()
}

// startError makes the error of a program that could not be started.
func startError(name string, err error) *HandleError {
	var re *recordError
	return &HandleError{Err: fmt.Errorf("cannot start %s: %w", name, err), Permanent: notStartable(err) && !errors.As(err, &re)}
}

// recordError is the error of a program not started because it could
// not be written down (see records): a disk that may have room again on
// a later try, whatever the error says.
type recordError struct{ err error }

func (e *recordError) Error() string { return "writing it down before it starts: " + e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }
