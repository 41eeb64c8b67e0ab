package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAtTable: a workspace is a D&D table when it has a campaign (the
// one parley.yaml names, else its only one) and a team lead, whatever
// else it has. The web view decided it twice, in two ways.
func TestAtTable(t *testing.T) {
	lead := "agents: [gm, {name: lead, role: team-lead}, you]\n"
	for _, tc := range []struct {
		name      string
		config    string
		campaigns []string
		want      bool
	}{
		{"a campaign and a team lead", lead, []string{"the-hollow"}, true},
		{"the campaign parley.yaml names", "campaign: the-hollow\n" + lead, []string{"the-hollow", "other"}, true},
		{"a campaign parley.yaml names that is missing", "campaign: gone\n" + lead, []string{"the-hollow"}, false},
		{"two campaigns, none named", lead, []string{"the-hollow", "other"}, false},
		{"no campaign", lead, nil, false},
		{"no team lead", "agents: [gm, you]\n", []string{"the-hollow"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := InitConfig(t.TempDir(), tc.config)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.campaigns {
				if err := os.MkdirAll(filepath.Join(ws.Root, CampaignsDir, c), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := ws.AtTable(); got != tc.want {
				t.Errorf("AtTable() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnknownCharacters: an agent's character: that names no sheet of
// the party of the campaign the agents play in is said, with the sheet
// meant; a workspace without a campaign, or with a party with no sheet
// yet, has nothing to compare with.
func TestUnknownCharacters(t *testing.T) {
	const config = "campaign: c1\nagents:\n  - gm\n  - name: tilda\n    character: tilda-branock\n  - {name: corwin, character: corwin-voss}\n"
	for _, tc := range []struct {
		name   string
		sheets []string // in campaigns/c1/party/; nil: no campaign
		want   string
	}{
		{"misspelt", []string{"tilda-brannock", "corwin-voss"}, `parley.yaml:5: agents[1].character: campaign c1 has no sheet of "tilda-branock" (did you mean tilda-brannock?): tilda plays a character nobody has a sheet of (campaigns/c1/party/tilda-branock.md)`},
		{"none near", []string{"grimjaw-ironforge", "corwin-voss"}, `parley.yaml:5: agents[1].character: campaign c1 has no sheet of "tilda-branock" (sheets: corwin-voss, grimjaw-ironforge): `},
		{"there", []string{"tilda-branock", "corwin-voss"}, ""},
		{"no sheet yet", []string{}, ""},
		{"no campaign", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := InitConfig(t.TempDir(), config)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sheets != nil {
				party := filepath.Join(ws.Root, CampaignsDir, "c1", "party")
				if err := os.MkdirAll(party, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, c := range tc.sheets {
					if err := os.WriteFile(filepath.Join(party, c+".md"), []byte("# "+c+"\n\n| **Hit Points** | 8/8 |\n| **Level** | 1 |\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var got []string
			for _, u := range ws.UnknownCharacters() {
				got = append(got, u.String())
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("UnknownCharacters() = %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("UnknownCharacters() = %q, want one starting %q", got, tc.want)
			}
		})
	}
}

// TestUnjournaled: an AI player (a program that plays a character) at a
// table with a team lead whose accepts: leave out [JOURNAL_CHECKPOINT]
// is warned of: the lead's checkpoint would be kept as context and its
// journal never written.
func TestUnjournaled(t *testing.T) {
	const head = "skills: [dnd-team]\nagents:\n  - gm\n"
	const lead = "  - {name: lead, role: team-lead}\n"
	player := func(accepts string) string {
		return "  - name: tilda\n    role: player\n    character: tilda-brannock\n    driver: command\n    run: [./p]\n" + accepts
	}
	for _, tc := range []struct {
		name, config, want string
	}{
		{"left out", head + lead + player("    accepts: [GM_TO_PLAYER]\n"), "parley.yaml:10: agents[2].accepts: tilda plays tilda-brannock and does not accept [JOURNAL_CHECKPOINT]: "},
		{"accepted", head + lead + player("    accepts: [GM_TO_PLAYER, JOURNAL_CHECKPOINT]\n"), ""},
		{"bracketed", head + lead + player("    accepts: [GM_TO_PLAYER, '[JOURNAL_CHECKPOINT]']\n"), ""},
		{"every message", head + lead + player(""), ""},
		{"no team lead", head + player("    accepts: [GM_TO_PLAYER]\n"), ""},
		// A review: the warning picked players by character: and the
		// team lead picks them by role (TablePlayers): a player with no
		// character: was never warned, and an agent with a character
		// and no player role was warned for nothing.
		{"a player with no character", head + lead + "  - {name: bot, role: player, driver: command, run: [./p], accepts: [GM_TO_PLAYER]}\n", "parley.yaml:5: agents[2].accepts: bot, a player, does not accept [JOURNAL_CHECKPOINT]: "},
		{"a character, no player", head + lead + "  - {name: bot, role: narrator, character: tilda-brannock, driver: command, run: [./p], accepts: [GM_TO_PLAYER]}\n", ""},
		{"a person", head + lead + "  - {name: you, role: human, character: corwin-voss}\n", ""},
		{"no such type", "skills: [dev-pipeline]\nagents:\n  - {name: lead, role: team-lead}\n  - {name: tilda, character: tilda-brannock, driver: command, run: [./p], accepts: [task_assignment]}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := InitConfig(t.TempDir(), tc.config)
			if err != nil {
				t.Fatal(err)
			}
			protocol, err := ws.Protocol()
			if err != nil {
				t.Fatal(err)
			}
			got := ws.Unjournaled(protocol)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("Unjournaled() = %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("Unjournaled() = %q, want one starting %q", got, tc.want)
			}
		})
	}
}
