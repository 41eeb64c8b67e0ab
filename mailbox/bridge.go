package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Forwarded moves a message from inbox/ to done/ once a bridge has handed
// it on to the workspace its agent lives in, without flushing the move:
// a move lost in a crash hands the message on again, which the other side
// takes as a no-op by its id. A message no longer in inbox/ is not an
// error when done/ holds it.
func (d Dir) Forwarded(id string) error {
	err := d.moveUnsynced(id, Inbox, Done)
	if errors.Is(err, ErrNotFound) {
		if _, serr := os.Lstat(d.Path(Done, FileName(id))); serr == nil {
			return nil
		}
	}
	return err
}

// Bury puts a message that could not be delivered straight into dead/,
// with the reason beside it, unless the mailbox already holds it in a
// received state (inbox, cur, done, dead): it reports false then. Both
// are durable once s.Sync returns.
func (d Dir) Bury(id string, data []byte, reason string, s *Syncer) (buried bool, err error) {
	name := FileName(id)
	for _, st := range received {
		if _, err := os.Lstat(d.Path(st, name)); err == nil {
			return false, nil
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return false, err // a state that is not a directory holds nothing
		}
	}
	if err := d.writeReason(Dead, name, reason, s.perFile); err != nil {
		return false, fmt.Errorf("dead letter for %s: %w", d.Agent(), err)
	}
	err = linkNew(d.dir(Tmp), name+deliverySuffix, d.Path(Dead, name), data, s.perFile)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dead letter for %s: %w", d.Agent(), err)
	}
	s.dirty(d.dir(Dead))
	return true, nil
}
