package vectorgen

import (
	"archive/tar"
	"strings"

	"github.com/addonpkg/addonpkg/internal/conformance"
)

// vector is one conformance vector: its input and the result the spec
// gives for it.
type vector struct {
	name string
	// pins is the section of spec/addon-v1.md the vector pins.
	pins string
	// about says what it checks, in one line.
	about string
	// input builds the vector's input.
	input func() output
	want  conformance.Result
}

// output is a vector's input: an OCI image layout, or an archive file.
type output struct {
	layout  files
	archive []byte
}

const (
	nsYAML = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"
	cmYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\ndata:\n  level: info\n"
)

// demo is the small add-on most vectors carry.
var demo = []node{f("config/settings.yaml", cmYAML), f("namespace.yaml", nsYAML)}

// exeTree is an add-on with an executable file, for the mode vectors.
var exeTree = []node{fx("bin/check.sh", "#!/bin/sh\nexit 0\n"), f("namespace.yaml", nsYAML)}

// estargzTOC stands for an eStargz table of contents: its bytes do not
// matter to a reader, only that the layer says it has one.
const estargzTOC = `{"version":1,"entries":[]}`

// estargzAnnotation is what an eStargz converter puts on a layer.
var estargzAnnotation = map[string]string{"containerd.io/snapshot/stargz/toc.digest": digestOf([]byte(estargzTOC))}

// estargzNamed is the demo add-on with files named as eStargz's own
// entries, which are files like any other outside an image layer.
var estargzNamed = withDemo(f(".no.prefetch.landmark", "\x0f"), f("stargz.index.json", estargzTOC))

// withDemo is the demo add-on with extra nodes before its own.
func withDemo(extra ...node) []node { return append(append([]node(nil), extra...), demo...) }

func refuse(reason string) conformance.Result {
	return conformance.Result{Result: conformance.ResultRefuse, Reason: reason}
}

// minimal is the config a third party writes by hand.
const minimalConfig = `{"name":"coredns","version":"1.11.3"}`

