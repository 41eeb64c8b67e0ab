package mailbox

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Durability. A file is durable when its data, its inode and the directory
// entry naming it have reached the disk. parley gets there in one of two
// ways:
//
//   - one file at a time (Send, Claim, Finish, GiveUp): write the file in
//     tmp/, fsync it, rename it into place, fsync the directory;
//   - a batch at a time (the router's deliveries): write and rename many
//     files without syncing, then call Syncer.Sync once. On Linux that is a
//     single syncfs(2) on the workspace's filesystem; elsewhere each file is
//     fsynced as it is written and each touched directory at Sync.
//
// A caller reports a batch as delivered only after Sync returned.

// Syncer makes the writes and renames of a batch durable together.
type Syncer struct {
	root    *os.File // a directory on the filesystem to sync
	perFile bool     // no syncfs here: fsync files as written, dirs at Sync

	mu   sync.Mutex
	dirs map[string]struct{}
}

// NewSyncer returns a Syncer for the filesystem holding root (a
// directory). Close it when done.
func NewSyncer(root string) (*Syncer, error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	return &Syncer{root: f, perFile: !haveSyncfs, dirs: make(map[string]struct{})}, nil
}

// Sync makes every write and rename done through the Syncer since the last
// Sync durable.
func (s *Syncer) Sync() error {
	if !s.perFile {
		return syncfs(s.root)
	}
	s.mu.Lock()
	dirs := s.dirs
	s.dirs = make(map[string]struct{})
	s.mu.Unlock()
	var errs []error
	for d := range dirs {
		errs = append(errs, syncDir(d))
	}
	return errors.Join(errs...)
}

// Close releases the Syncer's directory handle.
func (s *Syncer) Close() error { return s.root.Close() }

func (s *Syncer) dirty(dir string) {
	if !s.perFile {
		return
	}
	s.mu.Lock()
	s.dirs[dir] = struct{}{}
	s.mu.Unlock()
}

// WriteFileAtomic replaces path with data durably: it writes a temporary
// file in the same directory, fsyncs it, renames it over path and fsyncs
// the directory. Readers see the old content or the new, never a mix.
//
// The temporary file's name is path's with a random part and ".tmp"
// added, so writers of the same file at once never share one.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
	if err := writeFile(tmp, data, true); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, making the entries created, renamed or
// removed in it durable.
func SyncDir(dir string) error { return syncDir(dir) }

// syncDir fsyncs a directory, making the entries renamed into it durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
