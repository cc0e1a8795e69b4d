// Package gitinfo reads, in pure Go, what a build records of the git work
// tree its source sits in: the remote URL, the HEAD commit and its time.
package gitinfo

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Info is what a build records.
type Info struct {
	// URL of the "origin" remote, credentials removed; empty without one.
	URL string
	// Commit is HEAD's hash.
	Commit string
	// Time is HEAD's committer time.
	Time time.Time
}

// Read returns the info of the work tree holding path (path itself or a
// directory above it, a main work tree or one made by "git worktree
// add"), or nil, nil when path is not inside one or its HEAD names no
// commit yet.
func Read(path string) (*Info, error) {
	repo, err := git.PlainOpenWithOptions(path, &git.PlainOpenOptions{
		DetectDotGit: true,
		// A linked work tree keeps its objects and remotes in the main
		// repository's .git, which its own names in "commondir".
		EnableDotGitCommonDir: true,
	})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open git repository of %s: %w", path, err)
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil // no commits yet
	}
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", path, err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, fmt.Errorf("read HEAD of %s: %w", path, err)
	}
	info := &Info{Commit: head.Hash().String(), Time: c.Committer.When.UTC()}
	if r, err := repo.Remote("origin"); err == nil && len(r.Config().URLs) > 0 {
		info.URL = redact(r.Config().URLs[0])
	}
	return info, nil
}

// redact drops user:password from a URL so it never lands in an image.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
