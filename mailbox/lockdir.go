package mailbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// LockDir takes an exclusive flock(2) on a directory, held until the
// returned function is called: writers of the files in one directory that
// read, change and replace them (character sheets, plans), from any
// process, take turns. The lock is advisory: a person's editor does not
// take it, so a writer still checks the file did not change under it.
func LockDir(dir string) (unlock func(), err error) {
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
	// LOCK_UN, not only close: a process forked while the lock was held
	// shares the locked file until it execs, and would hold the lock on.
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}
