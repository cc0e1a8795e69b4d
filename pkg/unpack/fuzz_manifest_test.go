package unpack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/safetree"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// fuzzManifestImage serves fuzzed manifest and config bytes as an image; every
// blob the manifest names reads as the same small, empty tar.
type fuzzManifestImage struct {
	manifest, config []byte
}

func (r fuzzManifestImage) RawManifest() ([]byte, error)        { return r.manifest, nil }
func (r fuzzManifestImage) RawConfigFile() ([]byte, error)      { return r.config, nil }
func (r fuzzManifestImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (r fuzzManifestImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	return fuzzManifestBlob{h}, nil
}

type fuzzManifestBlob struct{ h v1.Hash }

func (b fuzzManifestBlob) Digest() (v1.Hash, error) { return b.h, nil }
func (b fuzzManifestBlob) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(make([]byte, 1024))), nil
}
func (b fuzzManifestBlob) Size() (int64, error)                { return 1024, nil }
func (b fuzzManifestBlob) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

// FuzzManifest feeds arbitrary manifest and config documents to the
// unpacker: decoding and classifying them must never panic, and a success
// must come with a tree.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":2,"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","size":1024,"digest":"sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"}]}`), []byte(`{}`))
	f.Add([]byte(`{"schemaVersion":2,"config":{"mediaType":"application/vnd.cncf.addon.config.v1+json","size":2,"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},"artifactType":"application/vnd.cncf.addon.config.v1+json","layers":[]}`), []byte(`{"specVersion":"v1","name":"x","kind":"manifests","identity":"sha256:0"}`))
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`), []byte(`null`))
	f.Add([]byte(`{"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","annotations":{"org.opencontainers.image.title":"../../x"},"digest":"sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef","size":1024}],"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2}}`), []byte(`{}`))
	f.Add([]byte(`not json`), []byte(`{"config":{"Labels":{"io.cncf.addon.content":"/../.."}}}`))
	f.Fuzz(func(t *testing.T, manifest, config []byte) {
		img, err := partial.CompressedToImage(fuzzManifestImage{manifest: manifest, config: config})
		if err != nil {
			return
		}
		a, err := unpack.Image(context.Background(), img, unpack.Options{Limits: safetree.Limits{MaxImageBytes: 1 << 20, MaxEntries: 100}})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			return
		}
		if a.FS == nil || a.Config == nil {
			t.Fatalf("success without a tree or config: %+v", a)
		}
	})
}
