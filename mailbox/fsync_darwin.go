package mailbox

import "golang.org/x/sys/unix"

// fsync flushes a file's data and inode to the disk itself. On macOS
// fsync(2) only hands them to the drive, whose cache may still lose or
// reorder them; fcntl F_FULLFSYNC waits for the drive, as Go's File.Sync
// does there. Where F_FULLFSYNC is not supported (SMB mounts) it falls
// back to fsync(2), as File.Sync does.
func fsync(fd int) error {
	for {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
		if err == unix.ENOTSUP {
			err = unix.Fsync(fd)
		}
		if err != unix.EINTR {
			return err
		}
	}
}
