package safetree

import (
	"archive/tar"
	"path"
	"strings"
)

// CleanName normalizes an entry name from an archive, a layer or a git
// tree ("a//b/./c/" is "a/b/c", "./" is ".") and refuses a name that is
// absolute, has a ".." component or holds a NUL byte. A ".." is refused
// even where cleaning would cancel it ("a/../b"): a name that climbs is
// a sign of a crafted archive, and readers disagree on what it means.
func CleanName(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", refuse(name, ErrPathEscape, "absolute path")
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", refuse(name, ErrPathEscape, "NUL in path")
	}
	for rest := name; rest != ""; {
		part, next, _ := strings.Cut(rest, "/")
		if part == ".." {
			return "", refuse(name, ErrPathEscape, "path climbs out with ..")
		}
		rest = next
	}
	return path.Clean(name), nil
}

// CleanComponent refuses a name that is not one clean path component:
// CleanName's rules, and no "/", and not "" or "." (a git tree entry, a
// chart's directory).
func CleanComponent(name string) error {
	c, err := CleanName(name)
	if err != nil {
		return err
	}
	if name == "" || c == "." || c != name || strings.Contains(name, "/") {
		return refuse(name, ErrPathEscape, "not a single name")
	}
	return nil
}

// JoinInside resolves the relative reference rel from the directory dir
// (a clean tree path, "." for the top) lexically, as a kustomization's
// "../base" or a symlink's target is read, and refuses rel when it is
// absolute, holds a NUL byte, or climbs out of the tree. Unlike an entry
// name, a reference may use ".." to reach a sibling.
func JoinInside(dir, rel string) (string, error) {
	switch {
	case path.IsAbs(rel):
		return "", refuse(rel, ErrPathEscape, "absolute path")
	case strings.IndexByte(rel, 0) >= 0:
		return "", refuse(rel, ErrPathEscape, "NUL in path")
	}
	j := path.Join(dir, rel)
	if j == ".." || strings.HasPrefix(j, "../") {
		return "", refuse(rel, ErrPathEscape, "path climbs out of the tree")
	}
	return j, nil
}

// CheckLinkText refuses the symbolic link at name (a clean tree path)
// whose target text is empty, absolute, holds a NUL byte, or climbs out
// of the tree when read lexically from the link's directory. It is the
// cheap check an entry gets when it arrives; CheckLinks judges the links
// of the final tree together.
func CheckLinkText(name, target string) error {
	switch {
	case target == "":
		return refuse(name, ErrLinkEscape, "symlink with an empty target")
	case path.IsAbs(target):
		return refuse(name, ErrLinkEscape, "symlink to absolute path %q", target)
	case strings.IndexByte(target, 0) >= 0:
		return refuse(name, ErrLinkEscape, "NUL in symlink target")
	}
	if _, err := JoinInside(path.Dir(name), target); err != nil {
		return refuse(name, ErrLinkEscape, "symlink %q leads out of the tree", target)
	}
	return nil
}

// GNUSparse reports whether a tar entry is a GNU sparse file: type 'S', or
// in the PAX format (GNU tar --format=posix --sparse) a regular entry with
// GNU.sparse.* records, which Go's reader hands over with its holes filled,
// so only those records tell it from a plain file. Readers refuse both
// alike, whatever format the writer chose.
func GNUSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}
