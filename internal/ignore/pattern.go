package ignore

import (
	"path/filepath"
	"strings"
)

// rule is one gitignore line. Its semantics are go-git's
// plumbing/format/gitignore (which addonpkg used before, so every
// existing add-on keeps its identity): TestRulesMatchGoGit compares the
// two on a table and FuzzRulesMatchGoGit on anything. Owning the matcher
// keeps go-git out of every program that reads a folder.
type rule struct {
	// elems are the pattern's elements between slashes.
	elems []string
	// negate is a "!" rule: what it matches is kept.
	negate bool
	// dirOnly is a rule ending in "/": it matches directories only.
	dirOnly bool
	// anchored is a rule with a slash inside: it matches from the root,
	// element by element, with "**" for any number of directories.
	anchored bool
}

func parseRule(p string) rule {
	var r rule
	if strings.HasPrefix(p, "!") {
		r.negate, p = true, p[1:]
	}
	if !strings.HasSuffix(p, `\ `) {
		p = strings.TrimRight(p, " ")
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly, p = true, p[:len(p)-1]
	}
	r.anchored = strings.Contains(p, "/")
	r.elems = strings.Split(p, "/")
	return r
}

// match reports whether the rule applies to path (its elements).
func (r rule) match(path []string, isDir bool) bool {
	if len(path) == 0 {
		return false
	}
	if r.anchored {
		return r.matchAnchored(path, isDir)
	}
	// A rule without a slash matches any element of the path; a
	// directory-only one not the last element of a file.
	for i, name := range path {
		ok, err := filepath.Match(r.elems[0], name)
		if err != nil {
			return false
		}
		if ok {
			return !(r.dirOnly && !isDir && i == len(path)-1)
		}
	}
	return false
}

// matchAnchored walks the rule's elements along path. A match may end
// above the path's last element (a matched directory holds the rest).
func (r rule) matchAnchored(path []string, isDir bool) bool {
	matched, skip := false, false
	for i, el := range r.elems {
		switch {
		case el == "":
			skip = false
			continue
		case el == "**":
			if i == len(r.elems)-1 {
				return r.finish(matched, path, isDir)
			}
			skip = true
			continue
		case strings.Contains(el, "**"), len(path) == 0:
			return false
		}
		if !skip {
			ok, err := filepath.Match(el, path[0])
			if err != nil || !ok {
				return false
			}
			matched, path = true, path[1:]
			continue
		}
		// After "**": the first element at or below that matches.
		skip = false
		for len(path) > 0 {
			ok, err := filepath.Match(el, path[0])
			if err != nil {
				return false
			}
			path = path[1:]
			if ok {
				matched = true
				break
			}
			if len(path) == 0 {
				matched = false
			}
		}
	}
	return r.finish(matched, path, isDir)
}

// finish applies dirOnly to a match that used the whole path.
func (r rule) finish(matched bool, rest []string, isDir bool) bool {
	if matched && r.dirOnly && !isDir && len(rest) == 0 {
		return false
	}
	return matched
}
