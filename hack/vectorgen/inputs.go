package vectorgen

import "strings"

// The builders of vectors' inputs. Each returns a func, not the bytes:
// all() lists every vector for Pins() too, and only Generate pays for
// making them (the entry-limit vector alone is 100,001 tar entries).

// image is a layout holding one image-form image.
func image(o imageOpts, ls ...layer) func() output {
	return func() output {
		bs := blobs{}
		return output{layout: layoutFiles(bs, putImage(bs, o, ls...))}
	}
}

// artifact is a layout holding one artifact-form add-on.
func artifact(o artifactOpts, ls ...layer) func() output {
	return func() output {
		bs := blobs{}
		return output{layout: layoutFiles(bs, putArtifact(bs, o, ls...))}
	}
}

// under is a layer of the tree below addon/, the image form's default.
func under(c compression, tree []node) layer { return layer{entries: prefixed("addon", tree), comp: c} }

// at is a layer of the tree at the root, the artifact form's layout.
func at(c compression, tree []node) layer { return layer{entries: prefixed("", tree), comp: c} }

// es is shorthand for a layer's entries.
func es(e ...entry) []entry { return e }

// oneLayer is the image form with one gzip layer: tree below addon/,
// then the extra entries that a tree cannot say (two entries at one
// path, links that escape, devices), in the same layer.
func oneLayer(tree []node, extra ...entry) func() output {
	return image(imageOpts{}, layer{comp: gz, entries: append(prefixed("addon", tree), extra...)})
}

// changeset is the image form with the lower tree below addon/ in one
// gzip layer and an upper gzip layer of addon/ and the entries that
// change it (whiteouts, opaque markers, re-added files).
func changeset(lower []node, upper ...entry) func() output {
	return image(imageOpts{}, under(gz, lower), layer{comp: gz, entries: append(es(dir("addon/")), upper...)})
}

// labelled is an image whose io.cncf.addon.content label is label, with
// the demo add-on below contentDir and another tree below otherDir, in
// that order: a reader that takes the wrong directory reads other.yaml.
func labelled(label, contentDir, otherDir string) func() output {
	other := []node{f("other.yaml", nsYAML)}
	return image(imageOpts{labels: map[string]string{"io.cncf.addon.content": label}},
		layer{comp: gz, entries: append(prefixed(contentDir, demo), prefixed(otherDir, other)...)})
}

// labelsOf are the identity and config labels an image of tree would
// carry (its config as the image form's, contentRoot /addon).
func labelsOf(tree []node) map[string]string {
	return map[string]string{
		"io.cncf.addon.identity": identity(tree),
		"io.cncf.addon.config":   string(configOf(tree, `"contentRoot":"/"`, `"contentRoot":"/addon"`)),
	}
}

// withConfig is the demo add-on in the artifact form with cfg as its
// config blob.
func withConfig(cfg []byte) func() output {
	return artifact(artifactOpts{config: cfg}, at(gz, demo))
}

// configOf is the default config of tree with edits, pairs of old and
// new text, each replacing the first old in turn: the vectors of config
// fields change one field of a config that is otherwise right.
func configOf(tree []node, edits ...string) []byte {
	if len(edits)%2 != 0 {
		panic("configOf: an old text without its new one")
	}
	c := string(defaultConfig("demo", identity(tree)))
	for i := 0; i < len(edits); i += 2 {
		c = strings.Replace(c, edits[i], edits[i+1], 1)
	}
	return []byte(c)
}

// dockerSaved is the demo add-on as `docker save` writes it.
func dockerSaved() output {
	return output{archive: dockerArchive("example.com/vectors/demo:v1", under(none, demo))}
}

// ociArchived is the demo artifact's layout as one oci-archive file.
func ociArchived() output {
	bs := blobs{}
	return output{archive: tarFiles(layoutFiles(bs, putArtifact(bs, artifactOpts{tree: demo}, at(gz, demo))))}
}

// debugYAML is cmYAML at level debug.
var debugYAML = strings.Replace(cmYAML, "info", "debug", 1)

