package safetree

import (
	"errors"
	"io/fs"
	"path"
	"slices"
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
// judgement of links for every reader and writer of untrusted trees. A
// link to a folder that holds it stays inside, and an add-on may hold
// one (spec/addon-v1.md 9.4); a reader that follows links through
// folders checks CheckWalkableLinks too.
func CheckLinks(fsys fs.ReadLinkFS) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		_, err = checkLink(fsys, name)
		return err
	})
}

// CheckWalkableLinks is CheckLinks for a tree that a walk following links
// through folders reads (kustomize's resources, a folder build that
// copies what a link names): it also refuses the first link to a folder
// that holds it (CheckLink, ErrLinkLoop).
func CheckWalkableLinks(fsys fs.ReadLinkFS) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		return CheckLink(fsys, name)
	})
}

// CheckLink judges the symbolic link name of fsys: its text
// (CheckLinkText), where it resolves from its own directory through every
// other link (ErrLinkEscape when outside the tree or without end), and
// that it is no folder that holds it (ErrLinkLoop: base/loop -> ..).
// Such a link resolves inside the tree, but every walk that follows
// links through folders goes round it until the path is too long for
// the system, and then fails on a name hundreds of bytes long, far from
// the link.
func CheckLink(fsys fs.ReadLinkFS, name string) error {
	parent, err := checkLink(fsys, name)
	if err != nil {
		return err
	}
	target, err := fsys.ReadLink(name)
	if err != nil {
		return err
	}
	r := resolver{fsys: fsys, origin: name}
	to, err := r.walk(slices.Clone(parent), target)
	if err != nil {
		return err
	}
	if len(to) <= len(parent) && slices.Equal(to, parent[:len(to)]) {
		return refuse(name, ErrLinkLoop, "a link to %q, which is %q, a folder that holds the link: a walk through it never ends", target, join(to))
	}
	return nil
}

// checkLink is CheckLinks' judgement of one link: its text, and where
// it resolves through the other links. It returns the link's folder,
// resolved.
func checkLink(fsys fs.ReadLinkFS, name string) ([]string, error) {
	target, err := fsys.ReadLink(name)
	if err != nil {
		return nil, err
	}
	if err := CheckLinkText(name, target); err != nil {
		return nil, err
	}
	r := resolver{fsys: fsys, origin: name}
	parent, err := r.walk(nil, path.Dir(name))
	if err != nil {
		return nil, err
	}
	if _, err := r.walk(slices.Clone(parent), target); err != nil {
		return nil, err
	}
	return parent, nil
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
