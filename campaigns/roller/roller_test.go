package roller

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-dev/parley/campaigns/dice"
	"github.com/parley-dev/parley/mailbox"
)

func ask(t *testing.T, r *Roller, text string) *mailbox.Message {
	t.Helper()
	m, err := mailbox.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	m.Set("id", "20261121-101500.000000Z-gm-000001")
	out, err := r.Handle(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d answers, want 1", len(out))
	}
	if to, _ := out[0].Header().Get("to"); to != "gm" {
		t.Errorf("answer to %q, want the sender", to)
	}
	if rt, _ := out[0].Header().Get("reply_to"); rt != "20261121-101500.000000Z-gm-000001" {
		t.Errorf("reply_to = %q", rt)
	}
	if th, _ := out[0].Header().Get("thread"); th != "20261121-101500.000000Z-gm-000001" {
		t.Errorf("thread = %q, want the request's id (it started the thread)", th)
	}
	return out[0]
}

func TestRollRequest(t *testing.T) {
	// The same seed rolls the same dice: the answer is what dice.Roll says.
	want, err := dice.Roll("1d20+5", dice.Seeded(7))
	if err != nil {
		t.Fatal(err)
	}
	r := New(dice.Seeded(7))
	got := ask(t, r, "---\nfrom: gm\nto: dice\ntype: DICE_REQUEST\n---\n[DICE_REQUEST]\ncharacter: corwin-voss\ncheck: Stealth\ndice: 1d20+5\ndc: 12\n\nSneak past.\n")
	outcome := string(want.Against(12))
	for k, v := range map[string]string{"type": ResultType, "character": "corwin-voss", "check": "Stealth", "roll": want.Roll, "dc": "12", "result": outcome} {
		if g, _ := got.Header().Get(k); g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
	if body := strings.TrimSpace(string(got.Body)); body != want.Roll+" vs DC 12: "+outcome {
		t.Errorf("body = %q", body)
	}
}

func TestRollFromBody(t *testing.T) {
	got := ask(t, New(dice.Seeded(1)), "---\nfrom: gm\n---\n\n 2d6+3 \n")
	roll, _ := got.Payload().Get("roll")
	if !strings.HasPrefix(roll, "2d6+3 = [") {
		t.Errorf("roll = %q, want the body's expression rolled", roll)
	}
	if got.Payload().Has("dc") || got.Payload().Has("result") {
		t.Errorf("an answer without a dc judges nothing: %s", got.Bytes())
	}
}

// TestBadRequests: what cannot be rolled is answered with why, as text.
func TestBadRequests(t *testing.T) {
	r := New(dice.Seeded(1))
	for text, want := range map[string]string{
		"---\nfrom: gm\n---\n":                         "Nothing to roll",
		"---\nfrom: gm\ndice: 1d20+\n---\n":            `Cannot roll "1d20+": `,
		"---\nfrom: gm\ndice: d20\ndc: hard\n---\n":    `Cannot judge against dc "hard"`,
		"---\nfrom: gm\nroll: 1d0\n---\nignored 1d6\n": `Cannot roll "1d0"`,
	} {
		got := ask(t, r, text)
		if got.Header().Has("type") {
			t.Errorf("%q: answered with a %s", text, got.Bytes())
		}
		if !strings.HasPrefix(string(got.Body), want) {
			t.Errorf("%q: body %q, want it to start with %q", text, got.Body, want)
		}
	}
}

// TestRollFromTaggedBody: in a tag-first message the free text follows the
// tag's fields.
func TestRollFromTaggedBody(t *testing.T) {
	got := ask(t, New(dice.Seeded(1)), "---\nfrom: gm\ntype: ASK_ROLL\n---\n[ASK_ROLL]\ncharacter: tilda-brannock\n\n1d8\n")
	if roll, _ := got.Payload().Get("roll"); !strings.HasPrefix(roll, "1d8 = [") {
		t.Errorf("roll = %q, want the free text's expression rolled", roll)
	}
	if c, _ := got.Payload().Get("character"); c != "tilda-brannock" {
		t.Errorf("character = %q", c)
	}
}

// TestOnlyRequests: a broadcast is not a roll request, and a [NARRATIVE]
// to everyone is not answered.
func TestOnlyRequests(t *testing.T) {
	r := New(dice.Seeded(1))
	for _, text := range []string{
		"---\nfrom: gm\nto: \"*\"\ntype: NARRATIVE\n---\n[NARRATIVE]\n\nRain hammers the roof.\n",
		"---\nfrom: gm\nto: \"*\"\n---\n1d20\n",
	} {
		m, err := mailbox.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Handle(context.Background(), m)
		if err != nil || len(out) != 0 {
			t.Errorf("%q: answered %d messages (%v), want none", text, len(out), err)
		}
	}
}

// TestResultNeedsCharacterAndCheck: the protocol's [DICE_RESULT] requires
// both; without them the answer is informal, with the same fields.
func TestResultNeedsCharacterAndCheck(t *testing.T) {
	got := ask(t, New(dice.Seeded(1)), "---\nfrom: gm\ndice: 1d20\ncharacter: tilda-brannock\ndc: 10\n---\n")
	if got.Header().Has("type") {
		t.Errorf("answered with a type without a check: %s", got.Bytes())
	}
	for _, k := range []string{"roll", "dc", "result", "character"} {
		if !got.Payload().Has(k) {
			t.Errorf("the informal answer has no %s: %s", k, got.Bytes())
		}
	}
}
