package ignore_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/addonpkg/addonpkg/internal/ignore"
)

// FuzzIgnore: Parse and Match never panic, whatever the rules and paths.
// Run: go test ./pkg/ignore -fuzz FuzzIgnore
func FuzzIgnore(f *testing.F) {
	f.Add([]byte("*.txt\n!keep.txt\nbuild/\n"), "sub/keep.txt", false)
	f.Add([]byte("**/a/**\n/root\n\\!bang\n"), "x/a/b/c", true)
	f.Add([]byte("[z-a]\n[\n\\\n"), "[", false)
	f.Add([]byte(""), ".git", true)
	f.Fuzz(func(t *testing.T, rules []byte, path string, isDir bool) {
		m, err := ignore.Parse(rules)
		if err != nil {
			if len(rules) <= ignore.MaxFileSize {
				// Only the size cap or an over-long line may fail.
				if !strings.Contains(err.Error(), "too long") && !strings.Contains(err.Error(), "limit") {
					t.Fatalf("Parse: %v", err)
				}
			}
			return
		}
		m.Match(path, isDir)
		if utf8.ValidString(path) {
			// Defaults hold under any path prefix.
			if !m.Match(strings.TrimSuffix(path, "/")+"/.git", true) && !strings.Contains(string(rules), "!") && path != "" {
				t.Fatalf(".git under %q not ignored by rules %q", path, rules)
			}
		}
	})
}
