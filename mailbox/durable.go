package mailbox

import (
	"errors"
	"io/fs"
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
//   - a batch at a time (the router's deliveries, a handler's answers): write
//     and rename many files through the Syncer without syncing, then call
//     Syncer.Sync once. On Linux that is a single syncfs(2) on the
//     workspace's filesystem; elsewhere (macOS) each file is fsynced as it
//     is written, and each directory touched and each file noted with
//     Syncer.Wrote at Sync.
//
// A caller reports a batch as delivered only after Sync returned. A file
// written or renamed around the Syncer (os.WriteFile, os.Rename) is made
// durable by Sync on Linux only: use the Syncer's methods.

// Syncer makes the writes and renames of a batch durable together.
type Syncer struct {
	root    *os.File // a directory on the filesystem to sync
	perFile bool     // no syncfs here: fsync files as written, dirs at Sync

	// syncing makes per-file Syncs take turns: a Sync that finds nothing
	// left to sync returns only once the one syncing its writes is done.
	syncing sync.Mutex

	mu    sync.Mutex
	dirs  map[string]struct{}   // directories to fsync at the next Sync
	files map[*os.File]struct{} // open files to fsync at the next Sync
}

// NewSyncer returns a Syncer for the filesystem holding root (a
// directory). Close it when done.
func NewSyncer(root string) (*Syncer, error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	return &Syncer{root: f, perFile: !haveSyncfs, dirs: make(map[string]struct{}), files: make(map[*os.File]struct{})}, nil
}

// Sync makes every write and rename done through the Syncer since the last
// Sync durable. Without syncfs, a directory removed since it was touched
// is skipped, and what failed to sync is tried again at the next Sync.
func (s *Syncer) Sync() error {
	if !s.perFile {
		return syncfs(s.root)
	}
	s.syncing.Lock()
	defer s.syncing.Unlock()
	s.mu.Lock()
	dirs, files := s.dirs, s.files
	s.dirs, s.files = make(map[string]struct{}), make(map[*os.File]struct{})
	s.mu.Unlock()
	var errs []error
	for f := range files {
		if err := f.Sync(); err != nil {
			errs = append(errs, err)
			s.wrote(f)
		}
	}
	for d := range dirs {
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			s.dirty(d)
		}
	}
	return errors.Join(errs...)
}

// WriteFile creates path with data as writeFile does (a file already there
// is replaced, a symbolic link in its place is not followed). The file is
// durable once Sync returns.
func (s *Syncer) WriteFile(path string, data []byte) error {
	if err := writeFile(path, data, s.perFile); err != nil {
		return err
	}
	s.dirty(filepath.Dir(path))
	return nil
}

// Rename renames oldpath, a file or a directory, to newpath; the rename is
// durable once Sync returns. Files written through the Syncer into a
// directory renamed this way are synced under its new name.
func (s *Syncer) Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	if !s.perFile {
		return nil
	}
	oldpath, newpath = filepath.Clean(oldpath), filepath.Clean(newpath)
	s.mu.Lock()
	if _, ok := s.dirs[oldpath]; ok {
		delete(s.dirs, oldpath)
		s.dirs[newpath] = struct{}{}
	}
	s.mu.Unlock()
	s.dirty(filepath.Dir(oldpath))
	s.dirty(filepath.Dir(newpath))
	return nil
}

// Wrote notes that f, a file kept open, has been written to: the writes
// are durable once Sync returns. f must stay open until then.
func (s *Syncer) Wrote(f *os.File) {
	if s.perFile {
		s.wrote(f)
	}
}

func (s *Syncer) wrote(f *os.File) {
	s.mu.Lock()
	s.files[f] = struct{}{}
	s.mu.Unlock()
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
