//go:build !linux

package mailbox

import "errors"

// BeingWritten reports whether any process has the file at path open for
// writing. Only Linux can tell (with a read lease); elsewhere it returns
// errors.ErrUnsupported.
func BeingWritten(path string) (bool, error) {
	return false, errors.ErrUnsupported
}
