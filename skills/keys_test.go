package skills

import (
	"strings"
	"testing"
)

// TestMisspeltKey: a key one edit from a reserved field the message lacks
// is refused when its value would do there, and only then: a field of
// the sender's own near one (threat: high, tape: 90 min) is left alone.
func TestMisspeltKey(t *testing.T) {
	set := builtinSet(t, "dnd-team", "dev-pipeline")
	agents := map[string]bool{"aria": true, "gm": true}
	isAgent := func(n string) bool { return agents[n] }
	id := "20261128-010000.000001Z-gm-000001"
	for _, tt := range []struct {
		name, text string
		field      string // the key refused; "" for none
		line       int
		meant      string // the field it is taken for
	}{
		{"tpye for type", "---\nto: aria\ntpye: GM_TO_PLAYER\n---\nx\n", "tpye", 3, "type"},
		{"case only", "---\nto: aria\nType: GM_TO_PLAYER\n---\nx\n", "Type", 3, "type"},
		{"ot for to", "---\not: aria\n---\nx\n", "ot", 2, "to"},
		{"ot naming a list of agents", "---\not: [aria, gm]\n---\nx\n", "ot", 2, "to"},
		{"signl for signal", "---\nto: aria\nsignl: pass\n---\nx\n", "signl", 3, "signal"},
		{"signl naming no signal", "---\nto: aria\nsignl: hello there\n---\nx\n", "", 0, ""},
		{"reply_t for reply_to", "---\nto: aria\nreply_t: " + id + "\n---\nx\n", "reply_t", 3, "reply_to"},
		{"requst_id for request_id", "---\nto: aria\nrequst_id: " + id + "\n---\nx\n", "requst_id", 3, "request_id"},
		{"tpye naming a type in lower case", "---\nto: aria\ntpye: gm_to_player\n---\nx\n", "tpye", 3, "type"},
		{"tpye naming a type in brackets", "---\nto: aria\ntpye: \"[GM_TO_PLAYER]\"\n---\nx\n", "tpye", 3, "type"},
		{"tpye naming a type misspelt", "---\nto: aria\ntpye: GM_TO_PLAYR\n---\nx\n", "tpye", 3, "type"},
		{"toe of the sender's own, naming an agent", "---\ntype: NARRATIVE\ntoe: aria\n---\nx\n", "", 0, ""},
		{"top of the sender's own, naming an agent", "---\ntop: gm\n---\nx\n", "", 0, ""},
		{"To for to", "---\nTo: aria\n---\nx\n", "To", 2, "to"},
		{"threat of the sender's own", "---\nto: aria\nthreat: high\n---\nx\n", "", 0, ""},
		{"tape of the sender's own", "---\nto: aria\ntape: 90 min\n---\nx\n", "", 0, ""},
		{"ot naming no agent", "---\nto: aria\not: tomorrow\n---\nx\n", "", 0, ""},
		{"the field is there", "---\nto: aria\ntype: GM_TO_PLAYER\ntpye: GM_TO_PLAYER\n---\nx\n", "", 0, ""},
		{"a field of the protocol", "[PLAYER_TO_GM]\ntype: ACTION\ncharacter: aria\n\nx\n", "", 0, ""},
		{"tag-first, tpye among its fields", "[NARRATIVE]\ntpye: GM_TO_PLAYER\n\nx\n", "", 0, ""}, // its type is the tag
	} {
		t.Run(tt.name, func(t *testing.T) {
			vs := set.MisspeltKeys(msg(t, tt.text), isAgent)
			if tt.field == "" {
				if len(vs) > 0 {
					t.Fatalf("MisspeltKeys = %+v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Field != tt.field || vs[0].Line != tt.line || vs[0].Meant != tt.meant {
				t.Fatalf("MisspeltKeys = %+v; want %s on line %d, meant for %s", vs, tt.field, tt.line, tt.meant)
			}
		})
	}
}

// TestMissingFieldMisspelt: a required field that is missing, beside a
// key that looks meant for it, is said at that key's line, naming it.
func TestMissingFieldMisspelt(t *testing.T) {
	set := builtinSet(t, "dnd-team")
	_, vs := set.Check(msg(t, "---\ntype: GM_TO_PLAYER\nrequest_type: QUICK_REACTION\nscene_number: 5\nscen_slug: the-door\n---\nWhat now?\n"), Envelope{})
	if len(vs) != 1 || vs[0].Field != "scene_slug" || vs[0].Line != 5 {
		t.Fatalf("Check = %+v, want scene_slug missing, said on line 5", vs)
	}
	if want := "scen_slug on line 5 is no field of [GM_TO_PLAYER]: did you mean scene_slug?"; !strings.Contains(vs[0].Reason, want) {
		t.Errorf("reason %q does not say %q", vs[0].Reason, want)
	}
}

// TestMisspeltKeyNoSkills: a workspace of no skills (a nil Set) still
// catches a key meant for to.
func TestMisspeltKeyNoSkills(t *testing.T) {
	var set *Set
	if vs := set.MisspeltKeys(msg(t, "---\not: aria\ntpye: NOTE\n---\nx\n"), func(n string) bool { return n == "aria" }); len(vs) == 0 || vs[0].Field != "ot" {
		t.Errorf("MisspeltKeys = %+v; want ot first", vs)
	}
}
