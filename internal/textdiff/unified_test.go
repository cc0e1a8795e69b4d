package textdiff

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n15\n16\n"
	want := `--- a/x
+++ b/x
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -11,5 +11,5 @@
 11
 12
 13
-14
 15
+16
`
	if got := Unified("a/x", "b/x", a, b, 3); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Changes close together share a hunk.
	b2 := "1\n2\n3\nfour\n5\n6\n7\n8\nnine\n10\n11\n12\n13\n14\n15\n"
	want2 := `--- a
+++ b
@@ -1,12 +1,12 @@
 1
 2
 3
-4
+four
 5
 6
 7
 8
-9
+nine
 10
 11
 12
`
	if got := Unified("a", "b", a, b2, 3); got != want2 {
		t.Errorf("got\n%s\nwant\n%s", got, want2)
	}
	if got := Unified("a", "b", "", "x\n", 3); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("from empty: %q", got)
	}
	if got := Unified("a", "b", "x\n", "x\n", 3); got != "" {
		t.Errorf("equal: %q", got)
	}
	if got := Unified("a", "b", "x", "y", 3); got != "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n" {
		t.Errorf("no newline: %q", got)
	}
}

// The edit script turns a into b with as few changes as a longest common
// subsequence allows, and applying the unified diff to a gives b.
func TestEditScriptRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(rng.IntN(4)) + "\n"
		}
		return out
	}
	for iter := range 2000 {
		a, b := gen(rng.IntN(30)), gen(rng.IntN(30))
		script := editScript(a, b)
		var ga, gb []string
		changes := 0
		for _, e := range script {
			if e.kind != opInsert {
				ga = append(ga, e.line)
			}
			if e.kind != opDelete {
				gb = append(gb, e.line)
			}
			if e.kind != opEqual {
				changes++
			}
		}
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("%d: script does not turn %q into %q", iter, a, b)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Fatalf("%d: %d changes, want %d", iter, changes, want)
		}
		sa, sb := strings.Join(a, ""), strings.Join(b, "")
		if got := applyUnified(t, sa, Unified("a", "b", sa, sb, rng.IntN(4))); got != sb {
			t.Fatalf("%d: patching %q gives %q, want %q", iter, sa, got, sb)
		}
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// applyUnified applies a unified diff (as Unified writes it) to a.
func applyUnified(t *testing.T, a, patch string) string {
	t.Helper()
	if patch == "" {
		return a
	}
	src := splitLines(a)
	lines := splitLines(patch)[2:]
	var out []string
	pos := 0
	for i := 0; i < len(lines); {
		var as, al, bs, bl int
		h := strings.TrimSuffix(lines[i], "\n")
		parse := func(s string) (int, int) {
			start, n, ok := strings.Cut(s, ",")
			st, _ := strconv.Atoi(start)
			if !ok {
				return st, 1
			}
			ln, _ := strconv.Atoi(n)
			return st, ln
		}
		f := strings.Fields(h)
		as, al = parse(strings.TrimPrefix(f[1], "-"))
		bs, bl = parse(strings.TrimPrefix(f[2], "+"))
		_, _ = bs, bl
		first := as - 1
		if al == 0 {
			first = as
		}
		out = append(out, src[pos:first]...)
		pos = first
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			switch l[0] {
			case ' ':
				if src[pos] != l[1:] {
					t.Fatalf("context %q does not match %q", l[1:], src[pos])
				}
				out = append(out, src[pos])
				pos++
			case '-':
				pos++
			case '+':
				out = append(out, l[1:])
			}
			i++
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

// Two long texts with nothing in common diff correctly, and the search
// for a shortest script stops at maxEdits (a count, not a clock): past it
// the whole of a is deleted and the whole of b inserted.
func TestUnifiedLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	u := Unified("a", "b", a.String(), b.String(), 3)
	if got := applyUnified(t, a.String(), u); got != b.String() {
		t.Error("the diff does not apply")
	}
	if want := "--- a\n+++ b\n@@ -1,20000 +1,20000 @@\n"; !strings.HasPrefix(u, want) {
		t.Errorf("diff starts %.80q, want one hunk %q", u, want)
	}
	// Past the bound, the script is all deletions then all insertions
	// after the common first line, though one half as long exists (every
	// other line is common).
	la, lc := splitLines(a.String()), splitLines(a.String())
	for i := range lc {
		if i%2 == 1 {
			lc[i] = "c\n"
		}
	}
	script := editScript(la, lc)
	n := len(la)
	if len(script) != 2*n-1 || script[0].kind != opEqual || script[1].kind != opDelete || script[n].kind != opInsert {
		t.Errorf("over maxEdits: %d edits (%q, %q, %q), want 1 equal, %d deletions, %d insertions", len(script), script[0].kind, script[1].kind, script[n].kind, n-1, n-1)
	}
	// Within the bound, a shortest one.
	small := la[:maxEdits/2]
	smallC := lc[:maxEdits/2]
	changes := 0
	for _, e := range editScript(small, smallC) {
		if e.kind != opEqual {
			changes++
		}
	}
	if changes != 2*(len(small)/2) {
		t.Errorf("within maxEdits: %d changes, want %d", changes, 2*(len(small)/2))
	}
	// A few changes in a long text stay minimal.
	lines := strings.SplitAfter(a.String(), "\n")
	lines[100], lines[15000] = "x\n", "y\n"
	u = Unified("a", "b", a.String(), strings.Join(lines, ""), 3)
	if strings.Count(u, "\n-") != 2 || strings.Count(u, "\n+") != 1+2 {
		t.Errorf("not minimal:\n%s", u)
	}
}
