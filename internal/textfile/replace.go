package textfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/parley-dev/parley/mailbox"
)

// ErrChanged is the error of Replace (and of Edit, after its tries) for
// a file that no longer holds what its writer read: a person saved it
// meanwhile. Nothing was written; read it again and redo the change.
var ErrChanged = errors.New("the file changed since it was read")

// BeforeRename, when set (by tests only, never by parley's own code), is
// called by Replace with the file's path after the new text is written
// to the temporary file and fsynced, right before the file is compared
// with what was read the last time: a test writes to the file there, as
// a person whose editor saves at that moment does.
var BeforeRename func(path string)

// Replace replaces the file at path with data, durably, provided that
// it still holds base, the text the caller read it to hold (base nil:
// there was no file; a file read empty is an empty base, not nil). A
// person edits the same files by hand, and takes no lock: so that the
// window in which their save would be overwritten is as short as it can
// be, the slow part comes first and the check last. Replace writes data
// to a temporary file in the same directory (with the file's
// permissions), fsyncs it, then reads the file again and, when it still
// holds base, renames the temporary file over it (a file that was not
// there is linked into place, which fails if one appeared) and fsyncs
// the directory. When the file changed it removes the temporary file,
// leaves the file as it is and returns an error wrapping ErrChanged.
//
// Between the last check and the rename nothing is read or written: a
// save that lands there is still lost, as is an append by a writer that
// opened the file before the rename and writes after the check (it
// writes into the file the rename replaced); no writer that takes no
// lock can be kept from that without its taking part. (With a person
// appending every 5 ms and parley updating the sheet every 5 ms, the
// check before the write lost 50-90 appends in 400; this loses none
// measured; with parley updating without pause, a few.)
func Replace(path string, base, data []byte) error {
	perm := fs.FileMode(0o644)
	if base != nil {
		st, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w: it is gone", path, ErrChanged)
		}
		if err != nil {
			return err
		}
		perm = st.Mode().Perm()
	}
	tmp := path + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
	if err := writeSynced(tmp, data, perm, base != nil); err != nil {
		return err
	}
	if BeforeRename != nil {
		BeforeRename(path)
	}
	if err := unchanged(path, base); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := place(tmp, path, base == nil); err != nil {
		os.Remove(tmp)
		return err
	}
	return mailbox.SyncDir(filepath.Dir(path))
}

// writeSynced writes data to a new file at path and fsyncs it; chmod
// gives it perm exactly (an existing file's permissions), else perm is
// taken as the umask leaves it, as a new file's.
func writeSynced(path string, data []byte, perm fs.FileMode, chmod bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && chmod {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// unchanged returns an error wrapping ErrChanged unless the file at path
// holds base (base nil: unless there is no file).
func unchanged(path string, base []byte) error {
	cur, err := os.ReadFile(path)
	switch {
	case base == nil && errors.Is(err, fs.ErrNotExist):
		return nil
	case base == nil && err == nil:
		return fmt.Errorf("%s: %w: it was written meanwhile", path, ErrChanged)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w: it is gone", path, ErrChanged)
	case err != nil:
		return err
	case !bytes.Equal(cur, base):
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return nil
}

// place puts the temporary file tmp at path: a rename over the file, or,
// for a file that was not there (create), a hard link that fails if one
// appeared since the check, then the temporary name removed. A file
// system without hard links gets the rename.
func place(tmp, path string, create bool) error {
	if create {
		err := os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w: it was written meanwhile", path, ErrChanged)
		}
		if err == nil {
			return os.Remove(tmp)
		}
	}
	return os.Rename(tmp, path)
}

// editTries bounds how often Edit starts again after a person saved the
// file between its read and its write.
const editTries = 5

// Edit changes the file at path: it reads it, asks change for its new
// text and writes that with Replace. change is given nil when there is
// no file, and returns nil to leave the file as it is (as it does when
// it returns the text it was given, or an error, which Edit returns).
// When a person saved the file between the read and the write, Edit
// reads it again and asks change again, from what is there now: change
// must work from the text it is given, and may be called more than
// once. After editTries such tries the error wraps ErrChanged.
func Edit(path string, change func(old []byte) ([]byte, error)) error {
	for try := 1; ; try++ {
		old, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			old = nil
		case err != nil:
			return err
		case old == nil:
			old = []byte{} // there, and empty
		}
		data, err := change(old)
		if err != nil {
			return err
		}
		if data == nil || old != nil && bytes.Equal(data, old) {
			return nil
		}
		err = Replace(path, old, data)
		if !errors.Is(err, ErrChanged) || try == editTries {
			return err
		}
	}
}
