package source

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// typedByContent returns a with its image or index reporting the media
// type its manifest's bytes give. A registry that answers with a
// Content-Type such as text/plain would otherwise have that string
// copied into every place the manifest goes.
func typedByContent(a *Artifact) (*Artifact, error) {
	out := *a
	if a.Index != nil {
		raw, err := a.Index.RawManifest()
		if err != nil {
			return nil, err
		}
		mt, err := layout.MediaTypeOf(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Ref, err)
		}
		if !mediatypes.IsIndex(mediatypes.MediaType(mt)) {
			return nil, fmt.Errorf("%s: %w: opened as an index, but its bytes are an image manifest", a.Ref, layout.ErrNotManifest)
		}
		out.Index = typedIndex{imageIndex: a.Index, mt: mt}
		return &out, nil
	}
	raw, err := a.Image.RawManifest()
	if err != nil {
		return nil, err
	}
	mt, err := layout.MediaTypeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Ref, err)
	}
	if !mediatypes.IsManifest(mediatypes.MediaType(mt)) {
		return nil, fmt.Errorf("%s: %w: opened as an image, but its bytes are an index", a.Ref, layout.ErrNotManifest)
	}
	out.Image = typedImage{Image: a.Image, mt: mt}
	return &out, nil
}

// typedImage is an image whose MediaType is the manifest's own. It hides
// the wrapped image's Descriptor (a remote image's comes from the
// response headers), so go-containerregistry computes one from Digest,
// Size and this MediaType.
type typedImage struct {
	v1.Image
	mt types.MediaType
}

func (i typedImage) MediaType() (types.MediaType, error) { return i.mt, nil }

// imageIndex lets typedIndex embed a v1.ImageIndex, whose own method
// ImageIndex would clash with the field's usual name.
type imageIndex = v1.ImageIndex

// typedIndex is typedImage for an index.
type typedIndex struct {
	imageIndex
	mt types.MediaType
}

func (i typedIndex) MediaType() (types.MediaType, error) { return i.mt, nil }
