package mailbox

import (
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// linkNew writes data as a new file named dst, failing with fs.ErrExist
// when dst exists. The file is created unnamed in dir (O_TMPFILE) and then
// linked to dst: one directory update instead of three, and nothing left
// in dir if the process dies in between. Where unnamed files are not
// supported it stages dir/name and links that.
func linkNew(dir, name, dst string, data []byte, sync bool) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return stageAndLink(dir, name, dst, data, sync)
	}
	defer unix.Close(fd)
	if err := writeAll(fd, data, sync); err != nil {
		return &fs.PathError{Op: "write", Path: dir, Err: err}
	}
	// Linking an unnamed file by its descriptor needs a privilege when
	// done with AT_EMPTY_PATH; through /proc it does not.
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
	switch err {
	case nil:
		return nil
	case unix.EEXIST:
		return &fs.PathError{Op: "link", Path: dst, Err: fs.ErrExist}
	case unix.ENOENT:
		// No /proc: try the privileged way, then the staged one.
		if unix.Linkat(fd, "", unix.AT_FDCWD, dst, unix.AT_EMPTY_PATH) == nil {
			return nil
		}
		return stageAndLink(dir, name, dst, data, sync)
	}
	return &fs.PathError{Op: "link", Path: dst, Err: err}
}

// renameNoReplace moves src to dst, failing with fs.ErrExist when dst
// exists (renameat2 RENAME_NOREPLACE). Where the filesystem cannot do
// that, it links dst and removes src: dst then has two links for a moment.
func renameNoReplace(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	switch err {
	case nil:
		return nil
	case unix.EEXIST:
		return &fs.PathError{Op: "rename", Path: dst, Err: fs.ErrExist}
	case unix.EINVAL, unix.ENOSYS, unix.ENOTSUP:
		return linkAndRemove(src, dst)
	}
	return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
}
