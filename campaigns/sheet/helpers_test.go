package sheet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-dev/parley/internal/linediff"
)

// fixtureDir holds the real-world sheets of the-rot-beneath, shared with
// the repository but not part of it.
var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures", "campaigns", "the-rot-beneath", "party")

// fixtures returns the paths of the fixture sheets, skipping the test
// when they are absent.
func fixtures(tb testing.TB) []string {
	tb.Helper()
	paths, _ := filepath.Glob(filepath.Join(fixtureDir, "*.md"))
	if len(paths) == 0 {
		tb.Skipf("no fixture sheets in %s", fixtureDir)
	}
	return paths
}

// copyTo copies a file into dir and returns the copy's path.
func copyTo(tb testing.TB, src, dir string) string {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// lineDiff returns the lines changed from a to b (see linediff.Lines).
func lineDiff(a, b string) []string {
	return linediff.Lines(strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n"))
}

// errText compares errors by what they say: two readings of one sheet
// note the same Invalid as different values.
var errText = cmp.Comparer(func(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
})
