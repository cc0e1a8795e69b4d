package layout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/filetree"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Keep built add-ons in a store and find them by name.
func ExampleStore() {
	dir, err := os.MkdirTemp("", "store-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	src := filetree.NewBuilder()
	_ = src.WriteFile("configmap.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n"), 0o644)
	res, err := build.Build(context.Background(), src.FS(), build.Options{Name: "hello"})
	if err != nil {
		log.Fatal(err)
	}

	st, err := layout.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), res.Image, nil, "hello:1.0", "hello:latest"); err != nil {
		log.Fatal(err)
	}
	entries, err := st.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name, e.Descriptor.Digest == res.Digest)
	}
	d, err := st.Resolve("hello:1.0")
	if err != nil {
		log.Fatal(err)
	}
	img, err := st.Image(d)
	if err != nil {
		log.Fatal(err)
	}
	layers, _ := img.Layers()
	fmt.Println(len(layers), "layer")
	// Output:
	// hello:1.0 true
	// hello:latest true
	// 1 layer
}

func newStore(t *testing.T) *layout.Store {
	t.Helper()
	st, err := layout.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func randomImage(t *testing.T) v1.Image {
	t.Helper()
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readIndex parses index.json as any OCI tool would.
func readIndex(t *testing.T, st *layout.Store) *v1.IndexManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(st.Dir(), "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v\n%s", err, b)
	}
	return &idx
}

func tagCount(idx *v1.IndexManifest, name string) int {
	n := 0
	for _, d := range idx.Manifests {
		if d.Annotations[mediatypes.AnnotationRefName] == name {
			n++
		}
	}
	return n
}

// blobs lists the files under blobs/sha256.
func blobs(t *testing.T, st *layout.Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(st.Dir(), "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// imageBlobs lists the manifest, config and layer digests of img.
func imageBlobs(t *testing.T, img v1.Image) []string {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{digest(t, img).Hex, m.Config.Digest.Hex}
	for _, l := range m.Layers {
		out = append(out, l.Digest.Hex)
	}
	return out
}

func TestInitOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	// Not there: a layout it is not, and a caller tells it from one that
	// is no layout with fs.ErrNotExist, as for a missing folder or file.
	if _, err := layout.Open(dir); !errors.Is(err, layout.ErrNotLayout) || !errors.Is(err, fs.ErrNotExist) || err.Error() != "open layout "+dir+": not an OCI image layout (no such directory)" {
		t.Errorf("Open of a missing directory: %v, want ErrNotLayout and fs.ErrNotExist", err)
	}
	if _, err := layout.Open(t.TempDir()); !errors.Is(err, layout.ErrNotLayout) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of an empty directory: %v, want ErrNotLayout, not fs.ErrNotExist: the directory is there", err)
	}
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Dir() != dir {
		t.Errorf("Dir() = %s, want %s", st.Dir(), dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "oci-layout"))
	if err != nil || !bytes.Contains(b, []byte(`"imageLayoutVersion":"1.0.0"`)) {
		t.Errorf("oci-layout: %q, %v", b, err)
	}
	idx := readIndex(t, st)
	if idx.SchemaVersion != 2 || len(idx.Manifests) != 0 {
		t.Errorf("fresh index.json: %+v", idx)
	}
	// Init of an existing layout keeps its content.
	img := randomImage(t)
	if _, err := st.WriteImage(context.Background(), img, nil, "x:1"); err != nil {
		t.Fatal(err)
	}
	st2, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := st2.Resolve("x:1"); err != nil || d.Digest != digest(t, img) {
		t.Errorf("after a second Init: %v, %v", d, err)
	}
	if _, err := layout.Open(dir); err != nil {
		t.Error(err)
	}
	// A directory with a bad oci-layout is not a layout.
	if _, err := layout.Open(badLayout(t)); !errors.Is(err, layout.ErrNotLayout) {
		t.Errorf("Open with a bad oci-layout: %v, want ErrNotLayout", err)
	}
}

// badLayout is a directory whose oci-layout file names no version.
func badLayout(t *testing.T) string {
	t.Helper()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "oci-layout"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bad
}

