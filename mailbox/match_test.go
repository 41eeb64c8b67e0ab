package mailbox

import (
	"regexp"
	"testing"
	"time"
)

// The patterns the hand-written readers of id.go and message.go match,
// as regular expressions: the reference they are tested against.
var (
	idReference        = regexp.MustCompile(`^(\d{8}-\d{6}\.\d{6}Z)-([a-z0-9]+(?:-[a-z0-9]+)*)-([0-9a-f]{6})$`)
	nameReference      = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	plainReference     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	timestampReference = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
)

var matcherSeeds = []string{
	"", "-", "a", "a-", "-a", "a--b", "team-lead", "Alice", "gm2", "a_b",
	"20261121-101500.123456Z-alice-3fa9c2",
	"20261121-101500.123456Z-team-lead-3fa9c2",
	"20261121-101500.123456Z-alice-3fa9c",
	"20261121-101500.123456Z-alice-3FA9C2",
	"20261121-101500.123456Z--3fa9c2",
	"20261121-101500.123456Z-a--b-3fa9c2",
	"20261121-101500.123456Z-alice-3fa9c2\n",
	"20261321-101500.123456Z-alice-3fa9c2",
	"20260230-101500.123456Z-alice-3fa9c2",
	"20240229-101500.123456Z-alice-3fa9c2",
	"20261121-246000.000000Z-alice-000000",
	"20261121-235960.000000Z-alice-000000",
	"20261121-236000.000000Z-alice-000000",
	"00000000-000000.000000Z-a-000000",
	"20261121x101500.123456Z-alice-3fa9c2",
	"2026-11-21T10:15:00Z", "2026-11-21T10:15:00.5Z", "2026-11-21T10:15:00.Z",
	"2026-11-21T10:15:00+01:00", "2026-11-21T10:15:00-0100", "2026-11-21T10:15:00",
	"2026-11-21T10:15:00.123+01:00", "2026-11-21 10:15:00Z",
	"v1.2+build", "1e3", "x.y_z", ".hidden", "a b", "é",
}

func checkMatchers(t *testing.T, s string) {
	if got, want := IsID(s), idReference.MatchString(s); got != want {
		t.Errorf("IsID(%q) = %v, the pattern says %v", s, got, want)
	}
	if got, want := isName(s), nameReference.MatchString(s); got != want {
		t.Errorf("isName(%q) = %v, the pattern says %v", s, got, want)
	}
	if got, want := isPlainToken(s), plainReference.MatchString(s); got != want {
		t.Errorf("isPlainToken(%q) = %v, the pattern says %v", s, got, want)
	}
	if got, want := isTimestamp(s), timestampReference.MatchString(s); got != want {
		t.Errorf("isTimestamp(%q) = %v, the pattern says %v", s, got, want)
	}
	m := idReference.FindStringSubmatch(s)
	sent, from, err := ParseID(s)
	if m == nil {
		if err == nil {
			t.Errorf("ParseID(%q) read an id the pattern refuses", s)
		}
		return
	}
	want, werr := time.Parse(idTimeLayout, m[1])
	if (err == nil) != (werr == nil) {
		t.Fatalf("ParseID(%q): error %v, time.Parse: error %v", s, err, werr)
	}
	if err == nil && (!sent.Equal(want) || from != m[2]) {
		t.Errorf("ParseID(%q) = %v, %q; want %v, %q", s, sent, from, want, m[2])
	}
}

func TestMatchersAgreeWithTheirPatterns(t *testing.T) {
	for _, s := range matcherSeeds {
		checkMatchers(t, s)
	}
}

func FuzzMatchers(f *testing.F) {
	for _, s := range matcherSeeds {
		f.Add(s)
	}
	f.Fuzz(checkMatchers)
}
