package sheet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// lineDiff returns the lines of a missing from b ("-line") and the lines
// of b missing from a ("+line"), in order, from a longest common
// subsequence of lines.
func lineDiff(a, b string) []string {
	x, y := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	n, m := len(x), len(y)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			i++
			j++
		case i < n && (j == m || l[i+1][j] >= l[i][j+1]):
			out = append(out, "-"+x[i])
			i++
		default:
			out = append(out, "+"+y[j])
			j++
		}
	}
	return out
}
