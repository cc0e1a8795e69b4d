package layout

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TypedImage returns img reporting mt as its media type: the one its
// manifest's bytes give (mediatypes.Sniff), where img came with another (a
// registry's Content-Type). It hides img's Descriptor, so that
// go-containerregistry computes one from Digest, Size and mt.
func TypedImage(img v1.Image, mt types.MediaType) v1.Image { return typedImage{Image: img, mt: mt} }

// TypedIndex is TypedImage for an index.
func TypedIndex(idx v1.ImageIndex, mt types.MediaType) v1.ImageIndex {
	return typedIndex{imageIndex: idx, mt: mt}
}

type typedImage struct {
	v1.Image
	mt types.MediaType
}

func (i typedImage) MediaType() (types.MediaType, error) { return i.mt, nil }

// imageIndex lets typedIndex embed a v1.ImageIndex, whose own method
// ImageIndex would clash with the field's usual name.
type imageIndex = v1.ImageIndex

type typedIndex struct {
	imageIndex
	mt types.MediaType
}

func (i typedIndex) MediaType() (types.MediaType, error) { return i.mt, nil }
