package mediatypes

import (
	"bytes"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// MediaType is go-containerregistry's media type: the constants below
// are of the type descriptors, manifests and layers carry, so nothing
// converts between two kinds of media type.
type MediaType = types.MediaType

// The add-on artifact form's own media types.
const (
	// AddonConfig is the config blob of the artifact form, and its artifactType.
	AddonConfig MediaType = "application/vnd.cncf.addon.config.v1+json"
	// AddonContentGzip is a gzip-compressed content layer of the artifact form.
	AddonContentGzip MediaType = "application/vnd.cncf.addon.content.v1.tar+gzip"
	// AddonContentZstd is a zstd-compressed content layer of the artifact form.
	AddonContentZstd MediaType = "application/vnd.cncf.addon.content.v1.tar+zstd"
	// AddonContentTar is an uncompressed content layer of the artifact form.
	AddonContentTar MediaType = "application/vnd.cncf.addon.content.v1.tar"
)

// ImagesLock is the image lock of an add-on copied with its images
// (spec/image-lock-v1.md): the artifactType of the lock artifact, whose
// subject is the add-on, and the media type of its one layer, the lock
// document.
const ImagesLock MediaType = "application/vnd.cncf.addon.images.lock.v1+json"

// The layers of what refers to an add-on (cosign's signatures and
// attestations), by which Classify tells them.
const (
	// CosignSimpleSigning is the layer of a cosign signature: the signed
	// simple-signing payload (the signature is an annotation).
	CosignSimpleSigning MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// DSSEEnvelope is the layer of an in-toto attestation (cosign attest).
	DSSEEnvelope MediaType = "application/vnd.dsse.envelope.v1+json"
	// InToto is a layer of BuildKit's attestation manifest (docker buildx
	// build puts one beside each image it pushes): an unsigned in-toto
	// statement, provenance or an SBOM.
	InToto MediaType = "application/vnd.in-toto+json"
	// SigstoreBundle is what cosign 3 signs and attests with by default: a
	// Sigstore bundle (a DSSE envelope of an in-toto statement, with what
	// verifies it) as the one layer, and the artifactType, of a manifest
	// whose subject is the signed manifest.
	SigstoreBundle MediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// A Sigstore bundle's manifest says what its statement is in this
// annotation: CosignSignPredicateType for a signature (cosign sign), the
// predicate's type for an attestation (cosign attest).
const (
	AnnotationBundlePredicateType = "dev.sigstore.bundle.predicateType"
	CosignSignPredicateType       = "https://sigstore.dev/cosign/sign/v1"
)

// Standard OCI media types that readers meet: image-spec's own constants
// (github.com/opencontainers/image-spec/specs-go/v1), typed.
const (
	OCIManifest  MediaType = ocispec.MediaTypeImageManifest
	OCIIndex     MediaType = ocispec.MediaTypeImageIndex
	OCIConfig    MediaType = ocispec.MediaTypeImageConfig
	OCIEmpty     MediaType = ocispec.MediaTypeEmptyJSON
	OCILayerTar  MediaType = ocispec.MediaTypeImageLayer
	OCILayerGzip MediaType = ocispec.MediaTypeImageLayerGzip
	OCILayerZstd MediaType = ocispec.MediaTypeImageLayerZstd
)

// Non-distributable OCI layers. image-spec v1.1 deprecates its constants
// for them (new images must not use them), but readers still meet old
// images that do, so they are spelled out here.
const (
	OCINondistTar  MediaType = "application/vnd.oci.image.layer.nondistributable.v1.tar"
	OCINondistGzip MediaType = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"
	OCINondistZstd MediaType = "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd"
)

// Docker and Flux media types, which image-spec does not define.
const (
	DockerManifest  MediaType = "application/vnd.docker.distribution.manifest.v2+json"
	DockerList      MediaType = "application/vnd.docker.distribution.manifest.list.v2+json"
	DockerConfig    MediaType = "application/vnd.docker.container.image.v1+json"
	DockerLayerGzip MediaType = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	// DockerLayerTar is an uncompressed Docker layer: BuildKit writes it
	// for compression=uncompressed without OCI media types (containerd's
	// MediaTypeDockerSchema2Layer).
	DockerLayerTar  MediaType = "application/vnd.docker.image.rootfs.diff.tar"
	DockerLayerZstd MediaType = "application/vnd.docker.image.rootfs.diff.tar.zstd"
	DockerForeignGz MediaType = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"
	FluxConfig      MediaType = "application/vnd.cncf.flux.config.v1+json"
	FluxContentGzip MediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

// The media types of a Helm chart pushed with `helm push`.
const (
	// HelmConfig is the config blob: Chart.yaml's fields as JSON.
	HelmConfig MediaType = "application/vnd.cncf.helm.config.v1+json"
	// HelmChartContent is the chart archive (the .tgz `helm package` makes).
	HelmChartContent MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// HelmProvenance is the chart's provenance file, when pushed with one.
	HelmProvenance MediaType = "application/vnd.cncf.helm.chart.provenance.v1.prov"
)

// Label keys in the image form's config (config.Labels) and, for both
// forms, manifest annotation keys.
const (
	// LabelName is the add-on's name.
	LabelName = "io.cncf.addon.name"
	// LabelVersion is the add-on's version.
	LabelVersion = "io.cncf.addon.version"
	// LabelKind is "manifests" or "kustomize".
	LabelKind = "io.cncf.addon.kind"
	// LabelContent names the content directory of the image form when it is
	// not /addon.
	LabelContent = "io.cncf.addon.content"
	// LabelIdentity is the content identity, "sha256:<hex>".
	LabelIdentity = "io.cncf.addon.identity"
	// LabelSpec is the format version, "v1".
	LabelSpec = "io.cncf.addon.spec"
	// LabelConfig holds the whole add-on config JSON in the image form.
	LabelConfig = "io.cncf.addon.config"
	// LabelOLMManifests is the OLM bundle label naming its manifests directory.
	LabelOLMManifests = "operators.operatorframework.io.bundle.manifests.v1"
)

// Standard annotation keys of the OCI image spec: image-spec's constants.
const (
	AnnotationTitle       = ocispec.AnnotationTitle
	AnnotationVersion     = ocispec.AnnotationVersion
	AnnotationDescription = ocispec.AnnotationDescription
	AnnotationSource      = ocispec.AnnotationSource
	AnnotationRevision    = ocispec.AnnotationRevision
	AnnotationCreated     = ocispec.AnnotationCreated
	AnnotationRefName     = ocispec.AnnotationRefName
	// AnnotationORASUnpack is set by oras on a layer that holds a
	// directory tarball.
	AnnotationORASUnpack = "io.deis.oras.content.unpack"
	// AnnotationDockerReferenceType is set by BuildKit on the index entry
	// of an attestation manifest (DockerReferenceTypeAttestation).
	AnnotationDockerReferenceType = "vnd.docker.reference.type"
	// DockerReferenceTypeAttestation is AnnotationDockerReferenceType's
	// value on an attestation manifest.
	DockerReferenceTypeAttestation = "attestation-manifest"
	// AnnotationEstargzTOC is set on the descriptor of an eStargz layer
	// (the stargz snapshotter's, nerdctl's and ctr-remote's converters)
	// to the digest of its table of contents.
	AnnotationEstargzTOC = "containerd.io/snapshot/stargz/toc.digest"
)

// SpecVersion is the version of the add-on format that this package describes.
const SpecVersion = "v1"

// DefaultContentDir is the canonical content directory of the image form.
const DefaultContentDir = "/addon"

// Compression is how a layer's tar stream is compressed.
type Compression string

// Layer compressions.
const (
	None    Compression = "none"
	Gzip    Compression = "gzip"
	Zstd    Compression = "zstd"
	Unknown Compression = ""

	// Xz and Bzip2 compress archives (docker save | xz, which docker
	// load reads), never layers: the image specification has no such
	// layer media type, so a layer in them is refused.
	Xz    Compression = "xz"
	Bzip2 Compression = "bzip2"
)

// IsIndex reports whether mt is an OCI index or a Docker manifest list.
func IsIndex(mt MediaType) bool { return mt == OCIIndex || mt == DockerList }

// IsManifest reports whether mt is an OCI or Docker schema 2 image manifest.
func IsManifest(mt MediaType) bool { return mt == OCIManifest || mt == DockerManifest }

// IsImageConfig reports whether mt is the config of a container image
// (OCI or Docker), whose labels classification reads.
func IsImageConfig(mt MediaType) bool { return mt == OCIConfig || mt == DockerConfig }

// IsAddonContent reports whether mt is one of the artifact form's content layers.
func IsAddonContent(mt MediaType) bool {
	return mt == AddonContentGzip || mt == AddonContentZstd || mt == AddonContentTar
}

// IsImageLayer reports whether mt is a root filesystem layer of an OCI or
// Docker image.
func IsImageLayer(mt MediaType) bool {
	switch mt {
	case OCILayerTar, OCILayerGzip, OCILayerZstd, OCINondistTar, OCINondistGzip, OCINondistZstd,
		DockerLayerGzip, DockerLayerZstd, DockerLayerTar, DockerForeignGz:
		return true
	}
	return false
}

// LayerCompression tells from a layer media type how its tar is compressed.
// It returns Unknown for media types that are not tar layers; readers then
// detect the compression from the first bytes.
func LayerCompression(mt MediaType) Compression {
	s := string(mt)
	switch {
	case strings.HasSuffix(s, "+gzip"), strings.HasSuffix(s, ".tar.gzip"), strings.HasSuffix(s, ".gzip"):
		return Gzip
	case strings.HasSuffix(s, "+zstd"), strings.HasSuffix(s, ".tar.zstd"), strings.HasSuffix(s, ".zstd"):
		return Zstd
	case strings.HasSuffix(s, ".tar"), strings.HasSuffix(s, ".v1.tar"):
		return None
	}
	return Unknown
}

// DetectCompression tells a stream's compression from its first bytes
// (spec/addon-v1.md 9.3): 1F 8B is gzip, 28 B5 2F FD zstd, FD 37 7A 58
// 5A 00 xz, "BZh" with a block size digit and the magic of a first
// block ("1AY&SY") or of an empty stream bzip2, anything else an
// uncompressed tar. It needs DetectLen bytes to tell them all. The
// bzip2 test reads ten bytes, not docker's three, so that a tar whose
// first entry is named "BZh..." is still a tar.
func DetectCompression(head []byte) Compression {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return Gzip
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return Zstd
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return Xz
	case len(head) >= DetectLen && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.Equal(head[4:10], []byte("1AY&SY")) || bytes.Equal(head[4:10], []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90})):
		return Bzip2
	}
	return None
}

