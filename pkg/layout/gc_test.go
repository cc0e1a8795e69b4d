package layout_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// lockOf writes the image lock of addon pinning images into st.
func lockOf(t *testing.T, st *layout.Store, addon v1.Descriptor, images ...v1.Descriptor) v1.Hash {
	t.Helper()
	l := &imagelock.Lock{Images: []imagelock.Image{}}
	for i, d := range images {
		ref := "registry.example/app/i" + string(rune('a'+i)) + ":1"
		m, err := imagelock.MirrorReference("", ref, d.Digest.String())
		if err != nil {
			t.Fatal(err)
		}
		l.Images = append(l.Images, imagelock.Image{Image: ref, Digest: d.Digest.String(), MediaType: string(d.MediaType), Mirrored: m})
	}
	h, err := imagelock.Store(context.Background(), l, addon, st)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// gcDigests are the digests of entries, sorted.
func gcDigests(es []layout.GCEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Digest.String())
	}
	slices.Sort(out)
	return out
}

func sortedDigests(hs ...v1.Hash) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	slices.Sort(out)
	return out
}

// GC's reachability (issue 25: it never collected untagged entries): the
// tagged entries are roots; their referrers, the attachment tags named
// after them and the images their locks pin are reachable, and what
// refers to those; everything else goes, an add-on's images, lock and
// signatures with its last tag, an image two add-ons pin with the last
// of them. GarbageCollect says what it removed, and what keeps each
// untagged entry it kept.
func TestGCReachability(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	write := func(img v1.Image, names ...string) v1.Descriptor {
		t.Helper()
		d, err := st.WriteImage(ctx, img, nil, names...)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write(tinyImage(t, "add-on a"), "demo:1")
	i1, i2 := write(tinyImage(t, "image 1")), write(tinyImage(t, "image 2"))
	la := lockOf(t, st, a, i1, i2)
	sigA := write(referrerOf(t, "signature of a", a))
	cosignA := write(tinyImage(t, "cosign signature of a"), "demo:sha256-"+a.Digest.Hex+".sig")
	sigI1 := write(referrerOf(t, "signature of image 1", i1))
	b := write(tinyImage(t, "add-on b"), "other:1")
	i3 := write(tinyImage(t, "image 3"))
	lb := lockOf(t, st, b, i2, i3)
	orphan := write(tinyImage(t, "orphan"))
	if err := os.WriteFile(filepath.Join(st.Dir(), ".tmp-killed"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Everything but the orphan is reached.
	res, err := st.GarbageCollect()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gcDigests(res.Removed), sortedDigests(orphan.Digest); !slices.Equal(got, want) {
		t.Errorf("first gc removed %q, want the orphan %q", got, want)
	}
	if got, want := gcDigests(res.Kept), sortedDigests(i1.Digest, i2.Digest, la, sigA.Digest, cosignA.Digest, sigI1.Digest, i3.Digest, lb); !slices.Equal(got, want) {
		t.Errorf("first gc kept %q, want %q", got, want)
	}
	why := map[v1.Hash]string{}
	for _, e := range res.Kept {
		why[e.Digest] = e.Why
	}
	for d, want := range map[v1.Hash]string{
		i1.Digest:      "pinned by the image lock " + la.String(),
		la:             "refers to " + a.Digest.String() + " (tagged demo:1)",
		cosignA.Digest: "tagged after " + a.Digest.String(),
		sigI1.Digest:   "refers to " + i1.Digest.String(),
		i3.Digest:      "pinned by the image lock " + lb.String(),
	} {
		if !strings.Contains(why[d], want) {
			t.Errorf("kept %s: %q, want it to say %q", d, why[d], want)
		}
	}
	// The temp file, the orphan's manifest, config and layer.
	if res.Files != 4 || res.Bytes <= 0 {
		t.Errorf("first gc removed %d files, %d bytes; want 4", res.Files, res.Bytes)
	}
	if st.HasBlob(orphan.Digest) {
		t.Error("the orphan's manifest survived")
	}

	// demo:1 goes: its lock, signatures and the image only it pins go;
	// the image other:1's lock pins too stays.
	if err := st.Untag("demo:1"); err != nil {
		t.Fatal(err)
	}
	res, err = st.GarbageCollect()
	if err != nil {
		t.Fatal(err)
	}
	// (demo:1's own entry went with its tag.)
	if got, want := gcDigests(res.Removed), sortedDigests(i1.Digest, la, sigA.Digest, cosignA.Digest, sigI1.Digest); !slices.Equal(got, want) {
		t.Errorf("gc after rm demo:1 removed %q, want %q", got, want)
	}
	if got, want := gcDigests(res.Kept), sortedDigests(i2.Digest, i3.Digest, lb); !slices.Equal(got, want) {
		t.Errorf("gc after rm demo:1 kept %q, want %q", got, want)
	}
	for _, e := range res.Removed {
		if e.Why == "" {
			t.Errorf("removed %s without a reason", e.Digest)
		}
	}
	for _, d := range []v1.Hash{a.Digest, i1.Digest, la, sigA.Digest} {
		if st.HasBlob(d) {
			t.Errorf("%s survived rm demo:1 and gc", d)
		}
	}
	for _, d := range []v1.Hash{b.Digest, i2.Digest, i3.Digest, lb} {
		if !st.HasBlob(d) {
			t.Errorf("%s, which other:1 reaches, was removed", d)
		}
	}
	if _, err := st.Resolve("demo:sha256-" + a.Digest.Hex + ".sig"); err == nil {
		t.Error("the cosign tag of the removed add-on survived")
	}

	// The last tag goes: the store is empty.
	if err := st.Untag("other:1"); err != nil {
		t.Fatal(err)
	}
	if res, err = st.GarbageCollect(); err != nil {
		t.Fatal(err)
	}
	if got, want := gcDigests(res.Removed), sortedDigests(i2.Digest, i3.Digest, lb); !slices.Equal(got, want) || res.Bytes <= 0 {
		t.Errorf("last gc: %+v", res)
	}
	if left := blobs(t, st); len(left) != 0 {
		t.Errorf("blobs left in an empty store: %q", left)
	}
	if got := readIndex(t, st).Manifests; len(got) != 0 {
		t.Errorf("index.json of an empty store: %+v", got)
	}
}

// A lock that is reached but cannot be read keeps GC from deleting
// anything: what it pins is unknown.
func TestGCUnreadableLock(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	a, err := st.WriteImage(ctx, tinyImage(t, "add-on"), nil, "demo:1")
	if err != nil {
		t.Fatal(err)
	}
	i1, err := st.WriteImage(ctx, tinyImage(t, "image"), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := lockOf(t, st, a, i1)
	img, err := st.Image(v1.Descriptor{Digest: l, Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	removeBlob(t, st, m.Layers[0].Digest) // the lock document
	before := blobs(t, st)
	_, err = st.GarbageCollect()
	var ue *layout.UnreadableError
	if !errorsAs(err, &ue) || len(ue.Entries) != 1 || ue.Entries[0].Digest != l {
		t.Fatalf("GC = %v, want the lock %s unreadable", err, l)
	}
	if !slices.Equal(blobs(t, st), before) {
		t.Error("GC refused but removed blobs")
	}
}

func errorsAs(err error, target **layout.UnreadableError) bool {
	ue, ok := err.(*layout.UnreadableError)
	if ok {
		*target = ue
	}
	return ok
}
