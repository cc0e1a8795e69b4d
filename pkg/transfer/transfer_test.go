package transfer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/transfer"
)

// testRegistry serves go-containerregistry's registry on 127.0.0.1 and
// returns its host. With a manifestType, manifest responses carry that
// Content-Type instead of the manifest's media type.
func testRegistry(t *testing.T, manifestType string) string {
	t.Helper()
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if manifestType != "" && strings.Contains(r.URL.Path, "/manifests/") && r.Method != http.MethodPut {
			w = &retyped{ResponseWriter: w, contentType: manifestType}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

type retyped struct {
	http.ResponseWriter
	contentType string
	wrote       bool
}

func (w *retyped) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Set("Content-Type", w.contentType)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *retyped) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// testAddon builds a small image-form add-on.
func testAddon(t *testing.T, cm string) *source.Artifact {
	t.Helper()
	b := filetree.NewBuilder()
	if err := b.WriteFile("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+cm+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), b.FS(), build.Options{Name: cm})
	if err != nil {
		t.Fatal(err)
	}
	return &source.Artifact{Image: res.Image, Digest: res.Digest}
}

func parse(t *testing.T, s string) source.Ref {
	t.Helper()
	r, err := source.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newStore(t *testing.T) *layout.Store {
	t.Helper()
	st, err := layout.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A registry's Content-Type never becomes the media type of what a copy
// writes: not in the Result, the store, or another registry.
func TestCopyMediaTypeFromContent(t *testing.T) {
	ctx := context.Background()
	bad := testRegistry(t, "text/plain; charset=utf-8")
	good := testRegistry(t, "")
	art := testAddon(t, "a")
	src := parse(t, bad+"/addons/a:1")
	if _, err := transfer.Write(ctx, art, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}

	st := newStore(t)
	opts := transfer.Options{Options: source.Options{Store: st}}
	res, err := transfer.Copy(ctx, src, source.Ref{Kind: source.KindStore, Name: "a:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.MediaType != types.OCIManifestSchema1 || res.Digest != art.Digest.String() {
		t.Errorf("pull result: %s %q", res.Digest, res.MediaType)
	}
	d, err := st.Resolve("a:1")
	if err != nil {
		t.Fatal(err)
	}
	if d.MediaType != types.OCIManifestSchema1 {
		t.Errorf("the store records %q", d.MediaType)
	}

	// Registry to registry: the PUT carries the manifest's own type.
	dst := parse(t, good+"/mirror/a:1")
	if _, err := transfer.Copy(ctx, src, dst, opts); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(dst.Name)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if desc.MediaType != types.OCIManifestSchema1 || desc.Digest != art.Digest {
		t.Errorf("the mirror serves %s as %q", desc.Digest, desc.MediaType)
	}
}

// testIndex is an index of two add-ons, for linux/amd64 and linux/arm64.
func testIndex(t *testing.T) (idx v1.ImageIndex, digest v1.Hash, amd, arm *source.Artifact) {
	t.Helper()
	amd, arm = testAddon(t, "amd"), testAddon(t, "arm")
	idx = mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd.Image, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm.Image, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	)
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return idx, digest, amd, arm
}

// An index copied whole keeps its index type, wherever it goes.
func TestCopyIndex(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, "")
	idx, idxDigest, amd, arm := testIndex(t)
	src := parse(t, host+"/addons/multi:1")
	if _, err := transfer.Write(ctx, &source.Artifact{Index: idx, Digest: idxDigest}, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	opts := transfer.Options{Options: source.Options{Store: st}, AllPlatforms: true}
	res, err := transfer.Copy(ctx, src, source.Ref{Kind: source.KindStore, Name: "multi:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != idxDigest.String() || res.MediaType != types.OCIImageIndex {
		t.Errorf("result %s %q, want %s %q", res.Digest, res.MediaType, idxDigest, types.OCIImageIndex)
	}
	// One platform only.
	opts.AllPlatforms, opts.Platform = false, &v1.Platform{OS: "linux", Architecture: "arm64"}
	res, err = transfer.Copy(ctx, src, source.Ref{Kind: source.KindStore, Name: "multi:arm"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != arm.Digest.String() {
		t.Errorf("arm64: %s, want %s", res.Digest, arm.Digest)
	}
	// The result says what was left behind, for the user to hear of it.
	if res.Platform != "linux/arm64" || strings.Join(res.IndexPlatforms, " ") != "linux/amd64 linux/arm64" || res.WholeIndex {
		t.Errorf("arm64: platform %q of %q (whole %v), want linux/arm64 of both", res.Platform, res.IndexPlatforms, res.WholeIndex)
	}
	// A docker-archive holds one image.
	_, err = transfer.Copy(ctx, src, parse(t, "docker-archive:"+filepath.Join(t.TempDir(), "x.tar")), transfer.Options{AllPlatforms: true})
	if !errors.Is(err, source.ErrUnsupportedDestination) {
		t.Errorf("index to docker-archive: %v", err)
	}
	// And gc keeps all of it.
	if _, _, err := st.GC(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*source.Artifact{amd, arm} {
		m, _ := a.Image.Manifest()
		for _, h := range []v1.Hash{a.Digest, m.Config.Digest, m.Layers[0].Digest} {
			if !st.HasBlob(h) {
				t.Errorf("%s gone after gc", h)
			}
		}
	}
}

// A pull over a store whose copy of a blob is corrupted fetches it again.
func TestPullRepairsCorruptBlob(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, "")
	art := testAddon(t, "a")
	src := parse(t, host+"/addons/a:1")
	if _, err := transfer.Write(ctx, art, src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	opts := transfer.Options{Options: source.Options{Store: st}}
	dst := source.Ref{Kind: source.KindStore, Name: "a:1"}
	if _, err := transfer.Copy(ctx, src, dst, opts); err != nil {
		t.Fatal(err)
	}
	m, _ := art.Image.Manifest()
	for _, h := range []v1.Hash{m.Layers[0].Digest, m.Config.Digest, art.Digest} {
		p := filepath.Join(st.Dir(), "blobs", "sha256", h.Hex)
		good, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(good)
		bad[len(bad)/2] ^= 0x40
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := transfer.Copy(ctx, src, dst, opts); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, good) {
			t.Errorf("%s not repaired by the pull", h)
		}
	}
}

// Copies from the store to every file destination read back the same,
// and leave no temp files beside them.
func TestCopyToFiles(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	art := testAddon(t, "a")
	if _, err := st.WriteImage(ctx, art.Image, nil, "a:1"); err != nil {
		t.Fatal(err)
	}
	opts := transfer.Options{Options: source.Options{Store: st}}
	src := source.Ref{Kind: source.KindStore, Name: "a:1"}
	dir := t.TempDir()
	wantLayer := func() v1.Hash { m, _ := art.Image.Manifest(); return m.Layers[0].Digest }()
	for _, c := range []struct{ dst, back string }{
		{"oci:" + filepath.Join(dir, "layout") + ":v1", "oci:" + filepath.Join(dir, "layout") + ":v1"},
		{"oci-archive:" + filepath.Join(dir, "a.tar") + ":v1", "oci-archive:" + filepath.Join(dir, "a.tar") + ":v1"},
		{"docker-archive:" + filepath.Join(dir, "d.tar") + ":a:v1", "docker-archive:" + filepath.Join(dir, "d.tar")},
	} {
		t.Run(strings.SplitN(c.dst, ":", 2)[0], func(t *testing.T) {
			res, err := transfer.Copy(ctx, src, parse(t, c.dst), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Digest != art.Digest.String() || res.MediaType != types.OCIManifestSchema1 {
				t.Errorf("result %s %q", res.Digest, res.MediaType)
			}
			a, err := source.Open(ctx, parse(t, c.back), source.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			m, err := a.Image.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Layers) != 1 || m.Layers[0].Digest != wantLayer {
				t.Errorf("read back: layers %v, want %s", m.Layers, wantLayer)
			}
			if !strings.HasPrefix(c.dst, "docker-archive:") && a.Digest != art.Digest {
				t.Errorf("read back %s, want %s", a.Digest, art.Digest)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.HasPrefix(e.Name(), ".addonpkg-") {
			t.Errorf("left beside the outputs: %s", e.Name())
		}
	}
}
