package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"

	digest "github.com/opencontainers/go-digest"
)

// Entry types of the canonical tree encoding.
const (
	typeDir     = 'd'
	typeFile    = 'f'
	typeSymlink = 'l'
)

// NormalMode is the mode an entry has in a canonical tree: 0755 for
// directories and executables, 0644 for other files, 0777 for links.
func NormalMode(m fs.FileMode) fs.FileMode {
	switch {
	case m.IsDir():
		return 0o755
	case m&fs.ModeSymlink != 0:
		return 0o777
	case m.Perm()&0o111 != 0:
		return 0o755
	}
	return 0o644
}

// identityHasher accumulates the canonical tree encoding.
type identityHasher struct{ h hash.Hash }

func newIdentityHasher() *identityHasher { return &identityHasher{h: sha256.New()} }

func (ih *identityHasher) add(typ byte, name string, mode fs.FileMode, payload string) {
	fmt.Fprintf(ih.h, "%c\x00%s\x00%04o\x00%s\x00", typ, name, NormalMode(mode), payload)
}

func (ih *identityHasher) digest() digest.Digest {
	return digest.NewDigestFromEncoded(digest.SHA256, hex.EncodeToString(ih.h.Sum(nil)))
}

// Identity computes the content identity of the tree fsys: a SHA-256 over
// the canonical tree encoding of spec/addon-v1.md. It is the same for both
// forms of one add-on and does not depend on times, owners, compression or
// how the tree was split into layers.
func Identity(fsys fs.FS) (digest.Digest, error) {
	ih := newIdentityHasher()
	err := walk(fsys, func(name string, mode fs.FileMode, target string, open func() (io.ReadCloser, error)) error {
		switch {
		case mode.IsDir():
			ih.add(typeDir, name, mode, "")
		case mode&fs.ModeSymlink != 0:
			ih.add(typeSymlink, name, mode, target)
		default:
			rc, err := open()
			if err != nil {
				return err
			}
			defer rc.Close()
			h := sha256.New()
			if _, err := io.Copy(h, rc); err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			ih.add(typeFile, name, mode, "sha256:"+hex.EncodeToString(h.Sum(nil)))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return ih.digest(), nil
}

// visitFunc receives each entry below the root in canonical order.
type visitFunc func(name string, mode fs.FileMode, target string, open func() (io.ReadCloser, error)) error

// walk visits every entry of fsys below its root depth first, each
// directory's entries in byte order of their names (fs.WalkDir's order).
// Only directories, regular files and symlinks are allowed.
func walk(fsys fs.FS, visit visitFunc) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		mode := d.Type()
		switch {
		case mode.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return visit(name, info.Mode(), "", nil)
		case mode&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, name)
			if err != nil {
				return fmt.Errorf("read link %s: %w", name, err)
			}
			return visit(name, fs.ModeSymlink, target, nil)
		case mode.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return visit(name, info.Mode(), "", func() (io.ReadCloser, error) { return fsys.Open(name) })
		}
		return fmt.Errorf("%s: unsupported file type %v", name, mode)
	})
}
