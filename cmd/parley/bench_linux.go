package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// syncDisk flushes the filesystem holding dir, as the router does.
func syncDisk(dir *os.File) error { return unix.Syncfs(int(dir.Fd())) }

// peakRSS returns the peak resident memory of a process (VmHWM), in
// bytes; 0 when it cannot be read.
func peakRSS(pid int) int64 { return procStatus(pid, "VmHWM:") }

// anonRSS returns the anonymous memory a process holds now (RssAnon: what
// it allocated, not the pages of its executable and files it maps), in
// bytes; 0 when it cannot be read.
func anonRSS(pid int) int64 { return procStatus(pid, "RssAnon:") }

// procStatus reads a size in kB from a process's /proc status, in bytes.
func procStatus(pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
