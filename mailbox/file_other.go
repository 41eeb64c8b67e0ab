//go:build !unix

package mailbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ReadFile reads a message file someone else wrote: it refuses anything
// but a regular file (*NotRegularError) and reads at most max bytes
// (*TooLargeError beyond).
func ReadFile(path string, max int64) ([]byte, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := CheckFile(info, max); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Size: -1, Max: max}
	}
	return data, nil
}

// writeFile creates path with data, and fsyncs it when sync is set. Any
// file already at path is removed first and the new one created
// exclusively. On a failed write the file is removed.
func writeFile(path string, data []byte, sync bool) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
	}
	return f.Close()
}

// syncFile fsyncs the regular file at path, which someone else may have
// written, and reports whether it did. Anything else (a symbolic link, a
// pipe, a directory) is left alone.
func syncFile(path string) (synced bool, err error) {
	info, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if !info.Mode().IsRegular() {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}
