// Package ignore reads .addonignore files: gitignore syntax, over defaults
// that keep version-control and editor debris out of every add-on.
package ignore

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// FileName is the ignore file at the root of an add-on source.
const FileName = ".addonignore"

// Defaults are always ignored; an .addonignore can re-include them with "!".
var Defaults = []string{".git/", ".hg/", ".svn/", FileName, "*~", "*.swp", "*.swo", ".*.sw?", ".DS_Store", "#*#", ".#*"}

// MaxFileSize caps an ignore file; a longer one is a mistake, not a policy.
const MaxFileSize = 1 << 20

// Matcher says which paths of a source tree stay out of the add-on.
type Matcher struct{ m gitignore.Matcher }

// Parse reads gitignore-syntax rules from b on top of Defaults.
func Parse(b []byte) (*Matcher, error) {
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s is %d bytes, over the %d byte limit", FileName, len(b), MaxFileSize)
	}
	var ps []gitignore.Pattern
	for _, d := range Defaults {
		ps = append(ps, gitignore.ParsePattern(d, nil))
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxFileSize)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		// Trailing spaces are ignored unless escaped, as git does.
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " \t")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, nil))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	return &Matcher{m: gitignore.NewMatcher(ps)}, nil
}

// Match reports whether the slash-separated relative path is ignored.
func (m *Matcher) Match(path string, isDir bool) bool {
	if path == "" || path == "." {
		return false
	}
	return m.m.Match(strings.Split(path, "/"), isDir)
}
