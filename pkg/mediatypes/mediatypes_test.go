package mediatypes_test

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// The rules of spec/addon-v1.md section 10, in order.
func TestClassify(t *testing.T) {
	l := func(mts ...mediatypes.MediaType) []mediatypes.Layer {
		var out []mediatypes.Layer
		for _, mt := range mts {
			out = append(out, mediatypes.Layer{MediaType: mt})
		}
		return out
	}
	titled := []mediatypes.Layer{{MediaType: "application/yaml", Annotations: map[string]string{mediatypes.AnnotationTitle: "a.yaml"}}}
	for _, tc := range []struct {
		name             string
		config, artifact mediatypes.MediaType
		layers           []mediatypes.Layer
		labels           map[string]string
		want             mediatypes.Form
	}{
		{"artifact by config", mediatypes.AddonConfig, "", l(mediatypes.AddonContentGzip), nil, mediatypes.FormArtifact},
		{"artifact by artifactType", mediatypes.OCIEmpty, mediatypes.AddonConfig, l(mediatypes.OCILayerGzip), nil, mediatypes.FormArtifact},
		{"flux by config", mediatypes.FluxConfig, "", l(mediatypes.FluxContentGzip), nil, mediatypes.FormFlux},
		{"artifact by layers", "application/x", "", l(mediatypes.AddonContentTar, mediatypes.AddonContentZstd), nil, mediatypes.FormArtifact},
		{"flux by layers", "application/x", "", l(mediatypes.FluxContentGzip), nil, mediatypes.FormFlux},
		{"helm chart", mediatypes.HelmConfig, "", l(mediatypes.HelmChartContent), nil, mediatypes.FormHelm},
		{"helm chart with provenance", mediatypes.HelmConfig, "", l(mediatypes.HelmChartContent, mediatypes.HelmProvenance), nil, mediatypes.FormHelm},
		{"helm chart by its layer", mediatypes.OCIConfig, "", l(mediatypes.HelmChartContent), nil, mediatypes.FormHelm},
		{"olm", mediatypes.OCIConfig, "", l(mediatypes.OCILayerGzip), map[string]string{mediatypes.LabelOLMManifests: "manifests/"}, mediatypes.FormOLM},
		{"oci image", mediatypes.OCIConfig, "", l(mediatypes.OCILayerGzip, mediatypes.OCILayerZstd, mediatypes.OCILayerTar), nil, mediatypes.FormImage},
		{"docker image", mediatypes.DockerConfig, "", l(mediatypes.DockerLayerGzip, mediatypes.DockerForeignGz), nil, mediatypes.FormImage},
		{"docker image, uncompressed layer", mediatypes.DockerConfig, "", l(mediatypes.DockerLayerTar), nil, mediatypes.FormImage},
		{"image with a titled layer", mediatypes.OCIConfig, "", []mediatypes.Layer{{MediaType: mediatypes.OCILayerGzip, Annotations: map[string]string{mediatypes.AnnotationTitle: "x"}}}, nil, mediatypes.FormImage},
		{"oras", "application/vnd.oras.config", "", titled, nil, mediatypes.FormORAS},
		{"image config, foreign layer, titled", mediatypes.OCIConfig, "", titled, nil, mediatypes.FormORAS},
		{"cosign signature", mediatypes.OCIConfig, "", l(mediatypes.CosignSimpleSigning, mediatypes.CosignSimpleSigning), nil, mediatypes.FormSignature},
		{"cosign attestation", mediatypes.OCIConfig, "", l(mediatypes.DSSEEnvelope), nil, mediatypes.FormAttestation},
		// BuildKit's attestation manifest, reached by its digest (spec 9.1
		// keeps it out of platform selection).
		{"buildkit attestation", mediatypes.OCIConfig, "", l(mediatypes.InToto, mediatypes.InToto), nil, mediatypes.FormAttestation},
		{"image lock", mediatypes.OCIEmpty, mediatypes.ImagesLock, l(mediatypes.ImagesLock), nil, mediatypes.FormImageLock},
		// cosign attach sbom --type spdx|spdxjson|cyclonedx|syft, at sha256-HEX.sbom.
		{"cosign sbom, spdx", mediatypes.DockerConfig, "", l("text/spdx"), nil, mediatypes.FormSBOM},
		{"cosign sbom, spdx json", mediatypes.OCIConfig, "", l("spdx+json"), nil, mediatypes.FormSBOM},
		{"cosign sbom, cyclonedx", mediatypes.OCIConfig, "", l("application/vnd.cyclonedx+json"), nil, mediatypes.FormSBOM},
		{"cosign sbom, syft", mediatypes.OCIConfig, "", l("application/vnd.syft+json"), nil, mediatypes.FormSBOM},
		{"sbom layer beside an image layer", mediatypes.OCIConfig, "", l("text/spdx", mediatypes.OCILayerGzip), nil, mediatypes.FormUnknown},
		{"signature layer beside an image layer", mediatypes.OCIConfig, "", l(mediatypes.CosignSimpleSigning, mediatypes.OCILayerGzip), nil, mediatypes.FormUnknown},
		{"nothing", "application/x", "", l("application/y"), nil, mediatypes.FormUnknown},
		{"no layers", "application/x", "", nil, nil, mediatypes.FormUnknown},
	} {
		if got := mediatypes.Classify(tc.config, tc.artifact, tc.layers, tc.labels); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestLayerCompression(t *testing.T) {
	for mt, want := range map[mediatypes.MediaType]mediatypes.Compression{
		mediatypes.OCILayerGzip:     mediatypes.Gzip,
		mediatypes.DockerLayerGzip:  mediatypes.Gzip,
		mediatypes.OCILayerZstd:     mediatypes.Zstd,
		mediatypes.DockerLayerZstd:  mediatypes.Zstd,
		mediatypes.DockerLayerTar:   mediatypes.None,
		mediatypes.OCILayerTar:      mediatypes.None,
		mediatypes.AddonContentTar:  mediatypes.None,
		mediatypes.AddonContentGzip: mediatypes.Gzip,
		"application/json":          mediatypes.Unknown,
	} {
		if got := mediatypes.LayerCompression(mt); got != want {
			t.Errorf("%s: %q, want %q", mt, got, want)
		}
	}
	for _, c := range []mediatypes.Compression{mediatypes.Gzip, mediatypes.Zstd, mediatypes.None} {
		if got := mediatypes.LayerCompression(mediatypes.ContentLayer(c)); got != c {
			t.Errorf("ContentLayer(%s) round trip: %s", c, got)
		}
		if got := mediatypes.LayerCompression(mediatypes.ImageLayer(c)); got != c {
			t.Errorf("ImageLayer(%s) round trip: %s", c, got)
		}
	}
}

// The standard media types are the strings go-containerregistry, the
// library addonpkg reads and writes images with, compares against.
func TestStandardMediaTypesMatchGGCR(t *testing.T) {
	for _, c := range []struct {
		ours mediatypes.MediaType
		ggcr types.MediaType
	}{
		{mediatypes.OCIManifest, types.OCIManifestSchema1},
		{mediatypes.OCIIndex, types.OCIImageIndex},
		{mediatypes.OCIConfig, types.OCIConfigJSON},
		{mediatypes.OCIEmpty, types.OCIEmptyJSON},
		{mediatypes.OCILayerTar, types.OCIUncompressedLayer},
		{mediatypes.OCILayerGzip, types.OCILayer},
		{mediatypes.OCILayerZstd, types.OCILayerZStd},
		{mediatypes.OCINondistTar, types.OCIUncompressedRestrictedLayer},
		{mediatypes.OCINondistGzip, types.OCIRestrictedLayer},
		{mediatypes.DockerManifest, types.DockerManifestSchema2},
		{mediatypes.DockerList, types.DockerManifestList},
		{mediatypes.DockerConfig, types.DockerConfigJSON},
		{mediatypes.DockerLayerGzip, types.DockerLayer},
		{mediatypes.DockerForeignGz, types.DockerForeignLayer},
	} {
		if string(c.ours) != string(c.ggcr) {
			t.Errorf("%q, go-containerregistry says %q", c.ours, c.ggcr)
		}
	}
}

// A subject makes a manifest that no form takes a referrer (spec 10,
// rules 7 and 8): `oras attach` writes titled layers, as `oras push`
// does, with the manifest it is about as subject. The add-on forms
// ignore a subject (spec 5).
func TestClassifyManifestSubject(t *testing.T) {
	subject := &v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}, Size: 1}
	titled := v1.Descriptor{MediaType: types.OCIUncompressedLayer, Annotations: map[string]string{mediatypes.AnnotationTitle: "sbom.spdx.json"}}
	for _, tc := range []struct {
		name   string
		m      v1.Manifest
		labels map[string]string
		want   mediatypes.Form
	}{
		{"oras attach", v1.Manifest{ArtifactType: "application/spdx+json", Config: v1.Descriptor{MediaType: mediatypes.OCIEmpty}, Layers: []v1.Descriptor{titled}}, nil, mediatypes.FormReferrer},
		{"oras push", v1.Manifest{ArtifactType: "application/spdx+json", Config: v1.Descriptor{MediaType: mediatypes.OCIEmpty}, Layers: []v1.Descriptor{titled}}, nil, mediatypes.FormORAS},
		{"unknown layers", v1.Manifest{Config: v1.Descriptor{MediaType: "application/x"}, Layers: []v1.Descriptor{{MediaType: "application/y"}}}, nil, mediatypes.FormReferrer},
		{"artifact form", v1.Manifest{ArtifactType: string(mediatypes.AddonConfig), Config: v1.Descriptor{MediaType: mediatypes.AddonConfig}, Layers: []v1.Descriptor{{MediaType: mediatypes.AddonContentGzip}}}, nil, mediatypes.FormArtifact},
		{"image form", v1.Manifest{Config: v1.Descriptor{MediaType: mediatypes.OCIConfig}, Layers: []v1.Descriptor{{MediaType: mediatypes.OCILayerGzip}}}, nil, mediatypes.FormImage},
		{"signature", v1.Manifest{Config: v1.Descriptor{MediaType: mediatypes.OCIConfig}, Layers: []v1.Descriptor{{MediaType: mediatypes.CosignSimpleSigning}}}, nil, mediatypes.FormSignature},
		// cosign 3 sign: a titled Sigstore bundle, annotated with cosign
		// sign's predicate type (it was a generic referrer).
		{"cosign 3 signature", bundleManifest(mediatypes.CosignSignPredicateType), nil, mediatypes.FormSignature},
		{"cosign 3 attestation", bundleManifest("https://slsa.dev/provenance/v1"), nil, mediatypes.FormAttestation},
	} {
		m := tc.m
		if tc.name != "oras push" {
			m.Subject = subject
		}
		if got := mediatypes.ClassifyManifest(&m, tc.labels); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if mediatypes.IsReferrer(tc.want) != (tc.want == mediatypes.FormReferrer || tc.want == mediatypes.FormSignature || tc.want == mediatypes.FormAttestation) {
			t.Errorf("%s: IsReferrer(%s) = %t", tc.name, tc.want, mediatypes.IsReferrer(tc.want))
		}
	}
}

