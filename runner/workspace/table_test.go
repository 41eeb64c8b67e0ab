package workspace

import (
	"os"
	"path/filepath"
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
