package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// FileID identifies a file on its filesystem: its device and inode. Two
// names with one FileID are hard links to one file; a name whose FileID
// changed was replaced (a rename over it, a symbolic link swapped in).
// The zero FileID means "not known".
type FileID struct{ Dev, Ino uint64 }

// IsZero reports whether the FileID is unknown.
func (f FileID) IsZero() bool { return f == FileID{} }

// FileIDOf returns the FileID of a file as os.Lstat or os.Stat describe it;
// the zero FileID where the system does not say.
func FileIDOf(info fs.FileInfo) FileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return FileID{}
}

// Links returns how many names (hard links) a file has, as os.Lstat
// describes it; 1 where the system does not say.
func Links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// Linked reports whether a file in an outbox, as os.Lstat describes it,
// is a link: a symbolic link, or a file with more than one name. Such a
// file is refused where it is: delivered, it would hand out a file its
// sender may not read; moved to rejected/, where a person mends a refused
// file, it would have them edit the file it is linked to.
func Linked(info fs.FileInfo) bool {
	return info.Mode()&fs.ModeSymlink != 0 || Links(info) > 1
}

// Snapshot is a message file as it was read: its bytes, and what fstat(2)
// said of the file that was opened, so that what is done with the name
// afterwards can be checked to concern the same file.
type Snapshot struct {
	Data    []byte
	ID      FileID
	Links   uint64 // hard links to the file; more than 1 in an outbox is refused
	Size    int64
	ModTime time.Time
	fd      int // open until Close; -1 after
}

// Close closes the file that was read. It may be called more than once.
func (s *Snapshot) Close() error {
	if s == nil || s.fd < 0 {
		return nil
	}
	fd := s.fd
	s.fd = -1
	return closeFD(fd)
}

// Changed reports whether the file that was read changed since (its size
// or modification time, as fstat(2) of the open file says): a writer went
// on writing into it.
func (s *Snapshot) Changed() bool {
	if s == nil || s.fd < 0 {
		return false
	}
	size, mod, err := fstatFD(s.fd)
	return err == nil && (size != s.Size || !mod.Equal(s.ModTime))
}

// ErrReplaced is the error for a name that no longer refers to the file
// that was read: something was moved or linked in its place since. The
// file there is left alone.
var ErrReplaced = errors.New("the file was replaced after it was read")

// checkSame returns ErrReplaced unless path names the file want (a zero
// want checks nothing).
func checkSame(path string, want FileID) error {
	if want.IsZero() {
		return nil
	}
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || FileIDOf(info) != want {
		return fmt.Errorf("%s: %w", path, ErrReplaced)
	}
	return nil
}

// NotDirError is the error for a mailbox, or one of its state
// directories, that is something else than a directory: a symbolic link
// (never followed: it would make parley read or write elsewhere), or a
// file.
type NotDirError struct {
	Path   string      // the path found
	Mode   fs.FileMode // what it is
	Target string      // where a symbolic link points
}

func (e *NotDirError) Error() string {
	if e.Mode&fs.ModeSymlink != 0 {
		return fmt.Sprintf("%s is a symbolic link (to %s), which parley does not follow: put a directory there", e.Path, e.Target)
	}
	return fmt.Sprintf("%s is a file, not a directory", e.Path)
}

// CheckDirs returns a *NotDirError when the mailbox, or one of the named
// state directories (every one when none is named), is not a directory,
// and an error matching fs.ErrNotExist when one is missing. A mailbox
// directory replaced by a symbolic link is never used: it would make
// parley route the files of the folder it points to, or deliver outside
// the workspace.
func (d Dir) CheckDirs(states ...string) error {
	if len(states) == 0 {
		states = States
	}
	if err := checkDir(string(d)); err != nil {
		return err
	}
	for _, s := range states {
		if err := checkDir(d.dir(s)); err != nil {
			return err
		}
	}
	return nil
}

func checkDir(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return nil
	}
	e := &NotDirError{Path: path, Mode: info.Mode()}
	if info.Mode()&fs.ModeSymlink != 0 {
		e.Target, _ = os.Readlink(path)
	}
	return e
}

// ChangeTime returns when a file's inode last changed (its ctime: a new
// link counts), as os.Lstat describes it; its modification time where the
// system does not say.
func ChangeTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return statCtime(st)
	}
	return info.ModTime()
}
