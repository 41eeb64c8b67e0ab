package orchestrator

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher tells an index of the changes in the directories it lists:
// an inotify instance read without blocking, when a history is read,
// with no goroutine of its own. It is closed when its index is no longer
// used (runtime.AddCleanup).
type watcher struct {
	fd     int  // -1: none could be made
	broken bool // a read failed: it tells nothing more (fd is closed by the cleanup only)
	dir    map[int32]string
	buf    []byte
}

// watchMask is what changes a directory's files: one made, moved in or
// out, removed, written or its times changed; and the directory itself
// removed or moved.
const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE |
	unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// newWatcher returns a watcher for x; one that tells nothing when the
// system gives none (too many instances, say).
func newWatcher(x *index) *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return &watcher{fd: -1}
	}
	runtime.AddCleanup(x, func(fd int) { unix.Close(fd) }, fd)
	return &watcher{fd: fd, dir: map[int32]string{}, buf: make([]byte, 64<<10)}
}

// add watches dir, and reports whether it could.
func (w *watcher) add(dir string) bool {
	if w.fd < 0 || w.broken {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return false
	}
	w.dir[int32(wd)] = dir
	return true
}

// drain tells x of every change queued, and reports whether the watcher
// works (false: x lists its directories itself).
func (w *watcher) drain(x *index) bool {
	if w.fd < 0 || w.broken {
		return false
	}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EAGAIN || err == nil && n == 0 {
			return true
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.broken = true
			x.lost()
			return false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				for i, c := range raw {
					if c == 0 {
						raw = raw[:i]
						break
					}
				}
				name = string(raw)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch dir, ok := w.dir[ev.Wd]; {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				x.lost()
			case !ok:
			case ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				if ev.Mask&unix.IN_MOVE_SELF != 0 {
					// Moved away, the directory is still watched
					// where it went: the watch is taken off.
					_, _ = unix.InotifyRmWatch(w.fd, uint32(ev.Wd))
				}
				delete(w.dir, ev.Wd)
				x.told(dir, "")
			default:
				x.told(dir, name)
			}
		}
	}
}
