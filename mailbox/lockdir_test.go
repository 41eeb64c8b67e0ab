package mailbox

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnlockWhileShared: Unlock frees a lock at once though a process
// forked while it was held shares the locked file (closing alone leaves
// it held until that process execs or exits); LockDir's unlock does the
// same, so that the next writer of the directory does not wait on it.
func TestUnlockWhileShared(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command:", err)
	}
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(sleep, "60")
	child.ExtraFiles = []*os.File{f} // the same open file, as a fork holds it
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	if err := Unlock(f); err != nil {
		t.Fatalf("Unlock = %v, want nil", err)
	}
	g, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := unix.Flock(int(g.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after Unlock, a child still sharing the locked file = %v, want nil", err)
	}
	unix.Flock(int(g.Fd()), unix.LOCK_UN)
}