// all lists every vector, in the order of the spec sections they pin.
// One vector is two lines, what it is and how it is made: the
// constructions the vectors share are the builders of inputs.go, and a
// vector's own is a named function there.
func all() []vector {
	return []vector{
		// Forms and compression (sections 4, 5, 9.3).
		{name: "image-gzip", pins: "4.1", about: "the image form: one gzip layer holding the tree under addon/",
			input: image(imageOpts{}, under(gz, demo)), want: expectOK("image", demo)},
		{name: "image-zstd", pins: "9.3", about: "the image form with a zstd layer",
			input: image(imageOpts{}, under(zst, demo)), want: expectOK("image", demo)},
		{name: "image-uncompressed", pins: "9.3", about: "the image form with an uncompressed layer",
			input: image(imageOpts{}, under(none, demo)), want: expectOK("image", demo)},
		{name: "image-docker-schema2", pins: "4.1", about: "the image form as a Docker schema 2 image (Docker manifest, config and layer media types)",
			input: image(imageOpts{docker: true}, layer{entries: prefixed("addon", demo), comp: gz, mediaType: mtDockerLayer}), want: expectOK("image", demo)},
		{name: "image-docker-uncompressed", pins: "9.3", about: "a Docker schema 2 image with an uncompressed layer (application/vnd.docker.image.rootfs.diff.tar, as BuildKit writes compression=uncompressed without OCI media types)",
			input: image(imageOpts{docker: true}, layer{entries: prefixed("addon", demo), comp: none, mediaType: "application/vnd.docker.image.rootfs.diff.tar"}), want: expectOK("image", demo)},
		{name: "image-docker-archive", pins: "4.1", about: "the image form in a docker-archive (docker save) file",
			input: dockerSaved, want: expectOK("image", demo)},
		{name: "image-media-type-contradicted", pins: "9.3", about: "a layer typed +gzip whose bytes are an uncompressed tar: decoded by its magic bytes",
			input: image(imageOpts{}, layer{entries: prefixed("addon", demo), comp: none, mediaType: mtOCILayerGzip}), want: expectOK("image", demo)},
		{name: "image-gzip-zero-padding", pins: "9.3", about: "a gzip layer padded with zeros to a 10240-byte record after its stream (the blob's digest and size count the zeros): the zeros end the stream, as for gzip -d",
			input: image(imageOpts{}, layer{entries: prefixed("addon", demo), comp: gz, padTo: 10240}), want: expectOK("image", demo)},
		{name: "image-outside-content-ignored", pins: "4.4", about: "entries outside /addon are ignored: not in the tree, not in the identity",
			input: image(imageOpts{}, layer{comp: gz, entries: append(es(dir("etc/"), file("etc/os-release", "ID=scratch\n"), file("addon.yaml", nsYAML)), prefixed("addon", demo)...)}), want: expectOK("image", demo)},
		{name: "artifact-gzip", pins: "5", about: "the artifact form: one gzip content layer holding the tree at its root; same identity as image-gzip",
			input: artifact(artifactOpts{tree: demo}, at(gz, demo)), want: expectOK("artifact", demo)},
		{name: "artifact-zstd", pins: "9.3", about: "the artifact form with a zstd content layer",
			input: artifact(artifactOpts{tree: demo}, at(zst, demo)), want: expectOK("artifact", demo)},
		{name: "artifact-uncompressed", pins: "9.3", about: "the artifact form with an uncompressed content layer",
			input: artifact(artifactOpts{tree: demo}, at(none, demo)), want: expectOK("artifact", demo)},
		{name: "artifact-oci-archive", pins: "5", about: "the artifact form in an oci-archive file (a tar of an OCI image layout)",
			input: ociArchived, want: expectOK("artifact", demo)},
		{name: "artifact-implied-dirs", pins: "5", about: "an artifact whose directories are implied by its file names, which start with ./",
			input: artifact(artifactOpts{tree: demo}, layer{comp: gz, entries: es(file("./namespace.yaml", nsYAML), file("./config/settings.yaml", cmYAML))}), want: expectOK("artifact", demo)},
		{name: "artifact-patch-layer", pins: "5", about: "an artifact with a second layer that changes one file, adds one and whites one out",
			input: patched, want: expectOK("artifact", patchedTree)},
		{name: "artifact-minimal-config", pins: "6.5", about: "a third-party artifact whose config gives only name and version: the rest is derived from the content",
			input: withConfig([]byte(minimalConfig)), want: expectOK("artifact", demo)},
		{name: "content-dir-label", pins: "4.3", about: "an image whose io.cncf.addon.content label names /manifests: that is the tree, /addon is ignored",
			input: labelled("/manifests", "manifests", "addon"), want: expectOK("image", demo)},
		{name: "estargz-metadata-ignored", pins: "4.4", about: "an image whose content directory is / and whose layer says it is eStargz (containerd.io/snapshot/stargz/toc.digest): its .no.prefetch.landmark and stargz.index.json at the layer root are not files of the tree",
			input: image(imageOpts{labels: map[string]string{"io.cncf.addon.content": "/"}}, layer{comp: gz, annotations: estargzAnnotation,
				entries: append(append(es(file(".no.prefetch.landmark", "\x0f")), prefixed("", demo)...), file("stargz.index.json", estargzTOC))}), want: expectOK("image", demo)},
		{name: "artifact-estargz-names-kept", pins: "4.4", about: "an artifact whose content layer carries the eStargz annotation: eStargz extends image layers only, so its .no.prefetch.landmark and stargz.index.json are files of the tree",
			input: artifact(artifactOpts{tree: estargzNamed}, layer{comp: gz, annotations: estargzAnnotation, entries: prefixed("", estargzNamed)}), want: expectOK("artifact", estargzNamed)},
		{name: "index-platforms", pins: "9.1", about: "an index with linux/amd64 and linux/arm64 entries of different trees: the requested linux/amd64 one is read",
			input: twoPlatforms, want: expectOK("image", demo)},
		{name: "image-foreign-platform-config", pins: "4.2", about: "an image reached without an index whose config says linux/s390x: its platform fields are ignored",
			input: image(imageOpts{platform: platform{Architecture: "s390x", OS: "linux"}}, under(gz, demo)), want: expectOK("image", demo)},
		{name: "content-label-relative", pins: "4.3", about: "an io.cncf.addon.content label without a leading / (as OLM writes its label) is taken from the root: manifests is /manifests",
			input: labelled("manifests/", "manifests", "addon"), want: expectOK("image", demo)},
		{name: "content-label-empty", pins: "4.3", about: "an empty io.cncf.addon.content label is absent: the content directory is /addon",
			input: labelled("", "addon", "manifests"), want: expectOK("image", demo)},
		{name: "image-stale-labels", pins: "4.5", about: "an image whose identity and config labels describe another tree: the labels are stale, the add-on is read from its content",
			input: image(imageOpts{labels: labelsOf([]node{f("old.yaml", nsYAML)})}, under(gz, demo)), want: expectOK("image", demo)},
		{name: "artifact-subject-ignored", pins: "5", about: "an artifact manifest with a subject: readers ignore it",
			input: artifact(artifactOpts{tree: demo, subject: &descriptor{MediaType: mtOCIManifest, Digest: digestOf([]byte("some other manifest")), Size: 19}}, at(gz, demo)), want: expectOK("artifact", demo)},
		{name: "artifact-null-inventory", pins: "6.2", about: "an artifact whose config has null inventory arrays, which readers take as empty",
			input: withConfig(configOf(demo, `"objects":[]`, `"objects":null,"crds":null,"images":null`)), want: expectOK("artifact", demo)},
		{name: "artifact-inventory-differs", pins: "6.4", about: "an artifact whose inventory lists an object its tree does not render: readers do not refuse it for that",
			input: withConfig(configOf(demo, `"objects":[]`, `"objects":[{"apiVersion":"apps/v1","kind":"Deployment","name":"ghost","namespace":"demo"}]`)), want: expectOK("artifact", demo)},
		{name: "artifact-unknown-fields", pins: "6.5", about: "unknown fields in the config (at every level), unknown manifest annotations: ignored",
			input: artifact(artifactOpts{config: configOf(demo, `"objects":[]`, `"objects":[],"future":{"x":1}`, `{"specVersion"`, `{"futureField":[1,2],"specVersion"`), annotations: map[string]string{"com.example.future": "yes"}}, at(gz, demo)), want: expectOK("artifact", demo)},
		{name: "artifact-content-root-ignored", pins: "6.5", about: "an artifact whose config says contentRoot /addon: the layer root is the content root all the same",
			input: withConfig(configOf(demo, `"contentRoot":"/"`, `"contentRoot":"/addon"`)), want: expectOK("artifact", demo)},
		// Changesets (section 4.4).
		{name: "whiteout-multilayer", pins: "4.4 item 4", about: "whiteouts in an upper layer remove a file and a whole directory of lower layers",
			input: changeset(withDemo(f("old/a.yaml", nsYAML), f("old/sub/b.yaml", nsYAML), f("gone.yaml", nsYAML)), whiteout("addon/", "old"), whiteout("addon/", "gone.yaml")), want: expectOK("image", demo)},
		{name: "opaque-dir", pins: "4.4 item 5", about: "an opaque marker hides what lower layers put in its directory, not what its own layer adds",
			input: changeset([]node{f("config/a.yaml", nsYAML), f("config/b.yaml", nsYAML), f("namespace.yaml", nsYAML)}, dir("addon/config/"), opaque("addon/config/"), file("addon/config/settings.yaml", cmYAML)), want: expectOK("image", demo)},
		{name: "whiteout-same-layer-readd", pins: "4.4 item 6", about: "a layer that re-adds a file and whites it out keeps its own file: whiteouts only reach lower layers",
			input: changeset([]node{f("config/settings.yaml", "old: true\n"), f("namespace.yaml", nsYAML)}, dir("addon/config/"), file("addon/config/settings.yaml", cmYAML), whiteout("addon/config/", "settings.yaml")), want: expectOK("image", demo)},
		{name: "same-path-twice", pins: "4.4 item 3", about: "the same file twice in one layer: the later entry wins",
			input: oneLayer(demo, file("addon/namespace.yaml", "first: true\n"), file("addon/namespace.yaml", nsYAML)), want: expectOK("image", demo)},
		{name: "same-path-dir-then-file", pins: "4.4 item 3", about: "a directory with a file, then a file at the directory's path, in one layer: the file wins, the directory's contents go",
			input: oneLayer(demo, dir("addon/extra/"), file("addon/extra/x.yaml", nsYAML), file("addon/extra", "now a file\n")), want: expectOK("image", withDemo(f("extra", "now a file\n")))},
		{name: "wh-named-directory", pins: "4.4 item 7", about: "a directory named .wh.old is a whiteout of old: it and the files below it are not part of the tree",
			input: changeset(withDemo(f("old/a.yaml", nsYAML)), dir("addon/.wh.old/"), file("addon/.wh.old/inner.yaml", nsYAML)), want: expectOK("image", demo)},
		{name: "aufs-metadata-ignored", pins: "4.4", about: "AUFS's .wh..wh.plnk directory and the files it holds are ignored",
			input: oneLayer(demo, dir("addon/.wh..wh.plnk/"), file("addon/.wh..wh.plnk/1234.5678", "aufs\n")), want: expectOK("image", demo)},
		{name: "hardlink", pins: "4.4 item 8", about: "a hard link to a file of the same layer is a regular file with the target's bytes",
			input: oneLayer(demo, hardlink("addon/copy.yaml", "addon/namespace.yaml")), want: expectOK("image", withDemo(f("copy.yaml", nsYAML)))},
		{name: "hardlink-mode", pins: "4.4 item 8", about: "a hard link (header mode 0644) to an executable file has the target's mode, 0755",
			input: oneLayer(exeTree, entry{name: "addon/bin/check-copy.sh", typ: tar.TypeLink, link: "addon/bin/check.sh", mode: 0o644}), want: expectOK("image", append([]node{fx("bin/check-copy.sh", "#!/bin/sh\nexit 0\n")}, exeTree...))},
		{name: "executable-mode", pins: "7.2", about: "only the execute bits of a file's mode count: 0700 reads as 0755, 0600 as 0644",
			input: oneLayer(demo, entry{name: "addon/run.sh", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o700}, entry{name: "addon/secret.yaml", typ: tar.TypeReg, body: nsYAML, mode: 0o600}), want: expectOK("image", withDemo(fx("run.sh", "#!/bin/sh\n"), f("secret.yaml", nsYAML)))},
		{name: "symlink", pins: "9.4", about: "a symbolic link inside the tree is kept as a link, with its target as stored",
			input: oneLayer(withDemo(l("settings.yaml", "config/settings.yaml"))), want: expectOK("image", withDemo(l("settings.yaml", "config/settings.yaml")))},
		{name: "symlink-chain-inside", pins: "9.4", about: "a link through another link that stays inside the tree is accepted",
			input: oneLayer(withDemo(l("config/up", ".."), l("ns.yaml", "config/up/namespace.yaml"))), want: expectOK("image", withDemo(l("config/up", ".."), l("ns.yaml", "config/up/namespace.yaml")))},
		{name: "empty-directory", pins: "7.2", about: "an empty directory is part of the tree and of its identity",
			input: oneLayer(withDemo(d("empty"))), want: expectOK("image", withDemo(d("empty")))},
		// Refusals (section 9).
		{name: "refuse-absolute-path", pins: "9.4", about: "an entry whose name is absolute",
			input: oneLayer(demo, file("/addon/abs.yaml", nsYAML)), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-traversal", pins: "9.4", about: "an entry whose name climbs out of the root with ..",
			input: oneLayer(demo, file("addon/../../etc/passwd", "root:x:0:0\n")), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-dotdot-segment", pins: "9.4", about: "an entry with a .. segment, even one that would resolve inside the tree",
			input: oneLayer(demo, file("addon/config/../extra.yaml", nsYAML)), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-through-symlink", pins: "9.4", about: "an entry placed through a symbolic link of the same layer",
			input: oneLayer(demo, symlink("addon/cfg", "config"), file("addon/cfg/x.yaml", nsYAML)), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-symlink-absolute", pins: "9.4", about: "a symbolic link to an absolute path",
			input: oneLayer(demo, symlink("addon/passwd", "/etc/passwd")), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-non-utf8-name", pins: "9.4", about: "a file whose name is not valid UTF-8 (Latin-1 caf\\xe9.yaml)",
			input: oneLayer(withDemo(f("caf\xe9.yaml", nsYAML))), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-symlink-empty", pins: "9.4", about: "a symbolic link with an empty target",
			input: oneLayer(demo, symlink("addon/nowhere", "")), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-symlink-out", pins: "9.4", about: "a symbolic link that leads out of the tree",
			input: oneLayer(demo, symlink("addon/config/etc", "../../etc")), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-symlink-chain-out", pins: "9.4", about: "a link that stays inside when read alone, but leads out through another link (config/up -> ..)",
			input: oneLayer(demo, symlink("addon/config/up", ".."), symlink("addon/escape", "config/up/..")), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-symlink-loop", pins: "9.4", about: "two symbolic links that point at each other and so never resolve",
			input: oneLayer(demo, symlink("addon/a.yaml", "b.yaml"), symlink("addon/b.yaml", "a.yaml")), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-hardlink-out", pins: "9.4", about: "a hard link to a file outside the content directory",
			input: image(imageOpts{}, layer{comp: gz, entries: append(es(dir("etc/"), file("etc/passwd", "root:x:0:0\n")), append(prefixed("addon", demo), hardlink("addon/passwd", "etc/passwd"))...)}), want: refuse(conformance.ReasonLinkEscape)},
		{name: "refuse-char-device", pins: "9.4", about: "a character device in the tree",
			input: oneLayer(demo, special("addon/null", tar.TypeChar)), want: refuse(conformance.ReasonEntryType)},
		{name: "refuse-fifo", pins: "9.4", about: "a FIFO in the tree",
			input: oneLayer(demo, special("addon/pipe", tar.TypeFifo)), want: refuse(conformance.ReasonEntryType)},
		{name: "refuse-digest-mismatch", pins: "9.2", about: "a layer blob whose bytes are not those its descriptor's digest names (same size)",
			input: artifact(artifactOpts{tree: demo}, layer{comp: none, entries: prefixed("", demo), tamper: warnLevel}), want: refuse(conformance.ReasonDigestMismatch)},
		{name: "refuse-size-mismatch", pins: "9.2", about: "a layer descriptor whose size is one byte more than the blob (the digest matches the bytes)",
			input: sizeOneMore, want: refuse(conformance.ReasonDigestMismatch)},
		{name: "refuse-diffid-count", pins: "9.3", about: "an image whose config lists two DiffIDs for its one layer",
			input: image(imageOpts{diffIDs: []string{digestOf(tarOf(prefixed("addon", demo))), digestOf([]byte("another layer"))}}, under(gz, demo)), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-diffid-mismatch", pins: "9.3", about: "an image whose config names another DiffID than the layer's",
			input: image(imageOpts{diffIDs: []string{digestOf([]byte("another layer"))}}, under(gz, demo)), want: refuse(conformance.ReasonDigestMismatch)},
		{name: "refuse-truncated-layer", pins: "9.3", about: "a gzip content layer cut in half (its descriptor describes the cut blob)",
			input: artifact(artifactOpts{tree: demo}, layer{comp: gz, entries: prefixed("", withDemo(f("big.yaml", strings.Repeat("# padding line\n", 400)))), truncate: true}), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-xz-layer", pins: "9.3", about: "a layer typed +gzip whose bytes are xz (docker load reads xz archives, but no layer media type is xz): refused as a layer that does not decode, not read as a tar",
			input: image(imageOpts{}, layer{entries: prefixed("addon", demo), comp: xzc, mediaType: mtOCILayerGzip}), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-entry-limit", pins: "9.5", about: "100,001 tar entries (outside the content directory), over the default limit of 100,000",
			input: oneLayer(demo, entry{name: "junk", typ: tar.TypeReg, count: 100_001}), want: refuse(conformance.ReasonLimit)},
		{name: "refuse-spec-version", pins: "12", about: "an artifact whose config says specVersion v2",
			input: withConfig(configOf(demo, `"specVersion":"v1"`, `"specVersion":"v2"`)), want: refuse(conformance.ReasonUnsupportedVersion)},
		{name: "refuse-identity-mismatch", pins: "9.6", about: "an artifact whose config states the identity of another tree",
			input: withConfig(configOf([]node{f("other.yaml", nsYAML)})), want: refuse(conformance.ReasonIdentityMismatch)},
		{name: "refuse-config-not-json", pins: "6.5", about: "an artifact whose config blob is not a JSON object",
			input: withConfig([]byte(`{"specVersion":"v1","name":"demo"`)), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-kind-mismatch", pins: "6.3", about: "an artifact whose config says kustomize for a tree without a kustomization",
			input: withConfig(configOf(demo, `"kind":"manifests"`, `"kind":"kustomize"`)), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-unknown-layer-type", pins: "5", about: "an artifact with a content layer of a media type the format does not define",
			input: artifact(artifactOpts{tree: demo}, layer{comp: gz, entries: prefixed("", demo), mediaType: "application/vnd.cncf.addon.content.v1.tar+bzip2"}), want: refuse(conformance.ReasonUnsupportedType)},
		{name: "refuse-no-content-dir", pins: "4.3", about: "an image without /addon and without a content label",
			input: image(imageOpts{}, layer{comp: gz, entries: prefixed("manifests", demo)}), want: refuse(conformance.ReasonNoContent)},
		{name: "refuse-content-label-dotdot", pins: "4.3", about: "an io.cncf.addon.content label with a .. segment",
			input: image(imageOpts{labels: map[string]string{"io.cncf.addon.content": "/addon/../etc"}}, layer{comp: gz, entries: append(prefixed("etc", demo), prefixed("addon", demo)...)}), want: refuse(conformance.ReasonPathEscape)},
		{name: "refuse-config-unknown-kind", pins: "6.5", about: "an artifact whose config names a kind other than manifests and kustomize",
			input: withConfig(configOf(demo, `"kind":"manifests"`, `"kind":"helm"`)), want: refuse(conformance.ReasonMalformed)},
		{name: "refuse-index-depth", pins: "9.1", about: "an index nested ten levels deep: readers bound the nesting of indexes",
			input: nestedIndexes, want: refuse(conformance.ReasonUnsupportedType)},
		{name: "refuse-no-platform", pins: "9.1", about: "an index with linux/arm64 and linux/s390x entries only, read for linux/amd64",
			input: foreignPlatforms, want: refuse(conformance.ReasonNoPlatform)},
		{name: "refuse-oras-referrer", pins: "10", about: "what oras attach makes of an SBOM: titled layers like an ORAS artifact's, and a subject, the demo add-on",
			input: orasAttached, want: refuse(conformance.ReasonUnsupportedType)},
	}
}
