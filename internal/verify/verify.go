// Package verify checks blobs against their descriptors while they are
// read, so that no byte from a layout, an archive or a registry is used
// unless its digest matches.
package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/errdef"
)

// A Cap bounds a small blob. safetree.Cap is the one to pass (a cap of
// safetree.Limits, refusing with a *safetree.LimitError); verify names
// only what it uses of it, to import nothing beside itself.
type Cap interface {
	// Bytes is the bound.
	Bytes() int64
	// Check refuses a blob of size bytes over the bound.
	Check(entry string, size int64) error
	// Over is the error of a blob whose bytes ran over the bound.
	Over(entry string) error
}

// Reader hashes what it passes and fails at EOF (or as soon as the size is
// exceeded) when the blob is not the one described.
type Reader struct {
	rc   io.ReadCloser
	h    hash.Hash
	want v1.Hash
	size int64 // -1: unknown
	n    int64
	err  error
}

// NewReader wraps rc. size < 0 means the size is not known.
func NewReader(rc io.ReadCloser, want v1.Hash, size int64) (*Reader, error) {
	if want.Algorithm != "sha256" {
		rc.Close()
		return nil, fmt.Errorf("unsupported digest algorithm %q", want.Algorithm)
	}
	return &Reader{rc: rc, h: sha256.New(), want: want, size: size}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.rc.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if r.size >= 0 && r.n > r.size {
		r.err = fmt.Errorf("blob %s: %w: more than the %d bytes described", r.want, errdef.ErrSizeMismatch, r.size)
		return 0, r.err
	}
	if err == io.EOF {
		if r.size >= 0 && r.n != r.size {
			r.err = fmt.Errorf("blob %s: %w: %d bytes, %d described (truncated?)", r.want, errdef.ErrSizeMismatch, r.n, r.size)
			return n, r.err
		}
		if got := hex.EncodeToString(r.h.Sum(nil)); got != r.want.Hex {
			r.err = fmt.Errorf("blob %s: %w: content hashes to sha256:%s", r.want, errdef.ErrDigestMismatch, got)
			return n, r.err
		}
		r.err = io.EOF
	} else if err != nil {
		r.err = err
	}
	return n, err
}

// Close closes the underlying reader.
func (r *Reader) Close() error { return r.rc.Close() }

// ReadAll reads a whole small blob (manifest, config) within a cap, and
// verifies it. It never allocates from the described size, which an
// attacker controls. A blob described or found over the cap fails c's
// Check.
func ReadAll(rc io.ReadCloser, want v1.Hash, size int64, c Cap) ([]byte, error) {
	if err := c.Check(want.String(), size); err != nil {
		rc.Close()
		return nil, err
	}
	vr, err := NewReader(rc, want, size)
	if err != nil {
		return nil, err
	}
	defer vr.Close()
	b, err := io.ReadAll(io.LimitReader(vr, c.Bytes()+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > c.Bytes() {
		return nil, c.Over(want.String())
	}
	return b, nil
}

// Layer reads the layer d of img whole, as stored (compressed), when it
// is small: a signature payload, a lock document. It refuses a layer
// described or found over the cap, and one whose bytes do not match d's
// digest and size.
func Layer(img v1.Image, d v1.Descriptor, c Cap) ([]byte, error) {
	l, err := img.LayerByDigest(d.Digest)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	return ReadAll(rc, d.Digest, d.Size, c)
}

// Bytes checks b against want.
func Bytes(b []byte, want v1.Hash) error {
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); want.Algorithm != "sha256" || got != want.Hex {
		return fmt.Errorf("blob %s: %w: content hashes to sha256:%s", want, errdef.ErrDigestMismatch, got)
	}
	return nil
}

// Config reads an image's config blob within a cap (normally
// LimitConfigBytes), checked before anything is allocated: a descriptor
// that claims more, or a body that brings more, is refused with a
// *safetree.LimitError. The bytes are verified
// against the manifest's config digest. ggcr's RawConfigFile reads a
// remote config whole before anyone can check its size, so untrusted
// images go through here.
func Config(img v1.Image, c Cap) ([]byte, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	d := m.Config
	if d.Data != nil {
		if err := c.Check(d.Digest.String(), int64(len(d.Data))); err != nil {
			return nil, err
		}
		if err := Bytes(d.Data, d.Digest); err != nil {
			return nil, err
		}
		return d.Data, nil
	}
	if err := c.Check(d.Digest.String(), d.Size); err != nil {
		return nil, err
	}
	// The config as a blob to stream: a remote image gives one for any
	// digest, also through wrappers that hide its ConfigLayer.
	var cl interface{ Compressed() (io.ReadCloser, error) }
	if wcl, ok := img.(interface{ ConfigLayer() (v1.Layer, error) }); ok {
		if l, err := wcl.ConfigLayer(); err == nil {
			cl = l
		}
	}
	if cl == nil {
		if l, err := img.LayerByDigest(d.Digest); err == nil {
			cl = l
		}
	}
	if cl == nil {
		// Images that hold their config already (built in memory, read
		// from the store or an archive with their own caps).
		b, err := img.RawConfigFile()
		if err != nil {
			return nil, err
		}
		if err := c.Check(d.Digest.String(), int64(len(b))); err != nil {
			return nil, err
		}
		if err := Bytes(b, d.Digest); err != nil {
			return nil, err
		}
		return b, nil
	}
	rc, err := cl.Compressed()
	if err != nil {
		return nil, err
	}
	return ReadAll(rc, d.Digest, d.Size, c)
}
