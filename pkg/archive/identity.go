package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"runtime"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
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

func (ih *identityHasher) digest() v1.Hash { return sum(ih.h) }

// Identity computes the content identity of the tree fsys: a SHA-256 over
// the canonical tree encoding of spec/addon-v1.md. It is the same for both
// forms of one add-on and does not depend on times, owners, compression or
// how the tree was split into layers. Files are hashed on every core.
func Identity(fsys fs.FS) (v1.Hash, error) {
	type entry struct {
		typ    byte
		name   string
		mode   fs.FileMode
		target string
		open   func() (io.ReadCloser, error)
	}
	var entries []entry
	err := walk(fsys, func(name string, mode fs.FileMode, target string, open func() (io.ReadCloser, error)) error {
		e := entry{name: name, mode: mode, target: target, open: open}
		switch {
		case mode.IsDir():
			e.typ = typeDir
		case mode&fs.ModeSymlink != 0:
			e.typ = typeSymlink
		default:
			e.typ = typeFile
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return v1.Hash{}, err
	}
	sums := make([]string, len(entries))
	errs := make([]error, len(entries))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			buf := make([]byte, 32<<10)
			rf, inMemory := fsys.(interface{ Bytes(string) ([]byte, error) })
			known, hasSums := fsys.(interface{ SHA256(string) ([32]byte, bool) })
			for i := range next {
				if hasSums {
					// The unpacker hashed the file as it read it.
					if sum, ok := known.SHA256(entries[i].name); ok {
						sums[i] = "sha256:" + hex.EncodeToString(sum[:])
						continue
					}
				}
				h.Reset()
				if inMemory {
					// An in-memory tree hands out its bytes: no copy.
					b, err := rf.Bytes(entries[i].name)
					if err != nil {
						errs[i] = err
						continue
					}
					h.Write(b)
					sums[i] = "sha256:" + hex.EncodeToString(h.Sum(nil))
					continue
				}
				rc, err := entries[i].open()
				if err != nil {
					errs[i] = err
					continue
				}
				_, err = io.CopyBuffer(h, struct{ io.Reader }{rc}, buf)
				rc.Close()
				if err != nil {
					errs[i] = fmt.Errorf("read %s: %w", entries[i].name, err)
					continue
				}
				sums[i] = "sha256:" + hex.EncodeToString(h.Sum(nil))
			}
		}()
	}
	for i, e := range entries {
		if e.typ == typeFile {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	ih := newIdentityHasher()
	for i, e := range entries {
		if errs[i] != nil {
			return v1.Hash{}, errs[i]
		}
		payload := e.target
		if e.typ == typeFile {
			payload = sums[i]
		}
		ih.add(e.typ, e.name, e.mode, payload)
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
