package mailbox

import (
	"os"

	"golang.org/x/sys/unix"
)

const haveSyncfs = true

// syncfs flushes every dirty file and directory of the filesystem holding
// dir to disk (syncfs(2)); it reports write-back errors since Linux 5.8.
func syncfs(dir *os.File) error {
	return unix.Syncfs(int(dir.Fd()))
}
