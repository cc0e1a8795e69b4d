package mediatypes

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ErrNotManifest marks bytes that are not an image manifest or an index:
// not JSON, a mediaType field that names something else, or a structure
// that disagrees with its mediaType.
var ErrNotManifest = errors.New("not an image manifest or index")

// Document is what a manifest or an index says of itself: its media type
// as Sniff decides it, and the descriptors it points to (Manifests for
// an index; Config and Layers for an image manifest).
type Document struct {
	MediaType types.MediaType
	Config    *v1.Descriptor
	Layers    []v1.Descriptor
	Manifests []v1.Descriptor
}

// ParseDocument is Sniff that also returns the descriptors the document
// points to.
func ParseDocument(raw []byte) (*Document, error) {
	var doc struct {
		MediaType types.MediaType  `json:"mediaType"`
		Config    *v1.Descriptor   `json:"config"`
		Layers    []v1.Descriptor  `json:"layers"`
		Manifests *[]v1.Descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotManifest, err)
	}
	isIndex := doc.Manifests != nil && doc.Config == nil && doc.Layers == nil
	isImage := doc.Config != nil && doc.Manifests == nil
	out := &Document{Config: doc.Config, Layers: doc.Layers}
	if doc.Manifests != nil {
		out.Manifests = *doc.Manifests
	}
	mt := MediaType(doc.MediaType)
	switch {
	case mt == "" && isImage:
		out.MediaType = types.OCIManifestSchema1
	case mt == "" && isIndex:
		out.MediaType = types.OCIImageIndex
	case IsManifest(mt) && isImage, IsIndex(mt) && isIndex:
		out.MediaType = doc.MediaType
	case mt == "":
		return nil, fmt.Errorf("%w: no mediaType, and neither a config nor a list of manifests", ErrNotManifest)
	case IsManifest(mt) || IsIndex(mt):
		return nil, fmt.Errorf("%w: mediaType %q does not match the document's structure", ErrNotManifest, doc.MediaType)
	default:
		return nil, fmt.Errorf("%w: mediaType %q", ErrNotManifest, doc.MediaType)
	}
	return out, nil
}

// Sniff says what a manifest is from its own bytes, never from a header
// or a descriptor that came with it: its mediaType field when it has
// one, which must name an image manifest or an index that its structure
// agrees with; else its structure (a config: an OCI image manifest;
// manifests: an OCI index), as the OCI image spec allows. Anything else
// is ErrNotManifest.
//
// A registry's Content-Type is a claim about the bytes; the bytes are
// what the digest covers, so they decide.
func Sniff(raw []byte) (types.MediaType, error) {
	d, err := ParseDocument(raw)
	if err != nil {
		return "", err
	}
	return d.MediaType, nil
}
