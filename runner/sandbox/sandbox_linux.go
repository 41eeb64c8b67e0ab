package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Available returns the Landlock ABI version the kernel offers; ok is
// false when it offers none.
func Available() (version int, ok bool) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	return int(v), errno == 0 && int(v) > 0
}

// Rights of Landlock, by the ABI version that brought them.
const (
	rightsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// fileRights are those that apply to a file (not a directory).
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
)

// handled returns the file system rights a ruleset restricts on a kernel
// of Landlock ABI version v: all of those it knows.
func handled(v int) uint64 {
	r := uint64(rightsV1)
	if v >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if v >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if v >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// Restrict confines the calling OS thread, and every program it then
// executes, to r; it cannot be undone. Lock the goroutine to its thread
// (runtime.LockOSThread) first, and exec from it: Landlock confines one
// thread unless told otherwise, and the program executed inherits the
// confinement of the thread that executes it. Confining one thread needs
// no help from the other threads of the Go runtime, which is why parley
// confines a program this way, just before it executes it.
func Restrict(r Rules) error {
	v, ok := Available()
	if !ok {
		return ErrUnavailable
	}
	all := handled(v)
	attr := struct{ handledFS uint64 }{all}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock: creating a ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	add := func(path string, rights uint64) error {
		f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // a path that is not there grants nothing
		}
		defer unix.Close(f)
		var st unix.Stat_t
		if err := unix.Fstat(f, &st); err != nil {
			return nil
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFIFO, unix.S_IFSOCK:
			return nil // held open already, if at all: Landlock does not guard them
		default:
			rights &= fileRights
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights & all, Parent_fd: int32(f)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock: %s: %w", path, errno)
		}
		return nil
	}
	for _, p := range r.Read {
		if err := add(p, readRights); err != nil {
			return err
		}
	}
	for _, p := range r.Write {
		if err := add(p, all); err != nil {
			return err
		}
	}
	// Without it, only a process with CAP_SYS_ADMIN may confine itself.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restricting: %w", errno)
	}
	return nil
}