// bundleManifest is the manifest cosign 3 sign (and attest) pushes as a
// referrer: an empty config, one Sigstore bundle layer titled
// sha256-HEX.sigstore.json, the predicate type as an annotation.
func bundleManifest(predicateType string) v1.Manifest {
	return v1.Manifest{
		ArtifactType: string(mediatypes.SigstoreBundle),
		Config:       v1.Descriptor{MediaType: mediatypes.OCIEmpty},
		Layers: []v1.Descriptor{{MediaType: types.MediaType(mediatypes.SigstoreBundle), Annotations: map[string]string{
			mediatypes.AnnotationTitle: "sha256-" + strings.Repeat("b", 64) + ".sigstore.json",
		}}},
		Annotations: map[string]string{mediatypes.AnnotationBundlePredicateType: predicateType, "dev.sigstore.bundle.content": "dsse-envelope"},
	}
}

// Every SBOM type cosign attaches classifies as an SBOM, a referrer: the
// manifest at a sha256-HEX.sbom tag was "unknown". Each of cosign's tags
// (.sig, .att, .sbom) is a referrer tag.
func TestCosignSBOMIsAReferrer(t *testing.T) {
	for _, mt := range mediatypes.SBOMTypes {
		if got := mediatypes.Classify(mediatypes.OCIConfig, "", []mediatypes.Layer{{MediaType: mt}}, nil); got != mediatypes.FormSBOM {
			t.Errorf("a layer of %s: %s, want %s", mt, got, mediatypes.FormSBOM)
		}
	}
	if !mediatypes.IsReferrer(mediatypes.FormSBOM) {
		t.Error("an SBOM is no referrer")
	}
	for _, suffix := range []string{".sig", ".att", ".sbom"} {
		if tag := "sha256-" + strings.Repeat("a", 64) + suffix; !mediatypes.IsReferrerTag(tag) {
			t.Errorf("%s is no referrer tag", tag)
		}
	}
}