// DetectLen is how many first bytes DetectCompression needs.
const DetectLen = 10

// ContentLayer returns the artifact form's content layer media type for c.
func ContentLayer(c Compression) MediaType {
	switch c {
	case Zstd:
		return AddonContentZstd
	case None:
		return AddonContentTar
	}
	return AddonContentGzip
}

// ImageLayer returns the OCI image layer media type for c.
func ImageLayer(c Compression) MediaType {
	switch c {
	case Zstd:
		return OCILayerZstd
	case None:
		return OCILayerTar
	}
	return OCILayerGzip
}

// Form is the shape in which an add-on travels.
type Form string

// The forms a reader recognises.
const (
	// FormImage is an ordinary container image holding the add-on under its
	// content directory.
	FormImage Form = "image"
	// FormArtifact is addonpkg's OCI artifact.
	FormArtifact Form = "artifact"
	// FormFlux is a Flux OCI artifact (one tar+gzip content layer).
	FormFlux Form = "flux"
	// FormORAS is a file or directory artifact pushed by oras, whose layers
	// carry org.opencontainers.image.title.
	FormORAS Form = "oras"
	// FormOLM is an OLM bundle image.
	FormOLM Form = "olm-bundle"
	// FormHelm is a Helm chart pushed with `helm push`: not an add-on
	// addonpkg renders, but one whose files it can unpack.
	FormHelm Form = "helm-chart"
	// FormUnknown is none of the above.
	FormUnknown Form = "unknown"
)

