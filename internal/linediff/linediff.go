// Package linediff tells what changed between two texts, line by line,
// for tests that assert a file changed in exactly the expected lines.
package linediff

// Lines returns the lines of a missing from b ("-" and the line) and the
// lines of b missing from a ("+" and the line), in order, from a longest
// common subsequence. Callers split the texts as they need: with
// strings.SplitAfter to see line endings, with strings.Split not to.
func Lines(a, b []string) []string {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
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
		case i < n && j < m && a[i] == b[j]:
			i++
			j++
		case i < n && (j == m || l[i+1][j] >= l[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}
