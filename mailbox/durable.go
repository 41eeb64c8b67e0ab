package mailbox

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Durability. A file is durable when its data, its inode and the directory
// entry naming it have reached the disk. parley gets there in one of two
// ways:
//
//   - one file at a time (Send, Claim, Finish, GiveUp): write the file in
//     tmp/, fsync it, rename it into place, fsync the directory;
//   - a batch at a time (the router's deliveries, the journal's lines):
//     write and rename many files through the Syncer without syncing, then
//     call Syncer.Sync once. On Linux that is a single syncfs(2) on the
//     workspace's filesystem; elsewhere (macOS) each file is fsynced as it
//     is written, and each directory touched and each file noted with
//     Syncer.Wrote at Sync;
//   - a stage at a time (a driver's answers to a message, see Stage): on
//     Linux written without syncing and made durable by one syncfs(2) at
//     Commit; elsewhere each file is fsynced as it is written (or at
//     Commit for the files a program wrote itself), then the stage
//     directory and tmp/ at Commit, without Sync.
//
// A caller reports a batch as delivered only after Sync returned. A file
// written or renamed around the Syncer (os.WriteFile, os.Rename) is made
// durable by Sync on Linux only: use the Syncer's methods.

// Syncer makes the writes and renames of a batch durable together.
type Syncer struct {
	root    *os.File // a directory on the filesystem to sync
	perFile bool     // no syncfs here: fsync files as written, dirs at Sync

	// onSync, when set (by tests only), is told of every fsync of a file
	// or directory done for a Stage or at Sync, and of every syncfs (with
	// root's name). It may be called from several goroutines at once.
	onSync func(path string)

	// CommitFault, when set (by tests, of this package or of its
	// callers), is called by Stage.Commit after its rename, in place of
	// the sync that follows it when it returns an error: a stand-in for
	// a sync that fails (syncfs(2) returns ENOSPC when a write it flushes
	// finds no room). Set it before the Syncer is used.
	CommitFault func() error

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
		err := syncfs(s.root)
		if err == nil {
			s.noteSync(s.root.Name())
		}
		return err
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
		if err := s.syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			s.dirty(d)
		}
	}
	return errors.Join(errs...)
}

// SyncSeen makes durable what another process wrote into the directories
// named and has not synced yet (the router's copies in an inbox, seen by
// the bridge between their write and the router's Sync), before anything
// is done with it that cannot be undone. On Linux it is Sync: one
// syncfs(2), which takes every write made on the filesystem before it.
// Elsewhere the writers fsync each file as they write it (see Durability)
// and the directories' entries are fsynced here.
func (s *Syncer) SyncSeen(dirs ...string) error {
	if !s.perFile {
		return s.Sync()
	}
	var errs []error
	for _, d := range dirs {
		errs = append(errs, s.syncDir(d))
	}
	return errors.Join(errs...)
}

// writeFile creates path with data (see writeFile), fsynced where there
// is no syncfs, and reports whether it fsynced it.
func (s *Syncer) writeFile(path string, data []byte) (synced bool, err error) {
	sync := s.perFile
	if err := writeFile(path, data, sync); err != nil {
		return false, err
	}
	if sync {
		s.noteSync(path)
	}
	return sync, nil
}

// syncFile fsyncs the file at path if it is a regular file (see
// syncFile).
func (s *Syncer) syncFile(path string) error {
	synced, err := syncFile(path)
	if synced {
		s.noteSync(path)
	}
	return err
}

// syncDir fsyncs a directory.
func (s *Syncer) syncDir(dir string) error {
	if err := syncDir(dir); err != nil {
		return err
	}
	s.noteSync(dir)
	return nil
}

// noteSync tells the test hook, if any, that path was synced.
func (s *Syncer) noteSync(path string) {
	if s.onSync != nil {
		s.onSync(path)
	}
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
	if err := rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, making the entries created, renamed or
// removed in it durable.
func SyncDir(dir string) error { return syncDir(dir) }

// dirSynced, when set (by tests only), is told of every directory
// syncDir fsyncs.
var dirSynced func(dir string)

// syncDir fsyncs a directory, making the entries renamed into it durable.
func syncDir(dir string) error {
	if dirSynced != nil {
		dirSynced(dir)
	}
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

// rename is os.Rename for files, without the lstat of the destination
// that os.Rename makes first (to refuse renaming over a directory, which
// the kernel refuses for a file too): one system call fewer for each
// message routed and each one claimed and finished.
func rename(src, dst string) error {
	if err := syscall.Rename(src, dst); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}
