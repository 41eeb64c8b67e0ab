package spell

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"PLAYER_TO_GM", "PLAYER_TO_GM", 0},
		{"PLAYER_TO_MG", "PLAYER_TO_GM", 1}, // neighbours swapped
		{"PLAYR_TO_GM", "PLAYER_TO_GM", 1},
		{"NARATIVE", "NARRATIVE", 1},
		{"ASK_PLAYRE", "ASK_PLAYER", 1},
		{"kitten", "sitting", 3},
		{"inbxo", "inbox", 1},
		{"héros", "heros", 1}, // letters, not bytes
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	types := []string{"PLAYER_TO_GM", "GM_TO_PLAYER", "NARRATIVE", "VETO", "NOTE"}
	for _, tt := range []struct {
		word string
		max  int
		want string
	}{
		{"PLAYER_TO_MG", 2, "PLAYER_TO_GM"},
		{"NARATIVE", 2, "NARRATIVE"},
		{"PLAYER_TO_GM", 2, ""}, // the word itself is no typo
		{"BANTER", 2, ""},
		{"player_to_gm", 1, "PLAYER_TO_GM"}, // the wrong case
		{"VOTE", 1, "NOTE"},
		{"VETOO", 1, "VETO"},
		{"GM_TO_PLAYRS", 1, ""}, // two edits, one allowed
	} {
		if got := Nearest(tt.word, types, tt.max); got != tt.want {
			t.Errorf("Nearest(%q, max %d) = %q, want %q", tt.word, tt.max, got, tt.want)
		}
	}
	if got := Nearest("HAT", []string{"CAT", "BAT"}, 1); got != "" {
		t.Errorf("Nearest(HAT) among CAT and BAT = %q, want no guess", got)
	}
}
