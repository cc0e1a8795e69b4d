package ignore

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// goGitMatch is what go-git's matcher, which addonpkg used before its
// own, says of lines over Defaults. Only this test imports go-git.
func goGitMatch(lines []string, path string, isDir bool) bool {
	var ps []gitignore.Pattern
	for _, d := range Defaults {
		ps = append(ps, gitignore.ParsePattern(d, nil))
	}
	for _, l := range lines {
		ps = append(ps, gitignore.ParsePattern(l, nil))
	}
	return gitignore.NewMatcher(ps).Match(strings.Split(path, "/"), isDir)
}

func ownMatch(lines []string, path string, isDir bool) bool {
	m, err := Parse([]byte(strings.Join(lines, "\n")))
	if err != nil {
		panic(err)
	}
	return m.Match(path, isDir)
}

var (
	diffRules = []string{
		"*.txt", "!keep.txt", "build/", "/rootonly.yaml", "a/b", "a/*/c", "a/**/c", "**/c", "a/**",
		"**", "/**", "**/", "a/**/", "x**y/z", "a//b", "/a/", "[a-c]?.yaml", "[", "\\!bang", "escaped\\ ",
		"sub/", "!sub/", "!sub/keep.yaml", "*/deep/", "d/**/e/**/f", "**/**/g", "/", "!", "a/b/",
	}
	diffPaths = []string{
		"a.txt", "keep.txt", "sub/keep.txt", "build", "sub/build", "rootonly.yaml", "x/rootonly.yaml",
		"a/b", "a/b/c", "a/x/c", "a/x/y/c", "c", "z/c", "a", "x/y/z", "xay/z", "b1.yaml", "[", "!bang",
		"escaped ", "sub", "sub/keep.yaml", "q/deep", "q/deep/x", "d/e/f", "d/1/e/2/f", "g", "1/2/g", ".git",
		"x/.git", "a/b/d/e", "x~",
	}
)

// The own matcher decides every rule and path of the table as go-git's
// does, alone and in pairs (the order of rules matters).
func TestRulesMatchGoGit(t *testing.T) {
	sets := [][]string{nil}
	for _, r := range diffRules {
		sets = append(sets, []string{r})
		for _, r2 := range diffRules {
			sets = append(sets, []string{r, r2})
		}
	}
	for _, set := range sets {
		for _, p := range diffPaths {
			for _, dir := range []bool{false, true} {
				if got, want := ownMatch(set, p, dir), goGitMatch(set, p, dir); got != want {
					t.Errorf("rules %q, path %q dir %v: %v, go-git says %v", set, p, dir, got, want)
				}
			}
		}
	}
}

// FuzzRulesMatchGoGit: for any rule and path, the own matcher agrees with
// go-git's. Run: go test ./internal/ignore -fuzz FuzzRulesMatchGoGit
func FuzzRulesMatchGoGit(f *testing.F) {
	for i, r := range diffRules {
		f.Add(r, diffPaths[i%len(diffPaths)], i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, rule, path string, isDir bool) {
		if strings.ContainsAny(rule, "\n\r") || strings.HasPrefix(strings.TrimLeft(rule, " \t"), "#") {
			return
		}
		line := rule
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " \t")
		}
		if line == "" || path == "" || path == "." {
			return
		}
		if got, want := ownMatch([]string{rule}, path, isDir), goGitMatch([]string{line}, path, isDir); got != want {
			t.Fatalf("rule %q, path %q dir %v: %v, go-git says %v", rule, path, isDir, got, want)
		}
	})
}
