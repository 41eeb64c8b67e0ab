package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-dev/parley/mailbox"
)

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       *Accepts
	}{
		{"types and signals", "accepts: {types: [GM_TO_PLAYER, '[NARRATIVE]'], signals: review}", &Accepts{Types: []string{"GM_TO_PLAYER", "NARRATIVE"}, Signals: []string{"review"}}},
		{"a list is types", "accepts: [GM_TO_PLAYER]", &Accepts{Types: []string{"GM_TO_PLAYER"}}},
		{"signals alone", "accepts:\n      signals: [review, fail]", &Accepts{Signals: []string{"review", "fail"}}},
		{"none", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("parley.yaml", []byte("agents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    "+tt.yaml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Agents[0].Accepts
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Accepts{}), cmpopts.IgnoreFields(Accepts{}, "Line", "Key")); d != "" {
				t.Errorf("accepts (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseAcceptsErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "accepts: {type: [NARRATIVE]}", "parley.yaml:5: agents[0].accepts.type: unknown key (did you mean types?)"},
		{"a number", "accepts: 3", "parley.yaml:5: agents[0].accepts: expected a list of message types, or types: and signals:"},
		{"nothing", "accepts: []", "parley.yaml:5: agents[0].accepts: accepts nothing"},
		{"nested list", "accepts: {types: [[A]]}", "parley.yaml:5: agents[0].accepts.types: expected a word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("parley.yaml", []byte("agents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    "+tt.yaml+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("ParseConfig = %v, want %s", err, tt.want)
			}
		})
	}
	_, err := ParseConfig("parley.yaml", []byte("agents:\n  - name: aria\n    accepts: [NARRATIVE]\n"))
	if want := "parley.yaml:2: agents[0].accepts: a human agent is never woken"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ParseConfig (a human agent) = %v, want %s", err, want)
	}
}

// TestAcceptsAgainstSkills: a type or signal the workspace's skills do
// not define, in accepts:, stop_on: or timeouts:, is an error naming the file, the line and the key, given
// where the protocol is read (the runner's start, a reload, a command).
func TestAcceptsAgainstSkills(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"known", "skills: [dnd-team]\nagents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    accepts: [GM_TO_PLAYER, NARRATIVE]\n", ""},
		{"unknown type", "skills: [dnd-team]\nagents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    accepts:\n      types: [GM_TO_PLAYER, NARATIVE]\n", `parley.yaml:7: agents[0].accepts.types: "NARATIVE" is no message type of the skills dnd-team`},
		{"unknown signal", "skills: [dev-pipeline]\nagents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    accepts:\n      signals:\n        - review\n        - approve\n", `parley.yaml:9: agents[0].accepts.signals: "approve" is no signal of the skills dev-pipeline`},
		{"no skills: nothing to check", "agents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    accepts: [ANYTHING]\n", ""},
		{"near type", "skills: [dnd-team]\nagents:\n  - name: bot\n    driver: command\n    run: [./bot]\n    accepts: [NARATIVE]\n", `parley.yaml:6: agents[0].accepts.types: "NARATIVE" is no message type of the skills dnd-team (did you mean NARRATIVE?)`},
		// stop_on: and the types of timeouts: are checked as accepts: is:
		// a misspelt one would never match, without a word.
		{"stop_on", "skills: [dnd-team]\nagents: [gm]\nstop_on:\n  - SESSION_END\n  - SESSION_ENDS\n", `parley.yaml:5: stop_on: "SESSION_ENDS" is no message type of the skills dnd-team (did you mean SESSION_END?)`},
		{"stop_on bracketed", "skills: [dnd-team]\nagents: [gm]\nstop_on: ['[SESSION_END]']\n", ""},
		{"stop_on unbracketed scalar", "skills: [dnd-team]\nagents: [gm]\nstop_on: SESSION_END\n", ""},
		{"stop_on far", "skills: [dnd-team]\nagents: [gm]\nstop_on: [THE_END]\n", `parley.yaml:3: stop_on: "THE_END" is no message type of the skills dnd-team (types: ASK_PLAYER, `},
		{"timeouts", "skills: [dnd-team]\nagents: [gm]\ntimeouts:\n  - match: {type: GM_TO_PLAYER}\n    after: 1m\n  - match:\n      type: [DICE_RESULT, '[PLAYER_ACTON]']\n    after: 1m\n", `parley.yaml:7: timeouts[1].match.type: "PLAYER_ACTON" is no message type of the skills dnd-team (did you mean PLAYER_ACTION?)`},
		{"several", "skills: [dnd-team]\nagents: [gm]\nstop_on: [SESSION_ENDS]\ntimeouts:\n  - match: {type: GM_TO_PLAYR}\n    after: 1m\n", "parley.yaml:3: stop_on: \"SESSION_ENDS\" is no message type of the skills dnd-team (did you mean SESSION_END?)\nparley.yaml:5: timeouts[0].match.type: \"GM_TO_PLAYR\""},
		{"no skills: stop_on unchecked", "agents: [gm]\nstop_on: [TEAM_DONE]\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			ws, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ws.Protocol()
			want := tt.want
			if (err == nil) != (want == "") || err != nil && !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Protocol() = %v, want %q", err, want)
			}
		})
	}
}

func TestAcceptsWakes(t *testing.T) {
	ac := &Accepts{Types: []string{"GM_TO_PLAYER"}, Signals: []string{"review"}}
	tests := []struct {
		msg  string
		want bool
	}{
		{"---\ntype: GM_TO_PLAYER\n---\nhi\n", true},
		{"[NARRATIVE]\nThe door opens.\n", false},
		{"---\ntype: REVIEW_REQUEST\nsignal: review\n---\n", true},
		{"---\nsignal: pass\n---\n", false},
		{"---\nfrom: gm\n---\nplain\n", false},
		{"---\ntype: shutdown_request\nrequest_id: r1\n---\n", true},
	}
	for _, tt := range tests {
		m, err := mailbox.Parse([]byte(tt.msg))
		if err != nil {
			t.Fatal(err)
		}
		if got := ac.Wakes(m); got != tt.want {
			t.Errorf("Wakes(%q) = %v, want %v", tt.msg, got, tt.want)
		}
		if !(*Accepts)(nil).Wakes(m) {
			t.Errorf("nil Accepts: Wakes(%q) = false, want true", tt.msg)
		}
	}
}
