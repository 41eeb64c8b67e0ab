package workspace

import (
	"time"

	"github.com/parley-dev/parley/mailbox"
)

// Structured requests the runner and the lifecycle commands act on (see
// the team-requests skill).
const (
	ShutdownRequest      = "shutdown_request"
	ShutdownResponse     = "shutdown_response"
	PlanApprovalRequest  = "plan_approval_request"
	PlanApprovalResponse = "plan_approval_response"
)

// Answer is an answer already given to a structured request.
type Answer struct {
	ID   string    // the answer's id
	From string    // who answered
	Type string    // shutdown_response, plan_approval_response
	Sent time.Time // when it was sent (its id's time)
	Path string    // the answer's file
}

// FindAnswer returns the answer to a structured request (a
// plan_approval_request or a shutdown_request, id) that one of the agents
// it was delivered to has sent already: a *_response in its outbox or
// sent/ whose reply_to is the request's id, or whose request_id is
// requestID. Only the answering agents' own mailboxes are read.
func (w *Workspace) FindAnswer(id, requestID string) (*Answer, bool) {
	var recipients []string
	for _, c := range w.Copies(id) {
		if c.State == mailbox.Inbox || c.State == mailbox.Cur || c.State == mailbox.Done {
			recipients = appendNew(recipients, c.Agent)
		}
	}
	for _, agent := range recipients {
		box := w.Mailbox(agent)
		for _, state := range []string{mailbox.Outbox, mailbox.Sent} {
			names, _ := box.Names(state)
			for i := len(names) - 1; i >= 0; i-- { // the newest first
				if a, ok := w.answerIn(box.Path(state, names[i]), id, requestID); ok {
					a.From = agent
					return a, true
				}
			}
		}
	}
	return nil, false
}

// answerIn reads a file and says whether it answers the request.
func (w *Workspace) answerIn(path, id, requestID string) (*Answer, bool) {
	m, err := mailbox.ReadMessage(path, w.Config.Router.MaxMessageSize)
	if err != nil {
		return nil, false
	}
	h := m.Header()
	typ, _ := h.Get("type")
	if typ != ShutdownResponse && typ != PlanApprovalResponse {
		return nil, false
	}
	replyTo, _ := h.Get("reply_to")
	rid, _ := h.Get("request_id")
	if replyTo != id && (requestID == "" || rid != requestID) {
		return nil, false
	}
	a := &Answer{Type: typ, Path: path}
	a.ID, _ = h.Get("id")
	a.Sent, _, _ = mailbox.ParseID(a.ID)
	return a, true
}
