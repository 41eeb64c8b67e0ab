package sheet

import "testing"

func TestLooks(t *testing.T) {
	for text, want := range map[string]bool{
		"# Tilda\n\n| | |\n|---|---|\n| **Hit Points** | 8/8 |\n":               true,
		"**Hit Points**: 8/8\n":                                                 true,
		"# Tilda Brannock\n\n## Equipment\n- Dagger\n":                          true,
		"---\nhp: 8\nmax_hp: 8\n---\n":                                          true,
		"| STR | DEX |\n|---|---|\n| 8 | 14 |\n":                                true,
		"# Appearance briefs\n\n- Tilda: short, soot-streaked\n":                false,
		"# Relationships\n\nTilda trusts Corwin; at her level best she lies.\n": false,
		"": false,
	} {
		if got := Looks([]byte(text)); got != want {
			t.Errorf("Looks(%q) = %v, want %v", text, got, want)
		}
	}
}
