package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Staging. What an agent's driver says in answer to a message is staged
// in the agent's tmp/, and sent only once all of it is written:
//
//  1. Open: tmp/<id>.out/ is created empty (what an earlier attempt left
//     there is removed). A command program gets it as PARLEY_OUTBOX and
//     may write message files into it itself;
//  2. Take and Add: the runner reads what the program wrote, and writes
//     the answers, as message files;
//  3. Commit: tmp/<id>.out/ is renamed tmp/<id>.out.ready/ and made
//     durable, files and directories: the commit point;
//  4. Publish: each file of the ready directory is renamed into the
//     outbox, where the router takes it; the message answered moves from
//     cur/ to done/; the ready directory, now empty, is removed last.
//
// A runner stopped at any point finds what it left with Dir.Stages: a
// ready stage is published (again: each step of Publish can be redone),
// an open one discarded and its message handled again. So what an agent
// says is sent exactly once.
//
// Durability follows the Syncer: where there is syncfs, files are written
// without syncing and one syncfs at Commit makes the stage durable;
// elsewhere every file is fsynced as it is written (or, for the files a
// program wrote itself, at Commit), then the stage directory, and tmp/
// once the stage is renamed.

// Suffixes of the stage directories in tmp/: "<id>.out" while the answers
// are written, "<id>.out.ready" once they are committed.
const (
	openSuffix  = ".out"
	readySuffix = ".out.ready"
)

// Stage is where the answers to one message wait until they are sent:
// tmp/<id>.out/ while they are written, tmp/<id>.out.ready/ once
// committed. Its methods are not safe for concurrent use; one worker
// handles a message at a time.
type Stage struct {
	dir       Dir
	id        string // the message answered
	s         *Syncer
	committed bool
	synced    map[string]bool // files of the stage written and fsynced by Add
}

// Stage returns the stage of the answers to the message with this id.
// Nothing is created before Open. Its writes are made durable through s.
func (d Dir) Stage(id string, s *Syncer) *Stage {
	return &Stage{dir: d, id: id, s: s, synced: make(map[string]bool)}
}

// Stages returns the stages a stopped runner left in tmp/, in the order
// their messages were sent: committed ones (Committed reports true) are
// to be published, open ones discarded.
func (d Dir) Stages(s *Syncer) ([]*Stage, error) {
	des, err := os.ReadDir(filepath.Join(string(d), Tmp))
	if err != nil {
		return nil, err
	}
	var out []*Stage
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		name := de.Name()
		if id, ok := cutID(name, readySuffix); ok {
			st := d.Stage(id, s)
			st.committed = true
			out = append(out, st)
		} else if id, ok := cutID(name, openSuffix); ok {
			out = append(out, d.Stage(id, s))
		}
	}
	return out, nil
}

// cutID returns the id a stage directory's name starts with.
func cutID(name, suffix string) (string, bool) {
	id, ok := strings.CutSuffix(name, suffix)
	return id, ok && IsID(id)
}

// ID returns the id of the message the stage answers.
func (st *Stage) ID() string { return st.id }

// Committed reports whether the stage is committed: its answers are
// durable and will be sent, by Publish, exactly once.
func (st *Stage) Committed() bool { return st.committed }

// Path returns the directory the answers are written in, before Commit:
// the PARLEY_OUTBOX of a command program.
func (st *Stage) Path() string { return st.dir.Path(Tmp, st.id+openSuffix) }

func (st *Stage) readyPath() string { return st.dir.Path(Tmp, st.id+readySuffix) }

// errCommitted is the error for writing to or discarding a stage that is
// committed, and errNotCommitted for publishing one that is not.
var (
	errCommitted    = errors.New("the stage is committed")
	errNotCommitted = errors.New("the stage is not committed")
)

// Open makes the stage empty for an attempt at answering: what an
// earlier attempt left is removed, and the directory created.
func (st *Stage) Open() error {
	if st.committed {
		return fmt.Errorf("open stage of %s: %w", st.id, errCommitted)
	}
	clear(st.synced)
	if err := os.RemoveAll(st.Path()); err != nil {
		return fmt.Errorf("clearing the stage: %w", err)
	}
	// MkdirAll: tmp/ itself may have gone (`git clean -fdX` removes it).
	return os.MkdirAll(st.Path(), 0o755)
}

