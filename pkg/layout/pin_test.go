package layout_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/errdef"
	"github.com/addonpkg/addonpkg/pkg/layout"
)

// tinyImage is a one-layer OCI image whose layer is s.
func tinyImage(t testing.TB, s string) v1.Image {
	t.Helper()
	base := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	img, err := mutate.AppendLayers(base, static.NewLayer([]byte(s), types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// referrerOf is a tiny image whose subject is d.
func referrerOf(t testing.TB, s string, d v1.Descriptor) v1.Image {
	t.Helper()
	return mutate.Subject(tinyImage(t, s), v1.Descriptor{MediaType: d.MediaType, Size: d.Size, Digest: d.Digest}).(v1.Image)
}

// A pinned Store writes index.json once, at done, with every change made
// through it, over what others wrote meanwhile; until then index.json is
// as it was, and the Store answers from its pin.
func TestPinWritesOnceAtDone(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	other, err := layout.Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	before := st.Stats()
	done, err := st.Pin()
	if err != nil {
		t.Fatal(err)
	}
	var ds []v1.Descriptor
	for _, s := range []string{"a", "b", "c"} {
		d, err := st.WriteImage(ctx, tinyImage(t, s), nil)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if _, err := st.Tag(ds[0].Digest.String(), "app:1"); err != nil {
		t.Fatal(err)
	}
	// The pin answers with what was written through it...
	if d, err := st.Resolve("app:1"); err != nil || d.Digest != ds[0].Digest {
		t.Fatalf("Resolve through the pin = %v, %v", d, err)
	}
	// ...which is not on disk yet: a killed process leaves index.json as
	// it was.
	if n := len(readIndex(t, st).Manifests); n != 0 {
		t.Errorf("index.json holds %d entries before done", n)
	}
	if _, err := other.Resolve("app:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("another Store resolves app:1 before done: %v", err)
	}
	// Another writer meanwhile.
	od, err := other.WriteImage(ctx, tinyImage(t, "other"), nil, "other:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if err := done(); err == nil {
		t.Error("a second done succeeded")
	}
	idx := readIndex(t, st)
	if tagCount(idx, "app:1") != 1 || tagCount(idx, "other:1") != 1 || len(idx.Manifests) != 5 {
		t.Errorf("index.json after done = %+v, want the three images, app:1 and other:1", idx.Manifests)
	}
	for _, n := range []string{"app:1", "other:1", ds[2].Digest.String()} {
		if _, err := st.Resolve(n); err != nil {
			t.Errorf("after done: %v", err)
		}
	}
	if d, _ := st.Resolve("other:1"); d.Digest != od.Digest {
		t.Errorf("other:1 = %s, want %s", d.Digest, od.Digest)
	}
	if w := st.Stats().IndexWrites - before.IndexWrites; w != 1 {
		t.Errorf("%d index.json writes for four changes, want 1", w)
	}
	// What was tagged while pinned survives a GC, now that it is named;
	// the untagged images nothing reaches go.
	if _, _, err := st.GC(); err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if st.HasBlob(d.Digest) != (i == 0) {
			t.Errorf("after GC, image %d (%s) present: %v", i, d.Digest, !(i == 0))
		}
	}
}

// Pins nest: only the outermost done writes.
func TestPinNests(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	outer, err := st.Pin()
	if err != nil {
		t.Fatal(err)
	}
	inner, err := st.Pin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(ctx, tinyImage(t, "a"), nil, "a:1"); err != nil {
		t.Fatal(err)
	}
	if err := inner(); err != nil {
		t.Fatal(err)
	}
	if tagCount(readIndex(t, st), "a:1") != 0 {
		t.Error("the inner done wrote index.json")
	}
	if err := outer(); err != nil {
		t.Fatal(err)
	}
	if tagCount(readIndex(t, st), "a:1") != 1 {
		t.Error("the outer done did not write index.json")
	}
}

// Referrers reads each manifest of the store once, not once per call,
// and still sees what is written after a call, through the Store or
// behind its back.
func TestReferrersReadEachManifestOnce(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	const n = 40
	var subjects []v1.Descriptor
	for i := range n {
		d, err := st.WriteImage(ctx, tinyImage(t, "image "+string(rune('A'+i))), nil)
		if err != nil {
			t.Fatal(err)
		}
		subjects = append(subjects, d)
	}
	r0, err := st.WriteImage(ctx, referrerOf(t, "sig 0", subjects[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := st.Stats()
	for i, s := range subjects {
		got, err := st.Referrers(ctx, s.Digest, "")
		if err != nil {
			t.Fatal(err)
		}
		if want := i == 0; want != (len(got) == 1) {
			t.Fatalf("referrers of %s = %+v", s.Digest, got)
		}
	}
	// Each of the n+1 manifests once, and the one referrer found.
	if reads := st.Stats().ManifestReads - before.ManifestReads; reads > n+2 {
		t.Errorf("%d manifest reads for %d Referrers calls over %d manifests, want at most %d", reads, n, n+1, n+2)
	}
	// A referrer written through the Store, and one behind its back.
	if _, err := st.WriteImage(ctx, referrerOf(t, "sig 1", subjects[1]), nil); err != nil {
		t.Fatal(err)
	}
	other, err := layout.Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := other.WriteImage(ctx, referrerOf(t, "sig 2", subjects[2]), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 1, 1, 0} {
		got, err := st.Referrers(ctx, subjects[i].Digest, "")
		if err != nil || len(got) != want {
			t.Errorf("referrers of subject %d = %+v, %v; want %d", i, got, err, want)
		}
	}
	if got, _ := st.Referrers(ctx, subjects[2].Digest, ""); len(got) == 1 && got[0].Digest != r2.Digest {
		t.Errorf("referrer of subject 2 = %s, want %s", got[0].Digest, r2.Digest)
	}
	// A referrer whose blob goes missing is no longer listed: what is
	// found is read again.
	removeBlob(t, st, r0.Digest)
	if got, _ := st.Referrers(ctx, subjects[0].Digest, ""); len(got) != 0 {
		t.Errorf("a referrer whose blob is gone is listed: %+v", got)
	}
}

// Handles give one Store per layout and archive, whatever path spells it,
// and the Store an operation owns of the local store (Own) is not the
// caller's: pinning it leaves the caller's alone.
func TestHandlesShare(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	if _, err := st.WriteImage(ctx, tinyImage(t, "a"), nil, "a:1"); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "a.tar")
	if err := layout.WriteArchive(st.Dir(), archive); err != nil {
		t.Fatal(err)
	}
	h := layout.NewHandles()
	defer h.Close()
	a, err := h.Open(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := h.Init(rel); err != nil || b != a {
		t.Errorf("Init of the same layout by another path = %p, %v; want %p", b, err, a)
	}
	if own := h.Own(st); own != a || own == st {
		t.Errorf("Own(st) = %p, want the Handles' %p, not st %p", own, a, st)
	}
	x, err := h.OpenArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	y, err := h.OpenArchive(archive)
	if err != nil || x != y {
		t.Errorf("two OpenArchive = %p, %p (%v)", x, y, err)
	}
	done, err := a.Pin()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Untag("a:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve("a:1"); err != nil {
		t.Errorf("the caller's Store saw the operation's pinned change: %v", err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve("a:1"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("after done, a:1 = %v", err)
	}
	var nilHandles *layout.Handles
	if p, q := nilHandles.Own(st), st; p != q || nilHandles.Shared() {
		t.Error("nil Handles share")
	}
	if n := h.Stats().IndexReads; n == 0 {
		t.Error("Handles.Stats counted no index reads")
	}
}
