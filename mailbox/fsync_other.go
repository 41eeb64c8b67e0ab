//go:build !darwin

package mailbox

import "golang.org/x/sys/unix"

// fsync flushes a file's data and inode to disk (fsync(2)), as Go's
// File.Sync does.
func fsync(fd int) error {
	for {
		if err := unix.Fsync(fd); err != unix.EINTR {
			return err
		}
	}
}
