package layout

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// ErrNotManifest marks bytes that are not an image manifest or an index:
// not JSON, a mediaType field that names something else, or a structure
// that disagrees with its mediaType.
var ErrNotManifest = errors.New("not an image manifest or index")

// manifestDoc is what the store reads of a manifest or an index: its
// declared type and the descriptors it points to.
type manifestDoc struct {
	MediaType types.MediaType  `json:"mediaType"`
	Config    *v1.Descriptor   `json:"config"`
	Layers    []v1.Descriptor  `json:"layers"`
	Manifests *[]v1.Descriptor `json:"manifests"`
}

// MediaTypeOf says what a manifest is from its own bytes, never from a
// header or a descriptor that came with it: its mediaType field when it
// has one, which must name an image manifest or an index that its
// structure agrees with; else its structure (a config: an OCI image
// manifest; manifests: an OCI index), as the OCI image spec allows.
//
// A registry's Content-Type is a claim about the bytes; the bytes are
// what the digest covers, so they decide.
func MediaTypeOf(raw []byte) (types.MediaType, error) {
	_, mt, err := parseManifest(raw)
	return mt, err
}

func parseManifest(raw []byte) (*manifestDoc, types.MediaType, error) {
	var doc manifestDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrNotManifest, err)
	}
	isIndex := doc.Manifests != nil && doc.Config == nil && doc.Layers == nil
	isImage := doc.Config != nil && doc.Manifests == nil
	mt := mediatypes.MediaType(doc.MediaType)
	switch {
	case mt == "" && isImage:
		return &doc, types.OCIManifestSchema1, nil
	case mt == "" && isIndex:
		return &doc, types.OCIImageIndex, nil
	case mediatypes.IsManifest(mt) && isImage, mediatypes.IsIndex(mt) && isIndex:
		return &doc, doc.MediaType, nil
	case mt == "":
		return nil, "", fmt.Errorf("%w: no mediaType, and neither a config nor a list of manifests", ErrNotManifest)
	case mediatypes.IsManifest(mt) || mediatypes.IsIndex(mt):
		return nil, "", fmt.Errorf("%w: mediaType %q does not match the document's structure", ErrNotManifest, doc.MediaType)
	default:
		return nil, "", fmt.Errorf("%w: mediaType %q", ErrNotManifest, doc.MediaType)
	}
}

// TypedImage returns img reporting mt as its media type: the one its
// manifest's bytes give (MediaTypeOf), where img came with another (a
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
