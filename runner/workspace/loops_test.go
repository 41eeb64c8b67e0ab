package workspace

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckLoop: a program's message that goes back to the program whose
// message it answers counts one more than that message; in the copies of
// other programs it counts 1; a person's counts nothing; past hop_limit
// it is refused. What the sender wrote in hops: never counts.
func TestCheckLoop(t *testing.T) {
	cfg, err := ParseConfig(ConfigFile, []byte(`hop_limit: 3
agents:
  - you
  - {name: ping, driver: command, run: [./ping.sh]}
  - {name: pong, driver: session, run: [./pong.sh]}
  - {name: dice, driver: builtin, handler: dice}
`))
	if err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Root: t.TempDir(), Config: cfg}
	if err := ws.MakeMailboxes(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sender, text string
		answering          *Answering
		want               map[string]int
		refused            bool
	}{
		{"back to a program", "ping", "---\nto: pong\n---\n", &Answering{From: "pong", Hops: 1}, map[string]int{"pong": 2}, false},
		{"back to a builtin", "ping", "---\nto: dice\n---\n", &Answering{From: "dice"}, map[string]int{"dice": 1}, false},
		{"back, as a copy", "ping", "---\nto: you\ncc: pong\n---\n", &Answering{From: "pong", Hops: 2}, map[string]int{"pong": 3}, false},
		{"back, to everyone", "ping", "---\nto: \"*\"\n---\n", &Answering{From: "pong", Hops: 2}, map[string]int{"pong": 3, "dice": 1}, false},
		{"back to itself", "ping", "---\nto: ping\n---\n", &Answering{From: "ping", Hops: 1}, map[string]int{"ping": 2}, false},
		{"one past the limit", "ping", "---\nto: pong\n---\n", &Answering{From: "pong", Hops: 3}, nil, true},
		{"one past the limit, whatever hops: says", "ping", "---\nto: pong\nhops: 0\n---\n", &Answering{From: "pong", Hops: 3}, nil, true},
		{"passed on", "ping", "---\nto: dice\nhops: 7\n---\n", &Answering{From: "pong", Hops: 3}, map[string]int{"dice": 1}, false},
		{"back to a person", "ping", "---\nto: you\n---\n", &Answering{From: "you"}, nil, false},
		{"a program's message, answering nothing known", "ping", "---\nto: pong\n---\n", &Answering{}, map[string]int{"pong": 1}, false},
		{"a person's", "you", "---\nto: pong\nhops: 99\n---\n", nil, nil, false},
		{"a person's, with a program's answering", "you", "---\nto: pong\n---\n", &Answering{From: "pong", Hops: 3}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ws.Check(Input{File: "m.md", Sender: tt.sender, Message: parse(t, tt.text), Answering: tt.answering})
			if err != nil {
				t.Fatal(err)
			}
			if tt.refused {
				if v.Accepted() {
					t.Fatalf("Check accepted it, to %v, hops %v", v.Agents(), v.Hops)
				}
				want := &Refusal{File: "m.md", Reason: "loop stopped: it would be message 4 in a row between ping and pong, programs answering each other (hop_limit: 3 in parley.yaml)", Loop: &Loop{From: "ping", With: "pong", Hops: 4, Limit: 3}}
				if d := cmp.Diff(want, v.Refusal); d != "" {
					t.Errorf("refusal (-want +got):\n%s", d)
				}
				if !errors.Is(v.Refusal, ErrLoop) {
					t.Errorf("errors.Is(refusal, ErrLoop) = false")
				}
				return
			}
			if !v.Accepted() {
				t.Fatalf("Check refused it: %v", v.Refusal)
			}
			if d := cmp.Diff(tt.want, v.Hops); d != "" {
				t.Errorf("hops (-want +got):\n%s", d)
			}
			if v.Message.Header().Has("hops") {
				t.Errorf("the message to deliver keeps hops: %q: it is parley's to write", v.Message.Header().Text("hops"))
			}
		})
	}
	var other error = &Refusal{Reason: "no"}
	if errors.Is(other, ErrLoop) {
		t.Errorf("errors.Is(another refusal, ErrLoop) = true")
	}
}

// TestRunnerName: no agent may take the name parley's notices come from.
func TestRunnerName(t *testing.T) {
	_, err := ParseConfig(ConfigFile, []byte("agents:\n  - you\n  - parley\n"))
	want := `parley.yaml:3: agents[1].name: "parley" is taken: parley's runner sends its own notices under that name`
	if err == nil || err.Error() != want {
		t.Errorf("ParseConfig = %v, want %s", err, want)
	}
}
