package mailbox

// Reply returns a new message with the given body that answers m: it is
// addressed to m's sender (to), names m (reply_to), and is in m's thread.
// The caller sets the rest: id, from, type, the payload, and to when the
// answer goes elsewhere.
//
// The thread of a reply is the thread of the message it answers or, when
// that message names none, that message's id. So a conversation's first
// message carries no thread, and its id is the thread of every answer to
// it and of every answer to those. The fields are read from m's header
// (Header); one that is missing or empty there is left out of the reply.
func Reply(m *Message, body []byte) *Message {
	h := m.Header()
	r := New(body)
	if from, _ := h.Get("from"); from != "" {
		r.Set("to", from)
	}
	id, _ := h.Get("id")
	thread, _ := h.Get("thread")
	if thread == "" {
		thread = id
	}
	if thread != "" {
		r.Set("thread", thread)
	}
	if id != "" {
		r.Set("reply_to", id)
	}
	return r
}
