package mailbox

import (
	"fmt"
	"io/fs"
	"strings"
)

// NotRegularError is the error for a mailbox entry that is not a regular
// file: a symbolic link (never followed), a named pipe or device (never
// read), a directory or a socket.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	m := e.Mode
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link, which parley does not follow: put a copy of the file it points to in its place"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO), which parley does not read: a message is a regular file"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device, which parley does not read: a message is a regular file"
	case m.IsDir():
		return "a directory: a message is a regular file"
	case m&fs.ModeSocket != 0:
		return "a socket: a message is a regular file"
	}
	return "not a regular file"
}

// TooLargeError is the error for a message file over the size limit.
type TooLargeError struct {
	Size int64 // the file's size; -1 when it grew past Max while being read
	Max  int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("file is over the %s limit (router.max_message_size in parley.yaml)", SizeString(e.Max))
	}
	return fmt.Sprintf("file is %s, over the %s limit (router.max_message_size in parley.yaml)", SizeOver(e.Size, e.Max), SizeString(e.Max))
}

// CheckFile returns a *NotRegularError or a *TooLargeError when a file,
// as lstat(2) describes it, cannot be a message of at most max bytes.
func CheckFile(info fs.FileInfo, max int64) error {
	if !info.Mode().IsRegular() {
		return &NotRegularError{Mode: info.Mode()}
	}
	if info.Size() > max {
		return &TooLargeError{Size: info.Size(), Max: max}
	}
	return nil
}

// SizeString formats a byte count the way parley's messages do: "1 MiB",
// "1.5 KiB", "200 bytes". A count that one decimal would round to a whole
// number of units, but is not one, is said in bytes ("1048600 bytes",
// not "1.0 MiB").
func SizeString(n int64) string {
	return sizeString(n, func(rounded, _ string) bool { return strings.HasSuffix(rounded, ".0") })
}

// SizeOver formats the size n of something over limit as SizeString
// does, but says it in bytes only where, rounded, it would read like the
// limit it passes: a file of 2097168 bytes is "2.0 MiB" over a 1 MiB
// limit, one of 1048600 bytes is "1048600 bytes", not "1.0 MiB".
func SizeOver(n, limit int64) string {
	return sizeString(n, func(rounded, unit string) bool {
		return strings.TrimSuffix(rounded, ".0")+" "+unit == SizeString(limit)
	})
}

// sizeString formats n in the largest unit it has one of, with one
// decimal, or in bytes where inBytes says the rounded number of unit
// would mislead.
func sizeString(n int64, inBytes func(rounded, unit string) bool) string {
	for _, u := range []struct {
		unit  string
		shift uint
	}{{"MiB", 20}, {"KiB", 10}} {
		if n < 1<<u.shift {
			continue
		}
		if n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.unit)
		}
		if s := fmt.Sprintf("%.1f", float64(n)/float64(int64(1)<<u.shift)); !inBytes(s, u.unit) {
			return s + " " + u.unit
		}
		break
	}
	return fmt.Sprintf("%d bytes", n)
}
