package source

import (
	"fmt"

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
		mt, err := mediatypes.Sniff(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Ref, err)
		}
		if !mediatypes.IsIndex(mediatypes.MediaType(mt)) {
			return nil, fmt.Errorf("%s: %w: opened as an index, but its bytes are an image manifest", a.Ref, mediatypes.ErrNotManifest)
		}
		out.Index = layout.TypedIndex(a.Index, mt)
		return &out, nil
	}
	raw, err := a.Image.RawManifest()
	if err != nil {
		return nil, err
	}
	mt, err := mediatypes.Sniff(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Ref, err)
	}
	if !mediatypes.IsManifest(mediatypes.MediaType(mt)) {
		return nil, fmt.Errorf("%s: %w: opened as an image, but its bytes are an index", a.Ref, mediatypes.ErrNotManifest)
	}
	out.Image = layout.TypedImage(a.Image, mt)
	return &out, nil
}
