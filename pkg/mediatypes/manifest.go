package mediatypes

import v1 "github.com/google/go-containerregistry/pkg/v1"

// ClassifyManifest is Classify applied to a manifest: its config media
// type, artifactType and layers, with the image config's labels (nil for
// an artifact, whose config is no image config).
func ClassifyManifest(m *v1.Manifest, labels map[string]string) Form {
	layers := make([]Layer, 0, len(m.Layers))
	for _, l := range m.Layers {
		layers = append(layers, Layer{MediaType: MediaType(l.MediaType), Annotations: l.Annotations})
	}
	return Classify(MediaType(m.Config.MediaType), MediaType(m.ArtifactType), layers, labels)
}
