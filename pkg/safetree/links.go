package safetree

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// MaxLinkHops bounds the links followed to resolve one path, as the
// kernel's ELOOP does.
const MaxLinkHops = 40

// Resolve returns the path that name (a clean tree path) leads to in
// fsys when every symbolic link on the way is followed the way a kernel
// follows it: component by component, a ".." going up from where the
// walk really is, not from where the text says. A component that does
// not exist is taken as a plain directory, so a dangling link is judged
// by what its text could reach. The result names no link; it fails with
// ErrLinkEscape when the walk leaves the tree or does not end.
func Resolve(fsys fs.ReadLinkFS, name string) (string, error) {
	r := resolver{fsys: fsys, origin: name}
	dir, err := r.walk(nil, name)
	if err != nil {
		return "", err
	}
	return join(dir), nil
}

// CheckLinks resolves every symbolic link of fsys from its own directory
// and refuses the first one that leaves the tree or loops. It is the one
// judgement of links for every reader and writer of untrusted trees.
func CheckLinks(fsys fs.ReadLinkFS) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := fsys.ReadLink(name)
		if err != nil {
			return err
		}
		if err := CheckLinkText(name, target); err != nil {
			return err
		}
		r := resolver{fsys: fsys, origin: name}
		_, err = r.walk(parentOf(name), target)
		return err
	})
}

type resolver struct {
	fsys   fs.ReadLinkFS
	origin string // the entry being judged, for the error
	hops   int
}

// walk follows rel from the resolved directory dir (its components).
func (r *resolver) walk(dir []string, rel string) ([]string, error) {
	pending := split(rel)
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(dir) == 0 {
				return nil, refuse(r.origin, ErrLinkEscape, "resolves outside the tree through its links")
			}
			dir = dir[:len(dir)-1]
			continue
		}
		p := join(append(dir, c))
		fi, err := r.fsys.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
				dir = append(dir, c) // taken as a plain directory
				continue
			}
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dir = append(dir, c)
			continue
		}
		r.hops++
		if r.hops > MaxLinkHops {
			return nil, refuse(r.origin, ErrLinkEscape, "more than %d links to follow (a loop?)", MaxLinkHops)
		}
		target, err := r.fsys.ReadLink(p)
		if err != nil {
			return nil, err
		}
		if target == "" || path.IsAbs(target) || strings.IndexByte(target, 0) >= 0 {
			return nil, refuse(r.origin, ErrLinkEscape, "resolves through %q, a link to %q", p, target)
		}
		// The link's text replaces it; the walk stays in its directory.
		pending = append(split(target), pending...)
	}
	return dir, nil
}

func split(p string) []string {
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

func join(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

func parentOf(name string) []string {
	d := path.Dir(name)
	if d == "." {
		return nil
	}
	return strings.Split(d, "/")
}
