package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// DeliveryRecordPath returns the path of .parley/delivered.json: what a runner
// leaves for the next about the ids it began delivering (see DeliveryRecord).
// Runtime state, left out of git by the workspace's .gitignore: a copy
// put back by git would claim less than was delivered.
func (w *Workspace) DeliveryRecordPath() string {
	return filepath.Join(w.Root, StateDir, "delivered.json")
}

// DeliveryRecord is the content of .parley/delivered.json. Every message id a
// runner of this workspace began delivering is dated at or before Newest,
// unless Running says a runner was at work when it was written and did
// not stop cleanly since: that runner may have delivered newer ones.
// A runner delivers a message whose id is newer than every one begun
// without first looking for an earlier copy in each recipient's mailbox
// (see runner/fresh.go).
type DeliveryRecord struct {
	Newest  time.Time `json:"newest"`
	Running bool      `json:"running"`
}

// ReadDeliveryRecord reads .parley/delivered.json. A file that does not exist
// is an error that wraps fs.ErrNotExist; one that does not parse names
// the file.
func (w *Workspace) ReadDeliveryRecord() (DeliveryRecord, error) {
	var d DeliveryRecord
	data, err := os.ReadFile(w.DeliveryRecordPath())
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return d, fmt.Errorf("%s: %w", w.DeliveryRecordPath(), err)
	}
	return d, nil
}

// WriteDeliveryRecord replaces .parley/delivered.json, durably.
func (w *Workspace) WriteDeliveryRecord(d DeliveryRecord) error {
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return mailbox.WriteFileAtomic(w.DeliveryRecordPath(), append(data, '\n'))
}