// An InitOnWrite store that does not exist reads as empty and leaves
// nothing on disk until its first write, which creates the layout; a
// removal (Untag, GC) on it has nothing to do and creates nothing.
func TestInitOnWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "store")
	st, err := layout.InitOnWrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := st.List(); err != nil || len(entries) != 0 {
		t.Errorf("List of a store not yet created: %v, %v", entries, err)
	}
	if _, err := st.Resolve("x:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Resolve: %v, want ErrNotFound", err)
	}
	if err := st.Untag("x:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Untag: %v, want ErrNotFound", err)
	}
	if res, err := st.GarbageCollect(); err != nil || res.Files != 0 || res.Removed == nil {
		t.Errorf("GarbageCollect: %+v, %v", res, err)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created %s: %v", filepath.Dir(dir), err)
	}
	img := randomImage(t)
	if _, err := st.WriteImage(context.Background(), img, nil, "x:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := layout.Open(dir); err != nil {
		t.Errorf("after the first write: %v", err)
	}
	again, err := layout.InitOnWrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := again.Resolve("x:1"); err != nil || d.Digest != digest(t, img) {
		t.Errorf("InitOnWrite of the created store: %v, %v", d, err)
	}
	// A directory with a bad oci-layout is refused, as Open refuses it.
	if _, err := layout.InitOnWrite(badLayout(t)); !errors.Is(err, layout.ErrNotLayout) {
		t.Errorf("InitOnWrite with a bad oci-layout: %v, want ErrNotLayout", err)
	}
}

// The first write to an InitOnWrite store through a pin (Handles.Own,
// then Pin, as a copy does) creates the layout, and does not wait for
// itself.
func TestInitOnWritePinnedFirstWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	st, err := layout.InitOnWrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	own := layout.NewHandles().Own(st)
	done, err := own.Pin()
	if err != nil {
		t.Fatal(err)
	}
	img := randomImage(t)
	errc := make(chan error, 1)
	go func() {
		_, err := own.WriteImage(context.Background(), img, nil, "x:1")
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first write through a pin never returned")
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if d, err := st.Resolve("x:1"); err != nil || d.Digest != digest(t, img) {
		t.Errorf("after the pin: %v, %v", d, err)
	}
}

// An existing layout that Init would have completed is completed by
// InitOnWrite's first write: one without blobs/sha256 (go-containerregistry
// writes none for an empty index) takes a blob, and one whose oci-layout
// is missing lists its entries and removes them too.
func TestInitOnWriteCompletesALayout(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := layout.InitOnWrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), randomImage(t), nil, "x:1"); err != nil {
		t.Fatalf("a layout without blobs/sha256: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "oci-layout")); err != nil {
		t.Fatal(err)
	}
	if st, err = layout.InitOnWrite(dir); err != nil {
		t.Fatal(err)
	}
	if entries, err := st.List(); err != nil || len(entries) != 1 {
		t.Fatalf("List: %v, %v", entries, err)
	}
	if err := st.Untag("x:1"); err != nil {
		t.Errorf("Untag of an entry List shows: %v", err)
	}
	if _, err := layout.InitOnWrite(filepath.Join(dir, "index.json")); err == nil {
		t.Error("InitOnWrite of a file: no error")
	}
}

