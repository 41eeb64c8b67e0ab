package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRestrict confines a child process (this test binary, run again) to
// one directory to read and one to write, and checks what it could do.
func TestRestrict(t *testing.T) {
	if dir := os.Getenv("SANDBOX_TEST_CHILD"); dir != "" {
		child(dir)
		return
	}
	if _, ok := Available(); !ok {
		t.Skip("this kernel offers no Landlock")
	}
	dir := t.TempDir()
	for _, d := range []string{"open", "closed", "scratch"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestrict$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_CHILD="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	for _, want := range []string{"read open: ok", "read closed: denied", "write scratch: ok", "write open: denied"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child did not say %q:\n%s", want, out)
		}
	}
}

// child restricts its thread, then says what it can read and write from
// it.
func child(dir string) {
	runtime.LockOSThread()
	if err := Restrict(Rules{Read: []string{filepath.Join(dir, "open")}, Write: []string{filepath.Join(dir, "scratch")}}); err != nil {
		println("restrict:", err.Error())
		os.Exit(1)
	}
	say := func(what string, err error) {
		if err != nil {
			println(what + ": denied")
		} else {
			println(what + ": ok")
		}
	}
	_, err := os.ReadFile(filepath.Join(dir, "open", "f"))
	say("read open", err)
	_, err = os.ReadFile(filepath.Join(dir, "closed", "f"))
	say("read closed", err)
	say("write scratch", os.WriteFile(filepath.Join(dir, "scratch", "g"), []byte("y"), 0o644))
	say("write open", os.WriteFile(filepath.Join(dir, "open", "g"), []byte("y"), 0o644))
	os.Exit(0)
}
