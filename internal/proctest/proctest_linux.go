// Package proctest helps tests that watch processes parley starts.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Gone waits up to within for the process pid to end (a zombie runs no
// more) and reports whether it did. It waits on a pidfd, which says when
// the process exits, and never kills it.
func Gone(pid int, within time.Duration) bool {
	if pid <= 0 {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err == nil {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(within.Milliseconds()))
			if err == unix.EINTR {
				continue
			}
			if err == nil && n > 0 {
				return true
			}
			break
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return bytes.HasPrefix(rest, []byte("Z"))
}
