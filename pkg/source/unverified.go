package source

import (
	"context"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// The unpacker reads every layer through its own verifying reader (the
// digest and the size, with a typed mismatch that source.Unpack's retry
// acts on). A go-containerregistry remote layer verifies its blob too, so
// each layer would be hashed twice; for the unpacker, and only for it,
// registry layers read their blobs through registry.Blobs instead. Pull,
// copy and push keep go-containerregistry's verifying layers: they do not
// verify on their own.

// unverifiedImage is img with layers that read their blobs unverified;
// nil stays nil.
func unverifiedImage(ctx context.Context, img v1.Image, b *registry.Blobs) v1.Image {
	if img == nil {
		return nil
	}
	return &rawBlobImage{ctx: ctx, Image: img, blobs: b}
}

// unverifiedIndex is idx with images as unverifiedImage makes them.
func unverifiedIndex(ctx context.Context, idx v1.ImageIndex, b *registry.Blobs) v1.ImageIndex {
	if idx == nil {
		return nil
	}
	return &rawBlobIndex{ctx: ctx, idx: idx, blobs: b}
}

type rawBlobIndex struct {
	ctx   context.Context
	idx   v1.ImageIndex
	blobs *registry.Blobs
}

func (i *rawBlobIndex) MediaType() (types.MediaType, error) { return i.idx.MediaType() }
func (i *rawBlobIndex) Digest() (v1.Hash, error)            { return i.idx.Digest() }
func (i *rawBlobIndex) Size() (int64, error)                { return i.idx.Size() }
func (i *rawBlobIndex) RawManifest() ([]byte, error)        { return i.idx.RawManifest() }
func (i *rawBlobIndex) IndexManifest() (*v1.IndexManifest, error) {
	return i.idx.IndexManifest()
}

func (i *rawBlobIndex) Image(h v1.Hash) (v1.Image, error) {
	img, err := i.idx.Image(h)
	if err != nil {
		return nil, err
	}
	return unverifiedImage(i.ctx, img, i.blobs), nil
}

func (i *rawBlobIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	idx, err := i.idx.ImageIndex(h)
	if err != nil {
		return nil, err
	}
	return unverifiedIndex(i.ctx, idx, i.blobs), nil
}

type rawBlobImage struct {
	v1.Image
	ctx   context.Context
	blobs *registry.Blobs
}

func (i *rawBlobImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	if d, err := partial.Descriptor(l); err == nil && len(d.URLs) > 0 {
		// A foreign layer lives at its URLs, which go-containerregistry's
		// layer tries: keep it.
		return l, nil
	}
	return &rawBlobLayer{Layer: l, ctx: i.ctx, blobs: i.blobs}, nil
}

// rawBlobLayer is a registry layer whose Compressed is the blob as it
// arrives; everything else is the layer's own.
type rawBlobLayer struct {
	v1.Layer
	ctx   context.Context
	blobs *registry.Blobs
}

func (l *rawBlobLayer) Compressed() (io.ReadCloser, error) {
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	size, err := l.Size()
	if err != nil {
		return nil, err
	}
	return l.blobs.Open(l.ctx, d, size)
}
