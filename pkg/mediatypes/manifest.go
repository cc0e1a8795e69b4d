package mediatypes

import v1 "github.com/google/go-containerregistry/pkg/v1"

// ClassifyManifest is Classify applied to a manifest: its config media
// type, artifactType and layers, with the image config's labels (nil for
// an artifact, whose config is no image config). It also reads the
// subject: a manifest that refers to another and would otherwise be an
// ORAS artifact, or nothing, is FormReferrer (spec/addon-v1.md 10, rules
// 7 and 8). `oras attach` makes such a manifest of any file (an SBOM
// whose layer is titled sbom.spdx.json); `oras push` never sets a
// subject. The add-on forms ignore a subject (spec 5). A Sigstore bundle
// with a subject (what cosign 3 signs and attests with) is FormSignature
// or FormAttestation, by the predicate type it is annotated with.
func ClassifyManifest(m *v1.Manifest, labels map[string]string) Form {
	layers := make([]Layer, 0, len(m.Layers))
	for _, l := range m.Layers {
		layers = append(layers, Layer{MediaType: MediaType(l.MediaType), Annotations: l.Annotations})
	}
	f := Classify(MediaType(m.Config.MediaType), MediaType(m.ArtifactType), layers, labels)
	if m.Subject != nil && (f == FormORAS || f == FormUnknown) {
		return referrerForm(m, layers)
	}
	return f
}

// referrerForm names a manifest with a subject that no add-on form takes:
// a Sigstore bundle (cosign 3's signatures and attestations, titled
// layers like oras attach's) is a signature when its statement is cosign
// sign's, an attestation otherwise; anything else is FormReferrer.
func referrerForm(m *v1.Manifest, layers []Layer) Form {
	if len(layers) == 0 || !allMatch(layers, func(l Layer) bool { return l.MediaType == SigstoreBundle }) {
		return FormReferrer
	}
	if m.Annotations[AnnotationBundlePredicateType] == CosignSignPredicateType {
		return FormSignature
	}
	return FormAttestation
}
