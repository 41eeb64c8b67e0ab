package agents

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/mailbox"
)

// TestPastEnd checks which [SESSION_END] at a seat closed an earlier
// session (a tryout: one a `parley run` with no seat left unread ended
// the seat of the next session while the gm waited for an answer). A
// review: a game master's closing [NARRATIVE] after its end, before the
// seat showed the end, made it past, and the seat played on after the
// session was over; only a start, a question, a prompt or a newer end
// does.
func TestPastEnd(t *testing.T) {
	const (
		endID    = "20261124-100000.000000Z-gm-e00001"
		before   = "20261124-090000.000000Z-lead-b00001"
		after    = "20261124-110000.000000Z-lead-b00002"
		askID    = "20261124-110001.000000Z-gm-a00001"
		shutID   = "20261124-100001.000000Z-gm-f00001"
		shutID2  = "20261124-100001.000000Z-lead-f00002"
		closeID  = "20261124-100002.000000Z-gm-c00001"
		promptID = "20261124-110002.000000Z-gm-b00003"
		end2ID   = "20261124-120000.000000Z-gm-e00002"
	)
	end := "---\nid: " + endID + "\nfrom: gm\nto: [lead, tilda]\n---\n[SESSION_END]\nsummary: Over.\nstate_saved: true\n"
	start := func(id string) string {
		return "---\nid: " + id + "\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\n---\nBegin.\n"
	}
	ask := "---\nid: " + askID + "\nfrom: gm\nto: tilda\n---\n[ASK_PLAYER]\nquestion: Which door?\n"
	closing := "---\nid: " + closeID + "\nfrom: gm\nto: [tilda]\n---\n[NARRATIVE]\nThe lamps go out; the tale rests here.\n"
	prompt := "---\nid: " + promptID + "\nfrom: gm\nto: tilda\n---\n[GM_TO_PLAYER]\ncharacter: tilda\n\nWhat do you do?\n"
	end2 := "---\nid: " + end2ID + "\nfrom: gm\nto: [lead, tilda]\n---\n[SESSION_END]\nsummary: Over again.\nstate_saved: true\n"
	type msg struct{ agent, state, id, text string }
	tests := []struct {
		name string
		msgs []msg
		want bool
	}{
		{"alone", nil, false},
		{"a start before it", []msg{{"lead", mailbox.Sent, before, start(before)}}, false},
		{"a start after it", []msg{{"lead", mailbox.Sent, after, start(after)}}, true},
		{"a start after it, delivered", []msg{{"gm", mailbox.Done, after, start(after)}}, true},
		{"the gm asks the seat again", []msg{{"tilda", mailbox.Inbox, askID, ask}}, true},
		{"the gm writes to another", []msg{{"grim", mailbox.Inbox, askID, ask}}, false},
		{"the gm's closing narrative", []msg{{"tilda", mailbox.Inbox, closeID, closing}}, false},
		{"the gm's closing narrative, handled", []msg{{"tilda", mailbox.Done, closeID, closing}}, false},
		{"a closing narrative, then a start", []msg{
			{"tilda", mailbox.Inbox, closeID, closing},
			{"lead", mailbox.Sent, after, start(after)},
		}, true},
		{"the gm prompts the seat's character", []msg{{"tilda", mailbox.Inbox, promptID, prompt}}, true},
		{"a newer end", []msg{{"tilda", mailbox.Inbox, end2ID, end2}}, true},
		// A review: PastEnd counted a start waiting in the team lead's
		// outbox, which PastQuestion, reading only routed copies, did
		// not; the router may yet refuse it. Only routed copies count.
		{"a start after it, not routed (outbox)", []msg{{"lead", mailbox.Outbox, after, start(after)}}, false},
		{"a start after it, refused", []msg{{"lead", mailbox.Rejected, after, start(after)}}, false},
		{"a newer end, not routed (outbox)", []msg{{"gm", mailbox.Outbox, end2ID, end2}}, false},
		{"the gm answers the shutdown", []msg{
			{"tilda", mailbox.Inbox, shutID2, "---\nid: " + shutID2 + "\nfrom: lead\nto: tilda\ntype: JOURNAL_CHECKPOINT\n---\nWrite.\n"},
			{"lead", mailbox.Inbox, shutID, "---\nid: " + shutID + "\nfrom: gm\nto: lead\ntype: shutdown_response\nrequest_id: x\napprove: true\n---\nBye.\n"},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := leadTable(t)
			put(t, ws, "tilda", mailbox.Inbox, endID, end)
			for _, m := range tt.msgs {
				put(t, ws, m.agent, m.state, m.id, m.text)
			}
			m, err := mailbox.Parse([]byte(end))
			if err != nil {
				t.Fatal(err)
			}
			if got := PastEnd(ws, []string{"tilda"}, m); got != tt.want {
				t.Errorf("PastEnd = %v, want %v", got, tt.want)
			}
			if got := NewEnds(ws).PastEnd([]string{"tilda"}, m); got != tt.want {
				t.Errorf("Ends.PastEnd = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPastQuestion checks which question waiting at a seat a session
// that ended left (a tryout: a prompt left unanswered at /end was asked
// again at the next parley play, and the person's first line answered
// it): one its sender's [SESSION_END] came after; a player's relay by
// the game master's end. A session's start after it does not (a prompt
// sent before the first seat started the session).
func TestPastQuestion(t *testing.T) {
	const (
		askID   = "20261124-100000.000000Z-gm-a00001"
		relayID = "20261124-100000.500000Z-tilda-d00001"
		before  = "20261124-090000.000000Z-gm-e00000"
		endID   = "20261124-110000.000000Z-gm-e00001"
		startID = "20261124-110000.000000Z-lead-b00001"
		narrID  = "20261124-110001.000000Z-gm-c00001"
		otherID = "20261124-110002.000000Z-grim-e00002"
	)
	ask := "---\nid: " + askID + "\nfrom: gm\nto: tilda\n---\n[ASK_PLAYER]\nquestion: Which door?\n"
	relay := "---\nid: " + relayID + "\nfrom: tilda\nto: lead\n---\n[RELAY_TO_HUMAN]\ncharacter: tilda-brannock\n\nFight or flee?\n"
	end := func(id, from string) string {
		return "---\nid: " + id + "\nfrom: " + from + "\nto: [lead, tilda]\n---\n[SESSION_END]\nsummary: Over.\nstate_saved: true\n"
	}
	start := "---\nid: " + startID + "\nfrom: lead\nto: gm\ntype: SESSION_COMMAND\ncommand: start\n---\nBegin.\n"
	narr := "---\nid: " + narrID + "\nfrom: gm\nto: [tilda]\n---\n[NARRATIVE]\nThe rain goes on.\n"
	type msg struct{ agent, state, id, text string }
	tests := []struct {
		name string
		q    string
		msgs []msg
		want bool
	}{
		{"alone", ask, nil, false},
		{"an end before it", ask, []msg{{"gm", mailbox.Sent, before, end(before, "gm")}}, false},
		{"its sender's end after it, sent", ask, []msg{{"gm", mailbox.Sent, endID, end(endID, "gm")}}, true},
		{"its sender's end after it, handled at the seat", ask, []msg{{"tilda", mailbox.Done, endID, end(endID, "gm")}}, true},
		{"a story after it", ask, []msg{{"tilda", mailbox.Inbox, narrID, narr}}, false},
		{"another's end after it", ask, []msg{{"grim", mailbox.Sent, otherID, end(otherID, "grim")}}, false},
		{"a start after it", ask, []msg{{"lead", mailbox.Sent, startID, start}}, false},
		{"a relay, the gm's end after it", relay, []msg{{"lead", mailbox.Done, endID, end(endID, "gm")}}, true},
		{"a relay, alone", relay, nil, false},
		// A review: an end a gm program wrote to its outbox, which the
		// router then refused, made the question past, and it was filed
		// unanswered; only routed copies count.
		{"its sender's end after it, not routed (outbox)", ask, []msg{{"gm", mailbox.Outbox, endID, end(endID, "gm")}}, false},
		{"its sender's end after it, refused", ask, []msg{{"gm", mailbox.Rejected, endID, end(endID, "gm")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := leadTable(t)
			for _, m := range tt.msgs {
				put(t, ws, m.agent, m.state, m.id, m.text)
			}
			q, err := mailbox.Parse([]byte(tt.q))
			if err != nil {
				t.Fatal(err)
			}
			if got := PastQuestion(ws, q); got != tt.want {
				t.Errorf("PastQuestion = %v, want %v", got, tt.want)
			}
			if got := NewEnds(ws).PastQuestion(q); got != tt.want {
				t.Errorf("Ends.PastQuestion = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEnds checks that one Ends, asked of many questions in any order
// (a seat's page asks of what waits, then of what it filed, older),
// answers each as PastQuestion does.
func TestEnds(t *testing.T) {
	ws := leadTable(t)
	msg := func(id, from, typ string) string {
		return "---\nid: " + id + "\nfrom: " + from + "\nto: [lead, tilda]\ntype: " + typ + "\n---\nText.\n"
	}
	const end1, end2 = "20261124-110000.000000Z-gm-e00001", "20261124-130000.000000Z-gm-e00002"
	put(t, ws, "gm", mailbox.Sent, end1, msg(end1, "gm", SessionEndType))
	put(t, ws, "tilda", mailbox.Done, end1, msg(end1, "gm", SessionEndType))
	put(t, ws, "tilda", mailbox.Inbox, end2, msg(end2, "gm", SessionEndType))
	for i, id := range []string{"20261124-120000.000000Z-gm-n00001", "20261124-121000.000000Z-tilda-n00002", "20261124-140000.000000Z-gm-n00003"} {
		from := []string{"gm", "tilda", "gm"}[i]
		put(t, ws, "lead", mailbox.Done, id, msg(id, from, "NARRATIVE"))
	}
	qs := []struct {
		id, from, typ string
	}{
		{"20261124-135000.000000Z-gm-a00005", "gm", campaigns.AskPlayerType},
		{"20261124-140500.000000Z-gm-a00006", "gm", campaigns.AskPlayerType},
		{"20261124-100000.000000Z-gm-a00001", "gm", campaigns.AskPlayerType},
		{"20261124-120500.000000Z-gm-a00003", "gm", campaigns.AskPlayerType},
		{"20261124-103000.000000Z-tilda-d00002", "tilda", campaigns.RelayToHumanType},
		{"20261124-131000.000000Z-tilda-d00004", "tilda", campaigns.RelayToHumanType},
		{"20261124-090000.000000Z-tilda-d00000", "tilda", campaigns.RelayToHumanType},
	}
	ends := NewEnds(ws)
	for _, q := range qs {
		m, err := mailbox.Parse([]byte(msg(q.id, q.from, q.typ)))
		if err != nil {
			t.Fatal(err)
		}
		want := PastQuestion(ws, m)
		if got := ends.PastQuestion(m); got != want {
			t.Errorf("Ends.PastQuestion(%s) = %v, want %v (PastQuestion)", q.id, got, want)
		}
		if wantPast := q.id < end2; want != wantPast {
			t.Errorf("PastQuestion(%s) = %v, want %v", q.id, want, wantPast)
		}
	}
}

// TestEndsRoutedOnly: the two questions a seat asks of the mailboxes,
// whether a question waiting is of a session that has ended
// (PastQuestion) and whether an end shown is of an earlier session
// (PastEnd), read the same copies by the same rule: a newer
// [SESSION_END] waiting in the gm's outbox, not routed (the router may
// yet refuse it), makes neither past; routed, it makes both past. Each is
// asked alone and of one Ends asked both, in either order.
func TestEndsRoutedOnly(t *testing.T) {
	// A player's relay, after the first end (which it leaves the
	// session's own: it is no gm's) and before the second.
	const (
		end1ID = "20261124-100000.000000Z-gm-e00001"
		askID  = "20261124-100500.000000Z-grim-d00001"
		end2ID = "20261124-110000.000000Z-gm-e00002"
	)
	end := func(id string) string {
		return "---\nid: " + id + "\nfrom: gm\nto: [lead, tilda]\n---\n[SESSION_END]\nsummary: Over.\nstate_saved: true\n"
	}
	ask := "---\nid: " + askID + "\nfrom: grim\nto: lead\n---\n[RELAY_TO_HUMAN]\ncharacter: grimjaw-ironforge\n\nFight or flee?\n"
	type msg struct{ agent, state string }
	tests := []struct {
		name  string
		where []msg // of the newer end
		want  bool
	}{
		{"not routed (outbox)", []msg{{"gm", mailbox.Outbox}}, false},
		{"refused", []msg{{"gm", mailbox.Rejected}}, false},
		{"routed", []msg{{"gm", mailbox.Sent}, {"lead", mailbox.Inbox}, {"tilda", mailbox.Inbox}}, true},
		{"routed, handled at the seat", []msg{{"gm", mailbox.Sent}, {"lead", mailbox.Done}, {"tilda", mailbox.Done}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := leadTable(t)
			put(t, ws, "tilda", mailbox.Inbox, end1ID, end(end1ID))
			put(t, ws, "grim", mailbox.Sent, askID, ask)
			put(t, ws, "lead", mailbox.Inbox, askID, ask)
			for _, w := range tt.where {
				put(t, ws, w.agent, w.state, end2ID, end(end2ID))
			}
			e1, err := mailbox.Parse([]byte(end(end1ID)))
			if err != nil {
				t.Fatal(err)
			}
			q, err := mailbox.Parse([]byte(ask))
			if err != nil {
				t.Fatal(err)
			}
			seat := []string{"tilda"}
			if got := PastQuestion(ws, q); got != tt.want {
				t.Errorf("PastQuestion = %v, want %v", got, tt.want)
			}
			if got := PastEnd(ws, seat, e1); got != tt.want {
				t.Errorf("PastEnd = %v, want %v", got, tt.want)
			}
			ends := NewEnds(ws)
			if got := ends.PastQuestion(q); got != tt.want {
				t.Errorf("Ends.PastQuestion, asked first = %v, want %v", got, tt.want)
			}
			if got := ends.PastEnd(seat, e1); got != tt.want {
				t.Errorf("Ends.PastEnd, asked second = %v, want %v", got, tt.want)
			}
			ends = NewEnds(ws)
			if got := ends.PastEnd(seat, e1); got != tt.want {
				t.Errorf("Ends.PastEnd, asked first = %v, want %v", got, tt.want)
			}
			if got := ends.PastQuestion(q); got != tt.want {
				t.Errorf("Ends.PastQuestion, asked second = %v, want %v", got, tt.want)
			}
		})
	}
}

// BenchmarkEnds compares deciding a seat page's questions with one Ends
// (the mailboxes listed once, each message read at most once) against
// PastQuestion per question, at a table of 2,000 messages and 20
// questions waiting.
func BenchmarkEnds(b *testing.B) {
	ws := leadTable(b)
	var qs []*mailbox.Message
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for i := range 2000 {
		id := fmt.Sprintf("%s-gm-%06x", start.Add(time.Duration(i)*time.Second).Format("20060102-150405.000000Z"), i)
		text := "---\nid: " + id + "\nfrom: gm\nto: [tilda]\ntype: NARRATIVE\n---\nRain.\n"
		put(b, ws, "gm", mailbox.Sent, id, text)
		put(b, ws, "tilda", mailbox.Done, id, text)
		if i%100 == 50 {
			q, _ := mailbox.Parse([]byte("---\nid: " + id + "\nfrom: gm\nto: tilda\ntype: ASK_PLAYER\n---\nWhich door?\n"))
			qs = append(qs, q)
		}
	}
	b.Run("PastQuestion", func(b *testing.B) {
		for range b.N {
			for _, q := range qs {
				PastQuestion(ws, q)
			}
		}
	})
	b.Run("Ends", func(b *testing.B) {
		for range b.N {
			ends := NewEnds(ws)
			for _, q := range qs {
				ends.PastQuestion(q)
			}
		}
	})
}
