package mailbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Staging. What an agent's driver says in answer to a message is staged
// in the agent's tmp/, and sent only once all of it is written:
//
//  1. Open: tmp/<id>.out/ is created empty (what an earlier attempt left
//     there is removed). A command program gets it as PARLEY_OUTBOX and
//     may write message files into it itself;
//  2. Take and Add: the runner reads what the program wrote, and writes
//     the answers, as message files; Refuse and AddRefused mark what
//     cannot be sent (a scratch name, a file too large, an id given
//     twice), which Publish moves to rejected/ with the reason;
//  3. Commit: tmp/<id>.out/ is renamed tmp/<id>.out.ready/ and made
//     durable, files and directories: the commit point;
//  4. Publish: each file of the ready directory is renamed into the
//     outbox, where the router takes it; the message answered moves from
//     cur/ to done/; the ready directory, now empty, goes last: renamed
//     tmp/spare.out/, where the next Open takes it (renaming an empty
//     directory costs the disk less than removing one and making
//     another).
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

// spareName is the empty directory a published stage leaves in tmp/ for
// the next one (not an id: Stages passes it over).
const spareName = "spare" + openSuffix

// Stage is where the answers to one message wait until they are sent:
// tmp/<id>.out/ while they are written, tmp/<id>.out.ready/ once
// committed. Its methods are not safe for concurrent use; one worker
// handles a message at a time.
type Stage struct {
	dir       Dir
	id        string // the message answered
	s         *Syncer
	committed bool
	renamed   bool            // moved to its ready directory by a Commit whose sync failed
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
	des, err := os.ReadDir(d.dir(Tmp))
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

// Ready reports whether the stage's answers were moved to its ready
// directory: committed, or, after a Commit whose sync failed, perhaps
// not durable, yet found committed by Stages all the same.
func (st *Stage) Ready() bool {
	_, err := os.Lstat(st.readyPath())
	return err == nil
}

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
	if st.committed || st.renamed {
		return fmt.Errorf("open stage of %s: %w", st.id, errCommitted)
	}
	clear(st.synced)
	if err := os.RemoveAll(st.Path()); err != nil {
		return fmt.Errorf("clearing the stage: %w", err)
	}
	spare := st.dir.Path(Tmp, spareName)
	if os.Rename(spare, st.Path()) == nil {
		if emptyDir(st.Path()) {
			return nil
		}
		// Not an empty directory (something was put there, or a link
		// to elsewhere): set back as it was found, and left alone.
		if err := os.Rename(st.Path(), spare); err != nil {
			return fmt.Errorf("setting aside %s: %w", spare, err)
		}
	}
	// MkdirAll: tmp/ itself may have gone (`git clean -fdX` removes it).
	return os.MkdirAll(st.Path(), 0o755)
}

