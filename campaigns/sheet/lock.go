package sheet

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock(2) on a directory, held until the
// returned function is called: Saves of the sheets in one directory, from
// any process, take turns.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { f.Close() }, nil // closing releases the lock
}
