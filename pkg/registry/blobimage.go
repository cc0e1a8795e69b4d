package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// OpenVerified is Open with the body checked as it is read: against the
// digest d, and against size, so that a body longer than its descriptor
// (an endless one, or a Content-Length of a terabyte over the right first
// bytes) fails as soon as it brings one byte more ("size mismatch"), the
// verdict the unpacker gives the same blob. It is the one check of a
// registry blob for every reader that does not verify on its own.
func (b *Blobs) OpenVerified(ctx context.Context, d v1.Hash, size int64) (io.ReadCloser, error) {
	rc, err := b.Open(ctx, d, size)
	if err != nil {
		return nil, err
	}
	vr, err := verify.NewReader(rc, d, size)
	if err != nil {
		return nil, err
	}
	return vr, nil
}

// Image is img (a go-containerregistry remote image of b's repository)
// with layers and config that read their blobs through b, verified
// (OpenVerified): go-containerregistry's own layers read a blob only up to
// its descriptor's size, so bytes beyond it went unseen. nil stays nil.
func (b *Blobs) Image(ctx context.Context, img v1.Image) v1.Image {
	if img == nil {
		return nil
	}
	return &blobImage{ctx: ctx, Image: img, blobs: b, verified: true}
}

// Index is idx with images as Image makes them. nil stays nil.
func (b *Blobs) Index(ctx context.Context, idx v1.ImageIndex) v1.ImageIndex {
	if idx == nil {
		return nil
	}
	return &blobIndex{ctx: ctx, idx: idx, blobs: b, verified: true}
}

// UnverifiedImage is Image for a caller that verifies every blob it reads
// itself, against the same digest and size (the unpacker): the blob is
// hashed once, not twice.
func (b *Blobs) UnverifiedImage(ctx context.Context, img v1.Image) v1.Image {
	if img == nil {
		return nil
	}
	if bi, ok := img.(*blobImage); ok {
		img = bi.Image
	}
	return &blobImage{ctx: ctx, Image: img, blobs: b}
}

// UnverifiedIndex is idx with images as UnverifiedImage makes them.
func (b *Blobs) UnverifiedIndex(ctx context.Context, idx v1.ImageIndex) v1.ImageIndex {
	if idx == nil {
		return nil
	}
	if bi, ok := idx.(*blobIndex); ok {
		idx = bi.idx
	}
	return &blobIndex{ctx: ctx, idx: idx, blobs: b}
}

type blobIndex struct {
	ctx      context.Context
	idx      v1.ImageIndex
	blobs    *Blobs
	verified bool
}

func (i *blobIndex) MediaType() (types.MediaType, error)       { return i.idx.MediaType() }
func (i *blobIndex) Digest() (v1.Hash, error)                  { return i.idx.Digest() }
func (i *blobIndex) Size() (int64, error)                      { return i.idx.Size() }
func (i *blobIndex) RawManifest() ([]byte, error)              { return i.idx.RawManifest() }
func (i *blobIndex) IndexManifest() (*v1.IndexManifest, error) { return i.idx.IndexManifest() }

func (i *blobIndex) Image(h v1.Hash) (v1.Image, error) {
	img, err := i.idx.Image(h)
	if err != nil {
		return nil, err
	}
	return &blobImage{ctx: i.ctx, Image: img, blobs: i.blobs, verified: i.verified}, nil
}

func (i *blobIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	idx, err := i.idx.ImageIndex(h)
	if err != nil {
		return nil, err
	}
	return &blobIndex{ctx: i.ctx, idx: idx, blobs: i.blobs, verified: i.verified}, nil
}

type blobImage struct {
	v1.Image
	ctx      context.Context
	blobs    *Blobs
	verified bool
}

// wrap reads l through Blobs: a foreign (non-distributable) layer too,
// whose descriptor names urls where it lives. go-containerregistry's own
// layer fetches those when the registry lacks the blob, so an image chose
// the hosts addonpkg connected to (spec/addon-v1.md 9.2: readers do not
// fetch from urls unless the user allows it); Blobs reads the registry
// only, and a foreign layer it lacks is a *ForeignLayerError.
func (i *blobImage) wrap(l v1.Layer) v1.Layer {
	bl := &blobLayer{Layer: l, ctx: i.ctx, blobs: i.blobs, verified: i.verified}
	if d, err := partial.Descriptor(l); err == nil {
		bl.urls = d.URLs
	}
	return bl
}

func (i *blobImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return i.wrap(l), nil
}

func (i *blobImage) Layers() ([]v1.Layer, error) {
	ls, err := i.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for k, l := range ls {
		out[k] = i.wrap(l)
	}
	return out, nil
}

// ConfigLayer is the config as a blob read through Blobs, so that
// verify.Config and remote.Write read it the one way.
func (i *blobImage) ConfigLayer() (v1.Layer, error) {
	m, err := i.Image.Manifest()
	if err != nil {
		return nil, err
	}
	l, err := i.Image.LayerByDigest(m.Config.Digest)
	if err != nil {
		return nil, err
	}
	return &blobLayer{Layer: l, ctx: i.ctx, blobs: i.blobs, verified: i.verified}, nil
}

// blobLayer is a registry layer whose Compressed is the blob read
// through Blobs; everything else is the layer's own.
type blobLayer struct {
	v1.Layer
	ctx      context.Context
	blobs    *Blobs
	verified bool
	urls     []string // a foreign layer's, never fetched
}

func (l *blobLayer) Compressed() (io.ReadCloser, error) {
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	size, err := l.Size()
	if err != nil {
		return nil, err
	}
	var rc io.ReadCloser
	if l.verified {
		rc, err = l.blobs.OpenVerified(l.ctx, d, size)
	} else {
		rc, err = l.blobs.Open(l.ctx, d, size)
	}
	var te *transport.Error
	if err != nil && len(l.urls) > 0 && errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
		return nil, &ForeignLayerError{Digest: d, URLs: l.urls, Err: err}
	}
	return rc, err
}

// ErrForeignLayer matches every *ForeignLayerError.
var ErrForeignLayer = errors.New("foreign layer not in the registry")

// ForeignLayerError is a foreign (non-distributable) layer whose blob the
// registry does not hold. Its descriptor names urls where it lives, which
// addonpkg does not fetch: an image does not choose the hosts addonpkg
// connects to. It matches ErrForeignLayer and errdef.ErrNotFound.
type ForeignLayerError struct {
	Digest v1.Hash
	URLs   []string
	// Err is the registry's answer.
	Err error
}

func (e *ForeignLayerError) Error() string {
	return fmt.Sprintf("layer %s: a foreign layer the registry does not hold: addonpkg does not fetch layers from the urls their descriptors name (%s); push the image with its foreign layers (crane copy --allow-nondistributable-artifacts)",
		e.Digest, safetree.Sanitize(strings.Join(e.URLs, ", ")))
}

func (e *ForeignLayerError) Unwrap() error { return e.Err }

// Is matches ErrForeignLayer and errdef.ErrNotFound.
func (e *ForeignLayerError) Is(target error) bool {
	return target == ErrForeignLayer || target == errdef.ErrNotFound
}
