package mediatypes_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Sniff tells a manifest from an index by its own bytes, and refuses
// what is neither or disagrees with itself.
func TestSniff(t *testing.T) {
	cfg := `"config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":2,"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}`
	for _, c := range []struct {
		name, doc string
		want      types.MediaType // "" when it must fail with ErrNotManifest
	}{
		{"oci manifest", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` + cfg + `,"layers":[]}`, types.OCIManifestSchema1},
		{"oci manifest without mediaType", `{"schemaVersion":2,` + cfg + `,"layers":[]}`, types.OCIManifestSchema1},
		{"docker manifest", `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",` + cfg + `,"layers":[]}`, types.DockerManifestSchema2},
		{"oci index", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`, types.OCIImageIndex},
		{"oci index without mediaType", `{"schemaVersion":2,"manifests":[]}`, types.OCIImageIndex},
		{"docker list", `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json","manifests":[]}`, types.DockerManifestList},
		{"mediaType of no manifest", `{"schemaVersion":2,"mediaType":"text/plain",` + cfg + `}`, ""},
		{"index type with a config", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",` + cfg + `}`, ""},
		{"manifest type with manifests", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","manifests":[]}`, ""},
		{"both config and manifests", `{"schemaVersion":2,` + cfg + `,"manifests":[]}`, ""},
		{"neither", `{"schemaVersion":2}`, ""},
		{"not JSON", `text`, ""},
		{"a JSON string", `"application/vnd.oci.image.manifest.v1+json"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := mediatypes.Sniff([]byte(c.doc))
			if c.want == "" {
				if !errors.Is(err, mediatypes.ErrNotManifest) {
					t.Errorf("got %q, %v; want ErrNotManifest", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// The media type of a manifest comes from its bytes, whatever header
// came with it.
func ExampleSniff() {
	mt, err := mediatypes.Sniff([]byte(`{"schemaVersion":2,"manifests":[]}`))
	fmt.Println(mt, err)
	_, err = mediatypes.Sniff([]byte(`{"schemaVersion":2,"mediaType":"text/plain"}`))
	fmt.Println(errors.Is(err, mediatypes.ErrNotManifest))
	// Output:
	// application/vnd.oci.image.index.v1+json <nil>
	// true
}
