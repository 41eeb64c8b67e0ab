// Package memtmp puts a test binary's temporary directories in memory.
//
// parley's tests make thousands of workspaces and route messages through
// them, and parley makes every delivery durable: fsync and syncfs. On a
// disk that is most of the tests' time, and it swings several times over
// with the disk's other work; on tmpfs a sync costs nothing. What the
// tests check of durability is that parley asks for it, and that a
// process killed at any point loses nothing (the crash tests), not what
// the disk does on a power cut, so memory serves them as well.
package memtmp

import "os"

// Dir is where the temporary directories go when they can: Linux's
// shared memory file system.
const Dir = "/dev/shm"

// Use sets TMPDIR to a new directory under Dir, for this process and the
// ones it starts, unless TMPDIR is set already (a person's choice, or
// CI's for the tests on the disk) or Dir is not a tmpfs this process
// can write. It returns a function that removes the directory.
func Use() (cleanup func()) {
	if os.Getenv("TMPDIR") != "" {
		return func() {}
	}
	if !isTmpfs(Dir) {
		return func() {}
	}
	dir, err := os.MkdirTemp(Dir, "parley-test-")
	if err != nil {
		return func() {}
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.RemoveAll(dir)
		return func() {}
	}
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(dir)
	}
}

// Main runs a package's tests with their temporary directories in memory
// where it can (Use), and exits with their code: a TestMain of one line.
func Main(m interface{ Run() int }) {
	cleanup := Use()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
