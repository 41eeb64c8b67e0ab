//go:build !linux

package pipe

import "os"

// Unread returns how many bytes written to the pipe f wait in it
// unread; ok is false: this system is not asked.
func Unread(f *os.File) (n int, ok bool) { return 0, false }
