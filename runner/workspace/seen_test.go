package workspace

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeenWith(t *testing.T) {
	tests := []struct {
		name           string
		seen           Seen
		shown, unshown []string
		want           Seen
	}{
		{"all shown", Seen{}, []string{"1", "2"}, nil, Seen{Upto: "2"}},
		{"older left out, new", Seen{}, []string{"5"}, []string{"1", "2"}, Seen{Also: []string{"5"}}},
		{"older left out, seen", Seen{Upto: "2"}, []string{"5"}, []string{"1", "2"}, Seen{Upto: "5"}},
		{"left out shown before", Seen{Also: []string{"4", "5"}}, []string{"6"}, []string{"4", "5"}, Seen{Upto: "6"}},
		{"up to the oldest new", Seen{Also: []string{"5"}}, []string{"2", "3", "6"}, []string{"4", "5"}, Seen{Upto: "3", Also: []string{"5", "6"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.seen.with(tt.shown, tt.unshown)); diff != "" {
				t.Errorf("%+v.with(%q, %q) (-want +got):\n%s", tt.seen, tt.shown, tt.unshown, diff)
			}
		})
	}
}

func TestSeenJSON(t *testing.T) {
	// The first seen.json held an id per agent: it still reads.
	var got map[string]Seen
	if err := json.Unmarshal([]byte(`{"a": "7", "b": {"upto": "1", "also": ["3", "2"]}}`), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]Seen{"a": {Upto: "7"}, "b": {Upto: "1", Also: []string{"2", "3"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); s != `{"a":"7","b":{"upto":"1","also":["2","3"]}}` {
		t.Errorf("written = %s", s)
	}
}
