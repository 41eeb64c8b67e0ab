package toolargs

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestDecode: the arguments are read strictly, and a wrong one is told in
// the arguments' words, with a field's want tag where it has one.
func TestDecode(t *testing.T) {
	type args struct {
		To    []string `json:"to" want:"a list of agents"`
		Count int      `json:"count"`
	}
	for _, tt := range []struct {
		in   string
		want string
	}{
		{`{"to": ["gm"], "count": 2}`, ``},
		{``, ``},
		{`{"to": 5}`, `bad arguments: to: want a list of agents, got 5`},
		{`{"count": "two"}`, `bad arguments: count: want a whole number, got "two"`},
		{`{"cnt": 2}`, `bad arguments: unknown field "cnt" (the arguments: to, count)`},
		{`{} {}`, `bad arguments: more after the arguments object`},
	} {
		var a args
		err := Decode(json.RawMessage(tt.in), &a)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrBad) {
				t.Errorf("Decode(%s) = %v, not ErrBad", tt.in, err)
			}
		}
		if got != tt.want {
			t.Errorf("Decode(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
