package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/visible"
)

// The states of a message in a mailbox. Each is a directory under the
// agent's mailbox, and a message changes state by a rename, never by an
// edit in place.
const (
	Tmp      = "tmp"      // staging: writers write here, then rename
	Outbox   = "outbox"   // what the agent sends
	Sent     = "sent"     // routed: the original file, named by its id
	Rejected = "rejected" // refused, with a .reason file beside it
	Inbox    = "inbox"    // delivered, not yet handled
	Cur      = "cur"      // claimed, being handled
	Done     = "done"     // handled
	Dead     = "dead"     // given up, with a .reason file beside it
)

// States lists every mailbox state directory.
var States = []string{Tmp, Outbox, Sent, Rejected, Inbox, Cur, Done, Dead}

// received lists, in the order a message moves through them, the states
// that hold a delivered message.
var received = []string{Inbox, Cur, Done, Dead}

// ReasonSuffix ends the name of the file that says why a message beside it
// was rejected or given up.
const ReasonSuffix = ".reason"

// ReasonOf reports whether name is the reason file of a file beside it,
// "<base>.reason" in a directory that also holds base (there says whether
// it holds a name), and returns base. In an outbox, where the router
// writes the reason of a file it refuses where it is, such a file is
// parley's, never a message; a name ending in .reason with no file of the
// base name beside it is a file like any other, unless it is a stray
// reason (see Dir.StrayReason).
func ReasonOf(name string, there func(name string) bool) (base string, ok bool) {
	base, ok = strings.CutSuffix(name, ReasonSuffix)
	if !ok || base == "" || !there(base) {
		return "", false
	}
	return base, true
}

// StrayReason reports whether the file name in the outbox is a reason
// Explain wrote there that has outlived the file it explained: named
// "<base>.reason", with no base beside it any more (removed, or moved,
// while no runner watched), and its text is the reason Explain wrote for
// base, not a message: it starts "<base>: " and names the file on a line
// "file: .../outbox/<base>", which no message does (a message starts with
// its header: Parse takes it). A file a person named *.reason, a message
// or other text, is none. It returns base.
func (d Dir) StrayReason(name string) (base string, ok bool) {
	base, ok = strings.CutSuffix(name, ReasonSuffix)
	if !ok || base == "" || strings.ContainsRune(base, '/') {
		return "", false
	}
	if _, err := os.Lstat(d.Path(Outbox, base)); !errors.Is(err, fs.ErrNotExist) {
		return "", false // there, or not known to be gone
	}
	b, err := ReadFile(d.Path(Outbox, name), 64<<10)
	shown := visible.Line(base) // as Explain's writers name it
	if err != nil || !strings.HasPrefix(string(b), shown+": ") {
		return "", false
	}
	if _, err := Parse(b); err == nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "file:"); ok {
			if v = strings.TrimSpace(v); v == Outbox+"/"+shown || strings.HasSuffix(v, "/"+Outbox+"/"+shown) {
				return base, true
			}
		}
	}
	return "", false
}

// Names ending in these suffixes in tmp/ are staged by the router: a
// delivery in a recipient's tmp/ (and, in a sender's, a copy stamped with
// its id by runners that still rewrote such files). Only the router
// writes them, so a runner starting after a crash may remove them.
const (
	deliverySuffix = ".delivery"
	stampSuffix    = ".stamp"
)

// sendSuffix ends the name under which Send stages a message in tmp/.
const sendSuffix = ".send"

// StaleAfter is how long a file staged in tmp/ (see Leftovers) stays
// untouched before it is taken for the leftover of a writer that was
// killed: a writer stages and moves a message in milliseconds.
const StaleAfter = 10 * time.Minute

// ErrNotFound is the error for a message that is not in the state an
// operation expects it in.
var ErrNotFound = errors.New("message not found")

// Dir is an agent's mailbox directory (mailboxes/<agent>). Its base name is
// the agent's name.
type Dir string

// Agent returns the name of the agent that owns the mailbox.
func (d Dir) Agent() string { return filepath.Base(string(d)) }

// Path returns the path of name in a state directory: what
// filepath.Join(d, state, name) returns.
func (d Dir) Path(state, name string) string {
	if cleanPath(string(d)) && plainName(state) && plainName(name) {
		// The router builds several paths for each message it routes:
		// concatenated, they spare Join's copy and scan.
		return string(d) + "/" + state + "/" + name
	}
	return filepath.Join(string(d), state, name)
}

// dir returns the path of a state directory: what filepath.Join(d,
// state) returns (see Path).
func (d Dir) dir(state string) string {
	if cleanPath(string(d)) && plainName(state) {
		return string(d) + "/" + state
	}
	return filepath.Join(string(d), state)
}

// plainName reports whether name is one path element that filepath.Join
// keeps as it is.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && strings.IndexByte(name, '/') < 0
}

