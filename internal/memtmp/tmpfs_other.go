//go:build !linux

package memtmp

// isTmpfs reports whether dir is on a tmpfs: only Linux is asked.
func isTmpfs(dir string) bool { return false }
