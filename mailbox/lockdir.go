package mailbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// LockDir takes an exclusive flock(2) on a directory, held until the
// returned function is called: writers of the files in one directory that
// read, change and replace them (character sheets, plans), from any
// process, take turns. The lock is advisory: a person's editor does not
// take it, so a writer still checks the file did not change under it.
func LockDir(dir string) (unlock func(), err error) {
	return lockPath(dir)
}

// LockFile takes an exclusive flock(2) on a file, held until the returned
// function is called: parley's own writers that act on one message file
// (the seats of one person answering one question) take turns on it. The
// lock stays on the file when it is renamed; a file gone gives the open's
// error (fs.ErrNotExist).
func LockFile(path string) (unlock func(), err error) {
	return lockPath(path)
}

func lockPath(dir string) (unlock func(), err error) {
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
	return func() { Unlock(f) }, nil
}

// Unlock gives back the flock(2) held on f, then closes f. An flock
// belongs to the open file, not the descriptor: a process forked while
// it was held (a program between its fork and its exec, or any fork in a
// process hosting several runners) shares it, and closing this
// descriptor alone would leave the lock held until that process execs
// or exits. LOCK_UN frees it for all who share it. Every flock parley
// takes is given back here.
func Unlock(f *os.File) error {
	var uerr error
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		uerr = &os.PathError{Op: "unlock", Path: f.Name(), Err: err}
	}
	return errors.Join(uerr, f.Close())
}
