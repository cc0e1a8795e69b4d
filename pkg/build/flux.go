package build

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// FluxWarnings says why Flux would not read img right, one sentence per
// reason; none for what addonpkg builds by default. Flux's OCI client
// (flux pull artifact, and the OCIRepository of source-controller) takes
// the first layer of the manifest only and extracts it as a gzip tar, so
// a second layer (a patch) is silently missing and a zstd or
// uncompressed layer does not extract.
func FluxWarnings(img v1.Image) []string {
	m, err := img.Manifest()
	if err != nil || len(m.Layers) == 0 {
		return nil
	}
	what := "image"
	if mediatypes.ClassifyManifest(m, nil) == mediatypes.FormArtifact {
		what = "artifact"
	}
	var out []string
	if n := len(m.Layers); n > 1 {
		msg := fmt.Sprintf("the %s has %d layers: Flux (flux pull artifact, OCIRepository) reads only the first, so it would miss the patch", what, n)
		if what == "artifact" {
			msg += ", and oras pull refuses it; build it as one layer"
		}
		out = append(out, msg)
	}
	for i, l := range m.Layers {
		if c := mediatypes.LayerCompression(mediatypes.MediaType(l.MediaType)); c != mediatypes.Gzip {
			out = append(out, fmt.Sprintf("layer %d is not gzip-compressed (%s): Flux reads only gzip layers; use gzip compression (the default) for Flux", i+1, c))
			break
		}
	}
	return out
}