// cleanPath reports whether p, joined to a plain name with a slash, is
// what filepath.Join returns: p is not the root and none of its elements
// is empty (but the root's), "." or "..". A Dir made with filepath.Join,
// as a workspace makes its mailboxes, is such a path. It says no to some
// clean paths ("../x"), which are then joined by filepath.Join.
func cleanPath(p string) bool {
	start := 0
	if strings.HasPrefix(p, "/") {
		start = 1
	}
	for i := start; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if elem := p[start:i]; elem == "" || elem == "." || elem == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// Init creates the mailbox and its state directories; it is a no-op for
// the ones that exist.
func (d Dir) Init() error {
	for _, s := range States {
		if err := os.MkdirAll(d.dir(s), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Remake makes the mailbox's missing directories again (Init), never
// through one that is not a directory: a mailbox, or a state directory
// of it, that is a file or a symbolic link is left as it is, and its
// *NotDirError returned (a link is never followed: routing from it would
// take another folder's files, delivering into it would write outside
// the workspace). People and git remove mailbox directories (`rm -rf`,
// `git clean -fdX`, a checkout or a stash that empties one); the runner
// makes them again with Remake, and so does the seat of parley play.
func (d Dir) Remake() error {
	var nd *NotDirError
	if errors.As(d.CheckDirs(), &nd) {
		return nd
	}
	if err := d.Init(); err != nil {
		if errors.As(d.CheckDirs(), &nd) {
			return nd
		}
		return err
	}
	if errors.As(d.CheckDirs(), &nd) {
		return nd // replaced while it was made
	}
	return nil
}

// Send writes m into the outbox durably: it is staged in tmp/ (as
// "<id>.md.send", which a send killed part way leaves: see Leftovers), synced,
// renamed to outbox/<id>.md, and the outbox directory is synced. A
// missing mailbox, or a missing tmp/ or outbox/ of one, is created. m must
// have an id. It returns the path of the file in the outbox.
func (d Dir) Send(m *Message) (string, error) {
	id, ok := m.Header().Get("id")
	if !ok || !IsID(id) {
		return "", fmt.Errorf("send: message has no valid id")
	}
	name := FileName(id)
	tmp := d.Path(Tmp, name+sendSuffix)
	err := writeFile(tmp, m.Bytes(), true)
	if errors.Is(err, fs.ErrNotExist) {
		// An agent added to parley.yaml by hand has no mailbox yet.
		if err = d.Init(); err == nil {
			err = writeFile(tmp, m.Bytes(), true)
		}
	}
	if err != nil {
		return "", err
	}
	dst := d.Path(Outbox, name)
	// Moved, not linked then unlinked: the router refuses a file with two
	// links in an outbox.
	err = renameNoReplace(tmp, dst)
	if errors.Is(err, fs.ErrNotExist) {
		// The outbox alone was removed (rm -r, git clean): make it again,
		// as tmp/ is above.
		if err = d.Init(); err == nil {
			err = renameNoReplace(tmp, dst)
		}
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("send: a message with id %s is in the outbox of %s already, not yet routed: %w", id, d.Agent(), ErrExists)
		}
		return "", fmt.Errorf("send: %w", err)
	}
	if err := syncDir(d.dir(Outbox)); err != nil {
		return "", err
	}
	return dst, nil
}

// Post sends m as the agent whose mailbox this is, as `parley send`
// does: it stamps m (Stamp), then sends it durably (Send). It returns the
// id and the path of the file in the outbox.
func (d Dir) Post(m *Message) (id, path string, err error) {
	id = d.Stamp(m)
	path, err = d.Send(m)
	return id, path, err
}

// Stamp gives m what Post gives a message before it sends it: an id (and
// created:, the time the id says) when it has none, and from: the agent
// whose mailbox this is when it has none. It returns m's id. A caller
// that checks the bytes a message is written as stamps it first, then
// checks m.Bytes(), then sends it.
func (d Dir) Stamp(m *Message) string {
	if !m.Header().Has("id") {
		id := (&IDs{}).New(d.Agent())
		m.Set("id", id)
		if !m.Header().Has("created") {
			sent, _, _ := ParseID(id)
			m.Set("created", sent.Format(TimeFormat))
		}
	}
	if !m.Header().Has("from") {
		m.Set("from", d.Agent())
	}
	id, _ := m.Header().Get("id")
	return id
}

// Deliver puts a message into the inbox under "<id>.md", unless the
// mailbox already holds it in any received state (inbox, cur, done, dead),
// which makes a repeated delivery a no-op: it reports false then. The copy
// is written in tmp/ and linked into inbox/, never replacing a file there;
// it is durable once s.Sync returns. On Linux the copy is written as an
// unnamed file in tmp/ (O_TMPFILE), which spares two directory updates
// and leaves nothing behind if the router dies before linking it.
func (d Dir) Deliver(id string, data []byte, s *Syncer) (delivered bool, err error) {
	if held, err := d.Holds(id); held || err != nil {
		return false, err
	}
	return d.DeliverNew(id, data, s)
}

// DeliverNew is Deliver for a message no copy of which can be in the
// mailbox but in its inbox (an id newer than any delivered before): the
// other received states are not looked at. A copy in the inbox is still
// found, by the link, which does not replace a file.
func (d Dir) DeliverNew(id string, data []byte, s *Syncer) (delivered bool, err error) {
	name := FileName(id)
	err = linkNew(d.dir(Tmp), name+deliverySuffix, d.Path(Inbox, name), data, s.perFile)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deliver to %s: %w", d.Agent(), err)
	}
	s.dirty(d.dir(Inbox))
	return true, nil
}

// Holds reports whether the mailbox holds a message with this id in any
// received state (inbox, cur, done, dead). The states are looked at in
// the order a message moves through them, so a copy that moves on while
// they are looked at is still seen.
func (d Dir) Holds(id string) (bool, error) {
	name := FileName(id)
	for _, st := range received {
		if _, err := os.Lstat(d.Path(st, name)); err == nil {
			return true, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

// stageAndLink writes data in dir/name, links it to dst (failing with
// fs.ErrExist when dst exists) and removes dir/name.
func stageAndLink(dir, name, dst string, data []byte, sync bool) error {
	tmp := filepath.Join(dir, name)
	if err := writeFile(tmp, data, sync); err != nil {
		return err
	}
	err := os.Link(tmp, dst)
	os.Remove(tmp)
	return err
}

// linkAndRemove moves src to dst with a link and an unlink, failing with
// fs.ErrExist when dst exists.
func linkAndRemove(src, dst string) error {
	if err := os.Link(src, dst); err != nil {
		return err
	}
	return os.Remove(src)
}

// CleanTmp removes what a stopped router left staged in tmp/. Files other
// writers stage there are left alone.
func (d Dir) CleanTmp() error {
	if err := d.CheckDirs(Tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a symbolic link is never followed, to remove files elsewhere
	}
	entries, err := os.ReadDir(d.dir(Tmp))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed (git clean -fdX): nothing staged is left
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), deliverySuffix) || strings.HasSuffix(e.Name(), stampSuffix)) {
			if err := os.Remove(d.Path(Tmp, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Leftovers returns the files a writer killed part way left in tmp/: a
// message Send staged ("<id>.md.send", or "<id>.md" as Send named it
// before, and as writers that stage the Maildir way name it) and a reason
// staged for rejected/ or dead/ ("<name>.reason"), once nothing has
// modified them for StaleAfter before now and, where the kernel can tell,
// nobody has them open for writing. Other files in tmp/ (a person's
// draft, a program's stage) are never leftovers. They are sorted by name.
func (d Dir) Leftovers(now time.Time) ([]Entry, error) {
	dir := d.dir(Tmp)
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		n := de.Name()
		if !de.Type().IsRegular() || !isStaged(n) {
			continue
		}
		info, err := de.Info()
		if err != nil || now.Sub(info.ModTime()) < StaleAfter {
			continue
		}
		path := filepath.Join(dir, n)
		if open, err := BeingWritten(path); err == nil && open {
			continue
		}
		out = append(out, Entry{Name: n, Path: path, Modified: info.ModTime(), Size: info.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// isStaged reports whether a name in tmp/ is one a writer stages a
// message or a reason under (see Leftovers).
func isStaged(name string) bool {
	if strings.HasSuffix(name, ReasonSuffix) {
		return true
	}
	name = strings.TrimSuffix(name, sendSuffix)
	_, ok := IDFromName(name)
	return ok
}

// RemoveLeftovers removes the leftovers of killed writers from tmp/ (see
// Leftovers) and returns what it removed.
func (d Dir) RemoveLeftovers(now time.Time) ([]Entry, error) {
	left, err := d.Leftovers(now)
	if err != nil {
		return nil, err
	}
	var errs []error
	removed := left[:0]
	for _, e := range left {
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e)
	}
	return removed, errors.Join(errs...)
}

// MarkSent moves a routed file from the outbox to sent/<id>.md: the file
// that was read (read; zero checks nothing). When the name no longer
// refers to it (a symbolic link or another file was put in its place) it
// fails with ErrReplaced and leaves the file there alone: what the rename
// moved is checked, and put back when it is not the file read (which the
// caller holds open, so that no other file can take its inode number).
// The move is durable once s.Sync returns.
func (d Dir) MarkSent(name, id string, read FileID, s *Syncer) error {
	src, dst := d.Path(Outbox, name), d.Path(Sent, FileName(id))
	if err := rename(src, dst); err != nil {
		return err
	}
	s.dirty(d.dir(Outbox))
	s.dirty(d.dir(Sent))
	if afterSentRename != nil {
		afterSentRename(src)
	}
	if err := checkSame(dst, read); errors.Is(err, ErrReplaced) {
		// Swapped in between: not what was sent. Back where it was, or,
		// when yet another file took that name meanwhile, beside it
		// under a free name: never left in sent/ under the id.
		rerr := renameNoReplace(dst, src)
		for i := 2; errors.Is(rerr, fs.ErrExist) && i < 100; i++ {
			rerr = renameNoReplace(dst, d.Path(Outbox, asideName(name, i)))
		}
		if rerr != nil {
			return fmt.Errorf("%w; and moving it back: %w", err, rerr)
		}
		return err
	}
	return nil
}

// afterSentRename, set by tests, runs in MarkSent between the move to
// sent/ and the check of what was moved.
var afterSentRename func(outboxPath string)

// asideName is the i-th name beside an outbox name for a file that must
// go back into the outbox while another file holds its name: "x-2.md"
// for "x.md". It names no id, so it is looked at as a file written by
// hand.
func asideName(name string, i int) string {
	ext := ""
	if strings.HasSuffix(name, ".md") {
		name, ext = strings.TrimSuffix(name, ".md"), ".md"
	}
	return fmt.Sprintf("%s-%d%s", name, i, ext)
}

// IsSent reports whether the agent already sent a message with this id.
func (d Dir) IsSent(id string) bool {
	_, err := os.Lstat(d.Path(Sent, FileName(id)))
	return err == nil
}

// Reject moves a file out of the outbox into rejected/ and writes the
// reason beside it, in "<name>.reason". The rejected file is named after
// the time the file was last modified and its original name, so a rejection
// repeated after a crash lands in the same place. It returns the path of
// the rejected file. The file is moved with a rename and never opened, so
// symbolic links, pipes and devices are safe to reject. A file that was
// read is moved only if the name still refers to it (read; zero checks
// nothing), else Reject fails with ErrReplaced. The move is durable once
// s.Sync returns.
func (d Dir) Reject(name string, modified time.Time, reason string, read FileID, s *Syncer) (string, error) {
	if err := checkSame(d.Path(Outbox, name), read); err != nil {
		return "", err
	}
	base := modified.UTC().Format(rejectedStamp) + "-" + truncateName(name, 180)
	target := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(d.Path(Rejected, target)); errors.Is(err, fs.ErrNotExist) {
			break
		}
		target = fmt.Sprintf("%s-%d", base, i)
	}
	if err := d.writeReason(Rejected, target, reason, s.perFile); err != nil {
		return "", err
	}
	dst := d.Path(Rejected, target)
	if err := rename(d.Path(Outbox, name), dst); err != nil {
		return "", err
	}
	s.dirty(d.dir(Outbox))
	s.dirty(d.dir(Rejected))
	return dst, nil
}

// Explain writes why a file of a state directory is where it is, in
// "<name>.reason" beside it: the router refuses some outbox files where
// they are. A reason in an outbox starts "<name>: " and names the file
// on a line "file: .../outbox/<name>" (name as visible.Line shows it),
// by which StrayReason tells it once name is gone. It is durable once s.Sync returns.
func (d Dir) Explain(state, name, reason string, s *Syncer) error {
	if err := d.writeReason(state, name, reason, s.perFile); err != nil {
		return err
	}
	s.dirty(d.dir(state))
	return nil
}

// Unexplain removes the reason beside a file of a state directory, if
// there is one.
func (d Dir) Unexplain(state, name string) error {
	if err := os.Remove(d.Path(state, name+ReasonSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeReason writes "<name>.reason" in a state directory, staged in tmp/.
func (d Dir) writeReason(state, name, reason string, sync bool) error {
	if !strings.HasSuffix(reason, "\n") {
		reason += "\n"
	}
	tmp := d.Path(Tmp, name+ReasonSuffix)
	if err := writeFile(tmp, []byte(reason), sync); err != nil {
		return err
	}
	return rename(tmp, d.Path(state, name+ReasonSuffix))
}

// rejectedStamp is the time that starts the name of a rejected file.
const rejectedStamp = "20060102-150405.000000Z"

// ErrExists is the error for a move that would replace a file.
var ErrExists = errors.New("a file of that name is there already")

// Unreject puts a rejected file back into the outbox, under the name it
// was sent with, and removes its reason: a person fixed it and sends it
// again. It returns the file's path in the outbox. A file of that name in
// the outbox is not replaced (ErrExists).
//
// A file the router refused as routed already (the same name and text
// as a message in sent/: see SentAs) would be refused so again: it goes
// back under its name in rejected/ (the time of the refusal first),
// which no message came from, and is sent as a new message.
func (d Dir) Unreject(name string) (string, error) {
	back := UnrejectedName(name)
	if data, err := os.ReadFile(d.Path(Rejected, name)); err == nil && d.SentAs(back, data) != "" {
		back = name
	}
	dst := d.Path(Outbox, back)
	if err := d.moveBack(d.Path(Rejected, name), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// SentAs returns the id of the message in sent/ that a file of this name
// and content was sent as, or "": one whose id ends in the digits drawn
// from them (ContentSuffix) and that is that file (SentCopy). The router
// asks the journal too (a file of that name): what it refuses as routed
// already, SentAs finds.
func (d Dir) SentAs(name string, data []byte) string {
	suffix := ContentSuffix(name, data)
	names, _ := d.NamesUnsorted(Sent)
	for _, n := range names {
		id, ok := IDFromName(n)
		if !ok || IDSuffix(id) != suffix {
			continue
		}
		sent, err := os.ReadFile(d.Path(Sent, n))
		if err != nil {
			continue
		}
		if m, err := Parse(data); err == nil && SentCopy(sent, data, m, id) {
			return id
		}
	}
	return ""
}

// SentCopy reports whether sent, the file in sent/ under id, is the file
// data (parsed: m) sent as id: the same bytes, as the router moves a file
// without an id to sent/ today, or those bytes with the id stamped into
// them (StampWith), as it wrote them before.
func SentCopy(sent, data []byte, m *Message, id string) bool {
	if bytes.Equal(sent, data) {
		return true
	}
	again := m.Clone()
	StampWith(again, id)
	return bytes.Equal(again.Bytes(), sent)
}

// StampWith gives a message that came without an id the id it was
// given, and the time it was created when it says none: the time in the
// id.
func StampWith(m *Message, id string) {
	m.Set("id", id)
	if !m.Header().Has("created") {
		sent, _, _ := ParseID(id)
		m.Set("created", sent.Format(TimeFormat))
	}
}

// DropOrphanReasons removes the reasons in rejected/ whose file has left
// it: a person fixed a rejected file and moved it back into the outbox by
// hand, as its reason says (Unreject removes the reason itself), and
// rejected/ would show a reason for a file it does not hold. A reason is
// removed only when parley wrote it: "<name>.reason" where name is a
// rejected file's (it starts with the time of the refusal: see Reject and
// Stage.AddRefused), no file of that name is in rejected/, and it is no
// rejected file itself (with a reason of its own beside it) nor a
// message. A reason whose file is there stays. Both writers put the
// reason and its file in place from one goroutine of the runner (Reject
// writes the reason first, a stage moves the file first): the router
// calls this between routing batches, never while it rejects. It returns
// the names of the reasons removed.
func (d Dir) DropOrphanReasons() ([]string, error) {
	names, err := d.NamesUnsorted(Rejected)
	if err != nil {
		return nil, err
	}
	var here map[string]bool
	var removed []string
	for _, n := range names {
		base, ok := strings.CutSuffix(n, ReasonSuffix)
		if !ok || UnrejectedName(base) == base {
			continue
		}
		if here == nil {
			here = make(map[string]bool, len(names))
			for _, n := range names {
				here[n] = true
			}
		}
		if here[base] || here[n+ReasonSuffix] {
			continue // its file is there, or it is a rejected file
		}
		path := d.Path(Rejected, n)
		if _, err := os.Lstat(d.Path(Rejected, base)); !errors.Is(err, fs.ErrNotExist) {
			continue // there after all (moved back since the listing), or not known to be gone
		}
		b, err := ReadFile(path, 64<<10)
		if err != nil {
			continue
		}
		if _, err := Parse(b); err == nil {
			continue // a message, not a reason
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, n)
	}
	return removed, nil
}

// UnrejectedName is the name a rejected file had in the outbox, and has
// there again when it is put back: its name in rejected/ without the
// time of the refusal that starts it.
func UnrejectedName(name string) string {
	if len(name) > len(rejectedStamp)+1 && name[len(rejectedStamp)] == '-' {
		if _, err := time.Parse(rejectedStamp, name[:len(rejectedStamp)]); err == nil {
			return name[len(rejectedStamp)+1:]
		}
	}
	return name
}

// Revive puts a message given up on back into the inbox (dead/ -> inbox/)
// and removes its reason: its agent handles it again.
func (d Dir) Revive(id string) error {
	return d.moveBack(d.Path(Dead, FileName(id)), d.Path(Inbox, FileName(id)))
}

// moveBack moves a refused or dead file to dst, never over a file there,
// removes the reason beside it, and makes both directories durable.
func (d Dir) moveBack(src, dst string) error {
	if _, err := os.Lstat(src); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %s/%s: %w", d.Agent(), filepath.Base(filepath.Dir(src)), filepath.Base(src), ErrNotFound)
		}
		return err
	}
	if err := renameNoReplace(src, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", dst, ErrExists)
		}
		return err
	}
	if err := os.Remove(src + ReasonSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(src))
}

// ErrHandled is the error for claiming a message that was handled or
// given up on already: see HandledError.
var ErrHandled = errors.New("handled already")

// HandledError is the error for claiming a message the mailbox holds in
// done/ or dead/ already: a copy of it came back into inbox/ (`git stash
// pop`, `git checkout`, a backup restored). It matches ErrHandled.
type HandledError struct {
	Agent string
	ID    string
	State string // Done or Dead: where the message is
}

func (e *HandledError) Error() string {
	return fmt.Sprintf("%s: %s: in %s/ already: %s", e.Agent, FileName(e.ID), e.State, ErrHandled)
}

// Is reports whether target is ErrHandled.
func (e *HandledError) Is(target error) bool { return target == ErrHandled }

// Claim moves a message from inbox/ to cur/: its handler has taken it. The
// move is durable when Claim returns. Like Deliver, it checks first that
// the message was not handled already: a message in done/ or dead/ is
// never claimed again. A copy of one found in inbox/ is filed where the
// message is, replacing the copy there (one rename: the mailbox holds
// the message once, where it was), and Claim returns a *HandledError.
func (d Dir) Claim(id string) error {
	if err := d.FileHandled(id, Inbox); err != nil {
		return err
	}
	return d.move(id, Inbox, Cur)
}

// ClaimUntilSync is Claim for a handler whose answers are committed
// through s (see Stage.Commit): where s syncs the whole filesystem
// (syncfs), the move is not flushed now but by that commit, which comes
// before anything the handler says is sent. A crash before it leaves the
// message in inbox/, handled again (at least once, and its uncommitted
// answers discarded), or on a filesystem without a journal in inbox/ and,
// once finished, in done/ or dead/ too, where FileHandled finds it
// handled. Where s syncs file by file, the move is flushed now, as Claim
// does: a commit there flushes only the stage.
func (d Dir) ClaimUntilSync(id string, s *Syncer) error {
	if s.perFile {
		return d.Claim(id)
	}
	if err := d.FileHandled(id, Inbox); err != nil {
		return err
	}
	return d.moveUnsynced(id, Inbox, Cur)
}

// ClaimUnsynced is Claim without flushing the move, for a caller that
// moves many messages and flushes the directories once, after: inbox/
// and cur/ (SyncDir). parley done of 50,000 messages flushed each move,
// and took two minutes.
func (d Dir) ClaimUnsynced(id string) error {
	if err := d.FileHandled(id, Inbox); err != nil {
		return err
	}
	return d.moveUnsynced(id, Inbox, Cur)
}

// FinishUnsynced is Finish without flushing the move (see
// ClaimUnsynced): the caller flushes done/ once, after (SyncDir).
func (d Dir) FinishUnsynced(id string) error {
	return d.moveUnsynced(id, Cur, Done)
}

// FileHandled checks that a message in state (inbox/ or cur/) was not
// handled already: when the mailbox holds it in done/ or dead/ too (a
// copy came back with `git stash pop` or `git checkout`), the copy in
// state is filed there, replacing the copy there (one rename: the mailbox
// holds the message once, where it was), and FileHandled returns a
// *HandledError. It returns nil for a message not handled yet.
func (d Dir) FileHandled(id, state string) error {
	st := d.HandledIn(id)
	if st == "" {
		return nil
	}
	name := FileName(id)
	if err := rename(d.Path(state, name), d.Path(st, name)); err != nil {
		return d.notFound(id, state, err)
	}
	if err := syncDir(d.dir(state)); err != nil {
		return err
	}
	return &HandledError{Agent: d.Agent(), ID: id, State: st}
}

// HandledIn returns the state, done/ or dead/, that holds the message id
// handled already, or "" when it was not handled: a copy of it found in
// inbox/ or cur/ came back there (git stash, git checkout), and is never
// handled again.
func (d Dir) HandledIn(id string) string {
	name := FileName(id)
	for _, st := range []string{Done, Dead} {
		if _, err := os.Lstat(d.Path(st, name)); err == nil {
			return st
		}
	}
	return ""
}

// Finish moves a message from cur/ to done/. The move is durable when
// Finish returns: the message is in done/ for good. Only done/ is
// flushed: a crash may leave the old name in cur/ as well (a filesystem
// without a journal can keep both names of a file renamed), a copy the
// next runner files as handled (see FileHandled), never handles again.
func (d Dir) Finish(id string) error {
	if err := d.moveUnsynced(id, Cur, Done); err != nil {
		return err
	}
	return syncDir(filepath.Join(string(d), Done))
}

// GiveUp moves a message from cur/ to dead/ and writes the reason beside
// it, ending with when it was given up (a "given up:" line, see
// GivenUpAt). The move is durable when GiveUp returns.
func (d Dir) GiveUp(id, reason string) error {
	if _, err := os.Lstat(d.Path(Cur, FileName(id))); err != nil {
		return d.notFound(id, Cur, err)
	}
	reason = strings.TrimRight(reason, "\n") + "\n\n" + givenUpLine + time.Now().UTC().Format(TimeFormat) + "\n"
	if err := d.writeReason(Dead, FileName(id), reason, true); err != nil {
		return err
	}
	return d.move(id, Cur, Dead)
}

// givenUpLine starts the line of a reason in dead/ that says when the
// message was given up.
const givenUpLine = "given up:  "

// GivenUpAt returns when the message id in dead/ was given up: the time
// on the "given up:" line GiveUp wrote into its reason, to the
// microsecond; for a reason written without one (by an earlier parley),
// the reason file's modification time. Written into the file, it is the
// same each time it is asked, after a git checkout or a copy too, until
// the message is given up again (after `parley retry`), and so is what is
// derived from it (the id of parley's notice of the give-up). ok is false
// when dead/ holds no reason for id.
func (d Dir) GivenUpAt(id string) (at time.Time, ok bool) {
	path := d.Path(Dead, FileName(id)+ReasonSuffix)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, false
	}
	if data, err := ReadFile(path, maxReason); err == nil {
		lines := strings.Split(string(data), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(lines[i], givenUpLine); ok {
				if t, err := time.Parse(TimeFormat, strings.TrimSpace(v)); err == nil {
					return t.UTC(), true
				}
			}
		}
	}
	return fi.ModTime().UTC().Truncate(time.Microsecond), true
}

// maxReason bounds the reason file GivenUpAt reads.
const maxReason = 1 << 20

func (d Dir) move(id, from, to string) error {
	if err := d.moveUnsynced(id, from, to); err != nil {
		return err
	}
	if err := syncDir(d.dir(to)); err != nil {
		return err
	}
	return syncDir(d.dir(from))
}

// moveUnsynced renames a message from one state to another, without
// flushing the move.
func (d Dir) moveUnsynced(id, from, to string) error {
	name := FileName(id)
	if err := rename(d.Path(from, name), d.Path(to, name)); err != nil {
		if _, serr := os.Lstat(d.Path(from, name)); serr == nil {
			return err // the message is there: the directory it goes to is not
		}
		return d.notFound(id, from, err)
	}
	return nil
}

func (d Dir) notFound(id, state string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %s/%s: %w", d.Agent(), state, FileName(id), ErrNotFound)
	}
	return err
}

// Entry is a file in a mailbox state directory.
type Entry struct {
	Name     string    // file name
	Path     string    // path of the file
	ID       string    // message id when the name is "<id>.md"; else empty
	Modified time.Time // last modification
	Size     int64
	Reason   string // first line of the .reason file beside it, if any
}

// List returns the files in a state directory, sorted by name (for
// messages named by id, the order they were sent in). Reason files are not
// listed, even one whose message was moved away; their first line is in
// the Entry.Reason of the file they are beside. Entries that vanish while
// listing are skipped.
func (d Dir) List(state string) ([]Entry, error) {
	dir := d.dir(state)
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(des))
	for _, de := range des {
		names[de.Name()] = true
	}
	var out []Entry
	for _, de := range des {
		n := de.Name()
		if strings.HasSuffix(n, ReasonSuffix) {
			continue // a reason, never a message: beside its file, or left by one moved away
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		e := Entry{Name: n, Path: filepath.Join(dir, n), Modified: info.ModTime(), Size: info.Size()}
		e.ID, _ = IDFromName(n)
		if names[n+ReasonSuffix] {
			e.Reason = firstLine(filepath.Join(dir, n+ReasonSuffix))
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Names returns the names of the entries of a state directory, sorted,
// whatever they are (messages, reason files, scratch files). It reads
// names only and stats nothing, which keeps it cheap on a large
// directory.
func (d Dir) Names(state string) ([]string, error) {
	names, err := d.NamesUnsorted(state)
	sort.Strings(names)
	return names, err
}

// NamesUnsorted is Names in the order the directory gives them: for a
// caller that wants them in no order, 100,000 names cost no sort.
func (d Dir) NamesUnsorted(state string) ([]string, error) {
	f, err := os.Open(d.dir(state))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Newest returns the names of the newest n files of a state directory
// (every one when n is 0), in name order, and how many files it holds.
// For messages named by id, and for rejected files, whose names start
// with the time they were written, name order is the order they came in.
// A reason file is neither counted nor listed when the file it explains
// is there. Newest reads names only, unsorted, and keeps the n greatest:
// a directory of 100,000 messages costs its entries and no sort.
func (d Dir) Newest(state string, n int) (names []string, total int, err error) {
	names, older, err := d.NewestAndOlder(state, n)
	return names, len(names) + len(older), err
}

// NewestAndOlder is Newest, and returns the names of the files it leaves
// out besides, in no order.
func (d Dir) NewestAndOlder(state string, n int) (names, older []string, err error) {
	f, err := os.Open(d.dir(state))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nil, err
	}
	// Reason files are never messages: beside their file, or left behind
	// by one moved away by hand.
	files := all[:0]
	for _, name := range all {
		if !strings.HasSuffix(name, ReasonSuffix) {
			files = append(files, name)
		}
	}
	if n <= 0 || len(files) <= n {
		sort.Strings(files)
		return files, nil, nil
	}
	names = greatest(files, n)
	for _, name := range files {
		if name < names[0] {
			older = append(older, name)
		}
	}
	return names, older, nil
}

// greatest returns the n greatest of names, sorted, in one pass: names
// come from the directory in no useful order, so few of them beat the
// least kept so far.
func greatest(names []string, n int) []string {
	top := make([]string, 0, n) // sorted
	for _, name := range names {
		i := sort.SearchStrings(top, name)
		if len(top) < n {
			top = append(top, "")
			copy(top[i+1:], top[i:])
			top[i] = name
		} else if i > 0 {
			// Drop the least, top[0]: name goes just below top[i].
			copy(top[:i-1], top[1:i])
			top[i-1] = name
		}
	}
	return top
}

// IDs returns the ids of the messages in a state directory (the entries
// named "<id>.md"), in the order they were sent: ids sort by the time
// they were given. Like Names it reads names only, with no stat per
// file: a worker looks for its next message once per message, and a look
// that stats every file, as List does, makes working through a backlog
// quadratic in system calls.
func (d Dir) IDs(state string) ([]string, error) {
	names, err := d.Names(state)
	if err != nil {
		return nil, err
	}
	ids := names[:0]
	for _, n := range names {
		if state == Rejected {
			n = UnrejectedName(n) // the file a message of that id was sent as
		}
		if id, ok := IDFromName(n); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// RejectedNames returns the names in rejected/ of the files named by
// message id that the router refused (a file refused twice is there
// twice), oldest first.
func (d Dir) RejectedNames(id string) []string {
	names, _ := d.Names(Rejected)
	var out []string
	for _, n := range names {
		if UnrejectedName(n) == FileName(id) {
			out = append(out, n)
		}
	}
	return out
}

// Count returns the number of messages in a state directory (reason files
// and scratch files not counted). It reads names only, unsorted: a count
// of 100,000 files costs their directory entries, nothing more.
func (d Dir) Count(state string) (int, error) {
	return countMessages(d.dir(state))
}

func hasReasonSuffix(name string) bool { return strings.HasSuffix(name, ReasonSuffix) }

// Reason returns the first line of the reason file beside a file of a
// state directory (rejected/, dead/), and whether there is one.
func (d Dir) Reason(state, name string) (string, bool) {
	path := d.Path(state, name+ReasonSuffix)
	if _, err := os.Lstat(path); err != nil {
		return "", false
	}
	return firstLine(path), true
}

// firstLine returns the first line of a reason file. It is read the way
// message files are, never following a link or blocking on a pipe.
func firstLine(path string) string {
	b, err := ReadFile(path, 64<<10)
	if err != nil {
		return "(unreadable reason file: " + err.Error() + ")"
	}
	l, _, _ := strings.Cut(string(b), "\n")
	return l
}

// truncateName shortens a name to at most max bytes, on a character
// boundary.
func truncateName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	for max > 0 && !utf8.RuneStart(name[max]) {
		max--
	}
	return name[:max]
}

// IsScratch reports whether a name in a mailbox is an editor's or a tool's
// scratch file rather than a message: dot files, ".tmp" files, and the
// editors' scratch files of IsEditorScratch. The router leaves them alone.
func IsScratch(name string) bool {
	if name == "" || name[0] == '.' || strings.HasSuffix(name, ".tmp") {
		return true
	}
	return IsEditorScratch(name)
}

// IsEditorScratch reports whether a file name is one an editor leaves
// beside the file it edits: backups ending in "~", emacs "#autosave#"
// files and ".#lock" links, vim's (and nano's) swap files (".swp", ".swo",
// ".swn", ".swx", ".swpx") and vim's write probe ("4913", then 5036, 5159,
// ...). It is the one list of such names: the router never takes them
// from a mailbox, and a git checkpoint never saves them.
func IsEditorScratch(name string) bool {
	if strings.HasSuffix(name, "~") || strings.HasPrefix(name, ".#") {
		return true
	}
	if len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#") {
		return true
	}
	for _, ext := range []string{".swp", ".swo", ".swn", ".swx", ".swpx"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return isVimProbe(name)
}

// EditorLock returns the name of an editor's swap or lock file for the
// file name of a state directory, when one is beside it: the file is being
// edited. It knows vim's swap file (".NAME.swp", or ".swo", ".swn" when
// that is taken, ".swx" while vim starts), nano's (".NAME.swp", when its
// locking is on) and emacs's lock (".#NAME", there while a buffer visiting
// the file has changes not saved). Editors that leave no trace are not
// seen: with those, write in tmp/ and move the file into the outbox.
func (d Dir) EditorLock(state, name string) (string, bool) {
	for _, lock := range [...]string{"." + name + ".swp", ".#" + name, "." + name + ".swo", "." + name + ".swx", "." + name + ".swn"} {
		if _, err := os.Lstat(d.Path(state, lock)); err == nil {
			return lock, true
		}
	}
	return "", false
}

// isVimProbe reports whether name is one vim creates to test a directory
// before writing: 4913, or 4913 plus a multiple of 123.
func isVimProbe(name string) bool {
	if name == "" || name[0] < '1' || name[0] > '9' || len(name) > 18 {
		return false // not a number: no Atoi, whose error allocates
	}
	n, err := strconv.Atoi(name)
	return err == nil && n >= 4913 && (n-4913)%123 == 0 && strconv.Itoa(n) == name
}
