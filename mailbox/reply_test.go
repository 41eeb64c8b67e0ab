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
