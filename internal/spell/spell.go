// Package spell finds the name a misspelt word was meant to be: the
// commands of the CLI, the message types of a protocol.
package spell

import "strings"

// Distance is the number of edits (a letter inserted, removed or changed,
// or two neighbours swapped) that turn a into b.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before last is needed for swaps.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Nearest returns the candidate closest to word, when it is at most max
// edits away and no other candidate is as close; "" when there is none.
// Case is not counted: a word written in the wrong case is the nearest
// to its right spelling.
func Nearest(word string, candidates []string, max int) string {
	best, bestDist, tie := "", max+1, false
	lower := strings.ToLower(word)
	for _, c := range candidates {
		if c == word {
			continue
		}
		switch d := Distance(lower, strings.ToLower(c)); {
		case d < bestDist:
			best, bestDist, tie = c, d, false
		case d == bestDist:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}