// DropSpare removes the empty directory published stages leave in tmp/
// for the next one (see Publish), once its agent's worker stops: tmp/ is
// left as the worker found it. A spare that holds something is left.
func (d Dir) DropSpare() error {
	err := syscall.Rmdir(d.Path(Tmp, spareName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// emptyDir reports whether path is a directory that holds nothing; a
// symbolic link is not followed.
func emptyDir(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// Output is a file a program wrote into its stage itself.
type Output struct {
	Name string // its name in the stage
	Data []byte // what it holds; nil when Err is set
	// Err says why the file cannot be sent: a *TooLargeError, a
	// *NotRegularError or a *ScratchError. Such a file is left in the
	// stage, for Refuse.
	Err error
}

// ScratchError is the error for a file a program wrote into its outbox
// under a scratch name (see IsScratch), which parley never sends. Its
// text leaves the name out: the caller names the file.
type ScratchError struct {
	Name string
}

func (e *ScratchError) Error() string {
	return "a scratch name (a dot file, or one ending in .tmp, ~ or a swap suffix), which parley never sends: write a message under a plain name such as answer.md"
}

// ErrStageRemoved is the error Take returns when the stage's directory
// was removed while its program ran: a program that runs `git clean
// -fdX` (a coding agent clearing build output) removes every git-ignored
// tmp/, its PARLEY_OUTBOX with it. What the program wrote there before is
// lost; Take has made the directory again, so the stage takes the rest of
// the answers (what the program printed) as before.
var ErrStageRemoved = errors.New("removed while the program ran (git clean -X?)")

// Take reads and removes the files a program wrote into the stage
// itself, in name order. A file that cannot be sent — a scratch name
// (IsScratch), over max bytes, not a regular file — is returned with
// Output.Err set and left in the stage, unread, for Refuse: one such file
// does not keep the others from being sent. A stage whose directory is
// gone is made again, and Take returns an error wrapping ErrStageRemoved
// (and no files): the stage can still be used.
func (st *Stage) Take(max int64) ([]Output, error) {
	des, err := os.ReadDir(st.Path())
	if errors.Is(err, fs.ErrNotExist) && !st.committed {
		clear(st.synced)
		// MkdirAll: tmp/ itself is gone too, most often.
		if err := os.MkdirAll(st.Path(), 0o755); err != nil {
			return nil, fmt.Errorf("%s was removed while the program ran (git clean -X?), and cannot be made again: %w", st.Path(), err)
		}
		return nil, fmt.Errorf("%s was %w", st.Path(), ErrStageRemoved)
	}
	if err != nil {
		return nil, err
	}
	var out []Output
	for _, de := range des {
		name := de.Name()
		if IsScratch(name) {
			out = append(out, Output{Name: name, Err: &ScratchError{Name: name}})
			continue
		}
		if !de.Type().IsRegular() {
			out = append(out, Output{Name: name, Err: &NotRegularError{Mode: de.Type()}})
			continue
		}
		path := filepath.Join(st.Path(), name)
		data, err := ReadFile(path, max)
		var tl *TooLargeError
		var nr *NotRegularError
		if errors.As(err, &tl) || errors.As(err, &nr) {
			out = append(out, Output{Name: name, Err: err})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, Output{Name: name, Data: data})
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		delete(st.synced, name)
	}
	return out, nil
}

// Refuse marks the file name a program left in the stage (see Take) as
// refused: Publish moves it to rejected/, with reason beside it, instead
// of into the outbox. It is renamed in the stage to the name it will have
// in rejected/ (the time it was last modified, then its name, as the
// router names what it rejects), which Refuse returns.
func (st *Stage) Refuse(name, reason string) (string, error) {
	if st.committed {
		return "", fmt.Errorf("refuse %s in the stage of %s: %w", name, st.id, errCommitted)
	}
	path := filepath.Join(st.Path(), name)
	info, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	target := st.refusedName(name, info.ModTime())
	if info.Mode()&fs.ModeSymlink != 0 {
		// Never a link in rejected/: a person mending it there would
		// edit the file it points to. A file naming its target is kept
		// in its place.
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		kept := fmt.Sprintf("a symbolic link to %s\n", to)
		reason = strings.TrimRight(reason, "\n") + fmt.Sprintf("\n\nIt was a symbolic link to %s: the file beside this one names its target,\nnot the link, which mending would follow to edit that file. To send what\nit points to, put a copy of it in its place and move that into the outbox.\n", to)
		// The file naming it first: the link goes only once it is kept.
		if err := st.Add(target, []byte(kept)); err != nil {
			return "", err
		}
		if err := os.Remove(path); err != nil {
			return "", err
		}
		delete(st.synced, name)
		return target, st.Add(target+ReasonSuffix, []byte(reason))
	}
	if err := os.Rename(path, filepath.Join(st.Path(), target)); err != nil {
		return "", err
	}
	delete(st.synced, name)
	return target, st.Add(target+ReasonSuffix, []byte(reason))
}

// AddRefused writes data into the stage as a refused file: Publish moves
// it to rejected/ under the name it returns (at, then name), with reason
// beside it.
func (st *Stage) AddRefused(name string, at time.Time, data []byte, reason string) (string, error) {
	target := st.refusedName(name, at)
	if err := st.Add(target, data); err != nil {
		return "", err
	}
	return target, st.Add(target+ReasonSuffix, []byte(reason))
}

// refusedName returns a name for a refused file that neither the stage
// nor rejected/ holds yet.
func (st *Stage) refusedName(name string, at time.Time) string {
	base := at.UTC().Format(rejectedStamp) + "-" + truncateName(name, 180)
	target := base
	for i := 2; ; i++ {
		_, err1 := os.Lstat(filepath.Join(st.Path(), target))
		_, err2 := os.Lstat(st.dir.Path(Rejected, target))
		if errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist) {
			return target
		}
		target = fmt.Sprintf("%s-%d", base, i)
	}
}

// refused reports, for the names of a stage, which go to rejected/: the
// refused files (those with a reason beside them) and their reasons.
func refused(names []string) map[string]bool {
	has := make(map[string]bool, len(names))
	for _, n := range names {
		has[n] = true
	}
	out := make(map[string]bool)
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, ReasonSuffix); ok {
			out[n] = true
			if has[base] {
				out[base] = true
			}
		}
	}
	return out
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
// the stage (refused, see Take) are moved as they are; only their names
// are made durable.
//
// An error before the rename leaves the stage open. A failed sync after
// it leaves a ready directory that is not known to be durable: the stage
// reports itself uncommitted (but Ready), and Stages finds the directory
// committed. Such a stage is past asking for its answers again: Open
// would not replace its ready directory, and a runner started meanwhile
// publishes it. Commit it again, which redoes only the sync.
func (st *Stage) Commit() error {
	if st.committed {
		return fmt.Errorf("commit the stage of %s: %w", st.id, errCommitted)
	}
	if st.renamed {
		return st.syncReady()
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
	st.renamed = true
	return st.syncReady()
}

// syncReady makes the stage's move to its ready directory durable, and
// with it what the directory holds: the second half of Commit.
func (st *Stage) syncReady() error {
	var err error
	if st.s.CommitFault != nil {
		err = st.s.CommitFault()
	}
	if err == nil && st.s.perFile {
		err = st.s.syncDir(filepath.Join(string(st.dir), Tmp))
	} else if err == nil {
		err = st.s.Sync()
	}
	if err != nil {
		return fmt.Errorf("commit the answers to %s: %w", st.id, err)
	}
	st.committed = true
	return nil
}

// Names returns the names of the files a committed stage holds that
// Publish moves into the outbox; none once it is published. Refused files
// (see Refusals) are left out.
func (st *Stage) Names() ([]string, error) {
	all, err := st.readyNames()
	if err != nil {
		return nil, err
	}
	ref := refused(all)
	var names []string
	for _, n := range all {
		if !ref[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// Refusal is a file of a committed stage that Publish moves to
// rejected/: what a program wrote or printed that cannot be sent.
type Refusal struct {
	Name   string // its name in rejected/
	Reason string // the first line of its reason
}

// Refusals returns the refused files a committed stage holds, which
// Publish moves to rejected/; none once it is published.
func (st *Stage) Refusals() ([]Refusal, error) {
	all, err := st.readyNames()
	if err != nil {
		return nil, err
	}
	ref := refused(all)
	var out []Refusal
	for _, n := range all {
		if ref[n] && !hasReasonSuffix(n) {
			out = append(out, Refusal{Name: n, Reason: firstLine(filepath.Join(st.readyPath(), n+ReasonSuffix))})
		}
	}
	return out, nil
}

// readyNames lists the ready directory, in name order.
func (st *Stage) readyNames() ([]string, error) {
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
// ready directory into the outbox, in name order — a refused file (see
// Refuse) and its reason into rejected/, the file first — and makes the
// moves durable; it finishes the message answered (cur/ -> done/), then
// removes the directory. It returns the number of files moved into the
// outbox. A stage published already (its directory gone) publishes
// nothing.
func (st *Stage) Publish() (int, error) {
	if !st.committed {
		return 0, fmt.Errorf("publish the stage of %s: %w", st.id, errNotCommitted)
	}
	ready := st.readyPath()
	names, err := os.ReadDir(ready)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	all := make([]string, len(names))
	for i, de := range names {
		all[i] = de.Name()
	}
	// A reason moved without its file (a runner stopped in between)
	// still goes to rejected/: its file went before it.
	ref := refused(all)
	sent, rejected := 0, 0
	aside := map[string]string{} // a refused file moved under another name -> that name
	for _, n := range all {
		state, name := Outbox, n
		if ref[n] {
			state = Rejected
			rejected++
			if base, ok := strings.CutSuffix(n, ReasonSuffix); ok && aside[base] != "" {
				name = aside[base] + ReasonSuffix // beside its file
			}
		} else {
			sent++
		}
		moved, err := moveFree(filepath.Join(ready, n), st.dir.Path(state, ""), name)
		if err != nil {
			return 0, fmt.Errorf("publish: %w", err)
		}
		if moved != name {
			aside[n] = moved
		}
	}
	// In the outbox for good before the message is done: else a crash
	// could keep the move to done/ and lose the answers.
	if sent > 0 {
		if err := st.s.syncDir(filepath.Join(string(st.dir), Outbox)); err != nil {
			return 0, fmt.Errorf("publish: %w", err)
		}
	}
	if rejected > 0 {
		if err := st.s.syncDir(filepath.Join(string(st.dir), Rejected)); err != nil {
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
	// Kept, empty, for the next stage; removed when a spare is there
	// already and cannot be replaced.
	if err := os.Rename(ready, st.dir.Path(Tmp, spareName)); err != nil {
		if err := os.Remove(ready); err != nil {
			return 0, fmt.Errorf("publish: %w", err)
		}
	}
	return sent, nil
}

// moveFree moves src into dir as name, never over a file there (a
// person's message in the outbox that happens to have the name, say): a
// name taken is moved beside it as name-2.md, name-3.md, and so on. It
// returns the name used.
func moveFree(src, dir, name string) (string, error) {
	try := name
	err := renameNoReplace(src, filepath.Join(dir, try))
	for i := 2; errors.Is(err, fs.ErrExist) && i < 1000; i++ {
		try = asideName(name, i)
		err = renameNoReplace(src, filepath.Join(dir, try))
	}
	return try, err
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
