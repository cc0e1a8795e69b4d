package vectorgen

import (
	"archive/tar"
	"bytes"
	"sort"
	"strings"
	"time"
)

// Media types, spelled out here so that the vectors do not depend on
// addonpkg's constants.
const (
	mtOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mtOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mtOCIConfig      = "application/vnd.oci.image.config.v1+json"
	mtOCILayerGzip   = "application/vnd.oci.image.layer.v1.tar+gzip"
	mtOCILayerZstd   = "application/vnd.oci.image.layer.v1.tar+zstd"
	mtOCILayer       = "application/vnd.oci.image.layer.v1.tar"
	mtDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mtDockerConfig   = "application/vnd.docker.container.image.v1+json"
	mtDockerLayer    = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	mtAddonConfig    = "application/vnd.cncf.addon.config.v1+json"
	mtAddonGzip      = "application/vnd.cncf.addon.content.v1.tar+gzip"
	mtAddonZstd      = "application/vnd.cncf.addon.content.v1.tar+zstd"
	mtAddonTar       = "application/vnd.cncf.addon.content.v1.tar"
)

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Platform     *platform         `json:"platform,omitempty"`
	ArtifactType string            `json:"artifactType,omitempty"`
}

type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType,omitempty"`
	ArtifactType  string            `json:"artifactType,omitempty"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Subject       *descriptor       `json:"subject,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type imageConfig struct {
	Created      string `json:"created"`
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Labels map[string]string `json:"Labels,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

type addonConfig struct {
	SpecVersion string `json:"specVersion"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Kind        string `json:"kind"`
	ContentRoot string `json:"contentRoot"`
	Identity    string `json:"identity"`
	Inventory   struct {
		Objects []object `json:"objects"`
	} `json:"inventory"`
}

// layer is one layer to build.
type layer struct {
	entries   []entry
	comp      compression
	mediaType string
	// tamper, when set, changes the stored blob after its descriptor is
	// made.
	tamper func([]byte) []byte
	// truncate, when set, cuts the blob before its descriptor is made.
	truncate bool
	// annotations go on the layer's descriptor in the manifest.
	annotations map[string]string
	// padTo, when set, pads the compressed blob with zeros to a multiple
	// of padTo bytes before its descriptor is made, as a tool that writes
	// whole blocks does.
	padTo int
}

// blobs is a content-addressed store being filled.
type blobs map[string][]byte

func (b blobs) put(mt string, data []byte) descriptor {
	dg := digestOf(data)
	b[dg] = data
	return descriptor{MediaType: mt, Digest: dg, Size: int64(len(data))}
}

// imageOpts shape an image-form image.
type imageOpts struct {
	docker   bool
	labels   map[string]string
	platform platform
	// diffIDs replaces the config's diff_ids.
	diffIDs []string
}

// putImage builds an image-form image into bs and returns its manifest
// descriptor.
func putImage(bs blobs, o imageOpts, layers ...layer) descriptor {
	var cfg imageConfig
	cfg.Created = "1970-01-01T00:00:00Z"
	cfg.Architecture, cfg.OS = "amd64", "linux"
	if o.platform.OS != "" {
		cfg.Architecture, cfg.OS = o.platform.Architecture, o.platform.OS
	}
	cfg.Config.Labels = o.labels
	cfg.RootFS.Type = "layers"
	m := manifest{SchemaVersion: 2, MediaType: mtOCIManifest}
	cfgType := mtOCIConfig
	if o.docker {
		m.MediaType, cfgType = mtDockerManifest, mtDockerConfig
	}
	cfg.RootFS.DiffIDs = []string{}
	for _, l := range layers {
		t := tarOf(l.entries)
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, digestOf(t))
		m.Layers = append(m.Layers, putLayer(bs, l, t, l.annotations))
	}
	if o.diffIDs != nil {
		cfg.RootFS.DiffIDs = o.diffIDs
	}
	m.Config = bs.put(cfgType, mustJSON(cfg))
	return bs.put(m.MediaType, mustJSON(m))
}

// putLayer compresses a layer's tar and stores it.
func putLayer(bs blobs, l layer, t []byte, ann map[string]string) descriptor {
	blob := compress(t, l.comp)
	if l.truncate {
		blob = blob[:len(blob)/2]
	}
	if l.padTo > 0 {
		blob = append(blob, make([]byte, (l.padTo-len(blob)%l.padTo)%l.padTo)...)
	}
	mt := l.mediaType
	if mt == "" {
		mt = map[compression]string{gz: mtOCILayerGzip, zst: mtOCILayerZstd, none: mtOCILayer}[l.comp]
	}
	desc := bs.put(mt, blob)
	desc.Annotations = ann
	if l.tamper != nil {
		bs[desc.Digest] = l.tamper(blob)
	}
	return desc
}

