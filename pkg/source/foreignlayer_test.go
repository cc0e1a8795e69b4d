package source_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/unpack"
)

// An image with a foreign layer (a Windows base's, in Docker's
// rootfs.foreign media type, or OCI's non-distributable one) names urls
// where that layer lives, and a registry need not hold its blob (crane
// and docker push leave it out). go-containerregistry fetched it from
// those urls, so an image chose the hosts addonpkg connected to
// (spec/addon-v1.md 9.2: readers do not, unless the user allows it).
// Now a foreign layer is read from the registry only: one the registry
// holds unpacks, one it lacks is refused, typed, in one line naming the
// urls, with nothing fetched from them and nothing written.
func TestForeignLayerNeverFetchedFromItsURLs(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(elsewhere.Close)
	// "localhost", not 127.0.0.1: go-containerregistry refuses a private
	// IP address in a foreign url, not a host name.
	base := "http://localhost:" + strconv.Itoa(elsewhere.Listener.Addr().(*net.TCPAddr).Port)
	r := testregistry.Start(t, testregistry.Options{ForeignURLs: []string{"^http://localhost:"}})

	for i, mt := range []types.MediaType{types.DockerForeignLayer, "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip"} {
		foreign := gzipLayer(t, map[string]string{"Files/License.txt": "windows"}, mt)
		fd, err := foreign.Digest()
		if err != nil {
			t.Fatal(err)
		}
		url := base + "/foreign/" + fd.Hex
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		img, err = mutate.Append(img,
			mutate.Addendum{Layer: foreign, MediaType: mt, URLs: []string{url}},
			mutate.Addendum{Layer: gzipLayer(t, map[string]string{"addon/cm.yaml": configMapYAML}, types.OCILayer), MediaType: types.OCILayer},
		)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(mt), func(t *testing.T) {
			// A repository each: once a repository holds the foreign
			// blob, every image of it reads it.
			repo := r.Host + "/addons/foreign-" + strconv.Itoa(i)
			lacking := repo + ":lacking"
			push(t, r, lacking, img)
			out := filepath.Join(t.TempDir(), "out")
			_, err := source.UnpackTo(ctx, mustParse(t, lacking), out, source.Options{}, unpack.Options{})
			if n := hits.Load(); n != 0 {
				t.Errorf("the layer's url was fetched %d times", n)
			}
			if !errors.Is(err, registry.ErrForeignLayer) || !errors.Is(err, errdef.ErrNotFound) {
				t.Fatalf("unpack of a foreign layer the registry lacks: %v, want registry.ErrForeignLayer and errdef.ErrNotFound", err)
			}
			var fe *registry.ForeignLayerError
			if !errors.As(err, &fe) || fe.Digest != fd {
				t.Errorf("error %v does not name the foreign layer %s", err, fd)
			}
			checkOneLine(t, err, lacking, "foreign layer", url, fd.String())
			if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused unpack left %s: %v", out, err)
			}

			// A registry that holds the blob serves it, as any other.
			holding := repo + ":holding"
			push(t, r, holding, img, ggcrremote.WithNondistributable)
			ad := resolve(t, holding, source.Options{})
			if b, err := ad.FS.ReadFile("cm.yaml"); err != nil || string(b) != configMapYAML {
				t.Errorf("the add-on over a foreign layer the registry holds: cm.yaml %q, %v", b, err)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the layer's url was fetched %d times", n)
			}
		})
	}
}

const configMapYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"

func push(t *testing.T, r *testregistry.Registry, ref string, img v1.Image, opts ...ggcrremote.Option) {
	t.Helper()
	n, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := ggcrremote.Write(n, img, append(opts, ggcrremote.WithTransport(r.Transport()))...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

func mustParse(t *testing.T, s string) source.Ref {
	t.Helper()
	ref, err := source.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// gzipLayer is a layer of media type mt: a gzip-compressed tar of files,
// in name order.
func gzipLayer(t *testing.T, files map[string]string, mt types.MediaType) v1.Layer {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	diffID, _, err := v1.SHA256(bytes.NewReader(raw.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return withDiffID{Layer: static.NewLayer(zb.Bytes(), mt), diffID: diffID}
}

// withDiffID is a static layer with its DiffID: static.NewLayer's is the
// digest of its compressed bytes.
type withDiffID struct {
	v1.Layer
	diffID v1.Hash
}

func (l withDiffID) DiffID() (v1.Hash, error) { return l.diffID, nil }
