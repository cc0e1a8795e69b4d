package pack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/archive"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// buildArtifact makes the artifact form: the config blob is the add-on
// config, the one layer holds the tree at its root.
func buildArtifact(layer *archive.Layer, cfg *addon.Config, opts Options) (v1.Image, error) {
	cfg.ContentRoot = "/"
	cfg.Identity = layer.Tar.Identity.String()
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	return NewArtifact(cfgJSON, []v1.Layer{layer}, Annotations(cfg, opts.Annotations))
}

// NewArtifact assembles an artifact-form image from a config document and
// content layers. go-containerregistry's mutate only knows image configs,
// so the manifest is built here from its typed structs.
func NewArtifact(config []byte, layers []v1.Layer, ann map[string]string) (v1.Image, error) {
	a := &artifact{config: config, layers: map[v1.Hash]v1.Layer{}}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  string(mediatypes.AddonConfig),
		Config: v1.Descriptor{
			MediaType: mediatypes.AddonConfig,
			Size:      int64(len(config)),
			Digest:    mustHash(config),
		},
		Layers:      []v1.Descriptor{},
		Annotations: ann,
	}
	for _, l := range layers {
		d, err := partial.Descriptor(l)
		if err != nil {
			return nil, fmt.Errorf("describe layer: %w", err)
		}
		// oras pulls only titled layers; "." with the unpack flag makes
		// `oras pull -o DIR` put the tree in DIR itself.
		d.Annotations = map[string]string{
			mediatypes.AnnotationTitle:      ".",
			mediatypes.AnnotationORASUnpack: "true",
		}
		m.Layers = append(m.Layers, *d)
		a.layers[d.Digest] = l
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	a.manifest = raw
	return partial.CompressedToImage(a)
}

func mustHash(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}

// artifact is the core partial.CompressedToImage fills out.
type artifact struct {
	config   []byte
	manifest []byte
	layers   map[v1.Hash]v1.Layer
}

func (a *artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := a.layers[h]; ok {
		return l, nil
	}
	if h == mustHash(a.config) {
		return configBlob{a.config, h}, nil
	}
	return nil, fmt.Errorf("artifact has no blob %s", h)
}

// configBlob serves the config through LayerByDigest, as remote.Write asks.
type configBlob struct {
	b []byte
	h v1.Hash
}

func (c configBlob) Digest() (v1.Hash, error) { return c.h, nil }
func (c configBlob) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(c.b)), nil
}
func (c configBlob) Size() (int64, error) { return int64(len(c.b)), nil }
func (c configBlob) MediaType() (types.MediaType, error) {
	return mediatypes.AddonConfig, nil
}
