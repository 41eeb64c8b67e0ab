package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/proctest"
)

// TestSessionEndsItsProgram (a user's tryout: kill -9 of the runner
// killed `parley session`, with the runner, but claude, the program it
// ran, ran on under pid 1 until a next runner swept it): the program
// parley session runs dies with it, however parley session ends, and
// what the program left running in its process group is ended when
// parley session returns.
func TestSessionEndsItsProgram(t *testing.T) {
	t.Parallel()
	// Each program notes its pid, starts a sleep that outlives it in its
	// process group and notes the sleep's pid; then the first works on
	// (a model's long turn, deaf to its stdin), the second reads its
	// stdin to the end.
	const start = "sleep 600 </dev/null >/dev/null 2>&1 &\necho $! > child.pid\necho $$ > prog.pid\n"
	for _, tc := range []struct {
		name string
		prog string
		end  func(t *testing.T, cmd *exec.Cmd, stdin *os.File)
		gone string // the pid file of the process that must be gone
	}{
		{"parley session killed with kill -9: the program dies with it", start + "exec sleep 600\n", func(t *testing.T, cmd *exec.Cmd, _ *os.File) {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}, "prog.pid"},
		{"parley session ends: what the program left in its group is ended", start + "cat >/dev/null\n", func(t *testing.T, _ *exec.Cmd, stdin *os.File) {
			stdin.Close()
		}, "child.pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "prog.sh"), []byte(tc.prog), 0o644); err != nil {
				t.Fatal(err)
			}
			in, toSession, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd := exec.Command("parley", "session", "--", "sh", "prog.sh")
			cmd.Dir, cmd.Stdin = dir, in
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			in.Close()
			pid := func(name string) int {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return n
			}
			var pids []int
			t.Cleanup(func() {
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			deadline := time.Now().Add(30 * time.Second)
			for pid("prog.pid") == 0 || pid("child.pid") == 0 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatal("waited 30s for the program to start")
				}
				time.Sleep(time.Millisecond)
			}
			pids = append(pids, pid("prog.pid"), pid("child.pid"))
			tc.end(t, cmd, toSession)
			cmd.Wait()
			toSession.Close()
			if p := pid(tc.gone); !proctest.Gone(p, 10*time.Second) {
				t.Errorf("process %d (%s) still runs 10s after parley session ended", p, tc.gone)
			}
		})
	}
}
