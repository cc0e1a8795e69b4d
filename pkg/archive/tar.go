package archive

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TarOptions shape the tarball of a tree.
type TarOptions struct {
	// Prefix is a directory the tree is placed under ("addon" in the image
	// form, "" in the artifact form). Its parent directories get entries too.
	Prefix string
	// ModTime is every entry's time (SOURCE_DATE_EPOCH or the commit time).
	ModTime time.Time
	// Whiteouts are paths, relative to the tree, to delete from lower
	// layers: written as .wh. entries before the tree (patch layers).
	Whiteouts []string
}

// TarResult tells what WriteTar wrote.
type TarResult struct {
	// Identity is the content identity of the tree.
	Identity v1.Hash
	// DiffID is the digest of the uncompressed tar stream.
	DiffID v1.Hash
	// Size is the uncompressed size of the tar stream.
	Size int64
	// Files and Bytes count the regular files and their bytes.
	Files int
	Bytes int64
}

// WriteTar writes fsys as a reproducible tar stream to w and computes the
// tree's content identity in the same pass.
func WriteTar(w io.Writer, fsys fs.FS, opts TarOptions) (*TarResult, error) {
	diff := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, diff)}
	tw := tar.NewWriter(cw)
	ih := newIdentityHasher()
	res := &TarResult{}
	mtime := opts.ModTime.UTC().Truncate(time.Second)

	header := func(name string, typ byte, mode fs.FileMode) *tar.Header {
		return &tar.Header{
			Name:     name,
			Typeflag: typ,
			Mode:     int64(NormalMode(mode)),
			ModTime:  mtime,
			Format:   tar.FormatPAX,
		}
	}
	full := func(name string) string {
		if opts.Prefix == "" {
			return name
		}
		return path.Join(opts.Prefix, name)
	}
	if opts.Prefix != "" {
		// Parent directories of the prefix, then the prefix itself.
		var parents []string
		for p := path.Clean(opts.Prefix); p != "." && p != "/"; p = path.Dir(p) {
			parents = append([]string{p}, parents...)
		}
		for _, p := range parents {
			if err := tw.WriteHeader(header(p+"/", tar.TypeDir, fs.ModeDir)); err != nil {
				return nil, err
			}
		}
	}
	for _, wo := range opts.Whiteouts {
		dir, base := path.Split(path.Clean(wo))
		h := header(full(path.Join(dir, ".wh."+base)), tar.TypeReg, 0o644)
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
	}
	// One buffer and one hasher for all files; a tree in memory hands
	// out its bytes, which are written without a copy.
	buf := make([]byte, 64<<10)
	fh := sha256.New()
	inMemory, _ := fsys.(interface{ Bytes(string) ([]byte, error) })
	err := walk(fsys, func(name string, mode fs.FileMode, target string, open func() (io.ReadCloser, error)) error {
		switch {
		case mode.IsDir():
			ih.add(typeDir, name, mode, "")
			return tw.WriteHeader(header(full(name)+"/", tar.TypeDir, mode))
		case mode&fs.ModeSymlink != 0:
			ih.add(typeSymlink, name, mode, target)
			h := header(full(name), tar.TypeSymlink, mode)
			h.Linkname = target
			return tw.WriteHeader(h)
		}
		fh.Reset()
		h := header(full(name), tar.TypeReg, mode)
		var n int64
		if inMemory != nil {
			data, err := inMemory.Bytes(name)
			if err != nil {
				return err
			}
			h.Size = int64(len(data))
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return fmt.Errorf("archive %s: %w", name, err)
			}
			fh.Write(data)
			n = h.Size
		} else {
			rc, err := open()
			if err != nil {
				return err
			}
			defer rc.Close()
			st, err := rc.(fs.File).Stat()
			if err != nil {
				return err
			}
			h.Size = st.Size()
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			// The struct hides WriterTo/ReaderFrom, which would bypass buf.
			n, err = io.CopyBuffer(struct{ io.Writer }{io.MultiWriter(tw, fh)}, struct{ io.Reader }{rc}, buf)
			if err != nil {
				return fmt.Errorf("archive %s: %w", name, err)
			}
		}
		if n != h.Size {
			return fmt.Errorf("archive %s: size changed while reading (%d, then %d bytes)", name, h.Size, n)
		}
		ih.add(typeFile, name, mode, "sha256:"+hex.EncodeToString(fh.Sum(nil)))
		res.Files++
		res.Bytes += n
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	res.Identity = ih.digest()
	res.DiffID = sum(diff)
	res.Size = cw.n
	return res, nil
}

// sum is the digest of what h (a SHA-256) hashed.
func sum(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