// A bare ref name in the store (copy X oci:STORE:v1, another tool)
// answers to NAME:latest, which is what a name given without a tag
// means, so it can be read and removed; an exact NAME:latest entry wins.
func TestBareNameAnswersToLatest(t *testing.T) {
	st := newStore(t)
	bare, tagged := randomImage(t), randomImage(t)
	if _, err := st.WriteImage(context.Background(), bare, nil, "v1"); err != nil {
		t.Fatal(err)
	}
	if d, err := st.Resolve("v1:latest"); err != nil || d.Digest != digest(t, bare) {
		t.Errorf("Resolve(v1:latest) with a bare v1 entry: %v, %v", d, err)
	}
	if _, err := st.Resolve("v1:2"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Resolve(v1:2): %v, want ErrNotFound", err)
	}
	if _, err := st.WriteImage(context.Background(), tagged, nil, "v1:latest"); err != nil {
		t.Fatal(err)
	}
	if d, err := st.Resolve("v1:latest"); err != nil || d.Digest != digest(t, tagged) {
		t.Errorf("Resolve(v1:latest) with both entries: %v, %v; want the exact one", d, err)
	}
	for range 2 {
		if err := st.Untag("v1:latest"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(readIndex(t, st).Manifests); n != 0 {
		t.Errorf("%d entries left after removing v1:latest, then the bare v1", n)
	}
}

func TestWriteResolveImage(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	img := randomImage(t)
	var progressed int64
	d, err := st.WriteImage(ctx, img, func(_ v1.Hash, done, total int64) { progressed = done }, "random:1")
	if err != nil {
		t.Fatal(err)
	}
	if progressed == 0 {
		t.Error("progress was never called")
	}
	if d.Digest != digest(t, img) {
		t.Errorf("WriteImage returned %s, want %s", d.Digest, digest(t, img))
	}
	for _, name := range []string{"random:1", d.Digest.String(), "random:1@" + d.Digest.String()} {
		got, err := st.Resolve(name)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", name, err)
		}
		if got.Digest != d.Digest || got.Size != d.Size {
			t.Errorf("Resolve(%s) = %+v, want %+v", name, got, d)
		}
	}
	if _, err := st.Resolve("random:2"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Resolve of a missing tag: %v, want errdef.ErrNotFound", err)
	}
	got, err := st.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, got) != d.Digest {
		t.Errorf("Image digest %s, want %s", digest(t, got), d.Digest)
	}
	wantLayers, _ := img.Layers()
	gotLayers, err := got.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(gotLayers) != len(wantLayers) {
		t.Fatalf("%d layers, want %d", len(gotLayers), len(wantLayers))
	}
	for i := range wantLayers {
		a, _ := wantLayers[i].Compressed()
		b, err := gotLayers[i].Compressed()
		if err != nil {
			t.Fatal(err)
		}
		wa, _ := io.ReadAll(a)
		wb, err := io.ReadAll(b)
		if err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
		if !bytes.Equal(wa, wb) {
			t.Errorf("layer %d differs after the round trip", i)
		}
	}
	wantCfg, _ := img.RawConfigFile()
	gotCfg, err := got.RawConfigFile()
	if err != nil || !bytes.Equal(wantCfg, gotCfg) {
		t.Errorf("config differs after the round trip: %v", err)
	}
	for _, h := range imageBlobs(t, img) {
		if !st.HasBlob(v1.Hash{Algorithm: "sha256", Hex: h}) {
			t.Errorf("blob %s missing", h)
		}
	}
}

// A tag points at one manifest: writing under it again replaces the entry.
func TestTagsReplaceNeverDuplicate(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	a, b := randomImage(t), randomImage(t)
	for i := 0; i < 3; i++ {
		if _, err := st.WriteImage(ctx, a, nil, "x:1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := tagCount(readIndex(t, st), "x:1"); n != 1 {
		t.Errorf("same image written 3 times: %d entries for x:1", n)
	}
	if _, err := st.WriteImage(ctx, b, nil, "x:1", "x:1"); err != nil {
		t.Fatal(err)
	}
	idx := readIndex(t, st)
	if n := tagCount(idx, "x:1"); n != 1 {
		t.Errorf("another image under the same tag: %d entries for x:1", n)
	}
	if d, _ := st.Resolve("x:1"); d.Digest != digest(t, b) {
		t.Errorf("x:1 is %s, want the newer image %s", d.Digest, digest(t, b))
	}
	// Tag moves an existing tag too.
	if _, err := st.WriteImage(ctx, a, nil, "y:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tag("y:1", "x:1"); err != nil {
		t.Fatal(err)
	}
	idx = readIndex(t, st)
	if n := tagCount(idx, "x:1"); n != 1 {
		t.Errorf("after Tag: %d entries for x:1", n)
	}
	if d, _ := st.Resolve("x:1"); d.Digest != digest(t, a) {
		t.Errorf("after Tag, x:1 is %s, want %s", d.Digest, digest(t, a))
	}
	if _, err := st.Tag("nosuch:1", "z:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Tag of a missing source: %v, want errdef.ErrNotFound", err)
	}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"x:1", "y:1"}) {
		t.Errorf("List: %q", names)
	}
	if err := st.Untag("y:1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Untag("y:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("second Untag: %v, want errdef.ErrNotFound", err)
	}
}

