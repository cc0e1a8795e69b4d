package mediatypes_test

import (
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

var forms = map[mediatypes.Form]bool{
	mediatypes.FormImage: true, mediatypes.FormArtifact: true, mediatypes.FormFlux: true,
	mediatypes.FormORAS: true, mediatypes.FormOLM: true, mediatypes.FormUnknown: true,
	mediatypes.FormHelm: true, mediatypes.FormSignature: true, mediatypes.FormAttestation: true,
	mediatypes.FormImageLock: true, mediatypes.FormSBOM: true,
}

// FuzzClassify: Classify never panics and always names one of the forms,
// whatever the media types, layers, annotations and labels. layers is a
// "|"-separated list of "MEDIATYPE=TITLE" items.
// Run: go test ./pkg/mediatypes -fuzz FuzzClassify
func FuzzClassify(f *testing.F) {
	f.Add(string(mediatypes.AddonConfig), "", string(mediatypes.AddonContentGzip)+"=", "")
	f.Add(string(mediatypes.OCIConfig), "", string(mediatypes.OCILayerGzip)+"=|"+string(mediatypes.DockerLayerGzip)+"=", mediatypes.LabelOLMManifests)
	f.Add("application/x", "application/y", "a=b|c=", "")
	f.Add("", string(mediatypes.FluxConfig), "", "")
	f.Fuzz(func(t *testing.T, configType, artifactType, layerSpec, label string) {
		var layers []mediatypes.Layer
		if layerSpec != "" {
			for _, item := range strings.Split(layerSpec, "|") {
				mt, title, _ := strings.Cut(item, "=")
				layers = append(layers, mediatypes.Layer{MediaType: mediatypes.MediaType(mt), Annotations: map[string]string{mediatypes.AnnotationTitle: title}})
			}
		}
		labels := map[string]string{label: "x"}
		got := mediatypes.Classify(mediatypes.MediaType(configType), mediatypes.MediaType(artifactType), layers, labels)
		if !forms[got] {
			t.Fatalf("Classify returned %q, not a form", got)
		}
		if (configType == string(mediatypes.AddonConfig) || artifactType == string(mediatypes.AddonConfig)) && got != mediatypes.FormArtifact {
			t.Fatalf("an add-on config classified as %s", got)
		}
		// Nil maps and nil slices are fine too.
		mediatypes.Classify(mediatypes.MediaType(configType), "", nil, nil)
		for _, s := range []string{configType, artifactType, layerSpec} {
			mt := mediatypes.MediaType(s)
			switch c := mediatypes.LayerCompression(mt); c {
			case mediatypes.Gzip, mediatypes.Zstd, mediatypes.None, mediatypes.Unknown:
			default:
				t.Fatalf("LayerCompression(%q) = %q", s, c)
			}
			// The predicates only have to answer without panicking.
			_ = mediatypes.IsIndex(mt)
			_ = mediatypes.IsManifest(mt)
			_ = mediatypes.IsAddonContent(mt)
			_ = mediatypes.IsImageLayer(mt)
		}
	})
}