// The forms of what travels beside an add-on and refers to it. A store
// or a registry holds them next to add-ons, so they are named for what
// they are; none is an add-on, and unpack refuses them.
const (
	// FormSignature is a cosign signature (tag sha256-HEX.sig).
	FormSignature Form = "signature"
	// FormAttestation is a cosign attestation (tag sha256-HEX.att), or
	// BuildKit's attestation manifest.
	FormAttestation Form = "attestation"
	// FormSBOM is an SBOM that cosign attached (tag sha256-HEX.sbom):
	// every layer one of SBOMTypes, no title.
	FormSBOM Form = "sbom"
	// FormImageLock is an image lock (spec/image-lock-v1.md).
	FormImageLock Form = "image-lock"
	// FormReferrer is any other manifest with a subject that no form
	// takes: what `oras attach` makes (an SBOM, a scan report), shaped
	// like an ORAS artifact but about another manifest (ClassifyManifest).
	FormReferrer Form = "referrer"
)

// IsReferrer says whether f is the form of something that refers to an
// add-on (a signature, an attestation, an SBOM, an image lock or another
// referrer), not an add-on.
func IsReferrer(f Form) bool {
	return f == FormSignature || f == FormAttestation || f == FormSBOM || f == FormImageLock || f == FormReferrer
}

