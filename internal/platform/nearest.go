package platform

// Nearest returns the candidate within two edits of word (a swapped pair
// is two), the closest and then the first on a tie, or "" when none is
// that close: the "did you mean" of a mistyped name. It lives here, beside
// its first user (suggest, for a mistyped platform), because every user
// already imports platform: the command's flag hint (flagHint) takes it
// from here rather than from a package of its own, which would be the
// command's seventh import (internal/depcheck's commandImports).
func Nearest(word string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
