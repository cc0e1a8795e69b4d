// Package textdiff writes unified diffs of texts, for every command that
// shows one (the rendered diff of two add-ons, the cluster diff).
package textdiff

import (
	"fmt"
	"slices"
	"strings"
)

// opKind is one line of an edit script.
type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

type edit struct {
	kind opKind
	line string
}

// Unified returns a unified diff from a to b (texts split at newlines)
// with context lines around each change, headed "--- fromName" and
// "+++ toName"; empty when they are equal. A last line without a newline
// is marked "\ No newline at end of file", as diff(1) does.
//
// The edit script is hand-written (Myers' algorithm, below) because none
// of the libraries at hand does all of: a shortest edit script, a cost
// bounded by a count rather than a clock, and unified output:
//   - github.com/sergi/go-diff (already in the module graph through
//     go-git) finds a shortest script, but bounds its work only by a
//     wall-clock DiffTimeout, so what it prints would depend on the
//     machine's load; without the timeout its cost has no bound (two
//     unrelated objects of 40,000 lines took 13 s). Its patch text is
//     character-based and URL-escaped, not a unified diff.
//   - github.com/pmezard/go-difflib (no release since v1.0.0) writes
//     unified diffs, but its SequenceMatcher is not a shortest script
//     (longer than the shortest on 827 of 2,000 random line pairs of
//     TestEditScriptRandom's kind) and it never marks a missing final
//     newline.
//   - github.com/hexops/gotextdiff is a copy of a package gopls keeps
//     internal, taking no changes of its own (its README sends them
//     upstream): no package to keep up with.
func Unified(fromName, toName, a, b string, context int) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	edits := editScript(la, lb)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Walk the script, cutting it into hunks: runs of changes with at most
	// 2*context equal lines between them, plus context on each side.
	i := 0
	for i < len(edits) {
		for i < len(edits) && edits[i].kind == opEqual {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(i-context, 0)
		end := i
		for end < len(edits) {
			if edits[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(edits) && edits[run].kind == opEqual {
				run++
			}
			if run == len(edits) || run-end > 2*context {
				end = min(end+context, len(edits))
				break
			}
			end = run
		}
		writeHunk(&out, edits, start, end)
		i = end
	}
	return out.String()
}

// writeHunk writes edits[start:end] with its @@ header.
func writeHunk(out *strings.Builder, edits []edit, start, end int) {
	// Line numbers where the hunk starts in a and b.
	aLine, bLine := 0, 0
	for _, e := range edits[:start] {
		if e.kind != opInsert {
			aLine++
		}
		if e.kind != opDelete {
			bLine++
		}
	}
	aLen, bLen := 0, 0
	for _, e := range edits[start:end] {
		if e.kind != opInsert {
			aLen++
		}
		if e.kind != opDelete {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aLine, aLen), hunkRange(bLine, bLen))
	for _, e := range edits[start:end] {
		out.WriteByte(byte(e.kind))
		out.WriteString(e.line)
		if !strings.HasSuffix(e.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a range as unified diffs do: "start,len", "start"
// for one line, and the line before for an empty range.
func hunkRange(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// splitLines splits s after each newline, keeping them.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// editScript is a shortest edit script from a to b, by Myers' O(ND)
// algorithm. The common prefix and suffix are taken off first, and only
// the diagonals reached at each step are kept, so the memory is O(D²).
func editScript(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, edit{opEqual, l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{opEqual, l})
	}
	groupChanges(out)
	return out
}

// groupChanges puts the deletions of each run of changes before its
// insertions, as diff(1) prints them.
func groupChanges(edits []edit) {
	for i := 0; i < len(edits); {
		if edits[i].kind == opEqual {
			i++
			continue
		}
		j := i
		for j < len(edits) && edits[j].kind != opEqual {
			j++
		}
		run := edits[i:j]
		slices.SortStableFunc(run, func(x, y edit) int {
			if x.kind == y.kind {
				return 0
			}
			if x.kind == opDelete {
				return -1
			}
			return 1
		})
		i = j
	}
}

// maxEdits bounds the search for a shortest script: beyond it (two
// objects with little in common) the whole of a is deleted and the whole
// of b inserted, still a correct diff. It bounds the trace to about
// maxEdits² int32s (16 MB): the lines of a text diffed are fewer than
// 2³¹ (diff's objects are capped far below that).
const maxEdits = 2000

func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[k] for k in [-d, d] after step d, at index k+d.
	var trace [][]int32
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
			}
		}
		snap := make([]int32, 2*d+1)
		for i, x := range v[off-d : off+d+1] {
			snap[i] = int32(x)
		}
		trace = append(trace, snap)
	}

	if found < 0 {
		out := make([]edit, 0, n+m)
		for _, l := range a {
			out = append(out, edit{opDelete, l})
		}
		for _, l := range b {
			out = append(out, edit{opInsert, l})
		}
		return out
	}

	// Walk back from (n, m), collecting the script in reverse.
	rev := make([]edit, 0, n+m)
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1 // came down: an insertion of b[py]
		} else {
			pk = k - 1 // came right: a deletion of a[px]
		}
		px := at(pk)
		py := px - pk
		sx, sy := px, py+1
		if pk == k-1 {
			sx, sy = px+1, py
		}
		for x > sx && y > sy {
			x--
			y--
			rev = append(rev, edit{opEqual, a[x]})
		}
		if pk == k+1 {
			rev = append(rev, edit{opInsert, b[py]})
		} else {
			rev = append(rev, edit{opDelete, a[px]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, edit{opEqual, a[x]})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
