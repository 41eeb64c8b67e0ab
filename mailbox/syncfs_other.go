//go:build !linux

package mailbox

import (
	"errors"
	"os"
)

const haveSyncfs = false

func syncfs(*os.File) error { return errors.New("syncfs is not available") }
