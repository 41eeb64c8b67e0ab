// Package sandbox confines a program to the files it may touch: it
// restricts the calling thread, and so the program it then executes, with
// Landlock where the kernel offers it (Linux 5.13 and later), through the
// kernel's three system calls. The
// runner uses it to give a player's program a view of the workspace that
// holds only what its character may know.
package sandbox

import "errors"

// Rules are the files and directories a confined program may use: Read
// ones it may read (and execute), Write ones it may also change, create
// in and remove from. A directory counts with everything under it. A path
// that does not exist is left out. Everything else is out of reach.
type Rules struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// ErrUnavailable is returned by Restrict where the kernel offers no
// Landlock (another system, an older kernel, Landlock turned off).
var ErrUnavailable = errors.New("landlock is not available on this system")
