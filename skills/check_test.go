package skills

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/mailbox"
)

func builtinSet(t *testing.T, names ...string) *Set {
	t.Helper()
	lib, err := LoadLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	set, err := lib.Set(names)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func msg(t *testing.T, text string) *mailbox.Message {
	t.Helper()
	m, err := mailbox.Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse(%q) = %v", text, err)
	}
	return m
}

func party(name string, roles ...string) Party { return Party{Name: name, Roles: roles} }

func TestCheck(t *testing.T) {
	set := builtinSet(t, "dnd-team", "dev-pipeline", "team-requests")
	gm, aria, lead := party("gm", "gm"), party("aria", "player"), party("lead", "team-lead")
	orch, rev := party("orchestrator", "orchestrator"), party("rev", "reviewer")
	tests := []struct {
		name string
		text string
		env  Envelope
		want []string // violations, "field: reason" prefixes; "~" marks a warning
	}{
		{
			name: "valid tag-first",
			text: "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_number: 5\nscene_slug: the-door\n\nWhat now?\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
		},
		{
			name: "missing required field",
			text: "[GM_TO_PLAYER]\nrequest_type: QUICK_REACTION\nscene_number: 5\n\nWhat now?\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
			want: []string{"scene_slug: missing: [GM_TO_PLAYER] requires it"},
		},
		{
			name: "enum values are exact",
			text: "[GM_TO_PLAYER]\nrequest_type: quick_reaction\nscene_number: 5\nscene_slug: x\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
			want: []string{`request_type: "quick_reaction" is not one of QUICK_REACTION, FULL_CONTEXT`},
		},
		{
			name: "sender role may not send it",
			text: "[NARRATIVE]\n\nThe rain.\n",
			env:  Envelope{Sender: aria, Recipients: []Party{gm}, Broadcast: true},
			want: []string{"from: aria (role player) may not send [NARRATIVE]: it is sent by gm"},
		},
		{
			name: "recipient role may not receive it",
			text: "[ASK_PLAYER]\nquestion: Who?\nheader: Who\noptions: []\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
			want: []string{"to: aria (role player) may not receive [ASK_PLAYER]: it goes to team-lead"},
		},
		{
			name: "conditional fields",
			text: "[SESSION_COMMAND]\ncommand: start\n",
			env:  Envelope{Sender: lead, Recipients: []Party{gm}},
			want: []string{"campaign: missing", "player_character: missing", "narrative_style: missing", "ai_characters: missing"},
		},
		{
			name: "conditional fields not needed for another value",
			text: "[SESSION_COMMAND]\ncommand: save\n",
			env:  Envelope{Sender: lead, Recipients: []Party{gm}},
		},
		{
			name: "nested required fields in each element",
			text: "[AWAIT_PLAYERS]\ncharacters:\n  - name: aria\n    request_type: QUICK_REACTION\n    scene_context: dark\n    just_happened: a noise\n    request: react\n  - name: bram\n    request_type: BOGUS\nscene_number: 5\nscene_slug: x\n",
			env:  Envelope{Sender: gm, Recipients: []Party{lead}},
			want: []string{`characters[].request_type: "BOGUS" is not one of`, "characters[].scene_context: missing in element 2 (of 2) of characters", "characters[].just_happened: missing in element 2 (of 2)", "characters[].request: missing in element 2 (of 2)", "~type: [AWAIT_PLAYERS] is deprecated since Phase 2"},
		},
		{
			name: "a list of fields that is not a list",
			text: "[AWAIT_PLAYERS]\ncharacters: everyone\nscene_number: 5\nscene_slug: x\n",
			env:  Envelope{Sender: gm, Recipients: []Party{lead}},
			want: []string{`characters: expected a list (- name: ...), not "everyone"`, "~type: [AWAIT_PLAYERS] is deprecated since Phase 2"},
		},
		{
			name: "a list of fields given as fields",
			text: "[AWAIT_PLAYERS]\ncharacters: {name: aria}\nscene_number: 5\nscene_slug: x\n",
			env:  Envelope{Sender: gm, Recipients: []Party{lead}},
			want: []string{"characters: expected a list (- name: ...), not fields", "~type: [AWAIT_PLAYERS] is deprecated since Phase 2"},
		},
		{
			name: "an element of a list of fields that is a word",
			text: "[AWAIT_PLAYERS]\ncharacters:\n  - name: aria\n    request_type: QUICK_REACTION\n    scene_context: dark\n    just_happened: a noise\n    request: react\n  - bram\nscene_number: 5\nscene_slug: x\n",
			env:  Envelope{Sender: gm, Recipients: []Party{lead}},
			want: []string{`characters: element 2 (of 2) is "bram": each element holds fields (- name: ...)`, "~type: [AWAIT_PLAYERS] is deprecated since Phase 2"},
		},
		{
			name: "unknown tag is informal",
			text: "[GOSSIP]\n\nDid you hear?\n",
			env:  Envelope{Sender: aria, Recipients: []Party{gm}},
			want: []string{"~type: [GOSSIP] is no type of this workspace's protocol"},
		},
		{
			name: "unknown tag is refused when strict",
			text: "[GOSSIP]\n\nDid you hear?\n",
			env:  Envelope{Sender: aria, Recipients: []Party{gm}, Strict: true},
			want: []string{"type: [GOSSIP] is no type of this workspace's protocol, and strict: true refuses informal messages"},
		},
		{
			name: "a tag one swap from a type is a typo, refused",
			text: "[PLAYER_TO_MG]\ncharacter: aria\ntype: ACTION\n\nI draw my sword.\n",
			env:  Envelope{Sender: aria, Recipients: []Party{gm}},
			want: []string{"type: [PLAYER_TO_MG] is no type of this workspace's protocol; did you mean [PLAYER_TO_GM]?"},
		},
		{
			name: "a tag in the wrong case is a typo",
			text: "[narrative]\n\nThe door creaks.\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
			want: []string{"type: [narrative] is no type of this workspace's protocol; did you mean [NARRATIVE]?"},
		},
		{
			name: "unknown envelope type is refused",
			text: "---\ntype: review_summary\n---\n",
			env:  Envelope{Sender: rev, Recipients: []Party{orch}},
			want: []string{`type: "review_summary" is not a message type`},
		},
		{
			name: "an envelope type one letter off is a typo",
			text: "---\ntype: review_verdicts\n---\n",
			env:  Envelope{Sender: rev, Recipients: []Party{orch}},
			want: []string{`type: "review_verdicts" is no type of this workspace's protocol; did you mean "review_verdict"?`},
		},
		{
			name: "no type is informal",
			text: "---\nto: gm\n---\nhi\n",
			env:  Envelope{Sender: aria, Recipients: []Party{gm}},
		},
		{
			name: "hard rule",
			text: "---\ntype: review_verdict\nsignal: pass\ncritical_count: 2\nmoderate_count: 0\nminor_count: 0\nac_coverage:\n  AC1: pass\n---\n",
			env:  Envelope{Sender: rev, Recipients: []Party{orch}},
			want: []string{"signal: hard rule of review_verdict: `critical_count > 0` requires `signal: fail` (here critical_count is 2 and signal is \"pass\")"},
		},
		{
			name: "hard rule with or and a dotted path",
			text: "---\ntype: audit_verdict\nsignal: pass_with_notes\nsecurity_findings:\n  critical: 1\n  high: 0\n  medium: 0\n  low: 0\nbuild_status: pass\ntest_status: pass\n---\n",
			env:  Envelope{Sender: party("aud", "auditor"), Recipients: []Party{orch}},
			want: []string{"signal: hard rule of audit_verdict"},
		},
		{
			name: "hard rule kept",
			text: "---\ntype: audit_verdict\nsignal: fail\nsecurity_findings:\n  critical: 1\n  high: 0\n  medium: 0\n  low: 0\nbuild_status: pass\ntest_status: fail\n---\n",
			env:  Envelope{Sender: party("aud", "auditor"), Recipients: []Party{orch}},
		},
		{
			name: "map values are enumerated",
			text: "---\ntype: review_verdict\nsignal: pass\ncritical_count: 0\nmoderate_count: 0\nminor_count: 0\nac_coverage:\n  AC1: PASS\n---\n",
			env:  Envelope{Sender: rev, Recipients: []Party{orch}},
			want: []string{`ac_coverage.*: "PASS" is not one of pass, fail (values are exact: "pass", not "PASS")`},
		},
		{
			name: "structured request never broadcast",
			text: "---\ntype: shutdown_request\nreason: done\n---\n",
			env:  Envelope{Sender: lead, Recipients: []Party{gm, aria}, Broadcast: true},
			want: []string{"to: shutdown_request is a structured request and cannot be broadcast"},
		},
		{
			name: "wrong phase is a warning",
			text: "[HUMAN_DECISION]\ncharacter: aria\n",
			env:  Envelope{Sender: lead, Recipients: []Party{party("seat", "human")}, Phase: 1},
			want: []string{"~type: [HUMAN_DECISION] belongs to phase 2+, and the session is in phase 1"},
		},
		{
			name: "wrong phase refused when strict",
			text: "[HUMAN_DECISION]\ncharacter: aria\n",
			env:  Envelope{Sender: lead, Recipients: []Party{party("seat", "human")}, Phase: 1, Strict: true},
			want: []string{"type: [HUMAN_DECISION] belongs to phase 2+"},
		},
		{
			name: "agents without roles are not checked",
			text: "[NARRATIVE]\n\nRain.\n",
			env:  Envelope{Sender: party("someone"), Recipients: []Party{party("other")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, vs := set.Check(msg(t, tt.text), tt.env)
			var got []string
			for _, v := range vs {
				s := v.Error()
				if v.Warning {
					s = "~" + s
				}
				got = append(got, s)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %q, want %d violations like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("violation %d = %q, want it to start with %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCheckLines(t *testing.T) {
	set := builtinSet(t, "dnd-team")
	_, vs := set.Check(msg(t, "[GM_TO_PLAYER]\nscene_number: 5\nrequest_type: nope\nscene_slug: x\n"), Envelope{})
	if len(vs) != 1 || vs[0].Line != 3 || vs[0].Field != "request_type" {
		t.Errorf("Check = %+v, want the enum violation on line 3", vs)
	}
}

func TestDefaultRecipients(t *testing.T) {
	set := builtinSet(t, "dnd-team")
	for name, want := range map[string]struct {
		roles []string
		all   bool
	}{
		"NARRATIVE":          {[]string{"*"}, true},
		"ASK_PLAYER":         {[]string{"team-lead"}, false},
		"JOURNAL_CHECKPOINT": {[]string{"player", "human"}, true},
		"GM_TO_PLAYER":       {[]string{"player", "human"}, false},
	} {
		ty, _, _ := set.Type(name)
		roles, all := ty.DefaultRecipients()
		if d := cmp.Diff(want.roles, roles); d != "" || all != want.all {
			t.Errorf("%s: DefaultRecipients = %v, %v; want %v, %v", name, roles, all, want.roles, want.all)
		}
	}
}

func TestNewSetConflict(t *testing.T) {
	lib, err := LoadLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	dnd, _ := lib.Get("dnd-team")
	copy := Parse("other.md", []byte("---\nname: other\ndescription: x\n---\n### `[NARRATIVE]`\n\nx\n"))
	if _, err := NewSet(dnd, copy); err == nil || !strings.Contains(err.Error(), "both define [NARRATIVE]") {
		t.Errorf("NewSet with two [NARRATIVE] = %v, want a conflict", err)
	}
	if _, err := lib.Set([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `unknown skill "nope"`) {
		t.Errorf("Set(nope) = %v", err)
	}
}

func TestCheckReviewFixes(t *testing.T) {
	set := builtinSet(t, "dnd-team", "dev-pipeline")
	gm, aria := party("gm", "gm"), party("aria", "player")
	orch := party("orchestrator", "orchestrator")
	tests := []struct {
		name string
		text string
		env  Envelope
		want []string
	}{
		{
			name: "an empty required field is missing",
			text: "[GM_TO_PLAYER]\nto: aria\nrequest_type: QUICK_REACTION\nscene_number:\nscene_slug: \"\"\n",
			env:  Envelope{Sender: gm, Recipients: []Party{aria}},
			want: []string{"scene_number: empty: [GM_TO_PLAYER] requires a value", "scene_slug: empty"},
		},
		{
			name: "a value a hard rule compares must be a number",
			text: "---\ntype: review_verdict\nsignal: pass\ncritical_count: one\nmoderate_count: 0\nminor_count: 0\nac_coverage: {AC1: pass}\n---\n",
			env:  Envelope{Sender: party("rev", "reviewer"), Recipients: []Party{orch}},
			want: []string{`critical_count: "one" is not a number, and a hard rule of review_verdict compares it`},
		},
		{
			name: "any agent may signal blocked",
			text: "---\ntype: research_result\nsignal: blocked\ntopic: x\nverified: false\n---\n",
			env:  Envelope{Sender: party("res", "researcher"), Recipients: []Party{orch}},
		},
		{
			name: "addressing is not checked as values",
			text: "[NARRATOR_REQUEST]\nto: dm\nrequest: What happened?\n",
			env:  Envelope{Sender: party("nar", "narrator"), Recipients: []Party{party("dm", "gm")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, vs := set.Check(msg(t, tt.text), tt.env)
			if len(vs) != len(tt.want) {
				t.Fatalf("Check = %v, want %d violations like %q", vs, len(tt.want), tt.want)
			}
			for i, v := range vs {
				if !strings.HasPrefix(v.Error(), tt.want[i]) {
					t.Errorf("violation %d = %q, want it to start with %q", i, v.Error(), tt.want[i])
				}
			}
		})
	}
	// A protocol field named type is reported on its own line.
	_, vs := set.Check(msg(t, "[PLAYER_TO_GM]\ntype: veto\ncharacter: aria\n"), Envelope{})
	if len(vs) != 1 || vs[0].Line != 2 {
		t.Errorf("Check = %+v, want the type value on line 2", vs)
	}
}

// TestSignalTables checks that a protocol's signal tables are rules: who
// may emit each signal and to whom it goes, from a column or from the
// table's heading, for typed and informal messages alike; and that a type
// whose section names no sender gets the roles of its signals.
func TestSignalTables(t *testing.T) {
	text := "---\nname: crew\ndescription: signals\n---\n" +
		"## Signals\n\n### Crew → Boss\n\n| Signal | Meaning | Emitted by |\n|---|---|---|\n| `done` | Finished | driver, lookout |\n| `stuck` | Help | any agent |\n\n" +
		"### Boss → Crew\n\n| Signal | Meaning | Sent to |\n|---|---|---|\n| `go` | Start | driver |\n\n" +
		"## Types\n\n### report\n\n```yaml\n---\ntype: report\nsignal: done\n---\n```\n\nRequired: `type`, `signal`\n"
	sk := Parse("crew.md", []byte(text))
	if err := sk.Err(); err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(sk)
	if err != nil {
		t.Fatal(err)
	}
	report, _, _ := set.Type("report")
	if d := cmp.Diff([]string{"driver", "lookout"}, report.Senders); d != "" {
		t.Errorf("report's senders, from its signal (-want +got):\n%s", d)
	}
	boss, driver, lookout := party("boss", "boss"), party("dan", "driver"), party("lou", "lookout")
	for _, tt := range []struct {
		name string
		text string
		env  Envelope
		want string
	}{
		{"the boss says go to a driver", "---\nsignal: go\n---\n", Envelope{Sender: boss, Recipients: []Party{driver}}, ""},
		{"a driver may not say go", "---\nsignal: go\n---\n", Envelope{Sender: driver, Recipients: []Party{lookout}}, "signal: dan (role driver) may not emit go: it is emitted by boss (crew.md:"},
		{"go is sent to drivers only", "---\nsignal: go\n---\n", Envelope{Sender: boss, Recipients: []Party{lookout}}, "signal: go is sent to driver, not to lou (role lookout)"},
		{"anyone may be stuck", "---\nsignal: stuck\n---\n", Envelope{Sender: lookout, Recipients: []Party{boss}}, ""},
		{"the boss may not report done", "---\ntype: report\nsignal: done\n---\n", Envelope{Sender: boss, Recipients: []Party{boss}}, "signal: boss (role boss) may not emit done"},
		{"an unknown signal is not judged here", "---\nsignal: whatever\n---\n", Envelope{Sender: driver, Recipients: []Party{boss}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mailbox.Parse([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			_, vs := set.Check(m, tt.env)
			var got []string
			for _, v := range vs {
				if !v.Warning {
					got = append(got, v.Error())
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("violations %q, want none", got)
			case tt.want != "" && (len(got) == 0 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("violations %q, want the first to start with %q", got, tt.want)
			}
		})
	}
}

// TestSignalTableColumnNames checks the names a signal table's sender
// and recipient columns go by: "Sent by" and "From" are read as "Emitted
// by", "To" as "Sent to".
func TestSignalTableColumnNames(t *testing.T) {
	for _, cols := range [][2]string{{"Emitted by", "Sent to"}, {"Sent by", "Recipient"}, {"From", "To"}, {"Sender", "Sent to"}} {
		text := "---\nname: crew\ndescription: signals\n---\n" +
			"## Signals\n\n| Signal | Meaning | " + cols[0] + " | " + cols[1] + " |\n|---|---|---|---|\n| `done` | Finished | driver | boss |\n\n" +
			"## Types\n\n### report\n\n```yaml\n---\ntype: report\nsignal: done\n---\n```\n\nRequired: `type`, `signal`\n"
		sk := Parse("crew.md", []byte(text))
		if err := sk.Err(); err != nil {
			t.Fatal(err)
		}
		set, err := NewSet(sk)
		if err != nil {
			t.Fatal(err)
		}
		report, _, _ := set.Type("report")
		if d := cmp.Diff([]string{"driver"}, report.Senders); d != "" {
			t.Errorf("columns %q: report's senders (-want +got):\n%s", cols, d)
		}
		if d := cmp.Diff([]string{"boss"}, report.Recipients); d != "" {
			t.Errorf("columns %q: report's recipients (-want +got):\n%s", cols, d)
		}
	}
}