// A blob changed on disk after it was written is caught when read.
func TestCorruptBlobDetected(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	img := randomImage(t)
	d, err := st.WriteImage(ctx, img, nil, "x:1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := img.Manifest()
	layer := m.Layers[0]
	p := filepath.Join(st.Dir(), "blobs", "sha256", layer.Digest.Hex)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff // same size, other bytes
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := st.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	l, err := got.LayerByDigest(layer.Digest)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("reading the corrupted layer: %v, want ErrDigestMismatch", err)
	}
	rc, err = st.Blob(layer.Digest, layer.Size)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("Blob: %v, want ErrDigestMismatch", err)
	}

	// A truncated blob is a size mismatch.
	if err := os.WriteFile(p, b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err = st.Blob(layer.Digest, layer.Size)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, errdef.ErrSizeMismatch) {
		t.Errorf("truncated blob: %v, want ErrSizeMismatch", err)
	}

	// A corrupted config or manifest fails Image.
	cfgPath := filepath.Join(st.Dir(), "blobs", "sha256", m.Config.Digest.Hex)
	cfg, _ := os.ReadFile(cfgPath)
	cfg[0] ^= 0xff
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = st.Image(d)
	if err == nil {
		_, err = got.RawConfigFile()
	}
	if !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("corrupted config: %v, want ErrDigestMismatch", err)
	}
	mPath := filepath.Join(st.Dir(), "blobs", "sha256", d.Digest.Hex)
	raw, _ := os.ReadFile(mPath)
	raw[len(raw)-2] ^= 0x01
	if err := os.WriteFile(mPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Image(d); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("corrupted manifest: %v, want ErrDigestMismatch", err)
	}
}

// WriteBlob never stores a blob that does not match its digest.
func TestWriteBlobVerifies(t *testing.T) {
	st := newStore(t)
	good := []byte("hello")
	h, _, _ := v1.SHA256(bytes.NewReader(good))
	if err := st.WriteBlob(h, int64(len(good)), bytes.NewReader([]byte("HELLO"))); !errors.Is(err, errdef.ErrDigestMismatch) {
		t.Errorf("wrong bytes: %v, want ErrDigestMismatch", err)
	}
	if st.HasBlob(h) {
		t.Error("a mismatching blob was stored")
	}
	if got := blobs(t, st); len(got) != 0 {
		t.Errorf("files left behind: %q", got)
	}
	if err := st.WriteBlob(h, int64(len(good)), bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if !st.HasBlob(h) {
		t.Error("blob missing")
	}
	if _, err := st.Blob(v1.Hash{Algorithm: "sha256", Hex: "../../etc/passwd"}, -1); err == nil {
		t.Error("a digest with a path in it was accepted")
	}
}

func TestGC(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	keep, drop := randomImage(t), randomImage(t)
	if _, err := st.WriteImage(ctx, keep, nil, "keep:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, drop, nil, "drop:1", "drop:2"); err != nil {
		t.Fatal(err)
	}
	// A temp file of a killed writer.
	if err := os.WriteFile(filepath.Join(st.Dir(), ".tmp-123"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, _, err := st.GC()
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("GC with everything tagged removed %d files, want 1 (the temp file)", n)
	}
	if err := st.Untag("drop:1"); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := st.GC(); n != 0 {
		t.Errorf("GC while drop:2 still names the image removed %d files", n)
	}
	if err := st.Untag("drop:2"); err != nil {
		t.Fatal(err)
	}
	n, freed, err := st.GC()
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 || freed <= 0 {
		t.Errorf("GC removed %d files (%d bytes), want the 4 blobs of the untagged image", n, freed)
	}
	got := blobs(t, st)
	for _, h := range imageBlobs(t, drop) {
		if slices.Contains(got, h) {
			t.Errorf("blob %s of the untagged image survived GC", h)
		}
	}
	for _, h := range imageBlobs(t, keep) {
		if !slices.Contains(got, h) {
			t.Errorf("blob %s of the tagged image was removed", h)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d blobs left, want 4", len(got))
	}
	// The kept image still reads completely.
	d, err := st.Resolve("keep:1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := st.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Error(err)
		}
		rc.Close()
	}
	readIndex(t, st)
}

func TestArchiveRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	img := randomImage(t)
	d, err := st.WriteImage(ctx, img, nil, "x:1")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "x.tar")
	if err := layout.WriteArchive(st.Dir(), file); err != nil {
		t.Fatal(err)
	}
	// Reproducible: packing the same layout again gives the same bytes.
	file2 := filepath.Join(t.TempDir(), "x.tar")
	if err := layout.WriteArchive(st.Dir(), file2); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(file)
	b, _ := os.ReadFile(file2)
	if !bytes.Equal(a, b) {
		t.Error("two archives of one layout differ")
	}
	ar, err := layout.OpenArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	got, err := ar.Resolve("x:1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != d.Digest {
		t.Errorf("archive has %s, want %s", got.Digest, d.Digest)
	}
	gi, err := ar.Image(got)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := gi.Layers()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Layers()
	for i, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		gb, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
		wrc, _ := want[i].Compressed()
		wb, _ := io.ReadAll(wrc)
		if !bytes.Equal(gb, wb) {
			t.Errorf("layer %d differs", i)
		}
	}
	// Archives are read-only.
	if _, err := ar.WriteImage(ctx, img, nil, "y:1"); err == nil {
		t.Error("WriteImage into an oci-archive succeeded")
	}
	// Not an archive.
	notTar := filepath.Join(t.TempDir(), "x.tar")
	_ = os.WriteFile(notTar, []byte("not a tar"), 0o644)
	if _, err := layout.OpenArchive(notTar); err == nil {
		t.Error("OpenArchive of a non-tar succeeded")
	}
}

