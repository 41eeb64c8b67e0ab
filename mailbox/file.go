package mailbox

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// The router opens thousands of small files a second; these use the
// system calls directly, which spares the Go runtime's attempt to register
// every regular file with its network poller (an fcntl and a failing
// epoll_ctl per open).

// ReadFile reads a message file someone else wrote: it never follows a
// symbolic link nor blocks on a pipe put in the file's place, refuses
// anything but a regular file (*NotRegularError), and reads at most max
// bytes (*TooLargeError beyond).
func ReadFile(path string, max int64) ([]byte, error) {
	s, err := ReadSnapshot(path, max)
	if err != nil {
		return nil, err
	}
	s.Close()
	return s.Data, nil
}

// ReadMessage reads the message file at path (at most max bytes, as
// ReadFile reads it) and parses it (Parse): the message, or why it
// cannot be had.
func ReadMessage(path string, max int64) (*Message, error) {
	data, err := ReadFile(path, max)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// ReadSnapshot reads a message file as ReadFile does, opening it once,
// and says which file it read (fstat(2) of the open file): the router
// checks that a name still refers to that file before it moves it. The
// file is kept open until Close, so that its inode number cannot be given
// to a file put in its place.
func ReadSnapshot(path string, max int64) (*Snapshot, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, &NotRegularError{Mode: fs.ModeSymlink}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	kept := false
	defer func() {
		if !kept {
			unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &NotRegularError{Mode: modeOf(uint32(st.Mode))}
	}
	if st.Size > max {
		return nil, &TooLargeError{Size: st.Size, Max: max}
	}
	snap := &Snapshot{
		ID:      FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)},
		Links:   uint64(st.Nlink),
		Size:    st.Size,
		ModTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if int64(len(buf)) > max {
			return nil, &TooLargeError{Size: -1, Max: max}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		// A short read that ends where fstat said the file ends is its
		// end: no second read to be told so (one system call a message).
		if n == 0 || n < want && int64(len(buf)) == st.Size {
			snap.Data, snap.fd, kept = buf, fd, true
			return snap, nil
		}
	}
}

func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFSOCK:
		return fs.ModeSocket
	}
	return fs.ModeIrregular
}

// writeFile creates path with data, and fsyncs it when sync is set. Any
// file already at path is removed first, and the new one is created
// exclusively and without following a symbolic link: a link planted in a
// staging directory never makes parley write elsewhere. On a failed write
// the file is removed.
func writeFile(path string, data []byte, sync bool) error {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open(path, flags, 0o644)
	if err == unix.EEXIST {
		if err := unix.Unlink(path); err != nil && err != unix.ENOENT {
			return &fs.PathError{Op: "remove", Path: path, Err: err}
		}
		fd, err = unix.Open(path, flags, 0o644)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fail := func(op string, err error) error {
		unix.Close(fd)
		os.Remove(path)
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	if err := writeAll(fd, data, sync); err != nil {
		return fail("write", err)
	}
	if err := unix.Close(fd); err != nil {
		os.Remove(path)
		return &fs.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// writeAll writes data to fd, and fsyncs it when sync is set.
func writeAll(fd int, data []byte, sync bool) error {
	for off := 0; off < len(data); {
		n, err := unix.Write(fd, data[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		off += n
	}
	if sync {
		return fsync(fd)
	}
	return nil
}

// syncFile fsyncs the regular file at path, which someone else may have
// written, and reports whether it did. Anything else (a symbolic link,
// never followed; a pipe, never blocked on; a directory, whose entries are
// not ours) is left alone.
func syncFile(path string) (synced bool, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return false, nil
	}
	if err != nil {
		return false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	if err := unix.Fsync(fd); err != nil {
		return false, &fs.PathError{Op: "fsync", Path: path, Err: err}
	}
	return true, nil
}

func closeFD(fd int) error { return unix.Close(fd) }

func fstatFD(fd int) (int64, time.Time, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, time.Time{}, err
	}
	return st.Size, time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)), nil
}
