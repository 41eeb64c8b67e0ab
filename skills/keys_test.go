package skills

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestMisspeltField: a key that is no field of the message's type, one
// or two edits from a field of it that the message lacks, optional or
// required, is refused at its line, once, naming the field meant; a key
// of the sender's own far from every field is delivered.
func TestMisspeltField(t *testing.T) {
	text := "---\nname: desk\ndescription: reports\n---\n## Types\n\n" +
		"### report\n\n```yaml\n---\ntype: report\ntitle: x\n---\n```\n\n" +
		"Required: `type`, `title`\nOptional: `summary`, `findings`, `dc`, `party[].name`\n\n" +
		"### review\n\n```yaml\n---\ntype: review\n---\n```\n\n" +
		"Required: `type`\nOptional: `finding`, `verdict`\n"
	sk := Parse("desk.md", []byte(text))
	if err := sk.Err(); err != nil {
		t.Fatal(err)
	}
	desk, err := NewSet(sk)
	if err != nil {
		t.Fatal(err)
	}
	dnd := builtinSet(t, "dnd-team", "dnd-journal", "team-requests")
	for _, tt := range []struct {
		name string
		set  *Set
		text string
		want []string // "LINE FIELD: REASON" of each violation
	}{
		{"optional field misspelt", desk, "---\ntype: report\ntitle: Q3\nsumary: all well\n---\n",
			[]string{"4 sumary: no field of type report is called sumary; did you mean summary?"}},
		{"a letter left out of a long name", desk, "---\ntype: report\ntitle: Q3\nfindngs: none\n---\n",
			[]string{"4 findngs: no field of type report is called findngs; did you mean findings?"}},
		{"a word of the sender's own, two edits from an optional field", dnd, "---\ntype: shutdown_request\nregion: north\n---\n", nil},
		{"two edits from an optional field", desk, "---\ntype: report\ntitle: Q3\nsumarry: all well\n---\n", nil},
		{"only the case, which a reader may take for it", desk, "---\ntype: report\ntitle: Q3\nSummary: all well\n---\n", nil},
		{"a letter off and the case", desk, "---\ntype: report\ntitle: Q3\nSumary: all well\n---\n",
			[]string{"4 Sumary: no field of type report is called Sumary; did you mean summary?"}},
		{"the journal's Title: label", dnd, "[JOURNAL_ENTRY]\nTitle: The bell\nWhat happened: rain\n\nx\n", nil},
		{"the top of a nested field", desk, "---\ntype: report\ntitle: Q3\npary:\n  - name: aria\n---\n",
			[]string{"4 pary: no field of type report is called pary; did you mean party?"}},
		{"a field of another type, a typo of this one's", desk, "---\ntype: report\ntitle: Q3\nfinding: none\n---\n",
			[]string{"4 finding: no field of type report is called finding; did you mean findings?"}},
		{"a field of another type, near none of this one's", desk, "---\ntype: report\ntitle: Q3\nverdict: ok\n---\n", nil},
		{"every one, in the order written", desk, "---\ntype: report\nsumary: all well\ntitle: Q3\nfindngs: none\n---\n",
			[]string{"3 sumary: no field of type report is called sumary; did you mean summary?", "5 findngs: no field of type report is called findngs; did you mean findings?"}},
		{"the field is there too", desk, "---\ntype: report\ntitle: Q3\nsummary: all well\nsumary: all well\n---\n", nil},
		{"a key of the sender's own", desk, "---\ntype: report\ntitle: Q3\npriority: high\nsummit: 2027\n---\n", nil},
		{"a letter changed in a two-letter name", desk, "---\ntype: report\ntitle: Q3\nac: 15\n---\n", nil},
		{"two letters swapped in a two-letter name", desk, "---\ntype: report\ntitle: Q3\ncd: 15\n---\n",
			[]string{"4 cd: no field of type report is called cd; did you mean dc?"}},
		{"a message of no type", desk, "---\nsumary: all well\n---\n", nil},
		{"builtin optional field", dnd, "---\ntype: shutdown_request\nreasn: done\n---\n",
			[]string{"3 reasn: no field of type shutdown_request is called reasn; did you mean reason?"}},
		{"a reserved field is MisspeltKeys'", dnd, "---\ntype: shutdown_request\nrequst_id: x\n---\n", nil},
		{"a required field misspelt is said once", dnd, "---\ntype: shutdown_response\nrequest_id: r1\naprove: true\n---\n",
			[]string{"4 approve: missing: shutdown_response needs one of true, false; aprove on line 4 is no field of shutdown_response: did you mean approve?"}},
		{"a tag-first message", dnd, "[DICE_RESULT]\ncharacter: aria\ncheck: stealth\nroll: 12\nresutl: failure\n\nx\n",
			[]string{"5 resutl: no field of type [DICE_RESULT] is called resutl; did you mean result?"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, vs := tt.set.Check(msg(t, tt.text), Envelope{})
			var got []string
			for _, v := range vs {
				if !v.Warning {
					got = append(got, fmt.Sprintf("%d %s", v.Line, v.Error()))
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Check (-want +got):\n%s", d)
			}
		})
	}
}