// Take reads and removes the files a program wrote into the stage
// itself: its regular files, in name order, scratch files (see
// IsScratch) left out and left there. A file over max bytes is a
// *TooLargeError.
func (st *Stage) Take(max int64) ([][]byte, error) {
	des, err := os.ReadDir(st.Path())
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, de := range des {
		if !de.Type().IsRegular() || IsScratch(de.Name()) {
			continue
		}
		path := filepath.Join(st.Path(), de.Name())
		data, err := ReadFile(path, max)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, data)
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		delete(st.synced, de.Name())
	}
	return out, nil
}

// Add writes data into the stage as the file name (a message is named
// FileName(id)), replacing a file of that name. Where there is no syncfs
// the file is fsynced as it is written; elsewhere Commit makes it
// durable.
func (st *Stage) Add(name string, data []byte) error {
	if st.committed {
		return fmt.Errorf("add %s to the stage of %s: %w", name, st.id, errCommitted)
	}
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return fmt.Errorf("add %q to the stage of %s: not a file name", name, st.id)
	}
	synced, err := st.s.writeFile(filepath.Join(st.Path(), name), data)
	if err != nil {
		return err
	}
	st.synced[name] = synced
	return nil
}

// Commit makes the stage ready, durably: the commit point, after which
// the answers are sent exactly once and the message must not be handled
// again. Where there is no syncfs it fsyncs the files a program wrote
// into the stage itself (Add fsynced the others), then the stage
// directory, renames it, and fsyncs tmp/; elsewhere it renames the stage
// and syncs the filesystem. Links, pipes or directories a program left in
// the stage are moved as they are, for the router to refuse; only their
// names are made durable.
//
// An error before the rename leaves the stage open. A failed sync after
// it leaves a ready directory that is not known to be durable: the stage
// reports itself uncommitted, and Stages finds the directory committed.
func (st *Stage) Commit() error {
	if st.committed {
		return fmt.Errorf("commit the stage of %s: %w", st.id, errCommitted)
	}
	if st.s.perFile {
		des, err := os.ReadDir(st.Path())
		if err != nil {
			return err
		}
		for _, de := range des {
			if st.synced[de.Name()] {
				continue
			}
			if err := st.s.syncFile(filepath.Join(st.Path(), de.Name())); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		if err := st.s.syncDir(st.Path()); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	if err := os.Rename(st.Path(), st.readyPath()); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	var err error
	if st.s.perFile {
		err = st.s.syncDir(filepath.Join(string(st.dir), Tmp))
	} else {
		err = st.s.Sync()
	}
	if err != nil {
		return fmt.Errorf("commit the answers to %s: %w", st.id, err)
	}
	st.committed = true
	return nil
}

// Names returns the names of the files a committed stage holds, which
// Publish moves into the outbox; none once it is published.
func (st *Stage) Names() ([]string, error) {
	des, err := os.ReadDir(st.readyPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	return names, nil
}

// Publish sends what a committed stage holds: it moves every file of the
// ready directory into the outbox, in name order, and makes the moves
// durable; it finishes the message answered (cur/ -> done/), then removes
// the directory. It returns the number of files moved. A stage published
// already (its directory gone) publishes nothing.
func (st *Stage) Publish() (int, error) {
	if !st.committed {
		return 0, fmt.Errorf("publish the stage of %s: %w", st.id, errNotCommitted)
	}
	ready := st.readyPath()
	des, err := os.ReadDir(ready)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, de := range des {
		if err := os.Rename(filepath.Join(ready, de.Name()), st.dir.Path(Outbox, de.Name())); err != nil {
			return 0, fmt.Errorf("publish: %w", err)
		}
	}
	if len(des) > 0 {
		// In the outbox for good before the message is done: else a crash
		// could keep the move to done/ and lose the answers.
		if err := st.s.syncDir(filepath.Join(string(st.dir), Outbox)); err != nil {
			return 0, fmt.Errorf("publish: %w", err)
		}
	}
	// The ready directory is the only record that the message was
	// answered, so it goes last, once the message is in done/. Removed
	// before, a runner killed in between left the message in cur/ with
	// nothing to say so, and the next runner handled it again and sent
	// its answers twice (under new ids: the router cannot tell them from
	// new messages). The message may be done already: finished by a
	// runner killed before it removed the directory.
	if err := st.dir.Finish(st.id); err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	if err := os.Remove(ready); err != nil {
		return 0, fmt.Errorf("publish: %w", err)
	}
	return len(des), nil
}

// Discard removes a stage that was not committed, with what it holds:
// the attempt is abandoned, and its message handled again or given up.
// Discarding a stage that does not exist does nothing.
func (st *Stage) Discard() error {
	if st.committed {
		return fmt.Errorf("discard the stage of %s: %w", st.id, errCommitted)
	}
	clear(st.synced)
	return os.RemoveAll(st.Path())
}
