package mailbox

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// BeingWritten reports whether any process has the file at path open for
// writing: a program still writing a message in place, a person's editor
// between two saves of it. It asks the kernel for a read lease, which
// Linux grants only when nobody has the file open for writing, and gives
// it back at once. Where leases are not available (some filesystems, a
// file owned by another user) it returns an error matching
// errors.ErrUnsupported.
func BeingWritten(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	switch err {
	case nil:
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK) // closing the descriptor drops it too
		return false, nil
	case unix.EAGAIN:
		return true, nil
	}
	return false, fmt.Errorf("%s: read lease: %w (%w)", path, err, errors.ErrUnsupported)
}
