package mailbox

import "testing"

var readsAsStringSeeds = []string{
	"gm", "Inf", "INFINITY", "nan", "NaN", "n", "Y", "on", "Off", "null", "i_nf", "in_f",
	"20261127-050000-123-gm", "2026-11-27T05:00:00Z", "2026-11-27T05:00:00+01:00",
	"1e-5", "1E+5", "1e_-5", "1_e-5", "0x1p-2", "0x1P+2", "0x1e-5", "1-2", "+1", "-1", "-inf", "+Inf",
	"1_000", "_1", "0b101", "0o17", "0x_ff", "1.5", ".5", "5.", "1:30", "v1.2.3", "a-1", "e-1",
	"rules_question", "PLAYER_ACTION", "1st", "12abc", "--", "+-1", "1e+-5", "yeſ", "faLSE", "NULL", "ınf",
}

func TestReadsAsStringAgreesWithParsing(t *testing.T) {
	for _, v := range readsAsStringSeeds {
		if got, want := readsAsString(v), parsesAsString(v); got != want {
			t.Errorf("readsAsString(%q) = %v, parsing says %v", v, got, want)
		}
	}
}

func FuzzReadsAsString(f *testing.F) {
	for _, v := range readsAsStringSeeds {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := readsAsString(v), parsesAsString(v); got != want {
			t.Errorf("readsAsString(%q) = %v, parsing says %v", v, got, want)
		}
	})
}
