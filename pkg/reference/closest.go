package reference

import (
	"cmp"
	"slices"
	"strings"
)

// Closest picks from names (store names, installed add-ons) those that
// look like name, for a "did you mean": closest first, other tags of the
// same repository, then names within a few edits (a typo), at most
// three; never a signature's or attestation's tag (Attachment).
func Closest(name string, names []string) []string {
	type cand struct {
		name string
		dist int
	}
	repo := Repository(name)
	var cs []cand
	for _, n := range names {
		if _, attached := Attachment(n); n == name || attached {
			continue // a signature's tag is no add-on to suggest
		}
		d := editDistance(name, n)
		switch {
		case Repository(n) == repo:
			d = -2 // another tag of the same add-on comes first
		case lastSegment(Repository(n)) == lastSegment(repo):
			d = -1 // then the same add-on under a registry name
		case d > max(2, len(name)/3):
			continue
		}
		cs = append(cs, cand{n, d})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cs[:min(len(cs), 3)] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, by bytes.
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

// lastSegment is the last path component of a repository name.
func lastSegment(repo string) string { return repo[strings.LastIndexByte(repo, '/')+1:] }
