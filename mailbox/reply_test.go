package mailbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReply(t *testing.T) {
	const (
		ask    = "20261121-101500.000001Z-alice-000001"
		answer = "20261121-101500.000002Z-bob-000002"
	)
	tests := []struct {
		name string
		in   string // the message answered
		want string // the reply, with body "ok\n"
	}{{
		name: "the first message of a conversation: its id is the thread",
		in:   "---\nid: " + ask + "\nfrom: alice\nto: bob\n---\nready?\n",
		want: "---\nto: alice\nthread: " + ask + "\nreply_to: " + ask + "\n---\nok\n",
	}, {
		name: "an answer: the thread goes on",
		in:   "---\nid: " + answer + "\nfrom: bob\nto: alice\nthread: " + ask + "\nreply_to: " + ask + "\n---\nready\n",
		want: "---\nto: bob\nthread: " + ask + "\nreply_to: " + answer + "\n---\nok\n",
	}, {
		name: "a thread a person named",
		in:   "---\nid: " + ask + "\nfrom: alice\nthread: plan-7\n---\nready?\n",
		want: "---\nto: alice\nthread: plan-7\nreply_to: " + ask + "\n---\nok\n",
	}, {
		name: "an empty thread is none",
		in:   "---\nid: " + ask + "\nfrom: alice\nthread:\n---\nready?\n",
		want: "---\nto: alice\nthread: " + ask + "\nreply_to: " + ask + "\n---\nok\n",
	}, {
		name: "a delivered tag-first message: the envelope, not the payload",
		in:   "---\nid: " + ask + "\nfrom: gm\ntype: NARRATOR_NOTE\nthread: scene-5\n---\n[NARRATOR_NOTE]\nfrom: narrator\nthread: other\n\nA note.\n",
		want: "---\nto: gm\nthread: scene-5\nreply_to: " + ask + "\n---\nok\n",
	}, {
		name: "no id: nothing to name",
		in:   "---\nfrom: alice\n---\nready?\n",
		want: "---\nto: alice\n---\nok\n",
	}, {
		name: "no sender: no one to address",
		in:   "---\nid: " + ask + "\n---\nready?\n",
		want: "---\nthread: " + ask + "\nreply_to: " + ask + "\n---\nok\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got := string(Reply(m, []byte("ok\n")).Bytes())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reply(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSameSaying(t *testing.T) {
	parse := func(s string) *Message {
		t.Helper()
		m, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := parse("---\nid: 20261121-101500.100000Z-aria-aaaaaa\nfrom: aria\nto: gm\nreply_to: 20261121-101400.000000Z-gm-bbbbbb\ncreated: 2026-11-21T10:15:00.1Z\n---\nI wait.\n")
	built := New([]byte("I wait.\n"))
	built.Set("to", "gm")
	built.Set("reply_to", "20261121-101400.000000Z-gm-bbbbbb")
	if !SameSaying(first, built) {
		t.Errorf("an answer built again as it was sent (no id, created or from yet) is not the same")
	}
	other := New([]byte("I run.\n"))
	other.Set("to", "gm")
	other.Set("reply_to", "20261121-101400.000000Z-gm-bbbbbb")
	if SameSaying(first, other) {
		t.Errorf("answers with other bodies are the same")
	}
	built.SetValue("decision", "approve")
	if SameSaying(first, built) {
		t.Errorf("an answer with a field more is the same")
	}
	action := func() *Message {
		m := NewTagFirst("PLAYER_TO_GM", []byte("I open the door.\n"))
		m.Set("to", "gm")
		m.SetPayload("type", "ACTION")
		m.SetPayload("character", "aria")
		return m
	}
	sent := action()
	sent.Set("id", "20261121-101500.100000Z-aria-cccccc")
	sent.Set("from", "aria")
	tag := parse(string(sent.Bytes())) // as read from sent/
	tagAgain := action()
	if !SameSaying(tag, tagAgain) {
		t.Errorf("a tag-first answer built again is not the same:\n%s\n%s", tag.Bytes(), tagAgain.Bytes())
	}
	tagAgain.SetPayload("type", "VETO")
	if SameSaying(tag, tagAgain) {
		t.Errorf("tag-first answers of other payload types are the same")
	}
}
