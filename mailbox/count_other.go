//go:build !linux

package mailbox

import (
	"errors"
	"io"
	"os"
)

// countMessages counts the entries of a directory that are messages:
// neither reason files nor scratch files.
func countMessages(dir string) (int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(4096)
		for _, name := range names {
			if !hasReasonSuffix(name) && !IsScratch(name) {
				n++
			}
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