// patchedTree is what patched reads as: settings.yaml at level debug,
// extra.yaml added, namespace.yaml whited out.
var patchedTree = []node{f("config/settings.yaml", debugYAML), f("extra.yaml", cmYAML)}

// patched is the demo artifact with a second layer that makes it
// patchedTree.
func patched() output {
	bs := blobs{}
	return output{layout: layoutFiles(bs, putArtifact(bs, artifactOpts{tree: patchedTree},
		at(gz, demo),
		layer{comp: gz, entries: es(file("config/settings.yaml", debugYAML), file("extra.yaml", cmYAML), whiteout("", "namespace.yaml"))}))}
}

// twoPlatforms is an index of the demo add-on for linux/amd64 and
// another tree for linux/arm64.
func twoPlatforms() output {
	bs := blobs{}
	arm := platformImage(bs, "arm64", []node{f("arm64.yaml", nsYAML)})
	amd := platformImage(bs, "amd64", demo)
	return output{layout: layoutFiles(bs, putIndex(bs, arm, amd))}
}

// foreignPlatforms is an index of the demo add-on for linux/arm64 and
// linux/s390x only.
func foreignPlatforms() output {
	bs := blobs{}
	var ms []descriptor
	for _, arch := range []string{"arm64", "s390x"} {
		ms = append(ms, platformImage(bs, arch, demo))
	}
	return output{layout: layoutFiles(bs, putIndex(bs, ms...))}
}

// platformImage puts the image of tree for linux/arch into bs, its
// config and its descriptor (the index entry) naming that platform.
func platformImage(bs blobs, arch string, tree []node) descriptor {
	p := platform{Architecture: arch, OS: "linux"}
	desc := putImage(bs, imageOpts{platform: p}, under(gz, tree))
	desc.Platform = &p
	return desc
}

// nestedIndexes is the demo image below ten indexes, one in the other.
func nestedIndexes() output {
	bs := blobs{}
	top := putImage(bs, imageOpts{}, under(gz, demo))
	for range 10 {
		top.Platform = &platform{Architecture: "amd64", OS: "linux"}
		top = putIndex(bs, top)
	}
	return output{layout: layoutFiles(bs, top)}
}

// sizeOneMore is the demo artifact whose manifest says its layer is one
// byte larger than it is.
func sizeOneMore() output {
	bs := blobs{}
	top := putArtifact(bs, artifactOpts{tree: demo}, at(gz, demo))
	var m manifest
	mustUnmarshal(bs[top.Digest], &m)
	m.Layers[0].Size++
	delete(bs, top.Digest)
	return output{layout: layoutFiles(bs, bs.put(mtOCIManifest, mustJSON(m)))}
}

// warnLevel tampers with a layer blob: level: info becomes level: warn,
// the same size, so only the digest tells.
func warnLevel(b []byte) []byte {
	out := append([]byte{}, b...)
	i := strings.Index(string(out), "level: info")
	copy(out[i:], "level: warn")
	return out
}

// orasAttached is the manifest `oras attach --artifact-type
// application/spdx+json LAYOUT@DEMO sbom.spdx.json` writes (oras 1.3):
// the empty config, the file as one layer titled with its name, and the
// demo artifact, in the same layout, as its subject. The tag v1 names the
// referrer, as if it were the add-on.
func orasAttached() output {
	bs := blobs{}
	subject := putArtifact(bs, artifactOpts{tree: demo}, at(gz, demo))
	sbom := bs.put("application/vnd.oci.image.layer.v1.tar", []byte(`{"spdxVersion":"SPDX-2.3","name":"demo"}`))
	sbom.Annotations = map[string]string{"org.opencontainers.image.title": "sbom.spdx.json"}
	m := manifest{
		SchemaVersion: 2, MediaType: mtOCIManifest, ArtifactType: "application/spdx+json",
		Config:      bs.put("application/vnd.oci.empty.v1+json", []byte("{}")),
		Layers:      []descriptor{sbom},
		Subject:     &subject,
		Annotations: map[string]string{"org.opencontainers.image.created": "1970-01-01T00:00:00Z"},
	}
	return output{layout: layoutFiles(bs, bs.put(mtOCIManifest, mustJSON(m)))}
}