// SBOMTypes are the layer media types of an SBOM as `cosign attach sbom`
// writes it at a sha256-HEX.sbom tag (its --type spdx, spdxjson,
// cyclonedx, syft, and the names of older cosign releases).
var SBOMTypes = []MediaType{
	"text/spdx", "text/spdx+json", "spdx+json", "application/spdx+json", "text/spdx+xml",
	"application/vnd.cyclonedx", "application/vnd.cyclonedx+json", "application/vnd.cyclonedx+xml",
	"application/vnd.syft+json",
}

// IsSBOM reports whether mt is one of SBOMTypes.
func IsSBOM(mt MediaType) bool { return slices.Contains(SBOMTypes, mt) }

// Layer is the part of a layer descriptor that classification needs.
type Layer struct {
	MediaType   MediaType
	Annotations map[string]string
}

// Classify tells the form of an image manifest from its config media type,
// its artifactType, its layers and, for the image form, the config's labels.
// It never fails: unknown shapes give FormUnknown.
func Classify(configType, artifactType MediaType, layers []Layer, labels map[string]string) Form {
	if configType == AddonConfig || artifactType == AddonConfig {
		return FormArtifact
	}
	if configType == FluxConfig || artifactType == FluxConfig {
		return FormFlux
	}
	if configType == HelmConfig || artifactType == HelmConfig || slices.ContainsFunc(layers, func(l Layer) bool { return l.MediaType == HelmChartContent }) {
		return FormHelm
	}
	allContent := len(layers) > 0
	for _, l := range layers {
		if !IsAddonContent(l.MediaType) {
			allContent = false
		}
	}
	if allContent {
		return FormArtifact
	}
	if len(layers) > 0 && allMatch(layers, func(l Layer) bool { return l.MediaType == FluxContentGzip }) {
		return FormFlux
	}
	if IsImageConfig(configType) {
		if _, ok := labels[LabelOLMManifests]; ok {
			return FormOLM
		}
		// A real image config describes a root filesystem, whoever pushed
		// it (oras names image layers by title too).
		if allMatch(layers, func(l Layer) bool { return IsImageLayer(l.MediaType) }) {
			return FormImage
		}
	}
	if hasTitles(layers) {
		return FormORAS
	}
	// Not an add-on (spec 10, rule 8): what refers to one is named for
	// what it is.
	switch {
	case artifactType == ImagesLock || configType == ImagesLock:
		return FormImageLock
	case len(layers) > 0 && allMatch(layers, func(l Layer) bool { return l.MediaType == CosignSimpleSigning }):
		return FormSignature
	case len(layers) > 0 && allMatch(layers, func(l Layer) bool { return l.MediaType == DSSEEnvelope || l.MediaType == InToto }):
		return FormAttestation
	case len(layers) > 0 && allMatch(layers, func(l Layer) bool { return IsSBOM(l.MediaType) }):
		return FormSBOM
	}
	return FormUnknown
}

func allMatch(layers []Layer, f func(Layer) bool) bool {
	for _, l := range layers {
		if !f(l) {
			return false
		}
	}
	return true
}

// hasTitles reports whether every layer is named by a title annotation, as
// oras names the files it pushes.
func hasTitles(layers []Layer) bool {
	if len(layers) == 0 {
		return false
	}
	for _, l := range layers {
		if l.Annotations[AnnotationTitle] == "" {
			return false
		}
	}
	return true
}
