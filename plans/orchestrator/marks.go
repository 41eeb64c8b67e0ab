package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/parley-dev/parley/mailbox"
)

// marks keeps, of each mailbox state directory a Tick looks in for a
// person's escalations or answers, which message files have a header
// field (escalation:, reply_to:), one bit a file: a Tick reads whole only
// those, and reads a file's header once, when its name is new, not at
// every look. A directory is listed again only when it changed (its
// inode, modification or change time), or was listed within a tick of
// the filesystem's clock after a change. What is kept is small: a note
// left unread in a person's inbox costs its name. A file rewritten in
// place keeps its mark. Safe for concurrent use.
type marks struct {
	mu   sync.Mutex
	dirs map[string]*marked // "dir\x00field" -> what was listed
}

// marked is one directory as last listed, for one field.
type marked struct {
	dirStamp
	has   map[string]bool // file name -> the field is set (a name not read as a message is absent)
	names []string        // those with the field set, sorted
}

// with returns the names of the message files in dir whose header sets
// field, sorted; read reads a file (seen, for a test, is called with
// each path stat'ed or read). Nil when dir cannot be read.
func (k *marks) with(dir, field string, read func(path string) (*mailbox.Message, error)) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := dir + "\x00" + field
	info, err := os.Lstat(dir)
	if err != nil {
		delete(k.dirs, key)
		return nil
	}
	d := k.dirs[key]
	if d != nil && d.same(info) {
		return d.names
	}
	all, stamp, err := listDir(dir, info)
	if err != nil {
		return nil
	}
	nd := &marked{dirStamp: stamp, has: make(map[string]bool, len(all))}
	for _, name := range all {
		if _, ok := mailbox.IDFromName(name); !ok {
			continue
		}
		if d != nil {
			if has, ok := d.has[name]; ok {
				nd.has[name] = has
				continue
			}
		}
		m, err := read(filepath.Join(dir, name))
		if err != nil {
			continue // tried again at the next listing
		}
		nd.has[name] = has(m, field)
	}
	for name, has := range nd.has {
		if has {
			nd.names = append(nd.names, name)
		}
	}
	slices.Sort(nd.names)
	if k.dirs == nil {
		k.dirs = map[string]*marked{}
	}
	k.dirs[key] = nd
	return nd.names
}
