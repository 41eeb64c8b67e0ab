package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncDisk flushes the filesystem holding dir, as the router does.
func syncDisk(dir *os.File) error { return unix.Syncfs(int(dir.Fd())) }