// artifactOpts shape an artifact-form add-on.
type artifactOpts struct {
	// config is the config blob; nil makes the config of a manifests
	// add-on named "demo" with the identity of tree.
	config []byte
	tree   []node
	// subject and annotations are added to the manifest.
	subject     *descriptor
	annotations map[string]string
}

// putArtifact builds an artifact-form add-on into bs, as addonpkg's
// writer lays it out (artifactType, oras layer annotations).
func putArtifact(bs blobs, o artifactOpts, layers ...layer) descriptor {
	cfg := o.config
	if cfg == nil {
		cfg = defaultConfig("demo", identity(o.tree))
	}
	m := manifest{
		SchemaVersion: 2, MediaType: mtOCIManifest, ArtifactType: mtAddonConfig,
		Config: bs.put(mtAddonConfig, cfg),
		Annotations: map[string]string{
			"org.opencontainers.image.title": "demo",
			"io.cncf.addon.name":             "demo",
			"io.cncf.addon.kind":             "manifests",
		},
	}
	m.Subject = o.subject
	for k, v := range o.annotations {
		m.Annotations[k] = v
	}
	for _, l := range layers {
		if l.mediaType == "" {
			l.mediaType = map[compression]string{gz: mtAddonGzip, zst: mtAddonZstd, none: mtAddonTar}[l.comp]
		}
		annotations := map[string]string{"org.opencontainers.image.title": ".", "io.deis.oras.content.unpack": "true"}
		for k, v := range l.annotations {
			annotations[k] = v
		}
		m.Layers = append(m.Layers, putLayer(bs, l, tarOf(l.entries), annotations))
	}
	return bs.put(m.MediaType, mustJSON(m))
}

// defaultConfig is the config document of a manifests add-on.
func defaultConfig(name, id string) []byte {
	c := addonConfig{SpecVersion: "v1", Name: name, Version: "1.0.0", Kind: "manifests", ContentRoot: "/", Identity: id}
	c.Inventory.Objects = []object{}
	return mustJSON(c)
}

// putIndex stores an index of manifests.
func putIndex(bs blobs, ms ...descriptor) descriptor {
	return bs.put(mtOCIIndex, mustJSON(index{SchemaVersion: 2, MediaType: mtOCIIndex, Manifests: ms}))
}

// file tree of an output: relative path -> bytes.
type files map[string][]byte

// layoutFiles is the OCI image layout holding bs with top tagged v1.
func layoutFiles(bs blobs, top descriptor) files {
	top.Annotations = map[string]string{"org.opencontainers.image.ref.name": "v1"}
	out := files{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}` + "\n"),
		"index.json": mustJSON(index{SchemaVersion: 2, MediaType: mtOCIIndex, Manifests: []descriptor{top}}),
	}
	for dg, b := range bs {
		out["blobs/sha256/"+strings.TrimPrefix(dg, "sha256:")] = b
	}
	return out
}

// tarFiles packs files (and their directories) into a tar, sorted, with
// zero owners and times.
func tarFiles(fs files) []byte {
	names := make([]string, 0, len(fs))
	dirs := map[string]bool{}
	for n := range fs {
		names = append(names, n)
		for i := range n {
			if n[i] == '/' {
				dirs[n[:i+1]] = true
			}
		}
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: n, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)}
		if !strings.HasSuffix(n, "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(fs[n]))
		}
		if err := tw.WriteHeader(h); err != nil {
			panic(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(fs[n]); err != nil {
				panic(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// dockerArchive is what `docker save` writes for one image of the image
// form: manifest.json, the config and uncompressed layer tars.
func dockerArchive(tag string, layers ...layer) []byte {
	var cfg imageConfig
	cfg.Created = "1970-01-01T00:00:00Z"
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{}
	fs := files{}
	var layerFiles []string
	for _, l := range layers {
		t := tarOf(l.entries)
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, digestOf(t))
		name := hexOf(t) + ".tar"
		fs[name] = t
		layerFiles = append(layerFiles, name)
	}
	c := mustJSON(cfg)
	cfgName := hexOf(c) + ".json"
	fs[cfgName] = c
	fs["manifest.json"] = mustJSON([]map[string]any{{"Config": cfgName, "RepoTags": []string{tag}, "Layers": layerFiles}})
	return tarFiles(fs)
}
