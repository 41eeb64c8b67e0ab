package pipe

import (
	"os"

	"golang.org/x/sys/unix"
)

// Unread returns how many bytes written to the pipe f (either end)
// wait in it unread: a program that died without reading what was
// written to its stdin left them there. ok is false when the system
// does not say.
func Unread(f *os.File) (n int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) {
		// TIOCINQ is FIONREAD, which pipes answer.
		n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