// Concurrent writers never lose each other's tags.
func TestConcurrentWriteImage(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	const n = 8
	imgs := make([]v1.Image, n)
	for i := range imgs {
		imgs[i] = randomImage(t)
	}
	shared := randomImage(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine opens its own Store, as separate processes would.
			s, err := layout.Open(st.Dir())
			if err != nil {
				errs <- err
				return
			}
			if _, err := s.WriteImage(ctx, imgs[i], nil, fmt.Sprintf("img:%d", i)); err != nil {
				errs <- err
			}
			if _, err := st.WriteImage(ctx, shared, nil, fmt.Sprintf("shared:%d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	idx := readIndex(t, st)
	for i := range n {
		for _, name := range []string{fmt.Sprintf("img:%d", i), fmt.Sprintf("shared:%d", i)} {
			if c := tagCount(idx, name); c != 1 {
				t.Errorf("%s: %d entries, want 1", name, c)
			}
		}
		d, err := st.Resolve(fmt.Sprintf("img:%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if d.Digest != digest(t, imgs[i]) {
			t.Errorf("img:%d is %s, want %s", i, d.Digest, digest(t, imgs[i]))
		}
	}
	if len(idx.Manifests) != 2*n {
		t.Errorf("%d index entries, want %d", len(idx.Manifests), 2*n)
	}
	if entries, _ := os.ReadDir(st.Dir()); len(entries) > 0 {
		for _, e := range entries {
			if len(e.Name()) > 5 && e.Name()[:5] == ".tmp-" {
				t.Errorf("temp file %s left behind", e.Name())
			}
		}
	}
}

// A name with a digest is found by that digest: one that is not the
// manifest's is refused, or the entry could never be read.
func TestNameDigestMustMatch(t *testing.T) {
	st := newStore(t)
	img := randomImage(t)
	other := "x@sha256:" + strings.Repeat("0", 64)
	if _, err := st.WriteImage(context.Background(), img, nil, other); err == nil {
		t.Errorf("WriteImage named %s: no error", other)
	}
	if _, err := st.WriteImage(context.Background(), img, nil, "x:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tag("x:1", other); err == nil {
		t.Errorf("Tag %s: no error", other)
	}
	own := "x@" + digest(t, img).String()
	if _, err := st.Tag("x:1", own); err != nil {
		t.Errorf("Tag %s: %v", own, err)
	}
	if d, err := st.Resolve(own); err != nil || d.Digest != digest(t, img) {
		t.Errorf("Resolve(%s): %v, %v", own, d, err)
	}
}

// A layout is not made in a folder holding files of its own (oci:.
// in a project, ADDONPKG_HOME=~): its blobs and index.json would be
// mixed into them. An empty folder, or one a cut-short creation left,
// is fine.
func TestInitRefusesAForeignFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := layout.Init(dir); !errors.Is(err, layout.ErrNotLayout) || !strings.Contains(err.Error(), "main.go") {
		t.Errorf("Init of a folder with files: %v, want ErrNotLayout naming one", err)
	}
	st, err := layout.InitOnWrite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), randomImage(t), nil, "x:1"); !errors.Is(err, layout.ErrNotLayout) {
		t.Errorf("the first write to such a store: %v, want ErrNotLayout", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder was changed: %v", entries)
	}
	cut := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cut, "blobs", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := layout.Init(cut); err != nil {
		t.Errorf("Init after a creation cut short: %v", err)
	}
}
