package archive

import (
	"crypto/sha256"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// digestWriter passes bytes through and hashes them on the way.
type digestWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func newDigestWriter(w io.Writer) *digestWriter { return &digestWriter{w: w, h: sha256.New()} }

func (d *digestWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	return n, err
}

func (d *digestWriter) digest() v1.Hash { return sum(d.h) }
