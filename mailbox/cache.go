package mailbox

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cache keeps what a reader takes of the messages read from files (Of:
// the message as parsed, or a field of it), each while its file stays as
// it was read: the same file (device and inode), size, modification and
// change times. A reader that goes over a mailbox's history again and
// again (the orchestrator, for each message it handles; a command
// agent's thread, for each message it is sent) parses each file once,
// not once a look: a look costs an lstat per file. A file rewritten in place at the same size within one
// tick of the filesystem's clock after it was read is not seen to change
// (a few milliseconds on Linux before 6.13; since, ext4, xfs, btrfs and
// tmpfs give a file changed after a look a finer time).
//
// What is kept is shared: a caller that changes a message kept changes a
// Clone. A Cache is safe for concurrent use.
type Cache[T any] struct {
	of   func(*Message) T
	mu   sync.Mutex
	dirs map[string]map[string]cached[T] // directory -> file name -> what was read
}

type cached[T any] struct {
	id           FileID
	size         int64
	mtime, ctime time.Time
	v            T
}

// NewCache returns a Cache that keeps of(m) of each message m read.
func NewCache[T any](of func(*Message) T) *Cache[T] {
	return &Cache[T]{of: of}
}

// Read returns what the cache keeps of the message in dir/name as Parse
// reads it from ReadFile (at most max bytes), from the cache while the
// file is unchanged. An error (the file gone, too large, no message) is
// not kept.
func (c *Cache[T]) Read(dir, name string, max int64) (T, error) {
	var none T
	path := filepath.Join(dir, name)
	info, err := os.Lstat(path)
	if err != nil {
		c.forget(dir, name)
		return none, err
	}
	mtime, ctime := info.ModTime(), ChangeTime(info)
	c.mu.Lock()
	e, ok := c.dirs[dir][name]
	c.mu.Unlock()
	if ok && e.id == FileIDOf(info) && e.size == info.Size() && e.mtime.Equal(mtime) && e.ctime.Equal(ctime) {
		return e.v, nil
	}
	snap, err := ReadSnapshot(path, max)
	if err != nil {
		c.forget(dir, name)
		return none, err
	}
	snap.Close()
	m, err := Parse(snap.Data)
	if err != nil {
		c.forget(dir, name)
		return none, err
	}
	v := c.of(m)
	if snap.ID != FileIDOf(info) || snap.Size != info.Size() || !snap.ModTime.Equal(mtime) {
		// Replaced or written between the lstat and the read: what
		// was read is returned, and read again next time.
		c.forget(dir, name)
		return v, nil
	}
	c.mu.Lock()
	if c.dirs == nil {
		c.dirs = map[string]map[string]cached[T]{}
	}
	if c.dirs[dir] == nil {
		c.dirs[dir] = map[string]cached[T]{}
	}
	c.dirs[dir][name] = cached[T]{id: snap.ID, size: snap.Size, mtime: mtime, ctime: ctime, v: v}
	c.mu.Unlock()
	return v, nil
}

// Keep forgets the files of dir not among names (the directory's
// names, as just listed): those moved away or removed.
func (c *Cache[T]) Keep(dir string, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.dirs[dir]
	if len(kept) == 0 {
		return
	}
	listed := make(map[string]bool, len(names))
	for _, n := range names {
		listed[n] = true
	}
	for n := range kept {
		if !listed[n] {
			delete(kept, n)
		}
	}
}

// Len is how many messages the cache holds.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.dirs {
		n += len(d)
	}
	return n
}

func (c *Cache[T]) forget(dir, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.dirs[dir], name)
}
