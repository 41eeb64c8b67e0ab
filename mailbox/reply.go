package mailbox

import (
	"bytes"
	"reflect"
	"slices"
)

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

// SameSaying reports whether a and b say the same: the same header and
// payload fields with the same values, and the same body. Their id,
// created and from are not compared: two sends of one answer (a client
// that retries) differ in those only.
func SameSaying(a, b *Message) bool {
	// Each as it is written: one built in memory and one read from its
	// file are then alike.
	var err error
	if a, err = Parse(a.Bytes()); err != nil {
		return false
	}
	if b, err = Parse(b.Bytes()); err != nil {
		return false
	}
	if !bytes.Equal(a.Content(), b.Content()) {
		return false
	}
	for _, view := range []func(*Message) Fields{(*Message).Header, (*Message).Payload} {
		va, vb := view(a), view(b)
		keys := func(f Fields) []string {
			var out []string
			for _, k := range f.Keys() {
				if k != "id" && k != "created" && k != "from" {
					out = append(out, k)
				}
			}
			slices.Sort(out)
			return out
		}
		ka, kb := keys(va), keys(vb)
		if !slices.Equal(ka, kb) {
			return false
		}
		for _, k := range ka {
			if !reflect.DeepEqual(va.Value(k), vb.Value(k)) {
				return false
			}
		}
	}
	return true
}
