package registry

import (
	"context"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/verify"
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

func (i *blobImage) wrap(l v1.Layer) v1.Layer {
	if d, err := partial.Descriptor(l); err == nil && len(d.URLs) > 0 {
		// A foreign layer lives at its URLs, which go-containerregistry's
		// layer tries: keep it.
		return l
	}
	return &blobLayer{Layer: l, ctx: i.ctx, blobs: i.blobs, verified: i.verified}
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
	if l.verified {
		return l.blobs.OpenVerified(l.ctx, d, size)
	}
	return l.blobs.Open(l.ctx, d, size)
}
