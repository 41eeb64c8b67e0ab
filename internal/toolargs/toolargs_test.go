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
		To      []string `json:"to" want:"a list of agents"`
		Count   int      `json:"count"`
		Updates []struct {
			Slug           string `json:"slug"`
			In             string `json:"in,omitempty"`
			QuantityChange int    `json:"quantityChange"`
		} `json:"updates"`
		Fields map[string]struct {
			Value int `json:"value"`
		} `json:"fields"`
	}
	for _, tt := range []struct {
		in   string
		want string
	}{
		{`{"to": ["gm"], "count": 2}`, ``},
		{``, ``},
		{`{"to": 5}`, `bad arguments: to: want a list of agents, got 5`},
		{`{"count": "two"}`, `bad arguments: count: want a whole number, got "two"`},
		{`{"cnt": 2}`, `bad arguments: unknown field "cnt" (did you mean count? the arguments: to, count, updates, fields)`},
		{`{"colour": 2}`, `bad arguments: unknown field "colour" (the arguments: to, count, updates, fields)`},
		// A field inside another is named by its path, beside the fields
		// of the object it is in: it said the top level's.
		{`{"updates": [{"slug": "rope", "quantityChange": 1}, {"slug": "rope", "quantity": -1}]}`, `bad arguments: updates[1].quantity: unknown field (did you mean quantityChange? fields: slug, in, quantityChange)`},
		{`{"updates": [{"SLUG": "rope", "quantityChange": 1, "inn": "bag"}]}`, `bad arguments: updates[0].inn: unknown field (did you mean in? fields: slug, in, quantityChange)`},
		{`{"fields": {"a": {"value": 1, "vlue": 2}}}`, `bad arguments: fields.a.vlue: unknown field (did you mean value? fields: value)`},
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
