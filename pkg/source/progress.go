package source

import (
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// progressImage reports, blob by blob, the bytes read from each layer as
// it is uploaded. Blobs the registry already has are never read, so they
// report nothing.
type progressImage struct {
	v1.Image
	report layout.Progress
}

func (p progressImage) Layers() ([]v1.Layer, error) {
	ls, err := p.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for i, l := range ls {
		out[i] = p.wrap(l)
	}
	return out, nil
}

func (p progressImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := p.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return p.wrap(l), nil
}

// wrap leaves registry layers alone: go-containerregistry mounts those
// across repositories only if it sees their own type.
func (p progressImage) wrap(l v1.Layer) v1.Layer {
	if _, ok := l.(*remote.MountableLayer); ok {
		return l
	}
	return progressLayer{Layer: l, report: p.report}
}

type progressLayer struct {
	v1.Layer
	report layout.Progress
}

func (l progressLayer) Compressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Compressed()
	if err != nil {
		return nil, err
	}
	h, err := l.Digest()
	if err != nil {
		rc.Close()
		return nil, err
	}
	size, err := l.Size()
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &countingReadCloser{rc: rc, h: h, total: size, report: l.report}, nil
}

type countingReadCloser struct {
	rc     io.ReadCloser
	h      v1.Hash
	done   int64
	total  int64
	report layout.Progress
}

func (c *countingReadCloser) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.done += int64(n)
	c.report(c.h, c.done, c.total)
	return n, err
}

func (c *countingReadCloser) Close() error { return c.rc.Close() }
